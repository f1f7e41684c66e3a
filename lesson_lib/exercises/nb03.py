"""Self-checks for notebook 03, the tool-calling protocol.

- `check_my_tool(registry)`: exercise 1, a tool of your own made with `@registry.tool`;
- `check_results_for(fn)`: exercise 2, the tool messages that answer parallel calls;
- `check_repair(fn)`: exercise 3, a broken history put back in order.

Each check prints ✅ / ❌ lines with hints and returns True when everything passed (the
notebook calls it as `_ = check_...(...)`, so the cell shows only the report). The data the exercises use is here too, so the notebook and the
checks agree on it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from lesson_lib import clock
from lesson_lib.exercises import Report, run_check
from lesson_lib.protocol import ProtocolError, assistant_to_dict, find_problems, validate_request
from lesson_lib.text import plural
from lesson_lib.tools import ToolRegistry, execute_tool

# ----------------------------------------------------------------- exercise 1: your own tool

TOOL_NAME = "convert_temperature"
TOOL_QUESTION = "What is 16 °C in Fahrenheit?"
CONVERSIONS = ((16, 60.8), (100, 212), (-40, -40), (0, 32))  # (°C, °F)


def check_my_tool(registry: Any,           # the ToolRegistry your tool is registered in
                  name: str = TOOL_NAME,   # the tool's name
                  ) -> bool:
    """Exercise 1: the schema is valid, the model calls the tool, and it converts right."""
    return run_check("Exercise 1 · your own tool", lambda report: _my_tool(report, registry, name))


def _my_tool(report: Report, registry: Any, name: str) -> None:
    found = isinstance(registry, ToolRegistry) and name in registry
    if not report.expect(found, f"my_tools holds a tool named {name!r}",
                         f"decorate the function with @my_tools.tool (my_tools = ToolRegistry()); "
                         f"got {registry!r:.80}"):
        return
    schema = registry.get(name).schema
    _schema_findings(report, schema)
    arguments = _model_call(report, schema, name)
    got = _fahrenheit(registry.execute(name, arguments))
    report.expect(_close(got, 60.8), f"running the model's call {arguments} gives 60.8 °F"
                  f" (got {got!r})", 'return a JSON string (json.dumps) whose "fahrenheit" is '
                  "celsius × 9 / 5 + 32, rounded to one decimal")
    wrong = []
    for c, f in CONVERSIONS[1:]:
        got = _fahrenheit(registry.execute(name, json.dumps({"celsius": c})))
        if not _close(got, f):
            wrong.append(f"{c} °C gave {got!r}, expected {f}")
    report.expect(not wrong, "100 °C → 212 °F, -40 °C → -40 °F, 0 °C → 32 °F", "; ".join(wrong))


def _schema_findings(report: Report, schema: dict) -> None:
    body = {"model": "check", "messages": [{"role": "user", "content": TOOL_QUESTION}],
            "tools": [schema]}
    try:
        validate_request(body)
        problem = ""
    except ProtocolError as error:
        problem = f"{error.message} ({error.explanation})"
    report.expect(not problem, "the API would accept its schema (validate_request)", problem)
    parameters = schema["function"].get("parameters") or {}
    celsius = (parameters.get("properties") or {}).get("celsius") or {}
    report.expect(celsius.get("type") == "number" and "celsius" in parameters.get("required", []),
                  "it takes one required number, celsius",
                  f"write the signature as {TOOL_NAME}(celsius: float) -> str; the parameters "
                  f"are now {json.dumps(parameters, ensure_ascii=False):.120}")
    text = schema["function"].get("description", "")
    says = all(any(w in text.lower() for w in words)
               for words in (("celsius", "摄氏", "°c"), ("fahrenheit", "华氏", "°f")))
    report.expect(says, f"its description says when to use it: {text!r}",
                  "write the docstring's first paragraph from the task's point of view "
                  '("Use this when the user ..."), naming both Celsius and Fahrenheit')


def _model_call(report: Report, schema: dict, name: str) -> str:
    """Ask the model the question; the arguments of its call to `name` (or a stand-in)."""
    from lesson_lib.llm import chat  # noqa: PLC0415  (lazy: the SDK is imported on first call)

    message = chat([{"role": "user", "content": TOOL_QUESTION}], tools=[schema])
    calls = [c for c in message.tool_calls or [] if c.function.name == name]
    report.expect(bool(calls), f"the model calls {name} for {TOOL_QUESTION!r}",
                  f"the model answered {message.content!r:.160} instead: give the tool a name "
                  "and description that match the question")
    return calls[0].function.arguments if calls else json.dumps({"celsius": 16})


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


# ----------------------------------------------------------------- exercise 2: answer every call

def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


TWO_CALLS_QUESTION = "What's the weather in Chengdu, and what time is it in New York?"
TWO_CALLS: dict = {"role": "assistant", "content": None, "tool_calls": [
    _call("call_S5WgR8uaxYAw5MfwocIEEKfb", "get_current_weather",
          '{"location":"Chengdu","unit":"celsius"}'),
    _call("call_CYsmRMm2JzFbx7lC6yqGJo9U", "get_current_time", '{"timezone":"America/New_York"}'),
]}

# The second reply the check tries: three calls, one with broken JSON (a trailing comma).
THREE_CALLS_QUESTION = "Weather in Tokyo and London, and the time in UTC?"
THREE_CALLS: dict = {"role": "assistant", "content": None, "tool_calls": [
    _call("call_J8IlZS3Dowv3hE9G31Xj7syP", "get_current_weather", '{"location":"Tokyo"}'),
    _call("call_WXM25MvDdtufCQ1zFWgkRJ6C", "get_current_weather", '{"location":"London",}'),
    _call("call_xL9UOlLXZCrHcpxGcu1EkKFY", "get_current_time", '{"timezone":"UTC"}'),
]}


def check_results_for(fn: Callable) -> bool:
    """Exercise 2: fn(message) returns one tool message per call, and the list is valid."""
    with clock.frozen(clock.EXAMPLE):  # time results compared with execute_tool's must agree
        return run_check("Exercise 2 · answer every call", lambda report: _results_for(report, fn))


def _results_for(report: Report, fn: Callable) -> None:
    from openai.types.chat import ChatCompletionMessage  # noqa: PLC0415  (lazy)

    for question, data in ((TWO_CALLS_QUESTION, TWO_CALLS), (THREE_CALLS_QUESTION, THREE_CALLS)):
        message = ChatCompletionMessage.model_validate(copy.deepcopy(data))
        label = f"{len(message.tool_calls)} calls"
        try:
            results = fn(message)
        except Exception as error:  # noqa: BLE001  (the learner's code: report, don't crash)
            report.expect(False, f"{label}: results_for raised {type(error).__name__}: {error}",
                          "pass each call's name and arguments string to execute_tool as they "
                          "are: it parses them, and reports broken JSON as a result")
            return
        if not isinstance(results, list):
            report.expect(False, f"{label}: results_for returns a list of tool messages",
                          f"not done yet: it returned {results!r:.80}")
            return
        _result_findings(report, question, message, results)


def _result_findings(report: Report, question: str, message: Any, results: list) -> None:
    calls = message.tool_calls
    label = f"{len(calls)} calls"
    report.expect(len(results) == len(calls), f"{label}: one tool message per call "
                  f"({len(results)} for {len(calls)})", "loop over message.tool_calls, "
                  "not only tool_calls[0]: every call id needs its reply")
    expected = {c.id: execute_tool(c.function.name, c.function.arguments) for c in calls}
    wrong = [r for r in results if not (isinstance(r, dict) and r.get("role") == "tool"
                                        and expected.get(r.get("tool_call_id")) == r.get("content"))]
    report.expect(not wrong, f"{label}: each is role 'tool', with its call's id as tool_call_id "
                  "and execute_tool's result as content",
                  f"this one is not: {wrong[0]!r:.160}" if wrong else "")
    history = [{"role": "user", "content": question}, assistant_to_dict(message), *results]
    problems = find_problems(history)
    report.expect(not problems, f"{label}: validate_messages accepts user → assistant → results",
                  f"{problems[0].message} ({problems[0].explanation})" if problems else "")


# ----------------------------------------------------------------- exercise 3: repair a history

_CHENGDU = _call("call_8V73l61ZeOm2SUqZSCAlnCB9", "get_current_weather",
                 '{"location":"成都","unit":"celsius"}')
_CHENGDU_RESULT = execute_tool("get_current_weather", '{"location": "成都"}')
_SHANGHAI = _call("call_G7KhcU5XyGGMR51h7JiI154T", "get_current_weather",
                  '{"location":"Shanghai","unit":"celsius"}')
_BEIJING = _call("call_c40UTMSHwFm566lhOTGC9M31", "get_current_weather",
                 '{"location":"Beijing","unit":"celsius"}')


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

REPAIR_CASES: list[tuple[str, list[dict]]] = [
    ("上海呢？ between a call and its result", BROKEN_HISTORY),
    ("a system note between two parallel results", [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What's the weather in Shanghai and Beijing?"},
        {"role": "assistant", "content": "", "tool_calls": [_SHANGHAI, _BEIJING]},
        _tool(_BEIJING),
        {"role": "system", "content": "Answer in one sentence."},
        _tool(_SHANGHAI),
    ]),
    ("a history that is already valid", [
        {"role": "user", "content": "成都天气？"},
        {"role": "assistant", "content": "", "tool_calls": [_CHENGDU]},
        {"role": "tool", "tool_call_id": _CHENGDU["id"], "content": _CHENGDU_RESULT},
        {"role": "assistant", "content": "成都多云，16°C，微风，湿度70%。"},
    ]),
]


def check_repair(fn: Callable) -> bool:
    """Exercise 3: fn(messages) returns the same messages in an order the API accepts."""
    return run_check("Exercise 3 · repair a broken history", lambda report: _repair(report, fn))


def _repair(report: Report, fn: Callable) -> None:
    changed = []
    for k, (what, case) in enumerate(REPAIR_CASES, start=1):
        given = copy.deepcopy(case)
        fixed = fn(given)
        if not isinstance(fixed, list):
            report.expect(False, f"case {k} ({what}): my_repair returns a list",
                          f"not done yet: it returned {fixed!r:.80}")
            return
        problems = find_problems(fixed)
        report.expect(not problems, f"case {k} ({what}): the API accepts the result",
                      _repair_hint(problems[0]) if problems else "")
        report.expect(*_kept(case, fixed, k))
        changed += [k] if given != case else []
    report.expect(not changed, "the lists it was given are unchanged",
                  f"case {', '.join(map(str, changed))} was edited in place: build a new list")


def _repair_hint(problem: ProtocolError) -> str:
    """The API's words, and the fix this exercise allows: move, never drop."""
    where = f" at message {problem.index}" if problem.index is not None else ""
    return (f"the API would answer 400{where} ({problem.message}). Here nothing may be dropped: "
            "move each tool message up, right after the assistant message whose call it "
            "answers, before any other message")


def _kept(case: list[dict], fixed: list, k: int) -> tuple[bool, str, str]:
    """(ok, what, hint): every message kept once, the non-tool ones in their old order."""
    def key(m: Any) -> str:
        return json.dumps(m, sort_keys=True, ensure_ascii=False, default=repr)

    kept = [key(m) for m in fixed]
    lost = [m for m in case if key(m) not in kept]
    added = len(fixed) - len(case)
    others = [key(m) for m in case if m.get("role") != "tool"]
    in_order = [key(m) for m in fixed if not (isinstance(m, dict) and m.get("role") == "tool")]
    what = f"case {k}: every message kept, the non-tool ones in their order"
    if lost:
        return False, what, (f"{lost[0]['role']} {lost[0].get('content')!r:.60} was dropped: move "
                             "it after the tool replies instead of deleting it")
    if added:
        return False, what, f"the result has {plural(added, 'message')} more than it was given"
    return in_order == others, what, "only tool messages move; keep the others where they were"
