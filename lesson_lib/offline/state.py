"""Where the offline model keeps what the Responses API stores: responses, conversations
(with their items), and the prompt cache's prefixes.

Chat Completions is stateless: `api.handle()` answers from the request alone. The Responses
API is not: `store=True` (the default) keeps a response so that a later request can say
`previous_response_id=…`, and a conversation keeps items across responses. That state
lives in one of two places, with the same small interface (get, put, delete, a serial
number, prefixes; `transaction()` makes a read-modify-write atomic):

- `MemoryState`: a dict in this process. In-process clients (`offline_client()`) share
  one, `default_state()`, the way every client of one account shares the real API's store;
  `serve_in_thread()` and a one-worker `serve` give each server its own.
- `SqliteState`: one SQLite file (stdlib `sqlite3`, WAL). `serve --workers 2` (the
  default) needs it: two processes answer on one port, and a response stored by one must
  be found by the other. Without `--state FILE` the file is temporary and goes when the
  server stops; with it, responses and conversations survive a restart.

Why not `lesson_lib.sessions` (the mid-term store of notebook 10)? Its sessions hold Chat
Completions messages and refuse, by design, a unit that leaves a tool call open; a
conversation of the Responses API may hold exactly that (a `function_call` whose output
has not come yet), and the API's refusal of it is one of the things to show. So the
offline model keeps its own small table of JSON objects instead.

Every value is plain JSON data. Stored values are never changed in place: a new version is
put instead (MemoryState keeps the very objects it was given, so callers must not mutate
what they put or get).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

KINDS = ("response", "conversation")
MAX_PREFIXES = 100_000  # MemoryState forgets the oldest prompt-cache prefixes beyond this
BUSY_TIMEOUT_S = 10.0   # SqliteState: how long a statement waits while another process writes


class MemoryState:
    """Responses, conversations and items in this process's memory."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        self._prefixes: OrderedDict[str, int] = OrderedDict()
        self._serial = 0
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        counts = ", ".join(f"{len(v)} {k}s" for k, v in self._objects.items())
        return f"MemoryState({counts})"

    @contextmanager
    def transaction(self) -> Iterator[MemoryState]:
        """What is done inside happens as one step for every other user of this state."""
        with self._lock:
            yield self

    def get(self, kind: str, key: str) -> Any:
        return self._objects[kind].get(key)

    def put(self, kind: str, key: str, value: Any) -> None:
        with self._lock:
            self._objects[kind][key] = value

    def put_many(self, kind: str, pairs: Iterable[tuple[str, Any]]) -> None:
        with self._lock:
            self._objects[kind].update(pairs)

    def delete(self, kind: str, key: str) -> bool:
        with self._lock:
            return self._objects[kind].pop(key, None) is not None

    def next_serial(self) -> int:
        """1, 2, 3 …: the order of the objects this state has made (ids are derived from it)."""
        with self._lock:
            self._serial += 1
            return self._serial

    def prefix_tokens(self, hashes: list[str]) -> int:
        """The tokens of the longest remembered prefix among `hashes` (0 if none)."""
        with self._lock:
            return max((self._prefixes[h] for h in hashes if h in self._prefixes), default=0)

    def remember_prefixes(self, prefixes: Iterable[tuple[str, int]]) -> None:
        with self._lock:
            for digest, tokens in prefixes:
                self._prefixes[digest] = tokens
                self._prefixes.move_to_end(digest)
            while len(self._prefixes) > MAX_PREFIXES:
                self._prefixes.popitem(last=False)


class SqliteState:
    """The same, in a SQLite file shared by every process that opens it (a server's
    workers). Each process opens its own connection on first use (so a state made before
    a fork works in every child); BEGIN IMMEDIATE makes a transaction exclusive across
    processes."""

    def __init__(self, path: str | os.PathLike,  # the file; made if it does not exist
                 *, durable: bool = True):       # False: no fsync (a temporary file)
        self.path = os.fspath(path)
        self.durable = durable
        self._pid: int | None = None
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._depth = 0
        try:
            self._connection()  # fail now, not at the first request, if the file is unusable
        except sqlite3.Error as error:
            raise OSError(f"cannot keep the state in {self.path!r}: {error} (give a file in a "
                          "folder that exists and that you may write to)") from None

    def __repr__(self) -> str:
        return f"SqliteState({self.path!r})"

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            # timeout=0: a busy database is retried here, every 50 µs and up, not by SQLite's
            # own handler, whose first wait is 1 ms (then 2, 5, 10 …): far longer than the
            # transactions the other worker holds, and it would stall every connection of
            # this worker's event loop meanwhile.
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=0)
            self._retry(conn.execute, "PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={'NORMAL' if self.durable else 'OFF'}")
            self._retry(conn.executescript,
                        "CREATE TABLE IF NOT EXISTS objects (kind TEXT NOT NULL, id TEXT NOT "
                        "NULL, value TEXT NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID;"
                        "CREATE TABLE IF NOT EXISTS serial (one INTEGER PRIMARY KEY CHECK "
                        "(one = 1), value INTEGER NOT NULL);"
                        "INSERT OR IGNORE INTO serial VALUES (1, 0);"
                        "CREATE TABLE IF NOT EXISTS prefixes (hash TEXT PRIMARY KEY, "
                        "tokens INTEGER NOT NULL) WITHOUT ROWID;")
            self._conn, self._pid, self._depth = conn, os.getpid(), 0
        return self._conn

    @staticmethod
    def _retry(call: Any, *args: Any) -> Any:
        """`call(*args)`, again while another process holds the database (for 10 s at most)."""
        wait, deadline = 0.00005, time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                return call(*args)
            except sqlite3.OperationalError as error:
                busy = "locked" in str(error) or "busy" in str(error)
                if not busy or time.monotonic() > deadline:
                    raise
            time.sleep(wait)
            wait = min(wait * 2, 0.002)

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    @contextmanager
    def transaction(self) -> Iterator[SqliteState]:
        with self._lock:
            conn = self._connection()
            outer = self._depth == 0
            if outer:
                self._retry(conn.execute, "BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    conn.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self._retry(conn.execute, "COMMIT")

    def _read(self, sql: str, params: Any) -> Any:
        with self._lock:
            return self._retry(lambda: self._connection().execute(sql, params).fetchone())

    def get(self, kind: str, key: str) -> Any:
        row = self._read("SELECT value FROM objects WHERE kind = ? AND id = ?", (kind, key))
        return json.loads(row[0]) if row else None

    def put(self, kind: str, key: str, value: Any) -> None:
        self.put_many(kind, [(key, value)])

    def put_many(self, kind: str, pairs: Iterable[tuple[str, Any]]) -> None:
        rows = [(kind, key, json.dumps(value, ensure_ascii=False, separators=(",", ":")))
                for key, value in pairs]
        with self.transaction():
            self._connection().executemany("INSERT OR REPLACE INTO objects VALUES (?, ?, ?)",
                                           rows)

    def delete(self, kind: str, key: str) -> bool:
        with self.transaction():
            cursor = self._connection().execute(
                "DELETE FROM objects WHERE kind = ? AND id = ?", (kind, key))
        return cursor.rowcount > 0

    def next_serial(self) -> int:
        with self.transaction():
            conn = self._connection()
            conn.execute("UPDATE serial SET value = value + 1")
            return conn.execute("SELECT value FROM serial").fetchone()[0]

    def prefix_tokens(self, hashes: list[str]) -> int:
        if not hashes:
            return 0
        marks = ",".join("?" * len(hashes))
        row = self._read(f"SELECT MAX(tokens) FROM prefixes WHERE hash IN ({marks})", hashes)
        return row[0] or 0

    def remember_prefixes(self, prefixes: Iterable[tuple[str, int]]) -> None:
        with self.transaction():
            self._connection().executemany(
                "INSERT OR REPLACE INTO prefixes VALUES (?, ?)", list(prefixes))


_default: MemoryState | None = None
_default_lock = threading.Lock()


def default_state() -> MemoryState:
    """The state every in-process client shares unless it was given its own."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MemoryState()
        return _default
