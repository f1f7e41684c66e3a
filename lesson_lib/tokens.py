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

import base64
import codecs
import gzip
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path
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


class Encoding:
    """One of bpe-openai's compiled tokenizers, with the calls this project makes of it."""

    def __init__(self, name: str, compiled: Any):
        self.name, self._compiled = name, compiled

    def encode(self, text: str, disallowed_special: Any = ()) -> list[int]:
        """The tokens of `text`, every part of it read as plain text (special-token
        strings such as "<|endoftext|>" included, as tiktoken's `disallowed_special=()`)."""
        return self._compiled.encode(_encodable(text))

    def count(self, text: str) -> int:
        return self._compiled.count(_encodable(text))

    def decode(self, tokens: list[int]) -> str:
        return self._compiled.decode(list(tokens))

    def pieces(self, text: str) -> list[str]:
        """`text` in the pieces its tokens make, each in whole characters, as a stream
        delivers it: a token that ends inside a character gives what it completes, and
        the rest comes with the token that finishes it."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        out = (decoder.decode(self.token_bytes(token)) for token in self.encode(text))
        return [piece for piece in out if piece]

    def token_bytes(self, token: int) -> bytes:
        """The bytes one token stands for."""
        try:
            return self._compiled.decode([token]).encode("utf-8")
        except ValueError:  # part of a character: read it from the encoding's own table
            return base64.b64decode(_table_lines(self.name)[token].partition(b" ")[0])

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"


def _encodable(text: str) -> str:
    """`text` with any lone surrogate replaced (U+FFFD), as bpe-openai's own wrapper does:
    the tokenizer reads UTF-8, which cannot hold one."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _compiled_module():
    """bpe-openai's compiled tokenizer module, loaded without the package around it.

    `import bpe_openai` first reads every encoding it knows into Python dictionaries
    (about 0.8 s: three gzip files of base64 lines) for a tiktoken-compatible wrapper that
    counting never uses; the compiled module carries its own tables and loads in about
    0.1 s. It is registered under its own name, so a later `import bpe_openai` uses it
    (a compiled module can be set up only once per process). Falls back to the package's
    public import where the file is not found (another layout, a future release)."""
    name = "bpe_openai._bindings"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec("bpe_openai")  # finds the folder, runs nothing
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for path in sorted(Path(folder).glob("_bindings*")):
            if path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                found = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(found)
                found.loader.exec_module(module)
                sys.modules[name] = module
                return module
    with warnings.catch_warnings():  # its loader uses an API that Python 3.11 calls deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(name)


@cache
def _table_lines(name: str) -> list[bytes]:
    """The lines of the encoding's table in bpe-openai's data folder, "<base64 bytes> <rank>",
    line N holding rank N (about 0.06 s; needed only for tokens that split a character)."""
    folder = importlib.util.find_spec("bpe_openai").submodule_search_locations[0]
    packed = (Path(folder) / "data" / f"{name}.tiktoken.gz").read_bytes()
    return gzip.decompress(packed).split(b"\n")


@cache
def get_encoding(name: str = DEFAULT_ENCODING) -> Encoding:
    """The tokenizer for an encoding name (loaded once, from the installed package)."""
    if name not in ENCODINGS:
        raise ValueError(_("unknown encoding {name}: use one of {encodings}").format(
            name=repr(name), encodings=", ".join(ENCODINGS)))
    return Encoding(name, _compiled_module().tokenizer_for_encoding(name))


def encoding_for(model: str | None = None):
    """The tokenizer of `model` (None: the model in use)."""
    return get_encoding(encoding_name_for(model))


PIECE_CHARS = 200_000  # about 4 ms of counting at a time


def count_text(text: str, model: str | None = None) -> int:
    """Tokens in one string, however long. The compiled tokenizer counts a million
    characters in a few milliseconds but holds the GIL meanwhile, so a text over PIECE_CHARS
    is counted in pieces cut before a space (which keeps the count exact; a piece cut inside
    a word, in text without spaces, may be off by one), letting other threads run between
    them: a served model's other clients wait milliseconds, not the whole count."""
    encoding = encoding_for(model)
    total, start = 0, 0
    while len(text) - start > PIECE_CHARS:
        cut = _cut_between_words(text, start + PIECE_CHARS // 2, start + PIECE_CHARS)
        total += encoding.count(text[start:cut])
        start = cut
        time.sleep(0)  # let another thread run
    return total + (encoding.count(text[start:]) if text else 0)


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
