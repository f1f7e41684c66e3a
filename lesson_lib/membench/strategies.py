"""What a memory strategy is (start a session, take a message, build the request for a question), and every strategy of the series.

A strategy is made fresh for each conversation (`make(context)`, one user's memory) and
then told what happens, in order:

    strategy.start_session(session_id, date)   # a new session begins ("2026-03-02")
    strategy.request(question)                 # a question, asked at the session's start:
                                               # the request to send for it (not remembered)
    strategy.take(message)                     # each message of the session, as the API
                                               # shapes it (tool rounds: assistant with
                                               # tool_calls, then one tool message per call)
    strategy.end_session()                     # the session is over

`request()` returns what to send: a list of Chat Completions messages, or a Responses body
(`{"input": [...], "instructions": ...}`). A question is a probe: the strategy must not
keep it. Write your own by subclassing `Strategy` (see `FullHistory`, the simplest).

The series' strategies (STRATEGIES). Their sizes are never tuned on scores: a window of
MAX_MESSAGES messages and a budget of TOKEN_BUDGET tokens, about a session and a half of
this data (a session is 62 tokens and 5 to 7 messages on average; the system prompt 45
tokens), as a real model's window is small beside months of talk; retrieval's context is
lesson_lib.agent.CONTEXT_BUDGET tokens, k=5, the library's defaults. (TOKEN_BUDGET was
first 300, which held whole conversations: the full history's mean request is 243 tokens;
it was set from the sessions' length, not from any score.)

What the library adds to a request (the context's and the profile's first lines, a summary
request) is worded in the language spoken, as a model reading it would want: the Chinese
edition's token counts are its own.

- **full history**: every message of every session, as one resumed conversation.
- **plain file**: the earlier sessions' text, dated, appended to the system prompt (the
  "just write it to a file" baseline), then this session's messages.
- **message trim**: the seed's `ShortTermMemory(max_messages=MAX_MESSAGES)`.
- **token budget**: `TokenBudgetMemory(TOKEN_BUDGET)`.
- **summaries**: `TokenBudgetMemory(TOKEN_BUDGET, summarizer=model_summarizer())`: what is
  dropped is summarised by the model, the summary folded into the next.
- **compaction**: at each session's end, the Responses API's `responses.compact` of the
  window so far (the offline model's, or a real provider's); the question is asked on
  the compacted window.
- **profile**: each user message is shown to the model with `remember_preference`
  offered (lesson_lib.tools.profile_tools); the request is the system prompt with the
  profile, and this session's messages.
- **retrieval**: every user message and tool result of an ended session is written to
  long-term memory (lesson_lib.longterm, dated, with its source); the request is this
  session's messages with `recall(question)` placed before the question.
- combinations: **trim + retrieval** (the library's LongTermAgent), **summaries +
  retrieval**, **budget + profile + retrieval**.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lesson_lib.agent import CONTEXT_BUDGET, SYSTEM_PROMPT
from lesson_lib.budget import TokenBudgetMemory, model_summarizer
from lesson_lib.i18n import _
from lesson_lib.memory import ShortTermMemory

MAX_MESSAGES = 8     # the message trim's window
TOKEN_BUDGET = 150   # the token budget of the budget trims and summaries (see the docstring)
RECALL_K = 5         # memories retrieval looks at, best first


class VectorCache:
    """An embedder that computes each text's vector once (in batches, `warm`), for every
    run of a process: the same texts are embedded by every strategy that retrieves, and
    the vectors do not depend on the strategy. Its name is its embedder's."""

    def __init__(self, embedder: Any = None):
        if embedder is None:
            from lesson_lib.embeddings import Embedder  # noqa: PLC0415

            embedder = Embedder()
        self.embedder, self.name, self.rows = embedder, embedder.name, {}

    def warm(self, texts: Any, batch: int = 256) -> None:
        """Compute the vectors of `texts` not yet known, `batch` at a time."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.rows))
        for start in range(0, len(missing), batch):
            part = missing[start:start + batch]
            self.rows.update(zip(part, self.embedder(part), strict=True))

    def __call__(self, texts: Any) -> Any:
        import numpy as np  # noqa: PLC0415

        self.warm(texts)
        return np.array([self.rows[t] for t in texts])


@dataclass
class Context:
    """What a strategy may use: the conversation's user id, the run's session store (made
    on first use), the client and model every call goes through, and the run's embedder."""
    user_id: str
    client: Any
    model: str
    folder: str
    _store: Any = None
    embedder: Any = None

    @property
    def store(self) -> Any:
        if self._store is None:
            from lesson_lib.sessions import SessionStore  # noqa: PLC0415

            self._store = SessionStore(f"sqlite:///{self.folder}/membench.db")
        return self._store


class Strategy:
    """A memory strategy: told every session and message, asked for the request of each
    question. Subclass it and fill in what your memory does."""

    name = "strategy"

    def __init__(self, context: Context | None = None):
        self.context = context
        self.today: str | None = None
        self.session_id: str | None = None

    def start_session(self, session_id: str, date: str) -> None:
        """A new session begins, on `date` (ISO, "2026-03-02")."""
        self.session_id, self.today = session_id, date

    def take(self, message: dict) -> None:
        """One message of the session, in the API's shape."""

    def end_session(self) -> None:
        """The session is over."""

    def request(self, question: str) -> list[dict] | dict:
        """What to send the model for `question` (a probe: do not keep it)."""
        return [self.system(), {"role": "user", "content": question}]

    def system(self, *extra: str) -> dict:
        """The system message: the agent's prompt, today's date, and `extra` lines."""
        lines = [SYSTEM_PROMPT, f"Today is {self.today}." if self.today else "", *extra]
        return {"role": "system", "content": "\n".join(line for line in lines if line)}

    def chat(self, messages: list[dict], tools: list[dict] | None = None) -> Any:
        """One model call of the strategy's own (a summary, a profile update)."""
        from lesson_lib.llm import complete  # noqa: PLC0415

        return complete(messages, tools, client=self.context.client,
                        model=self.context.model).choices[0].message


class Nothing(Strategy):
    """Sends the question alone: remembers nothing (abstains perfectly, finds nothing)."""

    name = "nothing"


# ----------------------------------------------------------------- a window of messages

class Windowed(Strategy):
    """The conversation kept in a memory with ShortTermMemory's API, as one resumed
    conversation; the request is a copy of it with the question added (so a trim or a
    summary makes room for the question too), with today's system message first."""

    def __init__(self, context: Context | None = None):
        super().__init__(context)
        self.window = self.make_window()
        self.window.add_system(SYSTEM_PROMPT)

    def make_window(self) -> Any:
        return ShortTermMemory(max_messages=10**9)

    def take(self, message: dict) -> None:
        self.window.add(message)

    def messages_for(self, question: str) -> list[dict]:
        probe = copy.deepcopy(self.window)
        probe.add({"role": "user", "content": question})
        return probe.to_api_format()

    def request(self, question: str) -> list[dict] | dict:
        messages = self.messages_for(question)
        messages[0] = self.system(*self.extra_lines())
        return messages

    def extra_lines(self) -> list[str]:
        return []


class FullHistory(Windowed):
    """Every message of every session."""
    name = "full history"


class MessageTrim(Windowed):
    """The seed's trim: the newest MAX_MESSAGES messages, tool rounds whole."""
    name = "message trim"

    def make_window(self) -> Any:
        return ShortTermMemory(max_messages=MAX_MESSAGES)


class TokenBudget(Windowed):
    """The token-budget trim: whole units dropped, oldest first, under TOKEN_BUDGET."""
    name = "token budget"

    def make_window(self) -> Any:
        return TokenBudgetMemory(TOKEN_BUDGET)


class Summaries(Windowed):
    """The token-budget trim whose dropped messages the model summarises."""
    name = "summaries"

    def make_window(self) -> Any:
        return TokenBudgetMemory(TOKEN_BUDGET, summarizer=model_summarizer(self.chat))


# ----------------------------------------------------------------- a plain file

class PlainFile(Strategy):
    """The earlier sessions' text, one dated line a message, appended to the system
    prompt; this session's messages after it."""
    name = "plain file"

    def __init__(self, context: Context | None = None):
        super().__init__(context)
        self.notes: list[str] = []
        self.session: list[dict] = []

    def take(self, message: dict) -> None:
        self.session.append(copy.deepcopy(message))

    def end_session(self) -> None:
        for m in self.session:
            for call in m.get("tool_calls") or []:
                self.notes.append(f"[{self.today}] assistant called {call['function']['name']}"
                                  f" {call['function']['arguments']}")
            if m.get("content"):
                self.notes.append(f"[{self.today}] {m['role']}: {m['content']}")
        self.session = []

    def request(self, question: str) -> list[dict] | dict:
        notes = ["Notes from earlier sessions:", *self.notes] if self.notes else []
        return [self.system(*notes), *copy.deepcopy(self.session),
                {"role": "user", "content": question}]


# ----------------------------------------------------------------- compaction

def as_items(message: Mapping) -> list[dict]:
    """One Chat Completions message as Responses input items."""
    items = []
    if message.get("content") and message["role"] != "tool":
        items.append({"role": message["role"], "content": message["content"]})
    for call in message.get("tool_calls") or []:
        items.append({"type": "function_call", "call_id": call["id"],
                      "name": call["function"]["name"],
                      "arguments": call["function"]["arguments"]})
    if message["role"] == "tool":
        items.append({"type": "function_call_output", "call_id": message["tool_call_id"],
                      "output": message["content"]})
    return items


class Compaction(Strategy):
    """At each session's end, the window so far is compacted by the Responses API
    (`client.responses.compact`): the compacted output is the next session's start."""
    name = "compaction"

    def __init__(self, context: Context | None = None):
        super().__init__(context)
        self.window: list[dict] = []
        self.session: list[dict] = []

    def take(self, message: dict) -> None:
        self.session += as_items(message)

    def end_session(self) -> None:
        items, self.session = [*self.window, *self.session], []
        if not items:
            return
        done = self.context.client.responses.compact(model=self.context.model, input=items)
        self.window = [item.model_dump(exclude_none=True, warnings=False)
                       for item in done.output]

    def request(self, question: str) -> list[dict] | dict:
        return {"instructions": self.system()["content"],
                "input": [*copy.deepcopy(self.window), *copy.deepcopy(self.session),
                          {"role": "user", "content": question}]}


# ----------------------------------------------------------------- profile and retrieval

class Layered(Windowed):
    """A window (this session only, unless a trim is given), plus the profile and/or
    long-term retrieval."""

    def __init__(self, context: Context | None = None, *, window: Callable[[], Any] | None = None,
                 profile: bool = False, retrieval: bool = False, name: str | None = None):
        self._window_maker, self.uses_profile, self.uses_retrieval = window, profile, retrieval
        super().__init__(context)
        self.name = name or self.name
        self.profile = self.longterm = None
        if profile:
            from lesson_lib.profile import UserProfile  # noqa: PLC0415

            self.profile = UserProfile(context.store, context.user_id)
        if retrieval:
            from lesson_lib.longterm import LongTermMemory  # noqa: PLC0415

            self.longterm = LongTermMemory(context.store, context.user_id,
                                           embedder=context.embedder)
        self.written: list[tuple[str, str, str]] = []  # (source, ref, text) of this session

    def make_window(self) -> Any:
        # without a trim of its own, the window holds this session only (start_session
        # empties it): the earlier sessions reach the request through profile and recall
        return self._window_maker() if self._window_maker else ShortTermMemory(10**9)

    def start_session(self, session_id: str, date: str) -> None:
        super().start_session(session_id, date)
        if self._window_maker is None:
            self.window.clear_non_system()

    def take(self, message: dict) -> None:
        super().take(message)
        if message["role"] == "user" and self.profile is not None:
            self.update_profile(message)
        if message["role"] == "user":
            self.written.append(("user", self.session_id, message["content"]))
        elif message["role"] == "tool":
            self.written.append(("tool", self.tool_name(message), message["content"]))

    def tool_name(self, message: dict) -> str:
        for m in reversed(self.window.to_api_format()):
            for call in m.get("tool_calls") or []:
                if call["id"] == message["tool_call_id"]:
                    return call["function"]["name"]
        return "tool"

    def update_profile(self, message: dict) -> None:
        """The model sees the user's message with remember_preference offered; each call
        it makes is run (so the profile holds what the model chose to keep)."""
        from lesson_lib.tools import profile_tools  # noqa: PLC0415

        tools = profile_tools(self.profile, self.session_id)
        reply = self.chat([self.system(), {"role": "user", "content": message["content"]}],
                          tools.schemas())
        for call in reply.tool_calls or []:
            if call.function.name == "remember_preference":
                tools.execute(call.function.name, call.function.arguments)

    def end_session(self) -> None:
        if self.longterm is not None:
            for source in ("user", "tool"):
                said = [(ref, text) for s, ref, text in self.written if s == source and text]
                for ref in dict.fromkeys(ref for ref, _text in said):
                    self.longterm.write_many([t for r, t in said if r == ref], source=source,
                                             ref=ref, at=self.today)
        self.written = []

    def extra_lines(self) -> list[str]:
        facts = self.profile.as_prompt() if self.profile is not None else ""
        return [facts] if facts else []

    def request(self, question: str) -> list[dict] | dict:
        messages = super().request(question)
        if self.longterm is not None:
            from lesson_lib.longterm import recall, with_context  # noqa: PLC0415

            messages = with_context(messages, recall(question, self.longterm, CONTEXT_BUDGET,
                                                     k=RECALL_K))
        return messages


def layered(name: str, *, window: Callable[[], Any] | None = None, profile: bool = False,
            retrieval: bool = False) -> Callable[[Context], Strategy]:
    """A factory of a Layered strategy called `name`."""
    def make(context: Context) -> Strategy:
        return Layered(context, window=window, profile=profile, retrieval=retrieval,
                       name=name)
    make.strategy_name = name
    return make


class SummariesRetrieval(Layered):
    """Summaries of what the budget drops, and long-term retrieval."""
    name = "summaries + retrieval"

    def __init__(self, context: Context | None = None):
        super().__init__(context, window=lambda: TokenBudgetMemory(
            TOKEN_BUDGET, summarizer=model_summarizer(self.chat)), retrieval=True,
            name=self.name)


STRATEGIES: dict[str, Callable[[Context], Strategy]] = {
    "full history": FullHistory,
    "plain file": PlainFile,
    "message trim": MessageTrim,
    "token budget": TokenBudget,
    "summaries": Summaries,
    "compaction": Compaction,
    "profile": layered("profile", profile=True),
    "retrieval": layered("retrieval", retrieval=True),
    "trim + retrieval": layered("trim + retrieval",
                                window=lambda: ShortTermMemory(MAX_MESSAGES), retrieval=True),
    "summaries + retrieval": SummariesRetrieval,
    "budget + profile + retrieval": layered("budget + profile + retrieval",
                                            window=lambda: TokenBudgetMemory(TOKEN_BUDGET),
                                            profile=True, retrieval=True),
}


def unknown(name: str) -> ValueError:
    return ValueError(_("no strategy called {name}; the strategies are {names}").format(
        name=repr(name), names=", ".join(STRATEGIES)))
