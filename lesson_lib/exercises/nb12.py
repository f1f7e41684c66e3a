"""Self-checks for notebook 12, "Who holds the memory".

- `check_items_to_messages(items_to_messages)`: the learner's
  `items_to_messages(items, instructions=None)`, which turns the items a server holds (a
  Responses chain's `input_items`, a conversation's items, as plain dicts) back into the
  Chat Completions `messages` list of Part I: the list you keep yourself. Judged by
  `ITEMS_RULES`, with `lesson_lib.exercises.contract`; the last rule asks Hypothesis for the
  smallest conversation whose list `validate_messages` refuses.

The check needs no model: the items are made here, in the shape the API lists them, in the
language spoken (the Chinese edition's conversation is the same, in Chinese).
"""

from __future__ import annotations

import copy
from typing import Any

from lesson_lib.exercises import not_done, signature_problem, wrong_signature
from lesson_lib.exercises.contract import Rule, check_rules, expect, property_rule
from lesson_lib.i18n import N_, Twins, _
from lesson_lib.protocol import find_problems

ITEMS_TITLE = N_("Exercise 1 · items_to_messages")
RESULT = '{"location": "Chengdu", "temperature": 16, "condition": "cloudy"}'  # the tool's own
# What the conversations say, in the language spoken (read as TEXT.NAME …)
TEXT = Twins(
    INSTRUCTIONS=("You are a helpful assistant.", "你是一个乐于助人的助手。"),
    WEATHER=('{"location":"Chengdu","unit":"celsius"}', '{"location":"成都","unit":"celsius"}'),
    NAME=("My name is Xiaoming", "我叫小明"),
    HI=("Nice to meet you, Xiaoming!", "很高兴认识你，小明！"),
    ASK=("What's the weather in Chengdu?", "成都天气怎么样？"),
    CLOUDY=("Chengdu is cloudy, 16°C.", "成都多云，16°C。"),
    WHO=("What's my name?", "我叫什么名字？"),
    TOLD=("You told me your name is Xiaoming.", "你刚才说你叫小明。"),
    TWO=("Weather in Beijing and Shanghai?", "北京和上海的天气？"),
    BEIJING=('{"location":"Beijing"}', '{"location":"北京"}'),
    SHANGHAI=('{"location":"Shanghai"}', '{"location":"上海"}'),
    WARMER=("Shanghai is warmer.", "上海更暖和。"),
    HELLO=("Hi", "你好"),
    SHORT_ASK=("Weather in Chengdu?", "成都天气？"),
    DONE=("Done.", "好了。"),
)


def __getattr__(name: str) -> Any:
    """INSTRUCTIONS, WEATHER: in the language spoken now."""
    return TEXT.get(name, __name__)


# ----------------------------------------------------------------- items, as the API lists them

def message(role: str, text: str, n: int) -> dict:
    part = "output_text" if role == "assistant" else "input_text"
    content = {"type": part, "text": text}
    if part == "output_text":
        content.update(annotations=[], logprobs=[])
    return {"id": f"msg_{n:04d}", "type": "message", "role": role, "content": [content],
            "status": "completed"}


def call(call_id: str, n: int, name: str = "get_current_weather",
         arguments: str | None = None) -> dict:  # None: TEXT.WEATHER
    arguments = TEXT.WEATHER if arguments is None else arguments
    return {"id": f"fc_{n:04d}", "type": "function_call", "status": "completed",
            "arguments": arguments, "call_id": call_id, "name": name}


def output(call_id: str, n: int, result: str = RESULT) -> dict:
    return {"id": f"fco_{n:04d}", "type": "function_call_output", "call_id": call_id,
            "output": result, "status": "completed"}


def weather_round() -> list[dict]:
    """The seed's three rounds as a conversation holds them."""
    return [message("user", TEXT.NAME, 1),
            message("assistant", TEXT.HI, 2),
            message("user", TEXT.ASK, 3),
            call("call_chengdu", 4), output("call_chengdu", 5),
            message("assistant", TEXT.CLOUDY, 6),
            message("user", TEXT.WHO, 7),
            message("assistant", TEXT.TOLD, 8)]


def two_calls() -> list[dict]:
    """One question, two calls made at once (parallel), then their outputs."""
    return [message("user", TEXT.TWO, 1),
            call("call_bj", 2, arguments=TEXT.BEIJING),
            call("call_sh", 3, arguments=TEXT.SHANGHAI),
            output("call_bj", 4, '{"temperature": 18}'),
            output("call_sh", 5, '{"temperature": 22}'),
            message("assistant", TEXT.WARMER, 6)]


def _run(impl: Any, items: list, instructions: str | None = None) -> list:
    got = impl(copy.deepcopy(items), instructions)
    expect(isinstance(got, list) and all(isinstance(m, dict) for m in got),
           (_("items_to_messages(...) returned {type}") if not isinstance(got, list) else
            _("items_to_messages(...) returned {type} with an item that is not a "
              "dict")).format(type=type(got).__name__))
    return got


def _short(messages: Any) -> str:
    text = repr(messages)
    return text if len(text) <= 220 else text[:217] + "..."


# ----------------------------------------------------------------- the rules

def _returns_list(impl: Any) -> None:
    _run(impl, [message("user", TEXT.NAME, 1)])


def _message_text(impl: Any) -> None:
    for role, text in (("user", TEXT.NAME), ("assistant", TEXT.HI)):
        got = _run(impl, [message(role, text, 1)])
        want = [{"role": role, "content": text}]
        said = (_("an assistant message item, {item}, gave {got}") if role == "assistant"
                else _("a user message item, {item}, gave {got}"))
        expect(got == want, said.format(item=_short(message(role, text, 1)), got=_short(got)))


def _instructions_first(impl: Any) -> None:
    got = _run(impl, [message("user", TEXT.NAME, 1)], TEXT.INSTRUCTIONS)
    expect(got[:1] == [{"role": "system", "content": TEXT.INSTRUCTIONS}],
           _("with instructions={instructions}, the list starts {start}").format(
               instructions=repr(TEXT.INSTRUCTIONS), start=_short(got[:1])))
    plain = _run(impl, [message("user", TEXT.NAME, 1)])
    expect(not any(m.get("role") == "system" for m in plain),
           _("with instructions=None, the list holds a system message: {got}").format(
               got=_short(plain)))


def _assistants_with_calls(messages: list) -> list[dict]:
    return [m for m in messages if m.get("role") == "assistant" and m.get("tool_calls")]


def _call_becomes_tool_calls(impl: Any) -> None:
    got = _run(impl, [message("user", TEXT.ASK, 1),
                      call("call_chengdu", 2), output("call_chengdu", 3)])
    asking = _assistants_with_calls(got)
    expect(len(asking) == 1, _("a function_call item gave no assistant message with "
                               "tool_calls: {got}").format(got=_short(got)))
    calls = asking[0]["tool_calls"]
    expect(isinstance(calls, list) and len(calls) == 1 and isinstance(calls[0], dict),
           _("one function_call gave tool_calls={calls}").format(calls=_short(calls)))
    entry = calls[0]
    fn = entry.get("function") if isinstance(entry.get("function"), dict) else {}
    expect(entry.get("id") == "call_chengdu" and entry.get("type") == "function"
           and fn.get("name") == "get_current_weather",
           _("the function_call (id 'fc_0002', call_id 'call_chengdu') became {entry}").format(
               entry=_short(entry)),
           ID_HINTS if entry.get("id") == "fc_0002" else ())


ID_HINTS = (N_("an item has two ids: its own, id (fc_…, fco_…), the server's name for the "
               "item, and call_id (call_…), the call's: Chat Completions pairs a call with "
               "its reply by the call's id, so both take call_id"),
            N_("the tool call's id and the tool message's tool_call_id are item['call_id']; "
               "item['id'] is not used at all"))


def _arguments_kept(impl: Any) -> None:
    got = _run(impl, [message("user", TEXT.ASK, 1),
                      call("call_chengdu", 2), output("call_chengdu", 3)])
    arguments = _assistants_with_calls(got)[0]["tool_calls"][0]["function"].get("arguments")
    expect(arguments == TEXT.WEATHER, _("the call's arguments {sent} became {got}").format(
        sent=repr(TEXT.WEATHER), got=repr(arguments)))


def _calls_share_a_message(impl: Any) -> None:
    got = _run(impl, two_calls())
    asking = _assistants_with_calls(got)
    ids = sorted(c.get("id") for m in asking for c in m["tool_calls"])
    expect(len(asking) == 1 and ids == ["call_bj", "call_sh"],
           _("two function_calls in a row gave {n} assistant messages with tool_calls "
             "(calls {ids})").format(n=len(asking), ids=ids))


def _output_becomes_tool(impl: Any) -> None:
    got = _run(impl, [message("user", TEXT.ASK, 1),
                      call("call_chengdu", 2), output("call_chengdu", 3)])
    tools = [m for m in got if m.get("role") == "tool"]
    want = {"role": "tool", "tool_call_id": "call_chengdu", "content": RESULT}
    rest = [m for m in got if m.get("role") != "user" and not m.get("tool_calls")]
    wrong_id = any(m.get("tool_call_id") == "fco_0003" for m in tools)
    expect(tools == [want], _("the function_call_output (id 'fco_0003', call_id "
                              "'call_chengdu') became {got}").format(got=_short(rest)),
           ID_HINTS if wrong_id else ())


def _order_kept(impl: Any) -> None:
    got = _run(impl, weather_round(), TEXT.INSTRUCTIONS)
    roles = [m.get("role") for m in got]
    want = ["system", "user", "assistant", "user", "assistant", "tool", "assistant", "user",
            "assistant"]
    expect(roles == want, _("the seed's three rounds gave the roles {roles}").format(
        roles=roles))
    expect(got[1].get("content") == TEXT.NAME and got[-1].get("content") == TEXT.TOLD,
           _("the seed's three rounds start with {first} and end with {last}").format(
               first=_short(got[1:2]), last=_short(got[-1:])))


def _items_untouched(impl: Any) -> None:
    for items in (weather_round(), two_calls()):
        given = copy.deepcopy(items)
        impl(given, TEXT.INSTRUCTIONS)
        changed = [g for g, i in zip(given, items, strict=False) if g != i][:1]
        expect(given == items, _("after items_to_messages(items), the items were changed: "
                                 "{changed}").format(changed=_short(changed)))


def _conversations():
    """Hypothesis: conversations as the API lists them: rounds of a user message, maybe
    calls (one to three, made at once) with their outputs, then the assistant's answer."""
    from hypothesis import strategies as st  # noqa: PLC0415

    round_ = st.tuples(st.sampled_from([TEXT.HELLO, TEXT.WHO, TEXT.SHORT_ASK]),
                       st.integers(0, 3), st.booleans())
    return st.tuples(st.lists(round_, min_size=1, max_size=4),
                     st.sampled_from([None, TEXT.INSTRUCTIONS]))


def _build(example: tuple) -> tuple[list, str | None]:
    rounds, instructions = example
    items: list[dict] = []
    for question, calls, answered in rounds:
        items.append(message("user", question, len(items)))
        ids = [f"call_{len(items)}_{k}" for k in range(calls)]
        items += [call(i, len(items) + k) for k, i in enumerate(ids)]
        items += [output(i, len(items) + k) for k, i in enumerate(ids)]
        if answered or calls:
            items.append(message("assistant", TEXT.DONE, len(items)))
    return items, instructions


def _refused(impl: Any, example: tuple) -> str | None:
    items, instructions = _build(example)
    try:
        got = impl(copy.deepcopy(items), instructions)
    except Exception as error:  # noqa: BLE001  a crash on some conversation is a finding
        return _("items_to_messages raised {error}: {message} on {items}").format(
            error=type(error).__name__, message=error, items=_short(items))
    problems = find_problems(got)
    if problems:
        kinds = [i["type"] if i["type"] != "message" else i["role"] for i in items]
        return _("for the items {kinds} (instructions={instructions}) the list is refused: "
                 "{error}").format(kinds=kinds, instructions=repr(instructions),
                                   error=problems[0].message)
    return None


ITEMS_RULES: list[Rule] = [
    Rule(N_("it returns a list of message dicts"), _returns_list,
         (N_("build a new list and append one dict per message; return that list"),)),
    Rule(N_("a message item becomes {'role', 'content'}, its text a plain string"),
         _message_text,
         (N_("an item's content is a list of parts, e.g. [{'type': 'input_text', 'text': '…'}]; "
             "Chat Completions takes the text itself"),
          N_("keep only role and content: id, type and status are the server's, not Chat's")),
         needs=("it returns a list of message dicts",)),
    Rule(N_("the instructions become a system message at the front"), _instructions_first,
         (N_("the Responses API keeps instructions apart from the items (and does not carry "
             "them to the next response); in Chat Completions they are the first message"),
          N_("only when instructions is not None")),
         needs=("it returns a list of message dicts",)),
    Rule(N_("a function_call becomes an assistant message with tool_calls, id = its call_id"),
         _call_becomes_tool_calls,
         (N_("in Chat Completions a call lives in an assistant message: {'role': 'assistant', "
             "'content': None, 'tool_calls': [...]}"),
          N_("each entry is {'id': …, 'type': 'function', 'function': {'name': …, 'arguments': "
             "…}}; the id the tool reply names is the item's call_id (call_…), not its id (fc_…)")),
         needs=("it returns a list of message dicts",)),
    Rule(N_("the call's arguments stay the JSON string they were"), _arguments_kept,
         (N_("Chat Completions carries arguments as a JSON string, as the item does: copy it "
             "as it is"),),
         needs=("a function_call becomes an assistant message with tool_calls, id = its "
                "call_id",)),
    Rule(N_("function_calls in a row share one assistant message (parallel calls)"),
         _calls_share_a_message,
         (N_("a response that makes two calls at once lists two function_call items; in Chat "
             "Completions they are two entries of one assistant message's tool_calls"),
          N_("when the message you built last is an assistant message with tool_calls, add the "
             "call to it instead of starting a new one")),
         needs=("a function_call becomes an assistant message with tool_calls, id = its "
                "call_id",)),
    Rule(N_("a function_call_output becomes a tool message with tool_call_id = its call_id"),
         _output_becomes_tool,
         (N_("Chat Completions has a role for it: {'role': 'tool', 'tool_call_id': …, "
             "'content': …}"),
          N_("the content is the item's output, a string already: keep it as it is")),
         needs=("it returns a list of message dicts",)),
    Rule(N_("the items keep their order"), _order_kept,
         (N_("the list is the conversation, oldest first, as the items are given "
             "(list them with order='asc')"),),
         needs=("a message item becomes {'role', 'content'}, its text a plain string",)),
    Rule(N_("the items you were given are left unchanged"), _items_untouched,
         (N_("they are the server's record; build new dicts instead of changing theirs"),)),
    property_rule(
        N_("every conversation gives a list that validate_messages accepts"),
        _conversations(), _refused,
        (N_("what the server accepted, Chat Completions must accept too: each call followed "
            "by its tool reply, nothing in between"),),
        examples=150,
        needs=("a function_call becomes an assistant message with tool_calls, id = its "
               "call_id",
               "a function_call_output becomes a tool message with tool_call_id = its "
               "call_id")),
]


def check_items_to_messages(items_to_messages: Any) -> bool:  # your items_to_messages
    """Judge the learner's items_to_messages(items, instructions=None) by ITEMS_RULES."""
    if not callable(items_to_messages):
        return not_done(_(ITEMS_TITLE), _("write items_to_messages, then run this cell again"))
    if wrong_signature(_(ITEMS_TITLE), signature_problem(
            items_to_messages, "items_to_messages(items, instructions)", [], None)):
        return False
    return check_rules(_(ITEMS_TITLE), items_to_messages, ITEMS_RULES,
                       start=_("write the body of items_to_messages (it still raises "
                               "NotImplementedError), then run this check again"))
