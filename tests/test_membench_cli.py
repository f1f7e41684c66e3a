"""`python -m lesson_lib.membench score FILE --part held-out`: a learner's strategy file scored
as a table row (a teacher ranks a class with it), and a broken file named with the rule it
breaks and the fix, in the user's language."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lesson_lib import membench
from lesson_lib.i18n import use_language
from lesson_lib.membench import grade

ROOT = Path(__file__).resolve().parent.parent

WINDOW = """
from lesson_lib.membench import Strategy
from lesson_lib.memory import ShortTermMemory


class Window(Strategy):
    '''The newest twelve messages, as one conversation.'''

    def __init__(self, context=None):
        super().__init__(context)
        self.memory = ShortTermMemory(max_messages=12)

    def take(self, message):
        self.memory.add(message)

    def request(self, question):
        return [self.system(), *self.memory.to_api_format(),
                {"role": "user", "content": question}]


STRATEGY = Window
"""

KEEPS_QUESTIONS = """
from lesson_lib.membench import Strategy


class Parrot(Strategy):
    def __init__(self, context=None):
        super().__init__(context)
        self.said = []

    def request(self, question):
        self.said.append({"role": "user", "content": question})
        return [self.system(), *self.said]


STRATEGY = Parrot
"""


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def english():
    use_language("en")
    yield
    use_language(None)


def test_a_tiny_strategy_file_is_scored_like_the_library_s(tmp_path):
    path = write(tmp_path, "window.py", WINDOW)
    data = membench.load("held-out")
    results, errors = grade.score_files([path], data, send=False)
    assert errors == [] and [r.name for r in results] == ["window"]
    # the same strategy, run directly, scores the same: the file is only a way in
    direct = membench.run(grade.load_strategy(path), data, send=False)
    assert [(r["found"], r["abstained"], r["tokens"]) for r in results[0].rows] == \
        [(r["found"], r["abstained"], r["tokens"]) for r in direct.rows]
    assert len(results[0].rows) == 56


def test_the_command_prints_the_row_and_reports_the_broken_file(tmp_path):
    good = write(tmp_path, "alice.py", WINDOW)
    bad = write(tmp_path, "bob.py", KEEPS_QUESTIONS)
    done = subprocess.run([sys.executable, "-m", "lesson_lib.membench", "score", str(good),
                           str(bad), "--part", "held-out"], capture_output=True, text=True,
                          cwd=ROOT, env={**_env(), "LESSON_LANG": "en"}, timeout=300)
    assert done.returncode == 1, "a broken file makes the exit status 1"
    assert "held-out part: 8 conversations" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith(("alice", "bob"))]
    assert len(rows) == 1 and rows[0].split()[0] == "alice"
    assert "bob.py" in done.stderr and "a question was kept" in done.stderr
    assert "Traceback" not in done.stderr


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "LESSON_BACKEND"}


@pytest.mark.parametrize("source, rule", [
    ("x = 1\n", "defines no STRATEGY"),
    (WINDOW.replace("STRATEGY = Window", ""), "add STRATEGY = Window"),
    (WINDOW.replace("STRATEGY = Window", "STRATEGY = Window()"), "without ()"),
    (WINDOW.replace("STRATEGY = Window", "STRATEGY = 42"), "subclass of"),
    ("def broken(:\n", "bad.py:1"),
    ("import no_such_module_here\n", "ModuleNotFoundError"),
    (KEEPS_QUESTIONS, "a question was kept"),
    (WINDOW.replace("return [self.system()", "return 'hi'\n        return [self.system()"),
     "request() returned str"),
    (WINDOW.replace("self.memory.add(message)", "raise KeyError('role')"), "take() stops with"),
])
def test_a_broken_file_names_the_rule_and_the_fix(tmp_path, source, rule):
    path = write(tmp_path, "bad.py", source)
    results, errors = grade.score_files([path], membench.load("held-out"), send=False)
    assert results == [] and len(errors) == 1
    assert rule in errors[0] and "bad.py" in errors[0], errors[0]


def test_the_error_is_in_the_user_s_language(tmp_path):
    path = write(tmp_path, "bad.py", "x = 1\n")
    use_language("zh")
    with pytest.raises(grade.StrategyFileError) as raised:
        grade.load_strategy(path)
    assert "STRATEGY" in str(raised.value) and "规则" in str(raised.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(grade.StrategyFileError, match="no such file"):
        grade.load_strategy(tmp_path / "nowhere.py")


@pytest.mark.parametrize("name", ["full history", "retrieval", "compaction"])
def test_the_library_s_strategies_keep_the_interface(name):
    assert grade.problems_of(membench.STRATEGIES[name]) == []


def test_the_teachers_example_file_keeps_the_interface():
    """The file the README's command scores (docs/teachers/13_example_agent.py): it loads,
    keeps the interface, and is named by its file."""
    make = grade.load_strategy(ROOT / "docs" / "teachers" / "13_example_agent.py")
    assert grade.problems_of(make) == [] and make.strategy_name == "13_example_agent"
