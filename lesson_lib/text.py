"""Wording shared by the library's messages: counts with the right noun."""

from __future__ import annotations


def plural(n: int,                # how many
           noun: str,             # the singular: "message", "tool result"
           many: str | None = None,  # the plural, when it is not noun + "s"
           ) -> str:
    """A count with its noun: '1 message', '0 messages', '2 tool results'."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"
