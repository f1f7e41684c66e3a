"""Notebook 12's exercise: items_to_messages, judged by ITEMS_RULES. The offline model's own
conversion (lesson_lib.offline.responses.to_messages) keeps every rule; a version written
here keeps them; each wrong version, a mistake a learner makes, is caught first by the rule
that fits it."""

from __future__ import annotations

import json

import pytest
from core_track_support import CoreTrack

from lesson_lib.exercises.contract import failed_rules
from lesson_lib.exercises.nb12 import ITEMS_RULES, check_items_to_messages
from lesson_lib.offline.responses import to_messages
from lesson_lib.protocol import is_valid


def offline_models(items, instructions=None):
    """The conversion the offline model answers Responses requests with."""
    head = [{"role": "system", "content": instructions}] if instructions else []
    return head + to_messages(items)


# ----------------------------------------------------------------- right, written apart

def text_of(item):
    return " ".join(p["text"] for p in item["content"] if "text" in p)


def written_here(items, instructions=None):
    out = []
    if instructions is not None:
        out.append({"role": "system", "content": instructions})
    pending = None  # the assistant message the calls in a row go into
    for item in items:
        if item["type"] == "function_call":
            if pending is None:
                pending = {"role": "assistant", "content": None, "tool_calls": []}
                out.append(pending)
            pending["tool_calls"].append({"id": item["call_id"], "type": "function", "function": {
                "name": item["name"], "arguments": item["arguments"]}})
            continue
        pending = None
        if item["type"] == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item["call_id"],
                        "content": item["output"]})
        elif item["type"] == "message":
            out.append({"role": item["role"], "content": text_of(item)})
    return out


# ----------------------------------------------------------------- wrong versions

def parts_kept(items, instructions=None):  # the content list of parts, as the item has it
    out = written_here(items, instructions)
    by_text = {text_of(i): i["content"] for i in items if i["type"] == "message"}
    return [{**m, "content": by_text.get(m.get("content"), m.get("content"))} for m in out]


def no_instructions(items, instructions=None):  # instructions are not carried over
    return written_here(items)


def item_id_for_call(items, instructions=None):  # fc_… instead of call_…
    ids = {i["call_id"]: i["id"] for i in items if i["type"] == "function_call"}
    out = written_here(items, instructions)
    for m in out:
        for c in m.get("tool_calls") or []:
            c["id"] = ids[c["id"]]
    return out


def item_id_for_output(items, instructions=None):  # fco_… as the tool message's id
    ids = {i["call_id"]: i["id"] for i in items if i["type"] == "function_call_output"}
    out = written_here(items, instructions)
    for m in out:
        if m.get("role") == "tool":
            m["tool_call_id"] = ids[m["tool_call_id"]]
    return out


def calls_dropped(items, instructions=None):  # only the messages and the outputs
    return written_here([i for i in items if i["type"] != "function_call"], instructions)


def arguments_parsed(items, instructions=None):  # a dict where Chat wants the JSON text
    out = written_here(items, instructions)
    for m in out:
        for c in m.get("tool_calls") or []:
            c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    return out


def one_message_per_call(items, instructions=None):  # parallel calls split apart
    out = []
    for m in written_here(items, instructions):
        calls = m.get("tool_calls")
        if calls:
            out += [{**m, "tool_calls": [c]} for c in calls]
        else:
            out.append(m)
    return out


def output_as_user(items, instructions=None):  # the result said as the user
    return [{"role": "user", "content": m["content"]} if m["role"] == "tool" else m
            for m in written_here(items, instructions)]


def output_dumped(items, instructions=None):  # json.dumps of a string: quoted twice
    return [{**m, "content": json.dumps(m["content"])} if m["role"] == "tool" else m
            for m in written_here(items, instructions)]


def newest_first(items, instructions=None):  # as items.list() gives them by default
    out = written_here(list(reversed(items)))
    return ([{"role": "system", "content": instructions}] if instructions else []) + out


def rewritten_in_place(items, instructions=None):  # the server's items turned into messages
    out = [] if instructions is None else [{"role": "system", "content": instructions}]
    for item in items:
        if item["type"] == "message":
            item["content"] = text_of(item)
            for key in ("id", "type", "status"):
                del item[key]
            out.append(item)
        else:
            out += written_here([item])
    return merged(out)


def merged(messages):
    """written_here's merging of calls in a row, for the version above."""
    out = []
    for m in messages:
        if m.get("tool_calls") and out and out[-1].get("tool_calls"):
            out[-1]["tool_calls"] += m["tool_calls"]
        else:
            out.append(m)
    return out


def first_call_only(items, instructions=None):  # a parallel pair keeps its first call
    out = written_here(items, instructions)
    for m in out:
        if m.get("tool_calls"):
            m["tool_calls"] = m["tool_calls"][:1]
    return out


def skeleton(items, instructions=None):
    """The notebook's starting point."""
    raise NotImplementedError


def typo(items, instructions=None):
    return [{"role": item["rol"], "content": text_of(item)} for item in items]


class TestItemsToMessages(CoreTrack):
    rules = ITEMS_RULES
    check = check_items_to_messages
    library = [offline_models]
    right = [written_here]
    wrong = {
        parts_kept: "a message item becomes",
        no_instructions: "the instructions become",
        item_id_for_call: "a function_call becomes",
        item_id_for_output: "a function_call_output becomes",
        calls_dropped: "a function_call becomes",
        arguments_parsed: "the call's arguments",
        one_message_per_call: "function_calls in a row",
        output_as_user: "a function_call_output becomes",
        output_dumped: "a function_call_output becomes",
        newest_first: "the items keep their order",
        rewritten_in_place: "the items you were given",
        first_call_only: "function_calls in a row",
    }
    skeleton = skeleton
    hinted = no_instructions
    hint_steps = [("what happened: with instructions=", "in Chat Completions they are the first"),
                  ("in Chat Completions they are the first message", None)]
    typo = typo
    typo_says = ["your code raised KeyError", "line"]
    misgiven = [..., None]
    misgiven_says = "not done yet"


def test_the_solution_of_the_notebook_makes_a_valid_list():
    from lesson_lib.exercises.nb12 import INSTRUCTIONS, weather_round

    assert is_valid(written_here(weather_round(), INSTRUCTIONS))


def test_a_version_valid_for_the_fixed_cases_only_is_caught_by_the_property():
    """Correct on the rules' fixed examples, wrong on a conversation they do not hold: two
    rounds with a tool each (its outputs all moved to the end)."""
    def late_outputs(items, instructions=None):
        out = written_here(items, instructions)
        if sum(1 for m in out if m.get("tool_calls")) < 2:
            return out
        tools = [m for m in out if m["role"] == "tool"]
        return [m for m in out if m["role"] != "tool"] + tools

    assert failed_rules(late_outputs, ITEMS_RULES) == [ITEMS_RULES[-1].name]


@pytest.mark.parametrize("wrong", [item_id_for_call, item_id_for_output])
def test_the_items_own_id_is_told_to_be_the_call_id(wrong, capsys):
    """The first hint after what happened names the mistake (two ids: use call_id), not
    the shape of an assistant message."""
    from lesson_lib import exercises

    exercises._ASKED.clear()
    check_items_to_messages(wrong)
    check_items_to_messages(wrong)  # asked again: the next step
    out = capsys.readouterr().out.split("Exercise 1 · items_to_messages:")[-1]
    assert "an item has two ids: its own, id (fc_…, fco_…)" in out, out
    assert "a call lives in an assistant message" not in out, out


def test_the_chinese_edition_judges_chinese_items(speak, capsys):
    """A Chinese learner's conversation is in Chinese (我叫小明, 成都), judged by the same
    rules: the right version passes, and a wrong one is shown the Chinese items it got."""
    speak("zh")
    from lesson_lib.exercises.nb12 import weather_round

    assert "我叫小明" in json.dumps(weather_round(), ensure_ascii=False)
    assert check_items_to_messages(written_here) is True
    assert "全部检查通过。" in capsys.readouterr().out
    assert check_items_to_messages(parts_kept) is False
    out = capsys.readouterr().out
    assert "我叫小明" in out and "My name is" not in out, out
