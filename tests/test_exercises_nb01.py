"""Notebook 01's exercise checks pass correct answers, fail wrong ones with the right hint,
and never raise at the learner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from check_support import in_both_languages, twin

from lesson_lib.exercises.nb01 import (
    STATEMENTS,
    check_answers,
    check_forget,
    check_my_messages,
)

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "01_the_stateless_model.ipynb"


def run(check, answer, capsys) -> tuple[bool, str]:
    """The verdict and report in English, after the Chinese edition gave the same verdict
    and the same findings in Chinese (each check has an English and a Chinese case; the
    Chinese edition runs its own first)."""
    runs = in_both_languages(check, twin(lambda: answer), capsys, in_order=False)
    zh_out = runs["zh"][1]
    cases = [line for line in zh_out.splitlines() if "中文：" in line or "英文：" in line]
    assert not cases or "中文：" in cases[0], f"the Chinese case comes first:\n{zh_out}"
    return runs["en"]


# ----------------------------------------------------------------- solutions (kept out of the notebook)

def solved_messages(turns, question):
    messages = []
    for user_text, assistant_text in turns:
        messages.append({"role": "user", "content": user_text})
        messages.append({"role": "assistant", "content": assistant_text})
    return messages + [{"role": "user", "content": question}]


SOLVED_ANSWERS = {key: truth for key, (_, truth, _) in STATEMENTS.items()}


def solved_forget(history, secret):
    kept = []
    for i in range(0, len(history), 2):
        turn = history[i:i + 2]
        if not any(secret in (m.get("content") or "") for m in turn):
            kept += turn
    return kept


# ----------------------------------------------------------------- exercise 1

def test_my_messages_check_passes_a_correct_answer(capsys):
    passed, out = run(check_my_messages, solved_messages, capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert "All checks passed." in out and "❌" not in out, out
    assert "You told me your name is Xiaoming." in out and "你刚才说你叫小明。" in out, out


def test_my_messages_check_accepts_a_leading_system_message(capsys):
    def with_system(turns, question):
        return [{"role": "system", "content": "You are helpful."}, *solved_messages(turns, question)]

    passed, out = run(check_my_messages, with_system, capsys)
    assert passed, f"a system message first should be allowed, got:\n{out}"


def test_my_messages_check_fails_the_forgetful_first_attempt(capsys):
    def only_the_question(turns, question):  # the committed stub: Xiaoming's bug
        return [{"role": "user", "content": question}]

    passed, out = run(check_my_messages, only_the_question, capsys)
    assert not passed, f"the forgetful stub should fail, got:\n{out}"
    assert "You haven't told me your name." in out, f"expected the model's forgetful reply:\n{out}"
    assert "oldest first" in out, f"expected the hint on building the list:\n{out}"


def test_my_messages_check_wants_the_assistant_replies(capsys):
    def user_lines_only(turns, question):
        return [{"role": "user", "content": u} for u, _ in turns] + [
            {"role": "user", "content": question}]

    passed, out = run(check_my_messages, user_lines_only, capsys)
    assert not passed, f"leaving out the replies should fail, got:\n{out}"
    assert "you left out the assistant's replies" in out, out


def test_my_messages_check_fails_the_wrong_order(capsys):
    def question_first(turns, question):
        return [{"role": "user", "content": question}, *solved_messages(turns, question)[:-1]]

    passed, out = run(check_my_messages, question_first, capsys)
    assert not passed, f"the question must come last, got:\n{out}"
    assert "every message is there, in the wrong order" in out, out


def test_my_messages_check_reports_an_invalid_list(capsys):
    def null_content(turns, question):
        return [{"role": "user", "content": None}]

    passed, out = run(check_my_messages, null_content, capsys)
    assert not passed and "expected a string, got null" in out, out


@pytest.mark.parametrize("answer", [None, ..., 42, "not callable"])
def test_my_messages_check_never_raises(answer, capsys):
    stub = answer if answer == "not callable" else (lambda turns, question, a=answer: a)
    passed, out = run(check_my_messages, stub, capsys)
    assert not passed and "❌" in out, f"expected a ❌ report, got:\n{out}"


def test_my_messages_check_reports_an_exception_in_the_learners_code(capsys):
    def broken(turns, question):
        return turns[5]

    passed, out = run(check_my_messages, broken, capsys)
    assert not passed and "your code raised IndexError" in out, out


# ----------------------------------------------------------------- exercise 2

def test_answers_check_passes_the_right_answers(capsys):
    passed, out = run(check_answers, dict(SOLVED_ANSWERS), capsys)
    assert passed and "All checks passed." in out, out


def test_answers_check_says_not_answered_yet_for_the_stub(capsys):
    passed, out = run(check_answers, dict.fromkeys(STATEMENTS, ...), capsys)
    assert not passed and "no answers yet" in out, out


@pytest.mark.parametrize("key", sorted(STATEMENTS))
def test_answers_check_explains_each_wrong_answer(key, capsys):
    answers = dict(SOLVED_ANSWERS)
    answers[key] = not answers[key]
    passed, out = run(check_answers, answers, capsys)
    assert not passed, f"a wrong answer to {key} should fail:\n{out}"
    assert f"hint: {STATEMENTS[key][2]}" in out, f"expected the explanation of {key}:\n{out}"
    wrong = [line for line in out.splitlines() if line.strip().startswith("❌")]
    assert len(wrong) == 1 and f"❌ {key}:" in wrong[0], f"only {key} should be marked wrong:\n{out}"


def test_answers_check_wants_booleans_and_every_key(capsys):
    answers = dict(SOLVED_ANSWERS)
    answers["A"] = "False"
    del answers["B"]
    passed, out = run(check_answers, answers, capsys)
    assert not passed and "A: answer True or False" in out and "B: not answered yet" in out, out


def test_answers_check_never_raises_on_a_non_dict(capsys):
    passed, out = run(check_answers, [True, False], capsys)
    assert not passed and "is a dict" in out, out


# ----------------------------------------------------------------- exercise 3

def test_forget_check_passes_a_correct_answer(capsys):
    passed, out = run(check_forget, solved_forget, capsys)
    assert passed and "All checks passed." in out, out


def test_forget_check_fails_dropping_only_the_users_message(capsys):
    def only_user(history, secret):  # the committed first attempt
        return [m for m in history if not (m["role"] == "user" and secret in m["content"])]

    passed, out = run(check_forget, only_user, capsys)
    assert not passed, out
    assert "a real model reads them too" in out, f"expected the hint about replies:\n{out}"


def test_forget_check_fails_a_version_that_changes_the_history(capsys):
    def in_place(history, secret):
        history[:] = solved_forget(history, secret)
        return history

    passed, out = run(check_forget, in_place, capsys)
    assert not passed and "build a new list" in out, out


def test_forget_check_fails_forgetting_everything(capsys):
    passed, out = run(check_forget, lambda history, secret: [{"role": "user", "content": "hi"}],
                      capsys)
    assert not passed and "the other turns are kept" in out, out


def test_forget_check_never_raises(capsys):
    passed, out = run(check_forget, lambda history, secret: None, capsys)
    assert not passed and "returns a list of message dicts" in out, out


# ----------------------------------------------------------------- the notebook

def test_notebook_lists_every_statement_of_exercise_2():
    if not NOTEBOOK.exists():
        pytest.skip("notebook 01 not built yet")
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for key, (text, _, _) in STATEMENTS.items():
        assert f"**{key}.** {text}" in markdown, f"statement {key} is missing from the notebook"
