"""The seed's patterns for agents beyond one loop, each small enough to read in a minute.

- `Router`: with many tools, a first, cheap call picks a toolbox (a forced call to a
  `choose_toolbox` function whose argument is an enum); then only that toolbox's tools
  are offered. Fewer tools: fewer tokens on every call, and fewer ways to pick wrong.
- `TaskState`: the task's goal, steps and results kept by your code, outside the message
  list, and written into the system prompt on each call: trimming cannot lose it.
- `packing_advice`: a fixed workflow. The code runs the steps in order; the model is used
  at one decision point only (reading the city from the user's words, through a forced
  call), and everything else is ordinary code you can test.
- `with_fallback`: validation with fallback. Each source's result is checked; an invalid
  one or a failure moves on to the next source; when none works, an honest error goes
  back to the model (as a tool result), which tells the user.
- `few_shot`: worked examples of tool use, written as real tool rounds that the API
  accepts (each call answered by its tool message), to put before the conversation.
- `retrying`: retries with exponential back-off and jitter, for the calls the SDK does not
  retry for you; only errors that may pass (429, 5xx, a lost connection) are retried.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.i18n import _
from lesson_lib.llm import chat
from lesson_lib.tools import ToolCallError, ToolRegistry, get_current_weather

__all__ = ["Router", "TaskState", "StatefulMemory", "packing_advice", "with_fallback", "few_shot",
           "retrying", "RETRYABLE"]


# ----------------------------------------------------------------------------- router

class Router:
    """Toolboxes by name, each `(description, registry)`; `choose()` asks the model which
    one a question needs, and `tools_for()` gives that toolbox's schemas."""

    def __init__(self, toolboxes: Mapping[str, tuple[str, ToolRegistry]]):
        if not toolboxes:
            raise ValueError(_("a Router needs at least one toolbox: "
                               "{{name: (description, registry)}}").format())
        self.toolboxes = dict(toolboxes)

    def route_tool(self) -> dict:
        """The one function the first call may use: choose_toolbox(toolbox=<one of the names>)."""
        described = "; ".join(f"{name}: {about}" for name, (about, _) in self.toolboxes.items())
        return {"type": "function", "function": {
            "name": "choose_toolbox",
            "description": "Choose the toolbox that can answer the user's request.",
            "parameters": {"type": "object", "properties": {"toolbox": {
                "type": "string", "enum": list(self.toolboxes),
                "description": f"The toolbox to use. {described}."}},
                "required": ["toolbox"], "additionalProperties": False}}}

    def choose(self, question: str, *, client: Any = None) -> str:
        """The toolbox the model picks for `question` (a forced call: it must pick one)."""
        message = chat([{"role": "user", "content": question}], tools=[self.route_tool()],
                       tool_choice={"type": "function", "function": {"name": "choose_toolbox"}},
                       client=client)
        try:
            picked = json.loads(message.tool_calls[0].function.arguments)["toolbox"]
        except (TypeError, IndexError, KeyError, ValueError):
            picked = None
        if picked not in self.toolboxes:  # validate what the model chose, as any input
            raise ValueError(_("the router's model chose {picked}, which is not a toolbox "
                               "({toolboxes}): check its enum and descriptions").format(
                picked=repr(picked), toolboxes=", ".join(self.toolboxes)))
        return picked

    def tools_for(self, toolbox: str) -> ToolRegistry:
        return self.toolboxes[toolbox][1]


# ----------------------------------------------------------------------------- task state

@dataclass
class TaskState:
    """A task's goal and steps, and what each finished step found: kept by your code."""

    goal: str
    steps: list[str]
    results: dict[str, str] = field(default_factory=dict)

    def done(self, step: str, result: str) -> None:
        if step not in self.steps:
            raise ValueError(_("{step} is not a step of this task: {steps}").format(
                step=repr(step), steps=self.steps))
        self.results[step] = result

    def pending(self) -> list[str]:
        return [s for s in self.steps if s not in self.results]

    def prompt(self, base: str = "") -> str:
        """`base`, then the task as a checklist: what the system prompt carries every call."""
        lines = [_("Task: {goal}").format(goal=self.goal)]
        for step in self.steps:
            found = self.results.get(step)
            lines.append(f"[x] {step}: {found}" if found is not None else f"[ ] {step}")
        return "\n".join(([base] if base else []) + lines)

    def around(self, memory: Any, base: str = "") -> StatefulMemory:
        """`memory` as an agent sees it, with this state as the system prompt of every call."""
        return StatefulMemory(self, memory, base)


class StatefulMemory:
    """A memory whose requests start with the task state, rendered afresh on every call.

    The messages live in the wrapped memory (and are trimmed there); the state lives in
    your code. `to_api_format()` puts the two together, so no trim can lose the state."""

    def __init__(self, state: TaskState, memory: Any, base: str = ""):
        self.state, self.memory, self.base = state, memory, base

    def to_api_format(self) -> list[dict]:
        rest = [m for m in self.memory.to_api_format() if m["role"] != "system"]
        return [{"role": "system", "content": self.state.prompt(self.base)}] + rest

    def __getattr__(self, name: str) -> Any:  # add, add_many, message_count ...: the memory's
        return getattr(self.memory, name)


# ----------------------------------------------------------------------------- workflow

WEATHER_CALL = {"type": "function", "function": {"name": "get_current_weather"}}


def packing_advice(request: str, *, client: Any = None,
                   weather: Callable[..., str] = get_current_weather) -> dict:
    """A fixed workflow: (1) the model reads the city from `request` (a forced call to the
    weather tool, its only decision); (2) code fetches the weather; (3) code decides what to
    pack by plain rules; (4) code writes the note. Returns every step's outcome."""
    from lesson_lib.tools import WEATHER_TOOL  # noqa: PLC0415

    call = chat([{"role": "user", "content": request}], tools=[WEATHER_TOOL],
                tool_choice=WEATHER_CALL, client=client).tool_calls[0]
    arguments = json.loads(call.function.arguments)
    report = json.loads(weather(**arguments))
    if "error" in report:
        return {"arguments": arguments, "weather": report, "pack": [],
                "note": f"No advice: {report['error']}."}
    pack = []
    if any(w in report["condition"] for w in ("rain", "shower", "drizzle", "storm")):
        pack.append("umbrella")
    celsius = report["temperature"] if report["unit"] == "celsius" \
        else (report["temperature"] - 32) * 5 / 9
    pack.append("warm coat" if celsius < 10 else "light jacket" if celsius < 20 else "T-shirt")
    note = (f"{report['location']}: {report['condition']}, {report['temperature']}° "
            f"{report['unit']}. Pack: {', '.join(pack)}.")
    return {"arguments": arguments, "weather": report, "pack": pack, "note": note}


# ----------------------------------------------------------------------------- fallback

def with_fallback(*sources: Callable[..., str], valid: Callable[[dict], bool],
                  log: list | None = None) -> Callable[..., str]:
    """One tool function made of several sources, tried in order. A source that raises, or
    whose JSON result fails `valid`, is passed over (noted in `log` when given); when none
    gives a valid result, the tool returns an error with a hint, for the model to relay."""
    if not sources:
        raise ValueError(_("with_fallback needs at least one source function"))

    def tool(**arguments: Any) -> str:
        for source in sources:
            name = getattr(source, "__name__", repr(source))
            try:
                result = source(**arguments)
                ok = valid(json.loads(result))
            except Exception as error:  # a source that fails is what a fallback is for
                outcome = f"failed: {type(error).__name__}: {error}"
            else:
                if ok:
                    if log is not None:
                        log.append(f"{name}: valid result")
                    return result
                outcome = f"invalid result: {result[:80]}"
            if log is not None:
                log.append(f"{name}: {outcome}")
        return ToolCallError("every source failed",
                             "the data is unavailable right now: say so, do not guess").to_json()

    tool.__name__ = getattr(sources[0], "__name__", "tool")
    tool.__doc__ = sources[0].__doc__
    return tool


# ----------------------------------------------------------------------------- few-shot

def few_shot(examples: Sequence[tuple[str, Sequence[tuple[str, dict, str]], str]]) -> list[dict]:
    """Worked examples as messages: for each (question, [(tool, arguments, result)], answer),
    a user message, an assistant message with the calls, one tool message per call, and the
    answer. Ids are `call_example_<n>`, so they never collide with a real call's."""
    messages: list[dict] = []
    n = 0
    for question, calls, answer in examples:
        messages.append({"role": "user", "content": question})
        if calls:
            ids = [f"call_example_{n + k + 1}" for k in range(len(calls))]
            n += len(calls)
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                for i, (name, args, _) in zip(ids, calls, strict=True)]})
            messages += [{"role": "tool", "tool_call_id": i, "content": result}
                         for i, (_, _, result) in zip(ids, calls, strict=True)]
        messages.append({"role": "assistant", "content": answer})
    return messages


# ----------------------------------------------------------------------------- retries

def _retryable() -> tuple[type, ...]:
    import openai  # noqa: PLC0415

    return (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)


RETRYABLE = "429 (rate limit), 5xx (server error), a lost connection or a timeout"


def retrying(fn: Callable[[], Any], *, attempts: int = 4,   # tries in all, the first included
             base: float = 0.5,                          # seconds before the first retry
             sleep: Callable[[float], Any] = time.sleep) -> Any:
    """`fn()`, tried up to `attempts` times. After a failure that may pass (RETRYABLE) it waits
    base·2^k seconds (k = 0, 1, 2 …) plus up to 10% at random, so that many clients do not
    retry in step, then tries again; any other error (a 400 never passes by itself) is
    raised at once, and so is the last failure when no attempt is left."""
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(_("attempts counts the tries, the first included: a whole number of "
                           "at least 1, got {value}").format(value=repr(attempts)))
    for k in range(attempts):
        try:
            return fn()
        except _retryable():
            if k == attempts - 1:
                raise
            sleep(base * 2 ** k * (1 + random.random() / 10))
    raise AssertionError("unreachable")  # pragma: no cover
