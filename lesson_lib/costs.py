"""What remembering costs: one scripted conversation, run through any memory, every request metered.

The model is stateless, so every call sends the whole memory again, and what a conversation
costs is the sum of what all of its requests send (`usage.prompt_tokens`, which the provider
bills). Keep everything, and each turn costs more than the last; trim, and the cost per turn
stays flat, but something is forgotten. This module makes that measurable:

- `SCRIPT`: fifty user messages, the same for every memory. Xiaoming gives his name in the
  first one; then weather and time questions (tool rounds, some with parallel calls), small
  talk, one travel guide far bigger than any other message, and at the end "What's my name?".
  While the series speaks Chinese it is the Chinese twin, turn for turn ("你好！我叫小明。" …
  "我叫什么名字？"), and the guide is a Chinese page.
- `lesson_tools()`: what the conversation may call: the seed's weather and time tools, and
  `get_travel_guide`, whose one result costs as many tokens as a dozen ordinary turns.
- `Meter`: makes the model calls of a run and writes down what each request sent.
- `run_turn()`: one user turn through notebook 06's loop, metered; `run_conversation()`: the
  whole script, as a `ConversationRun` of one `TurnCost` per turn.
- `FunctionTrimMemory`: a memory whose trim is a function you wrote, so it can run the script.
- `cost_table()` and `plot_costs()`: the numbers as text, and as two plots (PNG).
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lesson_lib import i18n  # i18n._(), not _(): run_turn (shown in notebook 07) loops with `_`
from lesson_lib.agent import SYSTEM_PROMPT, default_prompt
from lesson_lib.llm import complete
from lesson_lib.memory import ShortTermMemory
from lesson_lib.protocol import assistant_to_dict
from lesson_lib.text import columns, pad
from lesson_lib.tokens import count_messages, count_request, count_tools
from lesson_lib.tools import (
    TIME_TOOL,
    WEATHER_TOOL,
    ToolRegistry,
    get_current_time,
    get_current_weather,
)

SMALL_WINDOW = 2_048   # tokens: the context window of a small model, drawn as a line
TOKEN_BUDGET = 1_800   # tokens: the budget the lesson's TokenBudgetMemory keeps each request under

SCRIPT_EN: list[str] = [
    "Hi! My name is Xiaoming.",                                          # 1: the name
    "What's the weather in Chengdu?",
    "And in Shanghai?",
    "What time is it in Tokyo?",
    "Which is warmer, Beijing or Shanghai?",                             # 5: parallel calls
    "Thanks!",
    "What's the weather in Chengdu, Shanghai and Tokyo?",               # three in parallel
    "I'm planning a trip next month.",
    "What's the weather in Guangzhou?",
    "What about Hong Kong?",                                             # 10
    "What time is it in London?",
    "Good morning!",
    "Which is colder, London or New York?",
    "What is the weather in Sydney and the time in Sydney?",
    "Thanks, that's helpful.",                                           # 15
    "What time is it in New York?",
    "What's the weather in San Francisco?",
    "And in Beijing?",
    "Hello again!",
    "What's the weather in Tokyo and the time in Tokyo?",                # 20
    "Which is warmer, Chengdu or Guangzhou?",
    "Thank you!",
    "What time is it in Shanghai?",
    "What's the weather in London?",
    "Find me a travel guide for Chengdu.",                               # 25: the huge result
    "Thanks!",
    "What's the weather in Chengdu?",
    "What time is it in Chengdu?",
    "Which is warmer, Tokyo or Sydney?",
    "Good afternoon!",                                                   # 30
    "What's the weather in New York?",
    "And in San Francisco?",
    "What time is it in Sydney?",
    "What's the weather in Beijing, Shanghai and Guangzhou?",
    "Thanks!",                                                           # 35
    "What time is it in Beijing?",
    "What's the weather in Hong Kong?",
    "Which is colder, Beijing or Chengdu?",
    "Hello!",
    "What's the weather in Shanghai and the time in London?",            # 40
    "What time is it in San Francisco?",
    "What's the weather in Tokyo?",
    "Thank you!",
    "What time is it in Hong Kong?",
    "Which is warmer, New York or London?",                              # 45
    "What's the weather in Sydney?",
    "What time is it in Tokyo?",
    "Thanks a lot!",
    "What's the weather in Chengdu?",
    "What's my name?",                                                   # 50: what is remembered?
]

SCRIPT_ZH: list[str] = [  # the same fifty turns, as a Chinese learner says them
    "你好！我叫小明。",                                                   # 1: the name
    "成都天气怎么样？",
    "上海呢？",
    "东京现在几点？",
    "北京和上海哪个更暖和？",                                              # 5: parallel calls
    "谢谢！",
    "成都、上海和东京的天气怎么样？",                                      # three in parallel
    "我下个月打算去旅行。",
    "广州天气怎么样？",
    "香港呢？",                                                           # 10
    "伦敦现在几点？",
    "早上好！",
    "伦敦和纽约哪个更冷？",
    "悉尼的天气和时间分别是多少？",
    "谢谢，很有帮助。",                                                   # 15
    "纽约现在几点？",
    "旧金山天气怎么样？",
    "北京呢？",
    "又见面了！",
    "东京的天气和时间分别是多少？",                                        # 20
    "成都和广州哪个更暖和？",
    "谢谢你！",
    "上海现在几点？",
    "伦敦天气怎么样？",
    "帮我找一份成都旅游攻略。",                                            # 25: the huge result
    "谢谢！",
    "成都天气怎么样？",
    "成都现在几点？",
    "东京和悉尼哪个更暖和？",
    "下午好！",                                                           # 30
    "纽约天气怎么样？",
    "旧金山呢？",
    "悉尼现在几点？",
    "北京、上海和广州的天气怎么样？",
    "谢谢！",                                                             # 35
    "北京现在几点？",
    "香港天气怎么样？",
    "北京和成都哪个更冷？",
    "你好！",
    "上海的天气和伦敦的时间分别是多少？",                                  # 40
    "旧金山现在几点？",
    "东京天气怎么样？",
    "谢谢你！",
    "香港现在几点？",
    "纽约和伦敦哪个更暖和？",                                              # 45
    "悉尼天气怎么样？",
    "东京现在几点？",
    "太感谢了！",
    "成都天气怎么样？",
    "我叫什么名字？",                                                     # 50: what is remembered?
]

_DATA = i18n.Twins(SCRIPT=(SCRIPT_EN, SCRIPT_ZH))


def __getattr__(name: str) -> Any:
    """SCRIPT: the fifty turns in the language the series speaks now."""
    return _DATA.get(name, __name__)


# ----------------------------------------------------------------- the tools

def get_travel_guide(city: str) -> str:
    """Use this when the user asks for a travel guide, an itinerary or things to do in a city.

    Simulated: a long day-by-day plan, the size of a web page pasted into the conversation.

    Args:
        city: City name, e.g. Chengdu.
    """
    if i18n.is_chinese():  # a Chinese page, as a Chinese travel site would return it
        days = [f"第 {d} 天：从春熙路走到文殊院，在锦里吃火锅（第 {d} 号摊位），再去人民公园喝茶。"
                for d in range(1, 31)]  # 30 days: about the English page's tokens
        return json.dumps({"city": city, "days": len(days), "guide": "".join(days)},
                          ensure_ascii=False)
    days = [f"Day {d}: walk from Chunxi Road to the Wenshu Monastery, try the hotpot on Jinli "
            f"Street (stall {d}), then tea in People's Park." for d in range(1, 36)]
    return json.dumps({"city": city, "days": len(days), "guide": " ".join(days)})


def lesson_tools() -> ToolRegistry:
    """The tools of the scripted conversation: weather, time, and the travel guide."""
    registry = ToolRegistry()
    registry.register(get_current_weather, WEATHER_TOOL)
    registry.register(get_current_time, TIME_TOOL)
    registry.register(get_travel_guide)
    return registry


# ----------------------------------------------------------------- metering the calls

@dataclass
class Request:
    """One request a run sent to the model."""
    kind: str             # "turn" (the conversation's own call) or "summary" (a summarizer's)
    tokens: int           # what it sent: usage.prompt_tokens
    messages: list[dict]  # what it sent, to send again elsewhere


class Meter:
    """Makes a run's model calls and writes down what each request sent."""

    def __init__(self, client: Any = None):  # None: the backend the environment chooses
        self.client = client
        self.requests: list[Request] = []

    def complete(self, messages: list[dict], tools: list[dict] | None = None,
                 kind: str = "turn") -> Any:
        """llm.complete(), noting the request's prompt tokens (counted here if the
        provider's reply has no usage)."""
        # The messages go in extra_body, sent as they are. Given as messages=, every message
        # of every request would first be walked through the SDK's type definitions, which
        # changes nothing in plain dicts yet takes three quarters of the CPU time of this
        # lesson's 370 requests. The same bytes go out either way (tests/test_costs.py).
        response = complete([], tools, client=self.client, extra_body={"messages": messages})
        usage = getattr(response, "usage", None)
        tokens = usage.prompt_tokens if usage else count_request(messages, tools)
        self.requests.append(Request(kind, tokens, copy.deepcopy(messages)))
        return response

    def chat(self, messages: list[dict]) -> Any:
        """For model_summarizer(meter.chat): a summary is a model call, and it is paid for."""
        return self.complete(messages, kind="summary").choices[0].message


@dataclass
class TurnCost:
    """One user turn of a run: what it sent, and what came of it."""
    turn: int                  # 1 for the first user message
    question: str              # the user message
    reply: str = ""            # the answer the user saw
    requests: list[Request] = field(default_factory=list)  # every request of the turn
    held: int = 0              # messages in memory after the turn

    @property
    def sent(self) -> int:
        """Tokens sent in this turn, all requests together (what the turn costs)."""
        return sum(r.tokens for r in self.requests)

    @property
    def largest(self) -> Request:
        """The turn's largest request: the one a context window must hold."""
        return max(self.requests, key=lambda r: r.tokens)


@dataclass
class ConversationRun:
    """A whole script run through one memory."""
    name: str
    memory: Any
    turns: list[TurnCost] = field(default_factory=list)
    error: str | None = None   # why the run stopped early (an API error, a trim that raised)

    def cumulative(self) -> list[int]:
        """Tokens sent so far, after each turn."""
        total, out = 0, []
        for t in self.turns:
            total += t.sent
            out.append(total)
        return out

    def first_over(self, window: int) -> TurnCost | None:
        """The first turn with a request larger than `window` (None: every one fits)."""
        return next((t for t in self.turns if t.largest.tokens > window), None)

    def summaries(self) -> int:
        return sum(r.kind == "summary" for t in self.turns for r in t.requests)


# ----------------------------------------------------------------- running the script

def run_turn(memory: Any,              # where the conversation lives (any ShortTermMemory API)
             question: str,            # the user's message
             registry: ToolRegistry,   # the tools the model may call
             meter: Meter,             # makes the calls and notes what each one sent
             turn: int = 1,            # its number in the conversation
             max_calls: int = 5) -> TurnCost:
    """One user turn through notebook 06's loop: call with the tools until a reply has no
    tool_calls, writing each call with all its results at once. Every request is metered,
    the summarizer's too (a memory may summarise while a message is added)."""
    start = len(meter.requests)
    memory.add({"role": "user", "content": question})
    tools = registry.schemas()
    for _ in range(max_calls):
        message = meter.complete(memory.to_api_format(), tools).choices[0].message
        if not message.tool_calls:
            break
        results = [{"role": "tool", "tool_call_id": call.id,
                    "content": registry.execute(call.function.name, call.function.arguments)}
                   for call in message.tool_calls]
        memory.add_many([assistant_to_dict(message), *results])
    memory.add({"role": "assistant", "content": message.content or ""})
    return TurnCost(turn, question, message.content or "", meter.requests[start:],
                    memory.message_count())


def run_conversation(memory: Any,                   # an empty memory (a system prompt is added)
                     script: Sequence[str] | None = None,  # the user messages (None: SCRIPT)
                     *, name: str = "",             # what the tables and plots call it
                     registry: ToolRegistry | None = None,  # None: lesson_tools()
                     meter: Meter | None = None,    # None: a new Meter on the default backend
                     system: str = SYSTEM_PROMPT) -> ConversationRun:
    """The whole script through `memory`, one metered turn at a time. An error (the API
    refusing a broken list, a trim function that raises) stops the run and is kept in
    `run.error`, with the turns done so far."""
    script = script if script is not None else _DATA.SCRIPT
    registry = registry if registry is not None else lesson_tools()
    meter = meter if meter is not None else Meter()
    memory.add_system(default_prompt(system))
    run = ConversationRun(name or type(memory).__name__, memory)
    for turn, question in enumerate(script, 1):
        try:
            run.turns.append(run_turn(memory, question, registry, meter, turn))
        except Exception as error:  # a learner's trim may raise anything: a finding
            run.error = i18n._("turn {turn}: {kind}: {error}").format(
                turn=turn, kind=type(error).__name__, error=error)
            break
    return run


class FunctionTrimMemory(ShortTermMemory):
    """ShortTermMemory with your trim: after each add (once a tool round is complete) the
    whole list is replaced by `trim(messages, budget)`, where budget is the request's
    token budget minus what the tool definitions cost (the trim counts messages only)."""

    def __init__(self, trim: Callable[[list[dict], int], list[dict]],  # your trim function
                 token_budget: int,                  # tokens a whole request may cost
                 *, tools: list[dict] | None = None):  # the tools sent with each request
        super().__init__(max_messages=token_budget)
        self.trim, self.budget = trim, token_budget - count_tools(tools)

    def _trim(self) -> None:
        kept = self.trim(copy.deepcopy(self._messages), self.budget)
        if not isinstance(kept, list):
            raise TypeError(i18n._("{name} returned {kind}, not a list of messages").format(
                name=getattr(self.trim, "__name__", "the trim"), kind=type(kept).__name__))
        dropped = [m for m in self._messages if m not in kept]
        self.last_dropped += dropped
        self.dropped_count += len(dropped)
        self._messages = copy.deepcopy(kept)

    def __repr__(self) -> str:
        return i18n._("FunctionTrimMemory({name}, budget={budget} tokens for the messages): "
                      "{messages} messages, {tokens} tokens, {dropped} dropped so far").format(
            name=getattr(self.trim, "__name__", "trim"), budget=f"{self.budget:,}",
            messages=len(self._messages), tokens=f"{count_messages(self._messages):,}",
            dropped=self.dropped_count)


# ----------------------------------------------------------------- the numbers, as text

def cost_table(runs: Sequence[ConversationRun],  # the runs to compare
               window: int = SMALL_WINDOW) -> str:  # the context window to compare with
    """One line per run: turns done, the last and the largest request, the first turn over
    the window, the total sent, messages held at the end, summaries made."""
    width = max(columns(r.name) for r in runs)
    heads = [i18n._("turns"), i18n._("last request"), i18n._("largest"),
             i18n._("over {window} at").format(window=f"{window:,}"), i18n._("total sent"),
             i18n._("held"), i18n._("summaries")]
    widths = [columns(h) for h in heads]
    widths[3] = max(widths[3], 10 + len(f"{window:,}"))  # as wide as it has always been
    head = "  ".join([pad(i18n._("memory"), width, right=False), *heads])
    lines = [head, "-" * columns(head)]
    for r in runs:
        over = r.first_over(window)
        cells = [len(r.turns), f"{r.turns[-1].largest.tokens if r.turns else 0:,}",
                 f"{max((t.largest.tokens for t in r.turns), default=0):,}",
                 i18n._("turn {turn}").format(turn=over.turn) if over else i18n._("never"),
                 f"{(r.cumulative() or [0])[-1]:,}", r.turns[-1].held if r.turns else 0,
                 r.summaries()]
        lines.append("  ".join([pad(r.name, width, right=False),
                                *(pad(str(c), w) for c, w in zip(cells, widths, strict=True))]))
        if r.error:
            lines.append(pad("", width) + "  " + i18n._("stopped at {error}").format(
                error=r.error[:120]))
    return "\n".join(lines)


# ----------------------------------------------------------------- the numbers, as plots

COLOURS = ("#dc2626", "#2563eb", "#15803d", "#9333ea", "#ea580c", "#0891b2")
STYLES = ("-", "-", "-", "--", "-.", ":")


class CostPlot:
    """Two plots of the same runs: the largest request of each turn (with the context
    window as a line) and the tokens sent so far. Shown as a PNG in a notebook; its text
    form names what it shows."""

    def __init__(self, figure: Any, names: list[str]):
        self.figure, self.names = figure, names

    def png(self) -> bytes:
        """The PNG bytes: fixed size and resolution, no version or date inside."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
        return buffer.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()

    def __repr__(self) -> str:
        return f"<CostPlot: {', '.join(self.names)}>"


def _figure() -> Any:
    """A matplotlib Figure outside pyplot (so a notebook shows it once, when returned)."""
    from lesson_lib.fonts import ready  # noqa: PLC0415

    ready()  # first (no font-cache notice); Chinese drawn in Noto Sans SC, not empty boxes
    from matplotlib.figure import Figure  # noqa: PLC0415 (matplotlib is slow to import)

    return Figure(figsize=(11, 4.2), dpi=100, layout="constrained")


def plot_costs(runs: Sequence[ConversationRun],  # the runs to draw, one colour each
               window: int | None = SMALL_WINDOW,  # draw the context window as a line
               budget: int | None = None,          # draw a token budget as a line too
               marks: dict[int, str] | None = None,  # turns to label, e.g. {25: "guide"}
               ) -> CostPlot:
    """Left: the largest request of each turn, against the window (a cross where a run
    first goes over it). Right: the tokens sent so far, what the conversation has cost."""
    figure = _figure()
    per_turn, total = figure.subplots(1, 2)
    for k, run in enumerate(runs):
        style = {"color": COLOURS[k % 6], "linestyle": STYLES[k % 6], "linewidth": 1.6,
                 "label": run.name}
        turns = [t.turn for t in run.turns]
        per_turn.plot(turns, [t.largest.tokens for t in run.turns], **style)
        total.plot(turns, [c / 1000 for c in run.cumulative()], **style)
        over = run.first_over(window) if window else None
        if over is not None:
            per_turn.plot([over.turn], [over.largest.tokens], "x", color=COLOURS[k % 6],
                          markersize=9, markeredgewidth=2)
    limits = [per_turn.axhline(y, color=colour, linestyle=style, linewidth=1.2,
                               label=f"{text} {y:,}")
              for y, text, colour, style in ((window, i18n._("context window"), "black", "--"),
                                             (budget, i18n._("token budget"), "grey", ":")) if y]
    for turn, text in (marks or {}).items():
        for axes in (per_turn, total):
            axes.axvline(turn, color="grey", linewidth=0.8, alpha=0.5)
        per_turn.annotate(text, (turn, 1), xycoords=("data", "axes fraction"), xytext=(3, -12),
                          textcoords="offset points", fontsize=9, color="grey")
    per_turn.set(title=i18n._("Tokens in each turn's largest request"), xlabel=i18n._("turn"),
                 ylabel=i18n._("tokens"))
    total.set(title=i18n._("Tokens sent so far (what the conversation costs)"),
              xlabel=i18n._("turn"), ylabel=i18n._("thousands of tokens"))
    total.legend(loc="upper left", fontsize=9)
    if limits:  # the runs are named in the right-hand legend; here only the limits
        per_turn.legend(handles=limits, loc="upper left", fontsize=9)
    for axes in (per_turn, total):
        axes.grid(alpha=0.3)
    return CostPlot(figure, [r.name for r in runs])
