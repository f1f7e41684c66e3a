"""Self-checks for notebooks 03 and 03b, the tool-calling protocol.

- `check_assistant_to_dict(fn)`: the core exercise (section 10), the learner's
  `assistant_to_dict(message)` judged by `ASSISTANT_RULES`, the rules that also guard
  `lesson_lib.protocol.assistant_to_dict` (tests/test_core_track_nb03.py);
- `check_my_tool(registry)`: exercise 1, a tool of your own made with `@registry.tool`;
- `check_repair(fn)`: exercise 2, a broken history put back in order;
- `check_results_for(fn)`: notebook 03b's exercise 1, the tool messages that answer
  parallel calls.

Each check prints ✅ / ❌ lines with hints and returns True when everything passed (the
notebook keeps that result, `passed_to_dict = check_...(...)` or `_ = check_...(...)`, so the
cell shows only the report). The data the exercises use is here too, so the notebook and
the checks agree on it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from lesson_lib import clock
from lesson_lib.exercises import (
    Report,
    not_done,
    run_check,
    signature_problem,
    wrong_signature,
)
from lesson_lib.exercises.contract import Broken, Rule, check_rules, expect, property_rule
from lesson_lib.i18n import N_, Twins, _, ngettext
from lesson_lib.protocol import ProtocolError, assistant_to_dict, find_problems, validate_request
from lesson_lib.tools import ToolRegistry, execute_tool

# ----------------------------------------------------------------- exercise 1: your own tool

TOOL_NAME = "convert_temperature"
_TOOL_QUESTION = ("What is 16 °C in Fahrenheit?", "16 °C 是多少华氏度？")
CONVERSIONS = ((16, 60.8), (100, 212), (-40, -40), (0, 32))  # (°C, °F)


def check_my_tool(registry: Any,           # the ToolRegistry your tool is registered in
                  name: str = TOOL_NAME,   # the tool's name
                  ) -> bool:
    """Exercise 1: the schema is valid, the model calls the tool, and it converts right."""
    return run_check(_("Exercise 1 · your own tool"),
                     lambda report: _my_tool(report, registry, name))


def says_when(description: Any) -> bool:
    """Does a tool's description say when to use it ("Use this when …", "当用户…时使用"),
    and not TODO?"""
    text = str(description or "")
    return "TODO" not in text and bool(
        re.search(r"\bwhen(ever)?\b|\bif the user\b|当|时使用|时调用|的时候", text,
                  re.IGNORECASE))


def _my_tool(report: Report, registry: Any, name: str) -> None:
    found = isinstance(registry, ToolRegistry) and name in registry
    if not report.expect(found, _("my_tools holds a tool named {name!r}").format(name=name),
                         _("decorate the function with @my_tools.tool (my_tools = "
                           "ToolRegistry()); got {registry!r:.80}").format(registry=registry)):
        return
    schema = registry.get(name).schema
    _schema_findings(report, schema)
    arguments = _model_call(report, schema, name)
    got = _fahrenheit(registry.execute(name, arguments))
    report.expect(_close(got, 60.8), _("running the model's call {arguments} gives 60.8 °F "
                                       "(got {got!r})").format(arguments=arguments, got=got),
                  _('return a JSON string (json.dumps) whose "fahrenheit" is '
                    "celsius × 9 / 5 + 32, rounded to one decimal"))
    raw = _returned(registry.get(name).function)
    if raw is not None:  # (None: the finding above already asks for a JSON string)
        report.expect(isinstance(raw, str) and _is_json(raw),
                      _("it returns a JSON string (got {kind} {value})").format(
                          kind=type(raw).__name__, value=repr(raw)[:60]),
                      _('a tool message\'s content is text the model reads: return '
                        'json.dumps({"celsius": ..., "fahrenheit": ...}) as the exercise asks '
                        "(-> str), not a bare number, which says nothing of its unit"))
    wrong = []
    for c, f in CONVERSIONS[1:]:
        got = _fahrenheit(registry.execute(name, json.dumps({"celsius": c})))
        if not _close(got, f):
            wrong.append(_("{c} °C gave {got!r}, expected {f}").format(c=c, got=got, f=f))
    report.expect(not wrong, "100 °C → 212 °F, -40 °C → -40 °F, 0 °C → 32 °F",
                  _("; ").join(wrong))


def _schema_findings(report: Report, schema: dict) -> None:
    body = {"model": "check", "messages": [{"role": "user", "content": DATA.TOOL_QUESTION}],
            "tools": [schema]}
    try:
        validate_request(body)
        problem = ""
    except ProtocolError as error:
        problem = f"{error.message} ({error.explanation})"
    report.expect(not problem, _("the API would accept its schema (validate_request)"), problem)
    parameters = schema["function"].get("parameters") or {}
    celsius = (parameters.get("properties") or {}).get("celsius") or {}
    report.expect(celsius.get("type") == "number" and "celsius" in parameters.get("required", []),
                  _("it takes one required number, celsius"),
                  _("write the signature as {tool}(celsius: float) -> str; the parameters "
                    "are now {parameters:.120}").format(
                      tool=TOOL_NAME, parameters=json.dumps(parameters, ensure_ascii=False)))
    text = schema["function"].get("description", "")
    units = all(any(w in text.lower() for w in words)
                for words in (("celsius", "摄氏", "°c"), ("fahrenheit", "华氏", "°f")))
    report.expect(units and says_when(text),
                  _("its description says when to use it: {text!r}").format(text=text),
                  _("write the docstring's first paragraph from the task's point of view "
                    '("Use this when the user ..."), naming both Celsius and Fahrenheit')
                  if not units else
                  _("it names the units, but not when to use the tool: a model picks a tool by "
                    'its description, so say it from the task\'s side ("Use this when the user '
                    'asks ...")'))


def _model_call(report: Report, schema: dict, name: str) -> str:
    """Ask the model the question; the arguments of its call to `name` (or a stand-in)."""
    from lesson_lib.llm import chat  # noqa: PLC0415  (lazy: the SDK is imported on first call)

    message = chat([{"role": "user", "content": DATA.TOOL_QUESTION}], tools=[schema])
    calls = [c for c in message.tool_calls or [] if c.function.name == name]
    report.expect(bool(calls), _("the model calls {name} for {question!r}").format(
                      name=name, question=DATA.TOOL_QUESTION),
                  _("the model answered {content!r:.160} instead: give the tool a name "
                    "and description that match the question").format(content=message.content))
    return calls[0].function.arguments if calls else json.dumps({"celsius": 16})


def _returned(function: Callable) -> Any:
    """What the tool's own function returns for 16 °C (None if it raised: the registry's
    run reports that)."""
    try:
        return function(celsius=16)
    except Exception:  # noqa: BLE001  (reported by the findings that run it through execute)
        return None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _fahrenheit(result: Any) -> Any:
    """The Fahrenheit value in a tool result: {"fahrenheit": x}, or a bare number."""
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        return result
    return data.get("fahrenheit", data) if isinstance(data, dict) else data


def _close(got: Any, expected: float) -> bool:
    return isinstance(got, (int, float)) and not isinstance(got, bool) and \
        abs(got - expected) < 0.051


# ------------------------------------------------- notebook 03b, exercise 1: answer every call

def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


_TWO_CALLS_QUESTION = ("What's the weather in Chengdu, and what time is it in New York?",
                       "成都天气怎么样？纽约现在几点？")


def _two_calls(city: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        _call("call_S5WgR8uaxYAw5MfwocIEEKfb", "get_current_weather",
              json.dumps({"location": city, "unit": "celsius"}, ensure_ascii=False,
                         separators=(",", ":"))),
        _call("call_CYsmRMm2JzFbx7lC6yqGJo9U", "get_current_time",
              '{"timezone":"America/New_York"}'),
    ]}


# The second reply the check tries: three calls, one with broken JSON (a trailing comma).
_THREE_CALLS_QUESTION = ("Weather in Tokyo and London, and the time in UTC?",
                         "东京和伦敦的天气，还有 UTC 时间？")


def _three_calls(tokyo: str, london: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        _call("call_J8IlZS3Dowv3hE9G31Xj7syP", "get_current_weather",
              f'{{"location":"{tokyo}"}}'),
        _call("call_WXM25MvDdtufCQ1zFWgkRJ6C", "get_current_weather",
              f'{{"location":"{london}",}}'),
        _call("call_xL9UOlLXZCrHcpxGcu1EkKFY", "get_current_time", '{"timezone":"UTC"}'),
    ]}


def _calls_label(n: int) -> str:
    """"2 calls": which reply a line of the report of check_results_for is about."""
    return ngettext("{n} call", "{n} calls", n).format(n=n)


def check_results_for(fn: Callable) -> bool:
    """Notebook 03b, exercise 1: fn(message) returns one tool message per call, and the list is valid."""
    if wrong_signature(_("Exercise 1 · answer every call"), signature_problem(
            fn, "results_for(message)", None)):
        return False
    with clock.frozen(clock.EXAMPLE):  # time results compared with execute_tool's must agree
        return run_check(_("Exercise 1 · answer every call"),
                         lambda report: _results_for(report, fn))


def _results_for(report: Report, fn: Callable) -> None:
    from openai.types.chat import ChatCompletionMessage  # noqa: PLC0415  (lazy)

    for question, data in ((DATA.TWO_CALLS_QUESTION, DATA.TWO_CALLS),
                           (DATA.THREE_CALLS_QUESTION, DATA.THREE_CALLS)):
        message = ChatCompletionMessage.model_validate(copy.deepcopy(data))
        label = _calls_label(len(message.tool_calls))
        try:
            results = fn(message)
        except Exception as error:  # noqa: BLE001  (the learner's code: report, don't crash)
            report.expect(False, _("{label}: results_for raised {error}: {message}").format(
                              label=label, error=type(error).__name__, message=error),
                          _("pass each call's name and arguments string to execute_tool as they "
                            "are: it parses them, and reports broken JSON as a result"))
            return
        if not isinstance(results, list):
            report.expect(False, _("{label}: results_for returns a list of tool messages").format(
                              label=label),
                          _("not done yet: it returned {value!r:.80}").format(value=results))
            return
        _result_findings(report, question, message, results)


def _result_findings(report: Report, question: str, message: Any, results: list) -> None:
    calls = message.tool_calls
    label = _calls_label(len(calls))
    others = [r for r in results if not (isinstance(r, dict) and r.get("role") == "tool")]
    report.expect(len(results) == len(calls) and not others,
                  _("{label}: one tool message per call ({results} for {calls})").format(
                      label=label, results=len(results), calls=len(calls)),
                  _("return only the tool messages: the assistant message with the calls is "
                    "already in the history (the check puts it there), and this list follows "
                    "it; it holds {other}").format(other=repr(others[0])[:80]) if others else
                  _("one per call, each call id once: {n} messages for {calls} calls").format(
                      n=len(results), calls=len(calls)) if len(results) > len(calls) else
                  _("loop over message.tool_calls, not only tool_calls[0]: every call id needs "
                    "its reply"))
    expected = {c.id: execute_tool(c.function.name, c.function.arguments) for c in calls}
    wrong = [r for r in results if not (isinstance(r, dict) and r.get("role") == "tool"
                                        and expected.get(r.get("tool_call_id")) == r.get("content"))]
    report.expect(not wrong, _("{label}: each is role 'tool', with its call's id as "
                               "tool_call_id and execute_tool's result as content").format(
                      label=label),
                  _("this one is not: {message!r:.160}").format(message=wrong[0]) if wrong
                  else "")
    history = [{"role": "user", "content": question}, assistant_to_dict(message), *results]
    problems = find_problems(history)
    report.expect(not problems, _("{label}: validate_messages accepts user → assistant → "
                                  "results").format(label=label),
                  f"{problems[0].message} ({problems[0].explanation})" if problems else "")


# ----------------------------------------------------------------- exercise 2: repair a history

_CHENGDU = _call("call_8V73l61ZeOm2SUqZSCAlnCB9", "get_current_weather",
                 '{"location":"成都","unit":"celsius"}')
_CHENGDU_RESULT = execute_tool("get_current_weather", '{"location": "成都"}')
_SHANGHAI = {lang: _call("call_G7KhcU5XyGGMR51h7JiI154T", "get_current_weather",
                         f'{{"location":"{city}","unit":"celsius"}}')
             for lang, city in (("en", "Shanghai"), ("zh", "上海"))}
_BEIJING = {lang: _call("call_c40UTMSHwFm566lhOTGC9M31", "get_current_weather",
                        f'{{"location":"{city}","unit":"celsius"}}')
            for lang, city in (("en", "Beijing"), ("zh", "北京"))}


def _tool(call: dict) -> dict:
    return {"role": "tool", "tool_call_id": call["id"],
            "content": execute_tool(call["function"]["name"], call["function"]["arguments"])}


# The seed's bug: a follow-up question slipped in between a call and its result.
BROKEN_HISTORY: list[dict] = [
    {"role": "user", "content": "成都天气？"},
    {"role": "assistant", "content": "", "tool_calls": [_CHENGDU]},
    {"role": "user", "content": "上海呢？"},
    {"role": "tool", "tool_call_id": _CHENGDU["id"], "content": _CHENGDU_RESULT},
]

_SHANGHAI_2 = _call("call_Qm3Vt9ZkLr2HwXbN7yPaE4dC", "get_current_weather",
                    '{"location":"上海","unit":"celsius"}')
_CHENGDU_2 = _call("call_Uf6Bn1RsKe8TgYvD3jWqL0mZ", "get_current_weather",
                   '{"location":"成都","unit":"celsius"}')
_TOKYO, _GUANGZHOU, _HANGZHOU = ({lang: _call(call_id, "get_current_weather",
                                                f'{{"location":"{city}"}}')
                                    for lang, city in (("en", en), ("zh", zh))}
                                   for call_id, en, zh in (
                                       ("call_Hc7Xp4NaWs2EkRzT9bVuM5qJ", "Tokyo", "东京"),
                                       ("call_Za1Lk8DyFo3PeUmC6hGtR9wB", "Guangzhou", "广州"),
                                       ("call_Nw5Jq2TbXv7CsMaY0pKeH3dL", "Hangzhou", "杭州")))


def _asks(*calls: dict, content: str = "") -> dict:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def _repair_cases(lang: str) -> list[tuple[str, list[dict]]]:
    """The histories exercise 2 repairs, in one edition's language (the seed's own is
    Chinese in both)."""
    zh = lang == "zh"
    shanghai, beijing, tokyo = _SHANGHAI[lang], _BEIJING[lang], _TOKYO[lang]
    guangzhou, hangzhou = _GUANGZHOU[lang], _HANGZHOU[lang]
    return [
        (N_("上海呢？ between a call and its result"), BROKEN_HISTORY),
        (N_("a system note between two parallel results"), [
            {"role": "system", "content": "你是一个乐于助人的助手。" if zh else
             "You are a helpful assistant."},
            {"role": "user", "content": "上海和北京的天气怎么样？" if zh else
             "What's the weather in Shanghai and Beijing?"},
            {"role": "assistant", "content": "", "tool_calls": [shanghai, beijing]},
            _tool(beijing),
            {"role": "system", "content": "用一句话回答。" if zh else
             "Answer in one sentence."},
            _tool(shanghai),
        ]),
        (N_("a history that is already valid"), [
            {"role": "user", "content": "成都天气？"},
            {"role": "assistant", "content": "", "tool_calls": [_CHENGDU]},
            {"role": "tool", "tool_call_id": _CHENGDU["id"], "content": _CHENGDU_RESULT},
            {"role": "assistant", "content": "成都多云，16°C，微风，湿度70%。"},
        ]),
        (N_("a result stored before its call"), [
            {"role": "user", "content": "东京天气怎么样？" if zh else
             "What's the weather in Tokyo?"},
            _tool(tokyo),
            _asks(tokyo),
            {"role": "assistant", "content": "东京小雨，20°C。" if zh else
             "Tokyo has light rain, 20°C."},
        ]),
        (N_("two rounds, each broken"), [
            {"role": "user", "content": "成都天气？"},
            _asks(_CHENGDU_2),
            {"role": "user", "content": "上海呢？"},
            _tool(_CHENGDU_2),
            _asks(_SHANGHAI_2),
            {"role": "user", "content": "谢谢！"},
            _tool(_SHANGHAI_2),
        ]),
        (N_("a question between two parallel results"), [
            {"role": "user", "content": "广州和杭州的天气怎么样？" if zh else
             "What's the weather in Guangzhou and Hangzhou?"},
            _asks(guangzhou, hangzhou),
            _tool(guangzhou),
            {"role": "user", "content": "好了吗？" if zh else "Well?"},
            _tool(hangzhou),
        ]),
        (N_("a call with a sentence beside it"), [
            {"role": "system", "content": "你是一个乐于助人的助手。" if zh else
             "You are a helpful assistant."},
            {"role": "user", "content": "东京在下雨吗？" if zh else
             "Is it raining in Tokyo?"},
            _asks(tokyo, content="我查一下东京的天气。" if zh else
                  "Let me check the weather in Tokyo."),
            {"role": "user", "content": "快一点！" if zh else "Quick, please!"},
            _tool(tokyo),
        ]),
    ]


def check_repair(fn: Callable) -> bool:
    """Exercise 2: fn(messages) returns the same messages in an order the API accepts."""
    if wrong_signature(_("Exercise 2 · repair a broken history"), signature_problem(
            fn, "my_repair(messages)", [])):
        return False
    return run_check(_("Exercise 2 · repair a broken history"),
                     lambda report: _repair(report, fn))


def _repair(report: Report, fn: Callable) -> None:
    changed = []
    for k, (what, case) in enumerate(DATA.REPAIR_CASES, start=1):
        given = copy.deepcopy(case)
        fixed = fn(given)
        if not isinstance(fixed, list):
            report.expect(False, _("case {k} ({what}): my_repair returns a list").format(
                              k=k, what=_(what)),
                          _("not done yet: it returned {value!r:.80}").format(value=fixed))
            return
        problems = find_problems(fixed)
        report.expect(not problems, _("case {k} ({what}): the API accepts the result").format(
                          k=k, what=_(what)),
                      _repair_hint(problems[0]) if problems else "")
        report.expect(*_kept(case, fixed, k))
        changed += [k] if given != case else []
    report.expect(not changed, _("the lists it was given are unchanged"),
                  _("case {cases} was edited in place: build a new list").format(
                      cases=", ".join(map(str, changed))))


def _repair_hint(problem: ProtocolError) -> str:
    """The API's words, and the fix this exercise allows: move, never drop."""
    if problem.index is not None:
        said = _("the API would answer 400 at message {index} ({message}).").format(
            index=problem.index, message=problem.message)
    else:
        said = _("the API would answer 400 ({message}).").format(message=problem.message)
    return said + _(" Here nothing may be dropped: move each tool message up, right after the "
                    "assistant message whose call it answers, before any other message")


def _kept(case: list[dict], fixed: list, k: int) -> tuple[bool, str, str]:
    """(ok, what, hint): every message kept once, the non-tool ones in their old order."""
    def key(m: Any) -> str:
        return json.dumps(m, sort_keys=True, ensure_ascii=False, default=repr)

    kept = [key(m) for m in fixed]
    lost = [m for m in case if key(m) not in kept]
    added = len(fixed) - len(case)
    others = [key(m) for m in case if m.get("role") != "tool"]
    in_order = [key(m) for m in fixed if not (isinstance(m, dict) and m.get("role") == "tool")]
    what = _("case {k}: every message kept, the non-tool ones in their order").format(k=k)
    if lost:
        return False, what, _("{role} {content!r:.60} was dropped: move it after the tool "
                              "replies instead of deleting it").format(
            role=lost[0]["role"], content=lost[0].get("content"))
    if added:
        return False, what, ngettext("the result has {n} message more than it was given",
                                     "the result has {n} messages more than it was given",
                                     added).format(n=added)
    return in_order == others, what, _("only tool messages move; keep the others where they "
                                       "were")


# ----------------------------------------------------------------- core: assistant_to_dict
#
# The learner writes assistant_to_dict(message): the SDK's assistant message (what chat()
# returns) as the plain dict that memory stores and the next request sends back. The
# replies it is tried on are SDK objects made with ChatCompletionMessage.model_validate,
# so the check calls no model and is the same whichever model the learner chose.
# ASSISTANT_RULES judge it; tests/test_core_track_nb03.py runs the same rules on
# lesson_lib.protocol.assistant_to_dict. Every rule is one the real API (or storing the
# memory as JSON) enforces, or what section 10 asks of memory: the protocol's `role`,
# `content` and `tool_calls`, and nothing else. So the SDK's own dump (model_dump()) does
# not pass: it carries `refusal`, `annotations`, `audio` and `function_call`, and
# `tool_calls: None` (which the OpenAI API takes, and some OpenAI-compatible servers
# refuse). `content` may be None or "" beside calls: the API takes both; without calls (a
# refusal: content None, its reason in `refusal`) it must be a string, "" or the refusal's
# text.

ASSISTANT_TITLE = N_("Build it · your assistant_to_dict")
_ASSISTANT_QUESTION = ({"role": "user", "content": "What's the weather in Chengdu?"},
                       {"role": "user", "content": "成都天气怎么样？"})

_TEXT_REPLY = tuple({"role": "assistant", "refusal": None, "content": text} for text in (
    "Chengdu is cloudy, 16 °C, with a light breeze.", "成都多云，16 °C，微风。"))
_ONE_CALL_REPLY = tuple(
    {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
        _call("call_h8QQ0ei5skpfodyVRU2sXKdg", "get_current_weather",
              f'{{"location":"{city}","unit":"celsius"}}')]}
    for city in ("Chengdu", "成都"))
_TEXT_BESIDE_CALL_REPLY = tuple({**reply, "content": text} for reply, text in zip(
    _ONE_CALL_REPLY, ("Let me check the weather in Chengdu.", "我先查一下成都的天气。"),
    strict=True))
_REFUSAL_REPLY = tuple({"role": "assistant", "content": None, "refusal": text} for text in (
    "I'm sorry, I can't help with that request.", "抱歉，我无法协助处理这个请求。"))
_PARALLEL_REPLY = tuple(
    {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
        _call("call_G7KhcU5XyGGMR51h7JiI154T", "get_current_weather",
              f'{{"location":"{shanghai}"}}'),
        _call("call_c40UTMSHwFm566lhOTGC9M31", "get_current_weather",
              f'{{"location":"{beijing}"}}'),
        _call("call_CYsmRMm2JzFbx7lC6yqGJo9U", "get_current_time",
              '{"timezone":"America/New_York"}'),
    ]} for shanghai, beijing in (("Shanghai", "Beijing"), ("上海", "北京")))

# The data of every check here, each with its Chinese twin: a Chinese learner is judged on
# Chinese conversations by the same rules (DATA.NAME, or the module's name NAME, is the one
# of the language spoken now).
DATA = Twins(
    TOOL_QUESTION=_TOOL_QUESTION,
    TWO_CALLS_QUESTION=_TWO_CALLS_QUESTION,
    TWO_CALLS=(_two_calls("Chengdu"), _two_calls("成都")),
    THREE_CALLS_QUESTION=_THREE_CALLS_QUESTION,
    THREE_CALLS=(_three_calls("Tokyo", "London"), _three_calls("东京", "伦敦")),
    REPAIR_CASES=(_repair_cases("en"), _repair_cases("zh")),
    ASSISTANT_QUESTION=_ASSISTANT_QUESTION,
    TEXT_REPLY=_TEXT_REPLY,
    ONE_CALL_REPLY=_ONE_CALL_REPLY,
    TEXT_BESIDE_CALL_REPLY=_TEXT_BESIDE_CALL_REPLY,
    REFUSAL_REPLY=_REFUSAL_REPLY,
    PARALLEL_REPLY=_PARALLEL_REPLY,
)


def __getattr__(name: str) -> Any:
    return DATA.get(name, f"module {__name__!r}")


def sdk_message(data: dict) -> Any:
    """The SDK's ChatCompletionMessage for a reply written as a dict (what chat() returns)."""
    from openai.types.chat import ChatCompletionMessage  # noqa: PLC0415  (lazy)

    return ChatCompletionMessage.model_validate(copy.deepcopy(data))


def _short(value: Any, width: int = 110) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _what_it_is(got: Any, message: Any) -> str:
    if got is message:
        return _("the SDK's message object itself")
    if got is None:
        return _("None (is there a return?)")
    return _("a {type}: {value}").format(type=type(got).__name__, value=_short(got, 80))


def _describe(data: dict) -> str:
    """A reply in a few words: its content, and its calls as id name(arguments)."""
    calls = data.get("tool_calls") or []
    content = data.get("content")
    if data.get("refusal") is not None:
        return _("a refusal with content None and refusal {refusal!r}").format(
            refusal=data["refusal"])
    if not calls:
        return _("a reply with content {content!r} and no calls").format(content=content)
    listed = ", ".join(f"{c['id']} {c['function']['name']}({c['function']['arguments']})"
                       for c in calls)
    return ngettext("a reply with content {content!r} and {n} call: {listed}",
                    "a reply with content {content!r} and {n} calls: {listed}",
                    len(calls)).format(content=content, n=len(calls), listed=listed)


def _its_calls(got: dict) -> list:
    calls = got.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _part(call: Any, *path: str) -> Any:
    """call["function"]["name"] and the like, or None where a level is missing."""
    for key in path:
        call = call.get(key) if isinstance(call, dict) else None
    return call


def _returns_a_dict(fn: Callable) -> None:
    message = sdk_message(DATA.TEXT_REPLY)
    got = fn(message)
    expect(isinstance(got, dict),
           _("for a text reply it returned {what}, not a dict").format(
               what=_what_it_is(got, message)))


def _says_assistant(fn: Callable) -> None:
    for label, data in ((_("a text reply"), DATA.TEXT_REPLY),
                        (_("a reply with one call"), DATA.ONE_CALL_REPLY)):
        got = fn(sdk_message(data))
        expect(got.get("role") == "assistant",
               _("for {label} the dict's role is {role!r}: {got}").format(
                   label=label, role=got.get("role"), got=_short(got)))


def _plain_json(fn: Callable) -> None:
    for label, data in ((_("a text reply"), DATA.TEXT_REPLY),
                        (_("a reply with one call"), DATA.ONE_CALL_REPLY)):
        got = fn(sdk_message(data))
        try:
            text = json.dumps(got, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise Broken(_("for {label}, json.dumps(the dict) raised {error}: {message}").format(
                label=label, error=type(error).__name__, message=error)) from None
        expect(json.loads(text) == got, _("for {label}, the dict comes back from JSON changed: "
                                          "{got}").format(label=label, got=_short(got)))


PROTOCOL_KEYS = ("role", "content", "tool_calls")


def _only_protocol_keys(fn: Callable) -> None:
    for label, data in ((_("a text reply"), DATA.TEXT_REPLY),
                        (_("a reply with one call"), DATA.ONE_CALL_REPLY)):
        got = fn(sdk_message(data))
        extra = [k for k in got if k not in PROTOCOL_KEYS]
        expect(not extra, _("for {label} the dict has {extra} besides role, content and "
                            "tool_calls: {got}").format(label=label, extra=", ".join(
                                map(repr, extra)), got=_short(got)))
        expect(got.get("tool_calls", ...) is not None,
               _("for {label} the dict has tool_calls=None: {got}").format(label=label,
                                                                           got=_short(got)))


def _refusal_has_text(fn: Callable) -> None:
    got = fn(sdk_message(DATA.REFUSAL_REPLY))
    content = got.get("content")
    expect(content in ("", DATA.REFUSAL_REPLY["refusal"]),
           _("the model refused ({refusal}): content None, no calls; the dict's content is "
             "{content}, which the API refuses without tool_calls").format(
               refusal=repr(DATA.REFUSAL_REPLY["refusal"]), content=repr(content))
           if content is None else
           _("the model refused ({refusal}): content None, no calls; the dict's content is "
             "{content}").format(refusal=repr(DATA.REFUSAL_REPLY["refusal"]),
                                 content=repr(content)))


def _keeps_text(fn: Callable) -> None:
    got = fn(sdk_message(DATA.TEXT_REPLY))
    expect(got.get("content") == DATA.TEXT_REPLY["content"],
           _("the model wrote {text!r}; the dict's content is {content}").format(
               text=DATA.TEXT_REPLY["content"], content=_short(got.get("content"), 90)))


def _no_empty_list(fn: Callable) -> None:
    calls = fn(sdk_message(DATA.TEXT_REPLY)).get("tool_calls")
    expect(calls is None, _("a text reply made no calls, but the dict has "
                            "tool_calls={calls!r}").format(calls=calls))


def _every_call(fn: Callable) -> None:
    message = sdk_message(DATA.PARALLEL_REPLY)
    got = fn(message)
    want = [c.function.name for c in message.tool_calls]
    calls = _its_calls(got)
    names = [_part(c, "function", "name") for c in calls]
    made = ngettext("the reply made {n} call ({names})", "the reply made {n} calls ({names})",
                    len(want)).format(n=len(want), names=", ".join(want))
    if calls:
        has = ngettext("the dict has {n} call ({names})", "the dict has {n} calls ({names})",
                       len(calls)).format(n=len(calls), names=", ".join(map(str, names)))
    else:
        has = _("the dict has 0 calls: tool_calls={calls!r}").format(calls=got.get("tool_calls"))
    expect(names == want, _("{made}; {has}").format(made=made, has=has))


def _keeps_ids(fn: Callable) -> None:
    message = sdk_message(DATA.PARALLEL_REPLY)
    got = fn(message)
    want = [c.id for c in message.tool_calls]
    ids = [_part(c, "id") for c in _its_calls(got)]
    expect(ids == want, _("the model's call ids are {want}; the dict's are {ids}").format(
        want=", ".join(want), ids=", ".join(map(repr, ids))))


def _says_function(fn: Callable) -> None:
    calls = _its_calls(fn(sdk_message(DATA.ONE_CALL_REPLY)))
    call = calls[0] if calls else None
    expect(_part(call, "type") == "function",
           _("the call in the dict has type {type!r}: {call}").format(
               type=_part(call, "type"), call=_short(call)))


def _name_and_arguments(fn: Callable) -> None:
    for data in (DATA.PARALLEL_REPLY, DATA.THREE_CALLS):
        message = sdk_message(data)
        got = fn(message)
        for mine, theirs in zip(_its_calls(got), message.tool_calls, strict=False):
            name, arguments = theirs.function.name, theirs.function.arguments
            expect(_part(mine, "function", "name") == name
                   and _part(mine, "function", "arguments") == arguments,
                   _("the model called {name} with the string {arguments!r}; the dict's call "
                     "holds function={function}").format(
                       name=name, arguments=arguments,
                       function=_short(_part(mine, "function"), 90)))


def _calls_only_content(fn: Callable) -> None:
    got = fn(sdk_message(DATA.ONE_CALL_REPLY))
    expect(got.get("content") in (None, ""),
           _("the reply was one call and no text (content None); the dict's content is "
             "{content!r}").format(content=got.get("content")))


def _text_beside_calls(fn: Callable) -> None:
    got = fn(sdk_message(DATA.TEXT_BESIDE_CALL_REPLY))
    text = DATA.TEXT_BESIDE_CALL_REPLY["content"]
    calls = _its_calls(got)
    expect(got.get("content") == text and len(calls) == 1,
           ngettext("the reply said {text!r} and made one call; the dict has content "
                    "{content!r} and {n} call",
                    "the reply said {text!r} and made one call; the dict has content "
                    "{content!r} and {n} calls", len(calls)).format(
               text=text, content=got.get("content"), n=len(calls)))


def _tool_replies(data: dict) -> list[dict]:
    return [{"role": "tool", "tool_call_id": c["id"], "content": '{"ok": true}'}
            for c in data.get("tool_calls") or []]


def _any_reply(fn: Callable, data: dict) -> str | None:
    """What is wrong with fn's dict for the reply `data`, or None."""
    said = _describe(data)
    try:
        got = fn(sdk_message(data))
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001  (the learner's code: report, don't crash)
        return _("for {said}, it raised {error}: {message}").format(
            said=said, error=type(error).__name__, message=error)
    if not isinstance(got, dict):
        return _("for {said}, it returned {got}, not a dict").format(said=said, got=_short(got))
    try:
        json.dumps(got)
    except (TypeError, ValueError) as error:
        return _("for {label}, json.dumps(the dict) raised {error}: {message}").format(
            label=said, error=type(error).__name__, message=error)
    problems = find_problems([DATA.ASSISTANT_QUESTION, got, *_tool_replies(data)])
    if problems:
        return _("for {said}, it returned {got}, and the API refuses "
                 "[user, that dict, its tool replies]: {problem}").format(
            said=said, got=_short(got, 90), problem=problems[0].message)
    content = data.get("content")
    refused = data.get("refusal") is not None and got.get("content") == data["refusal"]
    if got.get("content") != content and (content or got.get("content") not in (None, "")) \
            and not refused:
        return _("for {said}, the dict's content is {content!r}").format(
            said=said, content=got.get("content"))
    extra = [k for k in got if k not in PROTOCOL_KEYS]
    if extra:
        return _("for {said}, the dict has {extra} besides role, content and "
                 "tool_calls").format(said=said, extra=", ".join(map(repr, extra)))
    want = [(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in data.get("tool_calls") or []]
    have = [(_part(c, "id"), _part(c, "function", "name"), _part(c, "function", "arguments"))
            for c in _its_calls(got)]
    if have != want:
        return _("for {said}, the dict's calls are {calls}").format(
            said=said, calls=_short(got.get("tool_calls"), 90))
    return None


def _replies() -> Any:
    """Hypothesis: replies as the SDK gets them (content None, "" or text; 0–3 calls with
    their own ids and names, and arguments as JSON strings, compact or spaced, some broken)."""
    import string  # noqa: PLC0415

    from hypothesis import strategies as st  # noqa: PLC0415

    objects = st.sampled_from([{}, {"location": "Chengdu"}, {"location": "成都", "unit": "celsius"},
                               {"timezone": "America/New_York"}, {"q": ""},
                               {"celsius": 16.5, "exact": True, "note": None}])
    good = st.builds(lambda obj, compact: json.dumps(
        obj, ensure_ascii=False, separators=(",", ":") if compact else None),
        objects, st.booleans())
    arguments = st.one_of(good, good.map(lambda s: s[:-1] + ",}"))  # a trailing comma
    names = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
    ids = st.text(string.ascii_letters + string.digits, min_size=1, max_size=24).map(
        lambda s: "call_" + s)
    calls = st.lists(st.builds(_call, ids, names, arguments), max_size=3,
                     unique_by=lambda call: call["id"])
    contents = st.one_of(st.none(), st.just(""), st.text(min_size=1, max_size=20))
    refusals = st.one_of(st.none(), st.just("I can't help with that."))

    def reply(made: list, content: str | None, refusal: str | None) -> dict:
        if not made and content is None and refusal is None:  # text: a string, maybe ""
            content = ""
        if refusal is not None:  # a refusal: no text, no calls, its reason
            made, content = [], None
        return {"role": "assistant", "content": content, "refusal": refusal,
                **({"tool_calls": made} if made else {})}

    return st.builds(reply, calls, contents, refusals)


_RULE_DICT = N_("it returns a new dict, not the SDK's message object")
_RULE_KEYS = N_("the dict holds role, content and tool_calls, nothing else (not the SDK's "
                "model_dump())")
_RULE_JSON = N_("json.dumps takes the dict: plain dicts, lists and strings, nothing from the SDK")
_RULE_CALLS = N_("every call is kept, in the model's order")

ASSISTANT_RULES: list[Rule] = [
    Rule(_RULE_DICT, _returns_a_dict,
         (N_("chat() gives you a ChatCompletionMessage, a pydantic object of the openai package: "
          "json.dumps refuses it, and so does ShortTermMemory.add (section 10 shows why)"),
          N_("build a dict yourself, {'role': ..., 'content': ...}, from the message's attributes "
          "(message.content, message.tool_calls)"))),
    Rule(N_("the dict says role 'assistant'"), _says_assistant,
         (N_("the API refuses a message without a role: it is how it knows who said what"),),
         needs=(_RULE_DICT,)),
    Rule(_RULE_KEYS, _only_protocol_keys,
         (N_("message.model_dump() is every field this version of the SDK knows: refusal, "
             "annotations, audio, function_call, and tool_calls=None for a text reply. "
             "annotations is no field of a message you send, and some OpenAI-compatible "
             "servers refuse tool_calls: null (section 10)"),
          N_("build the dict yourself from message.content and message.tool_calls: role, "
             "content, and tool_calls only when there are calls")),
         needs=(_RULE_DICT,)),
    Rule(_RULE_JSON, _plain_json,
         (N_("message.tool_calls is a list of SDK objects too: put in the dict as it is, it "
          "carries them into memory, and the memory can no longer be saved as JSON "
          "(notebook 10 stores it)"),
          N_("build one plain dict per call from call.id, call.function.name and "
          "call.function.arguments")),
         needs=(_RULE_DICT,)),
    Rule(N_("a text reply keeps its text as content"), _keeps_text,
         (N_("content is the string the model wrote, message.content, unchanged"),),
         needs=(_RULE_DICT,)),
    Rule(N_("a reply without calls carries no tool_calls list (the API refuses an empty one)"),
         _no_empty_list,
         (N_("the API answers tool_calls=[] with a 400: \"Invalid 'messages[1].tool_calls': empty "
          "array. Expected an array with minimum length 1, but got an empty array instead.\""),
          N_("add the tool_calls key only when message.tool_calls holds calls (it is None "
          "otherwise)")),
         needs=(_RULE_DICT,)),
    Rule(_RULE_CALLS, _every_call,
         (N_("a model may call several tools in one reply (notebook 03b), the same tool twice too: "
          "each call needs its own entry, or its tool reply answers a call the API never sees"),
          N_("loop over every call in message.tool_calls; a dict keyed by the tool's name keeps "
          "only one call per tool")),
         needs=(_RULE_DICT, _RULE_JSON)),
    Rule(N_("each call keeps the id the model gave it"), _keeps_ids,
         (N_("each tool message names the call it answers by this id (tool_call_id): a new or "
          "missing id leaves the results answering no call, and the API refuses the list "
          "(section 9)"),
          N_("copy call.id, never make one up")),
         needs=(_RULE_CALLS,)),
    Rule(N_("each call says \"type\": \"function\""), _says_function,
         (N_("the API refuses a call without its type (\"Missing required parameter: "
          "'messages[1].tool_calls[0].type'\"), even though every call here is a function"),),
         needs=(_RULE_CALLS,)),
    Rule(N_("each call keeps its name, and its arguments as the JSON string the model wrote"),
         _name_and_arguments,
         (N_("arguments is a string (section 4): the API refuses an object there (\"Invalid type "
          "for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an "
          "object instead.\")"),
          N_("store call.function.arguments as it is, with neither json.loads nor json.dumps: a "
          "model sometimes writes broken JSON (notebook 03b), and the memory keeps what it "
          "wrote")),
         needs=(_RULE_CALLS,)),
    Rule(N_("a reply that is only calls keeps its content empty: None or \"\", not the word 'None'"),
         _calls_only_content,
         (N_("message.content is None when the model wrote no text; str(None) is the word 'None', "
          "which the model would read back as something it said"),
          N_("the API takes content None (or \"\") beside tool_calls: keep it, or use \"\"")),
         needs=(_RULE_DICT,)),
    Rule(N_("a refusal (content None, no calls) is stored with a string content: \"\" or "
            "the refusal's text"), _refusal_has_text,
         (N_("a model that refuses sends content None and its reason in message.refusal; "
             "without tool_calls the API refuses content None (\"Invalid value for 'content': "
             "expected a string, got null.\")"),
          N_("content None is only allowed beside tool_calls: without calls store \"\" (or "
             "message.refusal, what the model said)")),
         needs=(_RULE_DICT,)),
    Rule(N_("a reply with text beside its calls keeps both"), _text_beside_calls,
         (N_("a real model sometimes writes a sentence beside its calls (section 7): the API takes "
          "that message back whole, text and calls"),
          N_("content comes from message.content and tool_calls from message.tool_calls, whether "
          "or not the other is there")),
         needs=(_RULE_DICT, _RULE_JSON)),
]
ASSISTANT_RULES.append(property_rule(
    N_("for any reply (no text, text, 0–3 calls, broken arguments): the API takes the history "
    "[user, your dict, its tool replies], and the dict says what the model said"),
    _replies(), _any_reply,
    (N_("the smallest reply above is one yours gets wrong: make it with sdk_message({...}) "
     "(from lesson_lib.exercises.nb03) and call your function on it"),
     N_("content \"\" is a text too: without calls, the API refuses content None (\"Invalid value "
     "for 'content': expected a string, got null.\")")),
    needs=tuple(rule.name for rule in ASSISTANT_RULES)))


def check_assistant_to_dict(fn: Callable) -> bool:  # your assistant_to_dict(message)
    """The core exercise: judge the learner's assistant_to_dict by ASSISTANT_RULES."""
    if not callable(fn):
        return not_done(_(ASSISTANT_TITLE), _("write my_assistant_to_dict(message) in the cell "
                                              "above, then pass the function itself"))
    if wrong_signature(_(ASSISTANT_TITLE), signature_problem(
            fn, "my_assistant_to_dict(message)", None)):
        return False
    return check_rules(_(ASSISTANT_TITLE), fn, ASSISTANT_RULES,
                       start=_("write the body of my_assistant_to_dict(message) in the cell "
                               "above, then run this check again"))
