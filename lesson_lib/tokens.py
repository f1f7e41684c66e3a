"""Counting tokens the way the OpenAI cookbook does, with the model's own encoding, offline.

Which encoding depends on the model (see `encoding_name_for`): `o200k_base` for the
gpt-4o, gpt-4.1, o-series and gpt-5 families, `cl100k_base` for gpt-4 and gpt-3.5.
Both ship inside the `bpe-openai` package, so nothing is downloaded. A model this
module does not know (another provider's, or the offline teaching model) is counted
with `o200k_base`: a close estimate, not its provider's bill.

Counts follow the cookbook's recipe: 3 tokens per message, 1 per `name`, every string
value encoded, 3 priming the reply; tool definitions add the gpt-4o family's
overheads (7 per function, 3 per property, 12 at the end). The offline model reports
`usage` and enforces its context window with these same functions, so a lesson's
arithmetic and the model's always agree.

`model=None` means the model in use, as the environment chooses it (`LESSON_BACKEND`,
`LESSON_MODEL`; see lesson_lib.llm): the offline model unless a real provider is set.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Mapping
from functools import cache
from typing import Any

from lesson_lib.i18n import _

ENCODINGS = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING = "o200k_base"
CL100K_MODELS = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada")
O200K_MODELS = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4",
                "gpt-oss")
PER_MESSAGE, PER_NAME, REPLY_PRIMING = 3, 1, 3
PER_FUNCTION, PER_PROPERTIES, PER_PROPERTY, PER_ENUM, PER_ENUM_ITEM, TOOLS_END = 7, 3, 3, -3, 3, 12


def model_in_use() -> str:
    """The model name the environment chooses, read without making a client."""
    if os.environ.get("LESSON_BACKEND", "").strip().lower() == "openai":
        return os.environ.get("LESSON_MODEL") or "gpt-4o-mini"  # lesson_lib.llm's default
    return "offline-rule-based-teacher"  # lesson_lib.offline.MODEL_ID


def encoding_name_for(model: str | None = None) -> str:
    """The encoding a model counts with: "o200k_base" or "cl100k_base"."""
    name = (model or model_in_use()).strip().lower().rpartition("/")[2]  # "openai/gpt-4o"
    if name.startswith(O200K_MODELS):  # checked first: "gpt-4o" also starts with "gpt-4"
        return "o200k_base"
    return "cl100k_base" if name.startswith(CL100K_MODELS) else DEFAULT_ENCODING


@cache
def get_encoding(name: str = DEFAULT_ENCODING):
    """The tokenizer for an encoding name (loaded once, from the installed package)."""
    if name not in ENCODINGS:
        raise ValueError(_("unknown encoding {name}: use one of {encodings}").format(
            name=repr(name), encodings=", ".join(ENCODINGS)))
    with warnings.catch_warnings():  # its loader uses an API that Python 3.11 calls deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # noqa: PLC0415  (imported on first use: keeps `import lesson_lib` fast)

        encoding = bpe_openai.get_encoding(name)
        encoding.encode("loads its tables now")
    return encoding


def encoding_for(model: str | None = None):
    """The tokenizer of `model` (None: the model in use)."""
    return get_encoding(encoding_name_for(model))


PIECE_CHARS = 40_000  # a longer text is counted in pieces: bpe-openai refuses a text of a
                     # million characters or 200,000 tokens (40,000 characters are at most
                     # 160,000 bytes, so at most that many tokens), and is slow on long ones


def count_text(text: str, model: str | None = None) -> int:
    """Tokens in one string. A text over PIECE_CHARS characters (some 10,000 tokens of
    English) is counted in pieces, each cut before a space, which keeps the count exact;
    where a piece had to be cut inside a word (text without spaces) it may be off by one."""
    encoding = encoding_for(model)
    total, start = 0, 0
    while len(text) - start > PIECE_CHARS:
        cut = _cut_between_words(text, start + PIECE_CHARS // 2, start + PIECE_CHARS)
        total += len(encoding.encode(text[start:cut], disallowed_special=()))
        start = cut
        time.sleep(0)  # the tokenizer holds the GIL: between pieces other threads may run
    return total + (len(encoding.encode(text[start:], disallowed_special=())) if text else 0)


def _cut_between_words(text: str, low: int, high: int) -> int:
    """The last single space between two words in text[low:high] (a cut there splits no
    token), else `high`."""
    cut = text.rfind(" ", low, high)
    while cut > low and (text[cut - 1].isspace() or text[cut + 1].isspace()):
        cut = text.rfind(" ", low, cut)
    return cut if cut > low else high


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(c, Mapping) for c in value):
        parts = []  # tool calls: the function name and its JSON arguments; content parts: text
        for c in value:
            fn = c.get("function")
            if isinstance(fn, Mapping):
                parts.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
            elif "text" in c:
                parts.append(str(c["text"]))
        return "\n".join(parts)
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def count_message(message: Mapping, model: str | None = None) -> int:
    """Tokens one message adds to a request (without the reply priming)."""
    total = PER_MESSAGE
    for key, value in message.items():
        total += count_text(_value_text(value), model)
        if key == "name":
            total += PER_NAME
    return total


def count_messages(messages: list[Mapping], model: str | None = None) -> int:
    """Tokens a list of messages costs in a request, reply priming included."""
    return sum(count_message(m, model) for m in messages) + REPLY_PRIMING


def count_tools(tools: list[Mapping] | None, model: str | None = None) -> int:
    """Tokens the tool definitions add to a request (0 when there are none)."""
    if not tools:
        return 0
    total = 0
    for tool in tools:
        fn = tool.get("function", {})
        total += PER_FUNCTION
        total += count_text(f"{fn.get('name', '')}:{str(fn.get('description', '')).rstrip('.')}",
                            model)
        properties = (fn.get("parameters") or {}).get("properties") or {}
        if properties:
            total += PER_PROPERTIES
        for key, prop in properties.items():
            total += PER_PROPERTY
            if prop.get("enum"):
                total += PER_ENUM
                for item in prop["enum"]:
                    total += PER_ENUM_ITEM + count_text(str(item), model)
            desc = str(prop.get("description", "")).rstrip(".")
            total += count_text(f"{key}:{prop.get('type', '')}:{desc}", model)
    return total + TOOLS_END


def count_request(messages: list[Mapping], tools: list[Mapping] | None = None,
                  model: str | None = None) -> int:
    """Tokens of a whole request: messages plus tool definitions."""
    return count_messages(messages, model) + count_tools(tools, model)
