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

from lesson_lib.exercises import Report, run_check
from lesson_lib.protocol import assistant_to_dict, find_problems
from lesson_lib.text import plural

NAME_QUESTION = {"en": "What's my name?", "zh": "我刚才说我叫什么名字？"}

# Each statement: (text, the truth, why). The notebook lists the texts; the check explains.
STATEMENTS: dict[str, tuple[str, bool, str]] = {
    "A": ("The model stores the conversation between calls.", False,
          "nothing is kept between calls: asked 'What's my name?' on its own, the model said "
          "'You haven't told me your name.' It only knows what the request's messages hold"),
    "B": ("To make the model remember, your program sends the earlier messages again on "
          "every call.", True,
          "memory is what you send: the same question sent with the history got "
          "'You told me your name is Xiaoming.'"),
    "C": ("The model's own earlier replies can be left out of the history: it wrote them, "
          "so it knows them already.", False,
          "it does not know them: every call is a first meeting. Send them back as "
          "{'role': 'assistant', ...} (assistant_to_dict) so the model sees the whole conversation"),
    "D": ("Sending the same request twice to the offline model gives byte-identical replies, "
          "ids included.", True,
          "its reply is a pure function of the request body, so nothing else can change it "
          "(a real API gives fresh ids and may vary the wording, but keeps nothing either)"),
    "E": ("The longer the conversation, the more tokens each new request costs.", True,
          "every call re-sends the whole history: in the Chengdu conversation each call "
          "sent more tokens than the one before"),
    "F": ("The model forgot Xiaoming's name because the conversation had grown too long.", False,
          "the forgetful call was a single short message: the model forgot because the "
          "first message was not sent. (A history too long for the model is a later problem)"),
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
        return report.expect(False, f"{label}: {name} returns a list of message dicts",
                             f"it returned {_short(repr(value))}: return a list like "
                             "[{'role': 'user', 'content': '...'}, ...]")
    problems = find_problems(value)
    return report.expect(not problems, f"{label}: the API accepts the list {_roles(value)}",
                         f"{problems[0]}" if problems else "")


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
    hint = (f"you sent {plural(len(sent), 'message')} {_roles(sent)}. Send each turn as a user "
            "message and then the assistant's reply ({'role': 'assistant', ...}), oldest first, "
            "and the new question last")
    if sent[:-1] == [m for m in expected[:-1] if m["role"] == "user"]:
        hint = "you left out the assistant's replies: the model should see what it said, too"
    elif sent != expected and sorted(map(repr, sent)) == sorted(map(repr, expected)):
        hint = ("every message is there, in the wrong order: the oldest turn first, each user "
                "message right before its reply, and the new question last")
    wanted = f"{plural(len(turns), 'earlier turn')}, then the question" if turns else \
        "only the question"
    report.expect(sent == expected, f"{label}: {wanted} ({plural(len(expected), 'message')})",
                  hint)
    answer = _ask(messages)
    if name is None:
        report.expect(True, f"{label}: the model answered {answer!r}")
        return
    report.expect(name in answer, f"{label}: the model remembers {name} "
                  f"(asked {question!r}, it answered {_short(answer)!r})",
                  "the model only knows what your list holds: the turn that gives the name "
                  "must be in it")


def check_my_messages(my_messages: Callable) -> bool:
    """Exercise 1: my_messages(turns, question) -> the messages for the next call."""
    def body(report: Report) -> None:
        english = _turns_of(_conversation(["My name is Xiaoming", "What's the weather in Chengdu?"]))
        chinese = _turns_of(_conversation(["我叫小明"]))
        _messages_case(report, "English", my_messages, english, NAME_QUESTION["en"], "Xiaoming")
        _messages_case(report, "Chinese", my_messages, chinese, NAME_QUESTION["zh"], "小明")
        _messages_case(report, "No earlier turns", my_messages, [], NAME_QUESTION["en"], None)
    return run_check("Exercise 1 · my_messages(turns, question)", body)


# ----------------------------------------------------------------- exercise 2

def check_answers(my_answers: Any) -> bool:
    """Exercise 2: {"A": True/False, ...} for the STATEMENTS."""
    def body(report: Report) -> None:
        if not isinstance(my_answers, dict):
            report.expect(False, "my_answers is a dict like {'A': True, 'B': False, ...}",
                          f"it is {_short(repr(my_answers))}")
            return
        given = {k: my_answers.get(k, ...) for k in STATEMENTS}
        if all(v is ... for v in given.values()):
            report.expect(False, "no answers yet", "replace each ... with True or False")
            return
        for key, (text, truth, why) in STATEMENTS.items():
            answer = given[key]
            if answer is ...:
                report.expect(False, f"{key}: not answered yet", "replace ... with True or False")
            elif not isinstance(answer, bool):
                report.expect(False, f"{key}: answer True or False",
                              f"got {_short(repr(answer))}")
            else:
                report.expect(answer == truth, f"{key}: {text} → {answer}", why)
    return run_check("Exercise 2 · true or false", body)


# ----------------------------------------------------------------- exercise 3

def _forget_case(report: Report, label: str, my_forget: Callable, lines: list[str],
                 secret: str, lang: str) -> None:
    history = _conversation(lines)
    untouched = [dict(m) for m in history]
    forgotten = my_forget(history, secret)
    report.expect(history == untouched, f"{label}: the history you were given is unchanged",
                  "build a new list (a list comprehension or a loop that appends) instead "
                  "of removing from the one you were given: the agent may still need it")
    if not _accepted(report, label, forgotten, "my_forget"):
        return
    still = [(i, m) for i, m in enumerate(forgotten) if secret in str(m.get("content"))]
    report.expect(not still, f"{label}: {secret!r} appears in no message you would send",
                  f"message {still[0][0]} ({still[0][1].get('role')}) still says "
                  f"{_short(still[0][1].get('content'))!r}: the model's replies repeat what it "
                  "was told, and a real model reads them too. Drop the whole turn"
                  if still else "")
    kept = [m for k in range(0, len(history), 2) for m in history[k:k + 2]
            if not any(secret in str(x.get("content")) for x in history[k:k + 2])]
    report.expect(forgotten == kept, f"{label}: the other turns are kept, in order "
                  f"({len(kept)} messages)",
                  f"expected {_roles(kept)}, got {_roles(forgotten)}: drop each turn (a user "
                  "message and the reply after it) that mentions the secret, keep the rest")
    answer = _ask([*forgotten, {"role": "user", "content": NAME_QUESTION[lang]}])
    report.expect(secret not in answer, f"{label}: asked {NAME_QUESTION[lang]!r} next, the model "
                  f"answered {_short(answer)!r}", "it still knows the name: something in your "
                  "list says it")


def check_forget(my_forget: Callable) -> bool:
    """Exercise 3: my_forget(history, secret) -> the history without the turns naming it."""
    def body(report: Report) -> None:
        _forget_case(report, "English", my_forget, ["My name is Xiaoming",
                     "What's the weather in Chengdu?", "What's my name?"], "Xiaoming", "en")
        _forget_case(report, "Chinese", my_forget, ["帮我查一下成都天气", "我叫小明", "谢谢"],
                     "小明", "zh")
    return run_check("Exercise 3 · my_forget(history, secret)", body)
