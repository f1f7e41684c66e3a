"""The tests every core exercise gets, written once for tests/test_core_track*.py.

A core exercise is a piece the learner builds (the memory, assistant_to_dict, Agent.chat,
the loop, a trim), judged by a list of rules (lesson_lib/exercises/contract.py) that also
guard the library's own version. A test file describes its exercise in a subclass of
`CoreTrack` (named Test…, so that pytest collects it) and gets these tests on it:

- the library's version keeps every rule (the same rules the notebook's check runs);
- each correct version written in the test file, independently of the library, keeps every
  rule, and the check says so: every rule, no hint, a dozen lines at most;
- each wrong version of the bank (a mistake learners really make) is caught, FIRST by the
  rule whose hint fits that mistake; the bank holds at least eight;
- the untouched skeleton gets "not done yet", not a wall of failures;
- a wrong version is told what happened, then one more hint each time it is checked again;
- code that raises is reported with its line; an answer of the wrong kind (an instance
  where the class is asked for, a value where a function is) is not done yet;
- with `both_languages` set, each correct and wrong version and the skeleton get the same
  verdict and the same report in the Chinese edition, on its Chinese data, as in English
  (check_support.in_both_languages).

The test file keeps its versions, and the tests that only its exercise has.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from types import FunctionType
from typing import Any

from lesson_lib import exercises
from lesson_lib.exercises.contract import Rule, failed_rules, judge


def rule_named(rules: Sequence[Rule], start: str) -> str:
    """The name of the one rule in `rules` whose name starts with `start`."""
    (name,) = [rule.name for rule in rules if rule.name.startswith(start)]
    return name


def what_happened(impl: Any, rules: Sequence[Rule], start: str) -> str | None:
    """What the rule whose name starts with `start` says of `impl` (None: it holds)."""
    verdicts = {rule.name: what for rule, what in judge(impl, rules)}
    return verdicts[rule_named(rules, start)]


def name_of(value: Any) -> str:
    """A version as a test id: a class or function by its name, an object by its class."""
    if isinstance(value, (type, FunctionType)):
        return value.__name__
    if value is None or value is ... or isinstance(value, (str, list)):
        return repr(value)
    return f"{type(value).__name__}()"


class CoreTrack:
    """The tests every core exercise gets (see the module's doc). A subclass says what its
    exercise is; each attribute is read from the class, so a plain function may stand there
    (it is not made a method)."""

    rules: Sequence[Rule]               # what the notebook's check judges by
    check: Callable[[Any], bool]        # the notebook's check
    library: Sequence[Any]              # the library's own versions
    library_rules: Sequence[Rule] = ()  # the rules they keep, when not `rules`
    right: Sequence[Any]                # correct versions, written in the test file
    wrong: Mapping[Any, str]            # wrong version -> how the name of the rule that
    #                                     must catch it first starts
    skeleton: Any                       # the notebook's starting point
    skeleton_says: Sequence[str] = ()   # what its report says besides "not done yet"
    hinted: Any                         # a wrong version, checked once per hint step
    hint_steps: Sequence[tuple[str, str | None]]  # (what that check shows, what not yet)
    typo: Any                           # a version whose code raises
    typo_says: Sequence[str]            # what its report says (the error, and where)
    misgiven: Sequence[Any]             # answers of the wrong kind
    misgiven_says: str                  # what the report tells them
    both_languages: bool = False        # the check's data has a Chinese twin: compare them

    def pytest_generate_tests(self, metafunc: Any) -> None:
        """Each test that takes `library`, `right`, `wrong` or `misgiven` runs once per
        version of that list."""
        if "version" in metafunc.fixturenames:
            cls = metafunc.cls
            values = [*cls.right, *cls.wrong, cls.skeleton] if cls.both_languages else []
            metafunc.parametrize("version", values, ids=[name_of(v) for v in values])
        for name in ("library", "right", "wrong", "misgiven"):
            if name in metafunc.fixturenames:
                values = list(getattr(metafunc.cls, name))
                metafunc.parametrize(name, values, ids=[name_of(v) for v in values])

    def test_the_library_keeps_every_rule(self, library):
        track = type(self)
        assert failed_rules(library, track.library_rules or track.rules) == []

    def test_a_correct_version_written_here_keeps_every_rule(self, right):
        assert failed_rules(right, type(self).rules) == []

    def test_a_correct_version_gets_every_rule_and_no_hint(self, right, capsys):
        assert type(self).check(right) is True
        out = capsys.readouterr().out
        assert "All checks passed." in out and "❌" not in out, out
        assert len(out.splitlines()) <= 12, out

    def test_each_wrong_version_is_caught_first_by_the_rule_that_fits(self, wrong):
        track = type(self)
        broken = failed_rules(wrong, track.rules)
        assert broken, f"{name_of(wrong)} passed every rule"
        assert broken[0] == rule_named(track.rules, track.wrong[wrong]), (name_of(wrong),
                                                                           broken)

    def test_the_bank_of_wrong_versions_is_at_least_eight(self):
        assert len(type(self).wrong) >= 8

    def test_the_untouched_skeleton_is_not_written_yet(self, capsys):
        track = type(self)
        assert track.check(track.skeleton) is False
        out = capsys.readouterr().out
        assert "not done yet" in out and len(out.splitlines()) <= 4, out
        for words in track.skeleton_says:
            assert words in out, out

    def test_a_wrong_version_gets_what_happened_then_more_hints(self, capsys, monkeypatch):
        track = type(self)
        monkeypatch.setattr(exercises, "_ASKED", Counter())  # a fresh kernel: nothing asked
        for shown, not_yet in track.hint_steps:
            assert track.check(track.hinted) is False
            out = capsys.readouterr().out
            assert shown in out, out
            assert not_yet is None or not_yet not in out, out

    def test_code_that_raises_is_reported_with_its_line(self, capsys):
        track = type(self)
        assert track.check(track.typo) is False
        out = capsys.readouterr().out
        for words in track.typo_says:
            assert words in out, out

    def test_an_answer_of_the_wrong_kind_is_not_done(self, misgiven, capsys):
        track = type(self)
        assert track.check(misgiven) is False
        assert track.misgiven_says in capsys.readouterr().out

    def test_the_chinese_edition_gets_the_same_verdict_and_report(self, version, capsys):
        from check_support import in_both_languages, twin

        in_both_languages(type(self).check, twin(lambda: version), capsys)


class ScriptedCoreTrack(CoreTrack):
    """A core exercise whose check drives the code with a scripted model (notebooks 05 and
    06): it also needs no model, and leaves the shared client as it found it."""

    def test_the_check_needs_no_model_and_restores_the_shared_client(self, right,
                                                                      monkeypatch, capsys):
        from lesson_lib import llm

        previous = llm.set_client(None)
        try:
            monkeypatch.setenv("LESSON_BACKEND", "openai")  # no key: a real client would fail
            assert type(self).check(right) is True
            assert llm._client is None, "the check must restore the shared client it replaced"
        finally:
            llm.set_client(*previous)
