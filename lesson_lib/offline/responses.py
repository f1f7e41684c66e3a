"""The Responses API and the Conversations API on the offline model, through the same brain.

    POST   /v1/responses                          create (stream=True: its event stream)
    GET    /v1/responses/{id}                     a stored response (?stream=true: a
                                                  background response's events again,
                                                  after ?starting_after=N)
    DELETE /v1/responses/{id}                     forget it
    GET    /v1/responses/{id}/input_items         the items it was answered from
    POST   /v1/responses/input_tokens             the input tokens a create would count
    POST   /v1/responses/compact                  the context compacted (compaction.py)
    POST   /v1/conversations                      create (with items, metadata)
    GET    /v1/conversations/{id}                 retrieve
    POST   /v1/conversations/{id}                 update its metadata
    DELETE /v1/conversations/{id}                 delete
    POST   /v1/conversations/{id}/items           add items
    GET    /v1/conversations/{id}/items           list them (limit, order, after)
    GET    /v1/conversations/{id}/items/{item}    one item
    DELETE /v1/conversations/{id}/items/{item}    remove one

How a response is made. The *context* is the stored chain (the context and output of the
response named by `previous_response_id`, or the items of `conversation`) followed by the
new `input`. It is converted to the Chat Completions messages the brain already reads:
`instructions` becomes a system message at the front (it is not carried over to the next
response, as the API documents), message items become messages, consecutive
`function_call` items one assistant message with `tool_calls`, each `function_call_output`
a `tool` message right after its call. The brain answers as it would the same Chat
Completions request (`structured` makes `text.format` and strict tools hold), and the
answer becomes output items: a `message` with one `output_text` part, or `function_call`
items. So the same question gets the same answer through either API, and
`usage.input_tokens` counts the whole context (tokens.py, as `prompt_tokens` would): it
grows with the conversation whether the client sends the history or the server keeps it.

`usage.input_tokens_details.cached_tokens` is the offline model's prompt cache, with the
real one's rules (the prompt-caching guide): the longest start of this prompt (tools,
instructions, then messages, whole messages at a time) that an earlier request of the
same state sent, up to where its instructions, its prompt or its answer ended; it counts
from 1024 tokens on, in steps of 128, else 0. A continued chain, a conversation, or a client resending its history all hit it.
Unlike the real cache it never expires while the state lives.

Determinism: ids and `created_at` are derived from a serial number the state gives out
(1, 2, 3 … in the order objects are made) and the request's bytes, never the clock or
chance; the same sequence of requests on a fresh state gives byte-identical answers.

Error texts: marked as in docs/protocol.md (verbatim, verbatim shape, reconstructed); the
Responses section there lists each with its source.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qs

from lesson_lib.offline import DEFAULT_CONTEXT_WINDOW, MODEL_ID, compaction, replies, structured
from lesson_lib.offline.ids import stand_in
from lesson_lib.offline.state import default_state
from lesson_lib.protocol import (
    ProtocolError,
    _says_json,
    _schema_problem,
    _tool_name_problem,
    invalid_type,
    invalid_value,
    missing,
)
from lesson_lib.tokens import count_message, count_tools

# The parameters of `client.responses.create()` in the installed SDK (tests check it).
REQUEST_FIELDS = frozenset({
    "access_programs", "background", "background_options", "context_management",
    "conversation", "image", "include", "input", "instructions", "max_output_tokens",
    "max_tool_calls", "metadata", "model", "moderation", "parallel_tool_calls",
    "previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier", "store",
    "stream", "stream_options", "temperature", "text", "tool_choice", "tools",
    "top_logprobs", "top_p", "truncation", "user"})
# The parameters of `client.responses.input_tokens.count()` (tests check it).
COUNT_FIELDS = frozenset({
    "conversation", "input", "instructions", "model", "parallel_tool_calls", "personality",
    "previous_response_id", "reasoning", "text", "tool_choice", "tools", "truncation"})
# The parameters of `client.responses.compact()` (tests check it).
COMPACT_FIELDS = frozenset({
    "image", "input", "instructions", "model", "previous_response_id", "prompt_cache_key",
    "prompt_cache_options", "prompt_cache_retention", "safety_identifier", "service_tier"})
# The value lists of the recorded texts (see docs/protocol.md).
ITEM_TYPES = (
    "additional_tools", "agent_message", "apply_patch_call", "apply_patch_call_output",
    "code_interpreter_call", "compaction", "compaction_trigger", "computer_call",
    "computer_call_output", "custom_tool_call", "custom_tool_call_output", "file_search_call",
    "function_call", "function_call_output", "image_generation_call", "item_reference",
    "local_shell_call", "local_shell_call_output", "mcp_approval_request",
    "mcp_approval_response", "mcp_call", "mcp_list_tools", "message", "multi_agent_call",
    "multi_agent_call_output", "program", "program_output", "reasoning", "shell_call",
    "shell_call_output", "tool_search_call", "tool_search_output", "web_search_call")
ROLES = ("assistant", "system", "developer", "user")
PART_TYPES = ("input_text", "input_image", "input_audio", "output_text", "refusal",
              "input_file", "computer_screenshot", "summary_text", "encrypted_content")
INPUT_PARTS = ("input_text", "input_image", "input_file", "scoped_content", "input_audio")
OUTPUT_PARTS = ("output_text", "refusal")
MESSAGE_FIELDS = ("type", "role", "content", "id", "status")  # and `phase`, for assistant
FORMAT_TYPES = ("json_object", "text", "json_schema")
TRUNCATIONS = ("auto", "disabled")
SERVICE_TIERS = ("auto", "default", "fast", "flex", "priority")
VERBOSITIES = ("low", "medium", "high")
INCLUDABLE = (
    "file_search_call.results", "web_search_call.results", "web_search_call.action.sources",
    "message.input_image.image_url", "computer_call_output.output.image_url",
    "code_interpreter_call.outputs", "reasoning.encrypted_content",
    "message.output_text.logprobs")
TOOL_CHOICES = ("none", "auto", "required")
MIN_OUTPUT_TOKENS = 16   # the real API's floor for max_output_tokens
MAX_METADATA = 16
CACHE_MIN, CACHE_STEP = 1024, 128  # the prompt cache: from 1024 tokens, in steps of 128
CREATED_BASE = 1_772_350_000  # 2026-03-01: created_at = base + 2 × the state's serial
PAGE_LIMIT, PAGE_MAX = 20, 100
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}


# ----------------------------------------------------------------- routing

def handle(method: str, path: str, raw: bytes, *, window: int = DEFAULT_CONTEXT_WINDOW,
           state: Any = None) -> replies.Reply:
    """Answer a request under /v1/responses or /v1/conversations (raises ProtocolError)."""
    state = state if state is not None else default_state()
    route, _, query = path.partition("?")
    parts = route.rstrip("/").split("/")[1:]
    if parts and parts[0] == "v1":
        parts = parts[1:]
    params = {k: v[-1] for k, v in parse_qs(query).items()}
    kind, rest = parts[0], parts[1:]
    if kind == "responses":
        if method == "POST" and not rest:
            return create_response(raw, window, state)
        if method == "POST" and rest == ["input_tokens"]:
            return count_input_tokens(raw, window, state)
        if method == "POST" and rest == ["compact"]:
            return replies.json_reply(200, compact_context(raw, window, state))
        if len(rest) == 1 and method == "GET" and params.get("stream") == "true":
            return resumed_stream(state, rest[0], params)
        if len(rest) == 1 and method == "GET":
            return replies.json_reply(200, stored_response(state, rest[0])["response"])
        if len(rest) == 1 and method == "DELETE":
            return replies.json_reply(200, delete_response(state, rest[0]))
        if len(rest) == 2 and rest[1] == "input_items" and method == "GET":
            return replies.json_reply(200, page(stored_response(state, rest[0])["context"], params))
    elif kind == "conversations":
        if method == "POST" and not rest:
            return replies.json_reply(200, create_conversation(state, replies.parse_body(raw)))
        if rest:
            if len(rest) == 1 and method == "GET":
                return replies.json_reply(200, conversation_of(state, rest[0])["conversation"])
            if len(rest) == 1 and method == "POST":
                return replies.json_reply(200, update_conversation(state, rest[0],
                                                               replies.parse_body(raw)))
            if len(rest) == 1 and method == "DELETE":
                return replies.json_reply(200, delete_conversation(state, rest[0]))
            if rest[1:2] == ["items"]:
                return conversation_items(method, state, rest[0], rest[2:], raw, params)
    raise ProtocolError(f"Invalid URL ({method} {path})", status=404)  # reconstructed


# ----------------------------------------------------------------- ids and time

def hex_id(prefix: str, stem: str, *seed: Any) -> str:
    """`prefix` + the object's 26-hex stem + 24 hex of `seed`: items share their response's
    stem, as the real ids do (resp_0bb27db6…, msg_0bb27db6…)."""
    tail = hashlib.sha256("|".join(map(str, (stem, *seed))).encode())
    return prefix + stem + tail.hexdigest()[:24]


def stem_of(serial: int, raw: bytes) -> str:
    return hashlib.sha256(b"%d\x00" % serial + raw).hexdigest()[:26]


def created_at(serial: int) -> int:
    return CREATED_BASE + 2 * serial


# ----------------------------------------------------------------- request checks

def edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def unknown_parameter(name: str, sent: Any = (), known: Any = REQUEST_FIELDS) -> ProtocolError:
    """`Unknown parameter: 'x'.`, with "Did you mean …?" for known names at most two edits
    away that were not sent (the nearest first, at most two)."""
    near = sorted((edit_distance(name, k), k) for k in known if k not in sent)
    near = [k for d, k in near if d <= 2][:2]
    hint = f" Did you mean {' or '.join(repr(k) for k in near)}?" if near else ""
    return ProtocolError(  # verbatim (recorded, kangminlee-maker/local-OAuth-CLI-API-adapter)
        f"Unknown parameter: '{name}'.{hint}", param=name, code="unknown_parameter",
        explanation=f"the Responses API has no {name!r} parameter" + (
            f": did you mean {' or '.join(near)}?" if near else
            " (Chat Completions options such as n, stop, seed and max_tokens are not "
            "Responses options: see client.responses.create's parameters)"))


def check_model(body: Mapping) -> None:
    model = body.get("model")
    if "model" not in body:
        raise missing("model", explanation="pass model=... to responses.create()")  # verbatim (recorded)
    if not isinstance(model, str):
        raise invalid_type("model", "a string", model)  # verbatim (recorded)
    if model != MODEL_ID:
        raise ProtocolError(  # verbatim for '' (recorded); verbatim shape for other names
            f"The requested model '{model}' does not exist.", param="model",
            code="model_not_found",
            explanation=f"the offline teaching model is called {MODEL_ID!r}: "
                        "pass model=lesson_lib.offline.MODEL_ID")


def check_fields(body: Mapping) -> None:
    """model, then input present, then no unknown top-level field (the recorded order)."""
    check_model(body)
    if "input" not in body:
        raise missing("input", explanation="pass input='…' (a string, or a list of "  # verbatim (recorded)
                                           "items); with previous_response_id or "
                                           "conversation, the new input only")
    for name in body:
        if name == "messages":
            raise ProtocolError(  # verbatim (recorded)
                "Unsupported parameter: 'messages'. In the Responses API, this parameter has "
                "moved to 'input'. Try again with the new parameter. See the API "
                "documentation for more information: "
                "https://platform.openai.com/docs/api-reference/responses/create.",
                code="unsupported_parameter",
                explanation="the Responses API takes input=[...] (and instructions=...), "
                            "not messages=[...]")
        if name not in REQUEST_FIELDS:
            raise unknown_parameter(name, body)


def check_part(where: str, part: Any, role: str) -> None:
    if not isinstance(part, Mapping):
        raise invalid_type(where, "an object", part)  # reconstructed
    kind = part.get("type")
    if kind is None:
        raise missing(f"{where}.type")  # reconstructed
    if kind not in PART_TYPES:
        raise invalid_value(kind, PART_TYPES, f"{where}.type")  # verbatim (recorded)
    allowed = OUTPUT_PARTS if role == "assistant" else INPUT_PARTS
    if kind not in allowed:
        raise invalid_value(  # verbatim (recorded)
            kind, allowed, where,
            explanation="a user, system or developer message holds input_text parts; an "
                        "assistant message holds output_text (or refusal) parts")
    field = {"input_text": "text", "output_text": "text", "refusal": "refusal"}.get(kind)
    if field and field not in part:
        raise missing(f"{where}.{field}")  # verbatim (recorded)
    if field and not isinstance(part[field], str):
        raise invalid_type(f"{where}.{field}", "a string", part[field])  # reconstructed


def check_message(where: str, item: Mapping) -> None:
    role = item.get("role")
    if role not in ROLES:
        raise invalid_value(  # verbatim (recorded), for a missing role too ('')
            role if isinstance(role, str) else "", ROLES, where,
            explanation="Responses input has no 'tool' messages: a tool's result is "
                        "{'type': 'function_call_output', 'call_id': ..., 'output': ...}"
            if role == "tool" else "a message's role is user, system, developer or assistant")
    for name in item:
        if name not in MESSAGE_FIELDS and not (name == "phase" and role == "assistant"):
            problem = unknown_parameter(f"{where}.{name}", known=())  # verbatim (recorded)
            if name == "tool_calls":
                problem.explanation = (
                    "a Chat Completions assistant message with tool_calls is, in the Responses "
                    "API, one {'type': 'function_call', 'call_id', 'name', 'arguments'} item "
                    "per call")
            raise problem
    if "content" not in item:
        raise missing(f"{where}.content")  # verbatim (recorded)
    content = item["content"]
    if isinstance(content, list):
        for k, part in enumerate(content):
            check_part(f"{where}.content[{k}]", part, role)
    elif not isinstance(content, str):
        raise invalid_type(f"{where}.content", "one of a string or array of input content",
                           content)  # reconstructed


def check_item(k: int, item: Any, where: str = "input") -> None:
    at = f"{where}[{k}]"
    if not isinstance(item, Mapping):
        raise invalid_type(at, "an input item", item)  # verbatim (recorded)
    kind = item.get("type", "message")
    if kind not in ITEM_TYPES:
        raise invalid_value(kind if isinstance(kind, str) else "", ITEM_TYPES, at)  # verbatim (recorded)
    if kind == "message":
        check_message(at, item)
    elif kind == "function_call":
        for name in ("call_id", "name", "arguments"):
            if name not in item:
                raise missing(f"{at}.{name}")  # reconstructed
            if not isinstance(item[name], str):
                raise invalid_type(f"{at}.{name}", "a string", item[name])  # reconstructed
    elif kind == "function_call_output":
        for name in ("call_id", "output"):
            if name not in item:
                raise missing(f"{at}.{name}")  # reconstructed
        if not isinstance(item["call_id"], str):
            raise invalid_type(f"{at}.call_id", "a string", item["call_id"])  # reconstructed
        if not isinstance(item["output"], (str, list)):
            raise invalid_type(f"{at}.output", "one of a string or array of input content",
                               item["output"])  # reconstructed
    elif kind == "item_reference" and not isinstance(item.get("id"), str):
        raise missing(f"{at}.id")  # reconstructed
    elif kind == "compaction":
        if "encrypted_content" not in item:
            raise missing(f"{at}.encrypted_content")  # reconstructed
        if not isinstance(item["encrypted_content"], str):
            raise invalid_type(f"{at}.encrypted_content", "a string",
                               item["encrypted_content"])  # reconstructed


def check_items(items: Any, where: str) -> None:
    if not isinstance(items, list):
        raise invalid_type(where, "an array of input items", items)  # reconstructed
    for k, item in enumerate(items):
        check_item(k, item, where)


def check_input(value: Any) -> None:
    if value is None:
        raise invalid_type("input", "a string", {})  # verbatim (recorded: null is "an object")
    if isinstance(value, str):
        return
    if not isinstance(value, list):
        raise invalid_type(  # verbatim (recorded)
            "input", "one of a string or array of input items", value,
            explanation="input is a string, or a list of items ({'role': 'user', 'content': "
                        "'…'}, function_call_output items, …)")
    for k, item in enumerate(value):
        check_item(k, item)
        if isinstance(item, Mapping) and item.get("type") == "compaction_trigger" and \
                k != len(value) - 1:
            raise ProtocolError(  # reconstructed (the SDK: "Must be the final input item.")
                "A compaction_trigger item must be the final input item.", param=f"input[{k}]",
                explanation="put {'type': 'compaction_trigger'} last: it compacts everything "
                            "before it")


def check_tool(k: int, tool: Any) -> None:
    at = f"tools[{k}]"
    if not isinstance(tool, Mapping):
        raise invalid_type(at, "an object", tool)  # reconstructed
    if tool.get("type") is None:
        raise missing(f"{at}.type")  # verbatim (recorded)
    if tool["type"] != "function":
        raise ProtocolError(  # ours: the real API runs these tools on its side
            f"The offline teaching model cannot run '{tool['type']}' tools: it only calls "
            "your own functions ('type': 'function').", param=f"{at}.type",
            code="unsupported_value",
            explanation="hosted tools (web search, file search, code interpreter, …) run on "
                        "OpenAI's servers; offline, give the model your own function")
    if "name" not in tool:
        raise missing(  # verbatim (recorded), for a Chat-shaped tool too
            f"{at}.name",
            explanation="a Responses tool is flat: {'type': 'function', 'name': ..., "
                        "'description': ..., 'parameters': {...}}, with no 'function' key"
            if "function" in tool else f"tool {k} needs a name")
    if problem := _tool_name_problem(k, tool["name"]):  # Chat's texts, the Responses path
        raise ProtocolError(  # (reconstructed)
            problem.message.replace(f"tools[{k}].function.name", f"{at}.name"),
            param=f"{at}.name", code=problem.code, explanation=problem.explanation)
    params = tool.get("parameters")
    if params is not None and (problem := _schema_problem(
            params, tool.get("strict") is True, f"function '{tool['name']}'",
            param=f"{at}.parameters", code="invalid_function_parameters")):
        raise problem  # the message as Chat's (verbatim); param reconstructed


def check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise invalid_type("tools", "an array of tools", tools)  # verbatim (recorded)
    for k, tool in enumerate(tools):
        check_tool(k, tool)


def check_tool_choice(choice: Any, tools: Any) -> None:
    if choice is None:
        return
    if isinstance(choice, str):
        if choice not in TOOL_CHOICES:
            raise invalid_value(choice, TOOL_CHOICES, "tool_choice")  # verbatim (recorded)
        return
    if not isinstance(choice, Mapping):
        raise invalid_type(  # verbatim (recorded)
            "tool_choice", "one of an object or 'none', 'auto', or 'required'", choice)
    if choice.get("type") != "function":
        raise ProtocolError(  # ours: the other kinds name tools the offline model lacks
            f"The offline teaching model supports tool_choice 'none', 'auto', 'required' or "
            f"{{'type': 'function', 'name': ...}}, not type {choice.get('type')!r}.",
            param="tool_choice.type", code="unsupported_value")
    if "name" not in choice:
        raise missing(  # verbatim (recorded), for a Chat-shaped choice too
            "tool_choice.name",
            explanation="in the Responses API a forced call is {'type': 'function', "
                        "'name': ...}, with no 'function' key")
    names = [t.get("name") for t in tools or [] if isinstance(t, Mapping)]
    if choice["name"] not in names:
        raise ProtocolError(  # reconstructed (Chat's)
            f"Tool choice '{choice['name']}' not found in 'tools' parameter.",
            param="tool_choice",
            explanation=f"forced tool {choice['name']!r} is not among the tools sent")


def check_text(text: Any) -> None:
    if text is None:
        return
    if not isinstance(text, Mapping):
        raise invalid_type("text", "an object", text)  # verbatim (recorded)
    for name in text:
        if name not in ("format", "verbosity"):
            raise unknown_parameter(f"text.{name}", known=())  # verbatim (recorded)
    if text.get("verbosity") is not None and text["verbosity"] not in VERBOSITIES:
        raise invalid_value(text["verbosity"], VERBOSITIES, "text.verbosity")  # verbatim (recorded)
    fmt = text.get("format")
    if fmt is None:
        return
    if not isinstance(fmt, Mapping):
        raise invalid_type("text.format", "an object", fmt)  # reconstructed
    if fmt.get("type") is None:
        raise missing("text.format.type")  # reconstructed
    if fmt["type"] not in FORMAT_TYPES:
        raise invalid_value(fmt["type"], FORMAT_TYPES, "text.format.type")  # verbatim (recorded)
    if fmt["type"] != "json_schema":
        return
    if not fmt.get("name"):
        raise missing(  # verbatim (recorded)
            "text.format.name",
            explanation="a json_schema format is flat here: {'type': 'json_schema', 'name': "
                        "..., 'schema': {...}, 'strict': True}")
    if "schema" not in fmt:
        raise missing("text.format.schema")  # reconstructed
    if problem := _schema_problem(fmt["schema"], fmt.get("strict") is True,
                                  f"response_format '{fmt['name']}'",
                                  param="text.format.schema", code="invalid_json_schema"):
        raise problem  # the message as Chat's (quoted); param reconstructed


def number_problem(name: str, value: Any, low: float, high: float | None,
                   integer: bool) -> ProtocolError | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return invalid_type(name, "an integer" if integer else "a decimal", value)  # verbatim (recorded)
    kind = "integer" if integer else "decimal"
    if value < low:
        return ProtocolError(  # verbatim shape (recorded for max_output_tokens, max_tool_calls)
            f"Invalid '{name}': {kind} below minimum value. Expected a value >= {low}, but got "
            f"{value} instead.", param=name, code=f"{kind}_below_min_value",
            explanation=f"{name} is at least {low}" + (
                " (the real API's floor for max_output_tokens)" if name == "max_output_tokens"
                else ""))
    if high is not None and value > high:
        return ProtocolError(  # reconstructed
            f"Invalid '{name}': {kind} above maximum value. Expected a value <= {high}, but "
            f"got {value} instead.", param=name, code=f"{kind}_above_max_value")
    return None


def check_options(body: Mapping) -> tuple[list, list, int]:
    """Every other option's type and range, in the recorded order where it is known;
    returns tools_of(body)."""
    include = body.get("include")
    if include is not None:
        if not isinstance(include, list):
            raise invalid_type("include", "an array of strings", include)  # reconstructed
        for k, value in enumerate(include):
            if value not in INCLUDABLE:
                raise invalid_value(value, INCLUDABLE, f"include[{k}]")  # verbatim (recorded)
    tools = tools_of(body)
    check_tool_choice(body.get("tool_choice"), body.get("tools"))
    check_metadata(body.get("metadata"))
    if problem := _text_verdict(dumps_key(body.get("text"))):
        raise problem
    for name, low, high, integer in (("temperature", 0, 2, False), ("top_p", 0, 1, False)):
        if problem := number_problem(name, body.get(name), low, high, integer):
            raise problem
    for name in ("parallel_tool_calls", "stream"):
        if body.get(name) is not None and not isinstance(body[name], bool):
            raise invalid_type(name, "a boolean", body[name])  # verbatim (recorded)
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, Mapping):
            raise invalid_type("stream_options", "an object", options)  # verbatim (recorded)
        for name in options:
            if name != "include_obfuscation":
                raise unknown_parameter(f"stream_options.{name}", known=())  # verbatim (recorded)
    if body.get("background") is not None and not isinstance(body["background"], bool):
        raise invalid_type("background", "a boolean", body["background"])  # verbatim (recorded)
    for name, low, high in (("max_output_tokens", MIN_OUTPUT_TOKENS, None),
                            ("max_tool_calls", 1, None)):
        if problem := number_problem(name, body.get(name), low, high, True):
            raise problem
    if body.get("reasoning") is not None and not isinstance(body["reasoning"], Mapping):
        raise invalid_type("reasoning", "an object", body["reasoning"])  # verbatim (recorded)
    for name in ("user", "safety_identifier", "prompt_cache_key"):
        if body.get(name) is not None and not isinstance(body[name], str):
            raise invalid_type(name, "a string", body[name])  # verbatim (recorded)
    truncation = body.get("truncation")
    if truncation is not None:
        if not isinstance(truncation, str):
            raise invalid_type("truncation", "one of 'auto' or 'disabled'", truncation)  # verbatim (recorded)
        if truncation not in TRUNCATIONS:
            raise invalid_value(truncation, TRUNCATIONS, "truncation")  # verbatim (recorded)
    if body.get("instructions") is not None and not isinstance(body["instructions"], str):
        raise invalid_type("instructions", "a string", body["instructions"])  # verbatim (recorded)
    if body.get("store") is not None and not isinstance(body["store"], bool):
        raise invalid_type("store", "a boolean", body["store"])  # verbatim (recorded)
    tier = body.get("service_tier")
    if tier is not None and tier not in SERVICE_TIERS:
        raise invalid_value(tier, SERVICE_TIERS, "service_tier")  # verbatim (recorded)
    if problem := number_problem("top_logprobs", body.get("top_logprobs"), 0, 20, True):
        raise problem  # type: verbatim (recorded); range reconstructed
    prompt = body.get("prompt")
    if prompt is not None and not isinstance(prompt, Mapping):
        raise invalid_type("prompt", "an object", prompt)  # verbatim (recorded)
    previous = body.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        raise invalid_type("previous_response_id", "a string", previous)  # verbatim (recorded)
    conversation = body.get("conversation")
    if conversation is not None and not isinstance(conversation, str) and not (
            isinstance(conversation, Mapping) and isinstance(conversation.get("id"), str)):
        raise invalid_type("conversation", "one of a string or an object with an 'id'",
                           conversation)  # reconstructed
    compaction.threshold_of(body)
    return tools


def dumps_key(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tools_of(body: Mapping) -> tuple[list, list, int]:
    """(the tools as Chat tools, as the response echoes them, their tokens); the API's
    refusal of the first bad one. Cached, as Chat's: lessons send the same tools every
    time, and checking JSON schemas is the slowest rule."""
    problem, found = _tools_verdict(dumps_key(body.get("tools")))
    if problem:
        raise problem
    return found


@lru_cache(maxsize=256)
def _tools_verdict(key: str) -> tuple[ProtocolError | None, tuple]:
    tools = json.loads(key)
    try:
        check_tools(tools)
    except ProtocolError as problem:
        return problem, ()
    chat = chat_tools(tools)
    echoed = [echoed_tool(t, c) for t, c in zip(tools or [], chat, strict=True)]
    return None, (chat, echoed, count_tools(chat or None, MODEL_ID))


@lru_cache(maxsize=256)
def _text_verdict(key: str) -> ProtocolError | None:
    try:
        check_text(json.loads(key))
    except ProtocolError as problem:
        return problem
    return None


# ----------------------------------------------------------------- stored state

def not_found_previous(response_id: str) -> ProtocolError:
    return ProtocolError(  # verbatim (maximhq/bifrost#2441; param and code as recorded)
        f"Previous response with id '{response_id}' not found.",
        param="previous_response_id", code="previous_response_not_found",
        explanation="that response is not stored: it was made with store=False, deleted, "
                    "or never existed (or was made on another server). Send the whole "
                    "history as input instead, or continue from a stored response")


def stored_response(state: Any, response_id: str) -> dict:
    record = state.get("response", response_id)
    if record is None:
        raise ProtocolError(  # reconstructed (the shape of the recorded conversation text)
            f"Response with id '{response_id}' not found.", status=404,
            explanation="only responses made with store=True (the default) are kept, until "
                        "they are deleted")
    return record


def resumed_stream(state: Any, response_id: str, params: Mapping) -> replies.Reply:
    """GET /v1/responses/{id}?stream=true&starting_after=N: the events of a response made
    with background=true and stream=true once more, those after sequence number N (all of
    them without it), as the API replays a background stream to a client that lost it.
    (The real replay expires after a while; the offline one lasts as the stored response.)"""
    after = params.get("starting_after", "-1")
    try:
        after = int(after)
    except ValueError:
        raise invalid_type("starting_after", "an integer", after) from None  # reconstructed
    record = stored_response(state, response_id)
    if not record["response"].get("background"):
        raise ProtocolError(  # reconstructed (a Responses-compatible service's text)
            "This response cannot be streamed because it was not created with "
            "background=true.", param="stream",
            explanation="only a background response (background=True, stream=True) can be "
                        "streamed again; retrieve this one without stream")
    if not record.get("streamed"):
        raise ProtocolError(  # reconstructed (the same service's text)
            "This response cannot be streamed because it was not created with stream=true "
            "or the stream TTL has expired.", param="stream",
            explanation="it was made with background=True but not stream=True: retrieve it "
                        "without stream (its status and output are there)")
    request_id = "req_" + hashlib.sha256(f"{response_id}|{after}".encode()).hexdigest()[:32]
    return 200, {**SSE_HEADERS, "x-request-id": request_id}, (
        event for event in events(record["response"], after) if event)


def delete_response(state: Any, response_id: str) -> dict:
    stored_response(state, response_id)
    state.delete("response", response_id)
    return {"id": response_id, "object": "response", "deleted": True}  # as the API reference


def conversation_id_of(value: Any) -> str | None:
    return value.get("id") if isinstance(value, Mapping) else value


def conversation_of(state: Any, conversation_id: str) -> dict:
    record = state.get("conversation", conversation_id)
    if record is None:
        raise ProtocolError(  # verbatim (recorded)
            f"Conversation with id '{conversation_id}' not found.", status=404,
            explanation="create it first with client.conversations.create(); a deleted "
                        "conversation is gone")
    return record


def resolve_context(body: Mapping, state: Any) -> tuple[list, dict | None]:
    """(the stored items a request continues from, the conversation record or None): the
    state phase, after every schema check, in the recorded order."""
    previous, conversation = body.get("previous_response_id"), body.get("conversation")
    if previous is not None and conversation is not None:
        raise ProtocolError(  # verbatim (recorded), its odd quoting and all
            "Mutually exclusive parameters: ''. Ensure you are only providing one of: "
            "'pre..._id' or 'conversation'.", code="mutually_exclusive_parameters",
            explanation="continue either a chain (previous_response_id) or a conversation, "
                        "not both")
    record = None
    if conversation is not None:
        record = conversation_of(state, conversation_id_of(conversation))
    prompt = body.get("prompt")
    if isinstance(prompt, Mapping) and prompt.get("id") is not None:
        raise ProtocolError(  # verbatim (recorded): the offline model stores no prompts
            f"Prompt with id '{prompt['id']}' not found.", status=404)
    if previous is not None:
        stored = state.get("response", previous)
        if stored is None:
            raise not_found_previous(previous)
        return stored["context"] + stored["response"]["output"], None
    return (record["items"] if record else []), record


# ----------------------------------------------------------------- items

def text_parts(content: Any, role: str) -> list[dict]:
    """A message's content as parts: a string becomes one input_text (output_text for
    the assistant) part."""
    if isinstance(content, list):
        return [dict(p) for p in content]
    if role == "assistant":
        return [{"type": "output_text", "annotations": [], "logprobs": [], "text": content}]
    return [{"type": "input_text", "text": content}]


def stored_item(item: Any, stem: str, k: int, tag: str = "in") -> dict:
    """An input item as the API keeps (and lists) it: a message with parts and an id."""
    if isinstance(item, str):
        item = {"role": "user", "content": item}
    kind = item.get("type", "message")
    if kind == "message":
        role = item["role"]
        shaped = {"id": item.get("id") or hex_id("msg_", stem, tag, k), "type": "message",
                  "role": role, "content": text_parts(item["content"], role),
                  "status": item.get("status") or "completed"}
        return shaped
    if kind == "function_call":
        return {"id": item.get("id") or hex_id("fc_", stem, tag, k), "type": "function_call",
                "status": item.get("status") or "completed", "arguments": item["arguments"],
                "call_id": item["call_id"], "name": item["name"]}
    if kind == "function_call_output":
        return {"id": item.get("id") or hex_id("fco_", stem, tag, k),
                "type": "function_call_output", "call_id": item["call_id"],
                "output": item["output"], "status": item.get("status") or "completed"}
    return {**item}


def part_text(part: Mapping) -> str | None:
    if part.get("type") in ("input_text", "output_text", "text"):
        return part.get("text")
    if part.get("type") == "refusal":
        return part.get("refusal")
    return None


def chat_content(content: Any) -> Any:
    """Message content for the brain: one text part as a plain string (as a Chat client
    sends it), several as Chat text parts; images and files it cannot see are left out."""
    if isinstance(content, str):
        return content
    texts = [t for t in (part_text(p) for p in content if isinstance(p, Mapping))
             if isinstance(t, str)]
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": t} for t in texts]


def output_text(output: Any) -> str:
    return output if isinstance(output, str) else " ".join(
        t for t in (part_text(p) for p in output if isinstance(p, Mapping)) if t)


def to_messages(items: list, check: bool = True) -> list[dict]:
    """Responses items as Chat Completions messages (see the module's docstring). With
    `check`, the API's two pairing refusals: a call with no output, an output with no call.
    A compaction item stands for everything before it (compaction.window)."""
    items = compaction.window(items)
    order: list[tuple[dict, list]] = []  # (message, the tool messages placed right after it)
    results: dict[str, list] = {}        # call_id → where its output goes
    answered: set[str] = set()
    calling: dict | None = None          # the assistant message calls are added to
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            message = {"role": item["role"], "content": chat_content(item["content"])}
            order.append((message, []))
            calling = message if item["role"] == "assistant" else None
        elif kind == "function_call":
            if calling is None:
                calling = {"role": "assistant", "content": None}
                order.append((calling, []))
            calling.setdefault("tool_calls", []).append(
                {"id": item["call_id"], "type": "function",
                 "function": {"name": item["name"], "arguments": item["arguments"]}})
            results[item["call_id"]] = order[-1][1]
        elif kind == "function_call_output":
            call_id, calling = item["call_id"], None
            if call_id not in results:
                if check:
                    raise ProtocolError(  # verbatim (continuedev/continue#10092)
                        f"No tool call found for function call output with call_id {call_id}.",
                        param="input",
                        explanation="a function_call_output answers a function_call: send the "
                                    "call too, or continue from the response that made it "
                                    "(previous_response_id)")
                continue
            if call_id in answered:
                continue  # a second output for one call: the first counts (reconstructed)
            answered.add(call_id)
            results[call_id].append({"role": "tool", "tool_call_id": call_id,
                                     "content": output_text(item["output"])})
        else:
            calling = None  # reasoning and hosted tools' items: nothing the brain reads
    if check:
        for call_id in results:
            if call_id not in answered:
                raise ProtocolError(  # verbatim (massgen/MassGen#590)
                    f"No tool output found for function call {call_id}.", param="input",
                    explanation="every function_call in the context needs its "
                                "function_call_output before the model can go on: run the "
                                "tool and send {'type': 'function_call_output', 'call_id': "
                                f"'{call_id}', 'output': ...}}")
    return [m for message, tools in order for m in (message, *tools)]


def resolve_references(items: list, state: Any) -> list:
    """item_reference items replaced by the stored items they name. An item's id starts
    with the stem of what made it (a response, or a conversation for the items added to
    it), so the one stored object that can hold it is read; nothing else is indexed."""
    resolved = []
    for item in items:
        if isinstance(item, Mapping) and item.get("type") == "item_reference":
            found = find_item(state, item["id"])
            if found is None:
                raise ProtocolError(  # verbatim shape (quoted from live answers in public code)
                    f"Item with id '{item['id']}' not found. Items are not persisted when "
                    "`store` is set to false.", status=404)
            resolved.append(found)
        else:
            resolved.append(item)
    return resolved


def find_item(state: Any, item_id: str) -> dict | None:
    stem = item_id.partition("_")[2][:26]
    tail = hashlib.sha256(stem.encode()).hexdigest()
    response = state.get("response", "resp_" + stem + tail[:24])
    conversation = state.get("conversation", "conv_" + stem + tail[:22])
    held = [*response["context"], *response["response"]["output"]] if response else \
        conversation["items"] if conversation else []
    return next((i for i in held if i.get("id") == item_id), None)


def chat_tools(tools: list | None) -> list[dict]:
    """Responses tools as Chat tools. A tool that does not say `strict` is strict when its
    schema allows it once `additionalProperties: false` is added (as the API echoes it),
    else not (reconstructed)."""
    converted = []
    for tool in tools or []:
        parameters = tool.get("parameters")
        strict = tool.get("strict")
        if strict is None:
            parameters, strict = default_strict(parameters)
        fn = {"name": tool["name"], "description": tool.get("description") or "",
              "parameters": parameters if parameters is not None else
              {"type": "object", "properties": {}}, "strict": bool(strict)}
        if tool.get("description") is None:
            del fn["description"]
        converted.append({"type": "function", "function": fn})
    return converted


def closed(schema: Any) -> Any:
    """`schema` with `additionalProperties: false` on every object that does not say (and
    `required: []` on one with no properties), as the API echoes a tool sent without
    `strict` (a captured answer)."""
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    for group in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(group), Mapping):
            out[group] = {k: closed(v) for k, v in schema[group].items()}
    if isinstance(schema.get("items"), Mapping):
        out["items"] = closed(schema["items"])
    if isinstance(schema.get("anyOf"), list):
        out["anyOf"] = [closed(s) for s in schema["anyOf"]]
    if schema.get("type") == "object" or "properties" in schema:
        out.setdefault("additionalProperties", False)
        if not schema.get("properties"):
            out.setdefault("required", [])
    return out


def default_strict(parameters: Any) -> tuple[Any, bool]:
    """(the parameters to use, whether strict) for a function sent without `strict`: strict,
    closed as above, when that makes a valid strict schema (every property required); else
    as sent and not strict (reconstructed: what the API does then is not captured)."""
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    candidate = closed(parameters)
    if isinstance(candidate, Mapping) and _schema_problem(candidate, True, "f") is None:
        return candidate, True
    return parameters, False


def echoed_tool(tool: Mapping, chat_tool: Mapping) -> dict:
    fn = chat_tool["function"]
    return {"type": "function", "description": tool.get("description"), "name": tool["name"],
            "parameters": fn["parameters"] if fn["strict"] else tool.get("parameters"),
            "strict": fn["strict"]}


def chat_tool_choice(choice: Any) -> Any:
    if isinstance(choice, Mapping):
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


def chat_format(text: Any) -> dict | None:
    fmt = text.get("format") if isinstance(text, Mapping) else None
    if not isinstance(fmt, Mapping) or fmt.get("type") in (None, "text"):
        return None
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    spec = {"name": fmt["name"], "schema": fmt["schema"], "strict": fmt.get("strict") is True}
    if fmt.get("description") is not None:
        spec["description"] = fmt["description"]
    return {"type": "json_schema", "json_schema": spec}


# ----------------------------------------------------------------- the prompt cache

def prefix_hashes(tools: list, messages: list, tools_tokens: int,
                  start: tuple[bytes, int] | None = None) -> list[tuple[str, int]]:
    """(hash, tokens) of each start of the prompt, whole messages at a time: the tools,
    then one message more each time (`start`: the digest and tokens before `messages`)."""
    digest, tokens = start or (hashlib.sha256(replies.dumps(tools)).digest(), tools_tokens)
    out = []
    for message in messages:
        key = repr(stand_in(message))  # messages are built with their keys in one order: a
        # fixed text (a long string stood for by its digest: repr would hold the GIL)
        digest = hashlib.sha256(digest + key.encode()).digest()
        tokens += message_tokens(key, message)
        out.append((digest.hex(), tokens))
    return out


_counted: dict[str, int] = {}


def message_tokens(key: str, message: Mapping) -> int:
    """count_message(message), remembered: a chain resends the same messages every turn."""
    found = _counted.get(key)
    if found is None:
        if len(_counted) > 50_000:
            _counted.clear()
        found = _counted[key] = count_message(message, MODEL_ID)
    return found


def answered_prefixes(tools: list, tools_tokens: int, asked: list, prefixes: list,
                      answered: list) -> list:
    """The prefixes of the prompt with the answer after it (what a continuation resends),
    reusing the prompt's own."""
    if answered[:len(asked)] != asked or not prefixes:
        return prefix_hashes(tools, answered, tools_tokens)
    last_hash, last_tokens = prefixes[-1]
    return prefixes + prefix_hashes(tools, answered[len(asked):], tools_tokens,
                                    (bytes.fromhex(last_hash), last_tokens))


def cached(tokens: int) -> int:
    """The real cache's rule: nothing under 1024 tokens, then whole blocks of 128."""
    return tokens // CACHE_STEP * CACHE_STEP if tokens >= CACHE_MIN else 0


# ----------------------------------------------------------------- truncation

def units(items: list) -> list[list]:
    """Items in the groups truncation drops together: a message alone; function calls
    with their outputs."""
    groups: list[list] = []
    by_call: dict[str, list] = {}
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call_output" and item.get("call_id") in by_call:
            by_call[item["call_id"]].append(item)
        elif kind == "function_call" and groups and groups[-1] and \
                groups[-1][-1].get("type") == "function_call":
            groups[-1].append(item)
            by_call[item["call_id"]] = groups[-1]
        else:
            groups.append([item])
            if kind == "function_call":
                by_call[item["call_id"]] = groups[-1]
    return groups


def context_error() -> ProtocolError:
    return ProtocolError(  # verbatim (dyad-sh/dyad#1672)
        "Your input exceeds the context window of this model. Please adjust your input and "
        "try again.", param="input", code="context_length_exceeded",
        explanation="the context (the stored chain or conversation, plus the new input) is "
                    "over the window: start a new chain, trim what you send, or pass "
                    "truncation='auto' to let the server drop the oldest items")


# ----------------------------------------------------------------- creating a response

def create_response(raw: bytes, window: int, state: Any) -> replies.Reply:
    """POST /v1/responses: check, resolve the stored context, ask the brain, store."""
    body = replies.parse_body(raw)
    check_fields(body)
    check_input(body["input"])
    tools, echoed, tools_tokens = check_options(body)
    earlier, fresh, head, conversation = context_of(body, state)
    if not fresh and body.get("previous_response_id") is None and conversation is None:
        raise ProtocolError(  # verbatim (recorded)
            "One of \"input\" or \"previous_response_id\" or 'prompt' or 'conversation' must "
            "be provided.", code="missing_required_parameter",
            explanation="say something: input='…'")
    messages = head + to_messages(earlier + fresh)
    asked: dict[str, Any] = {"model": body["model"], "messages": messages}
    if tools:
        asked["tools"] = tools
        if body.get("tool_choice") is not None:
            asked["tool_choice"] = chat_tool_choice(body["tool_choice"])
        if body.get("parallel_tool_calls") is False:
            asked["parallel_tool_calls"] = False
    if fmt := chat_format(body.get("text")):
        asked["response_format"] = fmt
        if fmt["type"] == "json_object" and not any(_says_json(m) for m in messages):
            raise ProtocolError(  # message as quoted in public code; param reconstructed
                "Response input messages must contain the word 'json' in some form to use "
                "'text.format' of type 'json_object'.", param="input",
                explanation="JSON mode needs the word 'json' in the input or instructions")
    prefixes = prefix_hashes(tools, messages, tools_tokens)
    input_tokens = (prefixes[-1][1] if prefixes else tools_tokens) + 3
    threshold = compaction.threshold_of(body)
    sealed = None  # (what a compaction item keeps, what it dropped, the tokens it read)
    trigger = bool(fresh) and fresh[-1].get("type") == "compaction_trigger"
    if threshold is not None or trigger:
        limit = threshold or window  # no compact_threshold: when the window would be passed
        if input_tokens > limit or trigger:
            kept_messages, _, gone, tail = compaction.compact(
                earlier + fresh, users_in_clear=False, budget=limit // 2)
            messages = head + to_messages(compaction.unfold(kept_messages, tail))
            asked["messages"] = messages
            prefixes = prefix_hashes(tools, messages, tools_tokens)
            before = input_tokens
            input_tokens = (prefixes[-1][1] if prefixes else tools_tokens) + 3
            sealed = (kept_messages, gone, before, tail,
                      input_tokens - 3 - tools_tokens - sum(
                          compaction.tokens(m) for m in head))
    if input_tokens > window and (body.get("truncation") != "auto" or sealed is not None):
        raise context_error()  # (what a compaction kept is not truncated further)
    dropped = 0
    if input_tokens > window:  # truncation='auto'
        full = earlier + fresh
        kept_items, messages, prefixes, input_tokens = truncated(full, head, tools,
                                                                 tools_tokens, window)
        dropped, asked["messages"] = len(full) - len(kept_items), messages
    answer = structured.reply(asked)
    message, finish, used = replies.limit_reply(dict(answer["message"]), answer["finish_reason"],
                                            body.get("max_output_tokens"))
    hit = cached(state.prefix_tokens([digest for digest, _ in prefixes]))
    said = to_messages(output_items(message, finish, ""), check=False)  # ids play no part
    seen = answered_prefixes(tools, tools_tokens, messages, prefixes, messages + said)
    ends = {n for n in (len(head), len(messages), len(seen)) if n}  # where a later prompt
    seen = [seen[n - 1] for n in sorted(ends)]  # can continue: instructions, prompt, answer
    with state.transaction():  # ids are made from the serial: taken and used in one step
        serial = state.next_serial()
        stem = stem_of(serial, raw)
        kept = [stored_item(item, stem, k) for k, item in enumerate(fresh)]
        context = (earlier + kept)[dropped:]  # what it is answered from: its input items
        response = response_object(body, stem, serial, message, finish, used, input_tokens,
                                   hit, echoed, conversation)
        if sealed is not None:  # the compaction item first, as the stream emits it
            response["output"].insert(0, compaction_item(stem, serial, *sealed))
        if body.get("store") is not False:
            state.put("response", response["id"], {"response": response, "context": context,
                                                   "streamed": body.get("stream") is True})
        if conversation is not None:  # read again: another request may have added items
            now = state.get("conversation", conversation["conversation"]["id"])
            if now is not None:
                state.put("conversation", now["conversation"]["id"], {
                    **now, "items": now["items"] + kept + response["output"]})
        state.remember_prefixes(seen)
    if body.get("stream"):
        request_id = "req_" + hashlib.sha256(response["id"].encode()).hexdigest()[:32]
        return 200, {**SSE_HEADERS, "x-request-id": request_id}, events(response)
    return replies.json_reply(200, response)


def compaction_item(stem: str, serial: int, kept: list, dropped: dict, read: int, tail: list,
                    kept_tokens: int, users_in_clear: bool = False) -> dict:
    """A `compaction` output item (ResponseCompactionItem: id, type, encrypted_content)."""
    sealed = compaction.payload(kept, dropped, read, users_in_clear, tail, kept_tokens)
    return {"id": hex_id("cmp_", stem, "cmp", 0), "type": "compaction",
            "encrypted_content": compaction.seal(sealed, created_at(serial))}


def compact_context(raw: bytes, window: int, state: Any) -> dict:
    """POST /v1/responses/compact (`client.responses.compact(...)`): the context (the
    chain of `previous_response_id`, then `input`) compacted into its user messages, in
    clear, followed by one compaction item that keeps the rest (compaction.py); a
    `response.compaction` object. Nothing is stored."""
    body = replies.parse_body(raw)
    check_model(body)
    for name in body:
        if name not in COMPACT_FIELDS:
            raise unknown_parameter(name, body, COMPACT_FIELDS)  # verbatim shape (create's)
    if body.get("input") is not None:
        check_input(body["input"])
    for name in ("instructions", "previous_response_id", "prompt_cache_key",
                 "safety_identifier"):
        if body.get(name) is not None and not isinstance(body[name], str):
            raise invalid_type(name, "a string", body[name])  # verbatim (recorded, create's)
    tier = body.get("service_tier")
    if tier is not None and tier not in SERVICE_TIERS:
        raise invalid_value(tier, SERVICE_TIERS, "service_tier")  # verbatim (recorded, create's)
    earlier, fresh, head, _ = context_of(body, state)
    items = earlier + fresh
    if not items:
        raise ProtocolError(  # reconstructed (create's recorded text, this endpoint's fields)
            "One of \"input\" or \"previous_response_id\" must be provided.",
            code="missing_required_parameter",
            explanation="give the context to compact: input=[...] (the items so far), or "
                        "previous_response_id=... (a stored response's chain)")
    messages = head + to_messages(items)
    prefixes = prefix_hashes([], messages, 0)
    read = (prefixes[-1][1] if prefixes else 0) + 3
    if read > window:
        raise context_error()  # the model must read the context to compact it
    kept, clear, dropped, tail = compaction.compact(items, users_in_clear=True, budget=None)
    unfolded = to_messages(compaction.unfold(kept, tail))
    written = prefix_hashes([], unfolded, 0)[-1][1] if unfolded else 0
    with state.transaction():
        serial = state.next_serial()
        stem = stem_of(serial, raw)
    output = [{"type": "message", "role": "user",
               "content": text_parts(item["content"], "user")} for item in clear]
    output.append(compaction_item(stem, serial, kept, dropped, read, tail, written,
                                  users_in_clear=True))
    return {"id": "resp_" + stem + hashlib.sha256(stem.encode()).hexdigest()[:24],
            "object": "response.compaction", "created_at": created_at(serial),
            "output": output,
            "usage": {"input_tokens": read,
                      "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
                      "output_tokens": written,
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": read + written}}


def context_of(body: Mapping, state: Any) -> tuple[list, list, list, dict | None]:
    """(the stored items the request continues, its new input items, its instructions as a
    system message (or nothing), the conversation record or None)."""
    earlier, conversation = resolve_context(body, state)
    given = body.get("input")
    fresh = [{"role": "user", "content": given}] if isinstance(given, str) and given else (
        resolve_references(list(given), state) if isinstance(given, list) else [])
    instructions = body.get("instructions")
    head = [{"role": "system", "content": instructions}] if instructions else []
    return earlier, fresh, head, conversation


def count_input_tokens(raw: bytes, window: int, state: Any) -> replies.Reply:
    """POST /v1/responses/input_tokens (`client.responses.input_tokens.count(...)`): the
    `usage.input_tokens` responses.create would report for the same request (the stored
    chain or conversation, the input, instructions and tools; after truncation='auto',
    what is kept), checked as create checks it, with nothing answered or stored. A context
    over the window is counted, not refused: counting is how a client finds out."""
    body = replies.parse_body(raw)
    for name in body:
        if name not in COUNT_FIELDS:
            raise unknown_parameter(name, body, COUNT_FIELDS)  # verbatim shape (create's)
    if "model" in body:  # optional here
        check_model(body)
    if body.get("input") is not None:
        check_input(body["input"])
    tools, _, tools_tokens = check_options(body)
    earlier, fresh, head, _ = context_of(body, state)
    messages = head + to_messages(earlier + fresh)
    prefixes = prefix_hashes(tools, messages, tools_tokens)
    tokens = (prefixes[-1][1] if prefixes else tools_tokens) + 3
    if tokens > window and body.get("truncation") == "auto":
        tokens = truncated(earlier + fresh, head, tools, tools_tokens, window)[3]
    return replies.json_reply(200, {"object": "response.input_tokens", "input_tokens": tokens})


def truncated(context: list, head: list, tools: list, tools_tokens: int,
              window: int) -> tuple[list, list, list, int]:
    """truncation='auto': the oldest groups of items dropped until the rest fits; the last
    group (the new turn) is never dropped (then the request is refused)."""
    groups = units(context)
    while len(groups) > 1:
        groups = groups[1:]
        kept = [item for group in groups for item in group]
        messages = head + to_messages(kept)
        prefixes = prefix_hashes(tools, messages, tools_tokens)
        tokens = (prefixes[-1][1] if prefixes else tools_tokens) + 3
        if tokens <= window:
            return kept, messages, prefixes, tokens
    raise context_error()


def output_items(message: Mapping, finish: str, stem: str) -> list[dict]:
    """The brain's (cut) reply as output items: a message with one output_text part, then
    one function_call per call."""
    items = []
    calls = message.get("tool_calls") or []
    content = message.get("content")
    if content is not None and (content or not calls):
        items.append({"id": hex_id("msg_", stem, "out", 0), "type": "message",
                      "status": "incomplete" if finish == "length" else "completed",
                      "content": [{"type": "output_text", "annotations": [], "logprobs": [],
                                   "text": content}],
                      "role": "assistant"})
    for k, call in enumerate(calls):
        items.append({"id": hex_id("fc_", stem, "out", k + 1), "type": "function_call",
                      "status": "completed", "arguments": call["function"]["arguments"],
                      "call_id": call["id"], "name": call["function"]["name"]})
    return items


def response_object(body: Mapping, stem: str, serial: int, message: Mapping, finish: str,
                    used: int, input_tokens: int, hit: int, echoed_tools: list,
                    conversation: dict | None) -> dict:
    """The `response` object, keys in the order the real API sends them (a captured
    answer, kangminlee-maker/local-OAuth-CLI-API-adapter's spec/captures)."""
    cut = finish == "length"
    when = created_at(serial)
    text = body.get("text") if isinstance(body.get("text"), Mapping) else {}
    reasoning = body.get("reasoning") or {}
    response = {
        "id": "resp_" + stem + hashlib.sha256(stem.encode()).hexdigest()[:24],
        "object": "response",
        "created_at": when,
        "status": "incomplete" if cut else "completed",
        "background": body.get("background") is True,
        "completed_at": None if cut else when + 1,
    }
    if conversation is not None:
        response["conversation"] = {"id": conversation["conversation"]["id"]}
    response.update({
        "error": None,
        "frequency_penalty": 0.0,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": body.get("max_tool_calls"),
        "model": body["model"],
        "output": output_items(message, finish, stem),
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "presence_penalty": 0.0,
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "safety_identifier": body.get("safety_identifier"),
        "service_tier": "default",
        "store": body.get("store") is not False,
        "temperature": float(body["temperature"]) if body.get("temperature") is not None
        else 1.0,
        "text": {"format": text.get("format") or {"type": "text"},
                 "verbosity": text.get("verbosity") or "medium"},
        "tool_choice": body.get("tool_choice") if body.get("tool_choice") is not None
        else "auto",
        "tools": echoed_tools,
        "top_logprobs": body.get("top_logprobs") or 0,
        "top_p": float(body["top_p"]) if body.get("top_p") is not None else 1.0,
        "truncation": body.get("truncation") or "disabled",
        "usage": {"input_tokens": input_tokens,
                  "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": hit},
                  "output_tokens": used,
                  "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + used},
        "user": body.get("user"),
        "metadata": dict(body.get("metadata") or {}),
    })
    return response


# ----------------------------------------------------------------- streaming

def events(response: Mapping, after: int = -1) -> Iterator[bytes]:
    """The response as the API's server-sent events (`event: TYPE` and `data: {…}` each),
    in a captured stream's order: created, in_progress; for each output item added, its
    parts and deltas, done; then completed (or incomplete). No `[DONE]` at the end.
    Those numbered `after` or less are left out (b"" in their place: nothing is sent)."""
    seq = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal seq
        seq += 1
        if seq - 1 <= after:
            return b""
        data = replies.dumps({"type": kind, **fields, "sequence_number": seq - 1})
        return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"

    start = {**response, "status": "in_progress", "completed_at": None,
             "incomplete_details": None, "output": [], "usage": None}
    yield event("response.created", response=start)
    yield event("response.in_progress", response=start)
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            yield event("response.output_item.added", output_index=index, item={
                **item, "status": "in_progress", "content": []})
            for k, part in enumerate(item["content"]):
                where = {"item_id": item["id"], "output_index": index, "content_index": k}
                yield event("response.content_part.added", **where, part={**part, "text": ""})
                for piece in replies.pieces(part["text"]):
                    yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
                yield event("response.output_text.done", **where, text=part["text"],
                            logprobs=[])
                yield event("response.content_part.done", **where, part=part)
        elif item["type"] == "compaction":  # whole at once: its content is opaque
            yield event("response.output_item.added", output_index=index, item=item)
        else:
            yield event("response.output_item.added", output_index=index, item={
                **item, "status": "in_progress", "arguments": ""})
            for piece in replies.pieces(item["arguments"]):
                yield event("response.function_call_arguments.delta", item_id=item["id"],
                            output_index=index, delta=piece)
            yield event("response.function_call_arguments.done", item_id=item["id"],
                        output_index=index, arguments=item["arguments"])
        yield event("response.output_item.done", output_index=index, item=item)
    done = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    yield event(done, response=response)


# ----------------------------------------------------------------- lists

def page(items: list, params: Mapping) -> dict:
    """A list page: `order` (desc by default), `after` (an item id), `limit` (20, at most
    100), as the API's cursor pages."""
    order = params.get("order", "desc")
    if order not in ("asc", "desc"):
        raise invalid_value(order, ("asc", "desc"), "order")  # reconstructed
    try:
        limit = int(params.get("limit", PAGE_LIMIT))
    except ValueError:
        raise invalid_type("limit", "an integer", params["limit"]) from None  # reconstructed
    if not 1 <= limit <= PAGE_MAX:
        raise ProtocolError(  # reconstructed
            f"Invalid 'limit': integer {'below minimum' if limit < 1 else 'above maximum'} "
            f"value. Expected a value {'>= 1' if limit < 1 else f'<= {PAGE_MAX}'}, but got "
            f"{limit} instead.", param="limit",
            code="integer_below_min_value" if limit < 1 else "integer_above_max_value")
    ordered = list(reversed(items)) if order == "desc" else list(items)
    after = params.get("after")
    if after is not None:
        ids = [item.get("id") for item in ordered]
        ordered = ordered[ids.index(after) + 1:] if after in ids else []
    data = ordered[:limit]
    return {"object": "list", "data": data,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
            "has_more": len(ordered) > limit}


# ----------------------------------------------------------------- conversations

def check_metadata(metadata: Any) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise invalid_type("metadata", "a metadata object", metadata)  # verbatim (recorded)
    if len(metadata) > MAX_METADATA:
        raise ProtocolError(  # verbatim (recorded)
            f"Invalid 'metadata': too many properties. Expected an object with at most "
            f"{MAX_METADATA} properties, but got an object with {len(metadata)} properties "
            "instead.", param="metadata", code="object_above_max_properties")
    return dict(metadata)


def new_items(state: Any, items: list, stem: str, tag: str = "in") -> list:
    return [stored_item(item, stem, k, tag) for k, item in enumerate(resolve_references(
        items, state))]


def create_conversation(state: Any, body: dict) -> dict:
    """POST /v1/conversations {items?, metadata?}."""
    for name in body:
        if name not in ("items", "metadata"):
            raise unknown_parameter(name, body, known=("items", "metadata"))  # verbatim shape
    items = body.get("items") or []
    check_items(items, "items")
    metadata = check_metadata(body.get("metadata"))
    with state.transaction():
        serial = state.next_serial()
        stem = stem_of(serial, replies.dumps(body))
        conversation = {"id": "conv_" + stem + hashlib.sha256(stem.encode()).hexdigest()[:22],
                        "object": "conversation", "created_at": created_at(serial),
                        "metadata": metadata}
        kept = new_items(state, items, stem)
        state.put("conversation", conversation["id"], {"conversation": conversation,
                                                       "items": kept})
    return conversation


def update_conversation(state: Any, conversation_id: str, body: dict) -> dict:
    """POST /v1/conversations/{id} {metadata}: only the metadata changes."""
    for name in body:
        if name != "metadata":
            raise unknown_parameter(name, body, known=("metadata",))  # verbatim shape
    if "metadata" not in body:
        raise missing("metadata")  # reconstructed
    metadata = check_metadata(body["metadata"])
    with state.transaction():
        record = conversation_of(state, conversation_id)
        conversation = {**record["conversation"], "metadata": metadata}
        state.put("conversation", conversation_id, {**record, "conversation": conversation})
    return conversation


def delete_conversation(state: Any, conversation_id: str) -> dict:
    conversation_of(state, conversation_id)
    state.delete("conversation", conversation_id)
    return {"id": conversation_id, "object": "conversation.deleted",  # reconstructed order
            "deleted": True}


def item_not_found(item_id: str) -> ProtocolError:
    return ProtocolError(f"Item with id '{item_id}' not found.", status=404)  # verbatim shape


def conversation_items(method: str, state: Any, conversation_id: str, rest: list, raw: bytes,
                       params: Mapping) -> replies.Reply:
    """/v1/conversations/{id}/items[/{item_id}]."""
    if not rest and method == "POST":
        body = replies.parse_body(raw)
        for name in body:
            if name != "items":
                raise unknown_parameter(name, body, known=("items",))  # verbatim shape
        if "items" not in body:
            raise missing("items")  # reconstructed
        check_items(body["items"], "items")
        with state.transaction():
            record = conversation_of(state, conversation_id)
            serial = state.next_serial()  # the ids: the conversation's stem, then this serial
            kept = new_items(state, body["items"], conversation_id[5:31], f"add{serial}")
            state.put("conversation", conversation_id, {**record,
                                                        "items": record["items"] + kept})
        return replies.json_reply(200, {"object": "list", "data": kept,
                                    "first_id": kept[0]["id"] if kept else None,
                                    "last_id": kept[-1]["id"] if kept else None,
                                    "has_more": False})
    if not rest and method == "GET":
        return replies.json_reply(200, page(conversation_of(state, conversation_id)["items"],
                                        params))
    if len(rest) == 1 and method in ("GET", "DELETE"):
        with state.transaction():
            record = conversation_of(state, conversation_id)
            found = [item for item in record["items"] if item.get("id") == rest[0]]
            if not found:
                raise item_not_found(rest[0])
            if method == "GET":
                return replies.json_reply(200, found[0])
            state.put("conversation", conversation_id, {
                **record, "items": [i for i in record["items"] if i.get("id") != rest[0]]})
        return replies.json_reply(200, record["conversation"])
    raise ProtocolError(f"Invalid URL ({method} /v1/conversations/{conversation_id}/items)",
                        status=404)  # reconstructed
