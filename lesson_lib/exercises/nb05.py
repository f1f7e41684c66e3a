"""Self-checks for notebook 05, the memory agent.

- Build it: `check_my_agent_chat(MyAgent)`, the learner's `Agent.chat`, judged by
  AGENT_RULES with a scripted model (lesson_lib.exercises.scripted): the same replies on
  every model, and every request recorded. tests/test_core_track_nb05.py runs the same rules
  on the library's `Agent`.
1. `check_predicted_roles(predicted)`: the roles in a fresh agent's memory after one input.
2. `check_replay(replay)`: a function that feeds inputs to an agent (handling "/clear")
   and returns the message count after each one.
3. `check_my_agent(agent, question, arguments)`: an Agent with the learner's own tool: its
   schema says when to use it, it runs with the arguments a model would send, and an Agent
   driven by a scripted model that asks for it carries its result to the answer.

Exercises 1 and 2 are replayed on the offline teaching model (the model whose answers the
notebook shows), whatever backend the notebook uses; the build and exercise 3 use a scripted
model, so no verdict depends on which tool a model picks or how it words an answer.
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass
from typing import Any

from lesson_lib.agent import Agent, ToolEvent
from lesson_lib.exercises import Report, not_done, run_check
from lesson_lib.exercises.contract import Broken, Rule, check_rules, expect, property_rule
from lesson_lib.exercises.scripted import (
    Reply,
    Request,
    Script,
    ScriptedClient,
    ScriptEnded,
    ToolCrashed,
    TooManyCalls,
    WatchedTools,
    answering,
    call_index,
    copied,
    expect_call_before_results,
    expect_each_call_answered,
    first_problem,
    labels,
    normalized,
    parsed,
    tool_names,
    weather_calls,
    weather_tools,
)
from lesson_lib.protocol import assistant_to_dict
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
#
# The learner's own tool, judged by what the learner controls: that the agent offers it,
# that its schema tells a model when to use it and what each parameter is, and that it runs
# with the arguments a model would send. Which tool a model then picks is the model's
# choice (the notebook shows yours in the next cell); the check drives an Agent with a
# scripted model instead, one that asks for the learner's tool, so the verdict is the same
# on every model.

TOOL_TITLE = "Exercise 3 · an agent with your own tool"
SCRIPTED_ANSWER = "Here is what your tool found."


def says_when(description: Any) -> bool:
    """Does a tool's description say when to use it ("Use this when …"), and not TODO?"""
    text = str(description or "")
    return "TODO" not in text and bool(re.search(r"\bwhen\b|当", text, re.IGNORECASE))


def undescribed(schema: dict) -> list[str]:
    """The parameters of a tool schema without a description (or with TODO in it)."""
    props = schema["function"]["parameters"].get("properties", {})
    return [name for name, prop in props.items()
            if not str(prop.get("description") or "").strip() or "TODO" in prop["description"]]


def _scripted_turn(registry: Any, question: str, name: str, arguments: dict
                   ) -> list[ToolEvent]:
    """One input through an Agent with `registry`, the model scripted to call `name` with
    `arguments` and then to answer: the tool calls the agent ran."""
    script = Script()
    script.calls((name, arguments))
    script.answer(SCRIPTED_ANSWER)
    client, events = ScriptedClient(script), []
    with answering(client):
        agent = Agent(tools=registry, client=client, on_tool=events.append)
        agent.chat(question)
    return events


def _check_tool(r: Report, agent: Any, question: Any, arguments: Any) -> None:
    if not r.expect(isinstance(agent, Agent), "my_agent is an Agent",
                    f"got {type(agent).__name__}: build it with Agent(tools=my_tools)"):
        return
    names = agent.registry.names()
    mine = [n for n in names if n not in default_registry.names()]
    if not r.expect(bool(mine), "the agent offers a tool of yours",
                    f"it offers {names or 'no tools'}: pass your registry, "
                    "Agent(tools=my_tools), and register your function in it"):
        return
    schema = agent.registry.get(mine[0]).schema
    description = schema["function"]["description"]
    r.expect(says_when(description), f"{mine[0]}'s description says when to use it",
             (f"it says {description!r}: a model picks a tool by its description alone "
              "(notebook 03), so say when to use it, from the user's side",
              'begin the docstring with "Use this when the user asks …"'))
    bare = undescribed(schema)
    r.expect(not bare, "each parameter has a description",
             f"{', '.join(bare)}: describe it under 'Args:' in the docstring, with an example "
             "value (e.g. Chengdu)")
    if not r.expect(isinstance(question, str) and question.strip() != "",
                    "my_question is a question (a non-empty string)",
                    "ask something your tool can answer, e.g. a city's famous dish"):
        return
    if not r.expect(isinstance(arguments, dict),
                    "my_arguments is a dict of the arguments a model would send",
                    f"got {type(arguments).__name__}: write e.g. {{\"city\": \"Chengdu\"}}"):
        return
    events = _scripted_turn(agent.registry, question, mine[0], arguments)
    result = events[0].result if events else ""
    data = parsed(result)
    error = data.get("error") if isinstance(data, dict) else None
    if not r.expect(error is None, f"{mine[0]}(**my_arguments) runs without an error",
                    f"it returned the error {error!r} (hint: {data.get('hint')})"
                    if isinstance(data, dict) else ""):
        return
    r.expect(data not in (None, "", {}, []),
             f"{mine[0]} returns something for the answer ({_cut(result)})",
             f"it returned {result!r}: return a dict (or a string) with the answer "
             "instead of None")


def _cut(text: Any, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


OWN_QUESTION, OWN_ARGUMENTS = "What should I eat in Chengdu?", {"city": "Chengdu"}


def check_my_agent(agent: Any, question: Any = OWN_QUESTION,
                   arguments: Any = OWN_ARGUMENTS) -> bool:
    """Exercise 3: your tool, in an Agent: described so that a model can choose it, run with
    the arguments a model would send for `question` (by default the notebook's question and
    {"city": "Chengdu"}), its result carried to the answer."""
    return run_check(TOOL_TITLE, lambda r: _check_tool(r, agent, question, arguments))


# ----------------------------------------------------------------- core: build Agent.chat
#
# The learner writes the body of `chat` in `class MyAgent(Agent)`: add the user's message,
# call the model with the whole memory and the tools; if the reply has tool_calls, run every
# call, write the call (a plain dict) and one tool message per call together, call again
# with tools=None; store and return the answer's text. Written step by step, not with the
# library's own run_tool_round / remember_answer (that is the point).
#
# AGENT_RULES judge it with a scripted model (lesson_lib.exercises.scripted), so the check
# is the same on every model; tests/test_core_track_nb05.py runs the same rules on Agent.
# The check gives the agent a memory that keeps whatever it is given (ShortTermMemory would
# refuse some of it with a ProtocolError), so a rule can say what chat() wrote.

AGENT_TITLE = "Build it · your Agent.chat"
NAME_INPUT, NAME_ANSWER = "My name is Xiaoming", "Nice to meet you, Xiaoming!"
ASK_INPUT, ASK_ANSWER = "What's my name?", "Your name is Xiaoming."
WEATHER_INPUT, WEATHER_ANSWER = "What's the weather?", "It is cloudy, 16°C."


class RecordingMemory:
    """The memory the check gives your agent: like ShortTermMemory (add, add_many,
    to_api_format, ...), but it keeps whatever it is given, so the check can show it."""

    def __init__(self) -> None:
        self.messages: list = []

    def add(self, message: Any) -> None:
        self.messages.append(copied(message))

    def add_many(self, messages: Any) -> None:
        self.messages.extend(copied(list(messages)))

    def add_system(self, text: str) -> None:
        self.add({"role": "system", "content": text})

    def to_api_format(self) -> list:
        return copied(self.messages)

    def message_count(self) -> int:
        return len(self.messages)

    def clear_non_system(self) -> None:
        self.messages = [m for m in self.messages
                         if isinstance(m, dict) and m.get("role") == "system"]


@dataclass
class Said:
    """One input through the agent: what chat() returned, its requests, the memory after."""
    text: str
    returned: Any
    requests: list[Request]
    memory: list


class Conversation:
    """The learner's agent class (or the library's), on a scripted model and watched tools."""

    def __init__(self, cls: type, script: Script, tools: WatchedTools | None = None):
        self.client = ScriptedClient(script)
        self.tools = tools if tools is not None else weather_tools()
        self.memory = RecordingMemory()
        with answering(self.client):
            self.agent = cls(tools=self.tools, client=self.client, memory=self.memory)

    def say(self, text: str) -> Said:
        before = len(self.client.requests)
        with answering(self.client):
            try:
                returned = self.agent.chat(text)
            except (ScriptEnded, TooManyCalls) as error:
                raise Broken(f"chat({text!r}) asked the model again: {error}; one input takes "
                             "one model call, or two after a tool round") from None
        return Said(text, returned, self.client.requests[before:], list(self.memory.messages))


def _plain(cls: type, *answers: str) -> Conversation:
    script = Script()
    for text in answers:
        script.answer(text)
    return Conversation(cls, script)


def _with_tools(cls: type, calls: int, tools: WatchedTools | None = None) -> Conversation:
    script = Script()
    script.calls(*weather_calls(calls))
    script.answer(WEATHER_ANSWER)
    return Conversation(cls, script, tools)


def _asked(conversation: Conversation) -> Reply:
    """The scripted reply with tool calls (the first one of the script)."""
    return next(r for r in conversation.client.script.replies if r.calls)


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _own_steps(cls: type) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        return
    used: list[str] = []
    watched = type("Watched" + cls.__name__, (cls,), {})
    for name in ("run_tool_round", "remember_answer"):
        if getattr(cls, name) is getattr(Agent, name):  # inherited: the library's step

            def spy(self: Any, *args: Any, _name: str = name, **kw: Any) -> Any:
                used.append(_name)
                return getattr(Agent, _name)(self, *args, **kw)

            setattr(watched, name, spy)
    _plain(watched, NAME_ANSWER).say(NAME_INPUT)
    _with_tools(watched, 1).say(WEATHER_INPUT)
    expect(not used, "chat() handed its steps to the library: it called "
                     + " and ".join(f"self.{n}()" for n in dict.fromkeys(used))
                     + (" (super().chat() does)" if "remember_answer" in used else ""))


def _stores_user_first(cls: type) -> None:
    said = _plain(cls, NAME_ANSWER).say(NAME_INPUT)
    expect(bool(said.requests), f"chat({NAME_INPUT!r}) made no model call")
    memory, sent = said.memory, said.requests[0].messages
    expect(_user(NAME_INPUT) in memory,
           f"after chat({NAME_INPUT!r}) the memory holds {labels(memory)}: the user's message "
           "is not in it")
    expect(memory.index(_user(NAME_INPUT)) == 1,
           f"after chat({NAME_INPUT!r}) the memory holds {labels(memory)}: the user's message "
           "is not the first thing added")
    expect(bool(sent) and sent[-1] == _user(NAME_INPUT),
           f"the request sent {labels(sent)}: it does not end with the user's message")


def _sends_whole_memory(cls: type) -> None:
    talk = _plain(cls, NAME_ANSWER, ASK_ANSWER)
    talk.say(NAME_INPUT)
    said = talk.say(ASK_INPUT)
    expect(bool(said.requests), f"chat({ASK_INPUT!r}) made no model call")
    newest = max((i for i, m in enumerate(said.memory) if m == _user(ASK_INPUT)), default=None)
    held = said.memory[:newest + 1] if newest is not None else said.memory
    sent = said.requests[0].messages
    expect(sent == held, f"the second input's request sent {labels(sent)}; the memory held "
                         f"{labels(held)}")


def _plain_takes_one_call(cls: type) -> None:
    talk = _plain(cls, NAME_ANSWER)
    said = talk.say(NAME_INPUT)
    n = len(said.requests)
    expect(n == 1, f"a plain answer took {n} model calls")
    offered = said.requests[0].tools
    want = talk.tools.schemas()
    expect(offered == want, "the request offered "
           + ("no tools (tools=None): the model could not ask for one" if offered is None
              else f"tools={tool_names(offered)}, not the agent's {tool_names(want)}"))


def _returns_text(cls: type) -> None:
    said = _plain(cls, NAME_ANSWER).say(NAME_INPUT)
    got = said.returned
    expect(isinstance(got, str) and got == NAME_ANSWER,
           f"the model answered {NAME_ANSWER!r}; chat() returned "
           + (f"a {type(got).__name__} object" if not isinstance(got, (str, type(None)))
              else repr(got)))


def _stores_answer(cls: type) -> None:
    said = _plain(cls, NAME_ANSWER).say(NAME_INPUT)
    memory, want = said.memory, {"role": "assistant", "content": NAME_ANSWER}
    last = memory[-1] if memory else None
    if isinstance(last, dict) and last.get("role") == "assistant":
        last = assistant_to_dict(last)
    objects = [type(m).__name__ for m in memory if not isinstance(m, dict)]
    expect(not objects, f"after the answer {NAME_ANSWER!r} the memory holds {labels(memory)}: "
                        f"the answer was stored as a {objects[0] if objects else ''} object, "
                        "not a dict")
    expect(last == want and len(memory) == 3,
           f"after the answer {NAME_ANSWER!r} the memory holds {labels(memory)}"
           + ("" if any(m.get("content") == NAME_ANSWER for m in memory)
              else ": the answer is not in it"))


def _tool_reply_two_calls(cls: type) -> None:
    said = _with_tools(cls, 1).say(WEATHER_INPUT)
    n = len(said.requests)
    expect(n == 2, f"the model replied with a tool call; chat() made {n} model call"
                   f"{'s' if n != 1 else ''} and returned {said.returned!r}")


def _second_without_tools(cls: type) -> None:
    said = _with_tools(cls, 1).say(WEATHER_INPUT)
    second = said.requests[1].tools
    expect(second is None, f"the second request offered tools={tool_names(second)}"
           + (" (the API refuses an empty list)" if second == [] else ""))


def _stores_the_call(cls: type) -> None:
    talk = _with_tools(cls, 2)
    said = talk.say(WEATHER_INPUT)
    expect_call_before_results(said.memory, str(_asked(talk)), "after chat()", "the memory")


def _call_is_a_dict(cls: type) -> None:
    talk = _with_tools(cls, 2)
    said = talk.say(WEATHER_INPUT)
    stored = said.memory[call_index(said.memory)]
    expect(isinstance(stored, dict),
           f"the call was stored as a {type(stored).__name__} object, not a dict")
    calls = stored["tool_calls"]
    expect(all(isinstance(c, dict) for c in calls),
           f"the stored call is a dict, but its tool_calls hold "
           f"{', '.join(sorted({type(c).__name__ for c in calls}))} objects")
    want = assistant_to_dict(_asked(talk).message())
    expect(assistant_to_dict(stored) == want,
           f"the stored call is {stored}; the model sent {want}")


def _runs_every_call(cls: type) -> None:
    talk = _with_tools(cls, 3)
    talk.say(WEATHER_INPUT)
    asked = [(c.name, json.loads(c.arguments)) for c in _asked(talk).calls]
    ran = [(name, parsed(args)) for name, args in talk.tools.ran]
    expect(sorted(map(repr, ran)) == sorted(map(repr, asked)),
           f"the model asked for {len(asked)} calls in one reply "
           f"({', '.join(a['location'] for _, a in asked)}); chat() ran {len(ran)}"
           + (f": {', '.join(_shown(n, a) for n, a in ran)}" if ran else ""))


def _shown(name: str, arguments: Any) -> str:
    """A call as name(arguments), the arguments as JSON."""
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return f"{name}({arguments})"


def _answers_each_call(cls: type) -> None:
    talk = _with_tools(cls, 3)
    said = talk.say(WEATHER_INPUT)
    expect_each_call_answered(said.memory, _asked(talk), "the memory", _cut)


def _written_together(cls: type) -> None:
    talk = _with_tools(cls, 2, weather_tools(crash_at=2))
    try:
        talk.say(WEATHER_INPUT)
    except ToolCrashed:
        pass
    memory = talk.memory.to_api_format()
    expect(first_problem(memory) is None,
           "the check stopped the second of two tool calls halfway (as a Ctrl-C or a crash "
           f"would); the memory was left as {labels(memory)}, which the API refuses from then "
           "on: a call without all its results")
    talk = Conversation(cls, _mixed_script())
    for text in (NAME_INPUT, WEATHER_INPUT, ASK_INPUT):
        memory = talk.say(text).memory
        problem = first_problem(memory)
        expect(problem is None, f"after chat({text!r}) the memory {labels(memory)} is not a "
               f"list the API accepts: {problem}")


def _mixed_script() -> Script:
    script = Script()
    script.answer(NAME_ANSWER)
    script.calls(*weather_calls(2))
    script.answer(WEATHER_ANSWER)
    script.answer(ASK_ANSWER)
    return script


# ----------------------------------------------------------------- the property

def _turns():
    from hypothesis import strategies as st  # noqa: PLC0415

    # 0: the model answers in words; 1-3: it asks for that many tools, then answers
    return st.lists(st.integers(0, 3), min_size=1, max_size=5)


def _script_of(turns: list[int]) -> Script:
    script = Script()
    for k, calls in enumerate(turns, 1):
        if calls:
            script.calls(*weather_calls(calls, start=k))
        script.answer(f"answer {k}")
    return script


def _kind(calls: int) -> str:
    return "answer" if calls == 0 else f"{calls} call{'s' if calls > 1 else ''}"


def _first_change(mine: Said, theirs: Said) -> str | None:
    if len(mine.requests) != len(theirs.requests):
        return f"it made {len(mine.requests)} model calls, the library's {len(theirs.requests)}"
    for n, (a, b) in enumerate(zip(mine.requests, theirs.requests, strict=True), 1):
        if [normalized(m) for m in a.messages] != [normalized(m) for m in b.messages]:
            return (f"request {n} sent {labels(a.messages)}, the library's "
                    f"{labels(b.messages)}")
        if a.tools != b.tools:
            return (f"request {n} offered tools={tool_names(a.tools)}, the library's "
                    f"tools={tool_names(b.tools)}")
    if [normalized(m) for m in mine.memory] != [normalized(m) for m in theirs.memory]:
        return f"the memory holds {labels(mine.memory)}, the library's {labels(theirs.memory)}"
    if mine.returned != theirs.returned:
        return f"chat() returned {mine.returned!r}, the library's {theirs.returned!r}"
    problem = first_problem(mine.memory)
    return f"the memory is not valid: {problem}" if problem else None


def _any_conversation(cls: type, turns: list[int]) -> str | None:
    mine, theirs = Conversation(cls, _script_of(turns)), Conversation(Agent, _script_of(turns))
    for k, calls in enumerate(turns, 1):
        text = f"question {k}"
        what = _first_change(mine.say(text), theirs.say(text))
        if what:
            return (f"replies [{', '.join(_kind(c) for c in turns)}], at input {k} "
                    f"({_kind(calls)}): {what}")
    return None


R_OWN = "chat() writes the steps itself (not super().chat(), run_tool_round or remember_answer)"
R_USER = "chat() stores the user's message first, and the request ends with it"
R_WHOLE = "each request sends the whole memory, not only the newest message"
R_ONE = "a plain answer takes one model call, with the agent's tools offered"
R_TEXT = "chat() returns the answer as text (a str)"
R_STORED = "the answer is stored as {'role': 'assistant', 'content': text}"
R_TWO = "a reply with tool_calls takes two model calls"
R_NONE = "the second call goes out with tools=None"
R_CALL = "the assistant message with the tool_calls is stored, before its results"
R_DICT = "the stored call is a plain dict (assistant_to_dict(message)), not the SDK's object"
R_EVERY = "every call of a parallel reply is run (all of message.tool_calls)"
R_IDS = "each call gets one tool message, with its tool_call_id and the tool's result"
R_TOGETHER = ("the call and its results are written together: the memory is valid after "
              "every chat(), even when a tool stops halfway")

AGENT_RULES: list[Rule] = [
    Rule(R_USER, _stores_user_first,
         ("step 0: self.memory.add({'role': 'user', 'content': user_input}), before any model "
          "call: the model only sees what is in the memory",)),
    Rule(R_WHOLE, _sends_whole_memory,
         ("the model is stateless: every request carries the whole conversation",
          "send self.memory.to_api_format(), not a list you build from the newest input")),
    Rule(R_ONE, _plain_takes_one_call,
         ("the first call offers the tools: chat(self.memory.to_api_format(), "
          "tools=self.tools, client=self.client)",
          "a reply without tool_calls is the answer: no second call")),
    Rule(R_TEXT, _returns_text,
         ("chat() (lesson_lib.llm) returns the assistant message; the user is shown its "
          "text, message.content",)),
    Rule(R_STORED, _stores_answer,
         ("the next input's request must see the answer: add it to the memory before "
          "returning",
          "store a plain dict, {'role': 'assistant', 'content': message.content}, not the "
          "SDK's message object")),
    Rule(R_TWO, _tool_reply_two_calls,
         ("a reply with tool_calls asks for tools; it is not the answer",
          "if message.tool_calls: run them, write them, then call the model again for the "
          "answer")),
    Rule(R_NONE, _second_without_tools,
         ("at most one tool round per input: the second call must be answered in words",
          "pass tools=None to the second call"), needs=(R_TWO,)),
    Rule(R_CALL, _stores_the_call,
         ("a tool message answers a call: the assistant message that made the call must be in "
          "the memory, before the results",
          "write [assistant_to_dict(message), *results] in that order")),
    Rule(R_DICT, _call_is_a_dict,
         ("the memory holds plain dicts, the API's JSON; the SDK's message object is not one "
          "(ShortTermMemory refuses it)",
          "assistant_to_dict(message) turns the reply into the dict to store"),
         needs=(R_CALL,)),
    Rule(R_EVERY, _runs_every_call,
         ("one reply can ask for several calls at once (parallel calls, notebook 03)",
          "loop over message.tool_calls and run each with self.registry.execute(call.function"
          ".name, call.function.arguments)")),
    Rule(R_IDS, _answers_each_call,
         ("every call needs its own tool message, or the API refuses the next request",
          "{'role': 'tool', 'tool_call_id': call.id, 'content': the string execute() "
          "returned}, one per call, right after the call"), needs=(R_CALL,)),
    Rule(R_TOGETHER, _written_together,
         ("between writing the call and writing its results, the tools run: the slow part, "
          "where a Ctrl-C or a crash can stop everything",
          "run every call first, then write the call and all its results with one "
          "self.memory.add_many([...])")),
    property_rule(
        "for any conversation: the same requests, memory and answers as the library's Agent",
        _turns(), _any_conversation,
        ("the replies above are the smallest conversation where yours and the library's "
         "part: follow it input by input",
         "each input starts the same way: the user's message, then a call that offers the "
         "tools (whatever the input before did)"),
        examples=40,
        needs=(R_USER, R_WHOLE, R_ONE, R_TEXT, R_STORED, R_TWO, R_NONE, R_CALL, R_DICT,
               R_EVERY, R_IDS, R_TOGETHER)),
]


# What the exercise asks beyond what chat() does: that the learner writes the steps. The
# library's Agent is made of those steps (run_tool_round, remember_answer), so this rule is
# the exercise's, not one of the AGENT_RULES that guard the library.
OWN_STEPS = Rule(R_OWN, _own_steps,
                 ("the exercise is to write what Agent.chat does: add, call, run the tools, "
                  "write, call again, store and return; the library's run_tool_round and "
                  "remember_answer are shown after yours passes",
                  "you may write helper methods of your own; just don't call the library's"))
EXERCISE_RULES: list[Rule] = [OWN_STEPS, *AGENT_RULES]


def check_my_agent_chat(MyAgent: Any) -> bool:  # noqa: N803  your class, not an instance
    """The core exercise: judge the learner's agent class (its chat) by AGENT_RULES, and
    that its chat writes the steps itself (OWN_STEPS)."""
    if not isinstance(MyAgent, type):
        return not_done(AGENT_TITLE, "pass the class itself: check_my_agent_chat(MyAgent)")
    return check_rules(AGENT_TITLE, MyAgent, EXERCISE_RULES,
                       start="write the body of chat() in the skeleton, then run this check "
                             "again")
