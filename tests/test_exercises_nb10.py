"""Notebook 10's exercise checks: a right answer passes, each wrong one fails with its hint,
and no answer, however broken, makes a check raise at the learner. Hints come in steps: the
first says what happened, asking again teaches more.

The solutions live here (and in solutions/), not in the notebook."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_support import expect_fail, expect_pass, run, stub_source

from lesson_lib import exercises
from lesson_lib.exercises.nb10 import check_forget_user, check_open_chat

NOTEBOOK = (Path(__file__).resolve().parent.parent / "notebooks"
            / "10_conversations_that_survive_a_restart.ipynb")


@pytest.fixture(autouse=True)
def fresh_hints():
    exercises._ASKED.clear()
    yield
    exercises._ASKED.clear()

# ----------------------------------------------------------------- exercise 1: open_chat


def open_chat(store, user_id, title):  # the solution, written apart from the check
    for info in store.list_sessions(user_id):
        if info.title == title:
            return store.resume(info.session_id)
    return store.create_session(user_id, title=title).memory()


def always_new(store, user_id, title):
    return store.create_session(user_id, title=title).memory()


def any_users(store, user_id, title):  # looks in everybody's sessions
    for user in ("xiaoming", "laozhang"):
        for info in store.list_sessions(user):
            if info.title == title:
                return store.resume(info.session_id)
    return store.create_session(user_id, title=title).memory()


def found_but_new(store, user_id, title):  # finds it, then starts a new one anyway
    found = [i for i in store.list_sessions(user_id) if i.title == title]
    if found:
        return store.create_session(user_id, title=title + " ").memory()
    return store.create_session(user_id, title=title).memory()


def returns_session(store, user_id, title):  # a Session, not a memory
    return store.create_session(user_id, title=title)


def first_session(store, user_id, title):  # resumes the user's first session, whatever its title
    sessions = store.list_sessions(user_id)
    if sessions:
        return store.resume(sessions[0].session_id)
    return store.create_session(user_id, title=title).memory()


def test_the_solution_passes(capsys):
    expect_pass(check_open_chat, open_chat, capsys)


@pytest.mark.parametrize("wrong, finding, hint", [
    (always_new, "asking twice for 'trip' gives one session", "twice left 2 sessions"),
    (any_users, "Lao Zhang's 'trip' is his own", "a window with Xiaoming's messages"),
    (found_but_new, "the second open_chat resumes it", "a window without the messages"),
    (returns_session, "open_chat returns a StoredMemory", "returned a Session"),
    (first_session, "another title, 'work', starts a session", "resumed the 'trip' session"),
])
def test_each_wrong_open_chat_fails_on_its_finding(wrong, finding, hint, capsys):
    out = expect_fail(check_open_chat, wrong, capsys, f"❌ {finding}", hint)
    assert "store.resume(" not in out, f"the first hint gives the answer away:\n{out}"


def test_asking_again_gives_the_next_step(capsys):
    first = expect_fail(check_open_chat, always_new, capsys)
    second = expect_fail(check_open_chat, always_new, capsys)
    third = expect_fail(check_open_chat, always_new, capsys)
    assert "run the check again for a further hint" in first
    assert "store.list_sessions(user_id) lists a user's sessions" in second
    assert "create a session only when none has it" in third
    assert "further hint" not in third  # every step shown


def test_the_notebooks_first_attempt_shows_the_rules_not_the_answer(capsys):
    namespace: dict = {}
    exec(stub_source(NOTEBOOK, "open_chat"), namespace)  # noqa: S102  (our own notebook's stub)
    out = expect_fail(check_open_chat, namespace["open_chat"], capsys,
                      "asking twice for 'trip' gives one session")
    assert "store.resume(" not in out and "list_sessions" not in out, out


def test_an_unwritten_or_crashing_open_chat_is_reported_not_raised(capsys):
    passed, out = run(check_open_chat, ..., capsys)
    assert not passed and "not done yet" in out
    passed, out = run(check_open_chat, lambda store, user, title: 1 / 0, capsys)
    assert not passed and "your code raised ZeroDivisionError" in out


# ----------------------------------------------------------------- exercise 2: forget_user

def forget_user(store, user_id):  # the solution
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.delete_session(info.session_id)
    return len(sessions)


def forgets_one(store, user_id):
    store.delete_session(store.list_sessions(user_id)[0].session_id)
    return 3


def forgets_everyone(store, user_id):
    count = 0
    for user in ("xiaoming", "laozhang"):
        for info in store.list_sessions(user):
            store.delete_session(info.session_id)
            count += user == user_id
    return count


def clears_only(store, user_id):  # empties the logs, keeps the sessions
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.session(info.session_id).clear_session()
    return len(sessions)


def returns_nothing(store, user_id):
    forget_user(store, user_id)


def counts_what_is_left(store, user_id):  # counts after deleting: always 0
    for info in store.list_sessions(user_id):
        store.delete_session(info.session_id)
    return len(store.list_sessions(user_id))


def test_the_forget_solution_passes(capsys):
    expect_pass(check_forget_user, forget_user, capsys)


@pytest.mark.parametrize("wrong, finding, hint", [
    (forgets_one, "store.list_sessions('xiaoming') is empty afterwards", "2 of Xiaoming's 3 sessions"),
    (forgets_everyone, "Lao Zhang's session is untouched", "deleted or changed Lao Zhang's"),
    (clears_only, "store.list_sessions('xiaoming') is empty afterwards", "3 of Xiaoming's 3 sessions"),
    (returns_nothing, "it returns how many sessions it deleted", "returned None"),
    (counts_what_is_left, "it returns how many sessions it deleted", "returned 0"),
])
def test_each_wrong_forget_user_fails_on_its_finding(wrong, finding, hint, capsys):
    out = expect_fail(check_forget_user, wrong, capsys, f"❌ {finding}", hint)
    assert "store.delete_session(session_id) for each" not in out, out


def test_asking_again_says_how_to_forget(capsys):
    expect_fail(check_forget_user, clears_only, capsys)
    out = expect_fail(check_forget_user, clears_only, capsys)
    assert "clearing a session's messages keeps the session" in out


def test_an_unwritten_forget_user_is_not_done(capsys):
    passed, out = run(check_forget_user, ..., capsys)
    assert not passed and "not done yet" in out
