"""Notebook 10's exercise checks: a right answer passes, each wrong one fails with its hint,
and no answer, however broken, makes a check raise at the learner.

The solutions live here, not in the notebook."""

from __future__ import annotations

import pytest
from check_support import expect_fail, expect_pass, run

from lesson_lib.exercises.nb10 import check_forget_user, check_open_chat

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


def test_the_solution_passes(capsys):
    expect_pass(check_open_chat, open_chat, capsys)


@pytest.mark.parametrize("wrong, hint", [
    (always_new, "look for the title among store.list_sessions(user_id)"),
    (any_users, "list only this user's sessions"),
    (found_but_new, "resume that session instead"),
    (returns_session, "returns a StoredMemory (got Session)"),
])
def test_each_wrong_open_chat_gets_its_hint(wrong, hint, capsys):
    expect_fail(check_open_chat, wrong, capsys, hint)


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


def test_the_forget_solution_passes(capsys):
    expect_pass(check_forget_user, forget_user, capsys)


@pytest.mark.parametrize("wrong, hint", [
    (forgets_one, "delete every session in store.list_sessions(user_id)"),
    (forgets_everyone, "delete only the sessions of user_id"),
    (clears_only, "list_sessions('xiaoming') is empty afterwards"),
    (returns_nothing, "count the sessions you delete"),
])
def test_each_wrong_forget_user_gets_its_hint(wrong, hint, capsys):
    expect_fail(check_forget_user, wrong, capsys, hint)


def test_an_unwritten_forget_user_is_not_done(capsys):
    passed, out = run(check_forget_user, ..., capsys)
    assert not passed and "not done yet" in out
