"""The Chat Completions API's rules about a request, checked before it is sent.

`validate_messages()` applies the ordering rules the real API enforces (the one
that bites agents: an assistant message with `tool_calls` must be followed,
immediately and only, by one `tool` message per call id). When a rule is broken
it raises `ProtocolError` carrying the real API's error text, `param` and
`code` (see docs/protocol.md), plus a one-line explanation for learners.

`find_problems()` is the non-raising form: it lists every problem it finds.
`validate_request()` checks a whole request body (its fields, tools, tool_choice,
response_format, messages); the offline model answers with it exactly as the real
API would.

Texts marked "verbatim" were copied from real API responses; texts marked
"reconstructed" are the closest known shape and may differ in wording.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import jsonschema

from lesson_lib.i18n import _, ngettext

KNOWN_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
TOOL_CHOICE_STRINGS = ("none", "auto", "required")
TOOL_TYPES = ("function", "custom")
CONTENT_PART_TYPES = ("text", "image_url", "input_audio", "refusal", "audio", "file")
RESPONSE_FORMAT_TYPES = ("text", "json_object", "json_schema")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME_MAX = 64

# Every top-level field the API accepts: the parameters of `chat.completions.create` in
# the `openai` SDK (tests/test_offline_strict.py checks the installed SDK adds none).
# Any other field gets "Unrecognized request argument supplied".
REQUEST_FIELDS = frozenset({
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "functions",
    "function_call", "response_format", "stream", "stream_options", "n", "max_tokens",
    "max_completion_tokens", "temperature", "top_p", "presence_penalty",
    "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "stop", "seed", "user",
    "safety_identifier", "metadata", "store", "service_tier", "modalities", "audio",
    "prediction", "reasoning_effort", "verbosity", "web_search_options", "moderation",
    "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
})


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


# ----------------------------------------------------------------- the API's sentences

def json_type(value: Any) -> str:
    """The JSON name of a value's type, as the API's texts say it ("an object", "null")."""
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"),
                       (str, "a string"), (Mapping, "an object"), (list, "an array")):
        if isinstance(value, kind):
            return name
    return type(value).__name__  # not JSON at all: only a Python caller can send it


def invalid_type(path: str, expected: str, value: Any, **kw: Any) -> ProtocolError:
    """`path` holds a value of the wrong JSON type (reconstructed, the API's pattern)."""
    return ProtocolError(f"Invalid type for '{path}': expected {expected}, but got "
                         f"{json_type(value)} instead.", param=path, code="invalid_type", **kw)


def missing(path: str, **kw: Any) -> ProtocolError:
    """A required field is absent (reconstructed, the API's pattern)."""
    return ProtocolError(f"Missing required parameter: '{path}'.", param=path,
                         code="missing_required_parameter", **kw)


def invalid_value(value: Any, supported: Iterable[str], path: str, **kw: Any) -> ProtocolError:
    """A value outside a fixed list (the shape of the real `invalid_value` texts)."""
    names = [f"'{s}'" for s in supported]
    listed = names[0] if len(names) == 1 else (
        f"{names[0]} and {names[1]}" if len(names) == 2
        else ", ".join(names[:-1]) + f", and {names[-1]}")
    return ProtocolError(f"Invalid value: '{value}'. Supported values are: {listed}.",
                         param=path, code="invalid_value", **kw)


# ----------------------------------------------------------------- messages

def _part_problem(i: int, k: int, part: Any) -> ProtocolError | None:
    """The first rule content part `k` of message `i` breaks, or None."""
    where = f"messages[{i}].content[{k}]"
    shape = _("each content part is a dict like {example}").format(
        example="{'type': 'text', 'text': '...'}")
    if not isinstance(part, Mapping):
        return invalid_type(where, "an object", part, index=i,  # reconstructed
                            explanation=_("message {i}, part {k}: {shape}").format(
                                i=i, k=k, shape=shape))
    kind = part.get("type")
    if kind is None:
        return missing(f"{where}.type", index=i,  # reconstructed
                       explanation=_("message {i}, part {k} has no 'type': {shape}").format(
                           i=i, k=k, shape=shape))
    if kind not in CONTENT_PART_TYPES:
        return invalid_value(kind, CONTENT_PART_TYPES, f"{where}.type", index=i,  # verbatim
                             explanation=_("message {i}, part {k}: {kind} is not a Chat "
                                           "Completions part type (input_text and the like "
                                           "belong to the Responses API)").format(
                                 i=i, k=k, kind=repr(kind)))
    if kind == "text" and not isinstance(part.get("text"), str):
        explain = _("message {i}, part {k}: a text part carries its string in 'text'").format(
            i=i, k=k)
        if "text" not in part:
            return missing(f"{where}.text", index=i, explanation=explain)  # reconstructed
        return invalid_type(f"{where}.text", "a string", part["text"], index=i,  # reconstructed
                            explanation=explain)
    return None


def _content_problem(i: int, m: Mapping) -> ProtocolError | None:
    role, content = m.get("role"), m.get("content")
    if role == "assistant" and content is None and (m.get("tool_calls") or
                                                    m.get("function_call")):
        return None  # a pure tool-call (or old function-call) request may have no text
    if content is None:
        return ProtocolError(  # verbatim
            "Invalid value for 'content': expected a string, got null.",
            param=f"messages.[{i}].content", index=i,
            explanation=_("message {i} ({role}) has content None: send a string (an "
                          "assistant message may only omit it when it carries "
                          "tool_calls)").format(i=i, role=role))
    if not isinstance(content, (str, list)):
        return invalid_type(  # reconstructed
            f"messages[{i}].content", "one of a string or array of objects", content, index=i,
            explanation=_("message {i} ({role}) content must be a string: json.dumps() it "
                          "first").format(i=i, role=role))
    for k, part in enumerate(content if isinstance(content, list) else []):
        if problem := _part_problem(i, k, part):
            return problem
    return None


def _named_problem(i: int, role: str, m: Mapping) -> ProtocolError | None:
    """A `tool` message must name its call, a `function` message its function."""
    if role == "tool" and not m.get("tool_call_id"):
        return ProtocolError(  # verbatim
            "Missing parameter 'tool_call_id': messages with role 'tool' must have a "
            "'tool_call_id'.", param=f"messages.[{i}].tool_call_id", index=i,
            explanation=_("message {i} (tool) must say which call it answers: set "
                          "tool_call_id to the id of that tool call").format(i=i))
    if role == "function" and not m.get("name"):
        return ProtocolError(  # verbatim
            "Missing parameter 'name': messages with role 'function' must have a 'name'.",
            param=f"messages.[{i}].name", index=i,
            explanation=_("message {i} (function, the old form of a tool result) must name "
                          "the function it answers; better, send a 'tool' message").format(i=i))
    return None


def message_problem(i: int, m: Any) -> ProtocolError | None:
    """The first rule message `i` breaks on its own (shape, role, content), or None."""
    if not isinstance(m, Mapping):
        return invalid_type(  # reconstructed
            f"messages[{i}]", "an object", m, index=i,
            explanation=_("message {i} must be a dict like {example}").format(
                i=i, example="{'role': 'user', 'content': '...'}"))
    role = m.get("role")
    if role is None:
        return missing(  # reconstructed
            f"messages[{i}].role", index=i,
            explanation=_("message {i} has no 'role': add one of "
                          "system/user/assistant/tool").format(i=i))
    if role not in KNOWN_ROLES:
        return invalid_value(  # reconstructed (the shape of the real invalid_value texts)
            role, KNOWN_ROLES, f"messages[{i}].role", index=i,
            explanation=_("message {i} has unknown role {role}").format(i=i, role=repr(role)))
    if problem := _named_problem(i, role, m):
        return problem
    if role == "assistant" and m.get("tool_calls") is not None:
        if problem := _tool_calls_problem(i, m["tool_calls"]):
            return problem
    return _content_problem(i, m)


def with_sdk_hint(problem: ProtocolError, message: Any) -> ProtocolError:
    """`problem`, its explanation ending with how to store an SDK reply when `message` is
    one (an object with a role, not a dict): memories and stored units both say it."""
    if not isinstance(message, Mapping) and hasattr(message, "role"):
        problem.explanation = _("{explanation}: store the SDK's reply as "
                                "assistant_to_dict(reply)").format(explanation=problem.explanation)
    return problem


def _call_problem(i: int, k: int, call: Any) -> ProtocolError | None:
    """The first rule tool call `k` of assistant message `i` breaks, or None."""
    fn = call.get("function") if isinstance(call, Mapping) else None
    args = fn.get("arguments") if isinstance(fn, Mapping) else None
    if args is not None and not isinstance(args, str):
        return invalid_type(  # reconstructed
            f"messages[{i}].tool_calls[{k}].function.arguments", "a string", args, index=i,
            explanation=_("message {i} tool call {k}: arguments must be a JSON string; "
                          "json.dumps() the dict").format(i=i, k=k))
    call = call if isinstance(call, Mapping) else {}
    for field, ok in (("id", isinstance(call.get("id"), str)),
                      ("type", call.get("type") is not None),
                      ("function", isinstance(fn, Mapping)),
                      ("function.name", isinstance(fn, Mapping) and fn.get("name")),
                      ("function.arguments", isinstance(args, str))):
        if not ok:
            return missing(  # reconstructed
                f"messages[{i}].tool_calls[{k}].{field}", index=i,
                explanation=_("message {i} tool call {k} needs {field} (type is 'function'; "
                              "arguments is a JSON string, not a dict): assistant_to_dict() "
                              "builds the right shape").format(i=i, k=k, field=field))
    return None


def _tool_calls_problem(i: int, calls: Any) -> ProtocolError | None:
    if isinstance(calls, list) and not calls:
        return ProtocolError(  # reconstructed, by analogy with the verbatim `tools: []` text
            f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum "
            "length 1, but got an empty array instead.",
            param=f"messages[{i}].tool_calls", code="empty_array", index=i,
            explanation=_("message {i} (assistant) has tool_calls=[]: leave the key out "
                          "when there are no calls").format(i=i))
    if not isinstance(calls, list):
        return invalid_type(  # reconstructed
            f"messages[{i}].tool_calls", "an array of objects", calls, index=i,
            explanation=_("message {i} (assistant): tool_calls must be a list of calls, "
                          "even for a single call").format(i=i))
    for k, call in enumerate(calls):
        if problem := _call_problem(i, k, call):
            return problem
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
                explanation=_("message {i} (tool, {id}) has no assistant tool_calls right "
                              "before it: trim or move the whole group, never one message "
                              "of it").format(i=i, id=m.get('tool_call_id'))))
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
                    explanation=_("messages {first} and {second} both answer {id}: keep one "
                                  "result per call (repair_messages() keeps the "
                                  "first)").format(first=answered[tid], second=j, id=tid)))
            elif tid not in ids:
                problems.append(ProtocolError(  # message verbatim; param reconstructed
                    f"Invalid parameter: 'tool_call_id' of '{tid}' not found in "
                    "'tool_calls' of previous message.",
                    param=f"messages.[{j}].tool_call_id", index=j,
                    explanation=_("message {j} answers {id}, but the assistant message {i} "
                                  "asked for {ids}: copy tool_call.id into "
                                  "tool_call_id").format(j=j, id=repr(tid), i=i,
                                                         ids=", ".join(map(str, ids)))))
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
                explanation=ngettext(
                    "assistant message {i} asked for {n} tool call; {ids} got no tool reply "
                    "right after it: add one tool message per call before anything else, or "
                    "drop the group",
                    "assistant message {i} asked for {n} tool calls; {ids} got no tool reply "
                    "right after it: add one tool message per call before anything else, or "
                    "drop the group", len(ids)).format(i=i, n=len(ids), ids=", ".join(missing))))
        i = j
    return problems


def find_problems(messages: Any) -> list[ProtocolError]:
    """Every rule `messages` breaks, in order; an empty list means the API accepts it."""
    if not isinstance(messages, list):
        return [invalid_type("messages", "an array of objects", messages,  # reconstructed
                             explanation=_("messages must be a list of dicts"))]
    if not messages:
        return [ProtocolError(  # reconstructed, by analogy with the verbatim `tools: []` text
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.", param="messages", code="empty_array",
            explanation=_("send at least one message"))]
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

def _schema_detail(schema: Any) -> str | None:
    """Why the API refuses a JSON schema ("In context=(…), …"), or None if it accepts it."""
    if not isinstance(schema, Mapping):
        return "In context=(), schema must be a JSON object."  # reconstructed
    if schema.get("type") == "object" and "properties" not in schema:
        return "In context=(), object schema missing properties."  # verbatim example
    try:
        jsonschema.Draft202012Validator.check_schema(dict(schema))
    except jsonschema.SchemaError as e:  # reconstructed: the detail is jsonschema's wording
        return f"In context={tuple(e.path)!r}, {e.message}."
    return None


def _subschemas(schema: Mapping) -> Iterator[tuple[tuple, Any]]:
    """(path, schema) of each schema nested one level inside `schema`."""
    for group in ("properties", "$defs", "definitions"):
        for key, sub in (schema.get(group) or {}).items():
            yield (group, key), sub
    if isinstance(schema.get("items"), Mapping):
        yield ("items",), schema["items"]
    for n, sub in enumerate(schema.get("anyOf") or []):
        yield ("anyOf", n), sub


def _strict_detail(schema: Any, context: tuple = ()) -> str | None:
    """Why strict mode refuses a (valid) schema: every object must be closed
    (`additionalProperties: false`) and must require each of its properties."""
    if not isinstance(schema, Mapping):
        return None
    if schema.get("type") == "object" or "properties" in schema:
        where = f"In context={context!r}, "
        if schema.get("additionalProperties") is not False:  # verbatim
            return where + "'additionalProperties' is required to be supplied and to be false."
        keys = list(schema.get("properties") or {})
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        rule = ("'required' is required to be supplied and to be an array including every "
                "key in properties.")
        if lacking := [k for k in keys if k not in required]:  # verbatim
            return where + f"{rule} Missing '{lacking[0]}'."
        if extra := [k for k in required if k not in keys]:  # verbatim
            return where + f"{rule} Extra required key '{extra[0]}' supplied."
    for path, sub in _subschemas(schema):
        if detail := _strict_detail(sub, context + path):
            return detail
    return None


def _schema_problem(schema: Any, strict: bool, what: str, **kw: Any) -> ProtocolError | None:
    """The API's refusal of a function's (or a response format's) schema, or None."""
    detail = _schema_detail(schema) or (_strict_detail(schema) if strict else None)
    if not detail:
        return None
    return ProtocolError(  # the detail is marked where it is written
        f"Invalid schema for {what}: {detail}",
        explanation=_("the API refuses the schema of {what}: an object schema needs "
                      "'properties' (use {{}} for none); with strict=True every object also "
                      "needs additionalProperties=False and every property in "
                      "'required'").format(what=what), **kw)


def _tool_name_problem(k: int, name: Any) -> ProtocolError | None:
    path = f"tools[{k}].function.name"
    if name is None:
        return missing(path, explanation=_("tool {k} has no name").format(k=k))  # reconstructed
    if not isinstance(name, str):
        return invalid_type(path, "a string", name,  # reconstructed
                            explanation=_("tool {k}: the name is a string").format(k=k))
    if not TOOL_NAME.fullmatch(name):
        return ProtocolError(  # verbatim (brekkylab/ailoy#109)
            f"Invalid '{path}': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.", param=path, code="invalid_value",
            explanation=_("tool name {name}: letters, digits, _ and - only (no spaces, "
                          "dots or slashes)").format(name=repr(name)))
    if len(name) > TOOL_NAME_MAX:
        return ProtocolError(  # reconstructed (the shape of the verbatim description text)
            f"Invalid '{path}': string too long. Expected a string with maximum length "
            f"{TOOL_NAME_MAX}, but got a string with length {len(name)} instead.",
            param=path, code="string_above_max_length",
            explanation=_("tool name {name}…: at most {most} characters").format(
                name=repr(name[:20]), most=TOOL_NAME_MAX))
    return None


def _tool_problem(k: int, tool: Any) -> ProtocolError | None:
    shape = ("{'type': 'function', 'function': {'name': ..., 'description': ..., "
             "'parameters': {...}}}")
    if not isinstance(tool, Mapping):
        return invalid_type(f"tools[{k}]", "an object", tool,  # reconstructed
                            explanation=_("tool {k} must be a dict like {shape}").format(
                                k=k, shape=shape))
    if tool.get("type") is None:
        return missing(f"tools[{k}].type",  # reconstructed
                       explanation=_("tool {k} has no 'type': it looks like {shape}").format(
                           k=k, shape=shape))
    if tool["type"] not in TOOL_TYPES:
        return invalid_value(tool["type"], TOOL_TYPES, f"tools[{k}].type",  # reconstructed
                             explanation=_("tool {k} looks like {shape}").format(
                                 k=k, shape=shape))
    fn = tool.get("function")
    if not isinstance(fn, Mapping):
        return missing(  # reconstructed
            f"tools[{k}].function", explanation=_("tool {k} must look like {shape}").format(
                k=k, shape=shape))
    if problem := _tool_name_problem(k, fn.get("name")):
        return problem
    params = fn.get("parameters")
    if params is None:
        return None  # a function with no parameters is allowed
    return _schema_problem(params, fn.get("strict") is True, f"function '{fn['name']}'",
                           param=f"tools[{k}].function.parameters",
                           code="invalid_function_parameters")


def _tools_problem(tools: Any) -> ProtocolError | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return invalid_type("tools", "an array of objects", tools,  # reconstructed
                            explanation=_("tools is a list of tool dicts, even for one tool"))
    if not tools:
        return ProtocolError(  # verbatim
            "Invalid 'tools': empty array. Expected an array with minimum length 1, but "
            "got an empty array instead.", param="tools", code="empty_array",
            explanation=_("send tools=None (leave the key out) when there are no tools"))
    for k, tool in enumerate(tools):
        if problem := _tool_problem(k, tool):
            return problem
    return None


def _tool_choice_problem(choice: Any, tools: list | None) -> ProtocolError | None:
    if choice is None:
        return None
    if tools is None:
        return ProtocolError(  # verbatim
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' "
            "are specified.", param="tool_choice",
            explanation=_("drop tool_choice when you send no tools (as the agent's second "
                          "call does)"))
    if isinstance(choice, str):
        if choice in TOOL_CHOICE_STRINGS:
            return None
        return invalid_value(  # verbatim
            choice, TOOL_CHOICE_STRINGS, "tool_choice",
            explanation=_("tool_choice is 'auto', 'none', 'required' or {example}").format(
                example="{'type': 'function', 'function': {'name': ...}}"))
    name = (choice.get("function") or {}).get("name") if isinstance(choice, Mapping) else None
    names = [t["function"]["name"] for t in tools]
    if name not in names:
        return ProtocolError(  # reconstructed
            f"Tool choice '{name}' not found in 'tools' parameter.", param="tool_choice",
            explanation=_("forced tool {name} is not among the tools sent: {names}").format(
                name=repr(name), names=", ".join(names)))
    return None


def _response_format_problem(fmt: Any) -> ProtocolError | None:
    if fmt is None:
        return None
    if not isinstance(fmt, Mapping):
        return invalid_type("response_format", "an object", fmt,  # reconstructed
                            explanation=_("response_format is a dict: {example}").format(
                                example="{'type': 'json_object'}"))
    if fmt.get("type") is None:
        return missing("response_format.type",  # reconstructed
                       explanation=_("response_format needs a 'type': text, json_object or "
                                     "json_schema"))
    if fmt["type"] not in RESPONSE_FORMAT_TYPES:
        return invalid_value(fmt["type"], RESPONSE_FORMAT_TYPES,  # reconstructed
                             "response_format.type",
                             explanation=_("response_format's type is text, json_object or "
                                           "json_schema"))
    if fmt["type"] != "json_schema":
        return None
    spec = fmt.get("json_schema")
    if not isinstance(spec, Mapping) or not spec.get("name"):
        where = "response_format.json_schema" + (".name" if isinstance(spec, Mapping) else "")
        return missing(where,  # reconstructed
                       explanation=_("a json_schema format looks like {example}").format(
                           example="{'type': 'json_schema', 'json_schema': {'name': ..., "
                                   "'schema': {...}}}"))
    if spec.get("schema") is None:
        return None
    return _schema_problem(  # message verbatim; code as in captured logs
        spec["schema"], spec.get("strict") is True, f"response_format '{spec['name']}'",
        param="response_format", code="invalid_json_schema")


def _says_json(message: Any) -> bool:
    content = message.get("content") if isinstance(message, Mapping) else None
    parts = content if isinstance(content, list) else [{"text": content}]
    return any(isinstance(p, Mapping) and "json" in str(p.get("text") or "").lower()
               for p in parts)


def check_fields(body: Mapping) -> None:
    """Raise for a missing `model` or `messages`, or a field the API does not know."""
    if not body.get("model"):
        raise ProtocolError("you must provide a model parameter",  # verbatim
                            explanation=_("pass model=... to chat.completions.create()"))
    if unknown := sorted(set(body) - REQUEST_FIELDS):
        raise ProtocolError(  # verbatim, one field and several (mushan0x0/AI0x0.com#360)
            f"Unrecognized request argument{'s' if len(unknown) > 1 else ''} supplied: "
            f"{', '.join(unknown)}",
            explanation=_("Chat Completions has no {names} parameter: check the spelling "
                          "(another provider's or the Responses API's options do not belong "
                          "here)").format(names=", ".join(map(repr, unknown))))
    if "messages" not in body:
        raise missing("messages", explanation=_("pass messages=[...]"))  # reconstructed


def check_tools(tools: Any, tool_choice: Any) -> None:
    """Raise for the first problem of `tools`, then of `tool_choice`."""
    if problem := _tools_problem(tools) or _tool_choice_problem(tool_choice, tools):
        raise problem


def check_response_format(response_format: Any) -> None:
    """Raise for a response_format the API refuses (its shape, its JSON schema)."""
    if problem := _response_format_problem(response_format):
        raise problem


def check_json_mode(body: Mapping) -> None:
    """JSON mode (`response_format` `json_object`) needs the word "json" in a message."""
    fmt = body.get("response_format")
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_object" and not any(
            _says_json(m) for m in body["messages"]):
        raise ProtocolError(  # verbatim
            "'messages' must contain the word 'json' in some form, to use 'response_format' "
            "of type 'json_object'.", param="messages",
            explanation=_("JSON mode needs a message that asks for JSON: say 'answer in "
                          "JSON' in the system or user message"))


def validate_request(body: Mapping) -> None:
    """Raise ProtocolError for the first thing in a request body the API would refuse
    (except the options, the context window and the key, which the offline model checks
    in offline/api.py)."""
    check_fields(body)
    check_tools(body.get("tools"), body.get("tool_choice"))
    check_response_format(body.get("response_format"))
    validate_messages(body["messages"])
    check_json_mode(body)


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
        explanation=_("the request is {over} tokens over the window: trim the "
                      "history").format(over=total - window))


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
