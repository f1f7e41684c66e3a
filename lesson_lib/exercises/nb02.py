"""Self-checks for notebook 02, "Messages are memory".

- `check_chat_turn(chat_turn)`: the learner's one turn of a remembering chat
  (add the user's words, send the whole memory, add the reply, return its text).
- `check_prediction(first, second)`: two predicted `message_count()` values for
  `prediction_sequence()` (a trim, then a clear).
- `check_count_user_turns(count_user_turns)`: the learner's count of user messages,
  tried on memories with and without a system prompt, and with tool rounds.
"""

from __future__ import annotations

from collections.abc import Callable

from lesson_lib.exercises import Report, run_check
from lesson_lib.memory import ShortTermMemory

SYSTEM = "You are a helpful assistant."
TURNS = ("My name is Xiaoming", "Thanks!", "What's my name?")  # what check_chat_turn types


# ----------------------------------------------------------------- exercise 1: chat_turn

def _roles(memory: ShortTermMemory) -> list[str]:
    return [m["role"] for m in memory.to_api_format()]


def _check_turns(report: Report, chat_turn: Callable) -> None:
    memory = ShortTermMemory()
    memory.add_system(SYSTEM)
    replies, growth = [], []
    for text in TURNS:
        before = memory.message_count()
        replies.append(chat_turn(memory, text))
        growth.append(memory.message_count() - before)
        if replies == [...] and growth == [0]:  # the stub, untouched
            report.expect(False, "chat_turn is not written yet (it returned ...)",
                          "replace ... with the three steps: add, chat, add; then return")
            return
    report.expect(growth == [2, 2, 2], f"each turn adds 2 messages (yours added {growth})",
                  "add the user's message before the call and the assistant's reply after it")
    roles = _roles(memory)
    wanted = ["system"] + ["user", "assistant"] * len(TURNS)
    report.expect(roles == wanted, f"roles in memory: {', '.join(roles)}",
                  f"expected {', '.join(wanted)}: user first, then the reply to it")
    said = [m["content"] for m in memory.to_api_format() if m["role"] == "user"]
    report.expect(said == list(TURNS), "the user messages hold the three texts, in order",
                  f"expected {list(TURNS)}, got {said}")
    last = memory.to_api_format()[-1]
    report.expect(isinstance(replies[-1], str) and replies[-1] == last.get("content"),
                  f"chat_turn returns the reply's text (got {type(replies[-1]).__name__})",
                  "return reply.content, the same text you added to the memory")
    text = getattr(replies[-1], "content", replies[-1])  # a message object: quote its text
    report.expect("xiaoming" in str(text).lower(),
                  f"the reply to {TURNS[-1]!r} remembers the name: {text!r}",
                  ("the model only knows what this one call sends: look at what your "
                   "chat_turn passes to chat()",
                   "send the whole memory, chat(memory.to_api_format()), not just the "
                   "newest message"))


def check_chat_turn(chat_turn: Callable) -> bool:  # the learner's chat_turn(memory, text)
    """Run three turns through `chat_turn` on a fresh memory and report what it did."""
    return run_check("chat_turn", lambda report: _check_turns(report, chat_turn))


# ----------------------------------------------------------------- exercise 2: predict

def prediction_sequence() -> tuple[int, int]:
    """The sequence whose two message counts exercise 2 asks you to predict."""
    m = ShortTermMemory(max_messages=4)
    m.add_system("You are a helpful assistant.")
    m.add({"role": "user", "content": "My name is Xiaoming"})
    m.add({"role": "assistant", "content": "Nice to meet you, Xiaoming!"})
    m.add({"role": "user", "content": "Is it cloudy in Chengdu?"})
    m.add({"role": "assistant", "content": "Yes: cloudy, 16°C."})
    m.add({"role": "user", "content": "Thanks!"})
    first = m.message_count()   # prediction 1
    m.clear_non_system()
    m.add({"role": "user", "content": "What's my name?"})
    second = m.message_count()  # prediction 2
    return first, second


FIRST_HINTS = {
    6: "six messages went in (the system prompt too), but max_messages=4 caps the memory: "
       "each add() trims",
    5: "the system message counts toward max_messages too",
    3: "the trim drops only as many as needed to get back to max_messages",
}
SECOND_HINTS = {
    0: "clear_non_system() keeps the system message",
    1: "the user message added after the clear counts too",
    5: "clear_non_system() forgets everything but the system message",
    4: "clear_non_system() forgets everything but the system message",
}


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_one(report: Report, label: str, guess: object, answer: int, hints: dict) -> None:
    if not _is_count(guess):
        report.expect(False, f"{label}: not answered yet (got {guess!r})",
                      "replace ... with a whole number")
        return
    report.expect(guess == answer, f"{label}: you predicted {guess}",
                  hints.get(guess, "walk through the sequence one add at a time, "
                                   "counting the system message"))


def check_prediction(first: object, second: object) -> bool:  # your two predicted counts
    """Compare the two predicted counts with what `prediction_sequence()` really gives."""
    real_first, real_second = prediction_sequence()

    def body(report: Report) -> None:
        _check_one(report, "prediction 1 (system prompt + five messages)", first, real_first, FIRST_HINTS)
        _check_one(report, "prediction 2 (after the clear and one more message)", second, real_second,
                   SECOND_HINTS)

    return run_check("predict message_count()", body)


# ----------------------------------------------------------------- exercise 3: count

def _call(call_id: str, city: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": "get_current_weather", "arguments": f'{{"location": "{city}"}}'}}


def _memory(messages: list[dict], system: bool = True) -> ShortTermMemory:
    memory = ShortTermMemory()
    if system:
        memory.add_system(SYSTEM)
    memory.add_many(messages)
    return memory


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


def count_cases() -> list[tuple[str, ShortTermMemory, int, str]]:
    """(what, memory, expected count, hint) for check_count_user_turns."""
    plain = [_user("My name is Xiaoming"), _assistant("Nice to meet you!"), _user("Thanks!"),
             _assistant("You're welcome!"), _user("What's my name?"), _assistant("Xiaoming.")]
    one_call = [_user("Weather in Chengdu?"),
                {"role": "assistant", "content": None, "tool_calls": [_call("call_1", "Chengdu")]},
                {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 16}'},
                _assistant("Chengdu is cloudy, 16°C.")]
    two_calls = [_user("Weather in Shanghai and Beijing?"),
                 {"role": "assistant", "content": None,
                  "tool_calls": [_call("call_a", "Shanghai"), _call("call_b", "Beijing")]},
                 {"role": "tool", "tool_call_id": "call_a", "content": '{"temperature": 20}'},
                 {"role": "tool", "tool_call_id": "call_b", "content": '{"temperature": 12}'},
                 _assistant("Shanghai 20°C, Beijing 12°C.")]
    cleared = _memory(plain)
    cleared.clear_non_system()
    by_role = "count the messages whose role is 'user'"
    return [
        ("an empty memory", ShortTermMemory(), 0, by_role),
        ("only a system prompt", _memory([]), 0, "the system message is not a user turn"),
        ("system + 3 plain turns", _memory(plain), 3, by_role),
        ("a question still waiting for its reply", _memory([_user("Hi")]), 1, by_role),
        ("no system prompt, 2 questions, 1 reply",
         _memory(plain[:3], system=False), 2,
         "not every memory has a system message, and the newest question may have no reply"),
        ("one turn with a tool round (4 messages)", _memory(one_call), 1,
         "a tool round adds 4 messages for one question (notebook 03): "
         "count roles, not messages"),
        ("one turn with two parallel calls (5 messages)", _memory(two_calls), 1,
         "tool and assistant messages are not user turns, however many there are"),
        ("after clear_non_system()", cleared, 0, "a cleared memory holds no user message"),
    ]


def _check_counts(report: Report, count_user_turns: Callable) -> None:
    changed = []
    for what, memory, expected, hint in count_cases():
        before = memory.to_api_format()
        got = count_user_turns(memory)
        report.expect(_is_count(got) and got == expected,
                      f"{what}: expected {expected}, got {got!r}", hint)
        if memory.to_api_format() != before:
            changed.append(what)
    report.expect(not changed, "it leaves every memory unchanged"
                  + (f" (it changed: {'; '.join(changed)})" if changed else ""),
                  "only read the memory: to_api_format() gives you a copy to look at")


def check_count_user_turns(count_user_turns: Callable) -> bool:  # count_user_turns(memory)
    """Try `count_user_turns` on several memories and report each result."""
    return run_check("count_user_turns", lambda report: _check_counts(report, count_user_turns))
