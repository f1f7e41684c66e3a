"""TokenBudgetMemory keeps every request valid and under its token budget: whole units
dropped oldest first, system messages and the current turn kept, huge tool results cut
with a marker, a clear error (memory unchanged) when nothing can fit, an optional
model-written summary, and adds whose cost does not grow with the history."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from messages import SYSTEM, answer, asks, conversations, filled, result, roles, user

import lesson_lib.budget as budget_module
from lesson_lib.budget import (
    MessageBudgetMemory,
    OverBudgetError,
    TokenBudgetMemory,
    model_summarizer,
    truncate_text,
)
from lesson_lib.llm import chat
from lesson_lib.memory import ShortTermMemory
from lesson_lib.protocol import ProtocolError, find_problems
from lesson_lib.tokens import count_message, count_request, count_text, count_tools
from lesson_lib.tools import get_tools_schema

CHINESE = {"role": "system", "content": "From now on, answer in Chinese."}
GUIDE = " ".join(f"Day {d}: walk from Chunxi Road to the Wenshu Monastery." for d in range(400))


def state(memory):
    return (memory.to_api_format(), memory.token_count(), memory.message_count(),
            memory.pending_calls(), memory.summary, memory.dropped_count)


NAME_TURN = [user("My name is Xiaoming."), answer("Nice to meet you, Xiaoming!")]
WEATHER_TURN = [user(), asks("call_a", "call_b"), result("call_a"), result("call_b"), answer()]


# ----------------------------------------------------------------- ShortTermMemory's API

def test_api_mirrors_short_term_memory():
    mirrored = ("add", "add_many", "add_system", "to_api_format", "clear_non_system",
                "message_count", "pending_calls", "last_dropped", "dropped_count")
    memory = TokenBudgetMemory(1000)
    missing = [name for name in mirrored if not hasattr(memory, name)]
    assert missing == [], f"expected ShortTermMemory's API, missing {missing}"
    assert all(hasattr(ShortTermMemory(), name) for name in mirrored)


def test_under_budget_it_keeps_everything_in_order():
    messages = [SYSTEM, *NAME_TURN, *WEATHER_TURN]
    memory = filled(TokenBudgetMemory(4000), *messages)
    assert memory.to_api_format() == messages, "expected nothing dropped under the budget"
    assert len(memory) == memory.message_count() == len(messages)
    assert memory.dropped_count == 0 and memory.last_dropped == []


def test_token_count_is_the_requests_count_with_tools():
    tools = get_tools_schema()
    memory = filled(TokenBudgetMemory(4000, tools=tools), SYSTEM, *NAME_TURN, *WEATHER_TURN)
    got, expected = memory.token_count(), count_request(memory.to_api_format(), tools)
    assert got == expected, f"expected token_count() == count_request() = {expected}, got {got}"
    assert memory.token_counts() == [count_message(m) for m in memory.to_api_format()]
    assert memory.overhead == 3 + count_tools(tools)


def test_to_api_format_is_a_copy():
    memory = filled(TokenBudgetMemory(1000), SYSTEM, user())
    memory.to_api_format()[1]["content"] = "changed"
    assert memory.to_api_format()[1]["content"] == user()["content"]


def test_add_system_and_clear_non_system():
    memory = TokenBudgetMemory(1000)
    memory.add_system("You are a helpful assistant.")
    filled(memory, *NAME_TURN, CHINESE, *WEATHER_TURN)
    memory.clear_non_system()
    assert memory.to_api_format() == [SYSTEM, CHINESE], "expected only the system messages"
    assert memory.token_count() == count_request([SYSTEM, CHINESE])
    memory.add(user("What's my name?"))
    assert roles(memory) == ["system", "system", "user"]


def test_wrong_order_is_refused_and_memory_unchanged():
    memory = filled(TokenBudgetMemory(1000), SYSTEM, user(), asks("call_a", "call_b"),
                    result("call_a"))
    before = state(memory)
    with pytest.raises(ProtocolError, match="did not have response messages: call_b"):
        memory.add(answer())
    with pytest.raises(ProtocolError, match="'call_x' not found"):
        memory.add(result("call_x"))
    assert state(memory) == before, "a refused message must leave the memory as it was"
    memory.add(result("call_b"))
    assert memory.pending_calls() == []


def test_orphan_tool_message_is_refused():
    memory = filled(TokenBudgetMemory(1000), SYSTEM, user())
    with pytest.raises(ProtocolError, match="preceeding message with 'tool_calls'") as info:
        memory.add(result("call_a"))
    assert "nothing was added to the memory" in info.value.explanation


def test_add_many_is_all_or_nothing():
    memory = filled(TokenBudgetMemory(1000), SYSTEM, user())
    before = state(memory)
    with pytest.raises(ProtocolError):
        memory.add_many([asks("call_a"), result("call_a"), result("call_a")])
    assert state(memory) == before


def test_budget_must_leave_room_for_messages():
    with pytest.raises(ValueError, match="above 3"):
        TokenBudgetMemory(3)
    tools = get_tools_schema()
    with pytest.raises(ValueError, match=f"above {3 + count_tools(tools)}"):
        TokenBudgetMemory(3 + count_tools(tools), tools=tools)
    with pytest.raises(ValueError, match="'unit' or 'turn'"):
        TokenBudgetMemory(100, drop="message")


def test_repr_says_budget_use_and_waiting_calls():
    memory = filled(TokenBudgetMemory(1000), SYSTEM, user(), asks("call_a"))
    text = repr(memory)
    assert "budget=1,000 tokens" in text and "waiting for call_a" in text, text


# ----------------------------------------------------------------- what is dropped

def budget_for(messages, slack=0):
    return count_request(messages) + slack


LAST = user("What is my name? And please remind me what the weather in Chengdu was.")


def test_parallel_group_is_dropped_whole_oldest_first():
    memory = TokenBudgetMemory(budget_for([SYSTEM, answer(), LAST]))
    memory.add_many([SYSTEM, *WEATHER_TURN, LAST])  # one trim, at the end
    assert memory.to_api_format() == [SYSTEM, answer(), LAST], f"got {roles(memory)}"
    assert memory.last_dropped == WEATHER_TURN[:4], "expected the question and the whole group"
    assert find_problems(memory.to_api_format()) == []


def test_turn_mode_drops_whole_turns():
    memory = TokenBudgetMemory(budget_for([SYSTEM, answer(), LAST]), drop="turn")
    memory.add_many([SYSTEM, *WEATHER_TURN, LAST])
    assert memory.to_api_format() == [SYSTEM, LAST], (
        f"turn mode should drop the turn's answer too, got {roles(memory)}")


def test_adding_one_at_a_time_trims_as_messages_come():
    memory = filled(TokenBudgetMemory(budget_for([SYSTEM, *WEATHER_TURN])), SYSTEM,
                    *WEATHER_TURN, LAST)
    assert memory.to_api_format() == [SYSTEM, answer(), LAST], f"got {roles(memory)}"


def test_system_message_in_the_middle_stays_and_moves_up():
    memory = TokenBudgetMemory(budget_for([SYSTEM, CHINESE, LAST], 2))
    memory.add_many([SYSTEM, *NAME_TURN, CHINESE, *WEATHER_TURN, LAST])
    assert memory.to_api_format() == [SYSTEM, CHINESE, LAST], f"got {memory.to_api_format()}"


def test_keep_system_false_lets_old_system_messages_go():
    memory = TokenBudgetMemory(budget_for([LAST], 2), keep_system=False)
    memory.add_many([SYSTEM, *NAME_TURN, CHINESE, LAST])
    assert memory.to_api_format() == [LAST]


def test_current_turn_is_never_dropped_even_with_three_rounds():
    turn = [user("Chengdu, then Shanghai, then Tokyo, one at a time.")]
    for cid in ("call_1", "call_2", "call_3"):
        turn += [asks(cid), result(cid)]
    memory = TokenBudgetMemory(budget_for([SYSTEM, *turn], 1))
    filled(memory, SYSTEM, *NAME_TURN, *turn)
    assert memory.to_api_format() == [SYSTEM, *turn], f"got {roles(memory)}"


def test_open_tool_round_is_not_trimmed_until_its_last_result():
    earlier = [*NAME_TURN, user("Hi!"), answer("Hello! How can I help you today?")]
    turn = [user(), asks("call_a", "call_b"), result("call_a"), result("call_b")]
    memory = filled(TokenBudgetMemory(budget_for([SYSTEM, *turn])), SYSTEM, *earlier,
                    *turn[:3])
    assert memory.token_count() > memory.budget and memory.pending_calls() == ["call_b"], (
        "guard 1: no trim while calls are pending")
    memory.add(turn[3])
    assert memory.to_api_format() == [SYSTEM, *turn]
    assert find_problems(memory.to_api_format()) == []


# ----------------------------------------------------------------- cutting and refusing

def test_truncate_text_marks_what_it_cut_and_fits():
    text = "x" * 13_000
    cut = truncate_text(text, 100)
    got = re.search(r"\[truncated ([\d,]+) of ([\d,]+) characters\]$", cut)
    assert got and got.group(2) == "13,000", f"expected the marker at the end, got {cut[-60:]!r}"
    kept = len(cut) - len(got.group(0)) - 1
    assert int(got.group(1).replace(",", "")) == 13_000 - kept
    assert count_text(cut) <= 100
    assert truncate_text("short", 100) == "short"
    assert truncate_text(text, 1).startswith("[truncated 13,000 of 13,000")


def test_huge_tool_result_in_current_turn_is_cut_not_dropped():
    memory = TokenBudgetMemory(300)
    filled(memory, SYSTEM, *NAME_TURN, user("Read me the guide."), asks("call_g"),
           result("call_g", GUIDE))
    got = memory.to_api_format()
    assert roles(memory) == ["system", "user", "assistant", "tool"], f"got {roles(memory)}"
    assert re.search(r"\[truncated [\d,]+ of [\d,]+ characters\]$", got[-1]["content"])
    assert got[-1]["content"].startswith(GUIDE[:200])
    assert memory.token_count() <= 300 and memory.last_truncated == ["call_g"]
    assert find_problems(got) == []


def test_largest_result_is_cut_first():
    small = '{"location": "Chengdu", "temperature": 16}'
    memory = TokenBudgetMemory(400)
    filled(memory, SYSTEM, user(), asks("call_s", "call_g"), result("call_s", small),
           result("call_g", GUIDE))
    got = memory.to_api_format()
    assert got[3]["content"] == small and "[truncated" in got[4]["content"]


def test_huge_tool_result_in_old_turn_is_dropped_with_its_call():
    memory = TokenBudgetMemory(200)
    memory.add_many([SYSTEM, user("Read me the guide."), asks("call_g"),
                     result("call_g", GUIDE), answer("Here it is."), user("What is my name?")])
    assert roles(memory) == ["system", "assistant", "user"], f"got {roles(memory)}"


def test_a_result_cut_while_current_stays_cut_later():
    memory = filled(TokenBudgetMemory(200), SYSTEM, user("Read me the guide."), asks("call_g"),
                    result("call_g", GUIDE), answer("Here it is."), user("What is my name?"))
    got = memory.to_api_format()
    assert roles(memory) == ["system", "assistant", "tool", "assistant", "user"], (
        f"only the old question had to go, got {roles(memory)}")
    assert "[truncated" in got[2]["content"] and find_problems(got) == []


def test_impossible_add_raises_by_how_much_and_changes_nothing():
    memory = filled(TokenBudgetMemory(100), SYSTEM, *NAME_TURN)
    before = state(memory)
    huge = user("Please read this: " + GUIDE)
    with pytest.raises(OverBudgetError) as info:
        memory.add(huge)
    needed = count_request([SYSTEM, huge])
    assert info.value.needed == needed and info.value.over == needed - 100, (
        f"expected {needed} needed, got {info.value.needed}")
    assert f"over budget by {needed - 100:,} tokens" in str(info.value)
    assert isinstance(info.value, ValueError)
    assert state(memory) == before, "a refused add must leave the memory as it was"
    memory.add(user("What is my name?"))  # the memory still works
    assert memory.token_count() <= 100


def test_impossible_add_many_changes_nothing():
    memory = filled(TokenBudgetMemory(120), SYSTEM, *NAME_TURN)
    before = state(memory)
    with pytest.raises(OverBudgetError):
        memory.add_many([user("x " * 500), answer()])
    assert state(memory) == before


def test_result_that_cannot_fit_is_refused_and_round_stays_open():
    opening = [SYSTEM, user(), asks("call_a")]
    short = result("call_a", "ok")
    room = count_message(short) + 1  # the short result fits; the marker alone does not
    assert count_message(result("call_a", truncate_text(GUIDE, 0))) > room
    memory = filled(TokenBudgetMemory(count_request(opening) + room), *opening)
    with pytest.raises(OverBudgetError, match="over budget by"):
        memory.add(result("call_a", GUIDE))
    assert memory.pending_calls() == ["call_a"], "the refused result must not close the round"
    memory.add(short)
    assert memory.pending_calls() == [] and memory.token_count() <= memory.budget


# ----------------------------------------------------------------- summaries

def fake_summarizer(calls):
    def summarize(messages):
        calls.append(messages)
        return f"Summary so far: the user's name is Xiaoming ({len(messages)} messages)."
    return summarize


def test_dropped_messages_become_one_summary_after_the_leading_systems():
    calls = []
    last = user("What is my name?")
    memory = TokenBudgetMemory(budget_for([SYSTEM, SYSTEM, last], 30), drop="turn",
                               summarizer=fake_summarizer(calls))
    memory.add_many([SYSTEM, *NAME_TURN, *WEATHER_TURN, last])
    got = memory.to_api_format()
    assert [m["role"] for m in got] == ["system", "system", "user"], f"got {got}"
    assert got[1]["content"] == memory.summary and "Xiaoming" in memory.summary
    assert sum(m["role"] == "system" and m["content"].startswith("Summary") for m in got) == 1
    assert memory.token_count() <= memory.budget and find_problems(got) == []


def test_previous_summary_is_folded_into_the_next():
    calls = []
    memory = TokenBudgetMemory(70, summarizer=fake_summarizer(calls))
    filled(memory, SYSTEM, *NAME_TURN, user("Hi"), answer("Hello"), user("Thanks"),
           answer("You're welcome"), user("What is my name?"), answer("Xiaoming."),
           user("Bye"))
    assert len(calls) >= 2, "expected several trims, each summarising"
    folded = calls[-1][0]
    assert folded["role"] == "system" and folded["content"].startswith("Summary so far"), (
        f"the previous summary should come first, got {folded}")
    assert sum(m["content"].startswith("Summary") for m in memory.to_api_format()
               if m["role"] == "system") == 1


def test_summary_gives_way_before_the_current_turn():
    memory = TokenBudgetMemory(140, summarizer=lambda messages: "Summary: " + "blah " * 200)
    filled(memory, SYSTEM, *NAME_TURN, user("Read me the guide."), asks("call_g"),
           result("call_g", GUIDE))
    got = memory.to_api_format()
    assert memory.token_count() <= 140
    assert got[-1]["tool_call_id"] == "call_g" and find_problems(got) == []


def test_failing_summarizer_leaves_memory_unchanged():
    def broken(messages):
        raise RuntimeError("the model is down")
    memory = TokenBudgetMemory(60, summarizer=broken)
    filled(memory, SYSTEM, user("Hi"))
    before = state(memory)
    with pytest.raises(RuntimeError, match="down"):
        memory.add_many([answer("Hello! " * 30), user("Weather?")])
    assert state(memory) == before


def test_offline_model_summary_keeps_the_name_after_its_turn_is_dropped():
    memory = TokenBudgetMemory(110, summarizer=model_summarizer(), drop="turn")
    filled(memory, SYSTEM, *NAME_TURN, user("What's the weather in Chengdu?"), asks("call_c"),
           result("call_c"), answer(), user("Thanks!"), answer("You're welcome!"),
           user("What is my name?"))
    got = memory.to_api_format()
    assert all("Xiaoming" not in m["content"] for m in got if m["role"] != "system"), (
        "the name turn should have been dropped for this test to mean anything")
    assert "Xiaoming" in (memory.summary or ""), f"summary: {memory.summary!r}"
    reply = chat(got).content
    assert "Xiaoming" in reply, f"the model should read the name from the summary, got {reply!r}"


def test_model_summarizer_accepts_any_chat_function():
    seen = []

    def fake_chat(messages):
        seen.append(messages)
        return {"role": "assistant", "content": "Summary: nothing much."}
    summarize = model_summarizer(fake_chat, request="Summarise, please.")
    assert summarize([user("Hi")]) == "Summary: nothing much."
    assert seen[0][-1] == {"role": "user", "content": "Summarise, please."}


# ----------------------------------------------------------------- message budget

def test_message_budget_memory_counts_messages_and_keeps_the_current_turn():
    turn = [user("Chengdu, then Shanghai."), asks("call_1"), result("call_1"), asks("call_2"),
            result("call_2")]
    memory = filled(MessageBudgetMemory(3), SYSTEM, *NAME_TURN, *turn)
    assert memory.to_api_format() == [SYSTEM, *turn], "over the limit, the floor stays"
    memory.add(answer("Both cloudy."))
    memory.add(user("Thanks"))
    assert memory.to_api_format() == [SYSTEM, answer("Both cloudy."), user("Thanks")]
    assert memory.max_messages == 3 and memory.token_count() == count_request(
        memory.to_api_format())


# ----------------------------------------------------------------- cost of an add

def test_each_message_is_counted_once_however_long_the_history(monkeypatch):
    counted = []

    def counting(message):
        counted.append(message)
        return count_message(message)
    monkeypatch.setattr(budget_module, "count_message", counting)
    memory = TokenBudgetMemory(300)
    n = 0
    for k in range(300):
        filled(memory, user(f"Question {k}"), asks(f"call_{k}"), result(f"call_{k}"),
               answer(f"Answer {k}"))
        n += 4
    assert len(counted) == n, (f"expected each of the {n} messages counted once, got "
                               f"{len(counted)} counts: an add must not rescan the history")
    assert memory.dropped_count > 1000 and memory.token_count() <= 300


# ----------------------------------------------------------------- the invariant, at random

TEXTS = st.sampled_from(["hi", "My name is Xiaoming.", "成都天气？", "上海呢？", "ok",
                         "What's the weather in Chengdu and Shanghai today?"])
RESULTS = st.sampled_from(["ok", '{"location": "Chengdu", "temperature": 16}', "",
                           "word " * 300, GUIDE])


CONVERSATIONS = conversations(TEXTS, RESULTS, kinds=("user", "user", "assistant", "system", "round"),
                              max_size=20)


def is_kept(kept, original):
    """Equal, or a tool result cut with the marker."""
    return kept == original or (
        kept["role"] == original["role"] == "tool"
        and kept["tool_call_id"] == original["tool_call_id"]
        and re.search(r"\[truncated [\d,]+ of [\d,]+ characters\]$", kept["content"]))


def is_subsequence(part, whole):
    rest = iter(whole)
    return all(any(is_kept(p, w) for w in rest) for p in part)


def check_invariant(memory, added, summarizing):
    got = memory.to_api_format()
    assert memory.token_count() == count_request(got, memory.tools), "running total drifted"
    assert memory.token_counts() == [count_message(m) for m in got], "per-message costs drifted"
    assert memory.message_count() == len(got)
    if memory.pending_calls():
        return
    assert find_problems(got) == [], f"invalid: {find_problems(got)[0]}"
    assert memory.token_count() <= memory.budget, "over budget without an error"
    rest = list(got)
    if memory.summary is not None:
        assert summarizing, "a summary appeared without a summarizer"
        rest.remove({"role": "system", "content": memory.summary})
    systems = [m for m in added if m["role"] == "system"]
    assert [m for m in rest if m["role"] == "system"] == systems, "a system message was lost"
    assert is_subsequence(rest, added), "order changed or a message was invented"
    last = max((i for i, m in enumerate(added) if m["role"] == "user"), default=None)
    if last is not None:
        turn = added[last:]
        assert len(rest) >= len(turn) and all(map(is_kept, rest[-len(turn):], turn)), (
            "the current turn (latest user message and after) must be kept")


def feed(memory, units, one_at_a_time, summarizing=False):
    added = []
    for unit in units:
        pieces = [[m] for m in unit] if one_at_a_time else [unit]
        for piece in pieces:
            before = state(memory)
            try:
                memory.add_many(piece)
            except OverBudgetError as error:
                assert state(memory) == before, "refused, yet the memory changed"
                assert error.over > 0 and error.needed == memory.budget + error.over
                memory.clear_non_system()
                added = [m for m in added if m["role"] == "system"]
                break
            added += piece
            check_invariant(memory, added, summarizing)


@settings(max_examples=150, deadline=None)
@given(CONVERSATIONS, st.integers(30, 700), st.sampled_from(["unit", "turn"]),
       st.booleans())
def test_memory_stays_valid_and_under_budget(units, budget, drop, one_at_a_time):
    feed(TokenBudgetMemory(budget, drop=drop), units, one_at_a_time)


@settings(max_examples=100, deadline=None)
@given(CONVERSATIONS, st.integers(60, 700), st.sampled_from(["unit", "turn"]))
def test_memory_with_a_summary_stays_valid_and_under_budget(units, budget, drop):
    calls = []
    memory = TokenBudgetMemory(budget, drop=drop, summarizer=fake_summarizer(calls))
    feed(memory, units, one_at_a_time=True, summarizing=True)


@settings(max_examples=60, deadline=None)
@given(CONVERSATIONS, st.integers(230, 900))
def test_memory_with_tools_counts_them(units, budget):
    feed(TokenBudgetMemory(budget, tools=get_tools_schema()), units, one_at_a_time=False)


@settings(max_examples=120, deadline=None)
@given(CONVERSATIONS, st.integers(1, 8), st.sampled_from(["unit", "turn"]))
def test_message_budget_memory_stays_valid_and_keeps_the_floor(units, max_messages, drop):
    memory, added = MessageBudgetMemory(max_messages, drop=drop), []
    for message in (m for unit in units for m in unit):
        memory.add(message)
        added.append(message)
        if memory.pending_calls():
            continue
        got = memory.to_api_format()
        assert find_problems(got) == [], f"invalid: {find_problems(got)[0]}"
        systems = [m for m in added if m["role"] == "system"]
        assert [m for m in got if m["role"] == "system"] == systems, "a system message was lost"
        last = max((i for i, m in enumerate(added) if m["role"] == "user"), default=None)
        if last is None:  # no question yet: the newest unit (a message or a tool round)
            last = len(added) - 1
            while added[last]["role"] == "tool":
                last -= 1
        turn, before = added[last:], [m for m in added[:last] if m["role"] == "system"]
        assert got[-len(turn):] == turn, "the current turn must be kept"
        assert len(got) <= max_messages or got == before + turn, (
            f"over max_messages={max_messages}, only the floor may stay; got {got}")


def test_an_impossible_budget_names_the_unit_and_only_the_costs_that_exist():
    with pytest.raises(ValueError) as messages:
        MessageBudgetMemory(0)
    assert str(messages.value) == "the budget must be a whole number of messages above 0, got 0"
    with pytest.raises(ValueError, match=r"tokens above 3 \(what the reply priming and the "
                                         r"tools cost\), got 'x'"):
        TokenBudgetMemory("x")
