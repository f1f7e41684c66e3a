"""Self-checks for notebook 04, trimming pitfalls.

1. `check_my_trim(my_trim)`: the learner's `my_trim(messages, max_messages)` is run on each
   history in TRIM_SCENARIOS. A result passes a scenario when it is the input with some
   messages removed (nothing added, edited or reordered, the input left alone) and:
   the API accepts it; every system message is kept; the latest user message is kept; the
   newest message is kept; it has at most `max_messages` messages (when the system messages,
   the question and the newest tool round already need more, exactly those); and it does
   not forget more than a trim has to.
2. `check_turn_trim(my_turn_trim)`: the same, plus one rule: after the system messages, the
   kept history starts with a user message (no answer whose question is gone).

`show_trim(trim, name)` shows one scenario before and after a trim function.

The bank is small on purpose: each scenario has a name that says what is tricky about it.
Pass `scenarios=[...]` (TrimScenario objects) to check against another bank.
"""

from __future__ import annotations

import copy
import json
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.exercises import Report
from lesson_lib.protocol import ProtocolError, find_problems


@dataclass(frozen=True)
class TrimScenario:
    """One history to trim, and what makes it tricky."""
    name: str                 # says what is tricky, e.g. "parallel group at the cut"
    messages: list[dict]      # a valid history, oldest first
    max_messages: int         # the limit the trim is asked to meet
    tricky: str               # one sentence for the hint


# ----------------------------------------------------------------- the scenarios' messages

SYSTEM = {"role": "system", "content": "You are a helpful assistant. Use the tools you are "
                                       "given to look up live information; answer briefly."}
WEATHER = {"Chengdu": (16, "cloudy"), "Shanghai": (22, "sunny"), "Beijing": (18, "cloudy"),
           "Tokyo": (20, "light rain")}


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _answer(text: str) -> dict:
    return {"role": "assistant", "content": text}


def _asks(*calls: tuple[str, str, dict], content: str = "") -> dict:
    """An assistant message with tool_calls, each given as (id, function name, arguments)."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": cid, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
        for cid, name, args in calls]}


def _weather_call(cid: str, city: str) -> tuple[str, str, dict]:
    return cid, "get_current_weather", {"location": city}


def _weather(cid: str, city: str) -> dict:
    celsius, condition = WEATHER[city]
    result = {"location": city, "temperature": celsius, "unit": "celsius",
              "condition": condition}
    return {"role": "tool", "tool_call_id": cid, "content": json.dumps(result)}


TRIM_SCENARIOS: list[TrimScenario] = [
    TrimScenario(
        "nothing to trim",
        [SYSTEM, _user("My name is Xiaoming."), _answer("Nice to meet you, Xiaoming!"),
         _user("What's the weather in Chengdu?"), _asks(_weather_call("call_cd1", "Chengdu")),
         _weather("call_cd1", "Chengdu"), _answer("Chengdu is cloudy, 16°C.")],
        max_messages=10,
        tricky="everything already fits, so the trim must return it as it is"),
    TrimScenario(
        "parallel group at the cut",
        [SYSTEM, _user("Which is warmer, Shanghai or Beijing?"),
         _asks(_weather_call("call_sh1", "Shanghai"), _weather_call("call_bj1", "Beijing")),
         _weather("call_sh1", "Shanghai"), _weather("call_bj1", "Beijing"),
         _answer("Shanghai is warmer: 22°C, against 18°C in Beijing."),
         _user("My name is Xiaoming."), _answer("Nice to meet you, Xiaoming!"),
         _user("What is my name?")],
        max_messages=6,
        tricky="the oldest tool round has two parallel calls, so two tool messages follow "
               "its assistant message"),
    TrimScenario(
        "system message in the middle",
        [SYSTEM, _user("My name is Xiaoming."), _answer("Nice to meet you, Xiaoming!"),
         {"role": "system", "content": "From now on, answer in Chinese."},
         _user("What's the weather in Chengdu?"), _asks(_weather_call("call_cd2", "Chengdu")),
         _weather("call_cd2", "Chengdu"), _answer("成都多云，16°C。"),
         _user("What is my name?")],
        max_messages=5,
        tricky="a second system message sits in the middle"),
    TrimScenario(
        "three tool rounds in one turn",
        [SYSTEM, _user("My name is Xiaoming."), _answer("Nice to meet you, Xiaoming!"),
         _user("Check Chengdu, then Shanghai, then Tokyo, one city at a time."),
         _asks(_weather_call("call_cd3", "Chengdu")), _weather("call_cd3", "Chengdu"),
         _asks(_weather_call("call_sh3", "Shanghai")), _weather("call_sh3", "Shanghai"),
         _asks(_weather_call("call_tk3", "Tokyo")), _weather("call_tk3", "Tokyo")],
        max_messages=5,
        tricky="the current turn alone (a question and three tool rounds) is longer than "
               "max_messages"),
    TrimScenario(
        "assistant with both content and tool_calls",
        [SYSTEM, _user("What's the weather in Tokyo?"),
         _asks(_weather_call("call_tk4", "Tokyo"), content="Let me check the weather for you."),
         _weather("call_tk4", "Tokyo"), _answer("Tokyo has light rain, 20°C."),
         _user("Thanks!"), _answer("You're welcome!"), _user("What is my name?")],
        max_messages=6,
        tricky="the oldest assistant message has text AND tool_calls: it still opens a tool "
               "group"),
]


def scenario(name: str, scenarios: Sequence[TrimScenario] | None = None) -> TrimScenario:
    """The scenario called `name` (a copy of its messages can be changed freely)."""
    bank = TRIM_SCENARIOS if scenarios is None else scenarios
    for s in bank:
        if s.name == name:
            return s
    names = ", ".join(repr(s.name) for s in bank)
    raise KeyError(f"no trim scenario called {name!r}; the scenarios are {names}")


# ----------------------------------------------------------------- what a good trim keeps

def _groups(messages: list[dict]) -> list[list[int]]:
    """Indices of the messages, grouped: an assistant(tool_calls) with the tool messages
    right after it is one group; every other message is a group of its own."""
    groups, i = [], 0
    while i < len(messages):
        j = i + 1
        if messages[i].get("role") == "assistant" and messages[i].get("tool_calls"):
            while j < len(messages) and messages[j].get("role") == "tool":
                j += 1
        groups.append(list(range(i, j)))
        i = j
    return groups


def _latest_user(messages: list[dict]) -> int | None:
    return max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)


def _protected(messages: list[dict]) -> set[int]:
    """What any good trim keeps: system messages, the latest user message, the newest group."""
    keep = {i for i, m in enumerate(messages) if m.get("role") == "system"}
    if (last := _latest_user(messages)) is not None:
        keep.add(last)
    groups = _groups(messages)
    if groups:
        keep.update(groups[-1])
    return keep


def _least_kept(messages: list[dict], max_messages: int) -> int:
    """How many messages a careful, turn-aware trim keeps: drop whole groups, oldest first,
    until the list fits and the history after the system messages starts at a user
    message. A trim that keeps fewer forgets more than it has to."""
    if len(messages) <= max_messages:
        return len(messages)
    protected, last_user = _protected(messages), _latest_user(messages)
    kept, at_question = len(messages), False  # at_question: the latest question leads now
    for group in _groups(messages):
        head = messages[group[0]]
        if head["role"] == "system":
            continue
        if kept <= max_messages and (head["role"] == "user" or at_question):
            break
        if group[0] in protected:
            at_question = at_question or group[0] == last_user
            continue
        kept -= len(group)
    return kept


# ----------------------------------------------------------------- judging one result

@dataclass
class _Problem:
    what: str   # what went wrong, in this scenario
    hint: str   # what to change


def _positions(result: list, messages: list[dict]) -> list[int] | None:
    """Where each kept message sits in the input (matched from the end, so a repeated
    message counts as the newer one); None if `result` is not the input with some
    messages removed."""
    positions, j = [], len(messages) - 1
    for m in reversed(result):
        while j >= 0 and messages[j] != m:
            j -= 1
        if j < 0:
            return None
        positions.append(j)
        j -= 1
    return positions[::-1]


def _validity_hint(problem: ProtocolError) -> str:
    if "must be a response to a preceeding message" in problem.message:
        return ("a tool message was kept without the assistant(tool_calls) before it: when you "
                "drop an assistant message that has tool_calls, drop every tool message right "
                "after it too")
    if "did not have response messages" in problem.message:
        return ("an assistant(tool_calls) was kept without all of its tool messages: a group "
                "(assistant + its tool replies) goes or stays as a whole")
    return problem.explanation or "run validate_messages() on your result to see why"


def _shape_problem(result: Any) -> _Problem | None:
    if result is None:
        return _Problem("it returned None", "end your function with `return` and the trimmed "
                        "list")
    if not isinstance(result, list):
        return _Problem(f"it returned a {type(result).__name__}, not a list",
                        "return a list of message dicts")
    if not all(isinstance(m, Mapping) for m in result):
        return _Problem("some items of the result are not message dicts",
                        "return the message dicts themselves, not their roles or texts")
    return None


def _problems(s: TrimScenario, result: list[dict], turn_aware: bool) -> list[_Problem]:
    """Everything wrong with `result` (a list of dicts) as a trim of scenario `s`."""
    messages = s.messages
    positions = _positions(result, messages)
    if positions is None:
        return [_Problem("it is not the input with some messages removed (a message was "
                         "added, changed or moved)",
                         "only remove messages: keep the others as they are, in their order")]
    found, kept = [], set(positions)
    if problems := find_problems(result):
        found.append(_Problem(f"the API would refuse it: {problems[0].message}",
                              _validity_hint(problems[0])))
    systems = {i for i, m in enumerate(messages) if m["role"] == "system"}
    if not systems <= kept:
        found.append(_Problem(
            f"it dropped {len(systems - kept)} of the {len(systems)} system messages",
            "never drop a system message, wherever it is: skip role 'system' when you "
            "choose what to drop"))
    last_user = _latest_user(messages)
    if last_user is not None and last_user not in kept:
        found.append(_Problem(
            f"it dropped the latest user message ({messages[last_user]['content']!r})",
            "find the last user message first and never drop it (the model must see the "
            "question it is answering); drop the oldest tool rounds after it instead"))
    if len(messages) - 1 not in kept:
        found.append(_Problem("it dropped the newest message",
                              "drop from the oldest end: the newest messages are what was "
                              "just said"))
    limit = max(s.max_messages, len(_protected(messages)))
    if len(result) > limit:
        found.append(_Problem(f"it kept {len(result)} messages, more than {limit}",
                              "keep dropping (whole groups) until len(result) <= max_messages"))
    least = _least_kept(messages, s.max_messages)
    if len(result) < least:
        found.append(_Problem(
            f"it kept only {len(result)} messages where {least} can stay",
            "stop dropping as soon as the list fits: a trim should forget as little as it can"))
    first = next((m for m in result if m["role"] != "system"), None)
    if turn_aware and first is not None and first["role"] != "user":
        found.append(_Problem(
            f"after the system messages it starts with {_a(first['role'])} message whose "
            "question is gone",
            "after trimming, keep dropping the oldest group while the first non-system "
            "message is not a user message"))
    return found


def _a(role: str) -> str:
    return f"an {role}" if role[:1] in "aeiou" else f"a {role}"


@dataclass
class _Outcome:
    scenario: TrimScenario
    result: Any = None
    problems: list[_Problem] = field(default_factory=list)
    returned_none: bool = False


def _run_one(trim: Callable, s: TrimScenario, turn_aware: bool) -> _Outcome:
    """Run the learner's trim on a copy of the scenario and judge what comes back."""
    given = copy.deepcopy(s.messages)
    try:
        result = trim(given, s.max_messages)
    except Exception as error:  # the learner's code failed: a finding, not a crash
        where = traceback.extract_tb(error.__traceback__)[-1]
        return _Outcome(s, None, [_Problem(
            f"it raised {type(error).__name__}: {error}",
            f"see line {where.lineno} of {where.name}(); try show_trim(your_function, "
            f"{s.name!r}) to run this history alone")])
    outcome = _Outcome(s, result, returned_none=result is None)
    if given != s.messages:
        outcome.problems.append(_Problem(
            "it changed the list it was given",
            "work on a copy: trimmed = list(messages), then remove from trimmed (the "
            "caller's history must stay as it was)"))
    if (shape := _shape_problem(result)) is not None:
        outcome.problems.append(shape)
    else:
        outcome.problems += _problems(s, result, turn_aware)
    return outcome


# ----------------------------------------------------------------- the checks

def _not_a_function(title: str, hint: str) -> bool:
    report = Report(title)
    report.expect(False, "not done yet", hint)
    print(report)
    return False


def _check(trim: Any, title: str, scenarios: Sequence[TrimScenario] | None,
           turn_aware: bool) -> bool:
    bank = list(TRIM_SCENARIOS if scenarios is None else scenarios)
    if not callable(trim):
        return _not_a_function(title, "define it with def ...(messages, max_messages): and "
                                      "pass the function itself (no parentheses)")
    outcomes = [_run_one(trim, s, turn_aware) for s in bank]
    if all(o.returned_none for o in outcomes):
        return _not_a_function(title, "it returns None for every history: write its body, "
                                      "ending with return and the trimmed list")
    passed = sum(not o.problems for o in outcomes)
    report = Report(f"{title} ({passed} of {len(bank)} scenarios pass)")
    for o in outcomes:
        s = o.scenario
        size = f"{len(s.messages)} messages, max {s.max_messages}"
        if not o.problems:
            report.expect(True, f"{s.name} ({size}): kept {len(o.result)}")
            continue
        report.expect(False, f"{s.name} ({size}): " + "; ".join(p.what for p in o.problems),
                      f"{o.problems[0].hint}. In this history, {s.tricky}.")
    print(report)
    return report.passed


def check_my_trim(my_trim: Any,  # your function: my_trim(messages, max_messages) -> list
                  scenarios: Sequence[TrimScenario] | None = None) -> bool:
    """Exercise 1: run `my_trim` on every scenario and print what passes and what does not."""
    return _check(my_trim, "Exercise 1 · my_trim", scenarios, turn_aware=False)


def check_turn_trim(my_turn_trim: Any,  # my_turn_trim(messages, max_messages) -> list
                    scenarios: Sequence[TrimScenario] | None = None) -> bool:
    """Exercise 2: as exercise 1, and the kept history (after the system messages) must
    start with a user message."""
    return _check(my_turn_trim, "Exercise 2 · my_turn_trim", scenarios, turn_aware=True)


def show_trim(trim: Callable,  # a trim function: trim(messages, max_messages) -> list
              name: str,       # a scenario's name, e.g. "parallel group at the cut"
              scenarios: Sequence[TrimScenario] | None = None):
    """One scenario before and after `trim`, side by side: what it dropped struck through,
    what the API would refuse in red."""
    from lesson_lib.display import show_messages, side_by_side  # noqa: PLC0415

    s = scenario(name, scenarios)
    after = trim(copy.deepcopy(s.messages), s.max_messages)
    after = after if isinstance(after, list) else []
    positions = _positions(after, s.messages) if all(isinstance(m, Mapping) for m in after) \
        else None
    dropped = [] if positions is None else [m for i, m in enumerate(s.messages)
                                            if i not in set(positions)]
    return side_by_side(show_messages(s.messages),
                        show_messages(after, dropped=dropped),
                        titles=[f"{s.name} (max_messages={s.max_messages})",
                                f"after {getattr(trim, '__name__', 'the trim')}"])
