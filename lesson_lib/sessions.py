"""Mid-term memory: conversations kept in a database, so they outlive the process.

Short-term memory (memory.py, budget.py) is the `messages` list inside the process: when
the process ends, it is gone. Mid-term memory is a database: each conversation (a
**session**) is kept there, belongs to a user, and can be listed, resumed, renamed and
deleted; the user's preferences live there too (profile.py).

**What is stored is not what is sent.** The store keeps the *whole log* of a session,
every message ever added. What is sent to the model is a *window* on that log, decided by
the memory classes the series already has: ShortTermMemory (the newest messages) or
TokenBudgetMemory (what fits a token budget). `StoredMemory` joins the two and has the
memory API (add, add_many, add_system, to_api_format, clear_non_system, message_count,
pending_calls), so `Agent(memory=store.resume(session_id))` works unchanged: every add is
written to the log first, then to the window; resuming fills a fresh window from the log.

The rules the store keeps, so that a log is valid however a process dies:

1. **A unit is written atomically.** One `add_many` (or `add_items`) is one unit and one
   transaction: an assistant(tool_calls) is written together with all of its tool replies,
   never one without the other. A unit that would leave a call open is refused (UnitError:
   the rule, the place, the fix) and nothing is written.
2. **Order is a sequence number, never a timestamp.** The store gives each message its
   `seq`: 0, 1, 2 … per session, with no gaps, contiguous within a unit. Two writers to one
   session take turns (SQLite: BEGIN IMMEDIATE; PostgreSQL: the session's row is locked
   with SELECT … FOR UPDATE) before the next seq is read.
3. **A message is stored as the JSON of the plain dict you gave**, and comes back equal.
   What no database can hold is refused before anything is written, by name (storage.py):
   a lone surrogate, anywhere; nesting deeper than MAX_DEPTH (100); and a NUL character
   in an id, a title or a profile key (inside a message JSON keeps it as \\u0000).
4. **Reload is safe.** A log that comes back broken (written by other code, or by a
   process killed mid-turn that did not use units) is repaired with repair_messages() on
   load: interrupted="answer" (the default) answers a call left open with an explicit
   "interrupted" result, since the action may have happened; "drop" removes the call. The
   repaired log is written back, the broken one and the list of changes are kept in the
   `repairs` table (`store.repairs(session_id)`), and the changes are returned.

The OpenAI Agents SDK calls a conversation store a `Session`; its methods are async there
and sync here, with the same names, so you recognise them:

    Agents SDK (agents.memory.Session)     here (Session)
    await session.get_items(limit=None)    session.get_items(limit=None): the log (repaired
                                           if needed); with a limit, the newest messages
                                           from a unit boundary on (never half a tool round)
    await session.add_items(items)         session.add_items(items): one unit, one transaction
    await session.pop_item()               session.pop_item(): the newest message; refused
                                           for a tool reply (it would orphan its call):
                                           session.pop_unit() removes the whole last unit
    await session.clear_session()          session.clear_session(): every message goes
    SQLiteSession(session_id, "x.db")      SessionStore("sqlite:///x.db").session(session_id)

The SDK's items are Responses API items; here they are Chat Completions message dicts.

Resuming does not replay the log: it reads it from the newest message back, whole units at
a time, only as far as the window reaches (choose_window), and gets the window a replay
would. Deleting a session removes its rows for good (on SQLite, secure_delete zeroes them).

Tables: `lesson_store` (the marker that says "this database is a session store"),
`sessions` (id, user_id, title, created_at, updated_at, touched = a counter that orders
them), `messages` (session_id, seq, unit = the seq where its unit starts, role, message =
the JSON), `repairs` (session_id, repaired_at, interrupted, changes, before),
`profile_facts` (profile.py); storage.py defines them.

The database is chosen by a URL: `sqlite:///path/to/file.db` (the default: one file,
nothing to start; WAL mode, a busy timeout, secure_delete) or
`postgresql+psycopg://user@127.0.0.1:5432/db` (psycopg 3). Both go through SQLAlchemy
Core, one code path; SQLAlchemy is imported when the first store opens (it takes about
0.4 s), so `import lesson_lib.sessions` stays fast.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lesson_lib.budget import TokenBudgetMemory
from lesson_lib.i18n import N_, _, ngettext
from lesson_lib.memory import ShortTermMemory
from lesson_lib.profile import UserProfile
from lesson_lib.protocol import ProtocolError, find_problems, message_problem, with_sdk_hint
from lesson_lib.repair import Change, Repaired, find_duplicate_ids, repair_messages
from lesson_lib.storage import (  # noqa: F401 (tables, _sa, _now: also reached from here)
    MAX_DEPTH,
    _check_text,
    _now,
    _sa,
    check_storable,
    encodable,
    nesting_problem,
    shown_path,
    surrogate_path,
    tables,
    text_problem,
)

DEFAULT_URL = "sqlite:///sessions.db"
SCHEMA = "lesson_lib.sessions/1"   # what the lesson_store table says: "this is a session store"
INTERRUPTED = ("answer", "drop")   # what a repair does with a call that never got its result


# ----------------------------------------------------------------- errors

class StoreError(Exception):
    """The store refuses or cannot do something. The text names the problem, where, and the
    fix; nothing already stored was lost or changed."""


class NotAStoreError(StoreError):
    """The database is not a session store: not a database at all, or another program's."""


class StoreUnavailableError(StoreError):
    """The database cannot be opened or written: a read-only path, a missing folder, a lock
    held too long, a server that does not answer."""


class SessionNotFoundError(StoreError, LookupError):
    """No session has that id: it was never created in this store, or it was deleted."""


class CorruptSessionError(StoreError):
    """A stored row is not a message (not JSON, or not a message's shape). It is left as
    it is: fix or delete that row."""


class UnitError(ProtocolError, StoreError):
    """A unit (what one add_many / add_items writes) breaks a rule; nothing was written."""


# ----------------------------------------------------------------- the unit rule

UNIT_FIX = N_("a unit must close every tool call it opens: write the assistant message and "
              "all its tool replies together, in one add_many([assistant, *replies]) (or "
              "add_items)")


def check_unit(messages: Iterable[Any]) -> list[tuple[dict, str]]:
    """Each message of a unit with its JSON, or UnitError (nothing is written) naming the
    rule broken, the message, and the fix.

    A unit must be valid on its own: each message has the API's shape and survives JSON
    unchanged, and every assistant(tool_calls) in it is followed, inside the unit, by one
    tool reply per call id. Since every unit is closed, every log of units is valid too."""
    unit = list(messages)
    checked = []
    for k, message in enumerate(unit):
        problem = message_problem(k, message)
        if problem is not None:
            raise _unit_error(with_sdk_hint(problem, message), "")
        checked.append((dict(message), _json_exactly(k, message)))
    problems = find_problems([m for m, _ in checked]) + find_duplicate_ids(unit)
    if problems:
        raise _unit_error(min(problems, key=lambda p: p.index or 0), _(UNIT_FIX))
    return checked


def _json_exactly(k: int, message: Mapping) -> str:
    """The message as JSON text, if it comes back from JSON equal to what was given, nests
    at most MAX_DEPTH deep, and holds no lone surrogate (storage.py: what a text may hold)."""
    try:
        text = json.dumps(message, ensure_ascii=False, allow_nan=False)
    except RecursionError:  # nested deeper than this thread's stack allows
        text = None
    except (TypeError, ValueError):
        text = ""
    if text is None or text.count("[") + text.count("{") > MAX_DEPTH:  # it may nest too deep
        _check_depth(k, message)
        if text is None:  # within MAX_DEPTH, but the stack was too short (it is not ours)
            raise RecursionError(_("message {k} of the unit could not be written as JSON: "
                                   "the stack was almost full").format(k=k))
    if text and not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            path = surrogate_path(message) or ()
            raise UnitError(
                _("message {k} of the unit holds a lone surrogate at {path}").format(
                    k=k, path=shown_path(path) or _("its text")),
                index=k, explanation=_(
                    "message {k} holds a lone surrogate (half of a UTF-16 pair, e.g. "
                    "'\\ud800') at {path}: it is not a character and cannot be written as "
                    "UTF-8, so the store cannot keep it and the openai SDK cannot send it; "
                    "decode the text it came from with errors='replace', or remove it — "
                    "nothing was written"
                ).format(k=k, path=shown_path(path) or _("its text"))) from None
    try:
        if text and json.loads(text) == message:
            return text
    except (TypeError, ValueError, RecursionError):
        pass
    raise UnitError(
        _("message {k} of the unit cannot be stored as JSON exactly as given").format(k=k),
        index=k, explanation=_("message {k} holds something JSON changes or cannot hold (a "
                               "tuple, a set, a non-string key, NaN, an object): store plain "
                               "dicts, lists, strings and numbers (an SDK reply: "
                               "assistant_to_dict(reply)) — nothing was written").format(k=k))


def _check_depth(k: int, message: Mapping) -> None:
    """UnitError if message k nests lists and objects deeper than MAX_DEPTH."""
    path = nesting_problem(message)
    if path is not None:
        raise UnitError(
            _("message {k} of the unit nests lists and objects more than {limit} deep").format(
                k=k, limit=MAX_DEPTH),
            index=k, explanation=_(
                "message {k} nests lists and objects more than {limit} deep (at {path}): the "
                "store keeps messages at most {limit} levels deep, so that reading one back "
                "never runs out of stack; flatten it, or keep the deep part as one JSON "
                "string — nothing was written").format(k=k, limit=MAX_DEPTH,
                                                       path=shown_path(path)))


def _unit_error(problem: ProtocolError, fix: str) -> UnitError:
    """The API's error about a unit, said as the store's: the rule, the place, the fix."""
    if fix:
        explanation = _("in the unit being written, {explanation}; {fix} — nothing was "
                        "written").format(explanation=problem.explanation, fix=fix)
    else:
        explanation = _("in the unit being written, {explanation} — nothing was "
                        "written").format(explanation=problem.explanation)
    return UnitError(problem.message, param=problem.param, code=problem.code,
                     index=problem.index, explanation=explanation)


# ----------------------------------------------------------------- the database

_STATEMENTS: SimpleNamespace | None = None


def statements() -> SimpleNamespace:
    """The statements every append and resume runs, built once. SQLAlchemy builds a
    statement object in Python each time one is written out; for these, that was most of
    an append's time. `:session_id` and the other names are filled in when they run."""
    global _STATEMENTS
    if _STATEMENTS is None:
        sa, t = _sa(), tables()
        s, m, other = t.sessions, t.messages, t.sessions.alias("other")
        session_id = sa.bindparam("session_id")
        _STATEMENTS = SimpleNamespace(
            # the session's row, locked until the transaction ends (FOR UPDATE: PostgreSQL)
            lock=sa.select(s.c.user_id).where(s.c.id == session_id).with_for_update(),
            last_seq=sa.select(sa.func.max(m.c.seq)).where(m.c.session_id == session_id),
            insert=m.insert(),
            # the user's most recently used session gets the largest `touched`
            touch=s.update().where(s.c.id == session_id).values(
                updated_at=sa.bindparam("now"),
                touched=sa.select(sa.func.coalesce(sa.func.max(other.c.touched), 0) + 1)
                .where(other.c.user_id == sa.bindparam("owner")).scalar_subquery()),
            # a page of the log, newest first, before seq `before`
            page=sa.select(m.c.seq, m.c.message)
            .where(m.c.session_id == session_id, m.c.seq < sa.bindparam("before"))
            .order_by(m.c.seq.desc()).limit(sa.bindparam("size")),
            systems=sa.select(m.c.seq, m.c.message)
            .where(m.c.session_id == session_id, m.c.role == "system").order_by(m.c.seq),
        )
    return _STATEMENTS


def _engine(url: Any, synchronous: str, busy_timeout: float) -> Any:
    """An engine for `url`; on SQLite, every connection gets the store's settings."""
    sa = _sa()
    engine = sa.create_engine(url)
    if engine.dialect.name != "sqlite":
        return engine

    @sa.event.listens_for(engine, "connect")
    def _settings(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we say BEGIN ourselves (see _begin)
        for pragma in (f"busy_timeout = {int(busy_timeout * 1000)}",  # wait for a writer
                       f"synchronous = {synchronous}",
                       "foreign_keys = ON",
                       "secure_delete = ON"):  # deleted text is overwritten with zeros
            dbapi_connection.execute(f"PRAGMA {pragma}")

    @sa.event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        # a writer says BEGIN IMMEDIATE: it takes the write lock before it reads anything;
        # begin=None: no transaction (a PRAGMA that cannot run inside one)
        statement = connection.get_execution_options().get("begin", "BEGIN")
        if statement:
            connection.exec_driver_sql(statement)

    return engine


# ----------------------------------------------------------------- what is listed

@dataclass(frozen=True)
class SessionInfo:
    """One session, as listed."""
    session_id: str
    user_id: str
    title: str
    created_at: str      # ISO 8601, UTC
    updated_at: str      # when a message was last added
    message_count: int   # messages in its log

    def __str__(self) -> str:
        title = f"{self.title!r}" if self.title else _("(untitled)")
        n = self.message_count
        return ngettext("{id}: {title}, {n} message, last used {when} UTC",
                        "{id}: {title}, {n} messages, last used {when} UTC", n).format(
            id=self.session_id, title=title, n=n, when=self.updated_at[:19].replace("T", " "))


@dataclass(frozen=True)
class RepairRecord:
    """A repair the store made when it loaded a broken log (a row of `repairs`)."""
    repaired_at: str
    interrupted: str           # "answer" or "drop"
    changes: list[Change]      # what repair_messages() changed
    before: list[dict]         # the log as it was stored before the repair

    def __str__(self) -> str:
        n = len(self.changes)
        lines = [ngettext("repaired at {when} UTC (interrupted={mode}): {n} change",
                          "repaired at {when} UTC (interrupted={mode}): {n} changes", n).format(
            when=self.repaired_at[:19].replace("T", " "), mode=repr(self.interrupted), n=n)]
        return "\n".join(lines + [f"  {change}" for change in self.changes])


# ----------------------------------------------------------------- the store

class SessionStore:
    """Every session's whole log, in a database that outlives the process.

    Stored: every message, in order (seq), in units; sessions and their users; repairs;
    the users' profiles. Sent: nothing by itself; a StoredMemory's window decides that."""

    def __init__(self, url: str = DEFAULT_URL, *,  # sqlite:///path.db or postgresql+psycopg://…
                 synchronous: str = "NORMAL",      # SQLite: NORMAL survives a killed process;
                                                   # FULL also a power cut (an fsync a commit)
                 busy_timeout: float = 10.0):      # seconds a writer waits for another's lock
        sa = _sa()
        if isinstance(url, str) and text_problem(url) is not None:
            raise StoreError(_("cannot open {url}: a database URL cannot hold a NUL character "
                               "or a lone surrogate (a file name Python read with "
                               "errors='surrogateescape' can); choose another path, or rename "
                               "the file").format(url=ascii(url)))
        try:
            self._url = sa.engine.make_url(url)
        except (sa.exc.ArgumentError, TypeError) as e:
            raise StoreError(_("{url} is not a database URL: write sqlite:///path/to/file.db "
                               "or postgresql+psycopg://user@127.0.0.1:5432/dbname").format(
                                   url=repr(url))) from e
        self.where = self._url.render_as_string(hide_password=True)
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(_("synchronous must be NORMAL or FULL, got {value}").format(
                value=repr(synchronous)))
        self._check_folder()
        self._busy_timeout = busy_timeout
        try:
            self._engine = _engine(self._url, synchronous.upper(), busy_timeout)
        except (sa.exc.ArgumentError, ImportError) as e:  # an unknown database or driver
            raise StoreError(_("cannot open {where} ({error}): use sqlite:///path/to/file.db, "
                               "or postgresql+psycopg://… with psycopg installed").format(
                                   where=self.where, error=e)) from e
        self.dialect = self._engine.dialect.name  # "sqlite" or "postgresql"
        try:
            self._open()
        except BaseException:
            self._engine.dispose()
            raise

    # ------------------------------------------------------------- opening

    def _check_folder(self) -> None:
        """A SQLite file's folder must exist: the store never creates folders."""
        path = self._url.database if self._url.get_backend_name() == "sqlite" else None
        if not path or path == ":memory:" or path.startswith("file:"):
            return
        folder = Path(path).expanduser().resolve().parent
        if not folder.is_dir():
            raise StoreUnavailableError(_("cannot open {where}: the folder {folder} does not "
                                          "exist; create it first, or choose another path"
                                          ).format(where=self.where, folder=folder))
        if Path(path).is_dir():
            raise StoreUnavailableError(_("cannot open {where}: {path} is a folder, not a "
                                          "file; name a file, e.g. sqlite:///sessions.db"
                                          ).format(where=self.where, path=path))

    def _open(self) -> None:
        """Check the database is a session store (or empty), then create what is missing.
        Another program's database is refused before anything is written to it."""
        with self._reading() as conn:
            names = set(_sa().inspect(conn).get_table_names())
            marker = self._marker(conn) if "lesson_store" in names else None
        if names and marker is None:
            listed = ", ".join(sorted(names)[:8]) + (" …" if len(names) > 8 else "")
            raise NotAStoreError(_("{where} is not a session store: it has other tables "
                                   "({tables}) and no lesson_store table. Nothing was changed "
                                   "in it. Give the store a database of its own, e.g. "
                                   "sqlite:///sessions.db").format(where=self.where,
                                                                   tables=listed))
        if marker not in (None, SCHEMA):
            raise NotAStoreError(_("{where} is a session store of another version "
                                   "({version}; this code reads {schema}). Nothing was "
                                   "changed: open it with the version that wrote it").format(
                                       where=self.where, version=repr(marker),
                                       schema=repr(SCHEMA)))
        if self.dialect == "sqlite":
            self._wal()
        if marker is None:
            self._create()

    def _wal(self) -> None:
        """SQLite's write-ahead log: readers never wait for the writer, a commit is one
        append to the -wal file. It is a setting of the file, so once is enough.

        Switching a new file to WAL needs the file's exclusive lock. When another
        connection holds its write lock (another store switching it too, or any writer),
        SQLite answers "database is locked" at once instead of waiting busy_timeout: this
        connection holds a read lock the other may be waiting for, and waiting both would
        deadlock (sqlite3_busy_handler's documentation). So it lets go, waits for the write
        lock as any writer does (BEGIN IMMEDIATE: SQLite's busy handler, up to
        busy_timeout), releases it, and asks again; by then the other has usually switched
        the file already, and asking again changes nothing."""
        sa = _sa()
        deadline = time.monotonic() + self._busy_timeout
        with self._errors(), self._engine.connect() as conn:
            conn.execution_options(begin=None)  # PRAGMA journal_mode cannot run in a transaction
            while True:
                try:
                    conn.exec_driver_sql("PRAGMA journal_mode = WAL")
                    return
                except sa.exc.OperationalError as e:
                    if "locked" not in str(e.orig).lower() or time.monotonic() >= deadline:
                        raise
                conn.exec_driver_sql("BEGIN IMMEDIATE")  # waits for the other writer…
                conn.exec_driver_sql("ROLLBACK")         # …and lets go at once

    def _create(self) -> None:
        t = tables()
        with self._writing() as conn:
            if self.dialect == "postgresql":  # two first openers take turns
                conn.execute(_sa().text("SELECT pg_advisory_xact_lock(7368520)"))
            t.metadata.create_all(conn)  # only the tables that are missing
            if self._marker(conn) is None:
                conn.execute(t.store.insert().values(key="schema", value=SCHEMA))

    def _marker(self, conn: Any) -> str | None:
        t = tables()
        return conn.execute(_sa().select(t.store.c.value)
                            .where(t.store.c.key == "schema")).scalar()

    def close(self) -> None:
        """Close the store's connections (it can be opened again with a new SessionStore)."""
        self._engine.dispose()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SessionStore({self.where!r})"

    # ------------------------------------------------------------- transactions

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """The database's own errors, said as the store's (the problem, the fix). A text the
        driver cannot encode is one the store's checks missed: said as the store's too."""
        sa = _sa()
        try:
            yield
        except sa.exc.DBAPIError as e:
            raise _translate(e, self.where) from e
        except UnicodeEncodeError as e:
            if "surrogates not allowed" not in str(e):
                raise
            raise StoreError(_("{where} cannot store a lone surrogate ({char}): it is half of a "
                               "UTF-16 pair, not a character, and cannot be written as UTF-8; "
                               "decode the text it came from with errors='replace', or remove "
                               "it; nothing was written").format(
                                   where=self.where, char=ascii(e.object[e.start:e.end])),
                             ) from e

    @contextmanager
    def _reading(self) -> Iterator[Any]:
        """One read transaction: all it reads is one snapshot of the database."""
        with self._errors(), self._engine.connect() as conn:
            if self.dialect == "postgresql":  # READ COMMITTED would re-read per statement
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        """One write transaction: all of it is committed, or none of it. On SQLite it starts
        with BEGIN IMMEDIATE, the database's write lock (a second writer waits, up to
        busy_timeout); on PostgreSQL writers lock the session's row instead (_lock)."""
        with self._errors(), self._engine.connect() as conn:
            conn.execution_options(begin="BEGIN IMMEDIATE")
            with conn.begin():
                yield conn

    def _lock(self, conn: Any, session_id: str) -> str:
        """Lock the session's row until the transaction ends, and return its user_id: a
        second writer to the same session waits here (PostgreSQL: SELECT … FOR UPDATE;
        SQLite's BEGIN IMMEDIATE already holds the whole database's write lock)."""
        check_storable("session_id", session_id)
        user_id = conn.execute(statements().lock, {"session_id": session_id}).scalar()
        if user_id is None:
            raise self._not_found(session_id)
        return user_id

    def _not_found(self, session_id: str) -> SessionNotFoundError:
        return SessionNotFoundError(
            _("no session {id} in {where}: it was never created there, or it was deleted. "
              "List them with store.list_sessions(user_id), or start one with "
              "store.create_session(user_id)").format(id=repr(session_id), where=self.where))

    # ------------------------------------------------------------- sessions

    def create_session(self, user_id: str, *, title: str = "",
                       session_id: str | None = None) -> Session:  # None: a new random id
        """A new, empty session of `user_id`."""
        _check_text("user_id", user_id)
        session_id = uuid.uuid4().hex[:12] if session_id is None else session_id
        _check_text("session_id", session_id)
        check_storable("title", title)
        s, stamp = tables().sessions, _now()
        with self._writing() as conn:
            if conn.execute(_sa().select(s.c.id).where(s.c.id == session_id)).first():
                raise StoreError(_("a session with id {id} already exists in {where}: "
                                   "resume it with store.session({id}), or choose another "
                                   "id").format(id=repr(session_id), where=self.where))
            conn.execute(s.insert().values(id=session_id, user_id=user_id, title=str(title),
                                           created_at=stamp, updated_at=stamp, touched=0))
            self._touch(conn, session_id, user_id)
        return Session(self, session_id, user_id)

    def session(self, session_id: str, *,
                interrupted: str = "answer") -> Session:  # how its loads repair an open call
        """The stored session `session_id` (SessionNotFoundError if there is none)."""
        with self._reading() as conn:
            return Session(self, session_id, self._info(conn, session_id).user_id, interrupted)

    def info(self, session_id: str) -> SessionInfo:
        """A session's title, owner, times and size."""
        with self._reading() as conn:
            return self._info(conn, session_id)

    def _info(self, conn: Any, session_id: str) -> SessionInfo:
        check_storable("session_id", session_id)
        found = self._infos(conn, tables().sessions.c.id == session_id)
        if not found:
            raise self._not_found(session_id)
        return found[0]

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        """The user's sessions, the most recently used first."""
        check_storable("user_id", user_id)
        with self._reading() as conn:
            return self._infos(conn, tables().sessions.c.user_id == user_id)

    def _infos(self, conn: Any, where: Any) -> list[SessionInfo]:
        sa, t = _sa(), tables()
        s, m = t.sessions, t.messages
        size = (sa.select(sa.func.count()).where(m.c.session_id == s.c.id)
                .correlate(s).scalar_subquery())
        rows = conn.execute(sa.select(s.c.id, s.c.user_id, s.c.title, s.c.created_at,
                                      s.c.updated_at, size).where(where)
                            .order_by(s.c.touched.desc(), s.c.id))
        return [SessionInfo(*row) for row in rows]

    def rename_session(self, session_id: str, title: str) -> None:
        """Give a session a new title."""
        check_storable("title", title)
        s = tables().sessions
        with self._writing() as conn:
            self._lock(conn, session_id)
            conn.execute(s.update().where(s.c.id == session_id).values(title=str(title)))

    def delete_session(self, session_id: str) -> int:
        """Delete a session: its messages, its repairs, its row. The rows are really gone: on
        SQLite, secure_delete overwrites them with zeros and the WAL is emptied into the
        file (PostgreSQL keeps dead rows until its VACUUM). Returns how many messages went.

        This is the session log alone. What was derived from the session elsewhere (the
        long-term facts said in it, its summary, the profile's note of where a value was
        said) is deleted with it by lesson_lib.forgetting.forget_session(store, id), which
        the terminal chat and the chat app use, and which proves what is left."""
        with self._writing() as conn:
            self._lock(conn, session_id)
            gone = self._delete_session_rows(conn, session_id)
        self._checkpoint()
        return gone

    def _delete_session_rows(self, conn: Any, session_id: str) -> int:
        """Inside a write transaction: a session's messages, repairs and row. How many
        messages went."""
        t = tables()
        gone = self._delete_messages(conn, session_id)
        conn.execute(t.repairs.delete().where(t.repairs.c.session_id == session_id))
        conn.execute(t.sessions.delete().where(t.sessions.c.id == session_id))
        return gone

    def _checkpoint(self, wait: float | None = None) -> bool:
        """SQLite: copy the WAL into the database file and truncate it, so no old copy of a
        deleted page is left in the -wal file. True when that was done; False when another
        connection reading the database held it back (a read transaction still open sees
        the pages as they were, so SQLite may not overwrite them yet). `wait`: seconds to
        wait for such readers (None: busy_timeout). PostgreSQL: True (nothing to do here)."""
        if self.dialect != "sqlite":
            return True
        with self._errors(), self._engine.connect() as conn:
            if wait is not None:
                conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(wait * 1000)}")
            try:
                busy, log, done = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
            finally:
                if wait is not None:
                    conn.exec_driver_sql(
                        f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        return not busy and log in (0, -1) and done in (0, -1)

    def _renumber(self, conn: Any, session_id: str) -> None:
        """Inside a write transaction, after whole units were deleted from a session: its
        messages numbered 0, 1, 2 … again (no gaps), each unit's start moved with it."""
        sa, m = _sa(), tables().messages
        kept = conn.execute(sa.select(m.c.seq, m.c.unit).where(m.c.session_id == session_id)
                            .order_by(m.c.seq)).all()
        moved: dict[int, int] = {}
        for new, (old, unit) in enumerate(kept):  # ascending: a new seq is never still taken
            moved[old] = new
            if old != new or moved.get(unit, new) != unit:
                conn.execute(m.update().where(m.c.session_id == session_id, m.c.seq == old)
                             .values(seq=new, unit=moved.get(unit, new)))

    def _delete_messages(self, conn: Any, session_id: str, *conditions: Any) -> int:
        m = tables().messages
        return conn.execute(m.delete().where(m.c.session_id == session_id, *conditions)).rowcount

    # ------------------------------------------------------------- writing a unit

    def append(self, session_id: str, messages: Iterable[dict], *,
               then: Callable[[list[dict]], None] | None = None,  # run before the commit
               ) -> range:
        """Write `messages` as one unit: all in one transaction, or none. Returns their seqs.

        `then(unit)` runs inside the transaction, after the rows are written: if it raises,
        nothing is committed (StoredMemory adds the unit to its window there)."""
        checked = check_unit(messages)  # UnitError: nothing is written
        if not checked:
            return range(0)
        q = statements()
        with self._writing() as conn:
            user_id = self._lock(conn, session_id)  # a second writer waits here…
            first = self._next_seq(conn, session_id)  # …so it reads the seq after ours
            conn.execute(q.insert, [
                {"session_id": session_id, "seq": first + k, "unit": first,
                 "role": message["role"], "message": text}
                for k, (message, text) in enumerate(checked)])
            self._touch(conn, session_id, user_id)
            if then is not None:
                then([message for message, _ in checked])
        return range(first, first + len(checked))

    def _next_seq(self, conn: Any, session_id: str) -> int:
        """The next message's seq: one past the last. Read it only after _lock, in a
        statement of its own (a statement that waited for the lock may see the database as
        it was before the wait), so two writers never take the same seq, and no gaps."""
        last = conn.execute(statements().last_seq, {"session_id": session_id}).scalar()
        return 0 if last is None else last + 1

    def _touch(self, conn: Any, session_id: str, user_id: str) -> None:
        """Make it the user's most recently used session. A counter, not the clock: clocks
        stand still (the notebooks freeze theirs) and go back; updated_at is for people."""
        conn.execute(statements().touch,
                     {"session_id": session_id, "owner": user_id, "now": _now()})

    # ------------------------------------------------------------- reading

    def load(self, session_id: str, *, interrupted: str = "answer") -> Repaired:
        """The session's whole log, valid for the API: `messages, changes = store.load(id)`.

        A broken log is repaired (repair_messages, with `interrupted`), written back, and the
        repair recorded in `repairs`, the broken log with it; `changes` says what changed."""
        _check_interrupted(interrupted)
        with self._reading() as conn:
            self._info(conn, session_id)
            log = self._log(conn, session_id)
        if not _problems(log):
            return Repaired(log, [])
        return self._repair(session_id, interrupted)

    def _log(self, conn: Any, session_id: str, *conditions: Any) -> list[dict]:
        m = tables().messages
        rows = conn.execute(_sa().select(m.c.seq, m.c.message)
                            .where(m.c.session_id == session_id, *conditions).order_by(m.c.seq))
        return [_parse(session_id, seq, text) for seq, text in rows]

    def _repair(self, session_id: str, interrupted: str) -> Repaired:
        """Repair a broken log under the session's lock, write it back renumbered, and keep
        the broken one and the list of changes in `repairs`: a later reader sees it."""
        t = tables()
        with self._writing() as conn:
            self._lock(conn, session_id)
            before = self._log(conn, session_id)  # again: another writer may have repaired it
            if not _problems(before):
                return Repaired(before, [])
            repaired = _repaired(session_id, before, interrupted)
            self._delete_messages(conn, session_id)
            conn.execute(t.messages.insert(), _rows(session_id, repaired.messages))
            conn.execute(t.repairs.insert().values(
                session_id=session_id, repaired_at=_now(), interrupted=interrupted,
                changes=_stored_json([c.__dict__ for c in repaired.changes]),
                before=_stored_json(before)))
        return repaired

    def repairs(self, session_id: str) -> list[RepairRecord]:
        """The repairs made to a session's log, oldest first."""
        sa, r = _sa(), tables().repairs
        with self._reading() as conn:
            self._info(conn, session_id)
            rows = conn.execute(sa.select(r.c.repaired_at, r.c.interrupted, r.c.changes,
                                          r.c.before).where(r.c.session_id == session_id)
                                .order_by(r.c.id))
            return [RepairRecord(at, mode, [Change(**c) for c in json.loads(changes)],
                                 json.loads(before)) for at, mode, changes, before in rows]

    def count(self, session_id: str) -> int:
        """How many messages a session's log holds."""
        sa, m = _sa(), tables().messages
        with self._reading() as conn:
            self._info(conn, session_id)
            return conn.execute(sa.select(sa.func.count())
                                .where(m.c.session_id == session_id)).scalar()

    def fill_window(self, session_id: str, window: Any, *,
                    interrupted: str = "answer") -> list[Change]:
        """Fill an empty `window` from the log, reading it from the newest message back only
        as far as the window can hold (choose_window). Returns the repairs made, if any."""
        _check_interrupted(interrupted)
        with self._reading() as conn:
            self._info(conn, session_id)
            systems = self._system_rows(conn, session_id)
            chosen = choose_window(window, systems, self._newest_first(conn, session_id))
        if not _problems(chosen):
            window.add_many(chosen)
            return []
        repaired = self.load(session_id, interrupted=interrupted)  # broken: repair it all
        window.add_many(choose_window(window, _systems_of(repaired.messages),
                                      _newest_of(repaired.messages)))
        return repaired.changes

    def _system_rows(self, conn: Any, session_id: str) -> list[tuple[int, dict]]:
        """(seq, message) of every system message: a window keeps them all."""
        rows = conn.execute(statements().systems, {"session_id": session_id})
        return [(seq, _parse(session_id, seq, text)) for seq, text in rows]

    def _newest_first(self, conn: Any, session_id: str) -> Iterator[tuple[int, dict]]:
        """The log from its newest message back, a page at a time (64, 128, … rows), so a
        resume reads only as far back as its window reaches."""
        before, size = 2**31 - 1, 64  # past any seq (an INTEGER column)
        while True:
            rows = conn.execute(statements().page, {"session_id": session_id,
                                                    "before": before, "size": size}).all()
            for seq, text in rows:
                yield seq, _parse(session_id, seq, text)
            if len(rows) < size:
                return
            before, size = rows[-1][0], min(size * 2, 1024)

    # ------------------------------------------------------------- taking messages back

    def pop(self, session_id: str, *, whole_unit: bool) -> list[dict]:
        """Remove the newest message (whole_unit=False) or the rest of the newest unit, and
        return what was removed. A lone tool reply is refused: removing it would leave its
        call without a result, which the API refuses."""
        sa, m = _sa(), tables().messages
        with self._writing() as conn:
            self._lock(conn, session_id)
            last = conn.execute(sa.select(m.c.seq, m.c.unit, m.c.role)
                                .where(m.c.session_id == session_id)
                                .order_by(m.c.seq.desc()).limit(1)).first()
            if last is None:
                return []
            start = min(last.unit, last.seq) if whole_unit else last.seq
            if not whole_unit and last.role == "tool":
                raise UnitError(
                    _("pop_item() would remove a tool reply and leave its call without a "
                      "result"),
                    index=last.seq, explanation=_(
                        "message {seq} of session {id} is a tool reply: removing it alone "
                        "would orphan the call it answers; session.pop_unit() removes the "
                        "whole last unit (messages {first}–{seq}) — nothing was removed").format(
                            seq=last.seq, id=repr(session_id), first=min(last.unit, last.seq)))
            popped = self._log(conn, session_id, m.c.seq >= start)
            self._delete_messages(conn, session_id, m.c.seq >= start)
        return popped

    def clear(self, session_id: str, *, keep_system: bool) -> int:
        """Delete every message of a session (keep_system=True: all but the system ones,
        renumbered 0, 1, 2 … so the log keeps no gaps). Returns how many went."""
        m = tables().messages
        with self._writing() as conn:
            self._lock(conn, session_id)
            if not keep_system:
                return self._delete_messages(conn, session_id)
            gone = self._delete_messages(conn, session_id, m.c.role != "system")
            conn.execute(m.update().where(m.c.session_id == session_id).values(unit=m.c.seq))
            self._renumber(conn, session_id)  # each system message is a unit of its own
        return gone

    # ------------------------------------------------------------- memories and profiles

    def resume(self, session_id: str, window: Any = None, *,  # None: ShortTermMemory()
               interrupted: str = "answer") -> StoredMemory:
        """A StoredMemory on a stored session, its window filled from the log."""
        return StoredMemory(self.session(session_id, interrupted=interrupted), window)

    def profile(self, user_id: str) -> UserProfile:
        """The user's profile: preferences and project context that outlive any session."""
        return UserProfile(self, user_id)


def find_session(store: SessionStore, user_id: str, name: str) -> SessionInfo | None:
    """The user's session called `name`: the most recently used with that title, else the
    one with that id (a session made in code often has an id and no title); None if none."""
    mine = store.list_sessions(user_id)  # the most recently used first
    by_title = [info for info in mine if info.title == name]
    by_id = [info for info in mine if info.session_id == name]
    return (by_title or by_id or [None])[0]


# ----------------------------------------------------------------- one session

class Session:
    """One conversation in a store, with the OpenAI Agents SDK's Session methods (sync).

    Everything it returns is read from the store when asked: another process may have
    written since."""

    def __init__(self, store: SessionStore, session_id: str, user_id: str,
                 interrupted: str = "answer"):  # how loads repair a call left open
        _check_interrupted(interrupted)
        self.store, self.session_id, self.user_id = store, session_id, user_id
        self.interrupted = interrupted

    def get_items(self, limit: int | None = None) -> list[dict]:
        """The log (repaired if it was broken). With `limit`, the newest messages, at most
        `limit`, starting at a unit boundary: never a tool reply without its call."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 0):
            raise ValueError(_("limit is a number of messages (0 or more) or None, got "
                               "{value}").format(value=repr(limit)))
        log = self.store.load(self.session_id, interrupted=self.interrupted).messages
        if limit is None:
            return log
        tail = log[max(0, len(log) - limit):] if limit else []
        while tail and tail[0]["role"] == "tool":
            tail.pop(0)
        return tail

    def add_items(self, items: Iterable[dict]) -> None:
        """Append `items` as one unit, in one transaction (UnitError: nothing written)."""
        self.store.append(self.session_id, items)

    def pop_item(self) -> dict | None:
        """Remove and return the newest message (None if the log is empty). A tool reply is
        refused (UnitError): use pop_unit(), which removes its whole unit."""
        popped = self.store.pop(self.session_id, whole_unit=False)
        return popped[0] if popped else None

    def pop_unit(self) -> list[dict]:
        """Remove and return what is left of the newest unit (a tool round comes whole)."""
        return self.store.pop(self.session_id, whole_unit=True)

    def clear_session(self) -> None:
        """Delete every message of this session (the session itself stays)."""
        self.store.clear(self.session_id, keep_system=False)

    def rename(self, title: str) -> None:
        self.store.rename_session(self.session_id, title)

    def delete(self) -> int:
        """Delete this session and its log for good (store.delete_session)."""
        return self.store.delete_session(self.session_id)

    def info(self) -> SessionInfo:
        return self.store.info(self.session_id)

    def repairs(self) -> list[RepairRecord]:
        return self.store.repairs(self.session_id)

    def memory(self, window: Any = None) -> StoredMemory:  # None: ShortTermMemory()
        """The memory API on this session: the log is stored, the window is sent."""
        return StoredMemory(self, window)

    def __repr__(self) -> str:
        return f"Session({self.session_id!r}, user {self.user_id!r}, in {self.store.where!r})"


# ----------------------------------------------------------------- stored vs sent

def _unstored(session_id: str) -> str:
    """StoredMemory.add_many's error when the commit failed after the window took the unit."""
    return _("the unit was not stored (its commit failed), but the window already holds it: "
             "resume the session to send what is stored, e.g. {call}").format(
        call=f"store.resume({session_id!r}, window=...)")


class StoredMemory:
    """The memory API over a stored session: the whole log is **stored**, the window (a
    ShortTermMemory, a TokenBudgetMemory …) decides what is **sent**.

    Every add is one unit: written to the log in one transaction, and added to the window
    inside that transaction, so a unit the window refuses (OverBudgetError) is not stored
    either (and a window that summarises asks the model while the session's writers wait).
    Creating a StoredMemory on a session that has messages resumes it: the window is filled
    from the log (choose_window). Anything else the window has (token_count, last_dropped,
    summary …) is reached through the StoredMemory too."""

    def __init__(self, session: Session, window: Any = None):  # an empty memory to send from
        self.session = session
        self.window = window if window is not None else ShortTermMemory()
        if n := self.window.message_count():
            raise ValueError(ngettext(
                "the window must be empty: a StoredMemory fills it from the log (it holds {n} "
                "message)", "the window must be empty: a StoredMemory fills it from the log (it "
                "holds {n} messages)", n).format(n=n))
        self._stale = False
        self.repairs = session.store.fill_window(session.session_id, self.window,
                                                 interrupted=session.interrupted)

    def add(self, message: dict) -> None:
        """Store one message (a unit of one), then add it to the window."""
        self.add_many([message])

    def add_many(self, messages: Iterable[dict]) -> None:  # e.g. assistant(tool_calls) + tools
        """Store `messages` as one unit, and add them to the window, in one transaction.
        Refused, with nothing stored and the window unchanged: a unit that breaks a rule
        (UnitError), one the window refuses (ProtocolError, OverBudgetError)."""
        self._check_in_step()
        added = []

        def to_window(unit: list[dict]) -> None:
            self.window.add_many(unit)
            added.append(unit)

        try:
            self.session.store.append(self.session.session_id, messages, then=to_window)
        except BaseException as e:
            if not added:
                raise
            self._stale = True  # the commit failed after the window took the unit
            raise StoreError(_unstored(self.session.session_id)) from e

    def add_system(self, text: str) -> None:
        """Store a system message (the agent's standing instructions)."""
        self.add({"role": "system", "content": text})

    def to_api_format(self) -> list[dict]:
        """What is sent: the window's messages, as a copy."""
        self._check_in_step()
        return self.window.to_api_format()

    def clear_non_system(self) -> None:
        """Forget the conversation, keep the system messages: in the log and in the window."""
        self._check_in_step()
        self.session.store.clear(self.session.session_id, keep_system=True)
        self.window.clear_non_system()

    def message_count(self) -> int:
        """How many messages are sent now (the window's); stored_count() says what is kept."""
        return self.window.message_count()

    def pending_calls(self) -> list[str]:
        return self.window.pending_calls()

    def stored_count(self) -> int:
        """How many messages the session's log holds."""
        return self.session.store.count(self.session.session_id)

    def log(self) -> list[dict]:
        """Everything stored: the session's whole log."""
        return self.session.get_items()

    def _check_in_step(self) -> None:
        if self._stale:
            raise StoreError(_("this StoredMemory's window holds a unit its log does not (a "
                               "commit failed): resume the session with a new window, e.g. "
                               "store.resume({id}, window=...)").format(
                                   id=repr(self.session.session_id)))

    def __getattr__(self, name: str) -> Any:  # anything else is the window's
        if name in ("window", "session", "_stale") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.window, name)

    def __len__(self) -> int:
        return self.window.message_count()

    def __repr__(self) -> str:
        n = self.stored_count()
        return "StoredMemory({})".format(ngettext(
            "session {id}: {n} message stored, {sent} sent; window: {window}",
            "session {id}: {n} messages stored, {sent} sent; window: {window}", n).format(
                id=repr(self.session.session_id), n=n, sent=self.message_count(),
                window=repr(self.window)))


# ----------------------------------------------------------------- resuming a window

@dataclass
class _Room:
    """How a window trims, as much as resuming needs to know."""
    whole: int | None            # the budget: what every message sent may cost
    room: int | None             # what the kept messages may cost (None: keep everything)
    cost: Callable[[dict], int]  # what one message costs (tokens, or 1 per message)
    by_turn: bool                # whole turns go (a chunk starts at a user message)
    keep_turn: bool              # the whole current turn is always kept (else the newest unit)
    pin_system: bool             # system messages are always kept, wherever they stand


def _room(window: Any, systems: list[dict]) -> _Room:
    """The room a window has for messages that are not always kept."""
    if type(window) is ShortTermMemory:  # counts messages; system messages are never dropped
        whole = window.max_messages
        return _Room(whole, whole - len(systems), lambda m: 1, False, False, True)
    if isinstance(window, TokenBudgetMemory) and window.summarizer is None:
        whole = window.budget - window.overhead
        pinned = sum(map(window.cost, systems)) if window.keep_system else 0
        return _Room(whole, whole - pinned, window.cost, window.drop == "turn", True,
                     window.keep_system)
    # a summarizer, or a window we do not know: it gets the whole log, in one add_many
    return _Room(None, None, lambda m: 0, False, True, False)


def choose_window(window: Any,                    # an empty ShortTermMemory, TokenBudgetMemory …
                  systems: list[tuple[int, dict]],  # (seq, message) of every system message
                  newest_first: Iterable[tuple[int, dict]],  # (seq, message), newest first
                  ) -> list[dict]:
    """The messages to give an empty window so that it holds what it would hold had the log
    been added to it one unit at a time (a message, or a tool round with its replies),
    reading the log from the newest message back only as far as the window reaches.

    Whole chunks (a unit; with drop="turn", a turn) are kept from the newest back while they
    fit; the newest chunk (TokenBudgetMemory: the whole current turn) always. The system
    messages from before them come first: a window never drops those. Where this differs
    from a replay: a replay that cut a tool result to fit kept the cut copy, here nothing is
    cut (the window's own trim decides); and a window this does not know (a summarizer,
    another class) gets the whole log in one add_many, trimmed (or summarised) as one add."""
    room = _room(window, [m for _, m in systems])
    kept = _keep_from_tail(newest_first, room)
    first = kept[0][0] if kept else None
    pinned = [m for seq, m in systems if first is None or seq < first] if room.pin_system else []
    return pinned + [m for _, m in kept]


def _keep_from_tail(newest_first: Iterable[tuple[int, dict]], room: _Room) -> list:
    """(seq, message) pairs kept, oldest first: whole chunks from the newest back, while
    they fit in room.room (the protected newest chunks always)."""
    kept: deque = deque()
    chunk: deque = deque()
    used, protected = 0, True
    for seq, message in newest_first:
        chunk.appendleft((seq, message))
        role = message.get("role")
        if role == "tool" or (room.by_turn and role != "user"):
            continue  # not the start of a chunk yet: read on
        cost = _cost(chunk, room)
        if room.room is not None and not protected and used + cost > room.room:
            return list(kept)
        kept.extendleft(reversed(chunk))
        used, chunk = used + cost, deque()
        protected = protected and room.keep_turn and role != "user"
    if chunk:  # drop="turn": what came before the first user message
        lead = list(chunk) if room.room is None else _lead(list(chunk), room)
        if room.room is None or protected or used + _cost(lead, room) <= room.room:
            kept.extendleft(reversed(lead))
    return list(kept)


def _lead(chunk: list, room: _Room) -> list:
    """What the window (drop="turn") kept of the messages before the first user message.
    No turn protected them then: each time they went over, it dropped all but the newest
    unit. Replayed here, a unit at a time (usually a system prompt or two: cheap)."""
    units: list[list] = []
    for pair in chunk:  # a unit: one message, or a tool round with its replies
        if pair[1].get("role") == "tool" and units:
            units[-1].append(pair)
        else:
            units.append([pair])
    start = held = pinned = 0
    for i, unit in enumerate(units):
        if room.pin_system and unit[0][1].get("role") == "system":
            pinned += room.cost(unit[0][1])  # never dropped: it takes room for good
        held += _cost(unit, room)
        if pinned + held > room.whole:
            start, held = i, _cost(unit, room)
    return [pair for unit in units[start:] for pair in unit]


def _cost(pairs: Iterable, room: _Room) -> int:
    """What (seq, message) pairs cost in the window's room (pinned system messages: 0)."""
    return sum(room.cost(m) for _, m in pairs
               if not (room.pin_system and m.get("role") == "system"))


def build_window(window: Any, log: list[dict]) -> Any:
    """Fill an empty `window` from a whole log in memory (what fill_window does from the
    database), and return it."""
    window.add_many(choose_window(window, _systems_of(log), _newest_of(log)))
    return window


def _systems_of(log: list[dict]) -> list[tuple[int, dict]]:
    return [(seq, m) for seq, m in enumerate(log) if m.get("role") == "system"]


def _newest_of(log: list[dict]) -> Iterator[tuple[int, dict]]:
    return ((seq, log[seq]) for seq in range(len(log) - 1, -1, -1))


# ----------------------------------------------------------------- helpers

def _problems(log: list) -> list[ProtocolError]:
    """Every rule the log breaks (an empty log breaks none: it is only not sendable yet)."""
    return (find_problems(log) + find_duplicate_ids(log)) if log else []


def _repaired(session_id: str, log: list[dict], interrupted: str) -> Repaired:
    try:
        return repair_messages(log, interrupted=interrupted)
    except ProtocolError as e:  # a row that is not a message: no reordering fixes it
        raise CorruptSessionError(
            _("message {seq} of session {id} is not a valid message ({error}), so the log "
              "cannot be repaired: fix or delete that row (messages.seq = {seq}); nothing was "
              "changed").format(seq=e.index, id=repr(session_id), error=e.message)) from e


def _rows(session_id: str, log: list[dict]) -> list[dict]:
    """A whole log as rows: seq 0, 1, 2 …; a tool round is one unit, any other message its own."""
    rows, unit = [], 0
    for seq, message in enumerate(log):
        if message["role"] != "tool":
            unit = seq
        rows.append({"session_id": session_id, "seq": seq, "unit": unit,
                     "role": message["role"], "message": _stored_json(message)})
    return rows


def _stored_json(value: Any) -> str:
    """JSON text for a row: readable UTF-8, or \\u escapes where the value holds a lone
    surrogate (a log other code wrote, being repaired: it comes back equal all the same)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if text.isascii() or encodable(text) else json.dumps(value)


def _parse(session_id: str, seq: int, text: str) -> dict:
    """A stored row's message, or CorruptSessionError naming the row."""
    try:
        message = json.loads(text)
    except (TypeError, ValueError, RecursionError) as e:  # RecursionError: nested too deep
        raise CorruptSessionError(_("message {seq} of session {id} is not JSON ({error}): fix "
                                    "or delete that row; nothing was changed").format(
                                        seq=seq, id=repr(session_id), error=e)) from e
    if not isinstance(message, dict):
        raise CorruptSessionError(_("message {seq} of session {id} is JSON but not an object "
                                    "({type}): fix or delete that row; nothing was changed"
                                    ).format(seq=seq, id=repr(session_id),
                                             type=type(message).__name__))
    return message


def _check_interrupted(interrupted: str) -> None:
    if interrupted not in INTERRUPTED:
        raise ValueError(_("interrupted must be 'answer' (answer an open call with an "
                           "'interrupted' result) or 'drop' (remove it), got {value}").format(
                               value=repr(interrupted)))


def _translate(error: Any, where: str) -> StoreError:
    """A database error as a StoreError that says what to do."""
    text = str(getattr(error, "orig", error)).strip()
    low = text.lower()
    if "not a database" in low or "malformed" in low:
        return NotAStoreError(_("{where} is not a SQLite database, or it is damaged "
                                "({error}). Nothing was changed: point the store at a new "
                                "file, or at a store this module made").format(
                                    where=where, error=text))
    if "readonly" in low or "read-only" in low or "unable to open" in low:
        return StoreUnavailableError(_("cannot write {where} ({error}): the file or its folder "
                                       "is read-only for this process (SQLite also writes -wal "
                                       "and -shm files beside it); choose a writable path, or "
                                       "fix the permissions").format(where=where, error=text))
    if "unique" in low or "duplicate key" in low:
        return StoreError(_("{where}: that id is already taken ({error}); choose another "
                            "id").format(where=where, error=text))
    if "locked" in low or "lock timeout" in low:
        return StoreUnavailableError(_("{where} is busy ({error}): another writer held the "
                                       "lock longer than busy_timeout; retry, or raise "
                                       "busy_timeout").format(where=where, error=text))
    if "nul" in low and "0x00" in low:  # PostgreSQL; the store's checks refuse it before
        return StoreError(_("{where} cannot store a NUL character ('\\x00') in text ({error}): "
                            "remove it from the text; nothing was written").format(
                                where=where, error=text))
    if "connection" in low or "connect" in low:
        return StoreUnavailableError(_("cannot reach {where} ({error}): is the server running, "
                                       "and is the URL right?").format(where=where, error=text))
    return StoreError(_("{where}: the database refused ({error})").format(where=where,
                                                                          error=text))


# ----------------------------------------------------------------- where the terminal chat keeps it

STORE_URL_ENV = "LESSON_STORE_URL"  # a database URL that replaces the default store


def default_store_path() -> Path:
    """The SQLite file the terminal chat (`lesson-chat --session NAME`) keeps sessions in
    unless told otherwise: in a data folder of the user's own, never in the repository.
    $XDG_DATA_HOME/agent-memory/sessions.db, by default ~/.local/share/agent-memory/
    (on Windows %LOCALAPPDATA%\\agent-memory). Nothing is created here."""
    import os  # noqa: PLC0415 (only this helper needs them)
    import sys  # noqa: PLC0415

    base = os.environ.get("XDG_DATA_HOME", "")
    if not Path(base).is_absolute():  # unset, empty or relative: the XDG rules say ignore it
        windows = os.environ.get("LOCALAPPDATA", "") if sys.platform == "win32" else ""
        base = windows or str(Path.home() / ".local" / "share")
    return Path(base) / "agent-memory" / "sessions.db"


def default_store_url() -> str:
    """$LESSON_STORE_URL if it is set; else the SQLite file default_store_path(), whose
    folder is created if missing (readable by this user only: conversations are private).
    Open it with SessionStore(default_store_url()) to read the terminal chat's sessions."""
    import os  # noqa: PLC0415

    url = os.environ.get(STORE_URL_ENV, "").strip()
    if url:
        return url
    path = default_store_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return f"sqlite:///{path}"
