"""A scripted model for the checks: its replies are written in advance, every request is kept.

A check that judges an agent or a loop needs replies it can count on ("answer in words",
"call get_current_weather for Chengdu and Beijing", "never stop asking for tools"), whatever
model the notebook uses. `ScriptedClient` speaks the Chat Completions API the way the
`openai` SDK's client does (`client.chat.completions.create(**request)` returns a genuine
`ChatCompletion`), answers each request with the next reply of its script, and keeps a copy
of every request (messages and tools). No model, no network: the same verdict for everyone.

    script = Script()
    script.calls(("get_current_weather", {"location": "Chengdu"}))  # reply 1: one tool call
    script.answer("Chengdu is cloudy, 16°C.")                       # reply 2: words
    client = ScriptedClient(script)
    ... the learner's code runs, with client ...
    client.requests[1].tools   # None: the second request offered no tools

The scripted model behaves as a real one where a check needs it to: a reply may carry text
beside its calls (`script.calls(..., content="Let me check.")`, as real models sometimes
write), and it refuses, as the API does, a request whose `tools` or
`tool_choice` the API refuses (`tool_choice` without `tools`, `tools=[]` …): a genuine
`openai.BadRequestError` with the API's own text (lesson_lib.protocol.check_tools), the
request still kept, the refusal in `client.refused`. It does not judge the messages: the
checks' rules look at them, and say what is wrong in the lesson's words.

`answering(client, stray=StrayClient())` makes a client the shared one for a block, or, with
`stray`, makes a client that refuses every call the shared one, so that code that ignores the
client it was given (`chat(...)` without `client=`) is caught: `stray.calls` says how often.

`WatchedTools` is a ToolRegistry that writes down every call it runs (and can be told to
fail at one, as a tool interrupted halfway would). At the end, two rules that notebooks 05
(Agent.chat) and 06 (the loop) share, on the list the code left behind: the call stored
before its results, and one tool message per call.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from lesson_lib.exercises.contract import expect
from lesson_lib.i18n import _, by_language, ngettext
from lesson_lib.tools import WEATHER_TOOL, ToolRegistry, get_current_weather

MODEL = "scripted-model"  # the model name the checks' requests carry
LIMIT = 50                # model calls a check allows before it stops a loop that never ends


class ScriptEnded(Exception):
    """The code asked the scripted model once more after its script's last reply."""


class TooManyCalls(Exception):
    """The code made more than `limit` model calls: a loop that does not stop."""


class ToolCrashed(Exception):
    """Raised by WatchedTools at the call it was told to fail (a tool interrupted halfway)."""


class StrayCall(Exception):
    """A model call went to the shared client, not to the one the code was given."""


def call_id(n: int) -> str:
    """The id of the scripted model's n-th tool call: looks like the API's, and is fixed."""
    return "call_" + hashlib.sha256(f"scripted {n}".encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: str  # the JSON string, as the API sends it


@dataclass(frozen=True)
class Reply:
    """One reply of the scripted model: words, or tool calls (content None, as the API sends
    them, or a sentence beside them)."""
    content: str | None = None
    calls: tuple[Call, ...] = ()

    def message(self) -> dict:
        """The assistant message as the API sends it (as a plain dict)."""
        item: dict = {"role": "assistant", "content": self.content}
        if self.calls:
            item["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}}
                                  for c in self.calls]
        return item

    def __str__(self) -> str:
        if self.calls:
            return ngettext("{n} tool call", "{n} tool calls", len(self.calls)).format(
                n=len(self.calls))
        return repr(self.content)


@dataclass
class Script:
    """The scripted model's replies, in order; tool call ids are numbered as they are made."""
    replies: list[Reply] = field(default_factory=list)
    made: int = 0  # tool calls made so far (their ids are call_id(1), call_id(2), ...)

    def answer(self, text: str | None) -> Reply:
        """A reply in words; None: a reply with neither words nor calls (content None)."""
        return self._add(Reply(text))

    def calls(self, *calls: tuple[str, dict], content: str | None = None) -> Reply:
        """A reply asking for tools: (name, arguments) pairs, in one assistant message;
        `content`, a sentence the model writes beside them (None: no text, as usual)."""
        return self._add(Reply(content, tuple(self.call(name, args) for name, args in calls)))

    def call(self, name: str, arguments: dict) -> Call:
        self.made += 1
        return Call(call_id(self.made), name, json.dumps(arguments, ensure_ascii=False))

    def _add(self, reply: Reply) -> Reply:
        self.replies.append(reply)
        return reply


def copied(value: Any) -> Any:
    """A deep copy of messages: dicts and lists copied, strings and numbers shared (they
    cannot change), anything else (an SDK object) deep-copied. Much faster than deepcopy."""
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copied(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return copy.deepcopy(value)


@dataclass(frozen=True)
class Request:
    """What one request sent: its messages and tools (None when no tools were offered)."""
    messages: list
    tools: list | None
    body: dict  # every field of the request, as given


def _refused(problem: Any) -> Exception:
    """The genuine openai.BadRequestError the SDK raises for the API's 400 `problem` (a
    ProtocolError): the same message, body, code and param."""
    import httpx  # noqa: PLC0415  (lazy, as openai)
    import openai  # noqa: PLC0415

    body = problem.body()
    response = httpx.Response(problem.status, json=body, request=httpx.Request(
        "POST", "http://127.0.0.1/v1/chat/completions"))  # never sent: the model is scripted
    return openai.BadRequestError(f"Error code: {problem.status} - {body}", response=response,
                                  body=body["error"])


def tools_refused(schemas: list[dict]) -> str | None:
    """The API's 400 for these tool schemas (as the scripted model would answer it), or
    None when the API takes them: a check says so before it runs an agent with them."""
    from lesson_lib.protocol import ProtocolError, check_tools  # noqa: PLC0415

    try:
        check_tools(schemas, None)
    except ProtocolError as problem:
        return f"{problem.message} ({problem.explanation})" if problem.explanation \
            else problem.message
    return None


def _completion(reply: Reply, n: int) -> Any:
    from openai.types.chat import ChatCompletion  # noqa: PLC0415  (lazy: openai is slow)

    return ChatCompletion.model_validate({
        "id": f"chatcmpl-scripted-{n}", "object": "chat.completion", "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "message": reply.message(), "logprobs": None,
                     "finish_reason": "tool_calls" if reply.calls else "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})


class ScriptedClient:
    """A Chat Completions client whose model answers from a script (see the module's doc).

    forever: when the script is used up, the reply for each further request (made by
    forever(the script), e.g. one more tool call); without it, a further request raises
    ScriptEnded. Requests beyond `limit` raise TooManyCalls."""

    def __init__(self, script: Script | Iterable[Reply], *,
                 forever: Callable[[Script], Reply] | None = None, limit: int = LIMIT):
        self.script = script if isinstance(script, Script) else Script(list(script))
        self.forever, self.limit = forever, limit
        self.requests: list[Request] = []
        self.refused: list[tuple[int, Any]] = []  # (request number, the API's ProtocolError)
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **body: Any) -> Any:
        from lesson_lib.protocol import ProtocolError, check_tools  # noqa: PLC0415

        tools = body.get("tools")
        self.requests.append(Request(copied(list(body.get("messages") or [])),
                                     copied(tools) if tools is not None else None,
                                     dict(body)))
        n = len(self.requests)
        try:
            check_tools(tools, body.get("tool_choice"))
        except ProtocolError as problem:  # the API's 400, before any model sees the request
            self.refused.append((n, problem))
            raise _refused(problem) from None
        if n > self.limit:
            raise TooManyCalls(_("model call {n} refused by the check: {limit} model calls "
                                 "were made and the code did not stop").format(
                                     n=n, limit=self.limit))
        if n <= len(self.script.replies):
            return _completion(self.script.replies[n - 1], n)
        if self.forever is None:
            had = len(self.script.replies)
            raise ScriptEnded(ngettext("model call {n}: the check's model had only {had} reply "
                                       "to give",
                                       "model call {n}: the check's model had only {had} "
                                       "replies to give", had).format(n=n, had=had))
        self.script.replies.append(self.forever(self.script))
        return _completion(self.script.replies[-1], n)


class StrayClient:
    """A client that refuses every call (StrayCall) and counts them: made the shared one
    while code runs that was given a client of its own, it catches a call that ignores it."""

    def __init__(self) -> None:
        self.calls = 0
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **body: Any) -> Any:  # noqa: ARG002  (whatever was sent, refused)
        self.calls += 1
        raise StrayCall(_("a model call went to the shared client: chat(...) was called "
                          "without client=self.client"))


@contextmanager
def answering(client: ScriptedClient, stray: StrayClient | None = None):
    """Make `client` the shared one for the block, so chat() without client= reaches it;
    with `stray`, make `stray` the shared one instead, so such a call is caught."""
    from lesson_lib.llm import using_client  # noqa: PLC0415

    with using_client(stray if stray is not None else client, MODEL):
        yield client


# ----------------------------------------------------------------- tools that are watched

class WatchedTools(ToolRegistry):
    """A ToolRegistry that writes down every call it runs (`ran`: (name, arguments) pairs).
    crash_at=k: the k-th call raises ToolCrashed instead of running."""

    def __init__(self, crash_at: int | None = None):
        super().__init__()
        self.ran: list[tuple[str, str]] = []
        self.crash_at = crash_at

    def execute(self, name: str, arguments_json: str) -> str:
        self.ran.append((name, arguments_json))
        if self.crash_at == len(self.ran):
            raise ToolCrashed(_("the check stopped tool call {n} halfway (as a Ctrl-C or a "
                                "crash would)").format(n=self.crash_at))
        return super().execute(name, arguments_json)


_WEATHER = ToolRegistry()
_WEATHER.register(get_current_weather, WEATHER_TOOL)


def weather_tools(crash_at: int | None = None) -> WatchedTools:
    """The checks' tools: the seed's weather tool (simulated data, the same every time)."""
    tools = WatchedTools(crash_at)
    tools._tools = dict(_WEATHER._tools)  # registered once: checking a schema takes a while
    return tools


CITIES = ("Chengdu", "Beijing", "Shanghai", "Guangzhou", "Hangzhou", "Shenzhen")
CITIES_ZH = ("成都", "北京", "上海", "广州", "杭州", "深圳")  # the same cities, as a Chinese user names them


def weather_calls(n: int, start: int = 0) -> list[tuple[str, dict]]:
    """n weather calls, for n different cities (named in the learner's language)."""
    cities = by_language(CITIES, CITIES_ZH)
    return [("get_current_weather", {"location": cities[(start + k) % len(cities)]})
            for k in range(n)]


# ----------------------------------------------------------------- showing messages

def field_of(obj: Any, name: str) -> Any:
    """obj[name] for a dict, obj.name for an SDK object (None when it has no such field)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def parsed(text: Any) -> Any:
    """JSON text (a call's arguments, a tool's result) as the value it holds; anything that
    is not JSON as it is."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _short(text: Any, limit: int = 28) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def label(message: Any) -> str:
    """One message in a few words: user 'hi', assistant→2 calls, tool→call_1a2b…, or the
    name of an object that is not a dict."""
    if not isinstance(message, dict):
        return _("{kind} object").format(kind=type(message).__name__)
    role = message.get("role")
    if role == "assistant" and message.get("tool_calls"):
        ids = ", ".join(_short(field_of(c, "id"), 12) for c in message["tool_calls"])
        return f"assistant(tool_calls: {ids})"
    if role == "tool":
        return f"tool({_short(message.get('tool_call_id'), 12)})"
    if role == "system":
        return "system"
    return f"{role} {_short(message.get('content'))!r}" if message.get("content") else str(role)


def labels(messages: Any) -> str:
    """A list of messages in a few words each: [system, user 'hi', assistant 'hello']."""
    try:
        return "[" + ", ".join(label(m) for m in messages) + "]"
    except TypeError:
        return repr(messages)


def first_problem(messages: Any) -> str | None:
    """The first reason the API would refuse `messages`, on one line (None: it would not)."""
    from lesson_lib.protocol import find_problems  # noqa: PLC0415

    problems = find_problems(messages)
    return problems[0].message if problems else None


def tool_names(tools: Any) -> str:
    """A tools list by its names, [get_current_weather]; None (no tools offered) as None."""
    try:
        return "[" + ", ".join(t["function"]["name"] for t in tools) + "]"
    except (TypeError, KeyError):
        return repr(tools)


def normalized(message: Any) -> Any:
    """A message as the checks compare it: an assistant dict as assistant_to_dict has it (so
    None content is ""), any other dict as it is, and an object by its type (it should have
    been a dict)."""
    from lesson_lib.protocol import assistant_to_dict  # noqa: PLC0415

    if not isinstance(message, dict):
        return f"a {type(message).__name__} object"
    return assistant_to_dict(message) if message.get("role") == "assistant" else message


# ----------------------------------------------------------------- what a tool round left
#
# Two rules notebooks 05 (Agent.chat writes the memory) and 06 (my_loop appends to messages)
# share, judged on the list the code left behind. `holder` is what the report calls that
# list: "the memory" or "messages".

def call_index(messages: list) -> int | None:
    """Where the first assistant message with tool_calls stands (None: there is none)."""
    return next((i for i, m in enumerate(messages)
                 if field_of(m, "role") == "assistant" and field_of(m, "tool_calls")), None)


def expect_call_before_results(messages: list, asked: str, after: str, holder: str) -> None:
    """Broken unless the assistant message with the tool_calls is in `messages`, before the
    tool messages. `asked` says what the model asked for ("2 tool calls"), `after` when the
    list was read ("after chat()")."""
    at = call_index(messages)
    results = [i for i, m in enumerate(messages)
               if isinstance(m, dict) and m.get("role") == "tool"]
    expect(at is not None,
           (_("the model asked for {asked}; {after} {holder} holds {messages}: the assistant "
              "message with the tool_calls is not in it (its results are there alone)")
            if results else
            _("the model asked for {asked}; {after} {holder} holds {messages}: the assistant "
              "message with the tool_calls is not in it")).format(
                  asked=asked, after=after, holder=holder, messages=labels(messages)))
    expect(not results or at < results[0],
           _("{holder} holds {messages}: the results come before the call they answer").format(
               holder=holder, messages=labels(messages)))


def expect_each_call_answered(messages: list, asked: Reply, holder: str,
                              shorten: Callable[[Any], str]) -> None:
    """Broken unless, right after the call stored in `messages` (call_index must find one),
    each call of `asked` has one tool message, with its id and what the tool returned (the
    weather tool, run again here). A wrong result is shown as shorten(it) says."""
    after = []
    for m in messages[call_index(messages) + 1:]:
        if not (isinstance(m, dict) and m.get("role") == "tool"):
            break
        after.append(m)
    want = {c.id: weather_tools().execute(c.name, c.arguments) for c in asked.calls}
    got = [m.get("tool_call_id") for m in after]
    expect(sorted(map(str, got)) == sorted(want),
           _("the assistant message asks for {n} calls ({ids}); right after it {holder} holds "
             "{messages} with tool_call_id {got}").format(
                 n=len(want), ids=", ".join(want), holder=holder, messages=labels(after),
                 got=got) if after else
           _("the assistant message asks for {n} calls ({ids}); right after it {holder} holds "
             "no tool message").format(n=len(want), ids=", ".join(want), holder=holder))
    wrong = [m for m in after if m.get("content") != want[m["tool_call_id"]]]
    expect(not wrong, _("the tool message for {id} holds {content}, not what the tool "
                        "returned").format(
                            id=wrong[0]["tool_call_id"] if wrong else "",
                            content=repr(shorten(wrong[0].get("content")) if wrong else "")))
