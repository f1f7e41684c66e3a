"""The exercise report names the learner's own line when their code raises."""

import json

from lesson_lib.exercises import Report, run_check


def test_a_learners_exception_is_a_finding_pointing_at_their_code(capsys):
    def learner_code():
        return json.loads("{not json")

    passed = run_check("demo", lambda report: report.expect(learner_code() == 1, "works"))
    out = capsys.readouterr().out
    assert passed is False
    assert "❌ your code raised JSONDecodeError" in out
    assert "of learner_code()" in out, out


def test_report_passes_only_when_every_finding_passes():
    report = Report("t")
    assert not report.passed
    report.expect(True, "a")
    assert report.passed
    report.expect(False, "b", "do c")
    assert not report.passed and "hint: do c" in str(report)


def test_hint_steps_start_again_for_a_new_mistake(monkeypatch):
    """Asking again with the same mistake shows one more step; another mistake on the same
    finding starts at its first step (what happened), not where the last one stopped."""
    from collections import Counter

    from lesson_lib import exercises

    monkeypatch.setattr(exercises, "_ASKED", Counter())
    monkeypatch.setattr(exercises, "_FIRST", {})

    def report_of(what_happened: str) -> str:
        report = Report("t")
        report.expect(False, "the rule", (what_happened, "step two", "step three"))
        return str(report)

    assert "step two" not in report_of("mistake A")
    assert "step two" in report_of("mistake A") and "step three" not in report_of("mistake B")
    again = report_of("mistake B")  # B asked a second time: its own second step
    assert "mistake B" in again and "step two" in again and "step three" not in again


def test_a_call_refused_by_the_learners_parameters_is_told_so():
    """Python refuses the check's call before a line of the learner's runs: the hint is
    about the function's parameters, not a line of the check's own code."""
    from lesson_lib.trimcheck import judge_one, trim_case

    def my_trim(messages):
        return messages

    verdict = judge_one(my_trim, trim_case("nothing to trim"), "messages")
    (what, hint), = verdict.problems
    assert what.startswith("it raised TypeError: ") and "my_trim() takes 1 positional" in what
    assert hint == ("your function cannot take what the check gives it: keep the parameters "
                    "the exercise's stub has, in that order")


def test_a_check_whose_code_never_ends_is_stopped_and_named(capsys, monkeypatch):
    from lesson_lib.exercises import deadline

    monkeypatch.setattr(deadline, "RULE_SECONDS", 0.8)

    def learner_code():
        while True:
            pass

    passed = run_check("demo", lambda report: report.expect(learner_code(), "works"))
    out = capsys.readouterr().out
    assert passed is False, out
    assert "your code did not finish in 0.8 s on this check; it was running" in out, out
    assert "learner_code() when the check stopped it" in out, out
