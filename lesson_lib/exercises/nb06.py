"""Self-checks for notebook 06, the agent loop.

- `check_my_loop(my_loop)`: the learner's `my_loop(messages, registry, max_turns)`, the
  `while tool_calls` loop written by hand with `chat()` and `registry.execute()`; tried on
  the chain question (3 model calls), on a question that never ends (stops at max_turns
  with a valid history) and on a greeting (1 call, no tools).
- `check_predictions(my_predictions)`: how many model calls each of PREDICTION_QUESTIONS
  takes (the check asks the model and compares).
- `check_two_step_chain(my_registry)`: a registry with the learner's own tool, which the
  model must call in the second step of DISH_QUESTION.

The checks always ask the offline teaching model (whatever backend the notebook uses), through
a client that counts the model calls and refuses to go on forever, so their verdicts are the
same for everyone, need no key, and a loop that never stops is reported, not run for ever.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from lesson_lib import clock
from lesson_lib.exercises import Report, run_check
from lesson_lib.protocol import find_problems
from lesson_lib.text import plural

CHAIN_QUESTION = "Which is warmer right now, Beijing or Shanghai, and what time is it there?"
NEVER_ENDING = "Keep checking the weather in Chengdu until it is sunny."
GREETING = "Hello!"
DISH_QUESTION = "Which is colder, Beijing or Shanghai, and what local dish should I try there?"
SEED_TOOLS = ("get_current_weather", "get_current_time")

# Exercise 2: key -> (question, max_turns). The model calls each takes are computed live.
PREDICTION_QUESTIONS: dict[str, tuple[str, int]] = {
    "a": ("Hello!", 5),
    "b": ("What is the weather in Beijing, Shanghai and Chengdu, and the time in Tokyo?", 5),
    "c": ("Which is colder, Tokyo or London, and what time is it there?", 5),
    "d": ("Keep checking the weather in Shanghai until it is sunny.", 5),
    "e": ("Keep checking the weather in Chengdu until it is sunny.", 4),
}
PREDICTION_HINTS = {
    "a": "a greeting needs no tool: the first reply is already the answer",
    "b": "parallel calls share one assistant message: one round of tools, then the answer",
    "c": "the time zone depends on which city is colder: weather first, then the time, "
         "then the answer (a chain, like Beijing or Shanghai above)",
    "d": "'until it is sunny' ends as soon as a result says sunny: what is Shanghai's "
         "weather in the simulated data?",
    "e": "Chengdu stays cloudy, so the model never stops by itself: count what max_turns "
         "allows",
}


# ----------------------------------------------------------------- a counting client

class CountingClient:
    """An offline client that counts model calls and refuses any beyond `limit`, so a loop
    that never stops ends with a clear error instead of running for ever."""

    def __init__(self, limit: int):  # most model calls allowed
        from lesson_lib.offline import offline_client  # noqa: PLC0415  (lazy: openai is slow)

        self.inner, self.limit, self.calls = offline_client(), limit, 0
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls > self.limit:
            raise RuntimeError(f"model call {self.calls} refused by the check: your loop did "
                               f"not stop after {self.limit} calls")
        return self.inner.chat.completions.create(**kwargs)


def _counting(limit: int):
    """(the client, a context that makes it the shared one for chat() calls)."""
    from lesson_lib.llm import using_client  # noqa: PLC0415
    from lesson_lib.offline import MODEL_ID  # noqa: PLC0415

    client = CountingClient(limit)
    return client, using_client(client, MODEL_ID)


def _short(text: Any, limit: int = 70) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _roles(messages: list) -> list:
    return [m.get("role") if isinstance(m, dict) else type(m).__name__ for m in messages]


def _valid(report: Report, label: str, messages: list) -> bool:
    """Expect `messages` (the learner's history) to be a list the API accepts."""
    problems = find_problems(messages)
    first = problems[0] if problems else None
    return report.expect(not problems, f"{label}: the history is valid (validate_messages "
                         f"passes on {len(messages)} messages)",
                         (first.explanation or first.message) if first else "")


# ----------------------------------------------------------------- exercise 1: my_loop

def _run_loop(report: Report, label: str, my_loop: Callable, question: str,
              max_turns: int) -> tuple[Any, list, CountingClient] | None:
    """Call the learner's loop on a fresh history; None (with a ❌) if it failed."""
    from lesson_lib.agent import SYSTEM_PROMPT  # noqa: PLC0415
    from lesson_lib.tools import default_registry  # noqa: PLC0415

    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": question}]
    client, shared = _counting(max_turns + 2)
    try:
        with shared:
            returned = my_loop(messages, default_registry, max_turns)
    except Exception as error:
        stop = "refused by the check" in str(error)
        report.expect(False, f"{label}: my_loop raised {type(error).__name__}: {_short(error, 120)}",
                      f"count the model calls and stop after max_turns ({max_turns})" if stop
                      else "my_loop must not raise: tool errors come back from execute() as "
                      "results, and chat() only raises for a request the API refuses")
        return None
    if returned is ...:
        report.expect(False, f"{label}: my_loop is not written yet (it returned ...)",
                      "write the loop, then return (reply, turns)")
        return None
    if not (isinstance(returned, tuple) and len(returned) == 2):
        report.expect(False, f"{label}: my_loop returns a pair (reply, turns)",
                      f"it returned {_short(repr(returned))}: end with `return reply, turns`")
        return None
    if len(messages) == 2:
        report.expect(False, f"{label}: my_loop adds the conversation to `messages`",
                      "the list you were given is the memory: append every assistant and tool "
                      "message to it (messages.append(...)), do not work on a copy")
        return None
    return returned, messages, client


def _loop_chain(report: Report, my_loop: Callable) -> None:
    label = "chain question"
    ran = _run_loop(report, label, my_loop, CHAIN_QUESTION, 5)
    if ran is None:
        return
    (reply, turns), messages, client = ran
    report.expect(turns == 3 and client.calls == 3,
                  f"{label}: 3 model calls, and turns says so (turns={turns!r}, calls made: "
                  f"{client.calls})",
                  "one round only? that is the `if`: keep calling while the reply has "
                  "tool_calls. turns must count the model calls you made" if client.calls < 3
                  else "count one turn per chat() call")
    called = [c["function"]["name"] for m in messages if isinstance(m, dict)
              for c in m.get("tool_calls") or []]
    report.expect(called == ["get_current_weather", "get_current_weather", "get_current_time"],
                  f"{label}: the history holds the calls weather, weather, then time "
                  f"(yours: {', '.join(called) or 'none'})",
                  "the time is asked for in the second round, which your loop never reached"
                  if client.calls < 3 else "offer registry.schemas() on every call (tools=None "
                  "stops the chain), and append assistant_to_dict(message) before its results")
    report.expect(isinstance(reply, str) and "Shanghai" in reply and "17:30" in reply,
                  f"{label}: the reply names Shanghai and its time ({_short(repr(reply), 110)})",
                  "return the content of the last reply, the one without tool_calls")
    if _valid(report, label, messages):
        last = messages[-1] if isinstance(messages[-1], dict) else {}
        report.expect(last.get("role") == "assistant" and last.get("content") == reply,
                      f"{label}: the final answer is the last message in the history",
                      "append the final reply too (assistant_to_dict(message)): the next "
                      "question's call must see it")


def _loop_never_ending(report: Report, my_loop: Callable) -> None:
    label, max_turns = "never-ending question, max_turns=3", 3
    ran = _run_loop(report, label, my_loop, NEVER_ENDING, max_turns)
    if ran is None:
        return
    (reply, turns), messages, client = ran
    report.expect(turns == max_turns and client.calls == max_turns,
                  f"{label}: stops after exactly 3 model calls (turns={turns!r}, calls made: "
                  f"{client.calls})",
                  "the model asks for the weather on every call here: stop after max_turns "
                  "calls, and count them in turns" if client.calls != max_turns
                  else "turns must be the number of model calls you made")
    report.expect(isinstance(reply, str) and reply.strip() != "",
                  f"{label}: the user is told why it stopped (reply: {_short(repr(reply))})",
                  "return a notice such as 'I stopped after 3 rounds of tool calls' "
                  "instead of None")
    _valid(report, label, messages)


def _loop_greeting(report: Report, my_loop: Callable) -> None:
    label = "greeting"
    ran = _run_loop(report, label, my_loop, GREETING, 5)
    if ran is None:
        return
    (reply, turns), messages, client = ran
    report.expect(turns == 1 and client.calls == 1 and isinstance(reply, str) and reply,
                  f"{label}: one model call, answered at once (turns={turns!r}, calls made: "
                  f"{client.calls})",
                  "when the first reply has no tool_calls, it is the answer: stop there")
    _valid(report, label, messages)


def check_my_loop(my_loop: Callable) -> bool:  # my_loop(messages, registry, max_turns)
    """Run the learner's loop on three questions and report what it did."""
    def body(report: Report) -> None:
        _loop_chain(report, my_loop)
        _loop_never_ending(report, my_loop)
        _loop_greeting(report, my_loop)
    with clock.frozen(clock.EXAMPLE):  # the chain's answer names a time: make it 17:30
        return run_check("my_loop", body)


# ----------------------------------------------------------------- exercise 2: predictions

def model_calls(question: str, max_turns: int = 5) -> int:
    """How many model calls LoopAgent makes for `question` on the offline model."""
    from lesson_lib.agent import LoopAgent  # noqa: PLC0415

    client, shared = _counting(max_turns)
    with shared:
        LoopAgent(max_turns=max_turns, client=client).run(question)
    return client.calls


def check_predictions(my_predictions: Any) -> bool:  # {"a": 1, "b": ..., ...}
    """Compare the learner's predicted model calls with what the loop really makes."""
    def body(report: Report) -> None:
        if not isinstance(my_predictions, dict):
            report.expect(False, "my_predictions is a dict like {'a': 1, 'b': 2, ...}",
                          f"got {type(my_predictions).__name__}")
            return
        for key, (question, max_turns) in PREDICTION_QUESTIONS.items():
            guess = my_predictions.get(key, ...)
            where = f"({key}) {question}"
            if guess is ... or guess is None:
                report.expect(False, f"{where}: not answered yet",
                              f"replace ... with a whole number (max_turns={max_turns})")
                continue
            if isinstance(guess, bool) or not isinstance(guess, int):
                report.expect(False, f"{where}: {guess!r} is not a whole number",
                              "write how many times the model is called, e.g. 2")
                continue
            real = model_calls(question, max_turns)
            report.expect(guess == real, f"{where}: {plural(guess, 'model call')}" + (
                "" if guess == real else f"? It takes {'more' if real > guess else 'fewer'}"),
                PREDICTION_HINTS[key])
    return run_check("predictions", body)


# ----------------------------------------------------------------- exercise 3: a two-step chain

def _registry_ok(report: Report, my_registry: Any) -> list[str]:
    """The learner's own tool names (not the seed tools); [] with a ❌ if the registry won't do."""
    from lesson_lib.tools import ToolRegistry  # noqa: PLC0415

    if not isinstance(my_registry, ToolRegistry):
        report.expect(False, "my_registry is a ToolRegistry",
                      f"got {type(my_registry).__name__}: start with my_registry = ToolRegistry()")
        return []
    if not report.expect("get_current_weather" in my_registry,
                         f"my_registry has get_current_weather ({my_registry.names()})",
                         "step 1 compares temperatures: my_registry.register("
                         "get_current_weather, WEATHER_TOOL)"):
        return []
    own = [n for n in my_registry.names() if n not in SEED_TOOLS]
    report.expect(bool(own), f"my_registry has a tool of your own ({', '.join(own) or 'none'})",
                  "write a function that returns a city's famous dish and register it")
    return own


def _chain_steps(report: Report, my_registry: Any, own: list[str]) -> None:
    from lesson_lib.agent import LoopAgent  # noqa: PLC0415

    client, shared = _counting(5)
    agent = LoopAgent(tools=my_registry, max_turns=5, client=client)
    with shared:
        result = agent.run(DISH_QUESTION)
    first = [(e.name, json.loads(e.arguments).get("location")) for e in result.events
             if e.turn == 1]
    report.expect(first == [("get_current_weather", "Beijing"), ("get_current_weather", "Shanghai")],
                  "turn 1: the weather in Beijing and in Shanghai, in parallel",
                  f"turn 1 called {first}: keep the seed weather tool with its WEATHER_TOOL schema")
    second = [e for e in result.events if e.turn == 2]
    mine = [e for e in second if e.name in own]
    if not report.expect(bool(mine) and "Beijing" in mine[0].arguments,
                         "turn 2: your tool is called for the colder city, Beijing" + (
                             f" ({mine[0].name}{mine[0].arguments})" if mine else
                             f" (turn 2 called {[e.name for e in second] or 'nothing'})"),
                         "the model picks a tool by its name and description only: say when to "
                         "use it, in words a user would type (a local dish, food to try), and "
                         "take a `city` argument"):
        return
    error = _error_in(mine[0].result)
    report.expect(error is None, f"your tool answered without an error ({_short(mine[0].result)})",
                  f"it returned an error: {error}")
    report.expect(result.turns == 3 and not result.hit_max_turns,
                  f"3 model calls in all, ending with an answer ({_short(repr(result.reply))})",
                  "weather round, your tool's round, then the answer")
    _valid(report, "memory", agent.memory.to_api_format())


def _error_in(result: str) -> str | None:
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        return None
    return str(data["error"]) if isinstance(data, dict) and "error" in data else None


def check_two_step_chain(my_registry: Any) -> bool:  # a ToolRegistry with your tool
    """Run DISH_QUESTION through LoopAgent with `my_registry` and report each step."""
    def body(report: Report) -> None:
        own = _registry_ok(report, my_registry)
        if own:
            _chain_steps(report, my_registry, own)
    return run_check("two-step chain", body)
