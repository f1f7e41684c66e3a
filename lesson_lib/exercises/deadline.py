"""A time limit for the learner's code inside a check: a loop that never ends is stopped,
and the check says where, instead of hanging the cell with no word.

    with time_limit(5) as limit:   # the learner's code runs inside
        my_trim(messages, 4)
    # over 5 s: TookTooLong(limit) is raised inside my_trim, where it was running

How it stops the code:

- in the main thread on a system with `signal.setitimer` (Linux, macOS: a Jupyter kernel
  runs its cells in the main thread, and so does pytest), a SIGALRM timer. Its handler
  raises TookTooLong at the next line the code runs. TookTooLong is a BaseException, so the
  learner's own `except Exception:` does not swallow it; a bare `except:` that does is met
  by the timer again every half second (only code that swallows every one cannot be
  stopped). Limits nest (a whole rule's, one call's inside
  it): the timer is set for the nearest deadline, and a timer or handler that was there
  before (another tool's) comes back when the outermost limit ends;
- anywhere else (another thread, Windows), a trace function (`sys.settrace`) that looks
  at the clock at every step of the bytecode: much slower, and only for this thread, but it needs no signal.
  When a tracer is already set (a debugger, coverage), nothing is limited there.

A check catches TookTooLong where it called the learner's code and reports it as a finding
("your trim did not finish in 5 s on this history: …").
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

CALL_SECONDS = 5     # one call of the learner's function on one input (a trim: milliseconds)
RULE_SECONDS = 60    # a whole rule or check, hundreds of calls included: only a hang takes this
AGAIN = 0.5          # seconds before a swallowed TookTooLong is raised again
WATCH = 0.5          # seconds before a deadline when the timer starts looking where the code is
TICK = 0.05          # how often it looks, and how often a swallowed TookTooLong comes again


@dataclass(eq=False)
class Limit:
    """One time limit in force: its length, when it ends (time.monotonic()), and where the
    code was at each look in its last half second (functions, outermost first): the
    function in every one of them is where the code is stuck, wherever the stop lands."""
    seconds: float
    deadline: float
    raised: float | None = field(default=None)  # when its TookTooLong was last raised
    seen: list[list[tuple[str, str]]] = field(default_factory=list)  # (file, function)s


class TookTooLong(BaseException):  # noqa: N818  (what it says to the check that catches it)
    """The learner's code ran past a time limit; `limit` says which (and how long it was)."""

    def __init__(self, limit: Limit):
        super().__init__(f"stopped after {limit.seconds:g} s")
        self.limit = limit


_LIMITS: list[Limit] = []       # the limits in force (signal way), outermost first
_SAVED: list[Any] = []          # [handler, (seconds left, interval)] found before the first


def stack(frame: Any) -> list[tuple[str, str]]:
    """(file, function) of each frame from `frame` outwards, outermost first."""
    found = []
    while frame is not None:
        found.append((frame.f_code.co_filename, frame.f_code.co_name))
        frame = frame.f_back
    return found[::-1]


def _on_alarm(signum: int, frame: Any) -> None:  # noqa: ARG001  (a signal handler's signature)
    now = time.monotonic()
    for limit in _LIMITS:  # the outermost expired limit wins: it stops everything inside
        if limit.deadline <= now:
            if limit.raised is None or now - limit.raised >= AGAIN:
                limit.raised = now
                raise TookTooLong(limit)
            return
    for limit in _LIMITS:
        if limit.deadline - now <= WATCH and len(limit.seen) < 2 * WATCH / TICK:
            limit.seen.append(stack(frame))
    _arm()


def _arm() -> None:
    """Set the timer for the nearest deadline (ticking every TICK in the WATCH before it,
    and after it, in case the first TookTooLong is swallowed); or stop it when no limit is
    left."""
    if not _LIMITS:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    left = min(limit.deadline for limit in _LIMITS) - time.monotonic()
    start = left - WATCH if left > WATCH else left
    signal.setitimer(signal.ITIMER_REAL, max(start, 0.001), TICK)


def _signals_work() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[Limit | None]:
    """Run the block for at most `seconds` (None: no limit); past it, TookTooLong is raised
    inside the block. Yields the Limit, so that a caller can tell its own from an outer one."""
    if seconds is None:
        yield None
        return
    limit = Limit(seconds, time.monotonic() + seconds)
    if _signals_work():
        with _by_signal(limit):
            yield limit
    else:
        with _by_trace(limit):
            yield limit


@contextmanager
def _by_signal(limit: Limit) -> Iterator[None]:
    if not _LIMITS:  # the outermost limit: keep what was there before, to put it back
        _SAVED[:] = [signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL),
                     time.monotonic()]
        signal.signal(signal.SIGALRM, _on_alarm)
    _LIMITS.append(limit)
    try:
        _arm()
        yield
    finally:
        _leave(limit)


def _leave(limit: Limit) -> None:
    """Take `limit` off; the timer goes on for the others, or what was there comes back.
    A TookTooLong arriving while this runs (an outer limit's) waits until it is done."""
    while True:
        try:
            if limit in _LIMITS:
                _LIMITS.remove(limit)
            _arm()
            if not _LIMITS and _SAVED:
                handler, (left, interval), since = _SAVED
                _SAVED.clear()
                signal.signal(signal.SIGALRM, handler)
                if left:  # another tool's timer: what is left of it
                    signal.setitimer(signal.ITIMER_REAL,
                                     max(left - (time.monotonic() - since), 0.001), interval)
            return
        except TookTooLong:
            continue


@contextmanager
def _by_trace(limit: Limit) -> Iterator[None]:
    if sys.gettrace() is not None:  # a debugger or coverage traces this thread: leave it be
        yield
        return

    def tracer(frame: Any, event: str, arg: Any) -> Any:  # noqa: ARG001
        frame.f_trace_opcodes = True  # a loop on one line gives one line event, many opcodes
        if time.monotonic() > limit.deadline:
            sys.settrace(None)
            raise TookTooLong(limit)
        return tracer

    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(None)
