"""Self-checks for notebook 05, the memory agent.

1. `check_predicted_roles(predicted)`: the roles in a fresh agent's memory after one input.
2. `check_replay(replay)`: a function that feeds inputs to an agent (handling "/clear")
   and returns the message count after each one.
3. `check_my_agent(agent, question)`: an Agent with the learner's own tool answers a
   question by calling it.

Exercises 1 and 2 are replayed on the offline teaching model (the model whose answers the
notebook shows); exercise 3 uses the learner's agent as built, on whatever backend it has.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from lesson_lib.agent import Agent, ToolEvent
from lesson_lib.exercises import Report, run_check
from lesson_lib.protocol import find_problems
from lesson_lib.tools import default_registry

ROLES = ("system", "user", "assistant", "tool")
PREDICT_INPUT = "What's the weather in Shanghai and Beijing?"  # exercise 1's input
REPLAY_INPUTS = ["My name is Xiaoming", "What's the weather in Chengdu?", "/clear",
                 "What's my name?"]
REPLAY_MORE = ["我叫小明", "What's the weather in Shanghai and Beijing?"]  # no hard-coding


def offline_agent() -> Agent:
    """A fresh Agent with the seed tools on its own offline client."""
    from lesson_lib.offline import offline_client  # noqa: PLC0415  (lazy: imports openai)

    return Agent(client=offline_client())


def roles_of(messages: Any) -> list[str]:
    """The role of each message, from a list of message dicts or a memory."""
    if hasattr(messages, "to_api_format"):
        messages = messages.to_api_format()
    return [m["role"] for m in messages]


# ----------------------------------------------------------------- exercise 1

def check_predicted_roles(predicted: Any) -> bool:
    """Exercise 1: the roles of a fresh agent's memory after PREDICT_INPUT."""
    def body(r: Report) -> None:
        if predicted is ... or not isinstance(predicted, (list, tuple)):
            r.expect(False, "predicted_roles is a list of role names",
                     'write a list such as ["system", "user", ...]; it is '
                     f"{'still ...' if predicted is ... else type(predicted).__name__}")
            return
        given = [str(p).split("(")[0].strip().lower() for p in predicted]  # "assistant(...)"
        unknown = [p for p in given if p not in ROLES]
        if not r.expect(not unknown, "every entry is a role name",
                        f"{unknown} {'is' if len(unknown) == 1 else 'are'} not roles: "
                        f"use {', '.join(ROLES)}"):
            return
        agent = offline_agent()
        agent.chat(PREDICT_INPUT)
        actual = roles_of(agent.memory)
        r.expect(given[:1] == ["system"], "the list starts with the system prompt",
                 "Agent() writes its system prompt into memory before anything else")
        r.expect(given.count("user") == 1, "the user's input is in memory once",
                 "step 0 adds the input once; both model calls send that same list")
        r.expect(given.count("tool") == actual.count("tool"),
                 f"one tool message per call ({actual.count('tool')} here)",
                 _tool_hint(given))
        r.expect(given == actual, f"the whole list matches the agent's memory ({len(actual)} "
                 "messages)", _first_difference(given, actual))
    return run_check("Exercise 1 · predict the memory", body)


def _tool_hint(given: list[str]) -> tuple[str, ...]:
    if "tool" not in given:
        return ("the weather needs a tool: the memory holds assistant(tool_calls) and the "
                "tool results before the final answer",)
    return ("count the calls: how many cities does the input ask about, and how many tool "
            "messages does each call get?",
            "two cities are two parallel calls in ONE assistant message, and every call "
            "gets its own tool message")


def _first_difference(given: list[str], actual: list[str]) -> tuple[str, ...]:
    for i, (g, a) in enumerate(zip(given, actual, strict=False)):
        if g != a:
            return (f"your list first differs at position {i} (you wrote {g!r})",
                    f"position {i}: the memory has {a!r}")
    return (f"you wrote {len(given)} roles, the memory holds {len(actual)}",)


# ----------------------------------------------------------------- exercise 2

def _replayed(replay: Any, inputs: list[str]) -> tuple[Agent, Any]:
    agent = offline_agent()
    return agent, replay(agent, list(inputs))


def _expected_counts(inputs: list[str]) -> list[int]:
    agent, counts = offline_agent(), []
    for text in inputs:
        if text.strip().lower() == "/clear":
            agent.clear()
        else:
            agent.chat(text)
        counts.append(agent.memory.message_count())
    return counts


def check_replay(replay: Any) -> bool:
    """Exercise 2: replay(agent, inputs) → the message count after each input."""
    def body(r: Report) -> None:
        if not r.expect(callable(replay) and _takes_two(replay),
                        "replay is a function of (agent, inputs)",
                        "define it as def replay(agent, inputs): ..."):
            return
        agent, counts = _replayed(replay, REPLAY_INPUTS)
        expected = _expected_counts(REPLAY_INPUTS)
        if not r.expect(isinstance(counts, list) and len(counts) == len(REPLAY_INPUTS),
                        f"it returns a list with one count per input ({len(REPLAY_INPUTS)})",
                        f"got {counts!r}: after each input, append "
                        "agent.memory.message_count() to the list you return"):
            return
        r.expect(counts[:2] == expected[:2], f"the counts after the first two inputs are "
                 f"{expected[:2]}", f"got {counts[:2]}: count after agent.chat(text) returns "
                 "(a tool round adds assistant(tool_calls), tool and the answer)")
        sent = [m for m in agent.memory.to_api_format() if m.get("content") == "/clear"]
        r.expect(counts[2:] == expected[2:] and not sent,
                 f'"/clear" forgets everything but the system prompt (counts {expected[2:]})',
                 f"got {counts[2:]}: for \"/clear\" call agent.clear() instead of "
                 "agent.chat(...); the model must never see the command")
        r.expect(agent.memory.message_count() == counts[-1],
                 "the counts are those of the agent you were given",
                 "use the agent passed in, not a new Agent()")
        _, more = _replayed(replay, REPLAY_MORE)
        r.expect(more == _expected_counts(REPLAY_MORE),
                 f"it works for other inputs too ({REPLAY_MORE})",
                 f"got {more}: compute the counts from the memory, don't write them in")
    return run_check("Exercise 2 · replay", body)


def _takes_two(fn: Any) -> bool:
    try:
        inspect.signature(fn).bind(None, [])
    except (TypeError, ValueError):
        return False
    return True


# ----------------------------------------------------------------- exercise 3

def check_my_agent(agent: Any, question: Any) -> bool:
    """Exercise 3: an Agent with your own tool answers `question` by calling that tool."""
    def body(r: Report) -> None:
        if not r.expect(isinstance(agent, Agent), "my_agent is an Agent",
                        f"got {type(agent).__name__}: build it with Agent(tools=my_tools)"):
            return
        names = agent.registry.names()
        mine = [n for n in names if n not in default_registry.names()]
        if not r.expect(bool(mine), "the agent offers a tool of yours",
                        f"it offers {names or 'no tools'}: pass your registry, "
                        "Agent(tools=my_tools), and register your function in it"):
            return
        if not r.expect(isinstance(question, str) and question.strip() != "",
                        "my_question is a question (a non-empty string)",
                        "ask something your tool can answer, e.g. a city's famous dish"):
            return
        events, reply = _ask(agent, question)
        used = [e for e in events if e.name in mine]
        if not r.expect(bool(used), f"the model called your tool ({', '.join(mine)})",
                        _choice_hint(events, mine)):
            return
        data = _parsed(used[0].result)
        error = data.get("error") if isinstance(data, dict) else None
        r.expect(error is None, "your tool ran without an error",
                 f"it returned the error {error!r}: fix the function or its parameters")
        r.expect(data not in (None, "", {}, []), "your tool returned something",
                 f"it returned {used[0].result!r}: return a dict (or a string) with the "
                 "answer instead of None")
        r.expect(isinstance(reply, str) and _uses_result(reply, data, question),
                 "the reply uses what your tool returned", f"the reply was {reply!r}")
        r.expect(not find_problems(agent.memory.to_api_format()),
                 "the memory is still valid afterwards",
                 "build the agent with Agent(...) and let agent.chat() write the memory")
    return run_check("Exercise 3 · an agent with your own tool", body)


def _ask(agent: Agent, question: str) -> tuple[list[ToolEvent], str]:
    """Ask, recording the tool calls (and still telling the agent's own on_tool)."""
    events: list[ToolEvent] = []
    before = agent.on_tool

    def record(event: ToolEvent) -> None:
        events.append(event)
        if before:
            before(event)

    agent.on_tool = record
    try:
        return events, agent.chat(question)
    finally:
        agent.on_tool = before


def _choice_hint(events: list[ToolEvent], mine: list[str]) -> str:
    called = ", ".join(e.name for e in events) or "no tool"
    return (f"it called {called}. The model picks a tool by the words it shares with the "
            "question: use the question's words (e.g. 'eat', 'dish', 'city') in the tool's "
            "name or docstring, and describe each parameter under 'Args:'")


def _parsed(result: str) -> Any:
    try:
        return json.loads(result)
    except (TypeError, ValueError):
        return result


def _leaves(data: Any) -> list[str]:
    if isinstance(data, dict):
        return [leaf for value in data.values() for leaf in _leaves(value)]
    if isinstance(data, list):
        return [leaf for value in data for leaf in _leaves(value)]
    return [] if data is None or isinstance(data, bool) else [str(data)]


def _uses_result(reply: str, data: Any, question: str) -> bool:
    """Some value of the result that the question did not already contain is in the reply."""
    new = [v for v in _leaves(data) if v.strip() and v.lower() not in question.lower()]
    return any(v.lower() in reply.lower() for v in new)
