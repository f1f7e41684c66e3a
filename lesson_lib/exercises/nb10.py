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

from lesson_lib.exercises import Report, not_done, run_check, signature_problem, wrong_signature
from lesson_lib.i18n import N_, _
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
    report.expect(False, _("open_chat returns a StoredMemory, the memory an Agent uses"),
                  (_("open_chat(store, {user}, {title}) returned a {type}").format(
                      user=repr(user), title=repr(title), type=type(memory).__name__),
                   N_("a session holds the log; the Agent needs its memory, as "
                      "store.resume(...) gives it"),
                   N_("for a new session, return session.memory()")))
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
    trips = len(_sessions(store, "xiaoming", "trip"))
    report.expect(trips == 1, _("asking twice for 'trip' gives one session, not two"),
                  (_("open_chat(store, 'xiaoming', 'trip') twice left {n} sessions titled "
                     "'trip'").format(n=trips),
                   N_("store.list_sessions(user_id) lists a user's sessions, each with its "
                      ".title and .session_id"),
                   N_("look for the title among them, and create a session only when none has "
                      "it")))
    report.expect(NAME in again.to_api_format(),
                  N_("the second open_chat resumes it: 'My name is Xiaoming' is in its window"),
                  (N_("the second open_chat(store, 'xiaoming', 'trip') gave a window without "
                      "the messages the first one stored"),
                   N_("a new session starts empty; store.resume(session_id) fills the window "
                      "from the session's log"),
                   N_("when the title is there, return store.resume(that session's "
                      ".session_id)")))
    work = _open(report, open_chat, store, "xiaoming", "work")
    if work is None:
        return
    report.expect(NAME not in work.to_api_format() and
                  len(_sessions(store, "xiaoming", "work")) == 1,
                  N_("another title, 'work', starts a session of its own"),
                  (_("open_chat(store, 'xiaoming', 'work') resumed the 'trip' session")
                   if NAME in work.to_api_format() else
                   _("open_chat(store, 'xiaoming', 'work') did not leave one session titled "
                     "'work'"),
                   N_("a user has many sessions: the title says which one to resume"),
                   N_("resume a session only when its .title is the one asked for")))
    other = _open(report, open_chat, store, "laozhang", "trip")
    if other is None:
        return
    theirs = len(_sessions(store, "laozhang", "trip"))
    report.expect(NAME not in other.to_api_format() and theirs == 1,
                  N_("Lao Zhang's 'trip' is his own: it does not hold Xiaoming's messages"),
                  (_("open_chat(store, 'laozhang', 'trip') gave Lao Zhang a window with "
                     "Xiaoming's messages") if NAME in other.to_api_format() else
                   _("open_chat(store, 'laozhang', 'trip') left Lao Zhang {n} sessions titled "
                     "'trip'").format(n=theirs),
                   N_("two users may use the same title: look among this user's sessions only"),
                   N_("store.list_sessions(user_id) lists one user's; create the new session "
                      "for user_id")))


def check_open_chat(open_chat: Callable) -> bool:  # your open_chat(store, user_id, title)
    """Try `open_chat` on a fresh store: start, resume, another title, another user."""
    if open_chat is ...:
        return not_done(_("Exercise 1 · open_chat"), _("write open_chat, then run this cell "
                                                       "again"))
    if wrong_signature(_("Exercise 1 · open_chat"), signature_problem(
            open_chat, "open_chat(store, user_id, title)", None, "", "")):
        return False
    with tempfile.TemporaryDirectory() as folder:
        store, _path = _store(folder)
        try:
            return run_check(_("Exercise 1 · open_chat"),
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
    report.expect(deleted == 3, N_("it returns how many sessions it deleted"),
                  (_("Xiaoming had 3 sessions; forget_user returned {value}").format(
                      value=repr(deleted)),
                   N_("count the sessions as you delete them, and return the count")))
    left = len(store.list_sessions("xiaoming"))
    report.expect(left == 0, N_("store.list_sessions('xiaoming') is empty afterwards"),
                  (_("after forget_user(store, 'xiaoming'), {n} of Xiaoming's 3 sessions are "
                     "still listed").format(n=left),
                   N_("clearing a session's messages keeps the session: forgetting deletes "
                      "each session, every one the user has"),
                   N_("store.delete_session(session_id) for each session in "
                      "store.list_sessions(user_id)")))
    report.expect(_rows(path, "xiaoming") == 0,
                  N_("the database file holds none of Xiaoming's messages any more"),
                  (N_("the file still holds messages of Xiaoming's sessions"),
                   N_("store.delete_session(session_id) removes a session's rows for good")))
    kept = store.list_sessions("laozhang")
    report.expect(len(kept) == 1 and _rows(path, "laozhang") == 2,
                  N_("Lao Zhang's session is untouched"),
                  (N_("forget_user(store, 'xiaoming') deleted or changed Lao Zhang's session "
                      "too"),
                   N_("delete only the sessions of user_id")))


def check_forget_user(forget_user: Callable) -> bool:  # your forget_user(store, user_id)
    """Run `forget_user` on a store with two users, then read the file to see what is left."""
    if forget_user is ...:
        return not_done(_("Exercise 2 · forget_user"), _("write forget_user, then run this "
                                                         "cell again"))
    if wrong_signature(_("Exercise 2 · forget_user"), signature_problem(
            forget_user, "forget_user(store, user_id)", None, "")):
        return False
    with tempfile.TemporaryDirectory() as folder:
        store, path = _store(folder)
        try:
            return run_check(_("Exercise 2 · forget_user"),
                             lambda report: _check_forget_user(report, forget_user, store, path))
        finally:
            store.close()
