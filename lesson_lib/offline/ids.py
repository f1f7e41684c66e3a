"""Deterministic ids in the real formats, derived from the request they answer."""

from __future__ import annotations

import hashlib
import json
import string
from typing import Any

_ALPHABET = string.ascii_letters + string.digits


LONG_TEXT = 1 << 20  # characters; a longer string is stood for by its digest (below)


def canonical(body: Any) -> bytes:
    """The request as bytes that do not depend on key order or spacing. A string over
    LONG_TEXT characters (a pasted book, an image's base64) is written as its SHA-256:
    hashing it lets other threads run, and JSON-escaping tens of megabytes at once would
    hold the GIL for a tenth of a second (the server answers such a body in a thread)."""
    return json.dumps(stand_in(body), sort_keys=True, ensure_ascii=False,
                      separators=(",", ":")).encode()


def stand_in(value: Any) -> Any:
    """`value` with each string over LONG_TEXT characters replaced by its digest (the same
    value when it has none: a cheap, fixed stand-in for keys and hashes)."""
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    if isinstance(value, dict):
        return {k: stand_in(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stand_in(v) for v in value]
    return value


def make_id(prefix: str, length: int, *seed: Any) -> str:
    """`prefix` + `length` letters/digits, a pure function of `seed`.

    make_id("call_", 24, body, 0) -> "call_…" (24 characters), always the same for the same body.
    """
    digest = hashlib.sha256(b"\x00".join(canonical(s) for s in seed)).digest()
    number = int.from_bytes(digest, "big")
    chars = []
    for _ in range(length):
        number, k = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[k])
    return prefix + "".join(chars)
