"""Wording shared by the library's messages: counts with the right noun, and text padded
or cut to columns (a Chinese character takes two)."""

from __future__ import annotations

import unicodedata


def plural(n: int,                # how many
           noun: str,             # the singular: "message", "tool result"
           many: str | None = None,  # the plural, when it is not noun + "s"
           ) -> str:
    """A count with its noun: '1 message', '0 messages', '2 tool results'."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"


def columns(text: str) -> int:
    """How many columns `text` takes in a terminal or a notebook: a Chinese character two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int, right: bool = True) -> str:
    """`text` padded with spaces to `width` columns, on the left (right-aligned) or right."""
    gap = " " * max(0, width - columns(text))
    return gap + text if right else text + gap



def cut(text: str, width: int) -> str:
    """The longest start of `text` that fits in `width` columns."""
    used = 0
    for at, c in enumerate(text):
        used += columns(c)
        if used > width:
            return text[:at]
    return text


def clip(text: str, width: int) -> str:
    """`text` in exactly `width` columns: cut (`cut`), then padded with spaces on the right
    ("{said:58.58}" counts characters, so a Chinese line takes twice the room)."""
    return pad(cut(text, width), width, right=False)
