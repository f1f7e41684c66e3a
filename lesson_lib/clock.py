"""A clock the lessons and tests can freeze.

`now()` is the only place lesson_lib reads the time. Freeze it in one of two ways:

- the environment variable LESSON_FROZEN_TIME, an ISO 8601 instant with a UTC offset,
  e.g. ``LESSON_FROZEN_TIME=2026-05-01T09:30:00+00:00`` (nbval runs, CI);
- ``with frozen("2026-05-01T09:30:00+00:00"):`` around code in a test or a notebook cell.

`frozen()` wins over the variable. It is process-wide, not per thread, so a local
server thread started by a lesson sees the same frozen time as the cell that started it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import pytz

from lesson_lib.i18n import _

ENV_VAR = "LESSON_FROZEN_TIME"
EXAMPLE = "2026-05-01T09:30:00+00:00"

_frozen_at: datetime | None = None  # set by frozen(); None means "not frozen by code"


class FrozenTimeError(ValueError):
    """A frozen time that is not an ISO 8601 instant with a UTC offset."""


def parse_instant(text: str) -> datetime | None:
    """`text` as an aware datetime, or None if it is not an ISO 8601 instant with an offset."""
    if not isinstance(text, str):
        return None
    cleaned = text.strip()
    if cleaned.endswith(("Z", "z")):  # Python 3.10's fromisoformat does not accept "Z"
        cleaned = cleaned[:-1] + "+00:00"
    try:
        instant = datetime.fromisoformat(cleaned)
    except ValueError:
        return None
    return instant if instant.utcoffset() is not None else None


def _frozen_instant() -> datetime | None:
    """The instant the clock is frozen at, or None when it runs."""
    if _frozen_at is not None:
        return _frozen_at
    value = os.environ.get(ENV_VAR, "")
    if not value.strip():
        return None
    instant = parse_instant(value)
    if instant is None:
        raise FrozenTimeError(
            _("{variable}={value} is not an ISO 8601 instant with a UTC offset: set it like "
              "{variable}={example}, or unset it to use the real clock").format(
                variable=ENV_VAR, value=repr(value), example=EXAMPLE))
    return instant


def now(tz_name: str = "Asia/Shanghai") -> datetime:
    """The current time in `tz_name` (an IANA name such as "Europe/London"), time-zone aware.

    Raises pytz.UnknownTimeZoneError for a name pytz does not know ("Mars/Base").
    """
    tz = pytz.timezone(tz_name)
    instant = _frozen_instant()
    return datetime.now(tz) if instant is None else instant.astimezone(tz)


@contextmanager
def frozen(at: str | datetime) -> Iterator[datetime]:
    """Freeze now() at `at` (ISO 8601 text or an aware datetime) inside a `with` block."""
    global _frozen_at
    instant = at if isinstance(at, datetime) else parse_instant(at)
    if instant is None or instant.utcoffset() is None:
        raise FrozenTimeError(
            _("frozen({value}) needs an ISO 8601 instant with a UTC offset or an aware "
              "datetime, e.g. frozen({example})").format(value=repr(at), example=repr(EXAMPLE)))
    previous, _frozen_at = _frozen_at, instant
    try:
        yield instant
    finally:
        _frozen_at = previous
