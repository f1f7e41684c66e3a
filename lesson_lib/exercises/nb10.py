"""Self-checks for notebook 10, "Conversations that survive a restart".

- `check_open_chat(open_chat)`: the learner's `open_chat(store, user_id, title)`, which
  resumes the user's session with that title, or starts it when there is none.
- `check_forget_user(forget_user)`: the learner's `forget_user(store, user_id)`, which
  deletes every session of one user and returns how many it deleted; the check reads the
  database file itself to see that the rows are gone.

Each check makes its own store in a temporary folder, so it never touches yours.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from lesson_lib.exercises import Report, not_done, run_check
from lesson_lib.sessions import SessionStore, StoredMemory

NAME = {"role": "user", "content": "My name is Xiaoming"}
HI = {"role": "assistant", "content": "Nice to meet you, Xiaoming!"}


def _store(folder: str) -> tuple[SessionStore, Path]:
    path = Path(folder) / "check.db"
    return SessionStore(f"sqlite:///{path}"), path


# ----------------------------------------------------------------- exercise 1: open_chat

def _open(report: Report, open_chat: Callable, store: SessionStore, user: str,
          title: str) -> StoredMemory | None:
    memory = open_chat(store, user, title)
    if isinstance(memory, StoredMemory):
        return memory
    report.expect(False, f"open_chat(store, {user!r}, {title!r}) returns a StoredMemory "
                  f"(got {type(memory).__name__})",
                  "return the memory of a session (what store.resume(...) returns), not the "
                  "session itself")
    return None


def _sessions(store: SessionStore, user: str, title: str) -> list:
    return [s for s in store.list_sessions(user) if s.title == title]


def _check_open_chat(report: Report, open_chat: Callable, store: SessionStore) -> None:
    first = _open(report, open_chat, store, "xiaoming", "trip")
    if first is None:
        return
    first.add_many([NAME, HI])
    again = _open(report, open_chat, store, "xiaoming", "trip")
    if again is None:
        return
    report.expect(len(_sessions(store, "xiaoming", "trip")) == 1,
                  "asking twice for 'trip' gives one session, not two",
                  "look for the title among store.list_sessions(user_id) before creating")
    report.expect(NAME in again.to_api_format(),
                  "the second open_chat resumes it: 'My name is Xiaoming' is in its window",
                  "a new session starts empty: when the title is already there, resume that "
                  "session instead")
    other = _open(report, open_chat, store, "laozhang", "trip")
    if other is None:
        return
    report.expect(NAME not in other.to_api_format() and
                  len(_sessions(store, "laozhang", "trip")) == 1,
                  "Lao Zhang's 'trip' is his own: it does not hold Xiaoming's messages",
                  "list only this user's sessions (store.list_sessions(user_id)), and "
                  "create the new one for user_id")


def check_open_chat(open_chat: Callable) -> bool:  # your open_chat(store, user_id, title)
    """Try `open_chat` on a fresh store: start, resume, and a second user."""
    if open_chat is ...:
        return not_done("Exercise 1 · open_chat", "write open_chat, then run this cell again")
    with tempfile.TemporaryDirectory() as folder:
        store, _ = _store(folder)
        try:
            return run_check("Exercise 1 · open_chat",
                             lambda report: _check_open_chat(report, open_chat, store))
        finally:
            store.close()


# ----------------------------------------------------------------- exercise 2: forget_user

def _rows(path: Path, user: str) -> int:
    """Messages of `user`'s sessions, counted straight from the file (not through the
    store you are checking)."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM messages JOIN sessions "
                          "ON messages.session_id = sessions.id WHERE sessions.user_id = ?",
                          (user,)).fetchone()[0]


def _fill(store: SessionStore) -> None:
    for user, titles in (("xiaoming", ("trip", "work", "hotpot")), ("laozhang", ("notes",))):
        for title in titles:
            store.create_session(user, title=title).add_items([NAME, HI])


def _check_forget_user(report: Report, forget_user: Callable, store: SessionStore,
                       path: Path) -> None:
    _fill(store)
    deleted = forget_user(store, "xiaoming")
    report.expect(deleted == 3, f"it returns how many sessions it deleted: 3 (got {deleted!r})",
                  "count the sessions you delete, and return the count")
    report.expect(store.list_sessions("xiaoming") == [],
                  "store.list_sessions('xiaoming') is empty afterwards",
                  "delete every session in store.list_sessions(user_id), not just the first")
    report.expect(_rows(path, "xiaoming") == 0,
                  "the database file holds none of Xiaoming's messages any more",
                  "store.delete_session(session_id) removes a session's rows for good")
    kept = store.list_sessions("laozhang")
    report.expect(len(kept) == 1 and _rows(path, "laozhang") == 2,
                  "Lao Zhang's session is untouched",
                  "delete only the sessions of user_id")


def check_forget_user(forget_user: Callable) -> bool:  # your forget_user(store, user_id)
    """Run `forget_user` on a store with two users, then read the file to see what is left."""
    if forget_user is ...:
        return not_done("Exercise 2 · forget_user", "write forget_user, then run this cell again")
    with tempfile.TemporaryDirectory() as folder:
        store, path = _store(folder)
        try:
            return run_check("Exercise 2 · forget_user",
                             lambda report: _check_forget_user(report, forget_user, store, path))
        finally:
            store.close()
