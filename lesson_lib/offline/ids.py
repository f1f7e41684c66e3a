"""Deterministic ids in the real formats, derived from the request they answer."""

from __future__ import annotations

import hashlib
import json
import string
from typing import Any

_ALPHABET = string.ascii_letters + string.digits


def canonical(body: Any) -> bytes:
    """The request as bytes that do not depend on key order or spacing."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


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
