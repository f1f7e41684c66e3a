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
from lesson_lib.i18n import N_, Twins, _, ngettext

# The conversation of exercise 1, with its Chinese twin: a Chinese learner is judged on
# 小明 by the same rules (DATA.NAME, or the module's NAME, in the language spoken now). How
# many messages it takes depends on the data: Chinese costs fewer tokens (notebook 01), so
# the Chinese notebook's first attempt sends one message more (solutions/08_forget.py).
DATA = Twins(
    NAME=("Xiaoming", "小明"),
    NAME_MESSAGE=("My name is Xiaoming.", "我叫小明。"),
    NAME_QUESTION=("What is my name?", "我叫什么名字？"),
)


def __getattr__(name: str) -> Any:
    return DATA.get(name, f"module {__name__!r}")

FORGET_BUDGETS = {"ShortTermMemory": 10, "TokenBudgetMemory": 600}  # strategy → its budget
FEWEST = 1  # one message is enough under both: see the hints
FORGET_HINTS = {
    "ShortTermMemory": N_("max_messages counts messages, however short they are: ask ONE "
                          "question that makes the model call several tools at once (each "
                          "call adds a tool message). Watch the Messages gauge in the app"),
    "TokenBudgetMemory": N_("token_budget counts tokens, and tool results are tokens too (so "
                            "are the tool definitions): one question whose answer needs "
                            "several tool results fills it fast. Watch the Tokens gauge in the "
                            "app"),
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
        report.expect(False, _("{strategy}: not answered yet").format(strategy=strategy),
                      _("write a list of messages, e.g. {strategy}: [\"...\"]").format(
                          strategy=repr(strategy)))
        return None
    if not isinstance(answer, (list, tuple)) or not all(isinstance(m, str) for m in answer):
        report.expect(False, _("{strategy}: a list of messages (strings)").format(
                          strategy=strategy),
                      _("got {value}").format(value=_short(repr(answer))))
        return None
    if any(m.strip().startswith("/") for m in answer):
        report.expect(False, _("{strategy}: no commands").format(strategy=strategy),
                      _("/clear forgets everything at once: make the memory's trim do it"))
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
    state.send(DATA.NAME_MESSAGE)
    for text in messages:
        before = len(state.entries)
        state.send(text)
        notices = [e for e in state.entries[before:] if e.kind in ("notice", "warning")]
        if notices:
            report.expect(False, _("{label}: the app answered {message}").format(
                              label=label, message=_short(repr(text), 50)),
                          _("it showed a notice instead: {notice}: {detail}").format(
                              notice=_short(notices[0].text, 90),
                              detail=_short(notices[0].detail, 160)))
            return
    report.expect(True, ngettext("{label}: the app answered your {n} message",
                                 "{label}: the app answered your {n} messages",
                                 len(messages)).format(label=label, n=len(messages)))
    state.send(DATA.NAME_QUESTION)
    request = _sent_with(state, DATA.NAME_QUESTION)
    kept = [m for m in request if DATA.NAME in str(m.get("content") or "")]
    if not report.expect(not kept, _("{label}: the request asking {question} no longer "
                                     "mentions {name}").format(
                             label=label, question=repr(DATA.NAME_QUESTION), name=DATA.NAME)
                         + (_(" (it still does in {kept} of its {n} messages)").format(
                             kept=len(kept), n=len(request)) if kept else ""),
                         _(FORGET_HINTS[strategy])):
        return
    report.expect(len(messages) <= FEWEST,
                  ngettext("{label}: forgotten after {n} message",
                           "{label}: forgotten after {n} messages",
                           len(messages)).format(label=label, n=len(messages))
                  + ("" if len(messages) <= FEWEST else
                     _("; it can be done with {fewest}").format(fewest=FEWEST)),
                  _(FORGET_HINTS[strategy]))


def check_forget(my_messages: Any) -> bool:  # {"ShortTermMemory": [...], "TokenBudgetMemory": [...]}
    """Send NAME_MESSAGE, then the learner's messages, then NAME_QUESTION, under each strategy;
    report whether the name is gone from the request, and in how many messages."""
    def body(report: Report) -> None:
        if not isinstance(my_messages, dict):
            report.expect(False, _("my_messages is a dict: strategy name → list of messages"),
                          _("got {value}").format(value=type(my_messages).__name__))
            return
        for strategy in FORGET_BUDGETS:
            messages = _as_messages(report, strategy, my_messages.get(strategy, ...))
            if messages is not None:
                _forget_one(report, strategy, messages)
    with clock.frozen(clock.EXAMPLE):
        return run_check(_("forget the name"), body)


# ----------------------------------------------------------------- exercise 2: the break

def _stepper_state(report: Report, my_stepper: Any) -> Any:
    """The StepperState behind `my_stepper` (a stepper() view or a StepperState), or None."""
    from lesson_lib.stepper import StepperState  # noqa: PLC0415

    state = getattr(my_stepper, "state", my_stepper)
    if isinstance(state, StepperState):
        return state
    report.expect(False, _("my_stepper is a stepper"),
                  _("got {value}: make it with stepper(my_app)").format(
                      value=type(my_stepper).__name__))
    return None


def _recorded_under_naive(report: Report, steps: Any) -> bool:
    from lesson_lib.memory import NaiveMemory  # noqa: PLC0415

    memory = steps.recording.memory() if steps.recording.memory else None
    wanted = f"{BREAK_STRATEGY}(max_messages={BREAK_BUDGET})"
    ok = (isinstance(memory, NaiveMemory)
          and getattr(memory, "max_messages", None) == BREAK_BUDGET)
    got = (f"{type(memory).__name__}(max_messages={getattr(memory, 'max_messages', '?')})"
           if memory is not None else _("no memory: every message is kept"))
    return report.expect(ok, _("the recording replays into {wanted}").format(wanted=wanted)
                         + ("" if ok else _(" (yours: {got})").format(got=got)),
                         _("record the conversation in chat_app(strategy={strategy}, "
                           "budget={budget}) and make the stepper with stepper(my_app)").format(
                             strategy=repr(BREAK_STRATEGY), budget=BREAK_BUDGET))


def _up_to_date(report: Any, steps: Any) -> bool:
    """A stepper made from an app replays the conversation as it was then: if the app has
    gone on since, say so (its verdict would be about an older conversation)."""
    from lesson_lib.stepper import as_recording  # noqa: PLC0415

    source = getattr(steps, "source", None)
    if source is None:
        return True
    now, then = len(as_recording(source).messages), len(steps.recording.messages)
    if now <= then:
        return True  # (nothing to say: a stepper that is up to date is the usual case)
    return report.expect(False,
                         _("the stepper shows the conversation as it is now (it was made at "
                           "{then} messages; the app holds {now})").format(then=then, now=now),
                         _("a stepper replays the conversation as it was when it was made: "
                           "run the stepper cell again, my_stepper = stepper(my_app), then "
                           "this check"))


def check_breaking_point(my_stepper: Any) -> bool:  # stepper(my_app), or its StepperState
    """The conversation breaks the rules under NaiveMemory(6), and the stepper shows where."""
    def body(report: Report) -> None:
        steps = _stepper_state(report, my_stepper)
        if steps is None or not _recorded_under_naive(report, steps):
            return
        if not _up_to_date(report, steps):
            return
        said = sum(m.get("role") == "user" for m in steps.recording.messages)
        if not report.expect(said > 0, ngettext(
                "the recording has a conversation ({n} message, {said} from the user)",
                "the recording has a conversation ({n} messages, {said} from the user)",
                steps.total).format(n=steps.total, said=said),
                             _("chat in my_app (or send from code), then run the stepper cell "
                               "again: a stepper is made from the conversation as it is then")):
            return
        broken = steps.broken_at
        if not report.expect(broken is not None, _("the rules break somewhere in it") + (
                _(": first at step {step} of {total}").format(step=broken, total=steps.total)
                if broken else
                _(" (all {total} steps would be accepted)").format(total=steps.total)),
                _("NaiveMemory breaks when its trim drops an assistant(tool_calls) and keeps "
                  "its results: ask a question that needs two tool calls at once, then one or "
                  "two more messages, and watch the inspector turn red")):
            return
        first = steps.frames[broken - 1].problems[0]
        there = steps.step == broken
        report.expect(there, _("the stepper stands at step {step}, where the rules "
                               "break").format(step=broken)
                      + (f": {_short(first.message, 90)}" if there else
                         _(" (it is at step {step})").format(step=steps.step)),
                      _("press Next or Back (or call my_stepper.state.go(...)) until the red "
                        "banner says 'The rules break here', not 'Still broken'"))
    return run_check(_("the breaking point"), body)
