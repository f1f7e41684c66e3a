"""Compaction on the offline model: what a `compaction` item keeps, sealed so only this model reads it.

The real Responses API compacts a long context into one opaque item,
`{"type": "compaction", "id": "cmp_…", "encrypted_content": "gAAAAA…"}`, in two ways:
server-side, when a create request's `context_management` threshold is crossed, and on
demand, `POST /v1/responses/compact` (`client.responses.compact`). A later request that
holds the item (in its input, or in the chain it continues) reads it in place of
everything before it. `responses.py` does the routing; this module does the compacting:

- what is **kept** (one deterministic rule, the offline model's own): the user messages
  (in the standalone endpoint's answer they are listed in clear beside the item, as the
  real endpoint lists "all user messages, followed by a single compaction item"; in
  server-side compaction they go inside the item, as far as half the threshold
  allows, the earlier ones first cut to their first sentence, the newest
  always whole), system and developer messages, the last assistant answer, and a turn
  under way as it is (calls and outputs not yet answered); what an earlier compaction
  item kept is carried over;
- what is **dropped**: earlier assistant answers, the finished turns' function calls and
  outputs, reasoning and the other items; the item records how many and their tokens.

The content is sealed like the real one looks (a Fernet-shaped token: version byte 0x80,
a timestamp, a nonce, the payload, a 32-byte tag, URL-safe base64, so it starts with
`gAAAAA`): the payload is compressed JSON masked with a SHA-256 keystream and signed with
HMAC-SHA256 under a key of this module. It is deterministic (the nonce is derived from
the payload), it is not security (the key is in this file): it only makes the item as
opaque to a client as the real one, and lets the offline model refuse an item it did
not make (a real account's item, an edited one) with the real `invalid_encrypted_content`.

`peek(item)` is a TEACHING VIEW of the offline model only: it opens an offline item and
shows what was kept and dropped. No client of the model uses it, and a real item cannot
be read this way (its content is encrypted with keys only OpenAI holds).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import struct
import zlib
from collections.abc import Mapping
from typing import Any

from lesson_lib.offline import MODEL_ID
from lesson_lib.protocol import ProtocolError, invalid_type, invalid_value, missing
from lesson_lib.tokens import count_message

VERSION = b"\x80"          # the first byte of a Fernet token, as the real content's
FORMAT = 1                  # the payload's own version
KEY = hashlib.sha256(b"lesson_lib.offline compaction key, not a secret").digest()
NONCE_BYTES, TAG_BYTES = 16, 32
MIN_THRESHOLD = 1000        # the API reference's minimum for compact_threshold
CONTEXT_MANAGEMENT_TYPES = ("compaction",)
ENTRY_FIELDS = ("type", "compact_threshold")
KEPT_ROLES = ("user", "system", "developer")
SENTENCE = 200              # characters: the most of a shortened user message
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]")


# ----------------------------------------------------------------- sealing

def _keystream(nonce: bytes, length: int) -> bytes:
    blocks = (hashlib.sha256(KEY + nonce + struct.pack(">Q", n)).digest()
              for n in range(-(-length // 32)))
    return b"".join(blocks)[:length]


def _xor(data: bytes, stream: bytes) -> bytes:
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def seal(payload: Mapping, when: int) -> str:
    """The payload as opaque `encrypted_content` (deterministic: same payload, same text)."""
    plain = zlib.compress(json.dumps(payload, ensure_ascii=False, sort_keys=True,
                                     separators=(",", ":")).encode(), 9)
    nonce = hmac.new(KEY, b"nonce" + plain, hashlib.sha256).digest()[:NONCE_BYTES]
    masked = _xor(plain, _keystream(nonce, len(plain)))
    body = VERSION + struct.pack(">Q", when) + nonce + masked
    tag = hmac.new(KEY, body, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(body + tag).decode()


def unverifiable(content: Any) -> ProtocolError:
    shown = content if isinstance(content, str) else json.dumps(content)
    return ProtocolError(  # verbatim shape (openai/codex#8128, #8145: param null)
        f"The encrypted content {shown[:4]}...{shown[-4:]} could not be verified.",
        code="invalid_encrypted_content",
        explanation="this compaction item was not made by the offline model (a real "
                    "account's item, another provider's, or one whose content was "
                    "edited): only the server that made an item can read it. Send the "
                    "items it replaced instead, or compact again here")


def unseal(content: Any) -> dict:
    """The payload of an offline item's `encrypted_content`; else the API's refusal."""
    if not isinstance(content, str):
        raise unverifiable(content)
    try:
        raw = base64.urlsafe_b64decode(content.encode("ascii"))
    except (ValueError, UnicodeError):
        raise unverifiable(content) from None
    body, tag = raw[:-TAG_BYTES], raw[-TAG_BYTES:]
    if len(body) < 1 + 8 + NONCE_BYTES or body[:1] != VERSION or not hmac.compare_digest(
            tag, hmac.new(KEY, body, hashlib.sha256).digest()):
        raise unverifiable(content)
    nonce, masked = body[9:9 + NONCE_BYTES], body[9 + NONCE_BYTES:]
    plain = _xor(masked, _keystream(nonce, len(masked)))
    payload = json.loads(zlib.decompress(plain))
    if payload.get("format") != FORMAT:
        raise unverifiable(content)
    return payload


# ----------------------------------------------------------------- context_management

def threshold_of(body: Mapping) -> int | None:
    """The compaction threshold `context_management` asks for (None: no compaction; the
    context window when the entry gives no `compact_threshold`), checked as the API's
    texts are built; raises ProtocolError."""
    entries = body.get("context_management")
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise invalid_type("context_management", "an array of objects", entries)  # reconstructed
    threshold: int | None = None
    for k, entry in enumerate(entries):
        at = f"context_management[{k}]"
        if not isinstance(entry, Mapping):
            raise invalid_type(at, "an object", entry)  # reconstructed
        for name in entry:
            if name not in ENTRY_FIELDS:
                raise ProtocolError(f"Unknown parameter: '{at}.{name}'.",  # verbatim shape
                                    param=f"{at}.{name}", code="unknown_parameter")
        if "type" not in entry:
            raise missing(f"{at}.type")  # reconstructed (the API's pattern)
        if entry["type"] not in CONTEXT_MANAGEMENT_TYPES:
            raise invalid_value(  # reconstructed (the API's pattern; 'compaction' per the SDK)
                entry["type"] if isinstance(entry["type"], str) else "",
                CONTEXT_MANAGEMENT_TYPES, f"{at}.type",
                explanation="the only context_management entry is {'type': 'compaction', "
                            "'compact_threshold': N}")
        value = entry.get("compact_threshold")
        if value is None:
            threshold = 0  # the server chooses: here, the context window
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid_type(f"{at}.compact_threshold", "an integer", value)  # reconstructed
        if value < MIN_THRESHOLD:
            raise ProtocolError(  # reconstructed (the recorded below-minimum shape)
                f"Invalid '{at}.compact_threshold': integer below minimum value. Expected a "
                f"value >= {MIN_THRESHOLD}, but got {value} instead.",
                param=f"{at}.compact_threshold", code="integer_below_min_value",
                explanation=f"compact_threshold is a number of tokens, at least "
                            f"{MIN_THRESHOLD}: the context is compacted when it grows past it")
        threshold = value
    return threshold


# ----------------------------------------------------------------- compacting

def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content or []:
        if isinstance(part, Mapping):
            text = part.get("text") if part.get("type") != "refusal" else part.get("refusal")
            if isinstance(text, str):
                texts.append(text)
    return "\n".join(texts)


def tokens(message: Mapping) -> int:
    return count_message(message, MODEL_ID)


def kind_of(item: Mapping) -> str:
    return item.get("type", "message")


def latest(items: list) -> int:
    """The index of the last compaction item in `items` (0 when there is none)."""
    for k in range(len(items) - 1, -1, -1):
        if isinstance(items[k], Mapping) and kind_of(items[k]) == "compaction":
            return k
    return 0


def is_user_message(item: Any) -> bool:
    return isinstance(item, Mapping) and kind_of(item) == "message" and item.get("role") == "user"


def opened_at(items: list) -> tuple[int, dict | None]:
    """(the index of the last compaction item, its payload), or (0, None) without one."""
    start = latest(items)
    if not items or not isinstance(items[start], Mapping) or kind_of(items[start]) != "compaction":
        return 0, None
    if "encrypted_content" not in items[start]:
        raise missing("input.encrypted_content")  # reconstructed
    return start, unseal(items[start]["encrypted_content"])


def window(items: list) -> list:
    """What a model reads of `items`: from the last compaction item on, that item unfolded
    into the messages it kept (the guide: it carries what came before it). An item made
    by the standalone endpoint kept the user messages out, listed in clear before it:
    those are read too, and nothing else before it."""
    start, opened = opened_at(items)
    if opened is None:
        return items
    before = [item for item in items[:start] if is_user_message(item)] \
        if opened.get("users_in_clear") else []
    return before + unfold(opened["kept"], opened.get("tail", [])) + items[start + 1:]


def unfold(kept: list, tail: list) -> list:
    """An item's content as the input items it stands for: the kept messages, then the
    turn that was under way (its calls and outputs, as they were)."""
    return [{"type": "message", "role": m["role"], "content": m["content"]}
            for m in kept] + [dict(item) for item in tail]


def under_way(items: list) -> list:
    """The items of a turn still under way: after the last user message, when the last
    item is not an assistant answer (calls waiting for outputs, outputs not yet answered).
    Compaction keeps them as they are: the model needs them to go on."""
    if not items or (kind_of(items[-1]) == "message" and items[-1].get("role") == "assistant"):
        return []
    users = [k for k, item in enumerate(items) if is_user_message(item)]
    return list(items[users[-1] + 1:]) if users else []


def compact(items: list, *, users_in_clear: bool,
            budget: int | None) -> tuple[list, list, dict, list]:
    """(the messages the item keeps, in their order, the user message items listed in
    clear beside it, what was dropped, the items of the turn under way, kept as they are)
    for the items of a context, from its last compaction item on (what that item kept is
    carried over)."""
    start, opened = opened_at(items)
    carried: list[dict] = []
    before: list[dict] = []
    if opened is not None:
        carried = list(opened["kept"])
        if opened.get("users_in_clear"):
            before = [item for item in items[:start] if is_user_message(item)]
        items = list(opened.get("tail", [])) + items[start + 1:]
    items = [item for item in items if kind_of(item) != "compaction_trigger"]
    tail = under_way(items)
    items = items[:len(items) - len(tail)]
    dropped = {"assistant_messages": 0, "function_calls": 0, "function_call_outputs": 0,
               "other_items": 0, "user_messages": 0, "user_messages_shortened": 0, "tokens": 0}
    kept: list[dict] = []
    clear: list[dict] = []

    def answered(message: dict) -> None:  # only the last assistant answer is kept
        for k, earlier in enumerate(kept):
            if earlier["role"] == "assistant":
                drop(dropped, "assistant_messages", kept.pop(k))
                break
        kept.append(message)

    for item in before:  # the user messages an earlier standalone compaction listed
        if users_in_clear:
            clear.append(item)
        else:
            kept.append({"role": "user", "content": text_of(item.get("content"))})
    for message in carried:
        (answered if message["role"] == "assistant" else kept.append)(dict(message))
    for item in items:
        kind = kind_of(item)
        if kind == "message" and item.get("role") in KEPT_ROLES:
            if users_in_clear and item["role"] == "user":
                clear.append(item)
            else:
                kept.append({"role": item["role"], "content": text_of(item.get("content"))})
        elif kind == "message" and item.get("role") == "assistant":
            answered({"role": "assistant", "content": text_of(item.get("content"))})
        else:
            key = {"function_call": "function_calls",
                   "function_call_output": "function_call_outputs"}.get(kind, "other_items")
            dropped[key] += 1
            dropped["tokens"] += tokens({"role": "tool", "content": json.dumps(
                item, ensure_ascii=False, sort_keys=True)})
    if budget is not None:
        fit(kept, budget - sum(tokens({"role": "tool", "content": json.dumps(
            item, ensure_ascii=False, sort_keys=True)}) for item in tail), dropped)
    return kept, clear, dropped, tail


def first_sentence(text: str) -> str:
    """The text up to its first sentence end (. ! ? 。！？), at most SENTENCE characters."""
    found = SENTENCE_END.search(text)
    cut = text[:found.end()] if found else text
    return cut[:SENTENCE].rstrip()


def fit(kept: list, budget: int, dropped: dict) -> None:
    """Bring the kept messages within `budget` tokens: first each earlier user message is
    cut to its first sentence, oldest first; then the oldest are dropped. The newest user
    message is never touched (it is the turn being answered)."""
    users = [k for k, m in enumerate(kept) if m["role"] == "user"][:-1]
    used = sum(tokens(m) for m in kept)
    for k in users:
        if used <= budget:
            return
        short = first_sentence(kept[k]["content"])
        if short != kept[k]["content"]:
            before = tokens(kept[k])
            kept[k] = {"role": "user", "content": short}
            used -= before - tokens(kept[k])
            dropped["user_messages_shortened"] += 1
            dropped["tokens"] += before - tokens(kept[k])
    for k in users:
        if used <= budget:
            break
        used -= tokens(kept[k])
        drop(dropped, "user_messages", kept[k])
        kept[k] = None
    kept[:] = [m for m in kept if m is not None]


def drop(dropped: dict, key: str, message: Mapping) -> None:
    dropped[key] += 1
    dropped["tokens"] += tokens(message)


def payload(kept: list, dropped: dict, read: int, users_in_clear: bool, tail: list,
            kept_tokens: int) -> dict:
    return {"format": FORMAT, "model": MODEL_ID, "kept": kept, "tail": tail,
            "dropped": dropped, "users_in_clear": users_in_clear, "read_tokens": read,
            "kept_tokens": kept_tokens}


# ----------------------------------------------------------------- the teaching view

def peek(item: Any, lang: str = "en") -> dict:
    """TEACHING VIEW of the offline model only (never used by its clients): what an
    offline compaction item kept and dropped. Takes the item (an SDK object or a dict).

        {"kept": [{"role": "user", "content": "My name is Xiaoming."}, …],
         "tail": [],                # a turn under way: its calls and outputs, as they were
         "dropped": {"assistant_messages": 2, "function_calls": 1, …, "tokens": 412},
         "users_in_clear": False,   # True: made by responses.compact(), which lists the
                                    # user messages in clear before the item
         "read_tokens": 1630, "kept_tokens": 96, "model": "offline-rule-based-teacher"}

    A real item cannot be read (its content is encrypted with OpenAI's keys): peek
    raises ValueError for it, as for anything the offline model did not make, saying so in
    `lang` ("en" or "zh")."""
    if hasattr(item, "model_dump"):
        item = item.model_dump()
    zh = str(lang).lower().startswith("zh")
    if not isinstance(item, Mapping) or item.get("type") != "compaction":
        raise ValueError(
            "peek() 读的是一个压缩条目（{'type': 'compaction', 'encrypted_content': ...}），"
            "也就是离线模型在一次响应的 output 里、或由 client.responses.compact() 返回的那种"
            if zh else
            "peek() reads a compaction item ({'type': 'compaction', 'encrypted_content': ...}), "
            "as the offline model returns it in a response's output or from "
            "client.responses.compact()")
    try:
        opened = unseal(item.get("encrypted_content"))
    except ProtocolError:
        raise ValueError(
            "这个压缩条目不是离线模型做的：真实的条目是加密的，除了它的服务器谁也读不了"
            if zh else
            "this compaction item was not made by the offline model: a real one is encrypted "
            "and cannot be read by anyone but its server") from None
    return {key: opened[key] for key in ("kept", "tail", "dropped", "users_in_clear",
                                         "read_tokens", "kept_tokens", "model")}
