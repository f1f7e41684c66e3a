"""The user profile: what the agent knows about a user, across all of their sessions.

A session's log is one conversation; the profile outlives them all (mid-term memory in the
seed's words: user preferences and project context). It is a small set of facts, one value
per key (name, language, units, diet, the project they work on), kept in the session
store's database (the `profile_facts` table, one row per value ever set).

- `set(key, value, source=..., session_id=...)`: a newer value replaces an older one that
  conflicts with it; the old one stays in `history(key)`, with when it was set, from which
  session, and who said it. Setting the value a key already has changes nothing.
- `get(key)`, `as_dict()`: the current values.
- `as_prompt()`: the profile as a short text for the system prompt, e.g.
  "What you know about this user: name: Xiaoming; diet: vegetarian; units: fahrenheit".
- `forget(key)`: the key and its whole history are deleted (the user asked to forget it);
  on SQLite secure_delete zeroes the rows and the WAL is emptied into the file.
  lesson_lib.forgetting forgets a whole user, or one topic, here and in every other layer.

Recognising "I'm vegetarian" in a message is the model's business: it calls the tool
`remember_preference` (lesson_lib.tools.profile_tools), which calls `set()` with the source
"model, from the user's words". `Agent.with_profile(profile)` (lesson_lib.agent) reads
`as_prompt()` into a new session's system prompt and offers that tool;
`Agent.with_longterm(..., profile=profile)` (what the terminal chat and the app use for a
stored session) also sends it fresh with every request (`with_fresh_profile`), so a
changed value is in the next call, in a resumed session too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lesson_lib.i18n import N_, _
from lesson_lib.storage import _check_text, _now, _sa, check_storable, tables

PROMPT_HEAD = N_("What you know about this user: ")  # said in the language spoken
SCALARS = (str, int, float, bool)


@dataclass(frozen=True)
class ProfileEntry:
    """One value a profile key had, and where it came from."""
    value: Any
    set_at: str               # ISO 8601, UTC
    session_id: str | None    # the session it came from, if any
    source: str               # who said it: e.g. the user's words, or "settings page"

    def __str__(self) -> str:
        when = self.set_at[:19].replace("T", " ")
        text = (_("{value}, set {when} UTC in session {session}") if self.session_id else
                _("{value}, set {when} UTC"))
        text = text.format(value=_show(self.value), when=when, session=self.session_id)
        if not self.source:
            return text
        # a source the library names (tools.PROFILE_SOURCE) is said in the language spoken
        return _("{entry} ({source})").format(entry=text, source=_(self.source))


class UserProfile:
    """One user's facts, in the store's database; each read asks the database."""

    def __init__(self, store: Any, user_id: str):  # a lesson_lib.sessions.SessionStore
        _check_text("user_id", user_id)
        self.store, self.user_id = store, user_id

    def set(self, key: str,               # e.g. "diet", "units", "project"
            value: Any,                   # a string, number, bool, or a list of them
            *, source: str = "",          # who said it, e.g. 'the user: "I am vegetarian"'
            session_id: str | None = None,  # the session it was said in, if any
            ) -> Any:
        """Set `key` to `value`; returns the value the key had before (None: it had none).
        A replaced value stays in history(key). The value it already has changes nothing."""
        key, text = _check_key(key), _check_value(key, value)
        check_storable("source", source)
        check_storable("session_id", session_id)
        p = tables().profile
        with self.store._writing() as conn:
            old = self._current(conn, key)
            if old is not None and old.value == value:
                return old.value  # no conflict: nothing to replace
            conn.execute(p.insert().values(user_id=self.user_id, key=key, value=text,
                                           source=str(source), session_id=session_id,
                                           set_at=_now()))
        return None if old is None else old.value

    def get(self, key: str, default: Any = None) -> Any:
        """The current value of `key`, or `default`."""
        with self.store._reading() as conn:
            entry = self._current(conn, _check_key(key))
        return default if entry is None else entry.value

    def as_dict(self) -> dict[str, Any]:
        """Every current value, keys in the order they were first set."""
        current: dict[str, Any] = {}
        for key, entry in self._entries():
            current[key] = entry.value  # a later row replaces an earlier one
        return current

    def history(self, key: str) -> list[ProfileEntry]:
        """Every value `key` has had, oldest first; the last one is current."""
        key = _check_key(key)
        return [entry for k, entry in self._entries() if k == key]

    def forget(self, key: str) -> int:
        """Delete `key` and its whole history. Returns how many values were deleted."""
        key = _check_key(key)
        with self.store._writing() as conn:
            gone = self._delete(conn, key)
        if gone:
            self.store._checkpoint()  # SQLite: no copy of the deleted rows left in the WAL
        return gone

    def _delete(self, conn: Any, key: str | None = None) -> int:
        """Inside a write transaction: `key` and its whole history (None: every key of the
        user). How many values went."""
        p = tables().profile
        where = [p.c.user_id == self.user_id] + ([] if key is None else [p.c.key == key])
        return conn.execute(p.delete().where(*where)).rowcount

    def as_prompt(self) -> str:
        """The profile as one line for a system prompt ("" when nothing is known)."""
        facts = self.as_dict()
        if not facts:
            return ""
        return _(PROMPT_HEAD) + "; ".join(f"{k}: {_show(v)}" for k, v in facts.items())

    def _entries(self) -> list[tuple[str, ProfileEntry]]:
        """(key, entry) for every value ever set, oldest first."""
        sa, p = _sa(), tables().profile
        with self.store._reading() as conn:
            rows = conn.execute(sa.select(p.c.key, p.c.value, p.c.set_at, p.c.session_id,
                                          p.c.source).where(p.c.user_id == self.user_id)
                                .order_by(p.c.id)).all()
        return [(key, ProfileEntry(json.loads(value), at, sid, source))
                for key, value, at, sid, source in rows]

    def _current(self, conn: Any, key: str) -> ProfileEntry | None:
        sa, p = _sa(), tables().profile
        row = conn.execute(sa.select(p.c.value, p.c.set_at, p.c.session_id, p.c.source)
                           .where(p.c.user_id == self.user_id, p.c.key == key)
                           .order_by(p.c.id.desc()).limit(1)).first()
        return None if row is None else ProfileEntry(json.loads(row[0]), *row[1:])

    def __repr__(self) -> str:
        return f"UserProfile({self.user_id!r}: {self.as_dict()!r})"


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip() or len(key) > 64 or "\n" in key:
        raise ValueError(_("a profile key is a short name such as 'diet' or 'units' (1 to 64 "
                           "characters, one line), got {key}").format(key=repr(key)))
    check_storable(_("the profile key"), key)
    return key.strip()


def _check_value(key: str, value: Any) -> str:
    """The value as JSON, if it is one the prompt can show: a scalar or a list of them."""
    plain = isinstance(value, SCALARS) or (
        isinstance(value, list) and all(isinstance(v, SCALARS) for v in value))
    if value is None or not plain or (isinstance(value, str) and not value.strip()):
        raise ValueError(_("the value for {key} must be a non-empty string, a number, a bool, "
                           "or a list of them, got {value} (to remove a key: forget({key}))"
                           ).format(key=repr(key), value=repr(value)))
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as e:
        raise ValueError(_("the value for {key} cannot be stored as JSON: {error}").format(
            key=repr(key), error=e)) from e
    for item in value if isinstance(value, list) else [value]:  # JSON writes a NUL \u0000
        check_storable(_("the value for {key}").format(key=repr(key)), item, json=True)
    return text


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)
