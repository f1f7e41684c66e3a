"""Self-checks for notebook 01, the stateless model.

- `check_my_messages(my_messages)`: build the messages for the next call from the
  turns so far, so the model can answer "What's my name?".
- `check_answers(my_answers)`: True/False statements about statelessness (STATEMENTS).
- `check_forget(my_forget)`: make the model forget on purpose by not sending a secret.

The checks always ask the offline teaching model (whatever backend the notebook
uses), so their verdicts are the same for everyone and need no key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lesson_lib.exercises import Report, run_check, signature_problem, wrong_signature
from lesson_lib.i18n import N_, _, by_language, is_chinese, ngettext
from lesson_lib.protocol import assistant_to_dict, find_problems

NAME_QUESTION = {"en": "What's my name?", "zh": "我刚才说我叫什么名字？"}
# The check's cases are named by the language the conversation is in (a label in the report)
ENGLISH, CHINESE = N_("English"), N_("Chinese")

# Each statement: (text, the truth, why). The notebook lists the texts; the check explains.
STATEMENTS: dict[str, tuple[str, bool, str]] = {
    "A": (N_("The model stores the conversation between calls."), False,
          N_("nothing is kept between calls: asked 'What's my name?' on its own, the model "
             "said 'You haven't told me your name.' It only knows what the request's messages "
             "hold")),
    "B": (N_("To make the model remember, your program sends the earlier messages again on "
             "every call."), True,
          N_("memory is what you send: the same question sent with the history got "
             "'You told me your name is Xiaoming.'")),
    "C": (N_("The model's own earlier replies can be left out of the history: it wrote them, "
             "so it knows them already."), False,
          N_("it does not know them: every call is a first meeting. Send them back as "
             "{'role': 'assistant', ...} (assistant_to_dict) so the model sees the whole "
             "conversation")),
    "D": (N_("Sending the same request twice to the offline model gives byte-identical "
             "replies, ids included."), True,
          N_("its reply is a pure function of the request body, so nothing else can change it "
             "(a real API gives fresh ids and may vary the wording, but keeps nothing either)")),
    "E": (N_("The longer the conversation, the more tokens each new request costs."), True,
          N_("every call re-sends the whole history: in the Chengdu conversation each call "
             "sent more tokens than the one before")),
    "F": (N_("The model forgot Xiaoming's name because the conversation had grown too long."),
          False,
          N_("the forgetful call was a single short message: the model forgot because the "
             "first message was not sent. (A history too long for the model is a later "
             "problem)")),
}

_client: Any = None


def _teacher() -> Any:
    """The offline teaching model's client, made on first use."""
    global _client
    if _client is None:
        from lesson_lib.offline import offline_client  # noqa: PLC0415  (lazy: openai is slow)

        _client = offline_client()
    return _client


def _ask(messages: list) -> str:
    """The offline model's answer to `messages` (already known to be valid)."""
    from lesson_lib.llm import chat  # noqa: PLC0415

    return chat(messages, client=_teacher()).content or ""


def _conversation(lines: list[str]) -> list[dict]:
    """The history after sending each line in turn, with the history, to the offline model."""
    from lesson_lib.llm import chat  # noqa: PLC0415

    history: list[dict] = []
    for line in lines:
        history.append({"role": "user", "content": line})
        history.append(assistant_to_dict(chat(history, client=_teacher())))
    return history


def _roles(messages: list) -> str:
    return "[" + ", ".join(str(m.get("role")) if isinstance(m, dict) else "?"
                           for m in messages) + "]"


def _short(text: Any, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) for m in value)


def _accepted(report: Report, label: str, value: Any, name: str) -> bool:
    """Expect `value` to be a list of message dicts the API accepts."""
    if not _is_message_list(value):
        return report.expect(False, _("{label}: {name} returns a list of message dicts").format(
                                 label=label, name=name),
                             _("it returned {value}: return a list like "
                               "[{{'role': 'user', 'content': '...'}}, ...]").format(
                                 value=_short(repr(value))))
    problems = find_problems(value)
    return report.expect(not problems, _("{label}: the API accepts the list {roles}").format(
                             label=label, roles=_roles(value)),
                         f"{problems[0]}" if problems else "")


def _learners_first(cases: list) -> list:
    """The English case and its Chinese twin, the learner's language first: the Chinese
    edition's reader is judged on 小明 first, then on Xiaoming, by the same rules."""
    return cases[::-1] if is_chinese() else cases


# ----------------------------------------------------------------- exercise 1

def _turns_of(history: list[dict]) -> list[tuple[str, str]]:
    return [(history[i]["content"], history[i + 1]["content"])
            for i in range(0, len(history), 2)]


def _messages_case(report: Report, label: str, my_messages: Callable, turns: list,
                   question: str, name: str | None) -> None:
    messages = my_messages([tuple(t) for t in turns], question)
    if not _accepted(report, label, messages, "my_messages"):
        return
    expected = []
    for user_text, assistant_text in turns:
        expected += [{"role": "user", "content": user_text},
                     {"role": "assistant", "content": assistant_text}]
    expected.append({"role": "user", "content": question})
    sent = [{"role": m.get("role"), "content": m.get("content")}
            for m in messages if m.get("role") != "system"]
    hint = _("you sent {messages} {roles}. Send each turn as a user message and then the "
             "assistant's reply ({{'role': 'assistant', ...}}), oldest first, and the new "
             "question last").format(messages=_messages(len(sent)), roles=_roles(sent))
    if sent[:-1] == [m for m in expected[:-1] if m["role"] == "user"]:
        hint = _("you left out the assistant's replies: the model should see what it said, too")
    elif sent != expected and sorted(map(repr, sent)) == sorted(map(repr, expected)):
        hint = _("every message is there, in the wrong order: the oldest turn first, each user "
                 "message right before its reply, and the new question last")
    wanted = ngettext("{n} earlier turn, then the question", "{n} earlier turns, then the question",
                      len(turns)).format(n=len(turns)) if turns else _("only the question")
    report.expect(sent == expected, _("{label}: {wanted} ({messages})").format(
                      label=label, wanted=wanted, messages=_messages(len(expected))),
                  hint)
    answer = _ask(messages)
    if name is None:
        report.expect(True, _("{label}: the model answered {answer!r}").format(
            label=label, answer=answer))
        return
    report.expect(name in answer, _("{label}: the model remembers {name} "
                                    "(asked {question!r}, it answered {answer!r})").format(
                      label=label, name=name, question=question, answer=_short(answer)),
                  _("the model only knows what your list holds: the turn that gives the name "
                    "must be in it"))


def _messages(n: int) -> str:
    """'1 message', '5 messages', in the learner's language."""
    return ngettext("{n} message", "{n} messages", n).format(n=n)


def check_my_messages(my_messages: Callable) -> bool:
    """Exercise 1: my_messages(turns, question) -> the messages for the next call."""
    if wrong_signature(_("Exercise 1 · my_messages(turns, question)"), signature_problem(
            my_messages, "my_messages(turns, question)", [], "")):
        return False

    def body(report: Report) -> None:
        english = _turns_of(_conversation(["My name is Xiaoming", "What's the weather in Chengdu?"]))
        chinese = _turns_of(_conversation(["我叫小明"]))
        cases = [(_(ENGLISH), english, NAME_QUESTION["en"], "Xiaoming"),
                 (_(CHINESE), chinese, NAME_QUESTION["zh"], "小明")]
        for label, turns, question, name in _learners_first(cases):
            _messages_case(report, label, my_messages, turns, question, name)
        _messages_case(report, _("No earlier turns"), my_messages, [],
                       NAME_QUESTION[by_language("en", "zh")], None)
    return run_check(_("Exercise 1 · my_messages(turns, question)"), body)


# ----------------------------------------------------------------- exercise 2

def check_answers(my_answers: Any) -> bool:
    """Exercise 2: {"A": True/False, ...} for the STATEMENTS."""
    def body(report: Report) -> None:
        if not isinstance(my_answers, dict):
            report.expect(False, _("my_answers is a dict like {'A': True, 'B': False, ...}"),
                          _("it is {value}").format(value=_short(repr(my_answers))))
            return
        given = {k: my_answers.get(k, ...) for k in STATEMENTS}
        if all(v is ... for v in given.values()):
            report.expect(False, _("no answers yet"), _("replace each ... with True or False"))
            return
        for key, (text, truth, why) in STATEMENTS.items():
            answer = given[key]
            if answer is ...:
                report.expect(False, _("{key}: not answered yet").format(key=key),
                              _("replace ... with True or False"))
            elif not isinstance(answer, bool):
                report.expect(False, _("{key}: answer True or False").format(key=key),
                              _("got {value}").format(value=_short(repr(answer))))
            else:
                report.expect(answer == truth, _("{key}: {statement} → {answer}").format(
                                  key=key, statement=_(text), answer=answer), _(why))
    return run_check(_("Exercise 2 · true or false"), body)


# ----------------------------------------------------------------- exercise 3

def _forget_case(report: Report, label: str, my_forget: Callable, lines: list[str],
                 secret: str, lang: str) -> None:
    history = _conversation(lines)
    untouched = [dict(m) for m in history]
    forgotten = my_forget(history, secret)
    report.expect(history == untouched,
                  _("{label}: the history you were given is unchanged").format(label=label),
                  _("build a new list (a list comprehension or a loop that appends) instead "
                    "of removing from the one you were given: the agent may still need it"))
    if not _accepted(report, label, forgotten, "my_forget"):
        return
    still = [(i, m) for i, m in enumerate(forgotten) if secret in str(m.get("content"))]
    report.expect(not still, _("{label}: {secret!r} appears in no message you would send").format(
                      label=label, secret=secret),
                  _("message {index} ({role}) still says {content!r}: the model's replies "
                    "repeat what it was told, and a real model reads them too. Drop the whole "
                    "turn").format(index=still[0][0], role=still[0][1].get("role"),
                                   content=_short(still[0][1].get("content")))
                  if still else "")
    kept = [m for k in range(0, len(history), 2) for m in history[k:k + 2]
            if not any(secret in str(x.get("content")) for x in history[k:k + 2])]
    report.expect(forgotten == kept, _("{label}: the other turns are kept, in order "
                                       "({n} messages)").format(label=label, n=len(kept)),
                  _("expected {expected}, got {got}: drop each turn (a user message and the "
                    "reply after it) that mentions the secret, keep the rest").format(
                      expected=_roles(kept), got=_roles(forgotten)))
    answer = _ask([*forgotten, {"role": "user", "content": NAME_QUESTION[lang]}])
    report.expect(secret not in answer, _("{label}: asked {question!r} next, the model "
                                          "answered {answer!r}").format(
                      label=label, question=NAME_QUESTION[lang], answer=_short(answer)),
                  _("it still knows the name: something in your list says it"))


def check_forget(my_forget: Callable) -> bool:
    """Exercise 3: my_forget(history, secret) -> the history without the turns naming it."""
    if wrong_signature(_("Exercise 3 · my_forget(history, secret)"), signature_problem(
            my_forget, "my_forget(history, secret)", [], "")):
        return False

    def body(report: Report) -> None:
        cases = [(_(ENGLISH), ["My name is Xiaoming", "What's the weather in Chengdu?",
                               "What's my name?"], "Xiaoming", "en"),
                 (_(CHINESE), ["帮我查一下成都天气", "我叫小明", "谢谢"], "小明", "zh")]
        for label, lines, secret, lang in _learners_first(cases):
            _forget_case(report, label, my_forget, lines, secret, lang)
    return run_check(_("Exercise 3 · my_forget(history, secret)"), body)
