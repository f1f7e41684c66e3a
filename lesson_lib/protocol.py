"""The Chat Completions API's rules about a request, checked before it is sent.

`validate_messages()` applies the ordering rules the real API enforces (the one
that bites agents: an assistant message with `tool_calls` must be followed,
immediately and only, by one `tool` message per call id). When a rule is broken
it raises `ProtocolError` carrying the real API's error text, `param` and
`code` (see docs/protocol.md), plus a one-line explanation for learners.

`find_problems()` is the non-raising form: it lists every problem it finds.
`validate_request()` checks a whole request body (model, tools, tool_choice,
messages); the offline model answers with it exactly as the real API would.

Texts marked "verbatim" were copied from real API responses; texts marked
"reconstructed" are the closest known shape and may differ in wording.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema

from lesson_lib.text import plural

KNOWN_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
TOOL_CHOICE_STRINGS = ("none", "auto", "required")


class ProtocolError(ValueError):
    """A request the API would refuse, with the API's own error fields."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None,
                 index: int | None = None,        # which message broke the rule, if any
                 explanation: str = "",           # the rule and the fix, for learners
                 status: int = 400,               # the HTTP status the API answers with
                 type: str = "invalid_request_error"):
        super().__init__(message)
        self.message, self.param, self.code = message, param, code
        self.index, self.explanation, self.status, self.type = index, explanation, status, type

    def body(self) -> dict:
        """The JSON body the API sends back: {"error": {...}}."""
        return {"error": {"message": self.message, "type": self.type,
                          "param": self.param, "code": self.code}}

    def __str__(self) -> str:
        return f"{self.message}\n  → {self.explanation}" if self.explanation else self.message


# ----------------------------------------------------------------- messages

def _content_problem(i: int, m: Mapping) -> ProtocolError | None:
    role, content = m.get("role"), m.get("content")
    if role == "assistant" and content is None and m.get("tool_calls"):
        return None  # a pure tool-call request may have no text
    if content is None:
        return ProtocolError(  # verbatim
            "Invalid value for 'content': expected a string, got null.",
            param=f"messages.[{i}].content", index=i,
            explanation=f"message {i} ({role}) has content None: send a string "
                        "(an assistant message may only omit it when it carries tool_calls)")
    if not isinstance(content, (str, list)):
        return ProtocolError(  # reconstructed
            f"Invalid type for 'messages[{i}].content': expected one of a string or array "
            f"of objects, but got {type(content).__name__} instead.",
            param=f"messages[{i}].content", code="invalid_type", index=i,
            explanation=f"message {i} ({role}) content must be a string: json.dumps() it first")
    return None


def message_problem(i: int, m: Any) -> ProtocolError | None:
    """The first rule message `i` breaks on its own (shape, role, content), or None."""
    if not isinstance(m, Mapping):
        return ProtocolError(  # reconstructed
            f"Invalid type for 'messages[{i}]': expected an object, but got "
            f"{type(m).__name__} instead.", param=f"messages[{i}]", code="invalid_type",
            index=i, explanation=f"message {i} must be a dict like "
                                 "{'role': 'user', 'content': '...'}")
    role = m.get("role")
    if role is None:
        return ProtocolError(  # reconstructed
            f"Missing required parameter: 'messages[{i}].role'.",
            param=f"messages[{i}].role", code="missing_required_parameter", index=i,
            explanation=f"message {i} has no 'role': add one of system/user/assistant/tool")
    if role not in KNOWN_ROLES:
        return ProtocolError(  # reconstructed (the shape of the real invalid_value texts)
            f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
            "'function', 'tool', and 'developer'.",
            param=f"messages[{i}].role", code="invalid_value", index=i,
            explanation=f"message {i} has unknown role {role!r}")
    if role == "tool" and not m.get("tool_call_id"):
        return ProtocolError(  # reconstructed
            f"Missing required parameter: 'messages[{i}].tool_call_id'.",
            param=f"messages[{i}].tool_call_id", code="missing_required_parameter", index=i,
            explanation=f"message {i} (tool) must say which call it answers: "
                        "set tool_call_id to the id of that tool call")
    if role == "assistant" and "tool_calls" in m and m["tool_calls"] is not None:
        return _tool_calls_problem(i, m["tool_calls"])
    return _content_problem(i, m)


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", int: "an integer", float: "a number",
            bool: "a boolean"}.get(type(value), type(value).__name__)


def _tool_calls_problem(i: int, calls: Any) -> ProtocolError | None:
    if isinstance(calls, list) and not calls:
        return ProtocolError(  # reconstructed, by analogy with the verbatim `tools: []` text
            f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum "
            "length 1, but got an empty array instead.",
            param=f"messages[{i}].tool_calls", code="empty_array", index=i,
            explanation=f"message {i} (assistant) has tool_calls=[]: leave the key out "
                        "when there are no calls")
    if not isinstance(calls, list):
        return ProtocolError(  # reconstructed
            f"Invalid type for 'messages[{i}].tool_calls': expected an array, but got "
            f"{_json_type(calls)} instead.", param=f"messages[{i}].tool_calls",
            code="invalid_type", index=i,
            explanation=f"message {i} (assistant): tool_calls must be a list of calls, "
                        "even for a single call")
    for k, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, Mapping) else None
        args = fn.get("arguments") if isinstance(fn, Mapping) else None
        if args is not None and not isinstance(args, str):
            return ProtocolError(  # reconstructed
                f"Invalid type for 'messages[{i}].tool_calls[{k}].function.arguments': expected "
                f"a string, but got {_json_type(args)} instead.",
                param=f"messages[{i}].tool_calls[{k}].function.arguments", code="invalid_type",
                index=i, explanation=f"message {i} tool call {k}: arguments must be a JSON "
                                     "string; json.dumps() the dict")
        for field, ok in (("id", isinstance(call, Mapping) and isinstance(call.get("id"), str)),
                          ("function", isinstance(fn, Mapping)),
                          ("function.name", isinstance(fn, Mapping) and fn.get("name")),
                          ("function.arguments", isinstance(args, str))):
            if not ok:
                return ProtocolError(  # reconstructed
                    f"Missing required parameter: 'messages[{i}].tool_calls[{k}].{field}'.",
                    param=f"messages[{i}].tool_calls[{k}].{field}",
                    code="missing_required_parameter", index=i,
                    explanation=f"message {i} tool call {k} needs {field} (arguments is a JSON "
                                "string, not a dict): assistant_to_dict() builds the right shape")
    return None


def _pairing_problems(messages: list) -> list[ProtocolError]:
    """The pairing rule, scanned by position: each group is an assistant message with
    tool_calls followed immediately by tool messages, one per call id."""
    problems: list[ProtocolError] = []
    i, n = 0, len(messages)
    while i < n:
        m = messages[i]
        role = m.get("role") if isinstance(m, Mapping) else None
        if role == "tool":  # a tool message with no tool_calls group right before it
            problems.append(ProtocolError(  # verbatim, misspelling included
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.",
                param=f"messages.[{i}].role", index=i,
                explanation=f"message {i} (tool, {m.get('tool_call_id')}) has no assistant "
                            "tool_calls right before it: trim or move the whole group, "
                            "never one message of it"))
            i += 1
            continue
        calls = m.get("tool_calls") if role == "assistant" else None
        if not calls or not isinstance(calls, list):
            i += 1
            continue
        ids = [c.get("id") for c in calls if isinstance(c, Mapping)]
        answered: dict = {}  # call id -> index of the tool message that answered it
        j = i + 1
        while j < n and isinstance(messages[j], Mapping) and messages[j].get("role") == "tool":
            tid = messages[j].get("tool_call_id")
            if tid in answered:
                problems.append(ProtocolError(  # verbatim (quoted from a real error log)
                    f"Invalid parameter: Duplicate value for 'tool_call_id' of '{tid}', in "
                    f"messages[{answered[tid]}] and messages[{j}].",
                    param=f"messages.[{j}].tool_call_id", index=j,
                    explanation=f"messages {answered[tid]} and {j} both answer {tid}: keep one "
                                "result per call (repair_messages() keeps the first)"))
            elif tid not in ids:
                problems.append(ProtocolError(  # message verbatim; param reconstructed
                    f"Invalid parameter: 'tool_call_id' of '{tid}' not found in "
                    "'tool_calls' of previous message.",
                    param=f"messages.[{j}].tool_call_id", index=j,
                    explanation=f"message {j} answers {tid!r}, but the assistant message "
                                f"{i} asked for {', '.join(map(str, ids))}: copy tool_call.id "
                                "into tool_call_id"))
            answered.setdefault(tid, j)
            j += 1
        missing = [t for t in ids if t not in answered]
        if missing:
            # N is the first message after the group that is not a tool reply; when the
            # list ends inside the group we point at its last message (reconstructed).
            at = j if j < n else j - 1
            problems.append(ProtocolError(  # verbatim
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(missing)}",
                param=f"messages.[{at}].role", index=at,
                explanation=f"assistant message {i} asked for "
                            f"{plural(len(ids), 'tool call')}; "
                            f"{', '.join(missing)} got no tool reply right after it: add one "
                            "tool message per call before anything else, or drop the group"))
        i = j
    return problems


def find_problems(messages: Any) -> list[ProtocolError]:
    """Every rule `messages` breaks, in order; an empty list means the API accepts it."""
    if not isinstance(messages, list):
        return [ProtocolError(  # reconstructed
            f"Invalid type for 'messages': expected an array, but got "
            f"{type(messages).__name__} instead.", param="messages", code="invalid_type",
            explanation="messages must be a list of dicts")]
    if not messages:
        return [ProtocolError(  # reconstructed, by analogy with the verbatim `tools: []` text
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.", param="messages", code="empty_array",
            explanation="send at least one message")]
    shape = [p for i, m in enumerate(messages) if (p := message_problem(i, m))]
    usable = [m if isinstance(m, Mapping) else {} for m in messages]
    return sorted(shape + _pairing_problems(usable), key=lambda p: (p.index or 0))


def validate_messages(messages: Any) -> None:
    """Raise ProtocolError for the first rule `messages` breaks, as the API would."""
    problems = find_problems(messages)
    if problems:
        raise problems[0]


def is_valid(messages: Any) -> bool:
    """True when the API would accept `messages`."""
    return not find_problems(messages)


# ----------------------------------------------------------------- requests

def _tool_problem(k: int, tool: Any) -> ProtocolError | None:
    fn = tool.get("function") if isinstance(tool, Mapping) else None
    if not isinstance(fn, Mapping) or not fn.get("name") or tool.get("type") != "function":
        return ProtocolError(  # reconstructed
            f"Missing required parameter: 'tools[{k}].function'.",
            param=f"tools[{k}].function", code="missing_required_parameter",
            explanation=f"tool {k} must look like {{'type': 'function', 'function': "
                        "{'name': ..., 'description': ..., 'parameters': {...}}}")
    params, name = fn.get("parameters"), fn["name"]
    if params is None:
        return None  # a function with no parameters is allowed
    bad = None
    if not isinstance(params, Mapping):
        bad = "In context=(), schema must be a JSON object."
    elif params.get("type") == "object" and "properties" not in params:
        bad = "In context=(), object schema missing properties."  # verbatim example
    else:
        try:
            jsonschema.Draft202012Validator.check_schema(dict(params))
        except jsonschema.SchemaError as e:  # wording of the detail is jsonschema's
            where = ", ".join(repr(p) for p in e.path)
            bad = f"In context=({where}), {e.message}."
    if bad:
        return ProtocolError(
            f"Invalid schema for function '{name}': {bad}",
            param=f"tools[{k}].function.parameters", code="invalid_function_parameters",
            explanation=f"tool {name!r} has a parameters schema the API rejects: an object "
                        "schema needs 'properties' (use {} for none)")
    return None


def _tool_choice_problem(choice: Any, tools: list | None) -> ProtocolError | None:
    if tools is None:
        return ProtocolError(  # verbatim
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' "
            "are specified.", param="tool_choice",
            explanation="drop tool_choice when you send no tools (as the agent's second call does)")
    if isinstance(choice, str):
        if choice in TOOL_CHOICE_STRINGS:
            return None
        return ProtocolError(  # verbatim
            f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and 'required'.",
            param="tool_choice", code="invalid_value",
            explanation="tool_choice is 'auto', 'none', 'required' or "
                        "{'type': 'function', 'function': {'name': ...}}")
    name = (choice.get("function") or {}).get("name") if isinstance(choice, Mapping) else None
    names = [t["function"]["name"] for t in tools]
    if name not in names:
        return ProtocolError(  # reconstructed
            f"Tool choice '{name}' not found in 'tools' parameter.", param="tool_choice",
            explanation=f"forced tool {name!r} is not among the tools sent: {', '.join(names)}")
    return None


def validate_request(body: Mapping) -> None:
    """Raise ProtocolError for the first thing in a request body the API would refuse
    (except the context window and the key, which depend on the model and the account)."""
    if not body.get("model"):
        raise ProtocolError("you must provide a model parameter",  # verbatim
                            explanation="pass model=... to chat.completions.create()")
    if "messages" not in body:
        raise ProtocolError("Missing required parameter: 'messages'.",  # reconstructed
                            param="messages", code="missing_required_parameter",
                            explanation="pass messages=[...]")
    tools = body.get("tools")
    if tools is not None:
        if isinstance(tools, list) and not tools:
            raise ProtocolError(  # verbatim
                "Invalid 'tools': empty array. Expected an array with minimum length 1, but "
                "got an empty array instead.", param="tools", code="empty_array",
                explanation="send tools=None (leave the key out) when there are no tools")
        for k, tool in enumerate(tools):
            if problem := _tool_problem(k, tool):
                raise problem
    if body.get("tool_choice") is not None:
        if problem := _tool_choice_problem(body["tool_choice"], tools):
            raise problem
    validate_messages(body["messages"])


def context_length_error(window: int, messages_tokens: int,
                         tools_tokens: int = 0) -> ProtocolError:
    """The API's context_length_exceeded error, with its real token arithmetic."""
    total = messages_tokens + tools_tokens
    if tools_tokens:  # verbatim shape
        detail = (f"{total} tokens ({messages_tokens} in the messages, {tools_tokens} in the "
                  "functions). Please reduce the length of the messages or functions.")
    else:  # verbatim shape
        detail = f"{total} tokens. Please reduce the length of the messages."
    return ProtocolError(
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {detail}", param="messages", code="context_length_exceeded",
        explanation=f"the request is {total - window} tokens over the window: trim the history")


# ----------------------------------------------------------------- conversion

def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def assistant_to_dict(message: Any) -> dict:
    """An assistant reply (SDK object, dict, or a look-alike from another provider)
    as a plain dict to store and send back: None content becomes "", tool calls are
    flattened to {id, type, function: {name, arguments}}."""
    content = _get(message, "content")
    item: dict = {"role": "assistant", "content": content if content is not None else ""}
    calls: Iterable = _get(message, "tool_calls") or []
    flat = [{"id": _get(c, "id"), "type": "function",
             "function": {"name": _get(_get(c, "function"), "name"),
                          "arguments": _get(_get(c, "function"), "arguments")}}
            for c in calls]
    if flat:
        item["tool_calls"] = flat
    return item
