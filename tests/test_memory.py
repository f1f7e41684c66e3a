"""ShortTermMemory keeps the message list valid however it is filled and trimmed;
NaiveMemory shows the orphan-tool pitfall notebook 04 teaches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from messages import SYSTEM, answer, asks, call, conversations, filled, result, roles, user

from lesson_lib.memory import NaiveMemory, SeedMemory, ShortTermMemory
from lesson_lib.protocol import ProtocolError, find_problems, is_valid, validate_messages

# ----------------------------------------------------------------- the seed's API

def test_add_and_to_api_format_keep_order():
    memory = filled(ShortTermMemory(), SYSTEM, user(), answer())
    got = memory.to_api_format()
    assert got == [SYSTEM, user(), answer()], f"expected the three messages in order, got {got}"
    assert memory.message_count() == len(memory) == 3


def test_add_system_appends_a_system_message():
    memory = ShortTermMemory()
    memory.add_system("你是一个智能助手")
    assert memory.to_api_format() == [{"role": "system", "content": "你是一个智能助手"}]


def test_clear_non_system_keeps_only_system_messages():
    memory = filled(ShortTermMemory(), SYSTEM, user("My name is Xiaoming"), answer("Hi!"),
                    {"role": "system", "content": "Answer briefly."}, user(), asks("call_a"),
                    result("call_a"), answer())
    memory.clear_non_system()
    got = memory.to_api_format()
    assert got == [SYSTEM, {"role": "system", "content": "Answer briefly."}], (
        f"expected only the two system messages, got {got}")
    memory.add(user("What's my name?"))  # the memory works normally afterwards
    assert roles(memory) == ["system", "system", "user"]


def test_clear_non_system_ends_an_open_tool_round():
    memory = filled(ShortTermMemory(), SYSTEM, user(), asks("call_a", "call_b"))
    memory.clear_non_system()
    assert memory.pending_calls() == [], "a cleared memory should wait for no tool reply"
    memory.add(user("hello"))
    validate_messages(memory.to_api_format())


def test_to_api_format_is_a_copy_of_the_list():
    memory = filled(ShortTermMemory(), SYSTEM, user())
    got = memory.to_api_format()
    got.append(answer())
    got.clear()
    assert memory.message_count() == 2, "changing the returned list changed the memory"


def test_to_api_format_is_a_copy_of_each_message():
    memory = filled(ShortTermMemory(), SYSTEM, user(), asks("call_a"), result("call_a"))
    got = memory.to_api_format()
    got[1]["content"] = "changed"
    got[2]["tool_calls"][0]["function"]["arguments"] = "{}"
    again = memory.to_api_format()
    assert again[1]["content"] == "What's the weather in Chengdu?", (
        f"editing a returned message changed the memory: {again[1]}")
    assert again[2]["tool_calls"][0]["function"]["arguments"] == '{"location": "Chengdu"}'


def test_add_stores_a_copy_of_the_message():
    message = user()
    memory = filled(ShortTermMemory(), message)
    message["content"] = "changed after add"
    assert memory.to_api_format()[0]["content"] == "What's the weather in Chengdu?"


def test_repr_says_size_roles_and_drops():
    memory = filled(ShortTermMemory(max_messages=3), SYSTEM, user(), answer(), user("again"))
    text = repr(memory)
    assert text.startswith("ShortTermMemory(max_messages=3): 3 messages"), text
    assert "system, assistant, user" in text and "1 dropped so far" in text, text
    memory.add(asks("call_a"))
    assert "waiting for call_a" in repr(memory), repr(memory)


@pytest.mark.parametrize("bad", [0, -1, 2.5, "40"])
def test_max_messages_must_be_a_positive_whole_number(bad):
    with pytest.raises(ValueError, match="max_messages"):
        ShortTermMemory(max_messages=bad)


# ----------------------------------------------------------------- the seed's trim rule

def test_trim_drops_the_oldest_non_system_message_first():
    memory = filled(ShortTermMemory(max_messages=3), SYSTEM, user("one"), answer("1"),
                    user("two"))
    assert memory.to_api_format() == [SYSTEM, answer("1"), user("two")]
    assert memory.last_dropped == [user("one")], f"got {memory.last_dropped}"


def test_trim_never_drops_system_messages_even_mid_history():
    memory = filled(ShortTermMemory(max_messages=3), SYSTEM, user("one"),
                    {"role": "system", "content": "Answer briefly."}, answer("1"), user("two"))
    got = roles(memory)
    assert got == ["system", "system", "user"], f"expected both systems kept, got {got}"


def test_trim_swallows_the_tool_replies_of_a_dropped_tool_call():
    # the source article's example: dropping the assistant(tool_calls) takes its replies along
    memory = filled(ShortTermMemory(max_messages=4), SYSTEM, user(), asks("call_a", "call_b"),
                    result("call_a"), result("call_b"), answer())
    got = memory.to_api_format()
    assert got == [SYSTEM, answer()], f"got {got}"
    assert memory.last_dropped == [asks("call_a", "call_b"), result("call_a"), result("call_b")]
    assert memory.dropped_count == 4  # the first user message, then the round of three
    validate_messages(got)


def test_trim_never_leaves_orphan_tool_message():
    memory = filled(ShortTermMemory(max_messages=4), SYSTEM, user(), asks("call_a"),
                    result("call_a"), answer(), user("上海呢？"))
    problems = find_problems(memory.to_api_format())
    assert problems == [], f"expected a valid list, got {[p.message for p in problems]}"


def test_last_dropped_is_only_the_most_recent_adds_trim():
    memory = filled(ShortTermMemory(max_messages=2), user("one"), answer("1"), user("two"))
    assert memory.last_dropped == [user("one")]
    memory.clear_non_system()
    assert memory.last_dropped == []
    memory.add(user("three"))
    assert memory.last_dropped == [], f"nothing was trimmed, got {memory.last_dropped}"


# ----------------------------------------------------------------- the two guards

PARALLEL_ROUND = [asks("call_a", "call_b"), result("call_a"), result("call_b")]


def test_seed_rule_alone_orphans_a_parallel_result_added_one_at_a_time():
    # why guard 1 exists: the trim after the first result drops the assistant message,
    # and the second result then arrives with nothing to answer
    memory = filled(SeedMemory(max_messages=1), *PARALLEL_ROUND)
    got = memory.to_api_format()
    assert got == [result("call_b")], f"expected the orphan the seed's rule leaves, got {got}"
    assert not is_valid(got)


def test_open_tool_round_is_not_trimmed_until_its_last_result():
    memory = filled(ShortTermMemory(max_messages=2), SYSTEM, user(), *PARALLEL_ROUND[:2])
    assert memory.message_count() == 4 and memory.pending_calls() == ["call_b"], repr(memory)
    assert memory.last_dropped == [], "nothing may be trimmed while call_b is due"
    memory.add(result("call_b"))
    got = memory.to_api_format()
    validate_messages(got)
    assert [m["role"] for m in got] == ["system", "assistant", "tool", "tool"], (
        f"expected the user message trimmed and the finished round kept, got {got}")


@pytest.mark.parametrize("max_messages", [1, 2, 3, 4])
def test_parallel_results_added_one_at_a_time_never_orphan(max_messages):
    memory = ShortTermMemory(max_messages=max_messages)
    filled(memory, user(), *PARALLEL_ROUND, answer(), user("上海呢？"),
           asks("call_c", "call_d", "call_e"), result("call_e"), result("call_c"),
           result("call_d"))
    validate_messages(memory.to_api_format())


def test_newest_message_is_never_dropped():
    # guard 2: the question just asked must reach the model, even with a tiny max
    memory = filled(ShortTermMemory(max_messages=1), SYSTEM, user())
    assert memory.to_api_format() == [SYSTEM, user()], (
        "expected the system message and the question kept (over max: documented), "
        f"got {memory.to_api_format()}")


def test_newest_tool_round_is_kept_whole_when_it_alone_exceeds_max():
    memory = filled(ShortTermMemory(max_messages=2), SYSTEM, user(), *PARALLEL_ROUND)
    got = memory.to_api_format()
    assert got == [SYSTEM, *PARALLEL_ROUND], f"expected the finished round kept, got {got}"
    memory.add(answer())
    assert memory.to_api_format() == [SYSTEM, answer()]


def test_add_many_adds_a_round_then_trims_once():
    memory = filled(ShortTermMemory(max_messages=3), SYSTEM, user())
    memory.add_many([*PARALLEL_ROUND, answer()])
    assert memory.to_api_format() == [SYSTEM, answer()], memory.to_api_format()
    assert memory.last_dropped == [user(), *PARALLEL_ROUND], memory.last_dropped


def test_add_many_is_all_or_nothing():
    memory = filled(ShortTermMemory(), SYSTEM, user())
    before = memory.to_api_format()
    with pytest.raises(ProtocolError, match="call_z"):
        memory.add_many([asks("call_a"), result("call_a"), result("call_z")])
    assert memory.to_api_format() == before, "a refused add_many must leave the memory as it was"


# ----------------------------------------------------------------- what add() refuses

def refused(memory, message) -> ProtocolError:
    before = memory.to_api_format()
    with pytest.raises(ProtocolError) as info:
        memory.add(message)
    assert memory.to_api_format() == before, "a refused message changed the memory"
    assert "nothing was added" in str(info.value), str(info.value)
    return info.value


def test_add_refuses_an_unknown_role():
    error = refused(filled(ShortTermMemory(), SYSTEM), {"role": "bot", "content": "hi"})
    assert "Invalid value: 'bot'" in error.message and "message 1" in str(error), str(error)


def test_add_refuses_a_user_message_without_content():
    error = refused(ShortTermMemory(), {"role": "user", "content": None})
    assert error.param == "messages.[0].content", error.param


def test_add_refuses_a_dict_as_tool_content():
    error = refused(filled(ShortTermMemory(), asks("call_a")),
                    {"role": "tool", "tool_call_id": "call_a", "content": {"temp": 16}})
    assert "json.dumps" in str(error), str(error)


def test_add_refuses_a_tool_message_without_tool_call_id():
    error = refused(filled(ShortTermMemory(), asks("call_a")), {"role": "tool", "content": "x"})
    assert "tool_call_id" in error.message, error.message


def test_add_refuses_arguments_that_are_not_a_json_string():
    bad = asks("call_a")
    bad["tool_calls"][0]["function"]["arguments"] = {"location": "成都"}
    error = refused(ShortTermMemory(), bad)
    assert "arguments must be a JSON string" in str(error), str(error)


def test_add_refuses_a_single_call_dict_as_tool_calls():
    bad = {"role": "assistant", "content": None, "tool_calls": call("call_a")}
    error = refused(ShortTermMemory(), bad)
    assert "must be a list" in str(error), str(error)


def test_add_refuses_something_that_is_not_a_dict():
    class Reply:  # looks like the SDK's ChatCompletionMessage
        role, content = "assistant", "hi"

    error = refused(ShortTermMemory(), Reply())
    assert "assistant_to_dict" in str(error), str(error)


def test_add_refuses_an_orphan_tool_message():
    error = refused(filled(ShortTermMemory(), SYSTEM, user()), result("call_a"))
    assert "must be a response to a preceeding message" in error.message, error.message
    assert error.index == 2 and "answers no open call" in str(error), str(error)


def test_add_refuses_a_reply_to_an_unknown_or_answered_call():
    memory = filled(ShortTermMemory(), user(), asks("call_a", "call_b"), result("call_a"))
    for wrong in ("call_x", "call_a"):
        error = refused(memory, result(wrong))
        assert f"'{wrong}' not found" in error.message and "call_b" in str(error), str(error)


def test_add_refuses_a_message_that_interrupts_an_open_round():
    memory = filled(ShortTermMemory(), SYSTEM, user(), asks("call_a", "call_b"),
                    result("call_a"))
    error = refused(memory, user("上海呢？"))
    assert error.message.endswith("did not have response messages: call_b"), error.message
    assert "assistant message 2 still waits for call_b" in str(error), str(error)


def test_add_accepts_an_assistant_tool_call_before_its_results():
    memory = filled(ShortTermMemory(), SYSTEM, user(), asks("call_a"))
    assert memory.pending_calls() == ["call_a"]


# ----------------------------------------------------------------- NaiveMemory, the pitfall

def test_naive_trim_leaves_an_orphan_tool_message():
    memory = filled(NaiveMemory(max_messages=4), SYSTEM, user(), asks("call_a"),
                    result("call_a"), answer(), user("上海呢？"))
    got = memory.to_api_format()
    assert [m["role"] for m in got] == ["system", "tool", "assistant", "user"], got
    with pytest.raises(ProtocolError, match="must be a response to a preceeding") as info:
        validate_messages(got)
    assert info.value.index == 1, f"expected the orphan at index 1, got {info.value.index}"


def test_short_term_memory_keeps_the_same_history_valid():
    memory = filled(ShortTermMemory(max_messages=4), SYSTEM, user(), asks("call_a"),
                    result("call_a"), answer(), user("上海呢？"))
    assert roles(memory) == ["system", "assistant", "user"]
    validate_messages(memory.to_api_format())


# ----------------------------------------------------------------- the invariant, at random

TEXTS = st.sampled_from(["hi", "My name is Xiaoming", "成都天气？", "上海呢？", "", "ok"])


CONVERSATIONS = conversations(TEXTS)


def is_subsequence(part, whole):
    it = iter(whole)
    return all(any(m == w for w in it) for m in part)


def check_invariant(memory, added, newest):
    got = memory.to_api_format()
    pending = memory.pending_calls()
    complete = got + [result(i) for i in pending]
    problems = find_problems(complete)
    assert problems == [], (f"expected a valid list (pending {pending}), got "
                            f"{[p.message for p in problems]} for {got}")
    systems = [m for m in added if m["role"] == "system"]
    assert [m for m in got if m["role"] == "system"] == systems, "a system message was lost"
    assert is_subsequence(got, added) and got[-1] == added[-1], "order broken or newest dropped"
    assert len(got) + memory.dropped_count == len(added), "dropped_count does not add up"
    if len(got) > memory.max_messages and not pending:
        rest = [m for m in got if m["role"] != "system"]
        expected = newest if newest[0]["role"] != "system" else []
        assert rest == expected, (f"over max_messages={memory.max_messages} only the systems "
                                  f"and the newest unit may stay; got {got}")


@settings(max_examples=300, deadline=None)
@given(CONVERSATIONS, st.one_of(st.integers(1, 8), st.just(40)))
def test_memory_stays_valid_adding_one_message_at_a_time(units, max_messages):
    memory, added = ShortTermMemory(max_messages=max_messages), []
    for unit in units:
        for k, message in enumerate(unit):
            memory.add(message)
            added.append(message)
            check_invariant(memory, added, unit[:k + 1])
    assert memory.pending_calls() == []


@settings(max_examples=200, deadline=None)
@given(CONVERSATIONS, st.integers(1, 8))
def test_memory_stays_valid_adding_whole_units(units, max_messages):
    memory, added = ShortTermMemory(max_messages=max_messages), []
    for unit in units:
        memory.add_many(unit)
        added.extend(unit)
        assert memory.pending_calls() == []
        check_invariant(memory, added, unit)
