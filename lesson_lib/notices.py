"""Errors as notices: what happened and what to do, in one title and one detail.

The chat app shows them in its chat panel, the terminal chat as one line; neither shows a
traceback. `describe_error` knows the openai SDK's errors (the API's status, code and
message, or no usable answer), a memory's refusals (`OverBudgetError`, `ProtocolError`)
and anything else by its class. `redact` keeps the API key out of every text shown.
"""

from __future__ import annotations

import os
from typing import Any

from lesson_lib.budget import OverBudgetError
from lesson_lib.protocol import ProtocolError, find_problems


def redact(text: str) -> str:
    """Never show the API key, even if an error message carried it."""
    key = os.environ.get("OPENAI_API_KEY") or ""
    return text.replace(key, "***") if len(key) >= 8 else text


HINTS = {  # what to do about an API error, by HTTP status
    400: "The memory passes every check, so something else in the request was refused (the "
         "model, the tools, a setting): sending it again will not help.",
    401: "Check OPENAI_API_KEY, and that OPENAI_BASE_URL is the provider this key belongs to; "
         "set both in your shell, never in a notebook cell.",
    403: "This key may not use this model or endpoint: check LESSON_MODEL and the key's access.",
    404: "Check the model name (LESSON_MODEL).",
    429: "Rate limited: wait a moment and send again; your message is in the memory.",
}


def _hint(status: int, code: str | None, messages: list[dict]) -> str:
    """What to do about an API error, in one sentence."""
    if code == "context_length_exceeded":
        return "The request is longer than the model's window: lower the budget, or /clear."
    if code == "insufficient_quota":
        return "The account has no credit left: waiting will not help; check its billing."
    problems = find_problems(messages) if status == 400 else []
    if problems:
        return problems[0].explanation
    if status >= 500:
        return ("The provider failed on its side: wait a moment and send again; the memory "
                "kept everything said so far.")
    return HINTS.get(status, "Send again; the memory kept everything said so far.")


def _what(refused: list[dict]) -> str:
    """What a memory refused, in words: 'your message', 'the model's answer', ..."""
    first = refused[0] if refused else {}
    role = first.get("role")
    if role == "assistant":
        return ("the model's tool calls and their results" if first.get("tool_calls")
                else "the model's answer")
    return {"user": "your message", "tool": "a tool result",
            "system": "a system message"}.get(role, "a message")


def _budget_notice(error: Any, refused: list[dict]) -> tuple[str, str]:
    """An OverBudgetError (lesson_lib.budget): what the memory refused, why, and the fix."""
    what, unit, needed = _what(refused), error.unit, f"{error.needed:,} {error.unit}"
    shorten = "shorten your message" if what == "your message" else "ask for less at a time"
    tools = "; unticking a tool frees room too" if unit == "tokens" else ""
    return (f"The memory refused {what}: over its budget of {error.budget:,} {unit}",
            f"{type(error).__name__}: over budget by {error.over:,} {unit}. The least this "
            "memory may send (the system prompt and the current turn, tool definitions "
            f"included) needs {needed}. Nothing was added to the memory.\n"
            f"→ Raise the budget above {needed}, leaving room for the answer, or "
            f"{shorten}{tools}.")


def _api_notice(error: Any, messages: list[dict]) -> tuple[str, str]:
    """An openai error: the API's answer (its status and code), or no usable answer."""
    import openai  # noqa: PLC0415

    if isinstance(error, openai.APIStatusError):
        body = error.body if isinstance(error.body, dict) else {}
        code = body.get("code")
        name = code or body.get("type") or getattr(error.response, "reason_phrase", "") or "error"
        hint = _hint(error.status_code, code, messages)
        return (f"The API answered {error.status_code} ({name})",
                f"{body.get('message') or error.message}\n→ {hint}")
    host = error.request.url.host if getattr(error, "request", None) is not None else "?"
    if isinstance(error, openai.APITimeoutError):
        return ("No answer: the request timed out", f"{host} did not answer in time.\n"
                "→ Send again; the memory kept your message.")
    if isinstance(error, openai.APIConnectionError):
        return ("Could not reach the model", f"No connection to {host}.\n→ Check the network "
                "or OPENAI_BASE_URL, then send again; the memory kept your message.")
    return (f"The model's answer could not be read ({type(error).__name__})",
            f"{error.message}\n→ Send again; if it keeps happening, this provider does not "
            "answer in the OpenAI format.")


def describe_error(error: BaseException,   # what the agent raised
                   messages: list[dict],   # the memory afterwards
                   refused: list[dict] | None = None,  # what the memory would not take, if known
                   ) -> tuple[str, str]:
    """(title, detail) of a readable notice for `error`: what happened and what to do."""
    import openai  # noqa: PLC0415  (lazy, like everywhere in lesson_lib)

    if isinstance(error, openai.APIError):
        return _api_notice(error, messages)
    if isinstance(error, OverBudgetError):
        return _budget_notice(error, refused or [])
    if isinstance(error, ProtocolError):
        return (f"The memory refused {_what(refused or [])}",
                f"{error.message}\n→ {error.explanation}")
    return f"Something went wrong: {type(error).__name__}", str(error)
