"""The exercises as an nbgrader course (scripts/nbgrader_course.py): notebook 02's Build it,
released, submitted by a class (right answers, the bank's wrong versions, the untouched stub,
a trim that never finishes), autograded and given feedback by nbgrader's own CLI, in English
and in Chinese. Every right answer gets the Build it's points, every wrong one 0, and each
wrong one's feedback names the rule it breaks, in the learner's language."""

from __future__ import annotations

import html
import importlib.util
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

import test_core_track as bank  # noqa: E402  the bank of wrong MyMemory versions
from core_track_support import rule_named  # noqa: E402

from lesson_lib.exercises import nb02  # noqa: E402
from lesson_lib.i18n import catalogue  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "02_messages_are_memory"
EXERCISE = "02_memory"  # the Build it: solutions/02_memory.py
SPEC = importlib.util.spec_from_file_location("nbgrader_course",
                                              ROOT / "scripts" / "nbgrader_course.py")
course_script = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(course_script)


def _as_my_memory(cls: type) -> str:
    """A bank class as the code a learner would hand in: self-contained, named MyMemory."""
    parts = ["import copy\nimport json\n"]
    if cls is not bank.IndependentMemory and issubclass(cls, bank.IndependentMemory):
        parts.append(inspect.getsource(bank.IndependentMemory))
    parts.append(inspect.getsource(cls))
    parts.append(f"MyMemory = {cls.__name__}\n")
    return "\n".join(parts)


WORKED = (ROOT / "solutions" / "02_memory.py").read_text(encoding="utf-8")
WRITTEN_HERE = '''
class MyMemory:
    """Written for this test: a list, and an index-based trim."""

    def __init__(self, max_messages=40):
        self.max_messages = max_messages
        self.items = []

    def add(self, message):
        self.items.append(json.loads(json.dumps(message)))
        self._trim()

    def _trim(self):
        while len(self.items) > self.max_messages:
            for i, m in enumerate(self.items):
                if m["role"] != "system":
                    self.items.pop(i)
                    break
            else:
                break

    def to_api_format(self):
        return json.loads(json.dumps(self.items))

    def clear_non_system(self):
        self.items[:] = [m for m in self.items if m["role"] == "system"]

    def message_count(self):
        return len(self.items)
'''
RIGHT = {"worked": WORKED, "independent": _as_my_memory(bank.IndependentMemory),
         "json_copies": _as_my_memory(bank.CopiesThroughJson),
         "written_here": "import json\n" + WRITTEN_HERE}
# each wrong version, with the rule (its ❌ line) the feedback must name
WRONG = {cls.__name__: (_as_my_memory(cls), rule_named(nb02.MEMORY_RULES, start))
         for cls, start in bank.WRONG_02.items()}
# one wrong version per rule (the never-finishing trim among them), then more up to 16
ONE_PER_RULE = {}
for _name, (_code, _rule) in WRONG.items():
    ONE_PER_RULE.setdefault(_rule, _name)
SUBMITTED_WRONG = {"zh": list(ONE_PER_RULE.values())}
SUBMITTED_WRONG["en"] = (SUBMITTED_WRONG["zh"]
                         + [n for n in WRONG if n not in SUBMITTED_WRONG["zh"]])[:16]
SUBMITTED_RIGHT = {"en": list(RIGHT), "zh": ["worked", "written_here"]}
# the cell as released (NotImplementedError), and the notebook's own skeleton
BLANK = {"released_stub": None, "skeleton": _as_my_memory(bank.Skeleton)}
assert bank.NeverStopsWhenOnlySystemsAreLeft.__name__ in WRONG  # the one that never finishes


def _run(course: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait(*procs: subprocess.Popen) -> None:
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out[-3000:]
        assert "not recognized" not in out, f"a setting nbgrader does not know:\n{out[-3000:]}"


def _submit(course: Path, student: str, code: str | None) -> None:
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = json.loads(released.read_text(encoding="utf-8"))
    if code is not None:
        (cell,) = [c for c in nb["cells"]
                   if c["metadata"].get("nbgrader", {}).get("grade_id") == f"{EXERCISE}-answer"]
        cell["source"] = code
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, Path]:
    """Both courses made, released, submitted, autograded and given feedback (en and zh run
    side by side: one nbgrader process each)."""
    courses = {lang: tmp_path_factory.mktemp(f"course_{lang}") for lang in ("en", "zh")}
    for lang, course in courses.items():
        course_script.write_course(course, lang, only=["02"], keep=[EXERCISE])
    _wait(*[_run(c, "generate_assignment", ASSIGNMENT) for c in courses.values()])
    for lang, course in courses.items():
        for student in SUBMITTED_RIGHT[lang]:
            _submit(course, student, RIGHT[student])
        for student in SUBMITTED_WRONG[lang]:
            _submit(course, student, WRONG[student][0])
        for student, code in BLANK.items():
            _submit(course, student, code)
    _wait(*[_run(c, "autograde", ASSIGNMENT) for c in courses.values()])
    _wait(*[_run(c, "generate_feedback", ASSIGNMENT) for c in courses.values()])
    return courses


def _score(course: Path, student: str) -> float:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return gradebook.find_grade(f"{EXERCISE}-check", ASSIGNMENT, ASSIGNMENT,
                                    student).score


def _feedback(course: Path, student: str) -> str:
    page = course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    return html.unescape(page.read_text(encoding="utf-8"))


def test_the_course_has_the_build_it_worth_more_than_an_exercise(tmp_path):
    made = course_script.write_course(tmp_path, "en", only=["02"])
    nb = json.loads((tmp_path / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    points = {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]["points"]
              for c in nb["cells"] if c["metadata"]["nbgrader"].get("grade")}
    assert points[f"{EXERCISE}-check"] == course_script.BUILD_POINTS
    assert points["02_chat_turn-check"] == course_script.POINTS
    assert made == {ASSIGNMENT: sum(points.values())}
    (answer,) = [c for c in nb["cells"]
                 if c["metadata"]["nbgrader"]["grade_id"] == f"{EXERCISE}-answer"]
    assert WORKED.split("\n", 2)[2].strip() in "".join(answer["source"])


def test_at_least_twenty_submissions_and_every_rule_in_both_languages():
    assert len(SUBMITTED_RIGHT["en"]) + len(SUBMITTED_WRONG["en"]) + len(BLANK) >= 20
    for lang in ("en", "zh"):
        assert bank.NeverStopsWhenOnlySystemsAreLeft.__name__ in SUBMITTED_WRONG[lang]
        assert {WRONG[n][1] for n in SUBMITTED_WRONG[lang]} == {r for _, r in WRONG.values()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_right_answer_gets_the_build_its_points(graded, lang):
    scores = {student: _score(graded[lang], student) for student in SUBMITTED_RIGHT[lang]}
    assert scores == {student: course_script.BUILD_POINTS for student in scores}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_wrong_or_blank_answer_gets_zero(graded, lang):
    scores = {student: _score(graded[lang], student) for student in [*SUBMITTED_WRONG[lang], *BLANK]}
    assert scores == {student: 0 for student in scores}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_wrong_answer_s_feedback_names_the_rule_it_breaks(graded, lang):
    words = catalogue(lang).gettext
    missing = {student: words(WRONG[student][1]) for student in SUBMITTED_WRONG[lang]
               if f"❌ {words(WRONG[student][1])}" not in _feedback(graded[lang], student)}
    assert not missing


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_right_answer_s_feedback_says_every_check_passed(graded, lang):
    words = catalogue(lang).gettext
    for student in SUBMITTED_RIGHT[lang]:
        page = _feedback(graded[lang], student)
        assert words("All checks passed.") in page and "❌" not in page, student


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_assignment_speaks_its_language_wherever_it_is_opened(tmp_path, lang):
    """Its metadata names the language (lesson_lib.i18n reads it) and its first cell, locked,
    says it again: a Chinese assignment downloaded or uploaded elsewhere stays Chinese."""
    from lesson_lib import i18n

    course_script.write_course(tmp_path, lang, only=["02"])
    path = tmp_path / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"]["lesson_lib"] == {"language": lang}
    assert i18n.notebook_language(str(path)) == lang
    first = nb["cells"][0]
    assert first["cell_type"] == "code" and f"use_language({lang!r})" in "".join(first["source"])
    assert first["metadata"]["nbgrader"]["locked"] is True
