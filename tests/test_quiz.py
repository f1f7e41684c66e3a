"""The check-yourself quizzes: every quiz file keeps the rules, every quiz a notebook shows
exists and is shown once in each edition, and a click says right or wrong and why."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from lesson_lib import quiz as q
from lesson_lib.i18n import use_language

ROOT = Path(__file__).resolve().parent.parent
CALL = re.compile(r"""\bquiz\(\s*["'](?P<id>[^"']+)["']\s*\)""")

GOOD = {
    "title": {"en": "The stateless model", "zh": "无状态的模型"},
    "questions": [
        {"ask": {"en": "What does the model remember between two calls?",
                 "zh": "两次调用之间，模型记得什么？"},
         "options": [
             {"text": {"en": "Nothing", "zh": "什么都不记得"}, "right": True,
              "why": {"en": "Each call starts from the `messages` it is sent.",
                      "zh": "每次调用都只从发给它的 `messages` 开始。"}},
             {"text": {"en": "The last answer", "zh": "上一次的回答"},
              "why": {"en": "Only if you send it again.", "zh": "除非你再发一次。"}}]},
    ],
}


@pytest.fixture
def quizzes(tmp_path, monkeypatch):
    """A quiz folder of one's own, with 01.1 in it."""
    monkeypatch.setattr(q, "QUIZ_DIR", tmp_path)
    q._file.cache_clear()
    (tmp_path / "01.json").write_text(json.dumps({"01.1": GOOD}), encoding="utf-8")
    yield tmp_path
    q._file.cache_clear()


def _broken(change) -> dict:
    raw = copy.deepcopy(GOOD)
    change(raw)
    return raw


BROKEN = {
    "no Chinese": (lambda r: r["title"].pop("zh"), "both languages"),
    "empty English": (lambda r: r["questions"][0]["ask"].update(en=" "), "neither empty"),
    "two right": (lambda r: r["questions"][0]["options"][1].update(right=True),
                  "exactly one option is right"),
    "none right": (lambda r: r["questions"][0]["options"][0].pop("right"),
                   "exactly one option is right"),
    "no why": (lambda r: r["questions"][0]["options"][1].pop("why"), "its explanation"),
    "one option": (lambda r: r["questions"][0]["options"].pop(), "2 to 5 options"),
    "no questions": (lambda r: r.update(questions=[]), "1 to 4 questions"),
    "five questions": (lambda r: r.update(questions=r["questions"] * 5), "1 to 4 questions"),
    "same option twice": (lambda r: r["questions"][0]["options"][1].update(
        text=dict(r["questions"][0]["options"][0]["text"])), "read the same"),
    "right as text": (lambda r: r["questions"][0]["options"][0].update(right="yes"),
                      "'right' is true or false"),
    "a stray key": (lambda r: r.update(answers=[0]), "nothing else"),
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_malformed_quiz_is_refused_with_the_rule_it_breaks(name):
    change, rule = BROKEN[name]
    with pytest.raises(q.QuizError, match=re.escape(rule)):
        q.parse("01.1", _broken(change))


def test_a_quiz_id_names_its_notebook_and_sits_in_its_file():
    with pytest.raises(q.QuizError, match="like '04.2'"):
        q.parse("intro", GOOD)
    with pytest.raises(q.QuizError, match="goes in the file of its notebook, 01.json"):
        q.parse("01.1", GOOD, notebook="02")
    assert q.parse("03b.2", GOOD, notebook="03b").id == "03b.2"


def test_an_unknown_quiz_says_which_exist(quizzes):
    with pytest.raises(q.QuizError, match=r"no quiz '01.7' \(notebook 01 has: 01.1\)"):
        q.load("01.7")
    with pytest.raises(q.QuizError, match="has: none"):
        q.load("09.1")


def test_a_choice_says_right_or_wrong_and_why_in_the_language_spoken(quizzes):
    try:
        use_language("en")
        state = q.QuizState("01.1")
        wrong = state.choose(0, "b")
        assert (wrong.right, wrong.chosen) == (False, "B")
        assert wrong.text() == "B: ✗ Not this one. Only if you send it again."
        assert state.summary() == "check yourself 01.1: 0 of 1 right"
        assert state.choose(0, 0).right and state.summary().endswith("1 of 1 right")
        use_language("zh")
        zh = q.QuizState("01.1")
        assert zh.choose(0, "A").text() == "A：✓ 对。每次调用都只从发给它的 `messages` 开始。"
        assert "无状态的模型" in zh.text() and "自测" in zh.text()
    finally:
        use_language(None)


def test_a_choice_out_of_range_is_named(quizzes):
    state = q.QuizState("01.1")
    with pytest.raises(IndexError, match="options A to B"):
        state.choose(0, "C")
    with pytest.raises(IndexError, match="questions 0 to 0"):
        state.choose(1, 0)


def test_the_saved_text_shows_the_questions_but_not_the_answers(quizzes):
    use_language("en")
    try:
        view = q.quiz("01.1")
        text = repr(view)
        assert "1. What does the model remember between two calls?" in text
        assert "   A) Nothing" in text and "   B) The last answer" in text
        assert "Only if you send it again" not in text and "starts from" not in text
        assert view._repr_mimebundle_()["text/plain"] == text
    finally:
        use_language(None)


def test_clicking_a_button_marks_it_and_explains(quizzes):
    view = q.quiz("01.1")
    view.buttons[0][1].click()
    assert view.buttons[0][1].button_style == "danger"
    assert "Only if you send it again" in view.feedback[0].value
    view.buttons[0][0].click()
    assert view.buttons[0][0].button_style == "success"
    assert view.buttons[0][1].button_style == ""
    assert "<code>messages</code>" in view.feedback[0].value
    assert view.state.right == 1


def test_every_quiz_file_keeps_the_rules():
    q.check_quizzes()


def _calls(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(n, found["id"]) for n, cell in enumerate(cells) if cell["cell_type"] == "code"
            for found in CALL.finditer("".join(cell["source"]))]


def test_every_quiz_is_shown_once_in_each_edition_in_the_same_cell():
    every = q.check_quizzes()
    shown: dict[str, list[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        english, chinese = _calls(path), _calls(ROOT / "notebooks" / "zh" / path.name)
        assert english == chinese, f"{path.name}: the two editions show different quizzes"
        for _cell, quiz_id in english:
            assert quiz_id.split(".")[0] == path.name.split("_")[0], (
                f"{path.name} shows quiz {quiz_id}, another notebook's")
            q.load(quiz_id)
            shown.setdefault(quiz_id, []).append(path.name)
    twice = {k: v for k, v in shown.items() if len(v) > 1}
    assert not twice, f"a quiz shown more than once: {twice}"
    assert set(every) == set(shown), f"quizzes no notebook shows: {sorted(set(every) - set(shown))}"
