"""Self-checks for notebook 00 (start here).

- `check_first_history(messages)`: a two-message history, written by hand as plain dicts,
  in which the user says their name and the assistant greets them by it.
- `check_chinese_reply(reply)`: what `chat()` returned for a question asked in Chinese.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lesson_lib.exercises import Report, run_check
from lesson_lib.i18n import N_, _
from lesson_lib.offline.understand import CJK, name_in
from lesson_lib.protocol import find_problems

NAME_EXAMPLES = N_('"My name is Xiaoming." or "我叫小明。"')


def _field(message: Any, name: str) -> Any:
    """A field of a message: a dict key, or an SDK object's attribute."""
    return message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)


def _not_done(value: Any) -> bool:
    return value is ... or value is None


# ----------------------------------------------------------------- exercise 1

def _history_shape(report: Report, messages: Any) -> bool:
    """A list of two plain dicts; False stops the check (nothing more can be read)."""
    if not report.expect(isinstance(messages, list) and len(messages) == 2,
                         _("a list of two messages"),
                         _("write [ {{...user...}}, {{...assistant...}} ]; got {got}").format(
                             got=_("a list of {n}").format(n=len(messages))
                             if isinstance(messages, list) else type(messages).__name__)):
        return False
    return report.expect(all(isinstance(m, dict) for m in messages),
                         _("each message is a plain dict"),
                         _('write each one as {"role": ..., "content": ...}'))


def _history_rules(report: Report, messages: list) -> None:
    """The API accepts the list, and the roles are user then assistant."""
    problems = find_problems(messages)
    report.expect(not problems, _("validate_messages() accepts it"),
                  f"{problems[0].message} → {problems[0].explanation}" if problems else "")
    roles = [m.get("role") for m in messages]
    report.expect(roles == ["user", "assistant"],
                  _("message 0 is the user's, message 1 the assistant's"),
                  _("the roles are {roles}: the API knows 'user' and 'assistant' "
                    "(no 'bot', 'human' or 'ai')").format(roles=roles))


def check_first_history(messages: Any) -> bool:
    """Exercise 1: [user says their name, assistant greets them by it], as plain dicts."""
    def body(report: Report) -> None:
        if _not_done(messages):
            report.expect(False, _("not done yet"), _("replace ... with your list of two dicts"))
            return
        if not _history_shape(report, messages):
            return
        _history_rules(report, messages)
        said, greeting = str(messages[0].get("content")), str(messages[1].get("content"))
        name = name_in(said)
        if not report.expect(name is not None,
                             _("the user says their name ({name})").format(name=name) if name
                             else _("the user says their name"),
                             _("say it in a way the model recognises: {examples}").format(
                                 examples=_(NAME_EXAMPLES))):
            return
        greets = report.expect(name.casefold() in greeting.casefold(),
                               _("the assistant greets them by that name"),
                               (_("the user told the assistant their name: the reply should "
                                  "use it ({name})").format(name=name),
                                _('for example "Nice to meet you, {name}!"').format(name=name)))
        if greets and report.passed:  # everything right so far: show what it is for
            _remembers(report, messages, name)
    return run_check(_("Exercise 1 · a first history"), body)


def _remembers(report: Report, messages: list, name: str) -> None:
    """The payoff: sent as history, the two messages let the model answer the name question."""
    from lesson_lib.llm import chat  # noqa: PLC0415  (only when the history is right)

    ask = "我叫什么名字？" if CJK.search(str(messages[0]["content"])) else "What is my name?"
    answer = chat(messages + [{"role": "user", "content": ask}]).content or ""
    report.expect(name.casefold() in answer.casefold(),
                  _("sent with {ask!r}, it lets the model answer: {answer!r}").format(
                      ask=ask, answer=answer),
                  _("the model should find the name in the history: is it in message 0?"))


# ----------------------------------------------------------------- exercise 2

def check_chinese_reply(reply: Any) -> bool:
    """Exercise 2: the assistant message chat() returned for a question asked in Chinese."""
    def body(report: Report) -> None:
        if _not_done(reply):
            report.expect(False, _("not done yet"),
                          _('set reply = chat([{"role": "user", "content": "<a question in '
                            'Chinese>"}])'))
            return
        if not report.expect(not isinstance(reply, str),
                             _("the whole message, not only its text"),
                             _("pass what chat() returned (reply), not reply.content")):
            return
        report.expect(_field(reply, "role") == "assistant", _("it is an assistant message"),
                      _("its role is {role!r}: pass the message chat() returned, not the one "
                        "you sent").format(role=_field(reply, "role")))
        content = _field(reply, "content")
        if not report.expect(isinstance(content, str) and content.strip(), _("it has text"),
                             _("ask a question the model answers in words (no tools needed)")):
            return
        report.expect(bool(CJK.search(content)),
                      _("it is in Chinese: {content!r}").format(content=content), (
                          N_("the model answers in the language of your latest message"),
                          N_("so ask your question in Chinese"),
                          N_("for example 你好！你能做什么？ (hello! what can you do?)")))
    return run_check(_("Exercise 2 · a reply in Chinese"), body)
