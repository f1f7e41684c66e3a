"""The offline model's HTTP API: one pure function from a request to a response.

`handle(method, path, headers, body, context_window=...)` answers
`POST /v1/chat/completions`, `POST /v1/embeddings`, `GET /v1/models` and
`GET /v1/models/{id}` with the real API's statuses and JSON shapes (docs/protocol.md);
the Responses and Conversations APIs (`/v1/responses…`, `/v1/conversations…`) are
answered by responses.py, from the stored state `state` holds. The embeddings are
lesson_lib.vectors.offline_vectors()'s. The reply itself comes from
`brain.reply()`, made to honour `response_format` and strict tools by
`structured.reply()`; this module adds what the real service adds around it: request
checks (`protocol.validate_request`, the options, the context window, the model name,
the key),
ids, `usage`, `max_tokens` cuts and server-sent events for `stream=True`.

The answer depends only on the request, so the same request twice gives
byte-identical bodies: ids and `created` are derived from the body, not the clock.
(One exception: a structured answer's `format: date` value for "Friday" or "tomorrow"
counts from `lesson_lib.clock`, which tests and notebooks freeze.)
The in-process transport and the localhost server both call `handle()`.
Error texts marked "verbatim" come from real responses; "reconstructed" ones are
the closest known shape.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
import traceback
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from lesson_lib.offline import BAD_KEY_PREFIX, DEFAULT_CONTEXT_WINDOW, MODEL_ID, structured
from lesson_lib.offline.ids import make_id
from lesson_lib.offline.replies import (  # noqa: F401  (re-exported: api.Reply, api.json_reply…)
    JSON_HEADERS,
    NO_RETRY,
    Reply,
    dumps,
    error_reply,
    json_reply,
    limit_reply,
    parse_body,
    pieces,
)
from lesson_lib.protocol import (
    ProtocolError,
    check_fields,
    check_json_mode,
    check_response_format,
    check_tools,
    context_length_error,
    invalid_type,
    invalid_value,
    missing,
    validate_messages,
)
from lesson_lib.tokens import count_messages, count_tools, encoding_for

CREATED_BASE = 1_767_225_600      # 2026-01-01T00:00:00Z; `created` = base + a hash of the body
CREATED_SPAN = 365 * 24 * 3600    # so `created` looks like a plausible date in 2026
MODEL_CREATED = 1_767_225_600
OWNED_BY = "lesson-lib"
MAX_N = 128                       # the real API's limit on `n`
MAX_STOP = 4                      # the real API's limit on `stop` sequences
INTEGER_OPTIONS = (("n", 1, MAX_N), ("max_tokens", 1, None), ("max_completion_tokens", 1, None))
DECIMAL_OPTIONS = (("temperature", 0, 2), ("top_p", 0, 1), ("presence_penalty", -2, 2),
                   ("frequency_penalty", -2, 2))  # (name, lowest, highest), as the API's docs
BOOLEAN_OPTIONS = ("stream", "parallel_tool_calls", "logprobs", "store")
STREAM_ONLY = ("stream", "stream_options")  # how a reply is delivered, not what it says

SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
STATEFUL = tuple(f"{v}/{name}" for v in ("/v1", "") for name in ("responses", "conversations"))


# ----------------------------------------------------------------- entry point

def handle(method: str,              # "GET", "POST" or "DELETE"
           path: str,                # e.g. "/v1/chat/completions" (a query string is ignored)
           headers: Mapping[str, str],  # request headers, any case
           body: bytes,              # the raw request body (b"" for GET)
           *, context_window: int = DEFAULT_CONTEXT_WINDOW,
           state: Any = None) -> Reply:  # stored responses (responses.py); None: the default
    """Answer one HTTP request as the real API would: (status, headers, body bytes or,
    for `stream=True`, an iterator of server-sent-event bytes)."""
    route = path.split("?", 1)[0].rstrip("/")
    try:
        check_key(headers)
        if method == "POST" and route == "/v1/chat/completions":
            return chat_completion(body, context_window)
        if route.startswith(STATEFUL):  # the Responses and Conversations APIs
            from lesson_lib.offline import responses  # noqa: PLC0415 (it imports this module)

            return responses.handle(method, path, body, window=context_window, state=state)
        if method == "POST" and route in ("/v1/embeddings", "/embeddings"):
            return embeddings(body)
        if method == "GET" and route in ("/v1/models", "/models"):
            return json_reply(200, {"object": "list", "data": [model_object(MODEL_ID)]})
        if method == "GET" and route.startswith(("/v1/models/", "/models/")):
            return json_reply(200, model_object(check_model(route.rsplit("/", 1)[1])))
        raise ProtocolError(f"Invalid URL ({method} {path})", status=404)  # reconstructed
    except ProtocolError as error:
        return error_reply(error)
    except Exception:  # a bug in the offline model answers like a real server's bug
        traceback.print_exc(file=sys.stderr)
        return error_reply(server_error())


# ----------------------------------------------------------------- request checks

def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return ""


def mask_key(key: str) -> str:
    """A key as the API prints it: first 8 characters, one `*` per hidden one, last 4."""
    if len(key) <= 12:  # reconstructed for short keys: never show more than half
        return key[: len(key) // 2] + "*" * (len(key) - len(key) // 2)
    return key[:8] + "*" * (len(key) - 12) + key[-4:]


def check_key(headers: Mapping[str, str],
              required: str | None = None) -> None:  # a served classroom's key; None: any
    """Any key is accepted (third-party clients send their own), except none at all and
    the lesson's deliberately bad ones (starting with BAD_KEY_PREFIX): both get the real 401.
    With `required` (a server shared beyond this machine), only that key is accepted."""
    key = _header(headers, "authorization").removeprefix("Bearer ").strip()
    if key in ("", "Bearer"):  # no header, or "Bearer" and nothing after it
        raise ProtocolError(  # verbatim opening (verified); the rest as widely quoted
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or "
            "as the password field (with blank username) if you're accessing the API from "
            "your browser and are prompted for a username. You can obtain an API key from "
            "https://platform.openai.com/account/api-keys.", status=401,
            explanation="send a header 'Authorization: Bearer KEY' (offline, any key but "
                        f"'{BAD_KEY_PREFIX}…' works)" if required is None else
                        "send a header 'Authorization: Bearer KEY' with the key of this server")
    wrong = required is not None and not hmac.compare_digest(key.encode(), required.encode())
    if key.startswith(BAD_KEY_PREFIX) or wrong:
        raise ProtocolError(  # verbatim shape
            f"Incorrect API key provided: {mask_key(key)}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.", code="invalid_api_key", status=401,
            explanation="the key was refused: check OPENAI_API_KEY (offline, any key but "
                        f"'{BAD_KEY_PREFIX}…' works)" if not wrong else
                        "this server takes one key only: use the key its owner gave you")


def check_model(model: Any) -> str:
    """The model name, if it is the offline model's; else the real 404."""
    if model != MODEL_ID:
        raise ProtocolError(  # verbatim
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found", status=404,
            explanation=f"the offline teaching model is called {MODEL_ID!r}: "
                        "pass model=lesson_lib.offline.MODEL_ID")
    return model


def check_request(body: Mapping) -> int:
    """`protocol.validate_request(body)`, returning the tools' token count. The verdict on
    tools, tool_choice and response_format, and that count, are cached: lessons send the
    same tools on every call, and checking their JSON schemas is the slowest rule.
    Messages are checked every time."""
    check_fields(body)
    problem, tools_tokens = _schemas_verdict(json.dumps(
        [body.get("tools"), body.get("tool_choice"), body.get("response_format")],
        separators=(",", ":")))
    if problem:
        raise problem
    validate_messages(body["messages"])
    check_json_mode(body)
    return tools_tokens


@lru_cache(maxsize=256)
def _schemas_verdict(key: str) -> tuple[ProtocolError | None, int]:
    tools, tool_choice, response_format = json.loads(key)
    try:
        check_tools(tools, tool_choice)
        check_response_format(response_format)
    except ProtocolError as problem:
        return problem, 0
    return None, count_tools(tools, MODEL_ID)


def _number_problem(name: str, value: Any, low: float, high: float | None,
                    kind: str) -> ProtocolError | None:
    """The API's texts for a number option (`kind` "integer" or "decimal") of the wrong
    type or out of range (reconstructed)."""
    if value is None:
        return None
    wanted = int if kind == "integer" else (int, float)
    if isinstance(value, bool) or not isinstance(value, wanted):  # reconstructed
        return invalid_type(name, "an integer" if kind == "integer" else "a number", value)
    if value < low:
        return ProtocolError(  # reconstructed
            f"Invalid '{name}': {kind} below minimum value. Expected a value >= {low}, but "
            f"got {value} instead.", param=name, code=f"{kind}_below_min_value")
    if high is not None and value > high:
        return ProtocolError(  # reconstructed
            f"Invalid '{name}': {kind} above maximum value. Expected a value <= {high}, but "
            f"got {value} instead.", param=name, code=f"{kind}_above_max_value")
    return None


def check_options(body: Mapping) -> None:
    """The options' types and ranges, then stream_options only with stream. The model
    honours n, max_tokens and stream(_options); sampling options (temperature, seed,
    top_p, user, metadata, ...) are checked and, as the model is deterministic, change
    nothing."""
    numbers = [(*option, "integer") for option in INTEGER_OPTIONS] + [
        (*option, "decimal") for option in DECIMAL_OPTIONS]
    for name, low, high, kind in numbers:
        if problem := _number_problem(name, body.get(name), low, high, kind):
            raise problem
    for name in BOOLEAN_OPTIONS:
        if body.get(name) is not None and not isinstance(body[name], bool):
            raise invalid_type(name, "a boolean", body[name])  # reconstructed
    check_stop(body.get("stop"))
    if body.get("stream_options") is not None and not body.get("stream"):
        raise ProtocolError(  # reconstructed
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            param="stream_options", explanation="pass stream=True, or drop stream_options")


def check_stop(stop: Any) -> None:
    """`stop`: a string or at most MAX_STOP strings (the model writes no stop sequence, so
    it never needs to cut at one)."""
    if stop is None or isinstance(stop, str):
        return
    if not isinstance(stop, list):
        raise invalid_type("stop", "one of a string or array of strings", stop)  # reconstructed
    if len(stop) > MAX_STOP:
        raise ProtocolError(  # verbatim (continuedev/continue#2461)
            f"Invalid 'stop': array too long. Expected an array with maximum length {MAX_STOP}, "
            f"but got an array with length {len(stop)} instead.", param="stop",
            code="array_above_max_length",
            explanation=f"stop takes at most {MAX_STOP} sequences: keep the ones that matter")
    for k, sequence in enumerate(stop):
        if not isinstance(sequence, str):
            raise invalid_type(f"stop[{k}]", "a string", sequence)  # reconstructed


def check_context(body: Mapping, window: int, tools_tokens: int) -> int:
    """The request's message tokens; the real 400 when messages + tools exceed the window."""
    messages_tokens = count_messages(body["messages"], MODEL_ID)
    if messages_tokens + tools_tokens > window:
        raise context_length_error(window, messages_tokens, tools_tokens)
    return messages_tokens


# ----------------------------------------------------------------- the completion

def chat_completion(raw: bytes, window: int) -> Reply:
    """POST /v1/chat/completions: check the request, ask the brain, wrap its answer."""
    body = parse_body(raw)
    if body.get("model"):  # no model at all is validate_request's 400
        check_model(body["model"])
    tools_tokens = check_request(body)
    check_options(body)
    messages_tokens = check_context(body, window, tools_tokens)
    asked = {k: v for k, v in body.items() if k not in STREAM_ONLY}  # same answer streamed or not
    answer = structured.reply(asked)
    completion = build_completion(asked, answer, messages_tokens + tools_tokens)
    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        request_id = "req_" + hashlib.sha256(completion["id"].encode()).hexdigest()[:32]
        return (200, {**SSE_HEADERS, "x-request-id": request_id},
                sse_events(completion, include_usage))
    return json_reply(200, completion)


def completion_id(body: Mapping) -> tuple[str, int]:
    """(`chatcmpl-…` id, `created`), both pure functions of the request body."""
    cid = make_id("chatcmpl-", 29, body)
    digest = hashlib.sha256(cid.encode()).digest()
    return cid, CREATED_BASE + int.from_bytes(digest[:4], "big") % CREATED_SPAN


def build_completion(body: Mapping, answer: Mapping, prompt_tokens: int) -> dict:
    """A `chat.completion` object shaped like docs/protocol.md's example, with real `usage`."""
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    message, finish, used = limit_reply(dict(answer["message"]), answer["finish_reason"], limit)
    cid, created = completion_id(body)
    n = body.get("n") or 1
    choices = [{"index": k, "message": message, "logprobs": None, "finish_reason": finish}
               for k in range(n)]
    return {"id": cid, "object": "chat.completion", "created": created, "model": body["model"],
            "choices": choices,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": used * n,
                      "total_tokens": prompt_tokens + used * n}}


# ----------------------------------------------------------------- embeddings

EMBEDDING_FIELDS = frozenset({"input", "model", "encoding_format", "dimensions", "user"})
ENCODING_FORMATS = ("float", "base64")


def invalid_input() -> ProtocolError:
    return ProtocolError(  # verbatim (openai/openai-python#576)
        "'$.input' is invalid. Please check the API reference: "
        "https://platform.openai.com/docs/api-reference.",
        explanation="input is a non-empty string, or a list of 1 to 2048 non-empty strings "
                    "(or of token arrays)")


def embedding_texts(value: Any) -> list[str]:
    """The request's `input` as texts: a string, a list of strings, a token array (a list
    of integers) or a list of token arrays; tokens are read as cl100k_base, the encoding of
    OpenAI's embedding models (LangChain sends them so). Anything else, an empty text, an
    empty list or more than MAX_INPUTS inputs is the API's `'$.input' is invalid`."""
    from lesson_lib.vectors import MAX_INPUTS  # noqa: PLC0415

    def is_tokens(x: Any) -> bool:
        return isinstance(x, list) and bool(x) and all(
            isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in x)

    if isinstance(value, str) or is_tokens(value):
        value = [value]
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_INPUTS:
        raise invalid_input()
    texts = []
    for item in value:
        if is_tokens(item):
            try:
                item = encoding_for("text-embedding-3-small").decode(item)
            except Exception:  # a token id the encoding does not have
                raise invalid_input() from None
        if not isinstance(item, str) or not item:
            raise invalid_input()
        texts.append(item)
    return texts


def embeddings(raw: bytes) -> Reply:
    """POST /v1/embeddings: the offline embedder's vectors in the API's `list` object."""
    import base64  # noqa: PLC0415

    from lesson_lib.vectors import DIMENSIONS, MAX_INPUT_TOKENS, offline_vectors  # noqa: PLC0415

    body = parse_body(raw)
    if body.get("model"):
        check_model(body["model"])
    else:
        raise ProtocolError("you must provide a model parameter",  # verbatim (chat's text)
                            explanation="pass model=... to embeddings.create()")
    if unknown := sorted(set(body) - EMBEDDING_FIELDS):
        raise ProtocolError(  # verbatim shape (the chat route's text)
            f"Unrecognized request argument{'s' if len(unknown) > 1 else ''} supplied: "
            f"{', '.join(unknown)}",
            explanation="embeddings.create() takes input, model, encoding_format, dimensions "
                        "and user")
    if "input" not in body:
        raise missing("input", explanation="pass input='text' or input=[...]")  # reconstructed
    texts = embedding_texts(body["input"])
    fmt = body.get("encoding_format")
    if fmt is not None and fmt not in ENCODING_FORMATS:
        raise invalid_value(fmt, ENCODING_FORMATS, "encoding_format")  # reconstructed
    dimensions = body.get("dimensions")
    if problem := _number_problem("dimensions", dimensions, 1, DIMENSIONS, "integer"):
        raise problem
    counted = encoding_for("text-embedding-3-small")
    tokens = [len(counted.encode(t, disallowed_special=())) for t in texts]
    if (longest := max(tokens)) > MAX_INPUT_TOKENS:
        raise ProtocolError(  # verbatim shape (pingcap/autoflow#265)
            f"This model's maximum context length is {MAX_INPUT_TOKENS} tokens, however you "
            f"requested {longest} tokens ({longest} in your prompt; 0 for the completion). "
            "Please reduce your prompt; or completion length.",
            explanation=f"each input may have at most {MAX_INPUT_TOKENS} tokens: cut long "
                        "texts into pieces and embed each")
    vectors = offline_vectors(texts, dimensions)
    data = [{"object": "embedding", "index": k,
             "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode("ascii")
             if fmt == "base64" else [float(x) for x in v]}
            for k, v in enumerate(vectors)]
    return json_reply(200, {"object": "list", "data": data, "model": body["model"],
                            "usage": {"prompt_tokens": sum(tokens),
                                      "total_tokens": sum(tokens)}})


# ----------------------------------------------------------------- streaming

def choice_deltas(message: Mapping) -> Iterator[dict]:
    """The deltas of one choice: role first, content pieces, then each tool call
    (id, type and name on its first delta, then argument fragments)."""
    yield {"role": "assistant", "content": "" if message["content"] is not None else None,
           "refusal": None}
    for piece in pieces(message["content"] or ""):
        yield {"content": piece}
    for index, call in enumerate(message.get("tool_calls") or []):
        fn = call["function"]
        yield {"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                               "function": {"name": fn["name"], "arguments": ""}}]}
        for piece in pieces(fn["arguments"]):
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def sse_events(completion: Mapping, include_usage: bool) -> Iterator[bytes]:
    """A completion as `data: {chat.completion.chunk}` events ending in `data: [DONE]`,
    made one at a time as they are sent (n=128 long choices are tens of megabytes)."""
    head = {"id": completion["id"], "object": "chat.completion.chunk",
            "created": completion["created"], "model": completion["model"]}
    tail = {"usage": None} if include_usage else {}

    def event(choices: list, **extra: Any) -> bytes:
        return b"data: " + dumps({**head, "choices": choices, **tail, **extra}) + b"\n\n"

    for choice in completion["choices"]:
        i = choice["index"]
        for d in choice_deltas(choice["message"]):
            yield event([{"index": i, "delta": d, "logprobs": None, "finish_reason": None}])
        yield event([{"index": i, "delta": {}, "logprobs": None,
                      "finish_reason": choice["finish_reason"]}])
    if include_usage:
        yield event([], usage=completion["usage"])
    yield b"data: [DONE]\n\n"


# ----------------------------------------------------------------- models and faults

def model_object(model_id: str) -> dict:
    return {"id": model_id, "object": "model", "created": MODEL_CREATED, "owned_by": OWNED_BY}


def server_error() -> ProtocolError:
    return ProtocolError(  # reconstructed
        "The server had an error while processing your request. Sorry about that!",
        status=500, type="server_error",
        explanation="the service failed, not your request: try again later")


def rate_limit_error(model: str, wait_ms: int = 644) -> ProtocolError:
    return ProtocolError(  # verbatim, with the requested model's name and the wait
        f"Rate limit reached for {model} in organization org-offline on tokens per min (TPM): "
        f"Limit 30000, Used 29937, Requested 385. Please try again in {wait_ms}ms. Visit "
        "https://platform.openai.com/account/rate-limits to learn more.",
        code="rate_limit_exceeded", status=429, type="tokens",
        explanation="too many tokens this minute: wait retry-after-ms, then retry")


RATE_LIMIT_HEADERS = {  # the shape of the real headers, with the numbers of the text above
    "retry-after": "1", "retry-after-ms": "644",
    "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499",
    "x-ratelimit-reset-requests": "120ms", "x-ratelimit-limit-tokens": "30000",
    "x-ratelimit-remaining-tokens": "63", "x-ratelimit-reset-tokens": "644ms",
}


def retry_headers(retry_after: float) -> dict[str, str]:
    """An error answer that invites a retry after `retry_after` seconds: the SDK reads
    retry-after-ms first, then retry-after (whole seconds here, as the real header)."""
    wait_ms = max(1, round(retry_after * 1000))
    return {"x-should-retry": "true", "retry-after-ms": str(wait_ms),
            "retry-after": str(-(-wait_ms // 1000))}


def fault_reply(kind: str, raw: bytes, retry_after: float | None = None) -> Reply:
    """The answer of an injected fault: "rate_limit" (429) or "server_error" (500); never
    to be retried, unless `retry_after` (seconds) says when to retry.
    (A "timeout" has no answer: the transport raises instead.)"""
    if kind == "rate_limit":
        try:
            model = json.loads(raw).get("model") or MODEL_ID
        except (ValueError, AttributeError, UnicodeDecodeError):
            model = MODEL_ID
        if retry_after is None:
            return error_reply(rate_limit_error(str(model)), RATE_LIMIT_HEADERS)
        headers = retry_headers(retry_after)
        wait = headers["retry-after-ms"]
        return error_reply(rate_limit_error(str(model), int(wait)), {
            **RATE_LIMIT_HEADERS, "x-ratelimit-reset-tokens": f"{wait}ms", **headers})
    if kind == "server_error":
        extra = retry_headers(retry_after) if retry_after is not None else None
        return error_reply(server_error(), extra)
    raise ValueError(f"no reply for fault {kind!r}: use 'rate_limit' or 'server_error'")
