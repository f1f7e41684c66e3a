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
from lesson_lib.i18n import N_, _, ngettext
from lesson_lib.protocol import ProtocolError, find_problems


def redact(text: str) -> str:
    """Never show the API key, even if an error message carried it."""
    key = os.environ.get("OPENAI_API_KEY") or ""
    return text.replace(key, "***") if len(key) >= 8 else text


HINTS = {  # what to do about an API error, by HTTP status
    400: N_("The memory passes every check, so something else in the request was refused (the "
         "model, the tools, a setting): sending it again will not help."),
    401: N_("Check OPENAI_API_KEY, and that OPENAI_BASE_URL is the provider this key belongs to; "
         "set both in your shell, never in a notebook cell."),
    403: N_("This key may not use this model or endpoint: check LESSON_MODEL and the key's "
            "access."),
    404: N_("Check the model name (LESSON_MODEL)."),
    429: N_("Rate limited: wait a moment and send again; your message is in the memory."),
}


def stopped_notice(max_turns: int, tools: list[str]) -> str:
    """What an agent says when its loop hit `max_turns` without an answer (LoopAgent)."""
    calls = ngettext("{n} model call", "{n} model calls", max_turns).format(n=max_turns)
    return _("I stopped after {calls}, each asking for tools, without reaching an answer "
             "(max_turns={max_turns}; tools used: {tools}).").format(
        calls=calls, max_turns=max_turns, tools=", ".join(tools))


def _hint(status: int, code: str | None, messages: list[dict]) -> str:
    """What to do about an API error, in one sentence."""
    if code == "context_length_exceeded":
        return _("The request is longer than the model's window: lower the budget, or /clear.")
    if code == "insufficient_quota":
        return _("The account has no credit left: waiting will not help; check its billing.")
    problems = find_problems(messages) if status == 400 else []
    if problems:
        return problems[0].explanation
    if status >= 500:
        return _("The provider failed on its side: wait a moment and send again; the memory "
                 "kept everything said so far.")
    hint = HINTS.get(status, N_("Send again; the memory kept everything said so far."))
    return _(hint)


def _what(refused: list[dict]) -> str:
    """What a memory refused, in words: 'your message', 'the model's answer', ..."""
    first = refused[0] if refused else {}
    role = first.get("role")
    if role == "assistant":
        return (_("the model's tool calls and their results") if first.get("tool_calls")
                else _("the model's answer"))
    said = {"user": N_("your message"), "tool": N_("a tool result"),
            "system": N_("a system message")}.get(role, N_("a message"))
    return _(said)


def _amount(n: int, unit: str) -> str:
    """"1,200 tokens", "12 messages", in the learner's language."""
    said = {"tokens": N_("{n} tokens"), "messages": N_("{n} messages")}.get(unit)
    return _(said).format(n=f"{n:,}") if said else f"{n:,} {unit}"


def _budget_notice(error: Any, refused: list[dict]) -> tuple[str, str]:
    """An OverBudgetError (lesson_lib.budget): what the memory refused, why, and the fix."""
    what, unit, needed = _what(refused), error.unit, _amount(error.needed, error.unit)
    yours = refused[:1] and refused[0].get("role") == "user"
    shorten = _("shorten your message") if yours else _("ask for less at a time")
    tools = _("; unticking a tool frees room too") if unit == "tokens" else ""
    return (_("The memory refused {what}: over its budget of {budget}").format(
                what=what, budget=_amount(error.budget, unit)),
            _("{error}: over budget by {over}. The least this memory may send (the system "
              "prompt and the current turn, tool definitions included) needs {needed}. "
              "Nothing was added to the memory.").format(
                error=type(error).__name__, over=_amount(error.over, unit), needed=needed)
            + "\n→ " + _("Raise the budget above {needed}, leaving room for the answer, or "
                          "{shorten}{tools}.").format(needed=needed, shorten=shorten,
                                                      tools=tools))


def _api_notice(error: Any, messages: list[dict]) -> tuple[str, str]:
    """An openai error: the API's answer (its status and code), or no usable answer."""
    import openai  # noqa: PLC0415

    if isinstance(error, openai.APIStatusError):
        body = error.body if isinstance(error.body, dict) else {}
        code = body.get("code")
        name = code or body.get("type") or getattr(error.response, "reason_phrase", "") or "error"
        hint = _hint(error.status_code, code, messages)
        return (_("The API answered {status} ({name})").format(status=error.status_code,
                                                              name=name),
                f"{body.get('message') or error.message}\n→ {hint}")
    host = error.request.url.host if getattr(error, "request", None) is not None else "?"
    if isinstance(error, openai.APITimeoutError):
        return (_("No answer: the request timed out"),
                _("{host} did not answer in time.").format(host=host) + "\n→ "
                + _("Send again; the memory kept your message."))
    if isinstance(error, openai.APIConnectionError):
        return (_("Could not reach the model"),
                _("No connection to {host}.").format(host=host) + "\n→ "
                + _("Check the network or OPENAI_BASE_URL, then send again; the memory kept "
                    "your message."))
    return (_("The model's answer could not be read ({error})").format(
                error=type(error).__name__),
            f"{error.message}\n→ " + _("Send again; if it keeps happening, this provider does "
                                       "not answer in the OpenAI format."))


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
        return (_("The memory refused {what}").format(what=_what(refused or [])),
                f"{error.message}\n→ {error.explanation}")
    return _("Something went wrong: {error}").format(error=type(error).__name__), str(error)
