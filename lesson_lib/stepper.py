"""The classroom stepper: replay a recorded conversation one message at a time.

A `Recording` is every message of a conversation in the order it was said (trimmed ones
included). `StepperState` walks through it with `next()`, `back()`, `first()` and `last()`;
at each step it shows the newest message in large type and the request that would be sent
at that point, drawn by `lesson_lib.display`. What "the request" is depends on the recording:

- with no memory (`Recording(memory=None)`), it is every message so far (the prefix);
- with a memory (`memory=lambda: NaiveMemory(max_messages=5)`), the messages are added to a
  fresh memory of that kind one by one, and the request is what that memory keeps; the
  messages its trim dropped at that step are shown struck through.

`lesson_lib.protocol.find_problems` checks each request. The first step where the API would
refuse it is the moment the rules break: a red banner shows the API's error text and the
explanation. A later trim can mend the list and another break it again: "Still broken (since
step N)" counts from the start of the current run of broken steps. A request that ends
inside an open tool round (an assistant asked for tools, the results are still arriving) is
not an error, it is a wait: no request is sent until every call has its reply, so the
stepper says "waiting" instead.

`StepperState` is plain Python (every move is a method a test can call); `stepper()` is the
thin ipywidgets view on it, sized for a projector. `seed_three_rounds()`, `trim_pitfall()`
and `agent_loop_chain()` record the series' three classic conversations live on the
offline model, with the clock frozen, so they are the same on every run.

`TapedMemory` wraps any memory and keeps a tape of every message it was given: the chat
app (lesson_lib.app) records its conversations with it.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.display import MONO, ROLE_COLOURS, SANS, show_messages
from lesson_lib.i18n import N_, _, by_language, ngettext
from lesson_lib.protocol import ProtocolError, find_problems

RECORDED_AT = "2026-05-01T09:30:00+00:00"  # the frozen clock of the recorded conversations
RED, GREEN, AMBER, INK = "#b91c1c", "#166534", "#92400e", "#111827"
MISSING_REPLIES = "An assistant message with 'tool_calls' must be followed by tool messages"


# ----------------------------------------------------------------- recording a memory

class TapedMemory:
    """A memory that also keeps a tape: every message it was given, in order, trimmed or not.

    It passes everything on to the memory it wraps (ShortTermMemory, NaiveMemory, ...), so an
    Agent can use it as its memory. `clear_non_system()` restarts the tape too: a cleared
    conversation is a new conversation. When the memory refuses an add (a ProtocolError, an
    OverBudgetError), nothing goes on the tape and `last_refused` holds what was refused."""

    def __init__(self, memory: Any):  # the memory that decides what is kept
        self.inner = memory
        self.tape: list[dict] = memory.to_api_format()  # what it already holds
        self.last_refused: list[dict] = []  # what the latest add offered, if it was refused

    def add(self, message: dict) -> None:
        taped = self.last_refused = [copy.deepcopy(dict(message))]  # until the memory takes it
        self.inner.add(message)                 # may refuse (ValueError): then no tape
        self.tape += taped
        self.last_refused = []

    def add_many(self, messages: Iterable[dict]) -> None:
        taped = self.last_refused = [copy.deepcopy(dict(m)) for m in messages]
        self.inner.add_many(taped)              # all or nothing, so the tape is too
        self.tape += taped
        self.last_refused = []

    def add_system(self, text: str) -> None:
        self.add({"role": "system", "content": text})

    def clear_non_system(self) -> None:
        self.inner.clear_non_system()
        self.tape = self.inner.to_api_format()

    def to_api_format(self) -> list[dict]:
        return self.inner.to_api_format()

    def message_count(self) -> int:
        return self.inner.message_count()

    def pending_calls(self) -> list[str]:
        return self.inner.pending_calls()

    @property
    def last_dropped(self) -> list[dict]:
        return getattr(self.inner, "last_dropped", [])

    def __len__(self) -> int:
        return self.inner.message_count()

    def __repr__(self) -> str:
        n = len(self.tape)
        return _("TapedMemory({memory}; {count} on tape)").format(
            memory=repr(self.inner), count=ngettext("{n} message", "{n} messages", n).format(n=n))


# ----------------------------------------------------------------- recordings and frames

@dataclass
class Recording:
    """A conversation to replay: its messages in order, and how to turn them into requests."""
    title: str                                 # shown above the stepper
    messages: list[dict]                       # every message, in the order it was said
    memory: Callable[[], Any] | None = None    # a fresh memory to replay into; None: prefixes
    notes: dict[int, str] = field(default_factory=dict)  # step (from 1) → a teacher's note


@dataclass
class Frame:
    """What the stepper shows at one step."""
    step: int                    # 1 for the first message
    message: dict                # the newest message
    request: list[dict]          # what would be sent now (the memory, or the prefix)
    dropped: list[dict]          # what this step's trim removed
    problems: list[ProtocolError]  # why the API would refuse `request` (empty: it accepts it)
    waiting: list[str]           # call ids still waiting for their tool reply
    note: str = ""


def open_round(messages: list[Mapping]) -> list[str]:
    """Ids of the calls the newest assistant(tool_calls) still waits for, when the list
    ends inside its tool round; [] otherwise."""
    answered = []
    for m in reversed(messages):
        if m.get("role") != "tool":
            calls = (m.get("tool_calls") or []) if m.get("role") == "assistant" else []
            return [c.get("id") for c in calls if c.get("id") not in answered]
        answered.append(m.get("tool_call_id"))
    return []


def request_problems(request: list[dict], *, final: bool = False) -> tuple[list, list[str]]:
    """(problems, waiting) for one step. An open tool round at the end is a wait, not a
    problem, except at the last step of a recording (no reply will ever come)."""
    waiting = open_round(request)
    problems = find_problems(request)
    if waiting and not final:
        problems = [p for p in problems
                    if not (p.index == len(request) - 1 and p.message.startswith(MISSING_REPLIES))]
    return problems, waiting


def _replay(recording: Recording) -> Iterable[tuple[list[dict], list[dict], list]]:
    """(request, dropped, refusals) after each message: the prefix, or the memory's view."""
    memory = recording.memory() if recording.memory else None
    for k, message in enumerate(recording.messages):
        if memory is None:
            yield recording.messages[:k + 1], [], []
            continue
        try:
            memory.add(message)
        except ProtocolError as refused:  # a broken history: the memory will not take it
            yield memory.to_api_format() + [message], [], [refused]
            continue
        yield memory.to_api_format(), list(getattr(memory, "last_dropped", [])), []


def frames(recording: Recording) -> list[Frame]:
    """Every step of `recording`, computed once."""
    result, last = [], len(recording.messages)
    for k, (request, dropped, refusals) in enumerate(_replay(recording), start=1):
        problems, waiting = request_problems(request, final=k == last)
        result.append(Frame(k, copy.deepcopy(recording.messages[k - 1]), copy.deepcopy(request),
                            copy.deepcopy(dropped), refusals or problems, waiting,
                            recording.notes.get(k, "")))
    return result


def as_recording(source: Any, title: str | None = None) -> Recording:
    """A Recording from a Recording, a message list, a memory (what it holds now), or
    anything with `to_recording()` (the chat app, or its state)."""
    if isinstance(source, Recording):
        return source
    if hasattr(source, "to_recording"):
        return source.to_recording()
    if hasattr(source, "to_api_format"):  # a memory: what it holds now
        source = source.to_api_format()
    if not isinstance(source, (list, tuple)) or not all(isinstance(m, Mapping) for m in source):
        raise TypeError(_("the stepper replays a Recording, a list of message dicts or a chat "
                          "app, got {kind} {value}: e.g. "
                          "stepper(memory.to_api_format()) or stepper(app)").format(
                              kind=type(source).__name__, value=f"{source!r:.60}"))
    title = _("A recorded conversation") if title is None else title
    return Recording(title, [copy.deepcopy(dict(m)) for m in source])


# ----------------------------------------------------------------- the state

class StepperState:
    """Where the class is in a recording; every button of the stepper is one method here."""

    def __init__(self, recording: Any,        # a Recording, a message list, or a chat app
                 *, scale: float = 1.3):      # zoom of the request picture (projector: 1.3+)
        # what it was made from, when that goes on (a chat app): a check can tell a stepper
        # made before the chat went on from one that shows the whole conversation
        self.source = recording if hasattr(recording, "to_recording") else None
        self.recording = as_recording(recording)
        if not self.recording.messages:
            raise ValueError(_("this recording has no messages: record a conversation first"))
        check_scale(scale)
        self.frames = frames(self.recording)
        self.scale = scale
        self.step = 1

    @property
    def total(self) -> int:
        return len(self.frames)

    @property
    def frame(self) -> Frame:
        return self.frames[self.step - 1]

    @property
    def at_first(self) -> bool:
        return self.step == 1

    @property
    def at_last(self) -> bool:
        return self.step == self.total

    @property
    def broken_at(self) -> int | None:
        """The first step whose request the API would refuse, or None."""
        return next((f.step for f in self.frames if f.problems), None)

    @property
    def broken_since(self) -> int | None:
        """Where the current run of refused requests began, or None if this step is fine.
        A trim can repair a broken list and a later one break it again: each run of broken
        steps counts from its own start."""
        if not self.frame.problems:
            return None
        start = self.step
        while start > 1 and self.frames[start - 2].problems:
            start -= 1
        return start

    def go(self, step: int) -> Frame:
        """Jump to `step` (1 … total); out-of-range steps stop at the ends."""
        self.step = min(max(int(step), 1), self.total)
        return self.frame

    def next(self) -> Frame:
        return self.go(self.step + 1)

    def back(self) -> Frame:
        return self.go(self.step - 1)

    def first(self) -> Frame:
        return self.go(1)

    def last(self) -> Frame:
        return self.go(self.total)

    def position_text(self) -> str:
        """'Step 5 of 9', plus where the rules break, if they do."""
        text = _("Step {step} of {total}").format(step=self.step, total=self.total)
        return text + (_(" · ✗ the rules break at step {step}").format(step=self.broken_at)
                       if self.broken_at else "")

    def title_html(self) -> str:
        return (f'<div style="font:700 30px {SANS};color:{INK};line-height:1.3">'
                f'{_esc(self.recording.title)}</div>')

    def caption_html(self) -> str:
        return caption_html(self.frame, self.total)

    def banner_html(self) -> str:
        return banner_html(self.frame, self.broken_since, self.broken_at)

    def request_html(self) -> str:
        return request_html(self.frame, self.scale)

    def html(self) -> str:
        """The whole current step as one deterministic HTML block."""
        return (f'<div style="text-align:left;background:#ffffff;padding:8px;line-height:1.35">'
                f'{self.title_html()}{_position_html(self.position_text())}'
                f'{self.banner_html()}{self.caption_html()}{self.request_html()}</div>')

    def _repr_html_(self) -> str:  # a static picture of the current step (e.g. on GitHub)
        return self.html()

    def summary(self) -> str:
        """One deterministic line: the title, the step, and where the rules break."""
        where = (_("the rules break at step {step}").format(step=self.broken_at)
                 if self.broken_at else _("the API would accept every step"))
        return _("{title}, step {step} of {total}, {where}").format(
            title=repr(self.recording.title), step=self.step, total=self.total, where=where)

    def __repr__(self) -> str:
        return f"<StepperState: {self.summary()}>"

    def __str__(self) -> str:
        f = self.frame
        head = _("{title} — {position}: newest is {role}").format(
            title=self.recording.title, position=self.position_text(), role=f.message["role"])
        return f"{head}\n{show_messages(f.request, dropped=f.dropped)}"


# ----------------------------------------------------------------- HTML, large and plain

def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def check_scale(scale: float) -> None:
    """A zoom must be a number above 0 (1 is the normal size)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(_("scale is a zoom factor above 0 (1: normal size, 1.3+: a projector), "
                           "got {scale}").format(scale=repr(scale)))


def _position_html(text: str) -> str:
    return (f'<div style="font:600 22px {SANS};color:#374151;margin:6px 0;line-height:1.35">'
            f'{_esc(text)}</div>')


def _big_chip(role: str) -> str:
    colour = ROLE_COLOURS.get(role, "#475569")
    return (f'<span style="background:{colour};color:#ffffff;border-radius:14px;'
            f'padding:2px 14px;font:700 22px {MONO}">{_esc(role)}</span>')


def _message_lines(message: Mapping) -> list[str]:
    """What a message says, as the lines of the caption."""
    lines = [str(message.get("content"))] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        lines.append(f"→ {fn.get('name')}({fn.get('arguments')})")
    if message.get("role") == "tool":
        lines.insert(0, _("↳ answers {call_id}").format(call_id=message.get("tool_call_id")))
    return lines or [_("(no content)")]


def caption_html(frame: Frame, total: int) -> str:
    """The newest message in large type, with the teacher's note under it."""
    m, colour = frame.message, ROLE_COLOURS.get(frame.message.get("role"), "#475569")
    lines = "".join(f'<div style="white-space:pre-wrap;overflow-wrap:anywhere">{_esc(t)}</div>'
                    for t in _message_lines(m))
    note = (f'<div style="font:italic 22px {SANS};color:#374151;margin-top:8px">'
            f'{_esc(frame.note)}</div>' if frame.note else "")
    newest = _esc(_("Newest message ({step} of {total})").format(step=frame.step, total=total))
    return (f'<div style="border-left:12px solid {colour};background:#ffffff;color:{INK};'
            f'padding:10px 18px;margin:8px 0;font-family:{SANS};line-height:1.35">'
            f'<div style="font-size:20px;color:#374151;margin-bottom:6px">'
            f'{newest}'
            f' &nbsp;{_big_chip(m.get("role", "?"))}</div>'
            f'<div style="font-size:30px;line-height:1.35">{lines}</div>{note}</div>')


def banner_html(frame: Frame,
                since: int | None,      # where this run of broken steps began (broken_since)
                broken_at: int | None,  # the first broken step of the whole recording
                ) -> str:
    """Red when the API would refuse the request, with its error text and the explanation;
    amber while a tool round is open (a wait, not a mistake); a quiet line otherwise."""
    if frame.problems:
        first = frame.problems[0]
        if frame.step != since:
            head = _("✗ Still broken (since step {step}): the API would answer 400").format(
                step=since)
        elif since == broken_at:
            head = _("✗ The rules break here: the API would answer 400")
        else:
            head = _("✗ The rules break here again: the API would answer 400")
        more = (_(" (+{n} more)").format(n=len(frame.problems) - 1)
                if len(frame.problems) > 1 else "")
        return (f'<div style="background:{RED};color:#ffffff;padding:12px 18px;line-height:1.35;'
                f'border-radius:8px;margin:6px 0;font:700 26px {SANS}">{_esc(head)}'
                f'<div style="font:600 20px {MONO};margin-top:8px">{_esc(first.message)}'
                f'{_esc(more)}</div><div style="font:400 20px {SANS};margin-top:6px">'
                f'→ {_esc(first.explanation)}</div></div>')
    if frame.waiting:
        n = len(frame.waiting)
        text, colour = (ngettext(
            "… Not sendable yet: waiting for {n} tool result ({ids}). Nothing is sent "
            "until every call has its reply; sent now, it would be refused as shown below.",
            "… Not sendable yet: waiting for {n} tool results ({ids}). Nothing is sent "
            "until every call has its reply; sent now, it would be refused as shown below.",
            n).format(n=n, ids=", ".join(map(str, frame.waiting))), AMBER)
    else:
        text, colour = _("✓ The API would accept this request"), GREEN
    return (f'<div style="font:600 22px {SANS};color:{colour};margin:6px 0;line-height:1.35">'
            f'{_esc(text)}</div>')


def request_html(frame: Frame, scale: float = 1.3) -> str:
    """The request at this step, drawn as the series draws it, zoomed for a projector."""
    newest = len(frame.request) - 1
    n = len(frame.request)
    count = ngettext("{n} message", "{n} messages", n).format(n=n)
    title = (_("The message list now: {count} (not a request yet)").format(count=count)
             if frame.waiting else _("The request now: {count}").format(count=count))
    view = show_messages(frame.request, dropped=frame.dropped, highlight=newest, title=title)
    return (f'<div style="zoom:{scale};text-align:left;line-height:1.35">'
            f'{view._repr_html_()}</div>')


# ----------------------------------------------------------------- the widget

class ShownAsWidget:
    """A view that shows as its widget (`self.root`); its text/plain, which a saved notebook
    shows where the widget cannot be drawn, is one short line from `self.state.summary()`,
    not the widget tree's."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.state.summary()}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = self.root._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return bundle


class StepperView(ShownAsWidget):
    """The stepper's widgets; each button calls one StepperState method, then refresh()."""

    def __init__(self, state: StepperState):
        import ipywidgets as w  # noqa: PLC0415  (lazy: widgets only when a stepper is shown)

        self.state = state
        big = {"layout": w.Layout(width="150px", height="52px"),
               "style": {"font_size": "22px", "font_weight": "bold"}}
        self.first_button = w.Button(description=_("◀◀ First"), **big)
        self.back_button = w.Button(description=_("◀ Back"), **big)
        self.next_button = w.Button(description=_("Next ▶"), button_style="primary", **big)
        self.last_button = w.Button(description=_("Last ▶▶"), **big)
        moves = ((self.first_button, state.first, "first"), (self.back_button, state.back, "back"),
                 (self.next_button, state.next, "next"), (self.last_button, state.last, "last"))
        for button, move, name in moves:
            button.on_click(lambda _button, move=move: self._move(move))
            button.add_class(f"lesson-stepper-{name}")  # a handle for browser tests
        self.title, self.position = w.HTML(state.title_html()), w.HTML()
        self.banner, self.caption, self.request = w.HTML(), w.HTML(), w.HTML()
        self.root = w.VBox([self.title, w.HBox([b for b, _m, _n in moves] + [self.position]),
                            self.banner, self.caption, self.request])
        self.root.add_class("lesson-stepper")
        self.refresh()

    def _move(self, move: Callable[[], Frame]) -> None:
        move()
        self.refresh()

    def refresh(self) -> None:
        """Show the state's current step; disable the buttons that would go past an end."""
        s = self.state
        self.position.value = _position_html(s.position_text())
        self.banner.value, self.caption.value = s.banner_html(), s.caption_html()
        self.request.value = s.request_html()
        self.first_button.disabled = self.back_button.disabled = s.at_first
        self.next_button.disabled = self.last_button.disabled = s.at_last



def stepper(recording: Any,            # a Recording, a message list, or a chat app
            *, scale: float = 1.3,     # zoom of the request picture
            ) -> StepperView:
    """A projector-sized stepper: First / Back / Next / Last through a recorded conversation."""
    return StepperView(StepperState(recording, scale=scale))


# ----------------------------------------------------------------- recorded conversations

def _record(questions: list[str], memory: Any, *, loop: bool = False) -> tuple[list, list]:
    """Ask `questions` on the offline model with the clock frozen; return (tape, errors).
    An API error ends that question and is kept, as the app would show it."""
    import openai  # noqa: PLC0415

    from lesson_lib.agent import Agent, LoopAgent  # noqa: PLC0415
    from lesson_lib.clock import frozen  # noqa: PLC0415
    from lesson_lib.offline import offline_client  # noqa: PLC0415

    taped, errors = TapedMemory(memory), []
    kind = LoopAgent if loop else Agent
    agent = kind(memory=taped, client=offline_client())
    with frozen(RECORDED_AT):
        for question in questions:
            try:
                agent.chat(question)
            except openai.APIStatusError as error:
                errors.append(error)
    return taped.tape, errors


def _first_step(messages: list[dict], test: Callable[[dict], bool], after: int = 0) -> int:
    """The step (from 1) of the first message after step `after` that passes `test`."""
    return next(k for k, m in enumerate(messages, start=1) if k > after and test(m))


def _asks(m: dict) -> bool:
    return bool(m.get("tool_calls"))


def seed_three_rounds() -> Recording:
    """The source article's three rounds: a name, the weather in Chengdu, the name again."""
    from lesson_lib.memory import ShortTermMemory  # noqa: PLC0415

    tape, _errors = _record(["My name is Xiaoming.", "What's the weather in Chengdu?",
                       "What is my name?"], ShortTermMemory(max_messages=40))
    calls = _first_step(tape, _asks)
    notes = {1: _("The system prompt: sent first on every call."),
             2: _("Round 1: Xiaoming says his name. The model only knows it while it is in "
                  "this list."),
             calls: _("Round 2: the model answers with tool_calls instead of text; the program "
                      "must run the tool."),
             calls + 1: _("The tool's result, tied to its call by tool_call_id."),
             calls + 2: _("The second call went out with tools=None: the model answers from "
                          "the result."),
             len(tape): _("Round 3: the name is still in the list, so the model 'remembers' "
                          "it.")}
    return Recording(_("The seed's three rounds"), tape, None, notes)


def trim_pitfall() -> Recording:
    """Notebook 04's pitfall: NaiveMemory(max_messages=5) drops an assistant(tool_calls) and
    leaves its results behind; the fourth question's request gets the API's 400."""
    from lesson_lib.memory import NaiveMemory  # noqa: PLC0415

    def memory() -> NaiveMemory:
        return NaiveMemory(max_messages=5)

    tape, errors = _record(by_language(  # the same four questions in the Chinese edition
        ["My name is Xiaoming.", "What's the weather in Chengdu?",
         "Which is warmer, Shanghai or Beijing?", "What time is it in New York?"],
        ["我叫小明。", "成都天气怎么样？", "上海和北京哪个更暖和？", "纽约现在几点？"]), memory())
    recording = Recording(_("The trim pitfall: NaiveMemory(max_messages=5)"), tape, memory)
    steps = frames(recording)
    trimmed = next(f.step for f in steps if f.dropped)
    broken = next(f.step for f in steps if f.problems)
    refused = errors[0].body.get("message", "") if errors else ""
    recording.notes = {
        1: _("NaiveMemory keeps 5 messages and drops the oldest one, one at a time."),
        trimmed: _("Six messages: the first trim. What it dropped is struck through above the "
                   "list."),
        broken: _("Six messages: the trim dropped the oldest, the assistant that asked for two "
                  "weather lookups, and left its two results behind as orphans. "
                  "The live run got: {refused}").format(refused=refused)}
    return recording


def agent_loop_chain() -> Recording:
    """Notebook 06's chain: two weather calls in parallel, then a time call that needs their
    results, then the answer (LoopAgent, three model calls)."""
    from lesson_lib.memory import ShortTermMemory  # noqa: PLC0415

    tape, _errors = _record([by_language("Which is warmer right now, Beijing or Shanghai, and "
                                         "what time is it there?",
                                         "北京和上海现在哪个更暖和？那里现在几点？")],
                            ShortTermMemory(max_messages=40), loop=True)
    turn1 = _first_step(tape, _asks)
    turn2 = _first_step(tape, _asks, after=turn1)
    notes = {turn1: _("Turn 1: two weather calls in parallel, in one assistant message."),
             turn2: _("Turn 2: only now can the model ask for the time in the warmer city."),
             len(tape): _("Turn 3: no tool_calls, so the while loop stops and this is the "
                          "answer.")}
    return Recording(_("The agent loop: a chain of tool calls"), tape, None, notes)


RECORDINGS = {"seed_three_rounds": seed_three_rounds, "trim_pitfall": trim_pitfall,
              "agent_loop_chain": agent_loop_chain}  # name → function that records it
# what each recording shows, in a line (its docstring's, translatable): describe(name)
_ABOUT = {"seed_three_rounds": N_("The source article's three rounds: a name, the weather in "
                                  "Chengdu, the name again."),
          "trim_pitfall": N_("Notebook 04's pitfall: NaiveMemory(max_messages=5) drops an "
                             "assistant(tool_calls) and leaves its results behind; the fourth "
                             "question's request gets the API's 400."),
          "agent_loop_chain": N_("Notebook 06's chain: two weather calls in parallel, then a "
                                 "time call that needs their results, then the answer "
                                 "(LoopAgent, three model calls).")}


def describe(name: str) -> str:
    """What the recording `name` of RECORDINGS shows, in the language spoken."""
    return _(_ABOUT[name])
