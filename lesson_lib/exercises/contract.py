"""Rules that judge a piece the learner builds, and the library's own version of it.

A core exercise (the learner writes `ShortTermMemory`, `assistant_to_dict`, `Agent.chat`,
the loop, a trim) is judged by a list of `Rule`s. The same list guards `lesson_lib`'s own
version in the test suite (`tests/test_core_track.py` runs every rule on it), so the
learner's version and the library's answer to one standard.

A rule is one thing that must hold, said as a learner would read it ("to_api_format()
returns a copy"), with a test and hints in steps:

- the test gets the implementation and raises `Broken("what happened")` when the rule
  does not hold; `Broken("what happened", hints)` when that mistake has hints of its own
  (they then stand in for the rule's, so that each mistake is told what fits it). A rule made by `property_rule` asks Hypothesis for the smallest input that
  breaks it (a few hundred tries, derandomised, so a check prints the same every time);
- the first hint step names the rule and shows that smallest case; asking again (running
  the check again) shows the next step. No step is the answer.

`check_rules(title, impl, rules)` prints a short report (✅ counted, the first failures with
their hints) and returns True when every rule holds. A rule whose test raises anything but
`Broken` is reported as the learner's code raising, with the line; a skeleton whose every
method still raises NotImplementedError gets one line: not written yet. Each rule has a time
limit (deadline.RULE_SECONDS), and the tests stop the learner's code on one input sooner
(`finishing`, in lesson_lib.exercises): code that never ends is reported where it was
stopped, never left to hang the cell.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lesson_lib.cache import cache_folder
from lesson_lib.exercises import (
    LOOP_HINTS,
    Report,
    Stuck,
    _learner_frame,
    deadline,
    did_not_finish,
    not_called,
    not_done,
    where_hint,
)
from lesson_lib.exercises.deadline import TookTooLong, time_limit
from lesson_lib.i18n import _, ngettext

WAITING = "not judged until "  # a verdict's start for a rule whose `needs` failed (never shown)


class Broken(AssertionError):
    """A rule does not hold; the message says what was seen (the smallest case). `hints`,
    when given, are this mistake's own steps: they replace the rule's."""

    def __init__(self, seen: str, hints: Sequence[str] = ()):
        super().__init__(seen)
        self.hints = tuple(hints)


class Finding(str):
    """What happened (a rule's verdict), and the hint steps that fit it (empty: the rule's)."""
    hints: tuple[str, ...] = ()

    def __new__(cls, text: str, hints: Sequence[str] = ()) -> Finding:
        made = super().__new__(cls, text)
        made.hints = tuple(hints)
        return made


@dataclass(frozen=True)
class Rule:
    """One thing the implementation must do, its test, and hints that come in steps."""
    name: str                    # the rule, as the report's ❌ or ✅ line says it
    test: Callable[[Any], None]  # test(impl): raises Broken("what happened") if it fails
    hints: tuple[str, ...] = ()  # further steps, shown one more each time it fails again
    needs: tuple[str, ...] = ()  # names of rules that must hold first (else not judged)

    def verdict(self, impl: Any) -> str | None:
        """None when the rule holds, else what happened (Broken's text, or the error): a
        Finding, which carries the mistake's own hints when it has some."""
        try:
            self.test(impl)
        except Broken as broken:
            return Finding(str(broken), broken.hints)
        return None


class NotWritten(Exception):
    """The implementation is still the skeleton (it raised NotImplementedError)."""


def expect(ok: bool, seen: str, hints: Sequence[str] = ()) -> None:
    """Raise Broken(seen, hints) unless `ok`: the one-line form of a rule's test."""
    if not ok:
        raise Broken(seen, hints)


def property_rule(name: str,
                  strategy: Any,                    # a Hypothesis strategy of inputs
                  breaks: Callable[[Any, Any], str | None],  # (impl, example) -> what broke
                  hints: Sequence[str] = (),
                  examples: int = 300,              # tries; a check answers in about a second
                  needs: Sequence[str] = ()) -> Rule:
    """A rule that must hold for every input `strategy` makes: Hypothesis searches for one
    where `breaks(impl, example)` says something broke, and shrinks it to the smallest."""

    def test(impl: Any) -> None:
        from hypothesis import HealthCheck, Phase, find, settings  # noqa: PLC0415
        from hypothesis.errors import NoSuchExample  # noqa: PLC0415

        _keep_hypothesis_files_out_of_the_folder()

        config = settings(max_examples=examples, derandomize=True, database=None,
                          deadline=None, suppress_health_check=list(HealthCheck),
                          phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False)
        try:
            smallest = find(strategy, lambda ex: breaks(impl, ex) is not None,
                            settings=config)
        except NoSuchExample:
            return
        raise Broken(breaks(impl, smallest) or repr(smallest))

    return Rule(name, test, tuple(hints), tuple(needs))


def _keep_hypothesis_files_out_of_the_folder() -> None:
    """Hypothesis keeps a cache (.hypothesis/) in the current folder, which in a notebook is
    the learner's notebooks folder: unless the user chose a place for it, put it in the
    user's own cache folder instead (hypothesis_folder()), never in a fixed place that
    other users of a shared server would write to as well."""
    from hypothesis import configuration  # noqa: PLC0415

    chosen = vars(configuration).get("__hypothesis_home_directory")
    if chosen is None and not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        configuration.set_hypothesis_home_dir(hypothesis_folder())


def hypothesis_folder() -> Path:
    """Where the exercise checks let Hypothesis keep its files: lesson_lib.cache's folder
    "hypothesis", by default ~/.cache/lesson_lib/hypothesis."""
    return cache_folder("hypothesis")


def judge(impl: Any, rules: Sequence[Rule]) -> list[tuple[Rule, str | None]]:
    """Every rule's verdict: (rule, None) when it holds, (rule, what happened) when not.
    A rule whose `needs` failed is reported as not judged yet. NotImplementedError raised by
    every rule judged means the skeleton is untouched: NotWritten is raised."""
    verdicts: list[tuple[Rule, str | None]] = []
    failed: set[str] = set()
    unwritten = judged = 0
    for rule in rules:
        if failed.intersection(rule.needs):
            failed.add(rule.name)
            verdicts.append((rule, WAITING + " and ".join(sorted(failed.intersection(rule.needs)))
                             + " holds"))
            continue
        judged += 1
        try:
            with time_limit(deadline.RULE_SECONDS) as limit:
                what = rule.verdict(impl)
        except NotImplementedError as error:
            unwritten += 1
            where = _learner_frame(error)
            what = _("{function}() is not written yet (it raises NotImplementedError)").format(
                function=where.name)
        except Stuck as stuck:  # the learner's code did not finish on one input
            what = Finding(stuck.what, stuck.hints)
        except TookTooLong as error:
            if error.limit is not limit:
                raise
            what = Finding(did_not_finish(error, deadline.RULE_SECONDS, _("this rule's inputs")),
                           LOOP_HINTS)
        except Exception as error:  # the learner's code failed: say where, don't crash
            if not_called(error):
                what = Finding(_("the check could not call your code: {message}").format(
                    message=error), (where_hint(error),))
            else:
                where = _learner_frame(error)
                what = _("your code raised {error}: {message} (line {line} of "
                         "{function}())").format(error=type(error).__name__, message=error,
                                                 line=where.lineno, function=where.name)
        if what is not None:
            failed.add(rule.name)
        verdicts.append((rule, what))
    if judged and unwritten == judged:
        raise NotWritten
    return verdicts


def check_rules(title: str, impl: Any, rules: Sequence[Rule], *,
                start: str | None = None,   # the hint for an untouched skeleton
                detail: bool = False) -> bool:
    """Judge `impl` by `rules`, print the report, return True when every rule holds."""
    try:
        verdicts = judge(impl, rules)
    except NotWritten:
        return not_done(title, start or _("write the bodies of the skeleton's methods, then "
                                          "run this check again"))
    report = Report(title, detail=detail)
    waiting = []
    for rule, what in verdicts:
        if what is None:
            report.expect(True, rule.name)
        elif what.startswith(WAITING):
            waiting.append(rule.name)
        else:
            hints = getattr(what, "hints", ()) or rule.hints  # the mistake's own, if it has
            report.expect(False, rule.name, (_("what happened: {what}").format(what=what),
                                             *hints))
    if waiting:  # one line for the rules that build on a broken one
        report.expect(False, ngettext("{n} more rule will be judged once the ones above hold",
                                      "{n} more rules will be judged once the ones above hold",
                                      len(waiting)).format(n=len(waiting)))
    print(report)
    return report.passed


def failed_rules(impl: Any, rules: Sequence[Rule]) -> list[str]:
    """The names of the rules `impl` breaks (judged, not merely skipped): for the tests
    that prove each wrong version is caught by the rule that fits it."""
    try:
        verdicts = judge(impl, rules)
    except NotWritten:
        return ["not written"]
    return [rule.name for rule, what in verdicts
            if what is not None and not what.startswith(WAITING)]
