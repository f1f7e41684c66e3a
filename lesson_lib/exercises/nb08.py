"""Self-checks for notebook 08, the chat app.

- `check_forget(my_messages)`: for each strategy in FORGET_BUDGETS, the messages the learner
  sends after NAME_MESSAGE so that, when the app is asked NAME_QUESTION, no message of the
  request mentions the name any more; the fewest possible is one message.
- `check_breaking_point(my_stepper)`: a stepper (or its StepperState) over a conversation
  recorded under NaiveMemory(max_messages=6), standing at the step where the rules break.

The checks run the app on the offline teaching model with the clock frozen (whatever backend
the notebook uses), so their verdicts are the same for everyone and need no key.
"""

from __future__ import annotations

from typing import Any

from lesson_lib import clock
from lesson_lib.exercises import Report, run_check
from lesson_lib.text import plural

NAME = "Xiaoming"
NAME_MESSAGE = "My name is Xiaoming."
NAME_QUESTION = "What is my name?"
FORGET_BUDGETS = {"ShortTermMemory": 10, "TokenBudgetMemory": 600}  # strategy → its budget
FEWEST = 1  # one message is enough under both: see the hints
FORGET_HINTS = {
    "ShortTermMemory": "max_messages counts messages, however short they are: ask ONE question "
                       "that makes the model call several tools at once (each call adds a tool "
                       "message). Watch the Messages gauge in the app",
    "TokenBudgetMemory": "token_budget counts tokens, and tool results are tokens too (so are "
                         "the tool definitions): one question whose answer needs several tool "
                         "results fills it fast. Watch the Tokens gauge in the app",
}
BREAK_STRATEGY, BREAK_BUDGET = "NaiveMemory", 6


def _short(text: Any, limit: int = 70) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ----------------------------------------------------------------- exercise 1: forget

def _as_messages(report: Report, strategy: str, answer: Any) -> list[str] | None:
    """The learner's messages for `strategy` as a list of strings; None (with a ❌) if not."""
    if isinstance(answer, str):
        answer = [answer]
    if answer is ... or answer is None or answer == []:
        report.expect(False, f"{strategy}: not answered yet",
                      f"write a list of messages, e.g. {strategy!r}: [\"...\"]")
        return None
    if not isinstance(answer, (list, tuple)) or not all(isinstance(m, str) for m in answer):
        report.expect(False, f"{strategy}: a list of messages (strings)",
                      f"got {_short(repr(answer))}")
        return None
    if any(m.strip().startswith("/") for m in answer):
        report.expect(False, f"{strategy}: no commands",
                      "/clear forgets everything at once: make the memory's trim do it")
        return None
    return list(answer)


def _sent_with(state: Any, question: str) -> list[dict]:
    """The request the app sent with the last `question`: the recording replayed into the
    app's memory up to that message (what the stepper shows at that step)."""
    from lesson_lib.stepper import StepperState  # noqa: PLC0415

    steps = StepperState(state)
    asked = max(f.step for f in steps.frames if f.message == {"role": "user", "content": question})
    return steps.frames[asked - 1].request


def _forget_one(report: Report, strategy: str, messages: list[str]) -> None:
    from lesson_lib.app import ChatAppState  # noqa: PLC0415

    state = ChatAppState(strategy=strategy, budget=FORGET_BUDGETS[strategy], backend="offline")
    label = f"{strategy}({state.strategy.budget_name}={state.budget})"
    state.send(NAME_MESSAGE)
    for text in messages:
        before = len(state.entries)
        state.send(text)
        notices = [e for e in state.entries[before:] if e.kind in ("notice", "warning")]
        if notices:
            report.expect(False, f"{label}: the app answered {_short(repr(text), 50)}",
                          f"it showed a notice instead: {_short(notices[0].text, 90)}: "
                          f"{_short(notices[0].detail, 160)}")
            return
    report.expect(True, f"{label}: the app answered your {plural(len(messages), 'message')}")
    state.send(NAME_QUESTION)
    request = _sent_with(state, NAME_QUESTION)
    kept = [m for m in request if NAME in str(m.get("content") or "")]
    if not report.expect(not kept, f"{label}: the request asking {NAME_QUESTION!r} no longer "
                         f"mentions {NAME}" + (f" (it still does in {len(kept)} of its "
                                               f"{len(request)} messages)" if kept else ""),
                         FORGET_HINTS[strategy]):
        return
    report.expect(len(messages) <= FEWEST, f"{label}: forgotten after "
                  f"{plural(len(messages), 'message')}" + ("" if len(messages) <= FEWEST else f"; it can be done with "
                                   f"{FEWEST}"), FORGET_HINTS[strategy])


def check_forget(my_messages: Any) -> bool:  # {"ShortTermMemory": [...], "TokenBudgetMemory": [...]}
    """Send NAME_MESSAGE, then the learner's messages, then NAME_QUESTION, under each strategy;
    report whether the name is gone from the request, and in how many messages."""
    def body(report: Report) -> None:
        if not isinstance(my_messages, dict):
            report.expect(False, "my_messages is a dict: strategy name → list of messages",
                          f"got {type(my_messages).__name__}")
            return
        for strategy in FORGET_BUDGETS:
            messages = _as_messages(report, strategy, my_messages.get(strategy, ...))
            if messages is not None:
                _forget_one(report, strategy, messages)
    with clock.frozen(clock.EXAMPLE):
        return run_check("forget the name", body)


# ----------------------------------------------------------------- exercise 2: the break

def _stepper_state(report: Report, my_stepper: Any) -> Any:
    """The StepperState behind `my_stepper` (a stepper() view or a StepperState), or None."""
    from lesson_lib.stepper import StepperState  # noqa: PLC0415

    state = getattr(my_stepper, "state", my_stepper)
    if isinstance(state, StepperState):
        return state
    report.expect(False, "my_stepper is a stepper",
                  f"got {type(my_stepper).__name__}: make it with stepper(my_app)")
    return None


def _recorded_under_naive(report: Report, steps: Any) -> bool:
    from lesson_lib.memory import NaiveMemory  # noqa: PLC0415

    memory = steps.recording.memory() if steps.recording.memory else None
    wanted = f"{BREAK_STRATEGY}(max_messages={BREAK_BUDGET})"
    ok = (isinstance(memory, NaiveMemory)
          and getattr(memory, "max_messages", None) == BREAK_BUDGET)
    got = (f"{type(memory).__name__}(max_messages={getattr(memory, 'max_messages', '?')})"
           if memory is not None else "no memory: every message is kept")
    return report.expect(ok, f"the recording replays into {wanted}" + ("" if ok else
                         f" (yours: {got})"),
                         f"record the conversation in chat_app(strategy={BREAK_STRATEGY!r}, "
                         f"budget={BREAK_BUDGET}) and make the stepper with stepper(my_app)")


def check_breaking_point(my_stepper: Any) -> bool:  # stepper(my_app), or its StepperState
    """The conversation breaks the rules under NaiveMemory(6), and the stepper shows where."""
    def body(report: Report) -> None:
        steps = _stepper_state(report, my_stepper)
        if steps is None or not _recorded_under_naive(report, steps):
            return
        said = sum(m.get("role") == "user" for m in steps.recording.messages)
        if not report.expect(said > 0, f"the recording has a conversation ("
                             f"{plural(steps.total, 'message')}, {said} from the user)",
                             "chat in my_app (or send from code), then run the stepper cell "
                             "again: a stepper is made from the conversation as it is then"):
            return
        broken = steps.broken_at
        if not report.expect(broken is not None, "the rules break somewhere in it" + (
                f": first at step {broken} of {steps.total}" if broken else
                f" (all {steps.total} steps would be accepted)"),
                "NaiveMemory breaks when its trim drops an assistant(tool_calls) and keeps "
                "its results: ask a question that needs two tool calls at once, then one or "
                "two more messages, and watch the inspector turn red"):
            return
        first = steps.frames[broken - 1].problems[0]
        there = steps.step == broken
        report.expect(there, f"the stepper stands at step {broken}, where the rules break"
                      + (f": {_short(first.message, 90)}" if there else
                         f" (it is at step {steps.step})"),
                      "press Next or Back (or call my_stepper.state.go(...)) until the red "
                      "banner says 'The rules break here', not 'Still broken'")
    return run_check("the breaking point", body)
