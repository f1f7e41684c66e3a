"""The core track of notebook 03: the rules that judge a learner's assistant_to_dict also
guard lesson_lib.protocol.assistant_to_dict.

- the library's version keeps every rule (the same rules the notebook's check runs);
- a correct version written here, independently of the library, keeps every rule;
- each wrong version in the bank (a mistake learners really make) is caught, and the rule
  that catches it first is the one whose hint fits that mistake;
- the untouched skeleton gets "not done yet", not a wall of failures;
- what the rules leave alone is left alone on purpose: nothing shows that the API refuses
  the SDK's own dump (`tool_calls: None`, `refusal: None`, ...), and it takes `content: ""`
  beside calls, as the library stores it.
"""

from __future__ import annotations

import json

import pytest

from lesson_lib.exercises import nb03
from lesson_lib.exercises.contract import failed_rules, judge
from lesson_lib.protocol import assistant_to_dict, find_problems

RULES = {rule.name: rule for rule in nb03.ASSISTANT_RULES}


def _rule(start: str) -> str:
    """The one rule of notebook 03's core exercise whose name starts with `start`."""
    (name,) = [n for n in RULES if n.startswith(start)]
    return name


# ----------------------------------------------------------------- right answers

def independent(message):
    """A correct version, written without looking at lesson_lib's: content kept as it is
    (None beside calls), tool_calls only when there are calls."""
    stored = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        stored["tool_calls"] = [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments}}
            for call in message.tool_calls]
    return stored


def skeleton(message):
    """The notebook's starting point."""
    raise NotImplementedError


# ----------------------------------------------------------------- the bank of wrong versions

def returns_the_sdk_object(message):
    return message


def no_role(message):
    stored = independent(message)
    del stored["role"]
    return stored


def sdk_calls_inside(message):
    """The calls put in the dict as the SDK's objects."""
    stored = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        stored["tool_calls"] = message.tool_calls
    return stored


def the_whole_message_as_text(message):
    """str(message): the SDK object's repr stored as if the model had said it."""
    stored = independent(message)
    stored["content"] = str(message)
    return stored


def always_a_list(message):
    """tool_calls=[] for a reply without calls."""
    return {"role": "assistant", "content": message.content,
            "tool_calls": [{"id": c.id, "type": "function",
                            "function": {"name": c.function.name,
                                         "arguments": c.function.arguments}}
                           for c in message.tool_calls or []]}


def first_call_only(message):
    stored = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        call = message.tool_calls[0]
        stored["tool_calls"] = [{"id": call.id, "type": "function", "function": {
            "name": call.function.name, "arguments": call.function.arguments}}]
    return stored


def one_call_per_tool(message):
    """Keys the calls by the tool's name: two weather calls become one."""
    stored = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        by_name = {c.function.name: c for c in message.tool_calls}
        stored["tool_calls"] = [{"id": c.id, "type": "function", "function": {
            "name": name, "arguments": c.function.arguments}} for name, c in by_name.items()]
    return stored


def new_ids(message):
    stored = independent(message)
    for k, call in enumerate(stored.get("tool_calls", [])):
        call["id"] = f"call_{k}"
    return stored


def no_type(message):
    stored = independent(message)
    for call in stored.get("tool_calls", []):
        del call["type"]
    return stored


def parsed_arguments(message):
    stored = independent(message)
    for call in stored.get("tool_calls", []):
        call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return stored


def dumped_again(message):
    """json.dumps on a string "to make sure it is JSON": the arguments quoted twice."""
    stored = independent(message)
    for call in stored.get("tool_calls", []):
        call["function"]["arguments"] = json.dumps(call["function"]["arguments"])
    return stored


def the_word_none(message):
    stored = independent(message)
    stored["content"] = str(message.content)
    return stored


def drops_the_text_beside_calls(message):
    stored = independent(message)
    if message.tool_calls:
        stored["content"] = None
    return stored


def drops_the_calls_beside_text(message):
    if message.content:
        return {"role": "assistant", "content": message.content}
    return independent(message)


def empty_text_becomes_none(message):
    """Treats "" as "no text": a reply that wrote "" and made no call gets content None."""
    stored = independent(message)
    stored["content"] = message.content or None
    return stored


WRONG = {
    returns_the_sdk_object: "it returns a new dict",
    no_role: "the dict says role",
    sdk_calls_inside: "json.dumps takes the dict",
    the_whole_message_as_text: "a text reply keeps its text",
    always_a_list: "a reply without calls carries no tool_calls list",
    first_call_only: "every call is kept",
    one_call_per_tool: "every call is kept",
    new_ids: "each call keeps the id",
    no_type: "each call says",
    parsed_arguments: "each call keeps its name, and its arguments",
    dumped_again: "each call keeps its name, and its arguments",
    the_word_none: "a reply that is only calls",
    drops_the_text_beside_calls: "a reply with text beside its calls",
    drops_the_calls_beside_text: "a reply with text beside its calls",
    empty_text_becomes_none: "for any reply",
}


def test_the_library_keeps_every_rule_of_notebook_03():
    assert failed_rules(assistant_to_dict, nb03.ASSISTANT_RULES) == []


def test_an_independent_correct_version_keeps_every_rule():
    assert failed_rules(independent, nb03.ASSISTANT_RULES) == []


@pytest.mark.parametrize("wrong", list(WRONG), ids=lambda f: f.__name__)
def test_each_wrong_version_is_caught_by_the_rule_that_fits(wrong):
    broken = failed_rules(wrong, nb03.ASSISTANT_RULES)
    assert broken, f"{wrong.__name__} passed every rule"
    assert broken[0] == _rule(WRONG[wrong]), (wrong.__name__, broken)


def test_the_bank_of_wrong_versions_is_at_least_eight():
    assert len(WRONG) >= 8
    assert {_rule(start) for start in WRONG.values()} == set(RULES), (
        "every rule catches at least one mistake of the bank first")


def test_the_untouched_skeleton_is_not_written_yet(capsys):
    assert nb03.check_assistant_to_dict(skeleton) is False
    out = capsys.readouterr().out
    assert "not done yet" in out and len(out.splitlines()) <= 4, out


@pytest.mark.parametrize("answer", [None, ..., "assistant_to_dict"])
def test_something_that_is_not_a_function_is_not_done_yet(answer, capsys):
    assert nb03.check_assistant_to_dict(answer) is False
    assert "not done yet" in capsys.readouterr().out


def test_a_wrong_version_gets_the_smallest_case_then_more_hints(capsys):
    assert nb03.check_assistant_to_dict(sdk_calls_inside) is False
    first = capsys.readouterr().out
    assert ("what happened: for a reply with one call, json.dumps(the dict) raised TypeError: "
            "Object of type ChatCompletionMessageFunctionToolCall is not JSON serializable"
            in first), first
    assert "a list of SDK objects too" not in first
    nb03.check_assistant_to_dict(sdk_calls_inside)
    second = capsys.readouterr().out
    assert "a list of SDK objects too" in second and "build one plain dict" not in second
    nb03.check_assistant_to_dict(sdk_calls_inside)
    assert "build one plain dict per call" in capsys.readouterr().out


def test_the_property_rule_shows_the_smallest_reply_that_breaks_it():
    verdicts = {r.name: w for r, w in judge(empty_text_becomes_none, nb03.ASSISTANT_RULES)}
    assert verdicts[_rule("for any reply")] == (
        "for a reply with content '' and no calls, it returned {'role': 'assistant', "
        "'content': None}, and the API refuses [user, that dict, its tool replies]: "
        "Invalid value for 'content': expected a string, got null.")


def test_a_function_that_raises_is_reported_with_its_line(capsys):
    def typo(message):
        return {"role": "assistant", "content": message.text}  # the attribute is content

    assert nb03.check_assistant_to_dict(typo) is False
    out = capsys.readouterr().out
    assert "your code raised AttributeError" in out and "of typo()" in out, out


# ----------------------------------------------------------------- what is left alone, and why

def test_the_sdk_dump_with_its_none_fields_passes(capsys):
    """The OpenAI API accepts `tool_calls: None` (some OpenAI-compatible servers refuse it)
    and the SDK's request type lets `refusal`, `audio` and `function_call` be None: no
    rule may forbid what the API takes, so the SDK's own dump passes."""
    assert nb03.check_assistant_to_dict(lambda message: message.model_dump()) is True
    assert "All checks passed." in capsys.readouterr().out


def test_empty_content_beside_calls_passes_as_the_library_stores_it():
    stored = assistant_to_dict(nb03.sdk_message(nb03.ONE_CALL_REPLY))
    assert stored["content"] == "" and stored["tool_calls"]
    reply = {"role": "tool", "tool_call_id": stored["tool_calls"][0]["id"], "content": "{}"}
    assert find_problems([nb03.ASSISTANT_QUESTION, stored, reply]) == []


def test_the_fixed_replies_are_what_the_sdk_returns():
    for data in (nb03.TEXT_REPLY, nb03.ONE_CALL_REPLY, nb03.TEXT_BESIDE_CALL_REPLY,
                 nb03.PARALLEL_REPLY):
        message = nb03.sdk_message(data)
        assert type(message).__name__ == "ChatCompletionMessage"
        assert message.model_dump(exclude_none=True) == {
            k: v for k, v in data.items() if v is not None}
    names = [c["function"]["name"] for c in nb03.PARALLEL_REPLY["tool_calls"]]
    assert len(names) == 3 and len(set(names)) == 2, "the same tool twice, and another"
