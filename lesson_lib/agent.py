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

Memory stays valid whatever happens: an assistant message with `tool_calls` is
written together with all of its results (`add_many`), never alone, so an API
error in the middle of a turn (timeout, 429, 500) leaves a history the API
accepts. The error is raised to the caller; nothing already said is lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lesson_lib.llm import chat
from lesson_lib.memory import ShortTermMemory
from lesson_lib.protocol import assistant_to_dict
from lesson_lib.text import plural
from lesson_lib.tools import ToolRegistry, default_registry, profile_tools

if TYPE_CHECKING:
    from lesson_lib.profile import UserProfile

SYSTEM_PROMPT = ("You are a helpful assistant. Use the tools you are given to look up "
                 "live information such as the weather or the time; answer briefly.")


def system_prompt_with(profile: UserProfile | None, prompt: str = SYSTEM_PROMPT) -> str:
    """`prompt`, then what the profile knows about the user on a line of its own
    ("What you know about this user: diet: vegetarian"); `prompt` alone if it knows nothing."""
    facts = profile.as_prompt() if profile is not None else ""
    return f"{prompt}\n{facts}" if facts else prompt


@dataclass
class ToolEvent:
    """One tool call the agent ran: which turn, which call, what came back."""
    turn: int
    call_id: str
    name: str
    arguments: str   # the JSON string the model wrote
    result: str      # the JSON string the tool returned (errors included)

    def __str__(self) -> str:
        return f"turn {self.turn}: {self.name}({self.arguments}) → {self.result}"


@dataclass
class LoopResult:
    """What one user input led to."""
    reply: str                                   # what the user is shown
    turns: int                                   # model calls made
    events: list[ToolEvent] = field(default_factory=list)
    hit_max_turns: bool = False                  # stopped by the cap, not by the model

    def __str__(self) -> str:
        lines = [str(e) for e in self.events]
        lines.append(f"{plural(self.turns, 'model call')}; "
                     + ("stopped by max_turns" if self.hit_max_turns else "final answer"))
        return "\n".join(lines + [f"reply: {self.reply}"])


class Agent:
    """The seed's memory agent: at most one tool round per user input."""

    profile: Any = None  # the user's profile, when made by with_profile()

    def __init__(self, system_prompt: str = SYSTEM_PROMPT, *,
                 tools: ToolRegistry | None = None,    # the tools it may call
                 memory: ShortTermMemory | None = None,  # where the conversation lives
                 client: Any = None,                    # None: the backend from the env
                 on_tool: Callable[[ToolEvent], None] | None = None):  # told of each call
        self.memory = memory if memory is not None else ShortTermMemory(max_messages=40)
        if not any(m["role"] == "system" for m in self.memory.to_api_format()):
            self.memory.add_system(system_prompt)
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
        notice = (f"I stopped after {plural(self.max_turns, 'round')} of tool calls without reaching "
                  f"an answer (max_turns={self.max_turns}; tools used: {', '.join(asked)}).")
        self.memory.add({"role": "assistant", "content": notice})
        return notice


def transcript_json(result: LoopResult) -> str:
    """The transcript as JSON, for saving or comparing runs."""
    return json.dumps({"reply": result.reply, "turns": result.turns,
                       "hit_max_turns": result.hit_max_turns,
                       "events": [e.__dict__ for e in result.events]},
                      ensure_ascii=False, indent=2)
