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
from lesson_lib.exercises import (
    Report,
    not_done,
    run_check,
    signature_problem,
    wrong_signature,
)
from lesson_lib.exercises.contract import Broken, Rule, check_rules, expect, property_rule
from lesson_lib.exercises.scripted import (
    Reply,
    Request,
    Script,
    ScriptedClient,
    ScriptEnded,
    StrayCall,
    StrayClient,
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
    tools_refused,
    weather_calls,
    weather_tools,
)
from lesson_lib.i18n import N_, Twins, _, ngettext
from lesson_lib.protocol import assistant_to_dict
from lesson_lib.tools import default_registry

ROLES = ("system", "user", "assistant", "tool")

# The conversations the checks use, each with its Chinese twin: a Chinese learner is judged
# on Chinese data by the same rules (DATA.NAME in the language spoken now; the module's
# names PREDICT_INPUT, REPLAY_INPUTS … give the same).
DATA = Twins(
    PREDICT_INPUT=("What's the weather in Shanghai and Beijing?",  # exercise 1's input
                   "上海和北京的天气怎么样？"),
    REPLAY_INPUTS=(["My name is Xiaoming", "What's the weather in Chengdu?", "/clear",
                    "What's my name?"],
                   ["我叫小明", "成都天气怎么样？", "/clear", "我叫什么名字？"]),
    REPLAY_MORE=(["我叫小明", "What's the weather in Shanghai and Beijing?"],  # no hard-coding
                 ["我叫老张", "北京和上海的天气怎么样？"]),
    SCRIPTED_ANSWER=("Here is what your tool found.", "这是你的工具查到的结果。"),
    OWN_QUESTION=("What should I eat in Chengdu?", "成都有什么好吃的？"),
    OWN_ARGUMENTS=({"city": "Chengdu"}, {"city": "成都"}),
    NAME_INPUT=("My name is Xiaoming", "我叫小明"),
    NAME_ANSWER=("Nice to meet you, Xiaoming!", "你好，小明！"),
    ASK_INPUT=("What's my name?", "我叫什么名字？"),
    ASK_ANSWER=("Your name is Xiaoming.", "你叫小明。"),
    WEATHER_INPUT=("What's the weather?", "天气怎么样？"),
    WEATHER_ANSWER=("It is cloudy, 16°C.", "多云，16°C。"),
    BESIDE=("Let me check the weather first.", "我先查一下天气。"),
    CHECKING=("Checking {n} cities.", "我查一下这 {n} 座城市。"),  # beside two calls
    QUESTION_K=("question {k}", "问题 {k}"),  # the inputs of the property rule
    ANSWER_K=("answer {k}", "回答 {k}"),
)


def __getattr__(name: str) -> Any:
    return DATA.get(name, f"module {__name__!r}")


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
    """Exercise 1: the roles of a fresh agent's memory after DATA.PREDICT_INPUT."""
    def body(r: Report) -> None:
        if predicted is ... or not isinstance(predicted, (list, tuple)):
            r.expect(False, _("predicted_roles is a list of role names"),
                     _('write a list such as ["system", "user", ...]; it is still ...')
                     if predicted is ... else
                     _('write a list such as ["system", "user", ...]; it is {kind}').format(
                         kind=type(predicted).__name__))
            return
        given = [str(p).split("(")[0].strip().lower() for p in predicted]  # "assistant(...)"
        unknown = [p for p in given if p not in ROLES]
        if not r.expect(not unknown, _("every entry is a role name"),
                        ngettext("{unknown} is not roles: use {roles}",
                                 "{unknown} are not roles: use {roles}", len(unknown)).format(
                                     unknown=unknown, roles=", ".join(ROLES))):
            return
        agent = offline_agent()
        agent.chat(DATA.PREDICT_INPUT)
        actual = roles_of(agent.memory)
        r.expect(given[:1] == ["system"], _("the list starts with the system prompt"),
                 _("Agent() writes its system prompt into memory before anything else"))
        r.expect(given.count("user") == 1, _("the user's input is in memory once"),
                 _("step 0 adds the input once; both model calls send that same list"))
        r.expect(given.count("tool") == actual.count("tool"),
                 _("one tool message per call ({n} here)").format(n=actual.count("tool")),
                 _tool_hint(given))
        r.expect(given == actual, _("the whole list matches the agent's memory ({n} "
                                    "messages)").format(n=len(actual)),
                 _first_difference(given, actual))
    return run_check(_("Exercise 1 · predict the memory"), body)


def _tool_hint(given: list[str]) -> tuple[str, ...]:
    if "tool" not in given:
        return (N_("the weather needs a tool: the memory holds assistant(tool_calls) and the "
                   "tool results before the final answer"),)
    return (N_("count the calls: how many cities does the input ask about, and how many tool "
               "messages does each call get?"),
            N_("two cities are two parallel calls in ONE assistant message, and every call "
               "gets its own tool message"))


def _first_difference(given: list[str], actual: list[str]) -> tuple[str, ...]:
    for i, (g, a) in enumerate(zip(given, actual, strict=False)):
        if g != a:
            return (_("your list first differs at position {i} (you wrote {wrote})").format(
                        i=i, wrote=repr(g)),
                    _("position {i}: the memory has {has}").format(i=i, has=repr(a)))
    return (_("you wrote {n} roles, the memory holds {held}").format(n=len(given),
                                                                      held=len(actual)),)


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
                        _("replay is a function of (agent, inputs)"),
                        _("define it as def replay(agent, inputs): ...")):
            return
        agent, counts = _replayed(replay, DATA.REPLAY_INPUTS)
        expected = _expected_counts(DATA.REPLAY_INPUTS)
        if not r.expect(isinstance(counts, list) and len(counts) == len(DATA.REPLAY_INPUTS),
                        _("it returns a list with one count per input ({n})").format(
                            n=len(DATA.REPLAY_INPUTS)),
                        _("got {got}: after each input, append agent.memory.message_count() "
                          "to the list you return").format(got=repr(counts))):
            return
        r.expect(counts[:2] == expected[:2],
                 _("the counts after the first two inputs are {counts}").format(
                     counts=expected[:2]),
                 _("got {got}: count after agent.chat(text) returns (a tool round adds "
                   "assistant(tool_calls), tool and the answer)").format(got=counts[:2]))
        sent = [m for m in agent.memory.to_api_format() if m.get("content") == "/clear"]
        r.expect(counts[2:] == expected[2:] and not sent,
                 _('"/clear" forgets everything but the system prompt (counts {counts})').format(
                     counts=expected[2:]),
                 _('got {got}: for "/clear" call agent.clear() instead of agent.chat(...); '
                   "the model must never see the command").format(got=counts[2:]))
        given = [m.get("content") for m in agent.memory.to_api_format()
                 if m.get("role") == "user"]
        r.expect(given == DATA.REPLAY_INPUTS[-1:],
                 _("the inputs went to the agent you were given"),
                 _("the agent passed in holds {given} from the user: use it, not a new "
                   "Agent()").format(given=given))
        _other, more = _replayed(replay, DATA.REPLAY_MORE)
        r.expect(more == _expected_counts(DATA.REPLAY_MORE),
                 _("it works for other inputs too ({inputs})").format(inputs=DATA.REPLAY_MORE),
                 _("got {got}: compute the counts from the memory, don't write them "
                   "in").format(got=more))
    return run_check(_("Exercise 2 · replay"), body)


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

TOOL_TITLE = N_("Exercise 3 · an agent with your own tool")


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
    script.answer(DATA.SCRIPTED_ANSWER)
    client, events = ScriptedClient(script), []
    with answering(client):
        agent = Agent(tools=registry, client=client, on_tool=events.append)
        agent.chat(question)
    return events


def _check_tool(r: Report, agent: Any, question: Any, arguments: Any) -> None:
    if not r.expect(isinstance(agent, Agent), _("my_agent is an Agent"),
                    _("got {kind}: build it with Agent(tools=my_tools)").format(
                        kind=type(agent).__name__)):
        return
    names = agent.registry.names()
    mine = [n for n in names if n not in default_registry.names()]
    if not r.expect(bool(mine), _("the agent offers a tool of yours"),
                    _("it offers {names}: pass your registry, Agent(tools=my_tools), and "
                      "register your function in it").format(names=names or _("no tools"))):
        return
    schema = agent.registry.get(mine[0]).schema
    description = schema["function"]["description"]
    r.expect(says_when(description),
             _("{tool}'s description says when to use it").format(tool=mine[0]),
             (_("it says {description}: a model picks a tool by its description alone "
                "(notebook 03), so say when to use it, from the user's side").format(
                    description=repr(description)),
              N_('begin the docstring with "Use this when the user asks …"')))
    bare = undescribed(schema)
    r.expect(not bare, _("each parameter has a description"),
             _("{names}: describe it under 'Args:' in the docstring, with an example value "
               "(e.g. Chengdu)").format(names=", ".join(bare)))
    if not r.expect(isinstance(question, str) and question.strip() != "",
                    _("my_question is a question (a non-empty string)"),
                    _("ask something your tool can answer, e.g. a city's famous dish")):
        return
    if not r.expect(isinstance(arguments, dict),
                    _("my_arguments is a dict of the arguments a model would send"),
                    _('got {kind}: write e.g. {{"city": "Chengdu"}}').format(
                        kind=type(arguments).__name__)):
        return
    refused = tools_refused(agent.registry.schemas())
    if refused is not None:  # (said only when it does not: the usual case needs no line)
        r.expect(False, _("the API accepts the agent's tools"), refused)
        return
    events = _scripted_turn(agent.registry, question, mine[0], arguments)
    result = events[0].result if events else ""
    data = parsed(result)
    error = data.get("error") if isinstance(data, dict) else None
    if not r.expect(error is None,
                    _("{tool}(**my_arguments) runs without an error").format(tool=mine[0]),
                    _("it returned the error {error} (hint: {hint})").format(
                        error=repr(error), hint=data.get("hint"))
                    if isinstance(data, dict) else ""):
        return
    r.expect(data not in (None, "", {}, []),
             _("{tool} returns something for the answer ({result})").format(
                 tool=mine[0], result=_cut(result)),
             _("it returned {result}: return a dict (or a string) with the answer instead of "
               "None").format(result=repr(result)))


def _cut(text: Any, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"




_NOTEBOOKS = object()  # check_my_agent's default: the notebook's question and arguments


def check_my_agent(agent: Any, question: Any = _NOTEBOOKS,
                   arguments: Any = _NOTEBOOKS) -> bool:
    """Exercise 3: your tool, in an Agent: described so that a model can choose it, run with
    the arguments a model would send for `question` (by default the notebook's question and
    {"city": "Chengdu"}, or their Chinese twins), its result carried to the answer."""
    question = DATA.OWN_QUESTION if question is _NOTEBOOKS else question
    arguments = DATA.OWN_ARGUMENTS if arguments is _NOTEBOOKS else arguments
    return run_check(_(TOOL_TITLE), lambda r: _check_tool(r, agent, question, arguments))


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

AGENT_TITLE = N_("Build it · your Agent.chat")


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
    """The learner's agent class (or the library's), on a scripted model and watched tools.
    The agent is given the scripted client; the shared one (what chat() without client=
    reaches) refuses every call (strict, the default), so a call that ignores the agent's
    client is caught."""

    def __init__(self, cls: type, script: Script, tools: WatchedTools | None = None, *,
                 strict: bool = True):
        self.client = ScriptedClient(script)
        self.tools = tools if tools is not None else weather_tools()
        self.memory = RecordingMemory()
        self.strict = strict
        with answering(self.client):
            self.agent = cls(tools=self.tools, client=self.client, memory=self.memory)

    def say(self, text: str, *, refused_ok: bool = False) -> Said:
        """One input through the agent. A request the API refuses (400) is Broken, unless
        `refused_ok`: then what chat() did so far is returned (returned=None)."""
        before, refusals = len(self.client.requests), len(self.client.refused)
        stray = StrayClient() if self.strict else None
        with answering(self.client, stray):
            try:
                returned = self.agent.chat(text)
            except (ScriptEnded, TooManyCalls) as error:
                raise Broken(_("chat({text}) asked the model again: {error}; one input takes "
                               "one model call, or two after a tool round").format(
                                   text=repr(text), error=error)) from None
            except Exception as error:  # a refusal by the API (or a call that strayed)
                if isinstance(error, StrayCall) or (stray and stray.calls):
                    raise Strayed(_stray(text, stray), CLIENT_HINTS) from None
                if len(self.client.refused) == refusals:
                    raise
                n, problem = self.client.refused[-1]
                if not refused_ok:
                    raise Broken(_("chat({text}): the API refused request {n} with a 400: "
                                   "{error}").format(text=repr(text), n=n - before,
                                                     error=problem.message),
                                 (problem.explanation or N_("send what the API takes"),)
                                 ) from None
                returned = None
        if stray and stray.calls:
            raise Strayed(_stray(text, stray), CLIENT_HINTS)
        return Said(text, returned, self.client.requests[before:], list(self.memory.messages))


class Strayed(Broken):
    """A model call went to the shared client, not to the agent's own."""


CLIENT_HINTS = (
    N_("the agent was given a client (Agent(client=...)): every model call must go through "
       "it, or the agent talks to another model than the one it was given"),
    N_("pass client=self.client to every chat() call, the second one too"))


def _stray(text: str, stray: StrayClient) -> str:
    return ngettext("chat({text}) made {n} model call without client=self.client: it went to "
                    "the shared client, not to the client the agent was given",
                    "chat({text}) made {n} model calls without client=self.client: they went "
                    "to the shared client, not to the client the agent was given",
                    stray.calls).format(text=repr(text), n=stray.calls)


def _script(calls: int = 0, answer: str | None = None) -> Script:
    script = Script()
    answer = DATA.WEATHER_ANSWER if answer is None else answer
    if calls:
        script.calls(*weather_calls(calls))
    script.answer(answer)
    return script


def _goes_to_its_client(cls: type) -> None:
    """Only where the calls go: whatever else goes wrong is the other rules' to say."""
    for talk, text in ((_plain(cls, DATA.NAME_ANSWER), DATA.NAME_INPUT),
                       (_with_tools(cls, 1), DATA.WEATHER_INPUT)):
        try:
            talk.say(text, refused_ok=True)
        except (Strayed, NotImplementedError):
            raise
        except Exception:  # noqa: BLE001, S112  (judged by the rules that follow)
            continue


def _plain(cls: type, *answers: str) -> Conversation:
    script = Script()
    for text in answers:
        script.answer(text)
    return Conversation(cls, script)


def _with_tools(cls: type, calls: int, tools: WatchedTools | None = None, *,
                content: str | None = None) -> Conversation:
    script = Script()
    script.calls(*weather_calls(calls), content=content)
    script.answer(DATA.WEATHER_ANSWER)
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
    # lenient (the shared client answers too): where the calls go is another rule's
    Conversation(watched, _script(answer=DATA.NAME_ANSWER), strict=False).say(DATA.NAME_INPUT)
    Conversation(watched, _script(1), strict=False).say(DATA.WEATHER_INPUT, refused_ok=True)
    calls = _(" and ").join(f"self.{n}()" for n in dict.fromkeys(used))
    expect(not used, (_("chat() handed its steps to the library: it called {calls} "
                        "(super().chat() does)") if "remember_answer" in used else
                      _("chat() handed its steps to the library: it called {calls}")).format(
                          calls=calls))


def _stores_user_first(cls: type) -> None:
    said = _plain(cls, DATA.NAME_ANSWER).say(DATA.NAME_INPUT)
    expect(bool(said.requests), _("chat({text}) made no model call").format(
        text=repr(DATA.NAME_INPUT)))
    memory, sent = said.memory, said.requests[0].messages
    expect(_user(DATA.NAME_INPUT) in memory,
           _("after chat({text}) the memory holds {memory}: the user's message is not in "
             "it").format(text=repr(DATA.NAME_INPUT), memory=labels(memory)))
    expect(memory.index(_user(DATA.NAME_INPUT)) == 1,
           _("after chat({text}) the memory holds {memory}: the user's message is not the "
             "first thing added").format(text=repr(DATA.NAME_INPUT), memory=labels(memory)))
    expect(bool(sent) and sent[-1] == _user(DATA.NAME_INPUT),
           _("the request sent {sent}: it does not end with the user's message").format(
               sent=labels(sent)))


def _sends_whole_memory(cls: type) -> None:
    talk = _plain(cls, DATA.NAME_ANSWER, DATA.ASK_ANSWER)
    talk.say(DATA.NAME_INPUT)
    said = talk.say(DATA.ASK_INPUT)
    expect(bool(said.requests), _("chat({text}) made no model call").format(
        text=repr(DATA.ASK_INPUT)))
    newest = max((i for i, m in enumerate(said.memory) if m == _user(DATA.ASK_INPUT)),
                 default=None)
    held = said.memory[:newest + 1] if newest is not None else said.memory
    sent = said.requests[0].messages
    expect(sent == held, _("the second input's request sent {sent}; the memory held "
                           "{held}").format(sent=labels(sent), held=labels(held)))


def _plain_takes_one_call(cls: type) -> None:
    talk = _plain(cls, DATA.NAME_ANSWER)
    said = talk.say(DATA.NAME_INPUT)
    n = len(said.requests)
    expect(n == 1, _("a plain answer took {n} model calls").format(n=n))
    offered = said.requests[0].tools
    want = talk.tools.schemas()
    expect(offered == want,
           _("the request offered no tools (tools=None): the model could not ask for one")
           if offered is None else
           _("the request offered tools={offered}, not the agent's {want}").format(
               offered=tool_names(offered), want=tool_names(want)))


def _returns_text(cls: type) -> None:
    said = _plain(cls, DATA.NAME_ANSWER).say(DATA.NAME_INPUT)
    got = said.returned
    expect(isinstance(got, str) and got == DATA.NAME_ANSWER,
           _("the model answered {answer}; chat() returned a {kind} object").format(
               answer=repr(DATA.NAME_ANSWER), kind=type(got).__name__)
           if not isinstance(got, (str, type(None))) else
           _("the model answered {answer}; chat() returned {got}").format(
               answer=repr(DATA.NAME_ANSWER), got=repr(got)))


def _stores_answer(cls: type) -> None:
    said = _plain(cls, DATA.NAME_ANSWER).say(DATA.NAME_INPUT)
    memory, want = said.memory, {"role": "assistant", "content": DATA.NAME_ANSWER}
    last = memory[-1] if memory else None
    if isinstance(last, dict) and last.get("role") == "assistant":
        last = assistant_to_dict(last)
    objects = [type(m).__name__ for m in memory if not isinstance(m, dict)]
    expect(not objects, _("after the answer {answer} the memory holds {memory}: the answer "
                          "was stored as a {kind} object, not a dict").format(
                              answer=repr(DATA.NAME_ANSWER), memory=labels(memory),
                              kind=objects[0] if objects else ""))
    expect(last == want and len(memory) == 3,
           (_("after the answer {answer} the memory holds {memory}")
            if any(m.get("content") == DATA.NAME_ANSWER for m in memory) else
            _("after the answer {answer} the memory holds {memory}: the answer is not in "
              "it")).format(answer=repr(DATA.NAME_ANSWER), memory=labels(memory)))


def _stores_an_empty_answer(cls: type) -> None:
    script = Script()
    script.answer(None)  # a final reply with neither text nor calls (content None)
    said = Conversation(cls, script).say(DATA.NAME_INPUT)
    last = said.memory[-1] if said.memory else None
    content = last.get("content", None) if isinstance(last, dict) else None
    expect(isinstance(content, str),
           _("the model's reply had content None and no tool_calls; the memory stores "
             "{memory}: an assistant message with content None and no tool_calls, which the "
             "API refuses in every request from then on").format(memory=labels(said.memory)))


def _tool_reply_two_calls(cls: type) -> None:
    said = _with_tools(cls, 1).say(DATA.WEATHER_INPUT, refused_ok=True)
    n = len(said.requests)
    expect(n == 2, ngettext("the model replied with a tool call; chat() made {n} model call "
                            "and returned {returned}",
                            "the model replied with a tool call; chat() made {n} model calls "
                            "and returned {returned}", n).format(
                                n=n, returned=repr(said.returned)))


def _second_without_tools(cls: type) -> None:
    said = _with_tools(cls, 1).say(DATA.WEATHER_INPUT, refused_ok=True)
    second = said.requests[1].tools
    expect(second is None,
           (_("the second request offered tools={tools} (the API refuses an empty list)")
            if second == [] else _("the second request offered tools={tools}")).format(
                tools=tool_names(second)))


def _second_without_tool_choice(cls: type) -> None:
    talk = _with_tools(cls, 1)
    said = talk.say(DATA.WEATHER_INPUT, refused_ok=True)
    sent = said.requests[1].body
    refused = [p for n, p in talk.client.refused if n == len(talk.client.requests)]
    expect("tool_choice" not in sent or sent["tool_choice"] is None,
           _("the second request sent tool_choice={choice} with no tools, and the API "
             "answered 400: {error}").format(
               choice=repr(sent.get("tool_choice")),
               error=refused[0].message if refused else ""))


def _keeps_text_beside_calls(cls: type) -> None:
    said = _with_tools(cls, 1, content=DATA.BESIDE).say(DATA.WEATHER_INPUT)
    stored = said.memory[call_index(said.memory)]
    content = stored.get("content") if isinstance(stored, dict) else None
    expect(content == DATA.BESIDE,
           _("the model wrote {text} beside its call; the memory stores the call with "
             "content {content}").format(text=repr(DATA.BESIDE), content=repr(content)))


def _stores_the_call(cls: type) -> None:
    talk = _with_tools(cls, 2)
    said = talk.say(DATA.WEATHER_INPUT)
    expect_call_before_results(said.memory, str(_asked(talk)), _("after chat()"),
                               _("the memory"))


def _call_is_a_dict(cls: type) -> None:
    talk = _with_tools(cls, 2)
    said = talk.say(DATA.WEATHER_INPUT)
    stored = said.memory[call_index(said.memory)]
    expect(isinstance(stored, dict),
           _("the call was stored as a {kind} object, not a dict").format(
               kind=type(stored).__name__))
    calls = stored["tool_calls"]
    expect(all(isinstance(c, dict) for c in calls),
           _("the stored call is a dict, but its tool_calls hold {kinds} objects").format(
               kinds=", ".join(sorted({type(c).__name__ for c in calls}))))
    want = assistant_to_dict(_asked(talk).message())
    expect(assistant_to_dict(stored) == want,
           _("the stored call is {stored}; the model sent {want}").format(stored=stored,
                                                                          want=want))


def _runs_every_call(cls: type) -> None:
    talk = _with_tools(cls, 3)
    talk.say(DATA.WEATHER_INPUT)
    asked = [(c.name, json.loads(c.arguments)) for c in _asked(talk).calls]
    ran = [(name, parsed(args)) for name, args in talk.tools.ran]
    cities = ", ".join(a["location"] for _name, a in asked)
    expect(sorted(map(repr, ran)) == sorted(map(repr, asked)),
           _("the model asked for {n} calls in one reply ({cities}); chat() ran {ran}: "
             "{calls}").format(n=len(asked), cities=cities, ran=len(ran),
                               calls=", ".join(_shown(n, a) for n, a in ran)) if ran else
           _("the model asked for {n} calls in one reply ({cities}); chat() ran {ran}").format(
               n=len(asked), cities=cities, ran=len(ran)))


def _shown(name: str, arguments: Any) -> str:
    """A call as name(arguments), the arguments as JSON."""
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return f"{name}({arguments})"


def _answers_each_call(cls: type) -> None:
    talk = _with_tools(cls, 3)
    said = talk.say(DATA.WEATHER_INPUT)
    expect_each_call_answered(said.memory, _asked(talk), _("the memory"), _cut)


def _written_together(cls: type) -> None:
    script = Script()
    script.answer(DATA.NAME_ANSWER)
    script.calls(*weather_calls(2))
    script.answer(DATA.WEATHER_ANSWER)
    talk = Conversation(cls, script, weather_tools(crash_at=2))
    earlier = talk.say(DATA.NAME_INPUT).memory  # an earlier turn first: it must survive a crash
    try:
        talk.say(DATA.WEATHER_INPUT)
    except ToolCrashed:
        pass
    memory = talk.memory.to_api_format()
    expect(first_problem(memory) is None,
           _("the check stopped the second of two tool calls halfway (as a Ctrl-C or a crash "
             "would); the memory was left as {memory}, which the API refuses from then on: a "
             "call without all its results").format(memory=labels(memory)))
    expect(memory[:len(earlier)] == earlier,
           _("after an earlier turn the memory held {earlier}; the check stopped a tool call "
             "of the next input halfway, and the memory was left as {memory}: the earlier "
             "conversation is gone").format(earlier=labels(earlier), memory=labels(memory)),
           (N_("a tool that fails is no reason to forget the conversation: what the memory "
               "held before this input must still be there"),
            N_("let the error go up (or catch it and answer that the tool failed) without "
               "clearing or rebuilding the memory: nothing of this input's round is written "
               "until every call has run")))
    talk = Conversation(cls, _mixed_script())
    for text in (DATA.NAME_INPUT, DATA.WEATHER_INPUT, DATA.ASK_INPUT):
        memory = talk.say(text).memory
        problem = first_problem(memory)
        expect(problem is None, _("after chat({text}) the memory {memory} is not a list the "
                                  "API accepts: {problem}").format(
                                      text=repr(text), memory=labels(memory), problem=problem))


def _mixed_script() -> Script:
    script = Script()
    script.answer(DATA.NAME_ANSWER)
    script.calls(*weather_calls(2))
    script.answer(DATA.WEATHER_ANSWER)
    script.answer(DATA.ASK_ANSWER)
    return script


# ----------------------------------------------------------------- the property

def _turns():
    from hypothesis import strategies as st  # noqa: PLC0415

    # 0: the model answers in words; 1-3: it asks for that many tools, then answers
    return st.lists(st.integers(0, 3), min_size=1, max_size=5)


def _script_of(turns: list[int]) -> Script:
    script = Script()
    for k, calls in enumerate(turns, 1):
        if calls:  # two calls come with a sentence beside them, as real models write
            script.calls(*weather_calls(calls, start=k),
                         content=DATA.CHECKING.format(n=calls) if calls == 2 else None)
        script.answer(DATA.ANSWER_K.format(k=k))
    return script


def _kind(calls: int) -> str:
    return _("answer") if calls == 0 else ngettext("{n} call", "{n} calls", calls).format(
        n=calls)


def _first_change(mine: Said, theirs: Said) -> str | None:
    if len(mine.requests) != len(theirs.requests):
        return _("it made {n} model calls, the library's {theirs}").format(
            n=len(mine.requests), theirs=len(theirs.requests))
    for n, (a, b) in enumerate(zip(mine.requests, theirs.requests, strict=True), 1):
        if [normalized(m) for m in a.messages] != [normalized(m) for m in b.messages]:
            return _("request {n} sent {mine}, the library's {theirs}").format(
                n=n, mine=labels(a.messages), theirs=labels(b.messages))
        if a.tools != b.tools:
            return _("request {n} offered tools={mine}, the library's tools={theirs}").format(
                n=n, mine=tool_names(a.tools), theirs=tool_names(b.tools))
    if [normalized(m) for m in mine.memory] != [normalized(m) for m in theirs.memory]:
        return _("the memory holds {mine}, the library's {theirs}").format(
            mine=labels(mine.memory), theirs=labels(theirs.memory))
    if mine.returned != theirs.returned:
        return _("chat() returned {mine}, the library's {theirs}").format(
            mine=repr(mine.returned), theirs=repr(theirs.returned))
    problem = first_problem(mine.memory)
    return _("the memory is not valid: {problem}").format(problem=problem) if problem else None


def _any_conversation(cls: type, turns: list[int]) -> str | None:
    mine, theirs = Conversation(cls, _script_of(turns)), Conversation(Agent, _script_of(turns))
    for k, calls in enumerate(turns, 1):
        text = DATA.QUESTION_K.format(k=k)
        what = _first_change(mine.say(text), theirs.say(text))
        if what:
            return _("replies [{replies}], at input {k} ({kind}): {what}").format(
                replies=", ".join(_kind(c) for c in turns), k=k, kind=_kind(calls), what=what)
    return None


R_OWN = N_("chat() writes the steps itself (not super().chat(), run_tool_round or remember_answer)")
R_CLIENT = N_("every model call goes through the agent's own client (client=self.client)")
R_CHOICE = N_("the second call sends no tool_choice either (the API refuses it without tools)")
R_BESIDE = N_("text the model wrote beside its calls is stored with them")
R_USER = N_("chat() stores the user's message first, and the request ends with it")
R_WHOLE = N_("each request sends the whole memory, not only the newest message")
R_ONE = N_("a plain answer takes one model call, with the agent's tools offered")
R_TEXT = N_("chat() returns the answer as text (a str)")
R_STORED = N_("the answer is stored as {'role': 'assistant', 'content': text}")
R_EMPTY = N_("an answer with content None is stored as \"\" (the API refuses None without "
             "tool_calls)")
R_TWO = N_("a reply with tool_calls takes two model calls")
R_NONE = N_("the second call goes out with tools=None")
R_CALL = N_("the assistant message with the tool_calls is stored, before its results")
R_DICT = N_("the stored call is a plain dict (assistant_to_dict(message)), not the SDK's object")
R_EVERY = N_("every call of a parallel reply is run (all of message.tool_calls)")
R_IDS = N_("each call gets one tool message, with its tool_call_id and the tool's result")
R_TOGETHER = (N_("the call and its results are written together: the memory is valid after "
                 "every chat(), even when a tool stops halfway"))

AGENT_RULES: list[Rule] = [
    Rule(R_CLIENT, _goes_to_its_client, CLIENT_HINTS),
    Rule(R_USER, _stores_user_first,
         (N_("step 0: self.memory.add({'role': 'user', 'content': user_input}), before any model "
             "call: the model only sees what is in the memory"),)),
    Rule(R_WHOLE, _sends_whole_memory,
         (N_("the model is stateless: every request carries the whole conversation"),
          N_("send self.memory.to_api_format(), not a list you build from the newest input"))),
    Rule(R_ONE, _plain_takes_one_call,
         (N_("the first call offers the tools: chat(self.memory.to_api_format(), "
             "tools=self.tools, client=self.client)"),
          N_("a reply without tool_calls is the answer: no second call"))),
    Rule(R_TEXT, _returns_text,
         (N_("chat() (lesson_lib.llm) returns the assistant message; the user is shown its "
             "text, message.content"),)),
    Rule(R_STORED, _stores_answer,
         (N_("the next input's request must see the answer: add it to the memory before "
             "returning"),
          N_("store a plain dict, {'role': 'assistant', 'content': message.content or \"\"}, "
             "not the SDK's message object"))),
    Rule(R_EMPTY, _stores_an_empty_answer,
         (N_("a reply can come with content None and no tool_calls (notebook 03): stored as "
             "it is, it makes the API refuse the next request"),
          N_("store message.content or \"\": an empty string the API takes, None it does not")),
         needs=(R_STORED,)),
    Rule(R_TWO, _tool_reply_two_calls,
         (N_("a reply with tool_calls asks for tools; it is not the answer"),
          N_("if message.tool_calls: run them, write them, then call the model again for the "
             "answer"))),
    Rule(R_NONE, _second_without_tools,
         (N_("at most one tool round per input: the second call must be answered in words"),
          N_("pass tools=None to the second call")), needs=(R_TWO,)),
    Rule(R_CHOICE, _second_without_tool_choice,
         (N_("tool_choice says how to choose among the tools; with tools=None there are none, "
             "and the API answers 400 to a tool_choice sent without them"),
          N_("call chat(self.memory.to_api_format(), client=self.client) for the second call: "
             "neither tools nor tool_choice")), needs=(R_TWO,)),
    Rule(R_CALL, _stores_the_call,
         (N_("a tool message answers a call: the assistant message that made the call must be in "
             "the memory, before the results"),
          N_("write [assistant_to_dict(message), *results] in that order"))),
    Rule(R_DICT, _call_is_a_dict,
         (N_("the memory holds plain dicts, the API's JSON; the SDK's message object is not one "
             "(ShortTermMemory refuses it)"),
          N_("assistant_to_dict(message) turns the reply into the dict to store")),
         needs=(R_CALL,)),
    Rule(R_BESIDE, _keeps_text_beside_calls,
         (N_("a real model sometimes writes a sentence beside its calls (notebook 03): it is "
             "part of what the model said, and the next request must carry it back"),
          N_("store assistant_to_dict(message), which keeps message.content with the calls, "
             "rather than a dict built by hand with content None")),
         needs=(R_CALL,)),
    Rule(R_EVERY, _runs_every_call,
         (N_("one reply can ask for several calls at once (parallel calls, notebook 03b)"),
          N_("loop over message.tool_calls and run each with self.registry.execute(call.function"
             ".name, call.function.arguments)"))),
    Rule(R_IDS, _answers_each_call,
         (N_("every call needs its own tool message, or the API refuses the next request"),
          N_("{'role': 'tool', 'tool_call_id': call.id, 'content': the string execute() "
             "returned}, one per call, right after the call")), needs=(R_CALL,)),
    Rule(R_TOGETHER, _written_together,
         (N_("between writing the call and writing its results, the tools run: the slow part, "
             "where a Ctrl-C or a crash can stop everything"),
          N_("run every call first, then write the call and all its results with one "
             "self.memory.add_many([...])"))),
    property_rule(
        N_("for any conversation: the same requests, memory and answers as the library's Agent"),
        _turns(), _any_conversation,
        (N_("the replies above are the smallest conversation where yours and the library's "
            "part: follow it input by input"),
         N_("each input starts the same way: the user's message, then a call that offers the "
            "tools (whatever the input before did)")),
        examples=40,
        needs=(R_USER, R_WHOLE, R_ONE, R_TEXT, R_STORED, R_EMPTY, R_TWO, R_NONE, R_CHOICE,
               R_CALL, R_DICT, R_BESIDE, R_EVERY, R_IDS, R_TOGETHER)),
]
# A call that ignores the agent's client breaks every rule the same way: the others wait
# until that one holds. So does a second call the API refuses (tool_choice without tools):
# the rules on what a tool round writes wait for that one.
_ROUND = (R_CALL, R_DICT, R_BESIDE, R_EVERY, R_IDS, R_TOGETHER)
AGENT_RULES[1:] = [Rule(r.name, r.test, r.hints,
                        (R_CLIENT, *((R_CHOICE,) if r.name in _ROUND else ()), *r.needs))
                   for r in AGENT_RULES[1:]]


# What the exercise asks beyond what chat() does: that the learner writes the steps. The
# library's Agent is made of those steps (run_tool_round, remember_answer), so this rule is
# the exercise's, not one of the AGENT_RULES that guard the library.
OWN_STEPS = Rule(R_OWN, _own_steps,
                 (N_("the exercise is to write what Agent.chat does: add, call, run the tools, "
                     "write, call again, store and return; the library's run_tool_round and "
                     "remember_answer are shown after yours passes"),
                  N_("you may write helper methods of your own; just don't call the library's")))
EXERCISE_RULES: list[Rule] = [OWN_STEPS, *AGENT_RULES]


def check_my_agent_chat(MyAgent: Any) -> bool:  # noqa: N803  your class, not an instance
    """The core exercise: judge the learner's agent class (its chat) by AGENT_RULES, and
    that its chat writes the steps itself (OWN_STEPS)."""
    if not isinstance(MyAgent, type):
        return not_done(_(AGENT_TITLE),
                        _("pass the class itself: check_my_agent_chat(MyAgent)"))
    if wrong_signature(_(AGENT_TITLE), signature_problem(
            getattr(MyAgent, "chat", None), "agent.chat(user_input)", None, "")):
        return False
    return check_rules(_(AGENT_TITLE), MyAgent, EXERCISE_RULES,
                       start=_("write the body of chat() in the skeleton, then run this check "
                               "again"))
