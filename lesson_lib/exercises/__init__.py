"""Self-checks for the notebooks' exercises.

Each notebook's checks live in a module named after it (`nb01`, `nb02`, …). A
check runs the learner's answer, prints what is right or what is wrong with a
hint, and returns True or False. It never raises a bare AssertionError at the
learner: a mistake in their code is reported as a finding, not a crash.
"""

from __future__ import annotations

import sys
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lesson_lib.i18n import _, ngettext

# How often each finding has failed in this kernel: a hint given as steps shows one more
# step each time the same check fails the same way ("asking again gives more").
_ASKED: Counter = Counter()


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
            _ASKED[(self.title, what)] += 1
            shown = min(_ASKED[(self.title, what)], len(steps))
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


def _learner_frame(error: BaseException) -> traceback.FrameSummary:
    """The deepest frame of the learner's own code (not lesson_lib's, not a library's)."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = (str(Path(__file__).resolve().parent.parent), sys.prefix, sys.base_prefix)
    theirs = [f for f in frames if not f.filename.startswith(ours)]
    return (theirs or frames)[-1]


def run_check(title: str, body: Callable[[Report], None]) -> bool:
    """Run `body(report)`, print the report, return whether everything passed.
    An exception in the learner's code becomes a ❌ line naming it."""
    report = Report(title)
    try:
        body(report)
    except Exception as error:  # the learner's code failed: report it, don't crash
        where = _learner_frame(error)
        report.expect(False, _("your code raised {error}: {message}").format(
                          error=type(error).__name__, message=error),
                      _("see line {line} of {function}()").format(line=where.lineno,
                                                                   function=where.name))
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
