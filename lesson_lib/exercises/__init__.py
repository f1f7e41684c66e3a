"""Self-checks for the notebooks' exercises.

Each notebook's checks live in a module named after it (`nb01`, `nb02`, …). A
check runs the learner's answer, prints what is right or what is wrong with a
hint, and returns True or False. It never raises a bare AssertionError at the
learner: a mistake in their code is reported as a finding, not a crash. Nor does it
hang: the learner's code runs under a time limit (`deadline`; `finishing` for one call),
and code that never ends is stopped and named, with the input it was given. A function
whose parameters are not the ones the check calls it with is told so in one sentence
(`signature_problem`), not sent into the check's own lines.
"""

from __future__ import annotations

import inspect
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lesson_lib.exercises import deadline
from lesson_lib.exercises.deadline import TookTooLong, time_limit
from lesson_lib.i18n import N_, _, ngettext

# How often each finding has failed in this kernel: a hint given as steps shows one more
# step each time the same check fails the same way ("asking again gives more"). A new
# mistake (another first step: what happened) starts its steps again from the first.
_ASKED: Counter = Counter()
_FIRST: dict = {}  # (title, what) -> the first step shown last time


LINES = 12  # what a report prints at most, unless detail was asked for
_DETAIL = False  # show_details() turns it on: every report prints every line


def show_details(on: bool = True) -> None:
    """Make every check print every finding, however many (`show_details(False)` undoes it)."""
    global _DETAIL
    _DETAIL = bool(on)

SHOWN_FAILURES = 2  # failing findings a shortened report shows, with their hints


@dataclass
class Report:
    """What a check found, printed as ✅ / ❌ lines: all of them when they fit in about a
    dozen lines (or `detail` is set); else the passes counted, the first failures with their
    hints, and how many more (`more` says how to see every line)."""
    title: str
    findings: list[tuple[bool, str, str]] = field(default_factory=list)  # (ok, what, hint)
    detail: bool = False
    more: str = ""  # how to see every line (default: show_details(), in the learner's language)

    def expect(self, ok: bool, what: str, hint: str | Sequence[str] = "") -> bool:
        """Record a finding. `hint` is one sentence, or steps: the first names the rule and
        the smallest case that breaks it; each time the same finding fails again in this
        kernel, one more step is shown."""
        if not ok and not isinstance(hint, str):
            steps = [_(step) for step in hint]  # marked with N_() where defined
            key = (self.title, what)
            if _FIRST.get(key) != (steps[:1] or [""])[0]:  # another mistake: from step 1
                _FIRST[key] = (steps[:1] or [""])[0]
                _ASKED[key] = 0
            _ASKED[key] += 1
            shown = min(_ASKED[key], len(steps))
            hint = "\n     ".join(steps[:shown])
            if shown < len(steps):
                hint += "\n     " + _("(run the check again for a further hint)")
        self.findings.append((bool(ok), what, hint))
        return bool(ok)

    @property
    def passed(self) -> bool:
        return bool(self.findings) and all(ok for ok, _, _ in self.findings)

    def __str__(self) -> str:
        end = "  " + (_("All checks passed.") if self.passed else _("Not yet: see the ❌ lines."))
        lines = [_("{title}:").format(title=_(self.title)), *self._lines(self.findings), end]
        if self.detail or _DETAIL or len(lines) <= LINES:
            return "\n".join(lines)
        passes = [f for f in self.findings if f[0]]
        failures = [f for f in self.findings if not f[0]]
        short = [_("{title}:").format(title=_(self.title))]
        if passes:
            short.append("  ✅ " + ngettext("{n} check passes", "{n} checks pass",
                                           len(passes)).format(n=len(passes)))
        short += self._lines(failures[:SHOWN_FAILURES])
        if len(failures) > SHOWN_FAILURES:
            more = self.more or _("for every line, run show_details() (from "
                                  "lesson_lib.exercises), then the check again")
            short.append("  ❌ " + _("… and {n} more: {how}").format(
                n=len(failures) - SHOWN_FAILURES, how=more))
        return "\n".join([*short, end])

    @staticmethod
    def _lines(findings: list[tuple[bool, str, str]]) -> list[str]:
        lines = []
        for ok, what, hint in findings:  # a rule's name or a hint marked with N_() where
            lines.append(f"  {'✅' if ok else '❌'} {_(what)}")  # defined is translated here
            if not ok and hint:
                lines.append("     " + _("hint: {hint}").format(hint=_(hint)))
        return lines


def _theirs(filename: str) -> bool:
    """Is this file the learner's (not lesson_lib's, not an installed library's)?"""
    ours = (str(Path(__file__).resolve().parent.parent), sys.prefix, sys.base_prefix)
    return not filename.startswith(ours)


def _their_frames(error: BaseException) -> list[traceback.FrameSummary]:
    """The frames of the learner's own code (not lesson_lib's, not a library's), outermost
    first."""
    return [f for f in traceback.extract_tb(error.__traceback__) if _theirs(f.filename)]


def _stuck_in(error: BaseException) -> str | None:
    """Where in the learner's code a stopped loop is: their functions found at every look
    the timer took before it stopped the code (deadline.Limit.seen), outermost first,
    "add() → _trim()", so that it reads the same whatever line the stop landed on; without
    looks (a busy machine can delay the timer past them), the function where it stopped.
    A generator expression or comprehension is named by the function it is in: where the
    stop lands inside `next(... for ...)` is chance, and Python 3.12 inlines comprehensions."""
    named = [f.name for f in _their_frames(error)]
    theirs = [name for name in named if not name.startswith("<")] or named
    seen = getattr(getattr(error, "limit", None), "seen", None) or []
    always = None
    for look in seen:
        names = {name for filename, name in look if _theirs(filename)}
        always = names if always is None else always & names
    inside = list(dict.fromkeys(name for name in theirs if name in (always or ())))
    if inside:
        return " → ".join(f"{name}()" for name in inside)
    return f"{theirs[-1]}()" if theirs else None


def _learner_frame(error: BaseException) -> traceback.FrameSummary:
    """The deepest frame of the learner's own code (not lesson_lib's, not a library's)."""
    return (_their_frames(error) or traceback.extract_tb(error.__traceback__))[-1]


def not_called(error: BaseException) -> bool:
    """True when `error` is Python refusing the check's call of the learner's function (a
    TypeError raised before any line of theirs ran: a parameter missing, one too many, or
    something that is no function at all)."""
    return isinstance(error, TypeError) and not _their_frames(error) and (
        "argument" in str(error) or "not callable" in str(error))


CALL_REFUSED = N_("your function cannot take what the check gives it: keep the parameters "
                  "the exercise's stub has, in that order")
NOT_A_FUNCTION = N_("what the check was given cannot be called: pass the function itself (its "
                    "name, without parentheses)")


def where_hint(error: BaseException) -> str:
    """The hint under "your code raised …": the line of the learner's code where it
    happened, or, when the call itself failed, what to fix in the function's parameters."""
    if not_called(error):
        return _(NOT_A_FUNCTION) if "not callable" in str(error) else _(CALL_REFUSED)
    where = _learner_frame(error)
    return _("see line {line} of {function}()").format(line=where.lineno, function=where.name)


def signature_problem(fn: Any, expected: str, *args: Any, **kwargs: Any) -> str | None:
    """One sentence when `fn` cannot be called as the check calls it (with `args` and
    `kwargs`, shown to the learner as `expected`): its name, the parameters it has, and the
    call the check makes. None when it can, or when its signature cannot be read."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        name = name.rsplit("<locals>.", 1)[-1]  # a function defined inside another
        return _("your {name}{has} cannot be called the way the check calls it, {expected}: "
                 "give it the parameters the exercise asks for").format(
                     name=name, has=signature, expected=expected)
    return None


def wrong_signature(title: str, problem: str | None) -> bool:
    """Print the one-line report of a function whose parameters are not the exercise's
    (`problem`, from signature_problem), and return True; False (nothing printed) when
    `problem` is None."""
    if problem is None:
        return False
    report = Report(title)
    report.expect(False, problem)
    print(report)
    return True


class Stuck(BaseException):  # noqa: N818  (what a check says: the code got stuck)
    """The learner's code did not finish on one input (a time limit stopped it): `what` says
    on which input and where it was, `hints` what to look at. A BaseException, like the
    TookTooLong it comes from, so that nothing on the way (Hypothesis searching for a
    smaller input, the learner's own `except Exception:`) runs the code again."""

    def __init__(self, what: str, hints: Sequence[str] = ()):
        super().__init__(what)
        self.what, self.hints = what, tuple(hints)


LOOP_HINTS = (N_("a loop that cannot reach its end runs for ever: look at the line it was "
                 "running, and at what would make the loop stop"),)


def did_not_finish(error: BaseException, seconds: float, on: str,
                   who: str = N_("your code")) -> str:
    """"your trim did not finish in 5 s on this history: …; it was running _trim() when
    the check stopped it" (the function, not the line: the line differs from one run to the
    next, and the report of one mistake must not)."""
    said = _("{who} did not finish in {seconds} s on {on}").format(
        who=_(who), seconds=f"{seconds:g}", on=on)
    function = _stuck_in(error)
    if function is None:
        return said
    return _("{said}; it was running {function} when the check stopped it").format(
        said=said, function=function)


@contextmanager
def finishing(on: Callable[[], str], *, who: str = N_("your code"),
              hints: Sequence[str] = LOOP_HINTS,
              seconds: float | None = None) -> Iterator[None]:
    """The block (the learner's code on one input) must end within `seconds` (None:
    deadline.CALL_SECONDS); if it does not, it is stopped and Stuck is raised, saying on
    what (`on()`, e.g. "this history: [system, user 'hi']") and where it was."""
    seconds = deadline.CALL_SECONDS if seconds is None else seconds
    try:
        with time_limit(seconds) as limit:
            yield
    except TookTooLong as error:
        if error.limit is not limit:
            raise
        raise Stuck(did_not_finish(error, seconds, on(), who), hints) from None


def run_check(title: str, body: Callable[[Report], None]) -> bool:
    """Run `body(report)`, print the report, return whether everything passed.
    An exception in the learner's code becomes a ❌ line naming it; code that does not
    finish (a loop that never ends) is stopped and named."""
    report = Report(title)
    try:
        with time_limit(deadline.RULE_SECONDS) as limit:
            body(report)
    except Stuck as stuck:
        report.expect(False, stuck.what, stuck.hints or "")
    except TookTooLong as error:
        if error.limit is not limit:
            raise
        report.expect(False, did_not_finish(error, deadline.RULE_SECONDS, _("this check")),
                      LOOP_HINTS)
    except Exception as error:  # the learner's code failed: report it, don't crash
        report.expect(False, _("your code raised {error}: {message}").format(
                          error=type(error).__name__, message=error),
                      where_hint(error))
    print(report)
    return report.passed


def not_done(title: str, hint: str) -> bool:
    """Print a one-line report for an exercise not written yet; return False."""
    report = Report(title)
    report.expect(False, _("not done yet"), hint)
    print(report)
    return False


def reveal(passed: bool, *objects: object) -> object:
    """The library's version of an exercise (`objects`, shown in order), once the learner's
    own has passed its check (`passed` is what the check returned); until then, one line
    saying so."""
    if not objects:
        raise TypeError("reveal(passed, obj, ...) needs the library's function or class to "
                        "show, e.g. reveal(passed_1, strict_version)")
    if passed:
        from IPython.display import display  # noqa: PLC0415

        from lesson_lib.display import show_source  # noqa: PLC0415

        for obj in objects[:-1]:
            display(show_source(obj))
        return show_source(objects[-1])
    names = [getattr(obj, "__qualname__", repr(obj)) for obj in objects]
    listed = names[0] if len(names) == 1 else _("{first} and {last}").format(
        first=", ".join(names[:-1]), last=names[-1])
    print(ngettext("The library's {names} appears here once your version passes its check "
                   "(run the check, then this cell again).",
                   "The library's {names} appear here once your version passes its check "
                   "(run the check, then this cell again).", len(names)).format(names=listed))
    return None
