"""Streamed replies: putting an assistant message back together from its chunks.

With `stream=True` the API sends a reply as `chat.completion.chunk` events. Each carries a
`delta`, a piece of the message, and the client joins them:

- the first delta of a choice carries `role`; `content` arrives in pieces to concatenate;
- each tool call arrives in pieces too, keyed by its **`index`** (its place in
  `tool_calls`): the first piece of a call carries its `id`, `type` and `function.name`,
  the later ones only `function.arguments` fragments, which concatenate into one JSON
  string. A piece with a new `index` starts the next call (parallel calls);
- the last chunk of a choice has an empty delta and the `finish_reason`;
- with `n > 1` the chunks of several choices interleave: `choices[i].index` says whose.

`assemble_message` is the reference the notebook's exercise is judged against; the SDK's
own `client.chat.completions.stream(...)` does the same work for you (its
`get_final_completion()`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lesson_lib.text import plural

__all__ = ["as_dict", "assemble_message", "delta_lines"]


def as_dict(chunk: Any) -> dict:
    """A chunk as a plain dict: an SDK `ChatCompletionChunk` or a dict already."""
    if isinstance(chunk, Mapping):
        return dict(chunk)
    return chunk.model_dump(exclude_none=False)


def assemble_message(chunks: Iterable[Any], choice: int = 0) -> dict:
    """The assistant message of choice `choice`, joined from a stream's chunks: a dict with
    `role`, `content` (None when no text came) and, when the model called tools,
    `tool_calls` in index order, each `{"id", "type", "function": {"name", "arguments"}}`."""
    content: list[str] | None = None
    calls: dict[int, dict] = {}
    for chunk in map(as_dict, chunks):
        for part in chunk.get("choices") or []:
            if part.get("index", 0) != choice:
                continue  # another choice's piece (n > 1)
            delta = part.get("delta") or {}
            if delta.get("content") is not None:
                content = (content or []) + [delta["content"]]
            for piece in delta.get("tool_calls") or []:
                call = calls.setdefault(piece["index"], {
                    "id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                if piece.get("id"):
                    call["id"] = piece["id"]
                if piece.get("type"):
                    call["type"] = piece["type"]
                fn = piece.get("function") or {}
                call["function"]["name"] += fn.get("name") or ""
                call["function"]["arguments"] += fn.get("arguments") or ""
    text = "".join(content) if content is not None else None
    message: dict = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


def delta_lines(chunks: Iterable[Any], limit: int = 12) -> list[str]:
    """One short line per delta (at most `limit`, then how many more): what the wire carried."""
    lines: list[str] = []
    total = 0
    for chunk in map(as_dict, chunks):
        for part in chunk.get("choices") or []:
            delta = {k: v for k, v in (part.get("delta") or {}).items() if v is not None}
            for piece in delta.get("tool_calls") or []:
                fn = {k: v for k, v in (piece.get("function") or {}).items() if v is not None}
                delta["tool_calls"] = [{**{k: v for k, v in piece.items()
                                           if v is not None and k != "function"},
                                        **({"function": fn} if fn else {})}]
            if part.get("finish_reason"):
                delta["finish_reason"] = part["finish_reason"]
            total += 1
            if len(lines) < limit:
                lines.append(f"choice {part.get('index', 0)}: {delta}")
    if total > limit:
        lines.append(f"… {plural(total - limit, 'more delta')}")
    return lines
