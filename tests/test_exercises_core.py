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
