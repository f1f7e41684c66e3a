"""The core track of notebook 03: the rules that judge a learner's assistant_to_dict also
guard lesson_lib.protocol.assistant_to_dict.

TestAssistantToDict gets the tests every core exercise gets (tests/core_track_support.py):
the library's version and a correct one written here keep every rule; each wrong version in
the bank (a mistake learners really make) is caught, and the rule that catches it first is
the one whose hint fits that mistake; the untouched skeleton gets "not done yet", not a wall
of failures. Below it, the tests only this exercise has; among them, what the rules leave
alone on purpose: the API takes `content: ""` beside calls, as the library stores it (and
`content: None` there, as the model sends it).
"""

from __future__ import annotations

import json

from core_track_support import CoreTrack, rule_named, what_happened

from lesson_lib.exercises import nb03
from lesson_lib.exercises.contract import failed_rules
from lesson_lib.protocol import assistant_to_dict, find_problems

# ----------------------------------------------------------------- right answers

def independent(message):
    """A correct version, written without looking at lesson_lib's: content kept as it is
    (None beside calls; a refusal's reason where the model wrote no text and made no call),
    tool_calls only when there are calls."""
    content = message.content
    if content is None and not message.tool_calls:
        content = message.refusal or ""
    stored = {"role": "assistant", "content": content}
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
    if message.refusal is None:
        stored["content"] = message.content or None
    return stored


def the_sdk_dump(message):
    """The SDK's own dump: refusal, annotations, audio, function_call, tool_calls=None."""
    return message.model_dump()


def the_sdk_dump_without_nones(message):
    """model_dump(exclude_none=True): a refusal keeps its `refusal` field and no content."""
    return message.model_dump(exclude_none=True)


def keeps_none_for_a_refusal(message):
    """content as the model sent it, even without calls: a refusal's None."""
    stored = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        stored["tool_calls"] = independent(message)["tool_calls"]
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
    the_sdk_dump: "the dict holds role, content and tool_calls",
    the_sdk_dump_without_nones: "a refusal (content None, no calls)",
    keeps_none_for_a_refusal: "a refusal (content None, no calls)",
}


def typo(message):
    return {"role": "assistant", "content": message.text}  # the attribute is content


class TestAssistantToDict(CoreTrack):
    rules = nb03.ASSISTANT_RULES
    check = nb03.check_assistant_to_dict
    library = [assistant_to_dict]
    right = [independent]
    wrong = WRONG
    skeleton = skeleton
    hinted = sdk_calls_inside
    hint_steps = [
        ("what happened: for a reply with one call, json.dumps(the dict) raised TypeError: "
         "Object of type ChatCompletionMessageFunctionToolCall is not JSON serializable",
         "a list of SDK objects too"),
        ("a list of SDK objects too", "build one plain dict"),
        ("build one plain dict per call", None),
    ]
    typo = typo
    typo_says = ("your code raised AttributeError", "of typo()")
    misgiven = [None, ..., "assistant_to_dict"]
    misgiven_says = "not done yet"
    both_languages = True


# ----------------------------------------------------------------- what only notebook 03 has

def test_every_rule_catches_a_mistake_of_the_bank_first():
    caught = {rule_named(nb03.ASSISTANT_RULES, start) for start in WRONG.values()}
    assert caught == {rule.name for rule in nb03.ASSISTANT_RULES}, (
        "every rule catches at least one mistake of the bank first")


def test_the_property_rule_shows_the_smallest_reply_that_breaks_it():
    assert what_happened(empty_text_becomes_none, nb03.ASSISTANT_RULES, "for any reply") == (
        "for a reply with content '' and no calls, it returned {'role': 'assistant', "
        "'content': None}, and the API refuses [user, that dict, its tool replies]: "
        "Invalid value for 'content': expected a string, got null.")


# ----------------------------------------------------------------- what is left alone, and why

def test_the_sdk_dump_is_told_what_it_carries(capsys):
    """Section 10 shows the SDK's dump and why memory does not keep it: every field the SDK
    knows (refusal, annotations, audio, function_call; tool_calls=None)."""
    assert what_happened(the_sdk_dump, nb03.ASSISTANT_RULES, "the dict holds").startswith(
        "for a text reply the dict has 'refusal', 'annotations', 'audio', 'function_call' "
        "besides role, content and tool_calls: {'content': 'Chengdu is cloudy")
    assert nb03.check_assistant_to_dict(the_sdk_dump) is False
    out = capsys.readouterr().out
    assert "❌ the dict holds role, content and tool_calls, nothing else" in out, out


def test_a_refusal_kept_as_content_none_is_refused_as_the_api_would():
    assert what_happened(keeps_none_for_a_refusal, nb03.ASSISTANT_RULES, "a refusal") == (
        "the model refused (\"I'm sorry, I can't help with that request.\"): content None, no "
        "calls; the dict's content is None, which the API refuses without tool_calls")


def test_a_refusal_may_be_stored_as_its_text_or_as_empty_text():
    for as_text in (False, True):
        def stores(message, as_text=as_text):
            stored = independent(message)
            if message.refusal is not None:
                stored["content"] = message.refusal if as_text else ""
            return stored

        assert failed_rules(stores, nb03.ASSISTANT_RULES) == []


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


def test_wrong_parameters_are_told_in_one_sentence(capsys):
    def my_assistant_to_dict(message, memory):
        return independent(message)

    assert nb03.check_assistant_to_dict(my_assistant_to_dict) is False
    out = capsys.readouterr().out
    assert ("your my_assistant_to_dict(message, memory) cannot be called the way the check "
            "calls it, my_assistant_to_dict(message)") in out and len(out.splitlines()) == 3, out
