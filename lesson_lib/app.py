"""The chat app: a chat panel beside a live memory inspector, as ipywidgets.

Type a message and press Enter (or Send): the app runs one turn of the agent loop
(`lesson_lib.agent.LoopAgent`) and shows each tool call as it happens (which tool, which
arguments, which result). Beside the chat, the memory inspector draws the message list the
next request will send (lesson_lib.display), with the message count and the token count as
gauges, and struck through, what the last turn (or change of strategy or budget) trimmed.

Controls: /clear (or its button); the memory strategy and its budget (the `STRATEGIES`
table: adding a strategy is one `add_strategy(...)` line); which tools are on; max_turns;
the backend (the offline model, or a real provider when the environment configures one:
LESSON_BACKEND=openai and OPENAI_API_KEY; the key is never shown). On a projector,
`chat_app(scale=1.5)` enlarges it: `scale` is the stepper's zoom, with the same meaning.

Nothing here ends in a traceback. An API error (a rate limit, a server error, a 400), a
timeout, a message the memory refuses (over its budget), a refused setting or the max_turns
cap becomes a readable notice in the chat, and the memory stays as the agent left it: valid
(the agent writes a tool round whole, or not at all). NaiveMemory is offered to show the
pitfall: its broken state is drawn in red in the inspector, and the API's 400 appears as a
notice.

Decisions, in one place:
- /clear starts a new conversation: the memory keeps only the system prompt and the
  recording restarts; the chat panel keeps the old lines on screen, under a divider.
- Changing the strategy or the budget keeps the conversation: the new memory is rebuilt
  by replaying the recording into it, as if it had been used from the start. So at any
  moment the memory is exactly `recording()` replayed into the current strategy.
- Changing tools, max_turns or the backend keeps the memory as it is.

Sessions (optional): `chat_app(store=SessionStore(url), user="xiaoming")` (or a URL string)
keeps each conversation in the session store (lesson_lib.sessions): the memory is then a
StoredMemory on the open session, whose window is the chosen strategy. A row of controls
picks a session (resumed with its messages), starts a new one, or deletes the open one for
good; a panel shows the user's profile (lesson_lib.profile), which the model fills with
remember_preference (`LoopAgent.with_profile`). The same in the chat input: /sessions,
/open NAME, /new NAME, /forget (then /forget yes). With a store, changing the strategy or
the budget rebuilds the window from the stored log (the log is the recording: nothing is
lost, and the new window is filled from its newest end, as a resume does), and /clear
clears the stored log too (its system prompt stays). Without a store nothing of this shows.

With a store the app carries all three layers of memory: the window, the session and the
profile, and long-term memory (below: on by default, `LongTermMemory(store, user)` with the
offline embedder, computed here whatever the chat model, with
search_memory and save_memory offered; `longterm=False` turns it off). Each request's system
prompt then says what the profile says at that moment (`LongTerm.window`, lesson_lib.agent:
the stored log keeps the prompt the session started with), and the inspector draws that, so
"I'm vegan now" is in the next request and on screen.

Long-term memory (optional): `chat_app(longterm=LongTermMemory(store, "xiaoming"))` makes the
agent `LoopAgent.with_longterm` (lesson_lib.agent): before each message's model calls, long-term
memory is searched for the message, and the hits that fit `longterm_budget` tokens go with
every call of that message as one system message, never stored. The chat shows them under
the user's message ("Recalled from long-term memory": each hit's date, source, text and
score; "Nothing recalled" when none), and the inspector draws the last request as it was
sent, that message marked as not stored. Leaving a conversation keeps it as experience: /clear
(and, with a store, /new and /open) first summarises it into long-term memory
(`agent.end_session()`, remember_session) and says so; if that fails, nothing is cleared or
closed and a notice says why. What a trim drops is kept too, as the session's experience
(a notice shows the summary). /forget (Delete) also deletes what came of the session
(lesson_lib.forgetting.forget_session: its long-term memories and summary, the profile's
note of it, in one transaction with its log), then checks the store's files: if another
connection still holds deleted text on disk, a warning says so and what to do. With
`longterm_tools=True` the model is also offered search_memory and save_memory. Without a
store and without `longterm` (or with `longterm=False`) none of this shows and nothing
changes. Retrieved text is untrusted: everything
is escaped before it is drawn.

`ChatAppState` holds all of it as plain Python (every callback is a method a test can
call); `chat_app()` builds the thin widget view on top.
"""

from __future__ import annotations

import html
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lesson_lib.agent import CONTEXT_BUDGET, SYSTEM_PROMPT, LoopAgent, LoopResult, ToolEvent
from lesson_lib.display import MONO, SANS, show_messages
from lesson_lib.i18n import N_, _, ngettext
from lesson_lib.memory import NaiveMemory, ShortTermMemory
from lesson_lib.notices import describe_error, redact
from lesson_lib.protocol import ProtocolError, find_problems
from lesson_lib.stepper import Recording, ShownAsWidget, TapedMemory, check_scale
from lesson_lib.tokens import count_request, count_tools
from lesson_lib.tools import ToolRegistry, default_registry, memory_tools, profile_tools

RED, AMBER, GREEN, GREY, INK = "#b91c1c", "#b45309", "#15803d", "#6b7280", "#111827"
FAULTS = {"rate_limit": N_("429 rate limit"), "server_error": N_("500 server error"),
          "timeout": N_("a timeout")}  # what inject_fault() can order, in words (shown with _())
COMMANDS = {"/clear": N_("forget the conversation (the system prompt stays)"),
            "/help": N_("list the commands")}
STORE_COMMANDS = {"/sessions": N_("list your sessions"),
                  "/open NAME": N_("resume a session (or start it)"),
                  "/new NAME": N_("start a new session"),
                  "/forget": N_("delete this session for good (asks for /forget yes first)")}
# offered with a store only
DEFAULT_SESSION = "chat"  # the title of the session a store starts with, if the user has none


# ----------------------------------------------------------------- memory strategies

@dataclass(frozen=True)
class Strategy:
    """One way of keeping the memory short, as the app offers it."""
    name: str          # shown in the menu; the class's name
    cls: type          # called as cls(**{budget_name: budget})
    budget_name: str   # "max_messages" or "token_budget"
    default: int       # the budget it starts with
    low: int           # the slider's range and step
    high: int
    step: int
    about: str         # one sentence: what it drops (marked with N_(), shown with _())
    with_tools: bool = False  # also pass tools=[...] (its budget covers the tool definitions)

    def make(self, budget: int, tools: list[dict] | None = None) -> Any:
        """A fresh, empty memory with this budget."""
        kwargs: dict[str, Any] = {self.budget_name: budget}
        if self.with_tools:
            kwargs["tools"] = tools
        return self.cls(**kwargs)

    def label(self, budget: int) -> str:
        return f"{self.name}({self.budget_name}={budget})"

    def what_it_drops(self) -> str:
        """`about`, in the learner's language."""
        return _(self.about)


STRATEGIES: dict[str, Strategy] = {}


def add_strategy(strategy: Strategy) -> None:
    """Offer `strategy` in every chat app made from now on."""
    STRATEGIES[strategy.name] = strategy


add_strategy(Strategy("ShortTermMemory", ShortTermMemory, "max_messages", 10, 1, 60, 1,
                      N_("Drops the oldest message together with its tool results.")))
add_strategy(Strategy("NaiveMemory", NaiveMemory, "max_messages", 5, 1, 60, 1,
                      N_("The pitfall: drops one message at a time, and can leave orphan tool "
                         "results behind.")))
try:  # lesson_lib.budget (notebook 07) is offered when it is there
    from lesson_lib import budget as _budget
except ImportError:
    _budget = None
if _budget is not None:
    add_strategy(Strategy("TokenBudgetMemory", _budget.TokenBudgetMemory, "token_budget", 600,
                          250, 8000, 50, N_("Drops whole units, oldest first, to fit the "
                                            "token budget (tool definitions included): a "
                                            "message, or a tool call with its results."),
                          with_tools=True))
    add_strategy(Strategy("MessageBudgetMemory", _budget.MessageBudgetMemory, "max_messages",
                          10, 1, 60, 1, N_("Drops whole units (a message, or a tool call with its "
                                "results), never the current turn.")))


# ----------------------------------------------------------------- backends

def available_backends() -> dict[str, str]:
    """Backend name → a label with no secret in it. A real provider is offered only when the
    environment sets one up (LESSON_BACKEND=openai and OPENAI_API_KEY, see lesson_lib.llm)."""
    backends = {"offline": _("offline teaching model (no key, no network)")}
    wanted = os.environ.get("LESSON_BACKEND", "").strip().lower() == "openai"
    if wanted and os.environ.get("OPENAI_API_KEY"):
        from lesson_lib.llm import DEFAULT_OPENAI_MODEL  # noqa: PLC0415

        host = urlsplit(os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com").hostname
        model = os.environ.get("LESSON_MODEL", DEFAULT_OPENAI_MODEL)
        backends["openai"] = _("real model: {model} at {host}").format(model=model, host=host)
    return backends


def make_client(backend: str) -> Any:
    """A client for `backend`: a fresh offline client (so faults can be injected into it
    alone), or the environment's real provider (lesson_lib.llm.get_client())."""
    if backend == "offline":
        from lesson_lib.offline import offline_client  # noqa: PLC0415

        return offline_client()
    from lesson_lib.llm import get_client  # noqa: PLC0415

    return get_client()


# ----------------------------------------------------------------- the state

class StoredTape(TapedMemory):
    """The memory of a stored session: a TapedMemory over a StoredMemory whose tape is the
    whole stored log. If a unit reached the window but its commit failed (the StoredMemory
    is then stale), the window is rebuilt from the store, which holds the truth, before the
    error goes on to the app (which shows it as a notice)."""

    def __init__(self, stored: Any, new_window: Callable[[], Any]):  # stored: a StoredMemory
        super().__init__(stored)
        self.tape = stored.log()
        self.session, self._new_window = stored.session, new_window  # with_profile reads it

    def add(self, message: dict) -> None:
        self.add_many([message])

    def add_many(self, messages: Iterable[dict]) -> None:
        try:
            super().add_many(messages)
        except BaseException:
            if getattr(self.inner, "_stale", False):
                try:
                    self.inner = self.inner.session.memory(self._new_window())
                except Exception:  # noqa: BLE001, S110  (the next add tries again)
                    pass
            raise

    def to_api_format(self) -> list[dict]:
        if getattr(self.inner, "_stale", False):  # what the window holds, for the notice
            return self.inner.window.to_api_format()
        return super().to_api_format()


@dataclass(frozen=True)
class Recalled:
    """One memory as the chat shows it under the message it was recalled for."""
    date: str          # YYYY-MM-DD, when it was said or happened
    source: str        # "user", "session", "document", "tool" or "assistant"
    ref: str           # the session, document or tool it came from ("" if none)
    text: str
    score: float       # the search's score (fused: reciprocal rank fusion; higher is better)

    @classmethod
    def of(cls, hit: Any) -> Recalled:  # a lesson_lib.longterm.Hit
        return cls(hit.created_at[:10], hit.source, redact(hit.ref or ""), redact(hit.text),
                   float(hit.score))

    def __str__(self) -> str:
        where = f", {self.ref}" if self.ref else ""
        return _("{date} [{source}] {text} (score {score})").format(
            date=self.date, source=f"{self.source}{where}", text=self.text,
            score=f"{self.score:.3f}")


@dataclass
class ChatEntry:
    """One line of the chat panel."""
    kind: str          # "user", "assistant", "tool", "notice" (an error), "warning", "info",
                       # "recalled" (what long-term memory gave the message above)
    text: str
    detail: str = ""   # a tool's result, or what to do about a notice
    recalled: tuple[Recalled, ...] = ()  # "recalled": the hits, best first


class ChatAppState:
    """Everything the chat app shows and does, as plain Python (no widgets needed)."""

    def __init__(self, *, strategy: str = "ShortTermMemory",  # a key of STRATEGIES
                 budget: int | None = None,       # its max_messages or token_budget; None: default
                 tools: list[str] | None = None,  # names of the tools on; None: all
                 max_turns: int = 5,              # the agent loop's cap
                 backend: str = "offline",        # a key of available_backends()
                 registry: ToolRegistry | None = None,  # where tools come from
                 system_prompt: str = SYSTEM_PROMPT,
                 scale: float = 1.0,               # zoom of the chat and the inspector
                                                   # (projector: 1.3+, as the stepper's)
                 store: Any = None,                # a SessionStore, or its URL; None: none
                 user: str = "xiaoming",           # whose sessions and profile
                 session: str | None = None,       # title or id to open; None: the newest
                 longterm: Any = None,             # a LongTermMemory; None: the store's
                                                   # (none without one); False: none
                 longterm_budget: int = CONTEXT_BUDGET,  # tokens the recalled context may cost
                 longterm_tools: bool | None = None):  # also offer search_memory and
                                                   # save_memory; None: with the store's
        if strategy not in STRATEGIES:
            raise ValueError(_("strategy must be one of {names}, got {strategy}").format(
                names=list(STRATEGIES), strategy=repr(strategy)))
        if backend not in available_backends():
            raise ValueError(_("backend must be one of {names}, got {backend} (a real provider "
                               "needs LESSON_BACKEND=openai and OPENAI_API_KEY in the shell "
                               "that started Jupyter)").format(
                                   names=list(available_backends()), backend=repr(backend)))
        check_scale(scale)
        self.scale = scale
        self.registry = registry if registry is not None else default_registry
        self.system_prompt = system_prompt
        self.strategy = STRATEGIES[strategy]
        self.budget = self.strategy.default if budget is None else budget
        self.tool_names = self.registry.names() if tools is None else list(tools)
        self.max_turns, self.backend = max_turns, backend
        self.client = make_client(backend)
        self.entries: list[ChatEntry] = []
        self._trimmed: tuple[Any, list[dict]] = (None, [])  # (of which memory, what went)
        self.on_change: Callable[[], None] | None = None  # the view's refresh, if any
        self.store, self.user, self.forget_pending = None, user, False
        self.longterm = longterm if longterm is not False else None
        self.longterm_tools = bool(longterm_tools)
        if isinstance(longterm_budget, bool) or not isinstance(longterm_budget, int) or \
                longterm_budget < 1:
            raise ValueError(_("longterm_budget is the tokens the recalled context may cost, a "
                               "whole number of at least 1, got {budget}").format(
                                   budget=repr(longterm_budget)))
        self.longterm_budget = longterm_budget
        self.longterm_session: str | None = None  # where the agent files experience
        if store is None:
            self.memory = TapedMemory(self.strategy.make(self.budget, self.tool_schemas()))
            self._build_agent()
            return
        if isinstance(store, str):
            from lesson_lib.sessions import SessionStore  # noqa: PLC0415

            store = SessionStore(store)
        self.store = store
        if longterm is None:  # a stored session carries all three layers: long-term too
            from lesson_lib.embeddings import Embedder  # noqa: PLC0415
            from lesson_lib.longterm import LongTermMemory  # noqa: PLC0415

            self.longterm = LongTermMemory(store, user, embedder=Embedder.offline())
            self.longterm_tools = longterm_tools is not False
        found = self._find(session) if session else (self.sessions() or [None])[0]
        if found is not None:
            self._use(found.session_id)
            if self.memory.tape:  # a resumed session: its conversation is on screen again
                self._show_log(_("Resumed session {title}.").format(
                    title=repr(self.session_title)))
        else:
            self._use(self.store.create_session(user, title=session or DEFAULT_SESSION)
                      .session_id)

    def tool_schemas(self) -> list[dict] | None:
        """The tools sent with each request (None when none is on: the API refuses []).
        With a store, remember_preference is always among them."""
        tools = self.registry.subset(self.tool_names)
        if self.store is not None:
            tools = profile_tools(None, None, tools)  # the same schemas, whoever's profile
        if self.longterm is not None and self.longterm_tools:
            tools = memory_tools(self.longterm, tools=tools)  # the schemas with_longterm adds
        return tools.schemas() or None

    def _build_agent(self) -> None:
        tools = self.registry.subset(self.tool_names)
        if self.longterm is not None:  # the session's experience goes on under the same id
            profile = self.store.profile(self.user) if self.store is not None else None
            self.agent = LoopAgent.with_longterm(
                self.longterm, self.system_prompt, budget=self.longterm_budget,
                as_tools=self.longterm_tools, tools=tools, memory=self.memory,
                profile=profile, session_id=self.longterm_session, client=self.client,
                max_turns=self.max_turns, on_tool=self._on_tool, on_recall=self._on_recall)
            self.longterm_session = self.agent.session_id
        elif self.store is None:
            self.agent = LoopAgent(self.system_prompt, memory=self.memory, tools=tools,
                                   client=self.client, max_turns=self.max_turns,
                                   on_tool=self._on_tool)
        else:  # a new session's system prompt ends with the profile; remember_preference
            self.agent = LoopAgent.with_profile(
                self.store.profile(self.user), self.system_prompt, tools=tools,
                memory=self.memory, client=self.client, max_turns=self.max_turns,
                on_tool=self._on_tool)

    # -- the chat

    def send(self, text: str) -> str | None:
        """What Enter or Send does: a /command, or one turn of the agent loop.
        Returns the reply (None for a command or an error); never raises."""
        text = (text or "").strip()
        if not text:
            return None
        if text.startswith("/"):
            self.command(text)
            return None
        self.post("user", text)
        before, said = self._sent(), len(self.memory.tape)
        try:
            result = self.agent.run(text)
        except Exception as error:  # every failure becomes a notice, never a traceback
            self._note_trims(before + self.memory.tape[said:])
            self.post("notice", *describe_error(error, self.memory.to_api_format(),
                                                self.memory.last_refused))
            return None
        self._note_trims(before + self.memory.tape[said:])
        self._show_result(result)
        return result.reply

    @property
    def trimmed(self) -> list[dict]:
        """What the latest turn or change of memory dropped from the list the next request
        sends, oldest first: every trim of a turn (each add trims, so a turn may trim several
        times), or what a new strategy or budget no longer keeps."""
        memory, gone = self._trimmed
        return gone if memory is self.memory else []

    def _note_trims(self, before: list[dict]) -> None:
        """Remember which messages of `before` the list the memory sends now has lost."""
        self._trimmed = (self.memory, gone_from(before, self._sent()))

    def _show_result(self, result: LoopResult) -> None:
        if result.hit_max_turns:
            self.post("warning", _("Stopped by the cap: max_turns={n}").format(n=self.max_turns),
                      result.reply)
        else:
            self.post("assistant", result.reply)

    def _on_tool(self, event: ToolEvent) -> None:  # the agent calls it as each tool runs
        self.post("tool", _("turn {turn} · {call}").format(
            turn=event.turn, call=f"{event.name}({event.arguments})"), event.result)

    def _on_recall(self, hits: list) -> None:  # the agent calls it before the model is asked
        """Under the user's message: what trims dropped, if it was just kept as experience
        (or why it could not be), then what long-term memory gave this message."""
        agent = self.agent
        if agent.last_experience is not None:
            self.post("info", _("What the trim dropped is kept in long-term memory, summarised "
                                "as the experience of session {session}:").format(
                                    session=repr(agent.session_id)),
                      agent.last_experience.text)
        if agent.experience_error is not None:
            self.post("warning", _("What the trim dropped is not in long-term memory yet"),
                      _("{error} (tried again at the next message; the dropped messages are "
                        "kept until then)").format(
                            error=describe_store_error(agent.experience_error)))
        rows = tuple(Recalled.of(hit) for hit in hits)
        if not rows:
            self.post("recalled", _("Nothing recalled from long-term memory for this message."))
            return
        self.post("recalled", ngettext(
            "Recalled from long-term memory ({n} memory, sent with this message only, not "
            "stored):",
            "Recalled from long-term memory ({n} memories, sent with this message only, not "
            "stored):", len(rows)).format(n=len(rows)),
                  "\n".join(map(str, rows)), recalled=rows)

    def post(self, kind: str, text: str, detail: str = "",
             recalled: tuple[Recalled, ...] = ()) -> None:
        """Add a line to the chat panel and tell the view."""
        if kind == "user":
            self.forget_pending = False  # /forget yes must follow /forget at once
        self.entries.append(ChatEntry(kind, redact(text), redact(detail), recalled))
        if self.on_change is not None:
            self.on_change()

    def _sent(self) -> list[dict]:
        """What the memory sends, or [] when it cannot be read (a store that failed)."""
        try:
            return self.memory.to_api_format()
        except Exception:  # noqa: BLE001  (only for a notice's wording)
            return []

    def command(self, text: str) -> None:
        """/clear or /help (with a store also /sessions, /open NAME, /new NAME, /forget);
        anything else gets a notice listing the commands."""
        name, argument = text.split()[0].lower(), text.strip()[len(text.split()[0]):].strip()
        self.forget_pending = self.forget_pending and name == "/forget"
        offered = COMMANDS if self.store is None else {**COMMANDS, **STORE_COMMANDS}
        listing = " · ".join(f"{c}  {_(what)}" for c, what in offered.items())
        if name == "/clear":
            self.clear()
        elif self.store is not None and name in ("/sessions", "/open", "/new", "/forget"):
            {"/sessions": lambda: self.show_sessions(),
             "/open": lambda: self.open_session(argument),
             "/new": lambda: self.new_session(argument),
             "/forget": lambda: self.forget(argument.lower() == "yes")}[name]()
        elif name == "/help":
            self.post("info", _("Commands: {listing}").format(listing=listing))
        else:
            self.post("notice", _("Unknown command {name}").format(name=name),
                      _("Commands: {listing}").format(listing=listing))

    def clear(self) -> None:
        """/clear: a new conversation. The system prompt stays; the recording restarts.
        With a store, the session's stored log keeps only its system prompt too. With
        long-term memory, the conversation is first kept there (end_session), and what
        follows is filed as a new session."""
        if not self.keep_session():
            return
        try:
            self.agent.clear()
        except Exception as error:  # a store error
            self.post("notice", _("The memory could not be cleared"), describe_store_error(error))
            return
        self._trimmed = (self.memory, [])  # a new conversation: nothing trimmed from it yet
        if self.longterm is not None:  # agent.clear() started the session's next part
            self.longterm_session = self.agent.session_id
        stored = (_(" In the store too: session {title} keeps only its system prompt.").format(
            title=repr(self.session_title)) if self.store is not None else "")
        self.post("info", _("Memory cleared: a new conversation starts."),
                  _("The lines above stay on screen, but the model no longer sees them.") + stored)

    def keep_session(self) -> bool:
        """Before the conversation is left (/clear, /new, /open): with long-term memory, keep
        it there as experience (agent.end_session(): its summary, source "session") and say
        so. False, with a notice, if that failed: then nothing is cleared or closed."""
        if self.longterm is None:
            return True
        try:
            kept = self.agent.end_session()
        except Exception as error:  # the summary's model call, or the store
            return self.refuse(_("This conversation could not be kept in long-term memory"),
                               _("{error}. Nothing was cleared or closed: try again.").format(
                                   error=describe_store_error(error)))
        if kept is not None:
            self.post("info", _("This conversation is kept in long-term memory, as the "
                                "experience of session {session}:").format(session=repr(kept.ref)),
                      kept.text)
        return True

    def forget_longterm(self, session_id: str) -> int:
        """Delete the long-term memories filed under `session_id` (and its parts after a
        /clear, "<id>#2" …): its experience and what the user said in it. How many.
        (Delete does this through lesson_lib.forgetting.forget_session, in the same
        transaction as the session's log; this is for a long-term memory kept in another
        store than the sessions.)"""
        if self.longterm is None:
            return 0
        from lesson_lib.forgetting import filed_under  # noqa: PLC0415

        gone = [m.id for m in self.longterm.all() if filed_under(m.ref, m.subject, session_id)]
        return sum(self.longterm.delete(memory_id) for memory_id in gone)

    # -- the controls (each returns True if applied; a refused setting posts a notice)

    def refuse(self, what: str, why: str) -> bool:
        self.post("notice", what, why)
        return False

    def set_strategy(self, name: str, budget: int | None = None) -> bool:
        """Switch the memory strategy; the conversation is kept (replayed into it).
        Without a budget, the current one is kept when it means the same thing."""
        strategy = STRATEGIES.get(name)
        if strategy is None:
            return self.refuse(_("No memory strategy called {name}").format(name=repr(name)),
                               _("Choose one of: {names}").format(names=", ".join(STRATEGIES)))
        if budget is None:
            same = strategy.budget_name == self.strategy.budget_name
            budget = self.budget if same else strategy.default
        return self._switch(strategy, budget)

    def set_budget(self, budget: int) -> bool:
        """Change max_messages (or token_budget); the conversation is kept."""
        return self._switch(self.strategy, budget)

    def _rebuild(self, strategy: Strategy, budget: int, announce: bool = True) -> bool:
        """A new memory of `strategy`, with the recording replayed into it."""
        try:
            fresh = TapedMemory(strategy.make(budget, self.tool_schemas()))
        except (TypeError, ValueError) as error:
            return self.refuse(_("{memory} is not possible").format(memory=strategy.label(budget)),
                               str(error))
        try:
            for message in self.memory.tape:
                fresh.add(message)
        except ValueError as error:  # a ProtocolError, or a budget this conversation exceeds
            return self.refuse(_("{memory} cannot hold this conversation").format(
                memory=strategy.label(budget)), str(error))
        before = self._sent()
        self.strategy, self.budget, self.memory = strategy, budget, fresh
        self._note_trims(before)
        self._build_agent()
        if announce:
            n = len(fresh.tape)
            self.post("info", _("Memory is now {memory}. {about}").format(
                memory=strategy.label(budget), about=strategy.what_it_drops()),
                      ngettext("Rebuilt from this conversation ({n} message), as if it had been "
                               "used from the start.",
                               "Rebuilt from this conversation ({n} messages), as if it had been "
                               "used from the start.", n).format(n=n))
        return True

    def _switch(self, strategy: Strategy, budget: int, announce: bool = True) -> bool:
        """_rebuild without a store; with one, _rebuild_stored."""
        if self.store is None:
            return self._rebuild(strategy, budget, announce)
        return self._rebuild_stored(strategy, budget, announce)

    def _rebuild_stored(self, strategy: Strategy, budget: int, announce: bool = True) -> bool:
        """With a store, the log is the recording: a new window of `strategy` is filled from
        the stored log's newest end (as a resume does); nothing stored changes."""
        try:
            window = strategy.make(budget, self.tool_schemas())
        except (TypeError, ValueError) as error:
            return self.refuse(_("{memory} is not possible").format(memory=strategy.label(budget)),
                               str(error))
        try:
            fresh = self._stored_memory(self.session_id, window)
        except Exception as error:  # a budget the last turn exceeds, a store error
            return self.refuse(_("{memory} cannot hold this conversation").format(
                memory=strategy.label(budget)), describe_store_error(error))
        before = self._sent()
        self.strategy, self.budget, self.memory = strategy, budget, fresh
        self._note_trims(before)
        self._build_agent()
        if announce:
            n, window_n = len(fresh.tape), fresh.message_count()
            self.post("info", _("Memory is now {memory}. {about}").format(
                memory=strategy.label(budget), about=strategy.what_it_drops()),
                      _("Rebuilt from the stored log of session {title} ({stored}): the window "
                        "holds the newest {window} it can.").format(
                            title=repr(self.session_title),
                            stored=ngettext("{n} message", "{n} messages", n).format(n=n),
                            window=ngettext("{n} message", "{n} messages",
                                            window_n).format(n=window_n)))
        return True

    def set_tools(self, names: list[str]) -> bool:
        """Offer only the tools called `names` (in the registry's order)."""
        unknown = [n for n in names if n not in self.registry]
        if unknown:
            return self.refuse(_("No tool called {names}").format(
                names=", ".join(map(repr, unknown))),
                _("The tools are: {names}").format(names=", ".join(self.registry.names())))
        before, self.tool_names = self.tool_names, [n for n in self.registry.names() if n in names]
        if self.strategy.with_tools and not self._switch(self.strategy, self.budget, False):
            self.tool_names = before  # its budget covers the tools: they no longer fit
            return False
        self._build_agent()
        return True

    def toggle_tool(self, name: str, on: bool) -> bool:
        """Turn one tool on or off (a checkbox)."""
        others = [n for n in self.tool_names if n != name]
        return self.set_tools(others + [name] if on else others)

    def set_max_turns(self, max_turns: int) -> bool:
        """The agent loop's cap on model calls per message."""
        if not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1:
            return self.refuse(_("max_turns={value} is not possible").format(
                value=repr(max_turns)), _("max_turns is a whole number of at least 1"))
        self.max_turns = max_turns
        self._build_agent()
        return True

    def set_backend(self, backend: str) -> bool:
        """Talk to another backend; the memory is kept."""
        backends = available_backends()
        if backend not in backends:
            return self.refuse(_("No backend {backend} in this environment").format(
                backend=repr(backend)),
                _("A real provider needs LESSON_BACKEND=openai and OPENAI_API_KEY, set in your "
                  "shell (never in a notebook cell)."))
        try:
            client = make_client(backend)
        except Exception as error:  # e.g. lesson_lib.llm.BackendError
            return self.refuse(_("Cannot use {backend}").format(backend=repr(backend)),
                               str(error))
        self.backend, self.client = backend, client
        self._build_agent()
        self.post("info", _("Now talking to the {backend}.").format(backend=backends[backend]))
        return True

    def inject_fault(self, kind: str = "rate_limit",  # a key of FAULTS
                     times: int = 1) -> bool:        # how many of the next calls fail
        """Make the offline model's next call(s) fail, to see how the app copes."""
        if self.backend != "offline":
            return self.refuse(_("Faults can only be ordered from the offline model"),
                               _("A real provider fails on its own schedule."))
        if kind not in FAULTS:
            return self.refuse(_("No fault called {kind}").format(kind=repr(kind)),
                               _("Choose one of: {names}").format(names=", ".join(FAULTS)))
        from lesson_lib.offline import inject_fault  # noqa: PLC0415

        inject_fault(self.client, kind, times)
        said = (_("⚡ The next model call will fail with {fault}.") if times == 1 else
                _("⚡ The next {n} model calls will fail with {fault}."))
        self.post("info", said.format(n=times, fault=_(FAULTS[kind])))
        return True

    # -- sessions (only with a store; each returns True if done, else posts a notice)

    @property
    def session_id(self) -> str | None:
        """The open session's id (None without a store)."""
        return None if self.store is None else self.memory.session.session_id

    def sessions(self) -> list[Any]:
        """This user's sessions (SessionInfo), the most recently used first ([] without a
        store, or when the store cannot be read)."""
        if self.store is None:
            return []
        try:
            return self.store.list_sessions(self.user)
        except Exception:  # noqa: BLE001  (the view lists nothing; a command says why)
            return []

    def _find(self, name: str) -> Any:
        """The user's session called `name`: the newest with that title, else that id."""
        from lesson_lib.sessions import find_session  # noqa: PLC0415

        return find_session(self.store, self.user, name)

    def _stored_memory(self, session_id: str, window: Any) -> TapedMemory:
        """A StoredMemory on `session_id` with `window` (filled from the log's newest end),
        taped: its tape is the whole stored log, so the recording is the log."""
        stored = self.store.resume(session_id, window)
        taped = StoredTape(stored, lambda: self.strategy.make(self.budget, self.tool_schemas()))
        return taped

    def _use(self, session_id: str) -> None:
        """Make `session_id` the open session, with the current strategy as its window."""
        fresh = self._stored_memory(session_id,
                                    self.strategy.make(self.budget, self.tool_schemas()))
        before = getattr(self, "memory", None)
        filed = self.longterm_session
        self.memory, self.longterm_session = fresh, None  # long-term: the stored session's id
        try:
            self._build_agent()  # a new session gets the system prompt (with the profile)
            self.session_title = self.store.info(session_id).title or session_id
        except BaseException:
            if before is not None:
                self.memory, self.longterm_session = before, filed
                self._build_agent()
            raise

    def _no_store(self) -> bool:
        return self.refuse(_("Sessions need a store"),
                           _("Start the app with one: chat_app(store=SessionStore(url))"))

    def open_session(self, name: str) -> bool:
        """Resume this user's session `name` (a title, or an id), or start it when there is
        none. The chat panel shows its conversation again, under a divider."""
        name = (name or "").strip()
        if self.store is None:
            return self._no_store()
        if not name:
            return self.refuse(_("Which session?"), _("Give its title or id: /open NAME"))
        try:
            found = self._find(name)
            if found is not None and found.session_id == self.session_id:
                self.post("info", _("Session {title} is already open.").format(
                    title=repr(self.session_title)))
                return True
            if not self.keep_session():
                return False
            if found is None:
                self._use(self.store.create_session(self.user, title=name).session_id)
            else:
                self._use(found.session_id)
        except Exception as error:
            return self.refuse(_("Cannot open session {name}").format(name=repr(name)),
                               describe_store_error(error))
        if found is None:
            self._announce_new()
        else:
            n = len(self.memory.tape)
            self._show_log(ngettext(
                "Resumed session {title}: {n} message stored, {window} in the window (what is "
                "sent).",
                "Resumed session {title}: {n} messages stored, {window} in the window (what is "
                "sent).", n).format(title=repr(self.session_title), n=n,
                                    window=self.memory.message_count()))
        return True

    def new_session(self, title: str) -> bool:
        """Start a new, empty session called `title` (its system prompt reads the profile)."""
        title = (title or "").strip()
        if self.store is None:
            return self._no_store()
        if not title:
            return self.refuse(_("A new session needs a name"), _("Type one: /new NAME"))
        if not self.keep_session():
            return False
        try:
            self._use(self.store.create_session(self.user, title=title).session_id)
        except Exception as error:
            return self.refuse(_("Cannot start session {title}").format(title=repr(title)),
                               describe_store_error(error))
        self._announce_new()
        return True

    def _announce_new(self) -> None:
        note = self.profile_prompt()
        self.post("info", _("New session {title}.").format(title=repr(self.session_title)),
                  _("Its system prompt reads your profile: {note}").format(note=note) if note else
                  _("Your profile is empty: tell the model something lasting (“I'm vegetarian”)."))

    def _show_log(self, headline: str) -> None:
        """A divider, then the stored conversation as chat lines (the view redraws once)."""
        log = self.memory.tape
        results = {m.get("tool_call_id"): m.get("content") or "" for m in log
                   if m["role"] == "tool"}
        lines = [ChatEntry("info", headline, _("The lines below are its stored conversation."))]
        for m in log:
            if m["role"] == "user":
                lines.append(ChatEntry("user", redact(str(m.get("content") or ""))))
            elif m["role"] == "assistant":
                for call in m.get("tool_calls") or []:
                    f = call["function"]
                    lines.append(ChatEntry("tool", redact(f"{f['name']}({f['arguments']})"),
                                           redact(str(results.get(call["id"], "")))))
                if m.get("content"):
                    lines.append(ChatEntry("assistant", redact(str(m["content"]))))
        self.entries += lines
        if self.on_change is not None:
            self.on_change()

    def show_sessions(self) -> bool:
        """/sessions: this user's sessions, the most recently used first."""
        if self.store is None:
            return self._no_store()
        try:
            mine = self.store.list_sessions(self.user)
        except Exception as error:
            return self.refuse(_("Cannot list the sessions"), describe_store_error(error))
        lines = [f"{'*' if i.session_id == self.session_id else '·'} {i.title or i.session_id}"
                 ": " + ngettext("{n} message, last used {when} UTC [id {id}]",
                                 "{n} messages, last used {when} UTC [id {id}]",
                                 i.message_count).format(
                     n=i.message_count, when=i.updated_at[:16].replace("T", " "),
                     id=i.session_id) for i in mine]
        self.post("info", _("Sessions of {user}, most recently used first (* is open):").format(
            user=repr(self.user)), "\n".join(lines))
        return True

    def forget(self, confirmed: bool = False) -> bool:
        """/forget says what it would delete; /forget yes (or Delete twice) deletes it."""
        if self.store is None:
            return self._no_store()
        if not confirmed:
            self.forget_pending = True
            try:
                n = self.memory.inner.stored_count()
                stored = ngettext("{n} stored message", "{n} stored messages", n).format(n=n)
            except Exception:  # noqa: BLE001
                stored = _("stored messages")
            self.post("warning", _("Delete session {title} for good?").format(
                title=repr(self.session_title)),
                      _("Its {stored} go from {where} (your profile stays). Type /forget yes (or "
                        "press Delete again) to do it.").format(stored=stored,
                                                                where=self.store.where))
            return False
        return self.delete_session()

    def delete_session(self) -> bool:
        """Delete the open session for good (its rows go), then go on in a new, empty session
        with the same title."""
        self.forget_pending = False
        if self.store is None:
            return self._no_store()
        from lesson_lib.forgetting import forget_session  # noqa: PLC0415

        title, session_id = self.session_title, self.session_id
        try:
            info = self.store.info(session_id)
            report = forget_session(self.store, session_id)  # the log and what came of it
            gone = report.removed["messages"]
            memories = (report.removed["memories"] + report.removed["summaries"]
                        + self.forget_longterm(session_id))  # a long-term store of its own
            self._use(self.store.create_session(self.user, title=info.title).session_id)
        except Exception as error:
            return self.refuse(_("Cannot delete session {title}").format(title=repr(title)),
                               describe_store_error(error))
        also = (ngettext(" and {n} long-term memory from it", " and {n} long-term memories from it",
                         memories).format(n=memories) if memories else "")
        self.post("notice", _("Deleted session {title} for good ({messages}{also})").format(
            title=repr(title), messages=ngettext("{n} message", "{n} messages", gone).format(n=gone),
            also=also),
                  _("Going on in a new, empty session {title}. Your profile stays.").format(
                      title=repr(self.session_title)))
        if not report.ok:  # another connection holds deleted text on disk, say
            self.post("warning", _("Not everything of session {title} is gone from the disk "
                                   "yet").format(title=repr(title)),
                      "\n".join([*report.proof.actions, *map(str, report.proof.remaining[:5])]))
        return True

    def profile(self) -> dict[str, Any]:
        """What the agent knows about this user ({} without a store, or if unreadable)."""
        if self.store is None:
            return {}
        try:
            return self.store.profile(self.user).as_dict()
        except Exception:  # noqa: BLE001
            return {}

    def profile_history(self) -> dict[str, list[str]]:
        """Each profile key → every value it has had, oldest first, in words."""
        if self.store is None:
            return {}
        try:
            profile = self.store.profile(self.user)
            return {key: [str(e) for e in profile.history(key)] for key in profile.as_dict()}
        except Exception:  # noqa: BLE001
            return {}

    def profile_prompt(self) -> str:
        """The profile as a new session's system prompt reads it ("" if nothing is known)."""
        try:
            return self.store.profile(self.user).as_prompt() if self.store else ""
        except Exception:  # noqa: BLE001
            return ""

    # -- what the inspector and the stepper read

    def recording(self) -> list[dict]:
        """Every message of this conversation in order, trimmed ones included (since /clear)."""
        return [dict(m) for m in self.memory.tape]

    def to_recording(self, title: str | None = None) -> Recording:
        """This conversation for the stepper; its requests are what this memory sent."""
        strategy, budget, tools = self.strategy, self.budget, self.tool_schemas()
        return Recording(title or _("A chat with {memory}").format(memory=strategy.label(budget)),
                         self.recording(),
                         lambda: strategy.make(budget, tools))

    def window(self) -> list[dict]:
        """The message list the next request sends (before what long-term memory recalls for
        it): the memory's, and with a profile and long-term memory, the system prompt saying
        what the profile says now (LongTerm.window, lesson_lib.agent)."""
        window = getattr(self.agent, "window", None)
        return window() if callable(window) else self.memory.to_api_format()

    def stats(self) -> dict:
        """The inspector's numbers: messages, tokens, their limits, and how many messages the
        last turn or change of memory trimmed (`trimmed`)."""
        from lesson_lib.offline import DEFAULT_CONTEXT_WINDOW  # noqa: PLC0415

        messages, inner, tools = self.window(), self.memory.inner, self.agent.tools
        limit, limit_name = getattr(inner, "token_budget", None), "token_budget"
        if limit is None:  # a message-count memory: compare with the model's window
            limit, limit_name = (DEFAULT_CONTEXT_WINDOW if self.backend == "offline" else None,
                                 N_("the context window"))  # data: shown with _()
        return {"messages": len(messages), "max_messages": getattr(inner, "max_messages", None),
                "tokens": count_request(messages, tools),  # what the next request costs
                "token_limit": limit, "token_limit_name": limit_name,
                "tool_tokens": count_tools(tools), "dropped": len(self.trimmed),
                "problems": find_problems(messages)}

    def chat_html(self, height: int = 420) -> str:
        return chat_html(self.entries, height, self.scale)

    def memory_html(self) -> str:
        return memory_html(self)

    def profile_html(self) -> str:
        return profile_html(self)

    def summary(self) -> str:
        """One deterministic line: messages, tokens, the strategy, the backend (and a broken
        memory, if it is)."""
        s = self.stats()
        tokens = f"{s['tokens']}/{s['token_limit']}" if s["token_limit"] else f"{s['tokens']}"
        broken = _(", ✗ the API would refuse this list") if s["problems"] else ""
        stored = "" if self.store is None else f", session={self.session_title!r}"
        return ngettext("{n} message, {tokens} tokens, strategy={strategy}, backend={backend}",
                        "{n} messages, {tokens} tokens, strategy={strategy}, backend={backend}",
                        s["messages"]).format(n=s["messages"], tokens=tokens,
                                              strategy=self.strategy.label(self.budget),
                                              backend=self.backend) + f"{stored}{broken}"

    def __repr__(self) -> str:
        return f"<ChatAppState: {self.summary()}>"

    def _repr_html_(self) -> str:  # a static picture of the app (e.g. on GitHub)
        return (f'<table style="border-collapse:collapse"><tr>'
                f'<td style="vertical-align:top;width:50%">{self.chat_html()}</td>'
                f'<td style="vertical-align:top">{self.memory_html()}</td></tr></table>')


# ----------------------------------------------------------------- what _rebuild says

# ----------------------------------------------------------------- HTML

def describe_store_error(error: BaseException) -> str:
    """A store error (or any other) in words: its message, else its kind."""
    return str(error) or type(error).__name__


def gone_from(before: list[dict], after: list[dict]) -> list[dict]:
    """The messages of `before` that `after` no longer holds, oldest first. Equal messages
    are matched one for one, the newest kept: a trim drops the oldest."""
    left = Counter(json.dumps(m, sort_keys=True, default=str) for m in after)
    gone = []
    for message in reversed(before):
        key = json.dumps(message, sort_keys=True, default=str)
        if left[key]:
            left[key] -= 1
        else:
            gone.append(message)
    return gone[::-1]


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _is_error_result(result: str) -> bool:
    try:
        data = json.loads(result)
    except ValueError:
        return False
    return isinstance(data, dict) and "error" in data


def entry_html(e: ChatEntry) -> str:
    """One chat line: bubbles for people and the model, boxes for notices."""
    text, detail = _esc(e.text), _esc(e.detail)
    pre = "white-space:pre-wrap;overflow-wrap:anywhere"
    if e.kind in ("user", "assistant"):
        side, colours = (("right", "background:#2563eb;color:#ffffff") if e.kind == "user" else
                         ("left", f"background:#f0fdf4;color:{INK};border:1px solid {GREEN}"))
        return (f'<div style="text-align:{side};margin:4px 0"><span style="display:inline-block;'
                f'{colours};border-radius:12px;padding:6px 12px;max-width:80%;text-align:left;'
                f'{pre}">{text}</span></div>')
    if e.kind == "tool":
        colour = RED if _is_error_result(e.detail) else INK
        return (f'<div style="border-left:4px solid #c2410c;padding:2px 8px;margin:4px 0;'
                f'font:12px {MONO};{pre}">⚙ {text}<div style="color:{colour}">→ {detail}</div>'
                '</div>')
    if e.kind == "recalled":
        return recalled_html(e.text, e.recalled)
    if e.kind in ("notice", "warning"):
        colour = RED if e.kind == "notice" else AMBER
        return (f'<div style="border:2px solid {colour};background:#fff7ed;color:{INK};'
                f'border-radius:6px;padding:6px 10px;margin:6px 0"><b style="color:{colour}">'
                f'⚠ {text}</b><div style="{pre}">{detail}</div></div>')
    return (f'<div style="color:{GREY};font-style:italic;text-align:center;margin:6px 0;'
            f'border-top:1px dashed #d1d5db">{text}<br>{detail}</div>')


RECALLED_CHARS = 280  # a memory's text in the chat is cut here (the whole text on hover)


def recalled_html(headline: str, rows: Iterable[Recalled]) -> str:
    """What long-term memory gave one message, under it: a small table, one memory a row
    (date, source and where, text, score), best first. Every part is escaped: a memory's
    text is untrusted (a document, a tool's result, another conversation) and may hold
    markup. Text wraps anywhere, so a long Chinese line (no spaces) or a long session id
    stays in the panel; a text over RECALLED_CHARS characters is cut, whole on hover."""
    cell = "padding:1px 6px;vertical-align:top"
    wrap = "white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word"
    body = []
    for r in rows:
        shown = r.text if len(r.text) <= RECALLED_CHARS else r.text[:RECALLED_CHARS] + "…"
        where = (f'<div style="color:{GREY};font-size:11px;{wrap}">{_esc(r.ref)}</div>'
                 if r.ref else "")
        body.append(f'<tr><td style="{cell};white-space:nowrap">{_esc(r.date)}</td>'
                    f'<td style="{cell};max-width:120px">{_esc(r.source)}{where}</td>'
                    f'<td style="{cell};{wrap};width:100%" title="{_esc(r.text)}">'
                    f'{_esc(shown)}</td>'
                    f'<td style="{cell};text-align:right;font:12px {MONO}">{r.score:.3f}</td>'
                    '</tr>')
    date, source, memory, score = (_esc(t) for t in (_("date"), _("source"), _("memory"),
                                                     _("score")))
    table = (f'<table style="border-collapse:collapse;margin-top:2px;width:100%;'
             'font-size:12px">'
             f'<tr style="color:{GREY}"><th style="{cell};text-align:left">{date}</th>'
             f'<th style="{cell};text-align:left">{source}</th>'
             f'<th style="{cell};text-align:left">{memory}</th>'
             f'<th style="{cell};text-align:right">{score}</th></tr>'
             f'{"".join(body)}</table>'
             if body else "")
    return (f'<div class="lesson-chat-recalled" style="margin:2px 0 6px auto;max-width:90%;'
            f'border:1px dashed #7c3aed;border-radius:6px;padding:3px 8px;background:#f5f3ff;'
            f'font-size:12px;color:{INK}"><b style="color:#6d28d9">🧠 {_esc(headline)}</b>'
            f'{table}</div>')


def chat_html(entries: list[ChatEntry],
              height: int = 420,   # of the panel, in CSS pixels before the zoom
              scale: float = 1.0,  # zoom (projector: 1.3+)
              ) -> str:
    """The chat panel. Newest at the bottom, and the panel stays scrolled to it
    (a column-reverse flex box holds the lines in reverse order)."""
    lines = [entry_html(e) for e in reversed(entries)] or [
        f'<div style="color:{GREY}">'
        + _esc(_("Say something. Try “My name is Xiaoming”, then “What’s the weather in "
                 "Chengdu?”, then “What is my name?”.")) + '</div>']
    return (f'<div style="zoom:{scale}"><div style="display:flex;flex-direction:column-reverse;'
            f'height:{height}px;overflow-y:auto;font:14px/1.4 {SANS};color:{INK};'
            f'background:#ffffff;border:1px solid #d1d5db;border-radius:6px;padding:6px 10px">'
            f'<div>{"".join(reversed(lines))}</div></div></div>')


def gauge_html(label: str, value: int, limit: int | None, note: str = "") -> str:
    """`value` against `limit` as a bar: green, amber past 75 %, red past 100 %."""
    text = _("{label}: {value}").format(label=label, value=f"<b>{value}</b>") \
        + (f" / {limit}" if limit else "") + f" {_esc(note)}"
    if not limit:
        return f'<div style="margin:2px 0">{text}</div>'
    share = value / limit
    colour = GREEN if share <= 0.75 else AMBER if share <= 1 else RED
    return (f'<div style="margin:2px 0">{text}<div style="background:#e5e7eb;height:10px;'
            f'width:280px;border-radius:5px"><div style="background:{colour};height:10px;'
            f'width:{min(share, 1) * 100:.0f}%;border-radius:5px"></div></div></div>')


def _validity_html(problems: list[ProtocolError]) -> str:
    if not problems:
        accepted = _esc(_("✓ The API accepts this memory."))
        return f'<div style="color:{GREEN};margin:4px 0">{accepted}</div>'
    first = problems[0]
    refused = _esc(_("✗ Sent as it is, this list would be refused by the API (400):"))
    return (f'<div style="border:2px solid {RED};background:#fef2f2;border-radius:6px;'
            f'padding:6px 10px;margin:4px 0"><b style="color:{RED}">{refused}</b>'
            f'<div style="font:12px {MONO}">'
            f'{_esc(first.message)}</div><div>→ {_esc(first.explanation)}</div></div>')


def memory_html(state: ChatAppState) -> str:
    """The inspector: the strategy, the gauges, validity, and the message list."""
    s, memory = state.stats(), state.memory
    limit_name = f"({_(s['token_limit_name'])})"
    dropped = (ngettext("The last turn or change of memory trimmed {n} message: struck "
                        "through below.",
                        "The last turn or change of memory trimmed {n} messages: struck "
                        "through below.",
                        s["dropped"]).format(n=s["dropped"]) if s["dropped"]
               else _("The last turn or change of memory trimmed nothing."))
    view = show_messages(state.window(), dropped=state.trimmed)
    n = len(memory.tape)
    stored = ("" if state.store is None else
              f'<div style="color:{GREY}">' + _esc(ngettext(
                  "Stored: {n} message in session {title} (the whole log); sent: the window "
                  "below.",
                  "Stored: {n} messages in session {title} (the whole log); sent: the window "
                  "below.", n).format(n=n, title=state.session_title)) + '</div>')
    heading = _esc(_("Memory: {memory}").format(memory=state.strategy.label(state.budget)))
    messages = gauge_html(_("Messages"), s["messages"], s["max_messages"])
    tokens = gauge_html(_("Tokens"), s["tokens"], s["token_limit"], limit_name)
    for_tools = _esc(_("the next request, {n} of them for the tool definitions").format(
        n=s["tool_tokens"]))
    return (f'<div style="zoom:{state.scale};font:14px/1.35 {SANS};color:{INK};'
            'text-align:left">'
            f'<div style="font-weight:700;font-size:16px">{heading}</div>'
            f'<div style="color:{GREY}">{_esc(state.strategy.what_it_drops())}</div>{stored}'
            f'{messages}{tokens}<div style="color:{GREY}">{for_tools}'
            f'</div>{_validity_html(s["problems"])}'
            f'<div style="margin:4px 0">{_esc(dropped)}</div>{view._repr_html_()}'
            f'{longterm_html(state)}</div>')


def longterm_html(state: ChatAppState) -> str:
    """With long-term memory: how many memories there are, and the last request as it was
    sent, its context message marked: it was sent, never stored ("" without longterm)."""
    if state.longterm is None:
        return ""
    try:
        n = len(state.longterm)
        count = ngettext("{n} memory", "{n} memories", n).format(n=n)
    except Exception:  # noqa: BLE001  (a store that cannot be read: the count is left out)
        count = _("memories")
    agent = state.agent
    head = ('<div style="margin-top:8px;font-weight:700">'
            + _esc(_("Long-term memory: {count} of {user}").format(
                count=count, user=state.longterm.user_id)) + '</div>')
    if agent.last_context is None:
        said = (_("nothing was recalled for the last message, so its requests were the memory "
                  "above.") if agent.last_request else _("each message's requests will carry "
                                                         "what is recalled for it, shown here "
                                                         "once it is sent."))
        return f'{head}<div style="color:{GREY}">{_esc(said)}</div>'
    request = agent.last_request
    at = next((i for i, m in enumerate(request) if m == agent.last_context), None)
    n = len(agent.last_recalled)
    said = (f'<div style="color:{GREY}">' + _esc(ngettext(
        "Recalled for the last message: {n} memory, {tokens} tokens (budget {budget}). The "
        "memory above does not hold it; the next message gets its own.",
        "Recalled for the last message: {n} memories, {tokens} tokens (budget {budget}). The "
        "memory above does not hold it; the next message gets its own.", n).format(
            n=n, tokens=count_request([agent.last_context]), budget=state.longterm_budget))
        + '</div>')
    if at is None:  # recalled, and its first request not sent yet (the view is mid-turn)
        return head + said
    view = show_messages(request, highlight=at, title=_(
        "The last request as it was sent: message {at} (highlighted) is long-term memory's "
        "context, made for the latest message — sent, NOT stored").format(at=at))
    return f'{head}{said}<div class="lesson-chat-sent">{view._repr_html_()}</div>'


def profile_html(state: ChatAppState) -> str:
    """The profile panel: each fact on a line, its history on hover (and a count of the
    values it replaced)."""
    facts, history = state.profile(), state.profile_history()
    head = ('<div style="font-weight:700">'
            + _("Profile of {user}").format(user=_esc(state.user)) + '</div>'
            f'<div style="color:{GREY}">'
            + html.escape(_("What the system prompt of every request says, as it is now; "
                             "the model adds to it with remember_preference.")
                           if state.longterm is not None else
                           _("What every new session's system prompt reads; the model adds to "
                             "it with remember_preference."), quote=False) + '</div>')
    if not facts:
        body = (f'<div style="color:{GREY}">'
                + html.escape(_("Nothing known yet. Try “I'm vegetarian”."), quote=False)
                + '</div>')
    else:
        items = []
        for key, value in facts.items():
            past = history.get(key, [])
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            was = (f' <span style="color:{GREY}">'
                   + _esc(ngettext("(replaced {n} value)", "(replaced {n} values)",
                                   len(past) - 1).format(n=len(past) - 1))
                   + '</span>' if len(past) > 1 else "")
            items.append(f'<li title="{_esc(chr(10).join(past))}"><b>{_esc(key)}</b>: '
                         f'{_esc(shown)}{was}</li>')
        body = f'<ul style="margin:2px 0;padding-left:18px">{"".join(items)}</ul>'
    return (f'<div style="zoom:{state.scale};font:14px/1.35 {SANS};color:{INK};'
            f'text-align:left;border:1px solid #d1d5db;border-radius:6px;padding:4px 8px;'
            f'margin-bottom:6px">{head}{body}</div>')


# ----------------------------------------------------------------- the widget

class ChatAppView(ShownAsWidget):
    """The chat app's widgets. Each callback calls one ChatAppState method, then refresh()."""

    def __init__(self, state: ChatAppState):
        import ipywidgets as w  # noqa: PLC0415  (lazy: widgets only when the app is shown)

        self.state, self._quiet = state, False
        self.chat, self.memory, self.status = w.HTML(), w.HTML(), w.HTML()
        self.text = w.Text(placeholder=_("Type a message and press Enter (or /clear)"),
                           continuous_update=False, layout=w.Layout(width="100%"))
        self.send_button = w.Button(description=_("Send"), button_style="primary")
        self.clear_button = w.Button(description="/clear")
        left = [self.chat, w.HBox([self.text, self.send_button, self.clear_button]),
                self.status, self._controls(w)]
        right = [self.memory]
        self.stored = state.store is not None  # the session row and the profile, if so
        if self.stored:
            left.insert(0, self._session_controls(w))
            right.insert(0, self.profile)
        self.root = w.HBox([w.VBox(left, layout=w.Layout(width="55%")),
                            w.VBox(right, layout=w.Layout(width="45%"))])
        self._wire()
        self._enlarge(self.text, self.send_button, self.clear_button)
        for widget, name in ((self.root, "app"), (self.text, "input"), (self.chat, "chat"),
                             (self.send_button, "send"), (self.clear_button, "clear"),
                             (self.memory, "memory")):
            widget.add_class(f"lesson-chat-{name}")  # handles for browser tests
        state.on_change = self.refresh_panels
        self.refresh()

    def _controls(self, w: Any) -> Any:
        """The settings: strategy and budget, tools, max_turns, backend, a fault to inject."""
        s = self.state
        wide = {"style": {"description_width": "initial"}}
        self.strategy = w.Dropdown(options=list(STRATEGIES), description=_("Memory"), **wide)
        self.budget = w.IntSlider(continuous_update=False, description="budget", **wide)
        self.tools = {n: w.Checkbox(description=n, indent=False) for n in s.registry.names()}
        self.max_turns = w.BoundedIntText(min=1, max=50, description="max_turns",
                                          layout=w.Layout(width="160px"), **wide)
        self.backend = w.Dropdown(options=[(label, name) for name, label in
                                           available_backends().items()], description=_("Model"),
                                  layout=w.Layout(width="380px"), **wide)
        self.fault = w.Dropdown(options=list(FAULTS), description=_("Fault"), **wide)
        self.fault_button = w.Button(description=_("Inject fault"))
        return w.VBox([w.HBox([self.strategy, self.budget]),
                       w.HBox([w.Label(_("Tools:")), *self.tools.values()]),
                       w.HBox([self.max_turns, self.backend]),
                       w.HBox([self.fault, self.fault_button])])

    def _session_controls(self, w: Any) -> Any:
        """With a store: pick a session, start one, delete the open one; and the profile."""
        self.session_pick = w.Dropdown(description=_("Session"), layout=w.Layout(width="300px"),
                                       style={"description_width": "initial"})
        self.session_name = w.Text(placeholder=_("new session name"), continuous_update=False,
                                   layout=w.Layout(width="160px"))
        self.new_button = w.Button(description=_("New"), layout=w.Layout(width="60px"))
        self.delete_button = w.Button(description=_("Delete"), button_style="danger",
                                      tooltip=_("Delete this session for good (press twice)"))
        self.profile = w.HTML()
        row = w.HBox([self.session_pick, self.session_name, self.new_button, self.delete_button])
        for widget, name in ((row, "sessions"), (self.session_pick, "session-pick"),
                             (self.session_name, "session-name"), (self.new_button, "new"),
                             (self.delete_button, "delete"), (self.profile, "profile")):
            widget.add_class(f"lesson-chat-{name}")
        return row

    def _wire_sessions(self) -> None:
        s = self.state
        self.session_pick.observe(lambda c: self._do(s.open_session, c["new"]), "value")
        self.session_name.observe(lambda c: self._new(c["new"]), "value")
        self.new_button.on_click(lambda _button: self._new(self.session_name.value))
        self.delete_button.on_click(lambda _button: self._do(s.forget, s.forget_pending))

    def _new(self, title: str) -> None:
        """Enter in the name box, or New: start the session, and empty the box."""
        if self._quiet or not title.strip():
            return
        self.set_quietly(self.session_name, "value", "")
        self._do(self.state.new_session, title)

    def _enlarge(self, *widgets: Any) -> None:
        """Larger type in the input and its buttons, by the state's scale (the chat and the
        inspector are HTML, zoomed as a whole)."""
        scale = self.state.scale
        if scale != 1:
            for widget in widgets:
                widget.style.font_size = f"{round(13 * scale)}px"  # JupyterLab's is 13px
                widget.layout.height = f"{round(28 * scale)}px"

    def _wire(self) -> None:
        s = self.state
        self.text.observe(lambda change: self._send(change["new"]), "value")
        self.send_button.on_click(lambda _button: self._send(self.text.value))
        self.clear_button.on_click(lambda _button: self._do(s.clear))
        self.strategy.observe(lambda c: self._do(s.set_strategy, c["new"]), "value")
        self.budget.observe(lambda c: self._do(s.set_budget, c["new"]), "value")
        for name, box in self.tools.items():
            box.observe(lambda c, name=name: self._do(s.toggle_tool, name, c["new"]), "value")
        self.max_turns.observe(lambda c: self._do(s.set_max_turns, c["new"]), "value")
        self.backend.observe(lambda c: self._do(s.set_backend, c["new"]), "value")
        self.fault_button.on_click(lambda _button: self._do(s.inject_fault, self.fault.value))
        if self.stored:
            self._wire_sessions()

    def _do(self, action: Callable, *args: Any) -> None:
        """Run a state method for a control the learner changed (not for refresh()'s own
        updates), then show the result."""
        if self._quiet:
            return
        try:
            action(*args)
        except Exception as error:  # a last guard: a notice, never a traceback
            self.state.post("notice", *describe_error(error, self.state._sent()))
        self.refresh()

    def _send(self, text: str) -> None:
        """Enter (the text's value arrives) or Send: run the turn with the input locked."""
        if self._quiet or not text.strip():
            return
        self.set_quietly(self.text, "value", "")
        self.text.disabled = self.send_button.disabled = True
        thinking = _esc(_("thinking…"))
        self.status.value = f'<span style="color:{GREY}">{thinking}</span>'
        try:
            self._do(self.state.send, text)
        finally:
            self.text.disabled = self.send_button.disabled = False

    def set_quietly(self, widget: Any, name: str, value: Any) -> None:
        """Set a widget trait without running the callback (refresh() and tests use it)."""
        self._quiet = True
        try:
            setattr(widget, name, value)
        finally:
            self._quiet = False

    def refresh_panels(self) -> None:
        """Redraw the chat and the inspector, and make the controls show the state (also
        called live, as each tool runs, and when code changes the state)."""
        self.refresh_controls()
        self.chat.value = self.state.chat_html()
        self.memory.value = self.state.memory_html()

    def refresh_controls(self) -> None:
        """Make every control show the state, without running its callback. The slider's
        range and value go to the browser in one message (hold_sync): sent one by one, the
        browser clamps the old value into the new range and sends that back as a change."""
        s = self.state
        self.set_quietly(self.strategy, "value", s.strategy.name)
        self._quiet = True
        try:
            with self.budget.hold_sync(), self.budget.hold_trait_notifications():
                self.budget.min = min(s.strategy.low, s.budget)
                self.budget.max = max(s.strategy.high, s.budget)
                self.budget.step, self.budget.value = s.strategy.step, s.budget
            self.budget.description = s.strategy.budget_name
            for name, box in self.tools.items():
                box.value = name in s.tool_names
            self.max_turns.value, self.backend.value = s.max_turns, s.backend
        finally:
            self._quiet = False
        self.fault.disabled = self.fault_button.disabled = s.backend != "offline"
        if self.stored:
            self.refresh_sessions()

    def refresh_sessions(self) -> None:
        """The session menu (the open one chosen), the Delete button, the profile panel."""
        s = self.state
        options = [(f"{i.title or i.session_id} ("
                    + ngettext("{n} message", "{n} messages", i.message_count).format(
                        n=i.message_count) + ")", i.session_id) for i in s.sessions()]
        if s.session_id not in [value for _label, value in options]:
            options.insert(0, (s.session_title, s.session_id))
        self._quiet = True
        try:
            with self.session_pick.hold_sync():
                self.session_pick.options = options
                self.session_pick.value = s.session_id
        finally:
            self._quiet = False
        self.delete_button.description = _("Delete for good?") if s.forget_pending else _("Delete")
        self.profile.value = s.profile_html()

    def refresh(self) -> None:
        """Make every control show the state, then redraw."""
        label = available_backends().get(self.state.backend, self.state.backend)
        ready = _esc(_("Ready · {backend}").format(backend=label))
        self.status.value = f'<span style="color:{GREY}">{ready}</span>'
        self.refresh_panels()

    def to_recording(self, title: str | None = None) -> Recording:
        """This conversation for the stepper: `stepper(app)` replays it."""
        return self.state.to_recording(title)



def chat_app(**settings: Any) -> ChatAppView:
    """The chat app. `settings` are ChatAppState's (strategy, budget, tools, max_turns,
    backend, registry, system_prompt, scale; store, user, session; longterm,
    longterm_budget, longterm_tools); the state is `chat_app().state`.
    On a projector: `chat_app(scale=1.5)`. With long-term memory:
    `chat_app(longterm=LongTermMemory(store, "xiaoming"))`."""
    return ChatAppView(ChatAppState(**settings))
