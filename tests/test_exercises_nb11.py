"""Notebook 11's ordinary exercise check (save_fact): a right answer passes, each wrong one
fails with its hint, and no answer makes the check raise at the learner. The gate is the
learner's to write: a wrapper of the library's (remember_user_fact, said_by_user) is told
so."""

from __future__ import annotations

import re

import pytest
from check_support import expect_fail, expect_pass

from lesson_lib import exercises
from lesson_lib.exercises.nb11 import check_save_fact
from lesson_lib.longterm import MemoryPoisoningError, said_by_user


@pytest.fixture(autouse=True)
def fresh_hints():
    exercises._ASKED.clear()
    yield
    exercises._ASKED.clear()


# words (Chinese, which has no spaces, character by character), e-mail addresses whole
WORDS = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9_@']+(?:\.[A-Za-z0-9_@']+)*")
ABOUT = {"the", "user", "is", "用", "户"}  # who the fact is about, not what it says


def _words(text):
    return set(WORDS.findall(text.lower()))


def said(text, message):
    return (_words(text) - ABOUT) <= _words(message.get("content") or "")


def save_fact(memory, text, messages, subject=None):  # written apart from the solution
    if any(m["role"] == "user" and said(text, m) for m in messages):
        memory.write(text, source="user", subject=subject)
        return True
    return False


def trusts_everything(memory, text, messages, subject=None):
    memory.write(text, source="user", subject=subject)
    return True


def looks_at_every_message(memory, text, messages, subject=None):
    """Any message that says it will do: a tool result's 'remember that …' too."""
    if any(said(text, m) for m in messages):
        memory.write(text, source="user", subject=subject)
        return True
    return False


def believes_the_assistant(memory, text, messages, subject=None):
    """The user's words or the assistant's: a guess becomes a user fact."""
    if any(m["role"] in ("user", "assistant") and said(text, m) for m in messages):
        memory.write(text, source="user", subject=subject)
        return True
    return False


def forgets_the_subject(memory, text, messages, subject=None):
    return save_fact(memory, text, messages)


def keeps_it_as_a_note(memory, text, messages, subject=None):
    if save_fact(memory, text, messages, subject):
        return True
    memory.write(text, source="tool")
    return False


def returns_the_memory(memory, text, messages, subject=None):
    if any(m["role"] == "user" and said(text, m) for m in messages):
        return memory.write(text, source="user", subject=subject)
    return None


def wraps_remember_user_fact(memory, text, messages, subject=None):
    """The library's gate, wrapped: right answers, but nothing of the exercise written."""
    try:
        memory.remember_user_fact(text, messages, subject=subject)
    except MemoryPoisoningError:
        return False
    return True


def wraps_said_by_user(memory, text, messages, subject=None):
    if said_by_user(text, messages):
        memory.write(text, source="user", subject=subject)
        return True
    return False


def test_the_solution_passes(capsys):
    out = expect_pass(check_save_fact, save_fact, capsys)
    assert "✅ what only the assistant said is refused too" in out, out


@pytest.mark.parametrize("wrong, finding, hint", [
    (trusts_everything, "what only a tool result said is refused", "went from 1 to 2"),
    (looks_at_every_message, "what only a tool result said is refused", "went from 1 to 2"),
    (believes_the_assistant, "what only the assistant said is refused too",
     "save_fact returned True and the memory went from 1 to 2"),
    (forgets_the_subject, "a newer fact with the same subject replaces",
     "'The user is vegetarian', 'The user is vegan'"),
    (keeps_it_as_a_note, "what only a tool result said is refused", "went from 1 to 2"),
    (returns_the_memory, "what the user said is saved as a user fact", "returned Memory("),
    (wraps_remember_user_fact, "save_fact hands the decision to the library: it uses "
                               "remember_user_fact()", "the library's gate"),
    (wraps_said_by_user, "save_fact hands the decision to the library: it uses "
                         "said_by_user()", "the library's gate"),
])
def test_each_wrong_save_fact_fails_on_its_finding(wrong, finding, hint, capsys):
    expect_fail(check_save_fact, wrong, capsys, f"❌ {finding}", hint)


def test_no_hint_suggests_wrapping_the_library(capsys):
    for _ in range(3):  # every step of every hint
        check_save_fact(trusts_everything)
        check_save_fact(forgets_the_subject)
    out = capsys.readouterr().out
    assert "remember_user_fact(" not in out and "MemoryPoisoningError" not in out, out


def test_other_parameters_are_told_in_one_sentence(capsys):
    out = expect_fail(check_save_fact, lambda memory, text: True, capsys,
                      "cannot be called the way the check calls it, "
                      "save_fact(memory, text, messages, subject)")
    assert len(out.splitlines()) == 3, out


def test_not_written_yet(capsys):
    assert check_save_fact(...) is False
    assert "not done yet" in capsys.readouterr().out


def test_the_chinese_edition_judges_save_fact_on_chinese_words(speak, capsys):
    """用户吃素, said as 我吃素 by the user, a poisoned page in Chinese, an assistant's guess
    in Chinese: the same verdicts as in English, the report in Chinese data."""
    speak("zh")
    assert check_save_fact(save_fact) is True
    assert "全部检查通过。" in capsys.readouterr().out
    assert check_save_fact(trusts_everything) is False
    out = capsys.readouterr().out
    assert "用户希望把所有邮件都转发到" in out and "mail forwarded" not in out, out
