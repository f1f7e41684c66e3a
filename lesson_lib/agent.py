"""The memory agent and the agent loop.

`Agent` is the seed's agent: every message goes through `ShortTermMemory`, and
each user input gets at most one tool round; the second call is made with
`tools=None`, so the model must answer from the results.

`LoopAgent` turns that `if` into a `while`: as long as the model asks for tools,
run every call (parallel ones included), add the results, and ask again, up to
`max_turns` model calls. Its `run()` returns the reply with a transcript.

`Agent.with_profile(profile, ...)` (a UserProfile, lesson_lib.profile) reads what the agent
knows about the user into the system prompt when a session starts (`system_prompt_with`),
and offers the model `remember_preference` (lesson_lib.tools.profile_tools) to keep what
the user states that lasts ("I'm vegetarian"), for the sessions after this one.

`Agent.with_longterm(longterm, ...)` (a LongTermMemory, lesson_lib.longterm) adds the third
layer, long-term memory. It makes the same agent with more (a `LongTermAgent`, or a
`LongTermLoopAgent` from `LoopAgent.with_longterm`); Agent's and LoopAgent's own methods,
which the notebooks show, stay the seed's. What it adds:

- **Retrieval before the call.** For each user input the agent searches long-term memory for
  that input and sends the best hits, as one labelled system message (`context_message`,
  at most `budget` tokens), on every model call of that input, tool rounds included: the
  request is `with_context(memory.to_api_format(), context)`, a copy with the message just
  before the latest user message. The stored conversation never holds it (the next input
  gets its own). `agent.last_recalled` (the hits that made it in, best first),
  `agent.last_context` (the message, or None) and `agent.last_request` (what the latest
  model call sent) can be shown after each input.
- **Past sessions become experience.** `end_session()` summarises the conversation into a
  "session" memory; and what a trim drops is not lost: the messages trims dropped in this
  session are kept (`agent.forgotten`) and, at the next input, summarised into the
  session's experience memory, before retrieval, so the next question can find them.
- **As tools** (`as_tools=True`): the model may also call search_memory and save_memory
  (lesson_lib.tools.memory_tools); save_memory stores only what the user said.
- **The profile, fresh** (with `profile=`): every request's system prompt says what the
  profile says at that moment (`with_fresh_profile`: its "What you know about this user"
  line is rewritten in the copy sent), so a preference changed in this session ("I'm vegan
  now") is in the next call, and a resumed session gets today's profile. The stored system
  prompt stays as the session started (the log is never rewritten); `agent.window()` is
  what is sent before the context, and what a chat's /memory shows.

Memory stays valid whatever happens: an assistant message with `tool_calls` is
written together with all of its results (`add_many`), never alone, so an API
error in the middle of a turn (timeout, 429, 500) leaves a history the API
accepts. The error is raised to the caller; nothing already said is lost.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lesson_lib.i18n import N_, _, ngettext
from lesson_lib.llm import chat
from lesson_lib.memory import ShortTermMemory
from lesson_lib.notices import stopped_notice
from lesson_lib.protocol import assistant_to_dict
from lesson_lib.tools import ToolRegistry, default_registry, memory_tools, profile_tools

if TYPE_CHECKING:
    from lesson_lib.longterm import Hit, LongTermMemory, Memory
    from lesson_lib.profile import UserProfile

SYSTEM_PROMPT = N_("You are a helpful assistant. Use the tools you are given to look up "
                   "live information such as the weather or the time; answer briefly.")
# The default system prompt is said in the language spoken when an agent is made (the
# Chinese edition's has the English one's token count, so budgets behave alike); a prompt
# you pass is sent as you wrote it.


def default_prompt(prompt: str) -> str:
    """`prompt`, or SYSTEM_PROMPT in the language spoken now when `prompt` is SYSTEM_PROMPT
    itself (the default object, not an equal text of yours)."""
    return _(SYSTEM_PROMPT) if prompt is SYSTEM_PROMPT else prompt
CONTEXT_BUDGET = 300  # tokens the retrieved context may cost, by default (with_longterm)
_SESSION_NUMBERS = itertools.count(1)  # for the session ids with_longterm makes up


def system_prompt_with(profile: UserProfile | None, prompt: str = SYSTEM_PROMPT) -> str:
    """`prompt`, then what the profile knows about the user on a line of its own
    ("What you know about this user: diet: vegetarian"); `prompt` alone if it knows nothing."""
    prompt = default_prompt(prompt)
    facts = profile.as_prompt() if profile is not None else ""
    return f"{prompt}\n{facts}" if facts else prompt


def with_fresh_profile(messages: Sequence[dict], profile: UserProfile) -> list[dict]:
    """A copy of `messages` whose first system message says what `profile` says now: its
    profile line ("What you know about this user: …", as system_prompt_with wrote it when
    the session started) is replaced by `profile.as_prompt()` read now, added if it had
    none, dropped if the profile is now empty. A stored session's log keeps the prompt it
    started with; each request gets today's profile ("I'm vegan now" is in the next one)."""
    from lesson_lib.profile import PROMPT_HEAD  # noqa: PLC0415

    out = [dict(m) for m in messages]
    at = next((i for i, m in enumerate(out) if m.get("role") == "system"
               and isinstance(m.get("content"), str)), None)
    if at is None:
        return out
    facts = profile.as_prompt()
    lines = str(out[at]["content"]).split("\n")
    where = next((i for i, line in enumerate(lines) if line.startswith(PROMPT_HEAD)), None)
    if where is None:
        lines += [facts] if facts else []
    else:
        lines[where:where + 1] = [facts] if facts else []
    out[at]["content"] = "\n".join(lines)
    return out


@dataclass
class ToolEvent:
    """One tool call the agent ran: which turn, which call, what came back."""
    turn: int
    call_id: str
    name: str
    arguments: str   # the JSON string the model wrote
    result: str      # the JSON string the tool returned (errors included)

    def __str__(self) -> str:
        return _("turn {turn}: {call} → {result}").format(
            turn=self.turn, call=f"{self.name}({self.arguments})", result=self.result)


@dataclass
class LoopResult:
    """What one user input led to."""
    reply: str                                   # what the user is shown
    turns: int                                   # model calls made
    events: list[ToolEvent] = field(default_factory=list)
    hit_max_turns: bool = False                  # stopped by the cap, not by the model

    def __str__(self) -> str:
        lines = [str(e) for e in self.events]
        calls = ngettext("{n} model call", "{n} model calls", self.turns).format(n=self.turns)
        ended = _("stopped by max_turns") if self.hit_max_turns else _("final answer")
        lines.append(_("{calls}; {ended}").format(calls=calls, ended=ended))
        return "\n".join(lines + [_("reply: {reply}").format(reply=self.reply)])


class Agent:
    """The seed's memory agent: at most one tool round per user input."""

    profile: Any = None  # the user's profile, when made by with_profile()
    longterm: Any = None  # long-term memory, when made by with_longterm()

    def __init__(self, system_prompt: str = SYSTEM_PROMPT, *,
                 tools: ToolRegistry | None = None,    # the tools it may call
                 memory: ShortTermMemory | None = None,  # where the conversation lives
                 client: Any = None,                    # None: the backend from the env
                 on_tool: Callable[[ToolEvent], None] | None = None):  # told of each call
        self.memory = memory if memory is not None else ShortTermMemory(max_messages=40)
        if not any(m["role"] == "system" for m in self.memory.to_api_format()):
            self.memory.add_system(default_prompt(system_prompt))
        self.registry = tools if tools is not None else default_registry
        self.tools = self.registry.schemas() or None  # the API refuses tools=[]
        self.client, self.on_tool = client, on_tool

    @classmethod
    def with_profile(cls, profile: UserProfile, system_prompt: str = SYSTEM_PROMPT, *,
                     tools: ToolRegistry | None = None,  # offered with remember_preference
                     memory: Any = None,                 # a StoredMemory: its session is noted
                     **kwargs: Any) -> Agent:            # client, on_tool, max_turns ...
        """An agent that knows the user: a new session's system prompt ends with what the
        profile knows, and the model may call remember_preference to keep what lasts."""
        session_id = getattr(getattr(memory, "session", None), "session_id", None)
        agent = cls(system_prompt_with(profile, system_prompt), memory=memory,
                    tools=profile_tools(profile, session_id, tools), **kwargs)
        agent.profile = profile
        return agent

    @classmethod
    def with_longterm(cls, longterm: LongTermMemory, system_prompt: str = SYSTEM_PROMPT, *,
                      budget: int = CONTEXT_BUDGET,   # tokens the context may cost per call
                      k: int = 5,                     # memories searched for per input
                      as_tools: bool = False,         # also offer search_memory, save_memory
                      tools: ToolRegistry | None = None,  # offered with them (None: the seed's)
                      memory: Any = None,             # a StoredMemory: its session is the id
                      profile: UserProfile | None = None,  # also with_profile's two things
                      session_id: str | None = None,  # None: the stored session's, or made up
                      summarizer: Callable[[list[dict]], str] | None = None,  # None: the model
                      on_recall: Callable[[list[Hit]], None] | None = None,  # told each input
                      **kwargs: Any) -> LongTerm:     # client, on_tool, max_turns ...
        """An agent with long-term memory (see the module's docstring): it recalls before
        every input, keeps what trims drop and, at end_session(), the whole conversation.
        Called on Agent it makes a LongTermAgent, on LoopAgent a LongTermLoopAgent (on a
        subclass of either, that subclass with LongTerm's methods first).

        With `profile` it is also what with_profile makes (the profile in the system prompt,
        remember_preference offered): the profile holds the few facts every session starts
        with, long-term memory the many found by each question. Without it, with_profile
        and with_longterm are independent and neither changes the other.

        The session id files the experience memories: `session_id` if given, else the
        StoredMemory's session, else "agent-<time>-<n>" (the clock's time, frozen in the
        notebooks, and a count in this process: deterministic there, unique elsewhere).
        `summarizer` turns messages into a summary (None: remember_session's default, the
        model of the environment's backend, which is deterministic offline)."""
        for name, value, least in (("budget", budget, 1), ("k", k, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number of at least {least}, got "
                                 f"{value!r}")
        stored = getattr(getattr(memory, "session", None), "session_id", None)
        session_id = session_id or stored or _made_up_session_id()
        offered = (profile_tools(profile, stored or session_id, tools) if profile is not None
                   else tools)  # the profile notes the stored session, as with_profile does
        agent = _long_term_class(cls)(system_prompt_with(profile, system_prompt),
                                      memory=memory, tools=offered, **kwargs)
        agent.profile, agent.longterm = profile, longterm
        agent.last_recalled, agent.last_context, agent.last_request = [], None, []
        agent.experience_error = agent.last_experience = None
        agent.context_budget, agent.k, agent.as_tools = budget, k, as_tools
        agent.summarizer, agent.on_recall = summarizer, on_recall
        agent._offered = offered
        agent._start_session(session_id)
        return agent

    def chat(self, user_input: str) -> str:
        self.memory.add({"role": "user", "content": user_input})
        message = chat(self.memory.to_api_format(), tools=self.tools, client=self.client)
        if message.tool_calls:
            self.run_tool_round(message, turn=1)
            message = chat(self.memory.to_api_format(), tools=None, client=self.client)
        return self.remember_answer(message)

    def run_tool_round(self, message: Any, turn: int) -> list[ToolEvent]:
        """Run every call in `message`; write the call and all its results at once."""
        events = [ToolEvent(turn, c.id, c.function.name, c.function.arguments,
                            self.registry.execute(c.function.name, c.function.arguments))
                  for c in message.tool_calls]
        results = [{"role": "tool", "tool_call_id": e.call_id, "content": e.result}
                   for e in events]
        self.memory.add_many([assistant_to_dict(message), *results])
        for e in events:
            if self.on_tool:
                self.on_tool(e)
        return events

    def remember_answer(self, message: Any) -> str:
        answer = message.content or ""
        self.memory.add({"role": "assistant", "content": answer})
        return answer

    def clear(self) -> None:
        """Forget the conversation; keep the system prompt (the CLI's /clear)."""
        self.memory.clear_non_system()


class LoopAgent(Agent):
    """The agent loop: `while` the model asks for tools, run them and ask again."""

    def __init__(self, system_prompt: str = SYSTEM_PROMPT, *, max_turns: int = 5,
                 **kwargs: Any):
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns is how many model calls one input may take, a whole "
                             f"number of at least 1, got {max_turns!r}")
        super().__init__(system_prompt, **kwargs)
        self.max_turns = max_turns

    def chat(self, user_input: str) -> str:
        return self.run(user_input).reply

    def run(self, user_input: str) -> LoopResult:
        self.memory.add({"role": "user", "content": user_input})
        events: list[ToolEvent] = []
        for turn in range(1, self.max_turns + 1):
            message = chat(self.memory.to_api_format(), tools=self.tools, client=self.client)
            if not message.tool_calls:
                return LoopResult(self.remember_answer(message), turn, events)
            events += self.run_tool_round(message, turn)
        return LoopResult(self.remember_notice(events), self.max_turns, events, True)

    def remember_notice(self, events: list[ToolEvent]) -> str:
        """Tell the user the cap was hit (and keep that in memory, as they saw it)."""
        asked = sorted({e.name for e in events})
        notice = stopped_notice(self.max_turns, asked)  # in the learner's language
        self.memory.add({"role": "assistant", "content": notice})
        return notice


class LongTerm:
    """What with_longterm adds to an agent (the module's docstring says what and why). Its
    agents hold: `longterm`, `session_id`, `last_recalled`, `last_context`, `last_request`,
    `forgotten` (what trims dropped this session), `last_experience` and `experience_error`
    (the summary this input's start wrote, or why it could not). Made by with_longterm;
    built directly (without long-term memory) it behaves as the plain agent."""

    longterm: Any
    memory: Any
    context_budget: int
    k: int
    as_tools: bool
    summarizer: Callable[[list[dict]], str] | None
    on_recall: Callable[[list[Hit]], None] | None
    _offered: ToolRegistry | None
    _kept_count: int = 0

    def _start_session(self, session_id: str) -> None:
        """File what follows under `session_id`. What the memory already holds beyond its
        window (a resumed stored session, an app's replayed recording) counts as dropped
        before, and as already kept: only what trims drop from now on is summarised anew."""
        self.session_id = session_id
        self.forgotten = _beyond_window(self.memory)
        self._kept_count = len(self.forgotten)
        if self.as_tools:
            self.registry = memory_tools(self.longterm, conversation=self.conversation,
                                         session_id=session_id, tools=self._offered)
            self.tools = self.registry.schemas() or None

    def conversation(self) -> list[dict]:
        """The whole conversation of this session as far as the agent knows it: what trims
        dropped (with long-term memory), then what the memory holds now."""
        return [*copy.deepcopy(self.forgotten), *self.memory.to_api_format()]

    def begin_input(self, user_input: str) -> None:
        """Store the user's message. With long-term memory, then: what its trim dropped is
        noted, what trims dropped since the last summary is summarised into the session's
        experience (a failed summary is kept in `experience_error` and tried again at the
        next input: the answer matters more), and long-term memory is searched for the
        input (a failed search is raised: the memory holds the question, valid)."""
        self.last_recalled, self.last_context, self.last_experience = [], None, None
        self.memory.add({"role": "user", "content": user_input})
        if self.longterm is None:
            return
        self._note_dropped()
        self.last_experience = self.keep_experience()
        self.last_recalled, self.last_context = self.recall(user_input)
        if self.on_recall is not None:
            self.on_recall(list(self.last_recalled))

    def recall(self, question: str) -> tuple[list[Hit], dict | None]:
        """The `k` best hits for `question` that fit the budget together (best first), and
        their context message (None when none fits): context_message's rule, with the hits
        it kept named, so that what is shown is exactly what was sent."""
        from lesson_lib.longterm import context_message  # noqa: PLC0415

        kept: list[Hit] = []
        context: dict | None = None
        for hit in self.longterm.search(question, self.k):
            trial = context_message([*kept, hit], self.context_budget)
            if trial is not None and trial != context:  # it fit: one more line
                kept.append(hit)
                context = trial
        return kept, context

    def window(self) -> list[dict]:
        """The memory's messages as a model call sends them: with a profile, its system
        prompt says what the profile says now (with_fresh_profile). A copy."""
        messages = self.memory.to_api_format()
        if getattr(self, "profile", None) is not None:
            messages = with_fresh_profile(messages, self.profile)
        return messages

    def request(self) -> list[dict]:
        """The messages for the next model call: the window (the profile fresh), with this
        input's context (if any) just before the latest user message. A copy: the memory
        never holds either."""
        from lesson_lib.longterm import with_context  # noqa: PLC0415

        messages = self.window()
        if self.last_context is not None:
            messages = with_context(messages, self.last_context)
        self.last_request = messages
        return messages

    def _note_dropped(self) -> None:
        """After an add: keep what its trim dropped (whole units, as the memory dropped
        them), when there is long-term memory to keep it in."""
        if self.longterm is not None:
            self.forgotten += copy.deepcopy(list(getattr(self.memory, "last_dropped", [])))

    def keep_experience(self) -> Memory | None:
        """Summarise everything trims dropped in this session into its experience memory
        (remember_session replaces the session's earlier summary), if more was dropped since
        the last summary. Returns the memory (None: nothing new, or the summary failed:
        `experience_error` says why)."""
        if self.longterm is None or len(self.forgotten) <= self._kept_count:
            return None
        try:
            saved = self.longterm.remember_session(
                session_id=self.session_id, messages=_whole_rounds(self.forgotten),
                summarizer=self.summarizer)
        except Exception as error:  # noqa: BLE001  (kept for the caller to show; retried)
            self.experience_error = error
            return None
        self._kept_count, self.experience_error = len(self.forgotten), None
        return saved

    def end_session(self) -> Memory | None:
        """Keep this session as experience: the whole conversation (what trims dropped and
        what the memory holds, system messages aside) summarised into one "session" memory
        under `session_id`, replacing the session's earlier summary. Returns it (None: the
        conversation is empty). The conversation itself is not cleared: clear() does that.
        An error of the summary or the store is raised (nothing is half written)."""
        if self.longterm is None:
            raise ValueError("end_session() keeps the conversation in long-term memory: make "
                             "the agent with Agent.with_longterm(LongTermMemory(...))")
        said = _whole_rounds([m for m in self.conversation() if m.get("role") != "system"])
        if not said:
            return None
        saved = self.longterm.remember_session(session_id=self.session_id, messages=said,
                                               summarizer=self.summarizer)
        self._kept_count = len(self.forgotten)
        return saved

    # -- after every add, what its trim dropped is noted (the seed's methods, then that)

    def run_tool_round(self, message: Any, turn: int) -> list[ToolEvent]:
        events = super().run_tool_round(message, turn)
        self._note_dropped()
        return events

    def remember_answer(self, message: Any) -> str:
        answer = super().remember_answer(message)
        self._note_dropped()
        return answer

    def remember_notice(self, events: list[ToolEvent]) -> str:
        notice = super().remember_notice(events)
        self._note_dropped()
        return notice

    def clear(self) -> None:
        """Forget the conversation; keep the system prompt. What follows is a new session
        ("<id>#2", "#3" …): its experience never replaces the cleared one's. Call
        end_session() first to keep the cleared one."""
        super().clear()
        self.last_recalled, self.last_context = [], None
        self._start_session(_next_part(self.session_id))


class LongTermAgent(LongTerm, Agent):
    """The seed's agent with long-term memory: Agent.chat, with retrieval before the call
    and the context on both of its model calls."""

    def chat(self, user_input: str) -> str:
        self.begin_input(user_input)
        message = chat(self.request(), tools=self.tools, client=self.client)
        if message.tool_calls:
            self.run_tool_round(message, turn=1)
            message = chat(self.request(), tools=None, client=self.client)
        return self.remember_answer(message)


class LongTermLoopAgent(LongTerm, LoopAgent):
    """The agent loop with long-term memory: LoopAgent.run, with retrieval before the
    first call and the context on every call of the loop."""

    def run(self, user_input: str) -> LoopResult:
        self.begin_input(user_input)
        events: list[ToolEvent] = []
        for turn in range(1, self.max_turns + 1):
            message = chat(self.request(), tools=self.tools, client=self.client)
            if not message.tool_calls:
                return LoopResult(self.remember_answer(message), turn, events)
            events += self.run_tool_round(message, turn)
        return LoopResult(self.remember_notice(events), self.max_turns, events, True)


_LONG_TERM_CLASSES: dict[type, type] = {Agent: LongTermAgent, LoopAgent: LongTermLoopAgent}


def _long_term_class(cls: type) -> type:
    """The class with_longterm makes for `cls`: LongTermAgent for Agent, LongTermLoopAgent
    for LoopAgent, and for a subclass of either, that subclass with LongTerm's methods first
    (its own chat or run are then LongTerm's)."""
    if issubclass(cls, LongTerm):
        return cls
    if cls not in _LONG_TERM_CLASSES:
        base = LongTermLoopAgent if issubclass(cls, LoopAgent) else LongTermAgent
        _LONG_TERM_CLASSES[cls] = type(f"LongTerm{cls.__name__}", (base, cls), {})
    return _LONG_TERM_CLASSES[cls]


def _made_up_session_id() -> str:
    """A session id, agent-<clock time>-<n>: deterministic under the notebooks' frozen
    clock (in the order cells run), unique in real use."""
    from lesson_lib.clock import now  # noqa: PLC0415

    return f"agent-{now('UTC'):%Y%m%dT%H%M%S}-{next(_SESSION_NUMBERS)}"


def _next_part(session_id: str | None) -> str:
    """The session after a clear(): "s1" → "s1#2" → "s1#3"."""
    base, _, part = (session_id or _made_up_session_id()).rpartition("#")
    if base and part.isdigit():
        return f"{base}#{int(part) + 1}"
    return f"{session_id}#2"


def _beyond_window(memory: Any) -> list[dict]:
    """What a memory that also holds the whole conversation (a TapedMemory's tape, a
    StoredMemory's log) has beyond its window: the non-system messages before the ones it
    sends. Every strategy here keeps the newest messages, so the window's are the tail."""
    whole = getattr(memory, "tape", None)
    if whole is None and callable(getattr(type(memory), "log", None)):
        whole = memory.log()
    if not whole:
        return []
    said = [m for m in whole if m.get("role") != "system"]
    sent = sum(m.get("role") != "system" for m in memory.to_api_format())
    return copy.deepcopy(said[:max(0, len(said) - sent)])


def _whole_rounds(messages: Sequence[dict]) -> list[dict]:
    """`messages` without any tool round that is not whole (an assistant's tool_calls
    without all of their results, a tool result without its call), so the list can be
    sent to the model to summarise (NaiveMemory's trims split rounds)."""
    out: list[dict] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.get("role") == "assistant" and m.get("tool_calls"):
            end = i + 1
            while end < len(messages) and messages[end].get("role") == "tool":
                end += 1
            asked = sorted(c.get("id") for c in m["tool_calls"])
            if sorted(t.get("tool_call_id") for t in messages[i + 1:end]) == asked:
                out += messages[i:end]
            i = end
            continue
        if m.get("role") != "tool":
            out.append(m)
        i += 1
    return out


def transcript_json(result: LoopResult) -> str:
    """The transcript as JSON, for saving or comparing runs."""
    return json.dumps({"reply": result.reply, "turns": result.turns,
                       "hit_max_turns": result.hit_max_turns,
                       "events": [e.__dict__ for e in result.events]},
                      ensure_ascii=False, indent=2)
