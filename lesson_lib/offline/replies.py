"""What the offline model's routes answer with: a Reply (status, headers, body), JSON and
error bodies, the request body parsed, a reply cut to `max_tokens`, text in stream pieces.

The chat route (api.py) and the Responses and Conversations routes (responses.py) share
these, so neither imports the other for them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from lesson_lib.offline import MODEL_ID
from lesson_lib.protocol import ProtocolError
from lesson_lib.tokens import count_text, encoding_for

Reply = tuple[int, dict[str, str], "bytes | Iterator[bytes]"]

JSON_HEADERS = {"content-type": "application/json"}
NO_RETRY = {"x-should-retry": "false"}  # the SDK obeys it: an offline error is never retried


def json_reply(status: int, obj: Any, extra: Mapping[str, str] | None = None) -> Reply:
    """`obj` as compact UTF-8 JSON with the API's content type."""
    data = dumps(obj)
    headers = {**JSON_HEADERS, "x-request-id": "req_" + hashlib.sha256(data).hexdigest()[:32]}
    return status, {**headers, **(extra or {})}, data


def error_reply(error: ProtocolError, extra: Mapping[str, str] | None = None) -> Reply:
    """The API's {"error": {...}} body with the error's status; never to be retried unless
    `extra` says otherwise (an injected fault with a Retry-After)."""
    return json_reply(error.status, error.body(), {**NO_RETRY, **(extra or {})})


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def parse_body(raw: bytes) -> dict:
    """The request body as a dict, or the API's 400 for a body that is not a JSON object."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        raise ProtocolError(  # reconstructed
            "We could not parse the JSON body of your request. (HINT: This likely means you "
            "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
            "but what was sent was not valid JSON. If you have trouble figuring out how to fix "
            "this, please contact us through our help center at help.openai.com.)",
            explanation="send a JSON object: json.dumps(body), Content-Type: application/json")
    return body


def _cut(text: str, budget: int) -> tuple[str, int, bool]:
    """(text cut to `budget` tokens, tokens kept, whether it was cut)."""
    tokens = encoding_for(MODEL_ID).encode(text, disallowed_special=())
    if len(tokens) <= budget:
        return text, len(tokens), False
    return encoding_for(MODEL_ID).decode(tokens[:budget]), budget, True


def limit_reply(message: dict, finish: str, limit: int | None) -> tuple[dict, str, int]:
    """(message, finish_reason, completion tokens) after the `max_tokens` cut: the content,
    then the tool calls (name + arguments each) spend the budget; whatever does not fit
    is cut, as the real API cuts, and finish_reason becomes "length"."""
    budget = limit if limit is not None else sys.maxsize
    content, used, cut = _cut(message.get("content") or "", budget)
    calls = []
    for call in message.get("tool_calls") or []:
        fn = call["function"]
        name_tokens = count_text(fn["name"], MODEL_ID)
        if cut or used + name_tokens > budget:
            cut = True
            break
        arguments, spent, cut = _cut(fn["arguments"], budget - used - name_tokens)
        calls.append({**call, "function": {"name": fn["name"], "arguments": arguments}})
        used += name_tokens + spent
    shaped = {"role": "assistant", "content": content if message.get("content") is not None
              else None, "refusal": None}
    if calls:
        shaped["tool_calls"] = calls
    return shaped, "length" if cut else finish, used


def pieces(text: str) -> list[str]:
    """`text` in token-sized pieces (whole characters), as a real stream delivers it."""
    return encoding_for(MODEL_ID).pieces(text)
