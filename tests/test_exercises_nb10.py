"""Notebook 10's exercise checks: a right answer passes, each wrong one fails with its hint,
and no answer, however broken, makes a check raise at the learner. Hints come in steps: the
first says what happened, asking again teaches more.

The solutions live here (and in solutions/), not in the notebook."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from check_support import expect_fail, expect_pass, run, stub_source

from lesson_lib import exercises
from lesson_lib.exercises import show_details
from lesson_lib.exercises.nb10 import check_forget_user, check_open_chat
from lesson_lib.forgetting import forget_user as library_forget_user
from lesson_lib.longterm import LongTermMemory

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


@pytest.mark.parametrize("wrong", [always_new, any_users, found_but_new, returns_session,
                                   first_session])
def test_each_wrong_open_chat_gets_the_same_verdict_in_chinese(wrong, speak, capsys):
    """The Chinese edition stores 我叫小明 (not the English turn) and judges it by the same
    rules: the solution passes, each wrong version fails on the same finding."""
    from lesson_lib.exercises import nb10

    speak("zh")
    assert nb10.NAME == {"role": "user", "content": "我叫小明"}
    assert check_open_chat(open_chat) is True
    assert "全部检查通过。" in capsys.readouterr().out
    assert check_open_chat(wrong) is False
    out = capsys.readouterr().out
    assert "❌" in out and "My name is" not in out, out


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
#
# The check's store holds sessions, a profile (one key changed once) and long-term memories
# for two users; the check reads the file afterwards. Two right answers, written apart from
# the check and from each other, pass; each wrong one a learner really writes fails on the
# finding that names its mistake, in English and in Chinese.

def forget_user(store, user_id):  # the solution: each layer's own call
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.delete_session(info.session_id)
    profile = store.profile(user_id)
    values = sum(profile.forget(key) for key in profile.as_dict())
    memories = LongTermMemory(store, user_id).clear()
    return {"sessions": len(sessions), "profile values": values, "memories": memories}


def one_by_one(store, user_id):  # another, written apart: each thing deleted by itself
    removed = {"sessions": 0, "messages": 0, "profile values": 0, "memories": 0}
    for info in list(store.list_sessions(user_id)):
        removed["messages"] += store.session(info.session_id).delete()
        removed["sessions"] += 1
    profile = store.profile(user_id)
    for key in list(profile.as_dict()):
        removed["profile values"] += len(profile.history(key))
        profile.forget(key)
    memory = LongTermMemory(store, user_id)
    for item in memory.all():
        removed["memories"] += memory.delete(item.id)
    return removed


def sessions_only(store, user_id):  # the old exercise's answer: the session log alone
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.delete_session(info.session_id)
    return {"sessions": len(sessions), "profile values": 0, "memories": 0}


def _sessions_and_memories(store, user_id):
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.delete_session(info.session_id)
    return len(sessions), LongTermMemory(store, user_id).clear()


def overwrites_the_profile(store, user_id):  # "forgets" each value by writing over it
    n, memories = _sessions_and_memories(store, user_id)
    profile = store.profile(user_id)
    keys = list(profile.as_dict())
    for key in keys:
        profile.set(key, "(forgotten)")
    return {"sessions": n, "profile values": len(keys), "memories": memories}


def current_values_only(store, user_id):  # deletes the values as_dict() shows, in SQL
    n, memories = _sessions_and_memories(store, user_id)
    current = store.profile(user_id).as_dict()
    with closing(sqlite3.connect(store._url.database)) as db, db:
        for key, value in current.items():
            db.execute("DELETE FROM profile_facts WHERE user_id = ? AND key = ? AND value = ?",
                       (user_id, key, json.dumps(value, ensure_ascii=False)))
    return {"sessions": n, "profile values": len(current), "memories": memories}


def memories_by_keyword(store, user_id):  # forgets the memories that name the user
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.delete_session(info.session_id)
    profile = store.profile(user_id)
    values = sum(profile.forget(key) for key in profile.as_dict())
    memory = LongTermMemory(store, user_id)
    gone = memory.forget(user_id) + memory.forget("Chengdu") + memory.forget("成都")
    return {"sessions": len(sessions), "profile values": values, "memories": len(gone)}


def memories_of_its_sessions(store, user_id):  # what was filed under a session, only
    sessions = store.list_sessions(user_id)
    ids = {info.session_id for info in sessions}
    for info in sessions:
        store.delete_session(info.session_id)
    profile = store.profile(user_id)
    values = sum(profile.forget(key) for key in profile.as_dict())
    memory = LongTermMemory(store, user_id)
    gone = sum(memory.delete(m.id) for m in memory.all() if m.ref in ids)
    return {"sessions": len(sessions), "profile values": values, "memories": gone}


def user_facts_only(store, user_id):  # the user's facts, not the sessions' summaries
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.delete_session(info.session_id)
    profile = store.profile(user_id)
    values = sum(profile.forget(key) for key in profile.as_dict())
    memory = LongTermMemory(store, user_id)
    gone = sum(memory.delete(m.id) for m in memory.user_facts())
    return {"sessions": len(sessions), "profile values": values, "memories": gone}


def forgets_everyone(store, user_id):  # loops over every user it knows
    for user in ("xiaoming", "laozhang"):
        result = forget_user(store, user)
        if user == user_id:
            mine = result
    return mine


def counts_keys(store, user_id):  # counts profile keys, not the values deleted
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.delete_session(info.session_id)
    profile = store.profile(user_id)
    keys = list(profile.as_dict())
    for key in keys:
        profile.forget(key)
    memories = LongTermMemory(store, user_id).clear()
    return {"sessions": len(sessions), "profile values": len(keys), "memories": memories}


def counts_what_is_left(store, user_id):  # lists the sessions after deleting them: 0
    result = forget_user(store, user_id)
    return {**result, "sessions": len(store.list_sessions(user_id))}


def clears_messages(store, user_id):  # empties each log, keeps the sessions
    sessions = store.list_sessions(user_id)
    for info in sessions:
        store.session(info.session_id).clear_session()
    profile = store.profile(user_id)
    values = sum(profile.forget(key) for key in profile.as_dict())
    memories = LongTermMemory(store, user_id).clear()
    return {"sessions": len(sessions), "profile values": values, "memories": memories}


def first_session_only(store, user_id):
    store.delete_session(store.list_sessions(user_id)[0].session_id)
    profile = store.profile(user_id)
    values = sum(profile.forget(key) for key in profile.as_dict())
    return {"sessions": 3, "profile values": values,
            "memories": LongTermMemory(store, user_id).clear()}


def raw_sql(store, user_id):  # every row, deleted through a connection of its own
    with closing(sqlite3.connect(store._url.database)) as db, db:
        ids = [i for (i,) in db.execute("SELECT id FROM sessions WHERE user_id = ?", (user_id,))]
        for session_id in ids:
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        db.execute("DELETE FROM sessions WHERE user_id = ?", (user_id,))
        values = db.execute("DELETE FROM profile_facts WHERE user_id = ?", (user_id,)).rowcount
        memory_ids = [i for (i,) in db.execute("SELECT id FROM memories WHERE user_id = ?",
                                                (user_id,))]
        for memory_id in memory_ids:
            db.execute("DELETE FROM memories_fts WHERE rowid = ?", (memory_id,))
        db.execute("DELETE FROM memories WHERE user_id = ?", (user_id,))
    return {"sessions": len(ids), "profile values": values, "memories": len(memory_ids)}


def returns_the_session_count(store, user_id):  # the old exercise's return value
    return forget_user(store, user_id)["sessions"]


def test_the_forget_solutions_pass(capsys):
    expect_pass(check_forget_user, forget_user, capsys)
    expect_pass(check_forget_user, one_by_one, capsys)


def test_the_forget_solutions_pass_in_chinese(speak, capsys):
    speak("zh")
    out = expect_pass(check_forget_user, forget_user, capsys)
    assert "全部检查通过" in out
    expect_pass(check_forget_user, one_by_one, capsys)


WRONG_FORGETS = [
    (sessions_only, "the profile: no value of Xiaoming's", "still holds Xiaoming's profile"),
    (sessions_only, "long-term memory: none of Xiaoming's", "3 of Xiaoming's 3 long-term"),
    (overwrites_the_profile, "the profile: no value of Xiaoming's", "old values of Xiaoming's profile"),
    (current_values_only, "the profile: no value of Xiaoming's",
     "old values of Xiaoming's profile: diet: 'vegetarian'"),
    (memories_by_keyword, "long-term memory: none of Xiaoming's",
     "2 of Xiaoming's 3 long-term memories: the summary of the session 'Hotpot places'"),
    (memories_of_its_sessions, "long-term memory: none of Xiaoming's",
     "1 of Xiaoming's 3 long-term memories: a memory filed under no session"),
    (user_facts_only, "long-term memory: none of Xiaoming's",
     "1 of Xiaoming's 3 long-term memories: the summary of the session 'Hotpot places'"),
    (forgets_everyone, "Lao Zhang's sessions, profile and memories are untouched",
     "changed Lao Zhang's sessions, messages, profile, long-term memories"),
    (counts_keys, "it returns what went, per layer", "'profile values': 3"),
    (counts_what_is_left, "it returns what went, per layer", "'sessions': 0"),
    (clears_messages, "the session log: none of Xiaoming's sessions",
     "3 sessions are still listed, with no messages"),
    (first_session_only, "the session log: none of Xiaoming's sessions",
     "2 of Xiaoming's 3 sessions are still in the file"),
    (raw_sql, "the files (the database, its WAL) hold none of Xiaoming's words",
     "the rows are gone, but the files still hold"),
    (returns_the_session_count, "it returns what went, per layer", "forget_user returned 3"),
]


@pytest.mark.parametrize("wrong, finding, hint", WRONG_FORGETS,
                         ids=[f"{w.__name__}-{i}" for i, (w, _f, _h) in enumerate(WRONG_FORGETS)])
def test_each_wrong_forget_user_fails_on_its_finding(wrong, finding, hint, capsys):
    show_details()
    try:
        out = expect_fail(check_forget_user, wrong, capsys, f"❌ {finding}", hint)
    finally:
        show_details(False)
    assert "LongTermMemory(store, user_id)" not in out, f"the first hint gives it away:\n{out}"


WRONG_IN_CHINESE = [
    (sessions_only, "用户资料", "小明的用户资料"),
    (current_values_only, "用户资料", "'素食'"),
    (memories_by_keyword, "长期记忆", "会话 '火锅店' 的摘要"),
    (memories_of_its_sessions, "长期记忆", "不属于任何会话的记忆：'喜欢靠走道的座位'"),
    (forgets_everyone, "老张", "老张的"),
    (counts_keys, "按层", "'profile values': 3"),
    (clears_messages, "会话日志", "没有消息"),
    (raw_sql, "文件", "'成都之行'"),
]


@pytest.mark.parametrize("wrong, finding, hint", WRONG_IN_CHINESE,
                         ids=[w.__name__ for w, _f, _h in WRONG_IN_CHINESE])
def test_each_wrong_forget_user_fails_in_chinese_with_chinese_data(wrong, finding, hint, speak,
                                                                   capsys):
    speak("zh")
    show_details()
    try:
        out = expect_fail(check_forget_user, wrong, capsys, finding, hint)
    finally:
        show_details(False)
    assert "Xiaoming" not in out and "Chengdu" not in out, out


def test_asking_again_names_the_layer_and_its_call(capsys):
    first = expect_fail(check_forget_user, sessions_only, capsys)
    second = expect_fail(check_forget_user, sessions_only, capsys)
    third = expect_fail(check_forget_user, sessions_only, capsys)
    assert "run the check again for a further hint" in first
    assert "the profile is a layer of its own" in second
    assert "long-term memory is a layer of its own" in second
    assert ".forget(key) deletes a key with every value it ever had" in third
    assert ".clear() deletes every memory of the user" in third


def test_the_librarys_forget_user_is_not_the_learners(capsys):
    """Handing in lesson_lib.forgetting.forget_user forgets every layer, but the exercise asks
    for the learner's own: the check says so, not a long repr of the report."""
    out = expect_fail(check_forget_user, library_forget_user, capsys,
                      "❌ it returns what went, per layer",
                      "returned the library's report (ForgetReport)")
    assert "✅ the session log" in out and "✅ long-term memory" in out
    assert "Proof for" not in out, out


def test_the_check_reads_the_file_not_the_store(capsys):
    """A forget_user that hides the rows from the store (a store whose list_sessions and
    profile say nothing) but leaves them in the file fails all the same."""
    def hides(store, user_id):
        store.list_sessions = lambda user: []
        store.profile(user_id).as_dict = lambda: {}
        return {"sessions": 3, "profile values": 4, "memories": 3}

    out = expect_fail(check_forget_user, hides, capsys,
                      "❌ the session log", "3 of Xiaoming's 3 sessions are still in the file")
    assert "❌ the profile" in out and "❌ long-term memory" in out


def test_an_unwritten_forget_user_is_not_done(capsys):
    passed, out = run(check_forget_user, ..., capsys)
    assert not passed and "not done yet" in out
    passed, out = run(check_forget_user, lambda store, user_id: 1 / 0, capsys)
    assert not passed and "your code raised ZeroDivisionError" in out
