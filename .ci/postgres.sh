#!/usr/bin/env bash
# A throwaway PostgreSQL server for the session store's tests and benchmark.
#
#   source .ci/postgres.sh start   # starts it (installing Debian's postgresql if absent)
#                                  # and exports LESSON_TEST_POSTGRES_URL
#   .ci/postgres.sh stop           # stops it and deletes its data directory
#   .ci/postgres.sh status         # prints the URL and exits 0 if it is running
#
# Run, not sourced, `.ci/postgres.sh start` prints the export line instead:
#   eval "$(.ci/postgres.sh start)"
#
# The server listens on 127.0.0.1 only (no other address, no Unix socket in /var/run),
# trusts every local connection (tests only: never use this set-up for real data), and
# keeps its data in $LESSON_PG_DIR (default: /tmp/lesson-postgres). Port: $LESSON_PG_PORT,
# default 55432, or the next free one above it. PostgreSQL refuses to run as root, so as
# root (CI) initdb and pg_ctl run as the `postgres` user that Debian's package creates.

_lesson_pg_main() (
  set -euo pipefail
  local dir="${LESSON_PG_DIR:-/tmp/lesson-postgres}"
  local action="${1:-}"

  say() { echo "postgres.sh: $*" >&2; }

  bindir() {  # the newest installed PostgreSQL's bin directory, or nothing
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
  }

  as_pg() {  # run a PostgreSQL program as a user it accepts (from / : it may not read $PWD)
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
  }

  url_of() { echo "postgresql+psycopg://postgres@127.0.0.1:$1/postgres"; }

  running() {  # true when our server answers; prints its port
    local bin port
    bin=$(bindir)
    [ -n "$bin" ] && [ -f "$dir/port" ] || return 1
    port=$(cat "$dir/port")
    as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 || return 1
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" || return 1
    echo "$port"
  }

  free_port() {  # $1 or the next port above it that nothing listens on
    local port=$1
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
      port=$((port + 1))
    done
    echo "$port"
  }

  case "$action" in
    start)
      local port bin
      if port=$(running); then
        say "already running on 127.0.0.1:$port ($dir)"
        echo "export LESSON_TEST_POSTGRES_URL='$(url_of "$port")'"
        return 0
      fi
      if [ -z "$(bindir)" ]; then
        say "installing Debian's postgresql (apt-get)"
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
      fi
      bin=$(bindir)
      [ -n "$bin" ] || { say "no PostgreSQL found under /usr/lib/postgresql after installing"; return 1; }
      port=$(free_port "${LESSON_PG_PORT:-55432}")
      rm -rf "$dir"
      mkdir -p "$dir/data"
      [ "$(id -u)" = 0 ] && chown -R postgres: "$dir"
      say "initdb in $dir/data ($bin)"
      as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
      echo "$port" >"$dir/port"
      # 127.0.0.1 only; the Unix socket goes in the data directory, not /var/run/postgresql
      as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir/data -c max_connections=200" \
        start >&2 || { cat "$dir/data/server.log" >&2; return 1; }
      say "running on 127.0.0.1:$port; stop it with: .ci/postgres.sh stop"
      echo "export LESSON_TEST_POSTGRES_URL='$(url_of "$port")'"
      ;;
    stop)
      local bin
      bin=$(bindir)
      if [ -n "$bin" ] && [ -d "$dir/data" ]; then
        as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
      fi
      rm -rf "$dir"
      say "stopped"
      ;;
    status)
      local port
      if port=$(running); then
        url_of "$port"
      else
        say "not running"
        return 1
      fi
      ;;
    *)
      say "usage: source .ci/postgres.sh start | .ci/postgres.sh stop | .ci/postgres.sh status"
      return 2
      ;;
  esac
)

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  # sourced: the work runs in a child bash (so `set -e` holds there and the caller's options
  # are untouched); `start` then exports the URL into the caller's shell
  if [ "${1:-}" = start ]; then
    _lesson_pg_line=$(bash "${BASH_SOURCE[0]}" start) || return 1
    eval "$_lesson_pg_line"
    unset _lesson_pg_line
  else
    bash "${BASH_SOURCE[0]}" "$@" || return $?
  fi
else
  _lesson_pg_main "$@"
fi
