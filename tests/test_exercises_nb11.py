"""Notebook 11's ordinary exercise check (save_fact): a right answer passes, each wrong one
fails with its hint, and no answer makes the check raise at the learner."""

from __future__ import annotations

import pytest
from check_support import expect_fail, expect_pass

from lesson_lib import exercises
from lesson_lib.exercises.nb11 import check_save_fact
from lesson_lib.longterm import MemoryPoisoningError


@pytest.fixture(autouse=True)
def fresh_hints():
    exercises._ASKED.clear()
    yield
    exercises._ASKED.clear()


def save_fact(memory, text, messages, subject=None):  # written apart from the solution
    try:
        return memory.remember_user_fact(text, messages, subject=subject) is not None
    except MemoryPoisoningError:
        return False


def trusts_everything(memory, text, messages, subject=None):
    memory.write(text, source="user", subject=subject)
    return True


def does_not_catch(memory, text, messages, subject=None):
    memory.remember_user_fact(text, messages, subject=subject)
    return True


def forgets_the_subject(memory, text, messages, subject=None):
    try:
        memory.remember_user_fact(text, messages)
    except MemoryPoisoningError:
        return False
    return True


def keeps_it_as_a_note(memory, text, messages, subject=None):
    try:
        memory.remember_user_fact(text, messages, subject=subject)
    except MemoryPoisoningError:
        memory.write(text, source="tool")
        return False
    return True


def returns_the_memory(memory, text, messages, subject=None):
    try:
        return memory.remember_user_fact(text, messages, subject=subject)
    except MemoryPoisoningError:
        return None


def test_the_solution_passes(capsys):
    expect_pass(check_save_fact, save_fact, capsys)


@pytest.mark.parametrize("wrong, finding, hint", [
    (trusts_everything, "what only a tool result said is refused", "went from 1 to 2"),
    (does_not_catch, "your code raised MemoryPoisoningError", "does_not_catch"),
    (forgets_the_subject, "a newer fact with the same subject replaces", "'The user is vegetarian', 'The user is vegan'"),
    (keeps_it_as_a_note, "what only a tool result said is refused", "went from 1 to 2"),
    (returns_the_memory, "what the user said is saved as a user fact", "returned Memory("),
])
def test_each_wrong_save_fact_fails_on_its_finding(wrong, finding, hint, capsys):
    expect_fail(check_save_fact, wrong, capsys, f"❌ {finding}", hint)


def test_not_written_yet(capsys):
    assert check_save_fact(...) is False
    assert "not done yet" in capsys.readouterr().out
