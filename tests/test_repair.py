"""repair_messages() turns a broken history into one the API accepts, pairs calls and
results by position (never by a global id lookup), reports every change, and never
changes its input; find_duplicate_ids() catches the duplicate-id rule."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from messages import SYSTEM, answer, asks, result, user

from lesson_lib.protocol import ProtocolError, find_problems
from lesson_lib.repair import (
    ANSWERED,
    CALL_DROPPED,
    DUPLICATE,
    EMPTY_CALLS,
    EMPTY_DROPPED,
    INTERRUPTED,
    MOVED,
    ORPHAN,
    RENAMED,
    Repaired,
    find_duplicate_ids,
    repair_messages,
)


def interrupted(cid):
    return {"role": "tool", "tool_call_id": cid, "content": INTERRUPTED}


def strictly_valid(messages):
    """Valid for the API (an empty list only says there is nothing left to send)."""
    problems = (find_problems(messages) if messages else []) + find_duplicate_ids(messages)
    return not problems or pytest.fail(f"expected a valid list, got {problems[0]} in {messages}")


def repaired(messages, **options):
    """Repair, check the result is valid and the input untouched; return (fixed, kinds)."""
    before = copy.deepcopy(messages)
    fixed, changes = repair_messages(messages, **options)
    assert messages == before, "repair_messages changed its input"
    strictly_valid(fixed)
    return fixed, [c.kind for c in changes]


# ----------------------------------------------------------------- nothing to repair

def test_valid_history_comes_back_equal_with_no_changes():
    history = [SYSTEM, user(), asks("call_a", "call_b"), result("call_b"), result("call_a"),
               answer(), user("Thanks!")]
    fixed, kinds = repaired(history)
    assert fixed == history and kinds == [], f"expected no change, got {kinds}"
    assert fixed[0] is not history[0], "the repaired list must hold new dicts"


def test_returns_a_named_pair_that_prints_its_changes():
    got = repair_messages([result("call_x"), user()])
    assert isinstance(got, Repaired)
    fixed, changes = got
    assert fixed == [user()] and got.messages is fixed and got.changes is changes
    assert "1 change\n" in str(got) + "\n" and "message 0: tool result for call_x" in str(got)
    assert str(repair_messages([user()])) == "repair_messages: nothing to repair"


# ----------------------------------------------------------------- each repair

def test_orphan_tool_message_is_dropped():
    fixed, kinds = repaired([result("call_x"), answer(), user("Thanks!")])
    assert fixed == [answer(), user("Thanks!")] and kinds == [ORPHAN]


def test_results_stored_before_their_call_are_moved_back():
    history = [SYSTEM, user(), result("call_a"), result("call_b"), asks("call_a", "call_b"),
               answer()]
    fixed, kinds = repaired(history)
    assert fixed == [SYSTEM, user(), asks("call_a", "call_b"), result("call_a"),
                     result("call_b"), answer()], f"got {fixed}"
    assert kinds == [MOVED, MOVED]
    assert "stored before its call" in str(repair_messages(history).changes[0])


def test_result_stored_after_the_next_question_is_moved_back():
    history = [user(), asks("call_a"), user("Also the time?"), result("call_a")]
    fixed, kinds = repaired(history)
    assert fixed == [user(), asks("call_a"), result("call_a"), user("Also the time?")]
    assert kinds == [MOVED]
    assert "stored late" in str(repair_messages(history).changes[0])


def test_interrupted_call_is_answered_explicitly():
    history = [user(), asks("call_a", "call_b"), result("call_a"), user("Hello?")]
    fixed, kinds = repaired(history)
    assert fixed == [user(), asks("call_a", "call_b"), result("call_a"), interrupted("call_b"),
                     user("Hello?")]
    assert kinds == [ANSWERED]
    assert "interrupted" in json.loads(INTERRUPTED)["error"]


def test_interrupted_call_at_the_end_is_answered_too():
    fixed, kinds = repaired([user(), asks("call_a")])
    assert fixed[-1] == interrupted("call_a") and kinds == [ANSWERED]


def test_interrupted_calls_can_be_dropped_instead():
    history = [user(), asks("call_a", "call_b"), result("call_a"), user("Hello?")]
    fixed, kinds = repaired(history, interrupted="drop")
    assert fixed == [user(), asks("call_a"), result("call_a"), user("Hello?")]
    assert kinds == [CALL_DROPPED]


def test_dropping_every_call_drops_an_empty_assistant_but_keeps_its_text():
    fixed, kinds = repaired([user(), asks("call_a"), user("Hello?")], interrupted="drop")
    assert fixed == [user(), user("Hello?")] and kinds == [CALL_DROPPED, EMPTY_DROPPED]
    with_text = asks("call_a", content="Let me check.")
    fixed, _ = repaired([user(), with_text, user("Hello?")], interrupted="drop")
    assert fixed == [user(), answer("Let me check."), user("Hello?")]


def test_second_result_for_the_same_call_is_dropped():
    history = [user(), asks("call_a"), result("call_a", "first"), result("call_a", "second"),
               answer()]
    fixed, kinds = repaired(history)
    assert fixed == [user(), asks("call_a"), result("call_a", "first"), answer()]
    assert kinds == [DUPLICATE]


def test_two_calls_sharing_an_id_are_renamed_apart_with_their_results():
    history = [user(), asks("call_0", "call_0"), result("call_0", "Shanghai 22"),
               result("call_0", "Beijing 18"), answer()]
    fixed, kinds = repaired(history)
    assert [c["id"] for c in fixed[1]["tool_calls"]] == ["call_0", "call_0~2"]
    assert [(m["tool_call_id"], m["content"]) for m in fixed[2:4]] == [
        ("call_0", "Shanghai 22"), ("call_0~2", "Beijing 18")]
    assert kinds == [RENAMED]


def test_renamed_id_does_not_clash_with_another_call():
    fixed, _ = repaired([user(), asks("c", "c", "c~2"), result("c"), result("c"),
                         result("c~2")])
    ids = [c["id"] for c in fixed[1]["tool_calls"]]
    assert len(set(ids)) == 3, f"expected three different ids, got {ids}"


def test_empty_tool_calls_list_is_removed():
    history = [user("Hi"), {**answer("Hello!"), "tool_calls": []}, user("Bye")]
    fixed, kinds = repaired(history)
    assert fixed == [user("Hi"), answer("Hello!"), user("Bye")] and kinds == [EMPTY_CALLS]
    fixed, kinds = repaired([user("Hi"), {"role": "assistant", "content": None,
                                          "tool_calls": []}])
    assert fixed == [user("Hi")] and kinds == [EMPTY_CALLS, EMPTY_DROPPED]


def test_pairing_is_by_position_when_ids_repeat_across_turns():
    turn1 = [user(), asks("call_0"), result("call_0", "Chengdu 16"), answer()]
    turn2 = [user("And Shanghai?"), asks("call_0"), result("call_0", "Shanghai 22")]
    fixed, kinds = repaired([*turn1, *turn2])
    assert fixed == [*turn1, *turn2] and kinds == [], "reused ids are fine when in place"
    # turn 1's call lost its result: it must not take turn 2's result
    broken = [user(), asks("call_0"), answer(), *turn2]
    fixed, kinds = repaired(broken)
    assert fixed == [user(), asks("call_0"), interrupted("call_0"), answer(), *turn2], (
        f"each call keeps the result stored next to it, got {fixed}")
    assert kinds == [ANSWERED]


def test_stray_prefers_the_group_before_it():
    history = [user(), asks("call_0"), user("Hm?"), result("call_0", "late"), asks("call_0"),
               result("call_0", "second")]
    fixed, kinds = repaired(history)
    assert fixed == [user(), asks("call_0"), result("call_0", "late"), user("Hm?"),
                     asks("call_0"), result("call_0", "second")]
    assert kinds == [MOVED]


def test_stray_that_matches_no_neighbouring_call_is_an_orphan():
    history = [user(), asks("call_a"), result("call_a"), result("call_zz"), answer()]
    fixed, kinds = repaired(history)
    assert fixed == [user(), asks("call_a"), result("call_a"), answer()] and kinds == [ORPHAN]


def test_a_message_of_the_wrong_shape_is_refused_not_guessed():
    with pytest.raises(ProtocolError, match="content") as info:
        repair_messages([user(), {"role": "user", "content": None}])
    assert "repair_messages() fixes where tool results stand" in info.value.explanation
    with pytest.raises(ValueError, match="'answer' or 'drop'"):
        repair_messages([user()], interrupted="ignore")


# ----------------------------------------------------------------- find_duplicate_ids

def test_duplicate_results_get_the_apis_own_error_text():
    problems = find_duplicate_ids([user(), asks("call_a"), result("call_a"), result("call_a")])
    assert [p.message for p in problems] == [
        "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_a', in messages[2] "
        "and messages[3]."]
    assert problems[0].param == "messages.[3].tool_call_id" and problems[0].index == 3


def test_duplicate_call_ids_in_one_message_are_found():
    problems = find_duplicate_ids([user(), asks("call_0", "call_0"), result("call_0")])
    assert len(problems) == 1 and problems[0].index == 1 and "call_0" in problems[0].message


def test_same_id_in_two_turns_is_not_a_duplicate():
    history = [user(), asks("call_0"), result("call_0"), answer(), user(), asks("call_0"),
               result("call_0")]
    assert find_duplicate_ids(history) == []


# ----------------------------------------------------------------- at random

TEXTS = st.sampled_from(["hi", "成都天气？", "ok", "thanks"])


@st.composite
def histories(draw):
    """A valid history; ids are sometimes reused across turns, as some providers do."""
    messages, k = [], 0
    for kind in draw(st.lists(st.sampled_from(["user", "assistant", "system", "round"]),
                              max_size=14)):
        if kind != "round":
            messages.append({"role": kind, "content": draw(TEXTS)})
            continue
        n = draw(st.integers(1, 3))
        reuse = draw(st.booleans())
        ids = [f"call_{j if reuse else k + j}" for j in range(n)]
        k += n
        content = draw(st.sampled_from([None, "", "let me check"]))
        messages.append(asks(*ids, content=content))
        messages += [result(i, draw(TEXTS)) for i in draw(st.permutations(ids))]
    return messages


@st.composite
def broken_histories(draw):
    """A valid history, then broken the ways stored histories break."""
    messages = draw(histories())
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["delete", "swap", "duplicate", "move", "empty", "orphan"]))
        n = len(messages)
        if how == "delete" and n:
            del messages[draw(st.integers(0, n - 1))]
        elif how == "swap" and n > 1:
            i = draw(st.integers(0, n - 2))
            messages[i], messages[i + 1] = messages[i + 1], messages[i]
        elif how in ("duplicate", "move") and n:
            i = draw(st.integers(0, n - 1))
            m = messages[i] if how == "duplicate" else messages.pop(i)
            messages.insert(draw(st.integers(0, len(messages))), copy.deepcopy(m))
        elif how == "empty":
            messages.insert(draw(st.integers(0, n)), {"role": "assistant", "content":
                                                      draw(st.sampled_from([None, "hm"])),
                                                      "tool_calls": []})
        elif how == "orphan":
            messages.insert(draw(st.integers(0, n)), result(f"call_{draw(st.integers(0, 5))}"))
    return messages


def spoken(messages):
    """The user and system messages, in order: a repair never drops or moves them."""
    return [m for m in messages if m["role"] in ("user", "system")]


@settings(max_examples=300, deadline=None)
@given(histories())
def test_any_valid_history_is_left_as_it_is(history):
    fixed, kinds = repaired(history)
    assert fixed == history and kinds == []


@settings(max_examples=500, deadline=None)
@given(broken_histories(), st.sampled_from(["answer", "drop"]))
def test_any_broken_history_comes_back_valid(history, mode):
    fixed, kinds = repaired(history, interrupted=mode)
    assert spoken(fixed) == spoken(history), "user and system messages must all stay, in order"
    answers = [m for m in history if m["role"] == "assistant" and m.get("content")]
    kept = [m.get("content") for m in fixed if m["role"] == "assistant" and m.get("content")]
    assert kept == [m["content"] for m in answers], "assistant texts must all stay, in order"
    if not history or (not find_problems(history) and not find_duplicate_ids(history)):
        assert fixed == history and kinds == []
    else:
        assert kinds, "a broken history was repaired without reporting a change"
