"""The session store's database: its tables, and the rules every text stored in it keeps.

sessions.py (conversations), profile.py (the user's facts) and longterm.py (memories) keep
their rows in one database; this module is what they share, so that none of them imports
another to reach it.

**What a stored text may hold.** Both databases store text as UTF-8, and PostgreSQL's text
cannot hold the NUL character at all. So a text the store writes into a column of its own
(an id, a title, a profile key, a memory) holds neither

- a lone surrogate (e.g. "\\ud800": half of a UTF-16 pair, which Python can hold in a str
  but is not a character and cannot be written as UTF-8; the openai SDK cannot send it
  either: encoding the request fails), nor
- a NUL character ("\\x00"), refused on SQLite too, so both databases give the same answer.

A message is stored as JSON, which writes a NUL as the escape \\u0000: a message may hold
one, on both databases, and comes back equal. It may not hold a lone surrogate, and it may
nest lists and objects at most MAX_DEPTH deep (sessions.check_unit says which message).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from lesson_lib.clock import now
from lesson_lib.i18n import _

MAX_DEPTH = 100  # lists and objects inside one another in a message: the message is level 1


def _sa() -> Any:
    """SQLAlchemy, imported on first use: it takes about 0.4 s, and most lessons never open
    a store."""
    import sqlalchemy  # noqa: PLC0415

    return sqlalchemy


_TABLES: SimpleNamespace | None = None


def tables() -> SimpleNamespace:
    """The store's tables (SQLAlchemy Core), built on first use."""
    global _TABLES
    if _TABLES is None:
        sa = _sa()
        md, col, text = sa.MetaData(), sa.Column, sa.Text
        name, stamp = sa.String(200), sa.String(40)  # ids; ISO 8601 times in UTC
        _TABLES = SimpleNamespace(metadata=md, store=sa.Table(
            "lesson_store", md,
            col("key", sa.String(64), primary_key=True), col("value", text, nullable=False),
        ), sessions=sa.Table(
            "sessions", md,
            col("id", name, primary_key=True), col("user_id", name, nullable=False),
            col("title", text, nullable=False), col("created_at", stamp, nullable=False),
            col("updated_at", stamp, nullable=False),  # when a message was last added
            col("touched", sa.Integer, nullable=False),  # the user's newest session: the largest
            sa.Index("sessions_by_user", "user_id", "touched"),
        ), messages=sa.Table(
            "messages", md,
            col("session_id", name, sa.ForeignKey("sessions.id", ondelete="CASCADE"),
                primary_key=True),
            col("seq", sa.Integer, primary_key=True, autoincrement=False),  # 0, 1, 2 … no gaps
            col("unit", sa.Integer, nullable=False),      # seq where its unit starts
            col("role", sa.String(16), nullable=False),   # the message's role, to query by
            col("message", text, nullable=False),         # the message dict as JSON
        ), repairs=sa.Table(
            "repairs", md,
            col("id", sa.Integer, primary_key=True),
            col("session_id", name, sa.ForeignKey("sessions.id", ondelete="CASCADE"),
                nullable=False, index=True),
            col("repaired_at", stamp, nullable=False), col("interrupted", sa.String(8)),
            col("changes", text, nullable=False),  # JSON: [{kind, index, detail}, …]
            col("before", text, nullable=False),   # JSON: the log as it was, nothing lost
        ), profile=sa.Table(
            "profile_facts", md,
            col("id", sa.Integer, primary_key=True),  # newer facts have larger ids
            col("user_id", name, nullable=False), col("key", sa.String(64), nullable=False),
            col("value", text, nullable=False),       # JSON
            col("source", text, nullable=False),      # who said it, e.g. the user's words
            col("session_id", name),                  # the session it came from, if any
            col("set_at", stamp, nullable=False),
            sa.Index("profile_by_user", "user_id", "key", "id"),
        ))
    return _TABLES


def _now() -> str:
    """Now, as ISO 8601 UTC text (lesson_lib.clock: the notebooks freeze it)."""
    return now("UTC").isoformat(timespec="microseconds")


# ----------------------------------------------------------------- what a text may hold

def text_problem(value: str, *, json: bool = False) -> str | None:
    """Why `value` cannot be stored as text on both databases (None: it can): it holds a
    lone surrogate, or a NUL character (json=True: a text stored inside JSON, where a NUL
    is written \\u0000 and comes back). The reason names the first one and where it is."""
    if value.isascii():
        at = -1 if json else value.find("\x00")
        return None if at < 0 else _nul(at)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return _("it holds a lone surrogate ({char} at position {at}): half of a UTF-16 "
                 "pair, not a character, so it cannot be written as UTF-8 (the openai SDK "
                 "cannot send it either); decode the text it came from with "
                 "errors='replace', or remove it").format(char=ascii(value[e.start]),
                                                          at=e.start)
    at = -1 if json else value.find("\x00")
    return None if at < 0 else _nul(at)


def _nul(at: int) -> str:
    return _("it holds a NUL character ('\\x00' at position {at}), which PostgreSQL cannot "
             "store in text, so neither database stores it; remove it, e.g. "
             "text.replace('\\x00', '')").format(at=at)


def check_storable(what: str, value: Any, *, json: bool = False) -> None:
    """ValueError (nothing is written) if `value`, a text for column `what` (json=True:
    a text inside a JSON column), holds what the databases cannot store (text_problem).
    Anything but a str is left to other checks."""
    if isinstance(value, str) and (problem := text_problem(value, json=json)) is not None:
        raise ValueError(_("{what} {value} is not text the store can hold: {problem}; "
                           "nothing was written").format(what=what, value=_shown(value),
                                                         problem=problem))


def _shown(value: str) -> str:
    """A text as repr() shows it (a lone surrogate as \\ud800), at most 60 characters."""
    return repr(value) if len(value) <= 60 else repr(value[:57]) + "…"


def _check_text(what: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise ValueError(_("{what} must be a non-empty string of at most 200 characters, "
                           "got {value}").format(what=what, value=repr(value)))
    check_storable(what, value)


def nesting_problem(value: Any, limit: int = MAX_DEPTH) -> tuple[str, ...] | None:
    """The path to the first list or object nested deeper than `limit` (`value` itself is
    level 1), or None. Walked with a stack of its own, so no depth makes it recurse."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            children = [(f"[{k!r}]", v) for k, v in item.items()]
        elif isinstance(item, (list, tuple)):
            children = [(f"[{k}]", v) for k, v in enumerate(item)]
        else:
            continue
        if len(path) >= limit:
            return path
        stack.extend((child, (*path, step)) for step, child in reversed(children))
    return None


def surrogate_path(value: Any) -> tuple[str, ...] | None:
    """The path to the first text (a key or a value) holding a lone surrogate, or None."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and not encodable(item):
                return path
        elif isinstance(item, dict):
            for k in item:
                if isinstance(k, str) and not k.isascii() and not encodable(k):
                    return (*path, f"[{k!r}]")
            stack.extend((v, (*path, f"[{k!r}]")) for k, v in reversed(list(item.items())))
        elif isinstance(item, (list, tuple)):
            stack.extend((v, (*path, f"[{k}]")) for k, v in reversed(list(enumerate(item))))
    return None


def encodable(text: str) -> bool:
    """Can `text` be written as UTF-8 (it holds no lone surrogate)?"""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_path(path: tuple[str, ...], most: int = 6) -> str:
    """A path as Python indexing, e.g. ['tool_calls'][0]['function']; a long one shortened
    to its first steps and its depth."""
    if len(path) <= most:
        return "".join(path)
    return _("{start}… ({n} levels down)").format(start="".join(path[:most]), n=len(path))
