"""The session store, the user profile and repair_messages() speak the learner's language
(lesson_lib.i18n): their errors (the rule, the place, the fix) and what they report come
out in Chinese when asked, and in English exactly as before. The API's own error texts
stay verbatim English in both."""

from __future__ import annotations

import sqlite3

import pytest
from messages import answer, asks, result, user

from lesson_lib.protocol import ProtocolError
from lesson_lib.repair import find_duplicate_ids, repair_messages
from lesson_lib.sessions import (
    NotAStoreError,
    SessionNotFoundError,
    SessionStore,
    StoreError,
    StoreUnavailableError,
    UnitError,
)

OPEN_CALL_API = ("An assistant message with 'tool_calls' must be followed by tool messages "
                 "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                 "response messages: call_half")
HALF = asks("call_half")
BROKEN = [user(), asks("call_a"), user("Hello?"), result("call_a"), result("call_x"),
          asks("call_b")]


@pytest.fixture
def store(tmp_path):
    with SessionStore(f"sqlite:///{tmp_path / 'sessions.db'}") as s:
        yield s


# ----------------------------------------------------------------- repair_messages

def test_a_repair_in_english_is_unchanged(speak):
    speak("en")
    assert str(repair_messages([user()])) == "repair_messages: nothing to repair"
    assert str(repair_messages(BROKEN)).splitlines() == [
        "repair_messages: 3 changes",
        "  message 3: tool result for call_a (stored late) was moved back after assistant "
        "message 1",
        "  message 4: tool result for call_x was dropped: no call next to it asked for it "
        "(an orphan)",
        "  message 5: call call_b never got a result: answered it with an 'interrupted' error"]
    dropped = repair_messages([user(), asks("call_b")], interrupted="drop")
    assert [str(c) for c in dropped.changes] == [
        "message 1: call call_b never got a result: removed it from the assistant message",
        "message 1: assistant message with no text and no calls left was dropped"]


def test_a_repair_in_chinese(speak):
    speak("zh")
    assert str(repair_messages([user()])) == "repair_messages：没有需要修复的地方"
    assert str(repair_messages(BROKEN)).splitlines() == [
        "repair_messages：改动 3 处",
        "  消息 3：call_a 的工具结果（存得太晚）已移回 assistant 消息 1 之后",
        "  消息 4：删掉了 call_x 的工具结果：它附近没有调用请求它（孤儿结果）",
        "  消息 5：调用 call_b 一直没有得到结果：已用一条 'interrupted' 错误回答它"]
    early = repair_messages([user(), result("call_a"), asks("call_a"), answer()])
    assert [str(c) for c in early.changes] == [
        "消息 1：call_a 的工具结果（存在了它的调用之前）已移回 assistant 消息 2 之后"]
    twice = repair_messages([asks("c", "c"), result("c"), result("c"), result("c")])
    assert [str(c) for c in twice.changes] == [
        "消息 0：第二个 id 为 c 的调用改名为 c~2（id 必须各不相同；它的结果也跟着改）",
        "消息 3：删掉了 c（assistant 消息 0）的第二条结果：以第一条为准"]
    empty = repair_messages([user(), {"role": "assistant", "content": "", "tool_calls": []}])
    assert [str(c) for c in empty.changes] == [
        "消息 1：删掉了它空的 tool_calls 列表",
        "消息 1：删掉了既没有文字、也不再有调用的 assistant 消息"]
    with pytest.raises(ValueError, match="interrupted 只能是 'answer' 或 'drop'，收到的是 'keep'"):
        repair_messages([user()], interrupted="keep")


def test_a_message_repair_cannot_fix_says_so_in_chinese_beside_the_api_text(speak):
    speak("zh")
    with pytest.raises(ProtocolError) as caught:
        repair_messages([user(), {"role": "user"}])
    error = caught.value
    assert error.message == "Invalid value for 'content': expected a string, got null."
    assert error.explanation.endswith("：repair_messages() 修复的是工具结果的位置，不是消息的形式；"
                                      "请先改好这一条")
    speak("en")
    with pytest.raises(ProtocolError) as caught:
        repair_messages([user(), {"role": "user"}])
    assert caught.value.explanation.endswith(
        ": repair_messages() fixes where tool results stand, not the shape of a message; fix "
        "this one first")


def test_duplicate_ids_are_explained_in_both_languages(speak):
    history = [user(), asks("c", "c"), result("c"), result("c")]
    speak("en")
    explained = [p.explanation for p in find_duplicate_ids(history)]
    assert explained == [
        "assistant message 1 has two calls with id c: give each call its own id "
        "(repair_messages() renames them apart)",
        "messages 2 and 3 both answer c: keep one result per call (repair_messages() keeps "
        "the first)"]
    speak("zh")
    problems = find_duplicate_ids(history)
    assert [p.explanation for p in problems] == [
        "assistant 消息 1 有两个 id 都是 c 的调用：给每个调用一个自己的 id（repair_messages() "
        "会把它们改成不同的名字）",
        "消息 2 和 3 都在回答 c：每个调用只保留一条结果（repair_messages() 保留第一条）"]
    assert problems[1].message.startswith("Invalid parameter: Duplicate value")  # the API's


# ----------------------------------------------------------------- the store's errors

def test_a_unit_that_leaves_a_call_open_in_english_is_unchanged(speak, store):
    speak("en")
    memory = store.create_session("xiaoming", session_id="s").memory()
    with pytest.raises(UnitError) as caught:
        memory.add_many([HALF])
    assert str(caught.value) == OPEN_CALL_API + (
        "\n  → in the unit being written, assistant message 0 asked for 1 tool call; call_half "
        "got no tool reply right after it: add one tool message per call before anything "
        "else, or drop the group; a unit must close every tool call it opens: write the "
        "assistant message and all its tool replies together, in one add_many([assistant, "
        "*replies]) (or add_items) — nothing was written")


def test_a_unit_that_leaves_a_call_open_in_chinese(speak, store):
    speak("zh")
    memory = store.create_session("xiaoming", session_id="s").memory()
    with pytest.raises(UnitError) as caught:
        memory.add_many([HALF])
    assert caught.value.message == OPEN_CALL_API  # the API's text, verbatim
    assert caught.value.explanation == (
        "在正要写入的单元里，assistant 消息 0 发起了 1 个工具调用；call_half 后面没有紧跟着的工具"
        "回复：先为每个调用补上一条 tool 消息，再接别的消息，或者整组删掉；一个单元必须让它发起的每个"
        "工具调用都有结果：把 assistant 消息和它的全部工具回复放在一次 add_many([assistant, "
        "*replies])（或 add_items）里一起写入——什么都没有写入")
    with pytest.raises(UnitError, match="单元里的消息 0 无法原样存成 JSON") as caught:
        memory.add_many([{"role": "user", "content": "hi", "when": {1, 2}}])
    assert caught.value.explanation.endswith("——什么都没有写入")
    assert store.count("s") == 0


def test_the_store_refuses_bad_input_in_chinese(speak, store, tmp_path):
    speak("zh")
    session = store.create_session("xiaoming", session_id="s")
    with pytest.raises(StoreError, match=r"里已经有 id 为 's' 的会话：用 store\.session\('s'\) "
                                         "恢复它，或者换一个 id"):
        store.create_session("xiaoming", session_id="s")
    with pytest.raises(SessionNotFoundError, match=r"里没有会话 'nope'：它从没在那里创建过"):
        store.session("nope")
    with pytest.raises(ValueError, match="user_id 必须是非空字符串，最多 200 个字符，收到的是 ''"):
        store.create_session("")
    with pytest.raises(ValueError, match="limit 是消息条数（0 或更多）或 None，收到的是 -1"):
        session.get_items(limit=-1)
    with pytest.raises(ValueError, match="interrupted 必须是 'answer'（给悬空的调用补一条"):
        store.load("s", interrupted="keep")
    session.add_items([user(), asks("call_a"), result("call_a")])
    with pytest.raises(UnitError) as caught:
        session.pop_item()
    assert caught.value.message == "pop_item() 会删掉一条工具回复，让它的调用没有结果"
    assert caught.value.explanation == (
        "会话 's' 的消息 2 是一条工具回复：单独删掉它，它所回答的调用就没有结果了；"
        "session.pop_unit() 会删掉整个最后一个单元（消息 0–2）——什么都没有删除")
    full = session.memory()
    with pytest.raises(ValueError, match="窗口必须是空的：StoredMemory 会从日志里把它填满（它现在有 "
                                         "3 条消息）"):
        session.memory(full.window)
    assert repr(full).startswith("StoredMemory(会话 's'：存了 3 条消息，发送 3 条；窗口：")


def test_a_database_the_store_cannot_use_is_explained_in_chinese(speak, tmp_path):
    speak("zh")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(NotAStoreError, match=r"不是会话存储：里面有别的表（invoices），却没有 "
                                             "lesson_store 表。里面什么都没有改动。"):
        SessionStore(f"sqlite:///{other}")
    with pytest.raises(StoreUnavailableError, match="不存在；请先创建它，或者换一个路径"):
        SessionStore(f"sqlite:///{tmp_path / 'missing' / 'x.db'}")
    with pytest.raises(StoreUnavailableError, match="是文件夹，不是文件；请指定一个文件"):
        SessionStore(f"sqlite:///{tmp_path}")
    with pytest.raises(StoreError, match="'nonsense' 不是数据库 URL：请写 sqlite:///"):
        SessionStore("nonsense")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database at all " * 200)
    with pytest.raises(NotAStoreError, match="不是 SQLite 数据库，或者已经损坏"):
        SessionStore(f"sqlite:///{garbage}")


# ----------------------------------------------------------------- what the store reports

def _break_behind_the_store(store, session_id):
    """Append an open call straight into the file, as code that bypasses the store would."""
    store.session(session_id).add_items([user()])
    path = store.where.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO messages (session_id, seq, unit, role, message) "
                   "VALUES (?, 1, 1, 'assistant', ?)",
                   (session_id, '{"role": "assistant", "content": null, "tool_calls": [{"id": '
                    '"call_half", "type": "function", "function": {"name": "w", "arguments": '
                    '"{}"}}]}'))


LISTING = {  # language -> what the store says: a title, the repair, its record, the lists
    "en": ("Chengdu trip",
           "message 1: call call_half never got a result: answered it with an 'interrupted' error",
           ("repaired at ", " UTC (interrupted='answer'): 1 change"),
           "trip: 'Chengdu trip', 3 messages, last used ",
           "bare: (untitled), 0 messages, last used "),
    "zh": ("成都之行",
           "消息 1：调用 call_half 一直没有得到结果：已用一条 'interrupted' 错误回答它",
           ("修复于 ", " UTC（interrupted='answer'）：改动 1 处"),
           "trip：'成都之行'，3 条消息，最近使用于 ",
           "bare：（无标题），0 条消息，最近使用于 "),
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_listing_and_repairs_in_each_language(speak, store, language):
    title, change, (record_starts, record_ends), listed, bare = LISTING[language]
    speak(language)
    store.create_session("xiaoming", title=title, session_id="trip")
    _break_behind_the_store(store, "trip")
    _, changes = store.load("trip")
    assert [str(c) for c in changes] == [change]
    record = str(store.repairs("trip")[-1]).splitlines()
    assert record[0].startswith(record_starts) and record[0].endswith(record_ends)
    assert record[1] == "  " + str(changes[0])
    info = str(store.list_sessions("xiaoming")[0])
    assert info.startswith(listed) and info.endswith(" UTC")
    store.create_session("xiaoming", session_id="bare")
    assert str(store.info("bare")).startswith(bare)


# ----------------------------------------------------------------- the profile

PROFILE = {  # language -> (two values and a source, their history lines, the prompt, refusal)
    "en": (("vegetarian", "vegan", "settings page"),
           ("vegetarian, set ", " UTC in session monday (settings page)", "vegan, set "),
           "What you know about this user: diet: vegan",
           r"a profile key is a short name such as 'diet'"),
    "zh": (("素食", "纯素", "设置页面"),
           ("素食，设于 ", " UTC，在会话 monday 中（设置页面）", "纯素，设于 "),
           "你对这位用户的了解：diet: 纯素",  # the model reads it: English
           r"用户资料的键是一个简短的名字，比如 'diet' 或 'units'（1 到 64 个字符，只占一行），收到的是 ''"),
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_profile_in_each_language(speak, store, language):
    (before, after, source), (first_starts, first_ends, second_starts), prompt, refusal = \
        PROFILE[language]
    speak(language)
    profile = store.profile("xiaoming")
    profile.set("diet", before, source=source, session_id="monday")
    profile.set("diet", after)
    first, second = (str(e) for e in profile.history("diet"))
    assert first.startswith(first_starts) and first.endswith(first_ends)
    assert second.startswith(second_starts) and second.endswith(" UTC")
    assert profile.as_prompt() == prompt
    with pytest.raises(ValueError, match=refusal):
        profile.set("", "x")


def test_the_profiles_value_errors_in_chinese(speak, store):
    speak("zh")
    profile = store.profile("xiaoming")
    with pytest.raises(ValueError, match=r"'diet' 的值必须是非空字符串、数字、布尔值，或由它们组成的"
                                         r"列表，收到的是 None（要删除一个键：forget\('diet'\)）"):
        profile.set("diet", None)
    with pytest.raises(ValueError, match="'units' 的值无法存成 JSON："):
        profile.set("units", float("nan"))
