"""The offline teaching model's reply logic: a rule-based stand-in, not a language model.

`reply(body)` reads one Chat Completions request body (already validated) and
returns the assistant message a tool-calling model might send. It is pure and
deterministic: the same body always gives the same reply, call ids included,
and nothing is remembered between calls. Like a real model it only knows what
`body["messages"]` says; unlike one, it follows a handful of readable rules:

1. The *current request* is the latest user message; assistant tool calls and
   tool results after it belong to the current turn. Replies are in Chinese
   when that message has Chinese characters, else in English.
2. A request to summarise the conversation (in the latest user or system
   message) gets a fixed-form summary of the messages before it. A conversation
   pasted as text ("User: …" / "Assistant: …" lines, transcript.py) is summarised
   instead when it is in the message that asks, or is the user's message after a
   system message that asks ("Summarize the following conversation."); that summary
   says what the assistant answered too.
3. The request is cut into clauses ("weather in Chengdu and the time in New
   York" is two). Each clause gets the offered tool whose name, description
   and parameters share the most words with it (understand.score), if any
   fits; a word shared with a tool's name counts most, and a number with a
   unit and no place ("16 °C in Fahrenheit") favours a converter, and so do
   typed values only a tool takes (a route, a code shaped like its example).
   Arguments come from the user's words by what each parameter's schema asks
   for (type, format, enum, description, name; understand.param_kind and
   slots.py): places, time zones, dates ("tomorrow", "3月15日", from the
   clock), times, numbers by their unit ("3 nights", "两晚"), currencies
   ("美元" → USD), codes shaped like the schema's example (AAPL, CA981),
   e-mail addresses, languages (as a code or a name), "from X to Y", enum
   values by their synonyms ("miles" → mile; for from/to pairs, by the side
   they are said on: "100 °F to Celsius"), an expression, then free text from
   what no other parameter took. Values the words mark out are read first
   (spans.py): by their shape (a URL, "owner/name", a file name, a phone number,
   "#channel", an address) and by their cue ("labelled gym", "subject: X",
   "from Jake", "姓王", "春熙路附近", "备注聚餐"). A value is found or it is not,
   never guessed: a required one not found is asked for (rule 6), naming it in
   the user's language, instead of calling with a wrong value; a parameter that
   takes only a marked value (a person, a repository, a place to search around)
   is never filled from the rest of the sentence.
   One call per place: "Shanghai and Beijing weather" is two calls. A time
   zone a clause writes out wins over the places ("..., and the time in UTC").
   A place is sent as the user wrote it: "成都" when typed in Chinese (the
   seed tools take both), else its canonical English name ("chengdu", "NYC"
   → "Chengdu", "New York"); a city the gazetteer lacks is passed on as written
   ("weather in Oslo and Rome" is two calls), except for a time zone, which
   is then asked for (the default zone would be wrong).
4. Calls already answered in this turn are not repeated. A clause that says
   "there" after "which is warmer, A or B?" waits for those results and uses
   the winner. "Keep checking ... until it is sunny" calls again while the
   latest result is not sunny. A follow-up that needs no tool of its own and
   names only a place or a time zone ("上海呢？", "What about Tokyo?") calls
   the tool of the last call before it again, for that place.
5. `tool_choice` is obeyed: "none" never calls; "required" always calls, even
   after results (as with the real API, a loop that keeps sending "required"
   never ends by itself); {"type": "function", ...} calls that function. A
   forced call cannot ask back: a required argument the words do not give
   gets a typed best-effort value (understand.best_effort), never "{}".
   `parallel_tool_calls: false` sends only the first call (the next comes on
   the next request).
6. With nothing left to call, the answer is written from the tool results of
   this turn (matched to calls by tool_call_id; a comparison ranks only the
   results of the calls its own clause asked for), or it asks for a missing
   required argument, or it answers a comparison that names no place ("Which
   one is warmer?") from the results of earlier turns, or it answers the
   name question, greeting or thanks,
   or says honestly what it cannot do (answer.py holds every sentence).
   A handoff (a call to transfer_to_<agent>, as the Agents SDK and LangGraph name them)
   is no result to report: the agent handed to answers the request itself, with its own
   instructions and tools, and hands off no further in that turn; with nothing else to
   say it says who it is.
7. A profile tool (remember_preference; any tool that keeps a fact under a key such as
   "diet", see understand.keeper_of) is never chosen by shared words. It is called once
   for each lasting preference the request states ("I'm vegetarian", "我不吃辣", "call me
   Xiaoming", "use Fahrenheit", "请用中文回答", "I'm working on a trip planner"), before
   the calls the rest of the message needs; a one-off ("the weather in Fahrenheit today")
   states nothing. The answer says what was kept ("Noted: you're vegetarian. I'll
   remember that.") and, if nothing answers the rest, says so.
8. A profile in a system message ("What you know about this user: name: Xiaoming;
   units: fahrenheit", lesson_lib.profile's as_prompt()) is used like the user's own
   words, and what user messages state overrides it: an enum the request does not name
   takes the preferred value (the weather in Fahrenheit), the name question is answered
   from it ("Your profile says your name is Xiaoming."), and so is a question about a
   key it holds ("Am I vegetarian?" / "我吃素吗？" → "Your profile says you're
   vegetarian." / "你的资料里写着：你吃素。"; understand.asked_preferences; what a user
   message of the conversation stated wins: "You told me …"); "language: Chinese" makes
   the replies Chinese. A question states nothing ("我吃素吗？" keeps no diet).

9. Long-term memory in the request (recall.py): lines "- 2026-03-15 [user, s-0315] text"
   in a system message (lesson_lib.longterm.context_message) or the memories of a
   search_memory result. A question is answered from the memory that answers it (word
   share plus the offline embedder's cosine, every name the question names present),
   saying where it comes from ("You told me on 2026-03-15: ..."); the newer of two
   memories about the same thing wins and the answer names the older one; with none,
   "I don't know", never a guess.
10. Memory tools (search_memory / save_memory, recognised by their names): a question
   nothing else answers gets one search_memory call with the question as its query (a
   question about the past, "What did we decide last week ...?", is never sent to another
   tool for a shared word); a statement that says "remember ...", states a decision or a
   lasting preference gets one save_memory call with the user's own words.

This module must not import openai, httpx2, lesson_lib.tools, memory, agent
or llm: the offline model depends on protocol, tokens, places and clock, and for
reading memories on lesson_lib.terms and its own embedder (lesson_lib.embeddings).
benchmarks/tool_bank.py scores the argument filling on 60 invented tools, and
benchmarks/unseen_tools.py on 48 more, written blind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.offline import answer, recall, transcript
from lesson_lib.offline import understand as u
from lesson_lib.offline.ids import make_id
from lesson_lib.places import lookup


@dataclass
class Call:
    """A tool call: planned by the brain, or already made in this turn (then with id/result)."""
    name: str
    arguments: dict
    id: str | None = None
    result: str | None = None   # the tool message's content, once it came back
    until: str | None = None    # repeat while the result's condition is not this one


@dataclass
class Turn:
    """The current request and what happened after it."""
    request: str                # text of the latest user message ("" if there is none)
    lang: str                   # "en" or "zh"
    name: str | None            # the user's name, if a user message said it
    calls: list[Call] = field(default_factory=list)  # calls made after the request
    asked_back: str = ""        # the user message before, when the assistant answered it
                                # with a question ("Which city?"): "成都" completes "查天气"
    called_before: str = ""     # the function of the last tool call before the request:
                                # "上海呢？" after a weather answer asks for the weather again
    prefer: dict = field(default_factory=dict)  # lasting preferences: the profile in a system
                                # message, then what user messages stated (the latest wins)
    name_from_profile: bool = False  # the name is known from the profile only
    profile: dict = field(default_factory=dict)  # the profile a system message carries
    stated: dict = field(default_factory=dict)   # what user messages stated (the latest wins)
    earlier: list[Call] = field(default_factory=list)  # answered calls before the request:
                                # "Which one is warmer?" after a weather answer ranks them
    memories: list[recall.Remembered] = field(default_factory=list)  # long-term memory lines
                                # in system messages (rule 9)
    handed_to: str = ""         # the agent this turn was handed to (rule 6), if any

    def answered(self) -> list[Call]:
        return [c for c in self.calls if c.result is not None]


@dataclass
class Plan:
    """What the current request needs, as far as can be seen now."""
    calls: list[Call] = field(default_factory=list)
    asks: list[tuple[Any, str]] = field(default_factory=list)  # (tool, required param) unfilled
    comparison: u.Comparison | None = None  # "which is warmer?", if a clause asks it
    compared: list[Call] = field(default_factory=list)  # the calls planned for that clause


@dataclass
class Step:
    """One clause of the request and the calls planned for it, each with its place."""
    clause: u.Clause
    planned: list[tuple[u.Target | None, Call]]


# ------------------------------------------------------------------ the reply

def reply(body: dict) -> dict:
    """The assistant's reply to a (validated) request body:
    {"message": {"role": "assistant", "content": ..., ["tool_calls": [...]]},
     "finish_reason": "stop" | "tool_calls"}."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    tools = [t for t in body.get("tools") or [] if u.tool_name(t)]
    choice = body.get("tool_choice") or "auto"
    turn = read_turn(messages)
    if turn.handed_to:  # one handoff a turn: the agent handed to answers
        tools = [t for t in tools if not HANDOFF.match(u.tool_name(t))]
    asked_at = summary_request(messages)
    must_call = bool(tools) and (choice == "required" or isinstance(choice, Mapping))
    summarised = None if must_call else to_summarise(messages, asked_at)
    if summarised is not None:
        return say(summarise(*summarised, turn.lang))
    plan = make_plan(turn, planned_with(turn, tools))
    keepers = {k.name for k in filter(None, map(u.keeper_of, tools))}
    at = next((i for i, c in enumerate(plan.calls) if c.name not in keepers), len(plan.calls))
    plan.calls[at:at] = memory_calls(turn, plan, tools)  # after the profile tool's calls
    calls = choose_calls(plan, turn, tools, choice)
    if calls:
        return call_tools(body, calls)
    return say(write_answer(turn, plan, tools, choice))


def planned_with(turn: Turn, tools: list) -> list:
    """The tools the plan may choose from: never the memory tools (rule 10 calls them);
    for a question about the past that memory can answer (a search tool, or memories in
    the request), only the profile tool."""
    plain = [t for t in tools if not recall.memory_tool(t)]
    if recall.about_past(turn.request) and (recall.search_tool(tools) or turn.memories):
        return [t for t in plain if u.keeper_of(t)]
    return plain


def say(text: str) -> dict:
    return {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}


def call_tools(body: Mapping, calls: list[Call]) -> dict:
    """A tool_calls reply; ids are pure functions of the request, one per position."""
    if body.get("parallel_tool_calls") is False:
        calls = calls[:1]
    tool_calls = [{"id": make_id("call_", 24, body, k), "type": "function",
                   "function": {"name": c.name, "arguments": json.dumps(
                       c.arguments, ensure_ascii=False, separators=(",", ":"))}}
                  for k, c in enumerate(calls)]
    return {"message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
            "finish_reason": "tool_calls"}


# ------------------------------------------------------------------ reading the messages

def read_turn(messages: list) -> Turn:
    """The latest user message, and the calls and results that came after it."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    request = u.text_of(messages[last]) if last >= 0 else ""
    profile, said_name = u.profile_in(messages), u.user_name(messages)
    prefer_stated = u.stated_preferences(messages)
    prefer = {**profile, **prefer_stated}
    # the language of the user's request; with none left (a trim dropped it), the system's
    spoken = request if last >= 0 else " ".join(
        u.text_of(m) for m in messages if m.get("role") in ("system", "developer"))
    lang = u.LANGUAGE_CODES.get(prefer.get("language", "").title()) or u.language(spoken)
    turn = Turn(request, lang, said_name or profile.get("name"),
                asked_back=question_before(messages, last),
                called_before=last_called(messages[:max(last, 0)]), prefer=prefer,
                name_from_profile=not said_name and "name" in profile,
                profile=profile, stated=prefer_stated)
    results = {}
    for m in messages[last + 1:]:
        if m.get("role") == "assistant":
            calls = m.get("tool_calls") or []
            turn.calls += [made_call(c) for c in calls if isinstance(c, Mapping)]
        elif m.get("role") == "tool":
            results[m.get("tool_call_id")] = u.text_of(m)
    for call in turn.calls:
        call.result = results.get(call.id)
    handoffs = [c for c in turn.calls if HANDOFF.match(c.name) and c.result is not None]
    if handoffs:
        turn.handed_to = handed_to(handoffs[-1])
        turn.calls = [c for c in turn.calls if not HANDOFF.match(c.name)]
    turn.earlier = answered_before(messages[:max(last, 0)])
    turn.memories = recall.in_context(messages)
    return turn


HANDOFF = re.compile(r"(?i)^(?:transfer|handoff|hand_off)_to_(.+)$")  # a handoff tool's name


def handed_to(call: Call) -> str:
    """The agent a handoff went to: the Agents SDK's output names it ({"assistant":
    "french_agent"}), else the tool's name does (transfer_to_french_agent)."""
    said = u.read_result(call.result)
    if isinstance(said, Mapping) and isinstance(said.get("assistant"), str):
        return said["assistant"]
    return HANDOFF.match(call.name).group(1)


def answered_before(earlier: list) -> list[Call]:
    """The tool calls of earlier turns that got a result, with it, in the order made."""
    results = {m.get("tool_call_id"): u.text_of(m) for m in earlier if m.get("role") == "tool"}
    calls = [made_call(c) for m in earlier if m.get("role") == "assistant"
             for c in m.get("tool_calls") or [] if isinstance(c, Mapping)]
    for call in calls:
        call.result = results.get(call.id)
    return [c for c in calls if c.result is not None]


def made_call(call: Mapping) -> Call:
    """An assistant message's tool call as a Call (arguments parsed; {} if they are not JSON)."""
    fn = call.get("function") if isinstance(call.get("function"), Mapping) else {}
    try:
        arguments = json.loads(fn.get("arguments") or "{}")
    except (TypeError, ValueError):
        arguments = {}
    return Call(str(fn.get("name") or ""), arguments if isinstance(arguments, dict) else {},
                id=call.get("id"))


def question_before(messages: list, last: int) -> str:
    """The user message before `last`, if the assistant's reply to it was a question; and
    the ones before it while each was answered with a question too ("I need a flight to
    London" → "What origin?" → "From Paris" → "What date?"), joined in order."""
    said: list[str] = []
    while last >= 2 and messages[last - 1].get("role") == "assistant" and \
            u.text_of(messages[last - 1]).rstrip().endswith(("?", "？")) and \
            messages[last - 2].get("role") == "user" and not messages[last - 1].get("tool_calls"):
        said.insert(0, u.text_of(messages[last - 2]))
        last -= 2
    return " ".join(said)


def last_called(earlier: list) -> str:
    """The function name of the last tool call in `earlier` ("" if there is none)."""
    for m in reversed(earlier):
        calls = [c for c in m.get("tool_calls") or [] if isinstance(c, Mapping)] \
            if m.get("role") == "assistant" else []
        if calls:
            return made_call(calls[-1]).name
    return ""


def summary_request(messages: list) -> int | None:
    """Where the latest user or system message asks for a summary, if it does."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") in ("user", "system", "developer"):
            return i if u.asks_summary(u.text_of(messages[i])) else None
    return None


def to_summarise(messages: list, asked_at: int | None) -> tuple[list, bool] | None:
    """Rule 2: (the messages a summary is about, whether they were pasted as a transcript),
    or None when no summary is asked for."""
    if asked_at is not None:
        pasted = transcript.messages_in(u.text_of(messages[asked_at]))
        return (pasted, True) if pasted else (messages[:asked_at], False)
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    pasted = transcript.messages_in(u.text_of(messages[last])) if last >= 0 else []
    if pasted and any(m.get("role") in ("system", "developer") and
                      transcript.asks_to_summarise(u.text_of(m)) for m in messages[:last]):
        return pasted, True
    return None


# ------------------------------------------------------------------ planning calls

def make_plan(turn: Turn, tools: list) -> Plan:
    """The plan for the request: first a call to the profile tool for each lasting
    preference it states ("I'm vegetarian"), if one is offered; then the plan for the rest
    of it; when that needs nothing and the assistant had just asked a question ("Which
    city?"), the plan for the earlier request completed by this answer; else, for a
    follow-up naming only a place ("上海呢？"), the last tool called, again."""
    if not tools or u.asks_name(turn.request):
        return Plan()
    remember = remember_calls(turn, tools)
    plan = plan_for(u.without_preferences(turn.request), turn, tools) if remember else \
        plan_request(turn, tools)
    plan.calls[:0] = remember
    return plan


def plan_request(turn: Turn, tools: list) -> Plan:
    """The plan for a request that states no preference to remember."""
    plan = plan_for(u.without_introduction(turn.request), turn, tools)
    if plan.calls:
        return plan
    if turn.asked_back:  # the answer to "Which city?" / "What origin?" completes the request
        completed = plan_for(f"{turn.asked_back} {turn.request}", turn, tools)
        if completed.calls or progress(completed, plan_for(turn.asked_back, turn, tools)):
            return completed
    return plan if plan.asks else follow_up(turn, tools) or plan


def progress(completed: Plan, before: Plan) -> bool:
    """Whether an answer filled what was asked: the request it completes now asks for
    another argument ("From Paris" gave the origin; the date is still missing). "Thanks"
    after "Which city?" fills nothing."""
    asked = [(u.tool_name(t), p) for t, p in completed.asks]
    return bool(asked) and asked[:1] != [(u.tool_name(t), p) for t, p in before.asks][:1]


def remember_calls(turn: Turn, tools: list) -> list[Call]:
    """A call to the offered profile tool (remember_preference, see u.keeper_of) for each
    lasting preference the request states: "I'm vegetarian" → key "diet", value
    "vegetarian". None when no such tool is offered: then "My name is Xiaoming" is only
    an introduction."""
    keeper = next(filter(None, map(u.keeper_of, tools)), None)
    calls: list[Call] = []
    for said in u.preferences_in(turn.request) if keeper else []:
        key = keeper.key_for(said.key)
        if key is not None:
            add_unique(calls, Call(keeper.name, {keeper.key_param: key,
                                                 keeper.value_param: said.value}), tools)
    return calls


def memory_calls(turn: Turn, plan: Plan, tools: list) -> list[Call]:
    """Rule 10: save_memory for what the request asks to keep (recall.worth_saving; the
    profile tool keeps the preferences it has a key for), and search_memory(query=the
    question) for a question nothing else answers: no other call planned or asked for,
    not a greeting, thanks or the name question already answerable, and no memory in the
    request answers it."""
    calls: list[Call] = []
    saver, searcher = recall.save_tool(tools), recall.search_tool(tools)
    if saver is not None and recall.text_param(saver):
        kept = {c.arguments.get(k.key_param) for c in plan.calls
                for k in filter(None, map(u.keeper_of, tools)) if c.name == k.name}
        about = next((p for p in u.properties(saver) if p in ("subject", "topic", "key")), None)
        for text, subject in recall.worth_saving(turn.request, {str(k) for k in kept}):
            arguments = {recall.text_param(saver): text}
            if about and subject:
                arguments[about] = subject
            calls.append(Call(u.tool_name(saver), arguments))
    request = u.without_introduction(turn.request)
    if searcher is None or not recall.text_param(searcher) or plan.calls or plan.asks or \
            calls or not recall.is_question(request) or u.is_greeting(request) or \
            u.is_thanks(request) or (u.asks_name(request) and turn.name) or \
            u.concepts(request) & set(u.LIVE_DATA) or profile_answer(turn):
        return calls
    if turn.memories and recall.choose(request, turn.memories):
        return calls
    return [Call(u.tool_name(searcher), {recall.text_param(searcher): request.strip()})]


def follow_up(turn: Turn, tools: list) -> Plan | None:
    """"And Shanghai?" / "上海呢？" / "What about UTC?" after a tool answer: the same tool
    (the last one called before this request, if it is still offered and takes a place
    or a time zone) for the place or zone this message names."""
    tool = next((t for t in tools if u.tool_name(t) == turn.called_before), None)
    if tool is None or u.keeper_of(tool) or not u.follows_up(turn.request):
        return None
    clause = u.Clause(turn.request, tool)
    targets = own_targets(clause)
    if not targets:
        return None
    plan = Plan()
    add_calls(plan, clause, targets, tools, turn.prefer)
    return plan if plan.calls else None


def plan_for(text: str, turn: Turn, tools: list) -> Plan:
    """Every call `text` needs, clause by clause; a clause that depends on results
    not in yet ("there" after "which is warmer?") waits and ends the plan."""
    plan, everywhere, before = Plan(), u.targets_in(text), None
    for clause in u.clauses(text, tools):
        targets = targets_for(clause, before, turn, tools, everywhere)
        if targets is None:
            break
        before = Step(clause, add_calls(plan, clause, targets, tools, turn.prefer))
        asked = u.comparison_in(clause.text)
        if asked and plan.comparison is None:
            plan.comparison, plan.compared = asked, [call for _, call in before.planned]
    return plan


def targets_for(clause: u.Clause, before: Step | None, turn: Turn, tools: list,
                everywhere: list[u.Target]) -> list[u.Target] | None:
    """The places a clause is about: its own (a time zone it writes out wins over them);
    the winner or the places of the clause before when it says "there" (None: the winner
    is not known yet); an unknown place it names ("Lhasa"); else the places named
    anywhere in the request."""
    own = own_targets(clause)
    if own:
        return own
    if before and u.refers_back(clause.text):
        return winner_of(before, turn, tools)
    kinds = {u.param_kind(n, s) for n, s in u.properties(clause.tool).items()}
    unknown = u.unknown_place(clause.text, avoid_words(clause.tool), u.topic_words_zh(clause.tool)) \
        if kinds & {"place", "timezone"} else None
    return [u.Target(unknown)] if unknown else everywhere


def own_targets(clause: u.Clause) -> list[u.Target]:
    """The places a clause names; for a tool that takes a time zone, the zone the clause
    writes out instead, if it does ("the time in UTC" asks for UTC, whatever the places)."""
    kinds = {u.param_kind(n, s) for n, s in u.properties(clause.tool).items()}
    zone = u.zone_target(clause.text) if "timezone" in kinds else None
    if zone:
        return [zone]
    if kinds & {"place", "places", "timezone"}:  # "in Oslo and Rome": Oslo is not in the gazetteer
        return u.all_targets_in(clause.text, avoid_words(clause.tool))
    return u.targets_in(clause.text)


def winner_of(before: Step, turn: Turn, tools: list) -> list[u.Target] | None:
    """The places of the clause before; for a comparison ("which is warmer?") only the
    winner's, read from this turn's results (None while they are not all in)."""
    targets = [t for t, _ in before.planned if t is not None]
    asked = u.comparison_in(before.clause.text)
    if not asked or len(before.planned) < 2:
        return targets
    made = [latest_made(call, turn, tools) for _, call in before.planned]
    if any(m is None for m in made):
        return None
    ranking = ranked(made, asked)
    if not ranking:
        return targets  # no numbers to compare (errors): follow up on every place
    best = ranking[0][0]
    return [t for (t, _), m in zip(before.planned, made, strict=True) if m is best][:1]


def avoid_words(tool: Any) -> set[str]:
    """Capitalised words after "in" that are not places: the tool's enum values, and units."""
    values = {str(v).lower() for s in u.properties(tool).values() for v in s.get("enum") or []}
    values |= {w for v in values for w in u.enum_forms(v)}
    return values | {"celsius", "fahrenheit", "english", "chinese", "utc", "gmt"} | \
        {w.lower() for w in ("January February March April May June July August September "
                             "October November December Monday Tuesday Wednesday Thursday "
                             "Friday Saturday Sunday").split()}


def add_calls(plan: Plan, clause: u.Clause, targets: list[u.Target], tools: list,
              prefer: dict | None = None) -> list[tuple[u.Target | None, Call]]:
    """Plan one call per target (or one call when the tool takes no place) and return
    them with their targets; a required argument nothing fills becomes a question.
    prefer: the user's lasting preferences, for an enum the clause does not name."""
    kinds = {u.param_kind(n, s) for n, s in u.properties(clause.tool).items()}
    each = targets if targets and kinds & {"place", "timezone"} else [None]
    until, planned = u.until_in(clause.text), []
    for target in each:
        arguments, missing = u.fill_arguments(clause.tool, clause.text, target, targets, prefer)
        if missing:
            plan.asks.append((clause.tool, missing[0]))
            continue
        call = add_unique(plan.calls, Call(u.tool_name(clause.tool), arguments, until=until), tools)
        planned.append((target, call))
    return planned


def add_unique(calls: list[Call], call: Call, tools: list) -> Call:
    """Add `call` unless the same call is planned already; return the one kept."""
    for kept in calls:
        if same_call(kept, call, tools):
            kept.until = kept.until or call.until
            return kept
    calls.append(call)
    return call


# How the request sends a call's arguments, set by sent_as(): None sends them as planned.
_SENT_AS: ContextVar[Callable[[str, dict], dict] | None] = ContextVar("sent_as", default=None)


@contextmanager
def sent_as(fit: Callable[[str, dict], dict] | None) -> Iterator[None]:
    """While it lasts, calls are compared as `fit(name, arguments)` sends them. A strict
    tool's call leaves with its arguments made to fit the schema (structured.strict_call:
    every property present, a date read as written); the call that came back is then
    the planned one, not a new one to make again."""
    token = _SENT_AS.set(fit)
    try:
        yield
    finally:
        _SENT_AS.reset(token)


def call_key(call: Call, tools: list) -> str:
    """What makes two calls the same: the name and the arguments as they are sent (see
    sent_as), ignoring values equal to the schema's default and spelling of places
    ("成都" and "Chengdu" are one place)."""
    props = u.properties(next((t for t in tools if u.tool_name(t) == call.name), None))
    fit = _SENT_AS.get()
    kept = {}
    for key, value in (fit(call.name, call.arguments) if fit else call.arguments).items():
        if key in props and props[key].get("default") == value:
            continue
        place = lookup(value) if isinstance(value, str) else None
        kept[key] = place.name if place else value
    return call.name + json.dumps(kept, sort_keys=True, ensure_ascii=False)


def same_call(a: Call, b: Call, tools: list) -> bool:
    return call_key(a, tools) == call_key(b, tools)


def latest_made(call: Call, turn: Turn, tools: list) -> Call | None:
    """The latest answered call of this turn that is the same as `call`, if any."""
    same = [c for c in turn.answered() if same_call(c, call, tools)]
    return same[-1] if same else None


def ranked(calls: list[Call], asked: u.Comparison) -> list[tuple[Call, float]]:
    """Answered calls with the number the comparison is about, best first."""
    valued = [(c, u.number_in(u.read_result(c.result), asked.field)) for c in calls]
    valued = [(c, v) for c, v in valued if v is not None]
    return sorted(valued, key=lambda cv: -cv[1] if asked.highest else cv[1])


# ------------------------------------------------------------------ choosing what to call now

def still_needed(plan: Plan, turn: Turn, tools: list) -> list[Call]:
    """Planned calls not answered yet in this turn, and "until" calls whose latest
    result is not yet the wanted condition (an error result stops the repeating)."""
    needed = []
    for call in plan.calls:
        made = latest_made(call, turn, tools)
        if made is None or (call.until and not (shows(made, call.until) or failed(made))):
            needed.append(call)
    return needed


def shows(made: Call, wanted: str) -> bool:
    """Whether a result shows the wanted condition: "sunny", or "rain" in "light rain"."""
    data = u.read_result(made.result)
    said = data.get("condition") if isinstance(data, Mapping) else data
    found = u.condition_of(str(said or ""))
    return found is not None and (found == wanted or wanted in found.split())


def failed(made: Call) -> bool:
    return u.error_in(u.read_result(made.result)) is not None


def choose_calls(plan: Plan, turn: Turn, tools: list, choice: Any) -> list[Call]:
    """The calls to send now, obeying tool_choice."""
    if not tools or choice == "none":
        return []
    needed = still_needed(plan, turn, tools)
    if isinstance(choice, Mapping):
        forced = str((choice.get("function") or {}).get("name") or "")
        return [c for c in needed if c.name == forced] or \
            [c for c in plan.calls if c.name == forced] or any_calls(turn, tools, forced)
    if choice == "required":
        return needed or plan.calls or any_calls(turn, tools)
    return needed


def any_calls(turn: Turn, tools: list, name: str = "") -> list[Call]:
    """Calls when one is required but no clause asked for one: the tool named `name`;
    else the best-fitting tool if one fits; else the first tool whose required arguments
    can be filled (defaults count). If none can be, the first choice is called with what
    could be filled and a typed best-effort value for each required argument still
    missing (u.best_effort): a forced call cannot ask a question back, and "{}" would
    break the tool's own required list."""
    text = u.without_introduction(turn.request)
    best, points = u.best_tool(text, tools)
    choices = [t for t in tools if u.tool_name(t) == name] or \
        ([best] if points >= u.THRESHOLD else []) or tools
    for tool in choices:
        plan = Plan()
        add_calls(plan, u.Clause(text, tool), u.targets_in(text), tools, turn.prefer)
        if plan.calls:
            return plan.calls
    arguments, missing = u.fill_arguments(choices[0], text, prefer=turn.prefer)
    return [Call(u.tool_name(choices[0]), u.best_effort(choices[0], text, arguments, missing))]


# ------------------------------------------------------------------ writing the answer

def write_answer(turn: Turn, plan: Plan, tools: list, choice: Any) -> str:
    """The text reply when nothing is called now."""
    lang, wanted = turn.lang, [c.name for c in plan.calls] + [u.tool_name(t) for t, _ in plan.asks]
    if turn.answered():
        return from_results(turn, plan, tools)
    if u.asks_name(turn.request):
        return answer.name_answer(turn.name, lang, turn.name_from_profile)
    if not plan.calls and earlier_comparison(turn, tools):
        return earlier_comparison(turn, tools)
    if wanted and choice == "none":
        return answer.told_not_to(list(dict.fromkeys(wanted)), lang)
    if plan.asks:
        return answer.clarify(*plan.asks[0], lang)
    if profile_answer(turn):
        return profile_answer(turn)
    if turn.memories and recall.is_question(turn.request) and not u.is_greeting(turn.request):
        said = memory_answer(turn, turn.memories)
        if said or not u.concepts(turn.request) & set(u.LIVE_DATA):
            return said or answer.not_remembered(lang)
    return small_talk(turn, tools)


def profile_answer(turn: Turn) -> str:
    """Rule 8: a question about the user that the profile (or their own words in this
    conversation) answers, "Am I vegetarian?" / "我吃素吗？", said with where it comes from
    ("Your profile says you're vegetarian." / "You told me …"); "" if neither holds the
    key it asks about."""
    keys = u.asked_preferences(u.without_introduction(turn.request))
    stated = [(k, turn.stated[k]) for k in keys if k in turn.stated]
    known = [(k, turn.profile[k]) for k in keys if k not in turn.stated and k in turn.profile]
    return answer.sentences([answer.told_facts(stated, turn.lang, from_profile=False),
                             answer.told_facts(known, turn.lang, from_profile=True)], turn.lang)


def memory_answer(turn: Turn, memories: list[recall.Remembered]) -> str:
    """Rule 9: the answer from the memory that answers the request (the newer wins, and
    says what it replaces), or "" if none does."""
    chosen = recall.choose(u.without_introduction(turn.request), memories)
    return answer.from_memory(chosen.memory, chosen.replaces, turn.lang) if chosen else ""


def earlier_comparison(turn: Turn, tools: list) -> str:
    """"Which one is warmer?" / "哪个更暖和？" naming no place, after tool answers: ranked
    from the results already in the conversation (the latest of each distinct call), not
    asked back. "" when the request compares nothing or fewer than two results have
    the number it compares."""
    asked = u.comparison_in(turn.request)
    if not asked or not turn.earlier or u.targets_in(turn.request):
        return ""
    latest: list[Call] = []
    for call in turn.earlier:
        latest = [c for c in latest if not same_call(c, call, tools)] + [call]
    ranking = ranked(latest, asked)
    return answer.comparison(asked, ranking, turn.lang) if len(ranking) >= 2 else ""


def small_talk(turn: Turn, tools: list) -> str:
    """Introductions, greetings, thanks; an honest "no tool" for live data; else the fallback."""
    lang, text = turn.lang, turn.request
    live = sorted(u.concepts(u.without_introduction(text)) & set(u.LIVE_DATA))
    if u.name_in(text) and not live:
        return answer.introduction(u.name_in(text), lang)
    if live:
        return answer.no_tool(live[0], tools, lang)
    if u.is_greeting(text):
        return answer.greeting(turn.name, lang)
    if u.is_thanks(text):
        return answer.thanks(lang)
    if turn.handed_to:
        return answer.handed_over(turn.handed_to, lang)
    return answer.fallback(tools, lang)


def from_results(turn: Turn, plan: Plan, tools: list) -> str:
    """The final answer from this turn's tool results: a comparison if one was asked,
    one sentence per distinct call (its latest result), then any open question."""
    lang, results = turn.lang, latest_results(turn, tools)
    kept = [data for data in (u.read_result(c.result) for c in results) if u.remembered_in(data)]
    results = [c for c in results if not u.remembered_in(u.read_result(c.result))]
    found = [recall.in_result(u.read_result(c.result)) for c in results]
    searched = [m for f in found if f is not None for m in f]
    saved = [c for c in results if recall.memory_tool({"function": {"name": c.name}}) == "save"
             and isinstance(u.read_result(c.result), Mapping)
             and u.read_result(c.result).get("saved") is True]
    results = [c for c, f in zip(results, found, strict=True) if f is None and c not in saved]
    named = u.name_in(turn.request) and all(fact["key"] != "name" for fact in kept)
    parts = [answer.nice_to_meet(turn.name, lang)] if named else []
    parts += kept_notes(turn, kept, answered_otherwise=bool(results or plan.asks or saved
                                                            or any(f is not None for f in found)))
    if saved:
        parts.append(answer.saved_memory([saved_text(c, tools) for c in saved], lang))
    if any(f is not None for f in found):
        parts.append(memory_answer(turn, [*searched, *turn.memories])
                     or answer.not_remembered(lang))
    asked, candidates = compared(turn, plan, tools, results)
    ranking = ranked(candidates, asked) if asked else []
    if len(ranking) >= 2:
        parts.append(answer.comparison(asked, ranking, lang))
        results = [c for c in results if all(c is not r for r, _ in ranking)]
    parts += [until_note(call, turn, tools) for call in plan.calls if call.until]
    parts += [answer.result(c.name, c.arguments, c.result, lang, turn.request) for c in results]
    called = {c.name for c in turn.answered()}  # a tool that answered needs no more asking
    open_asks = [(tool, param) for tool, param in plan.asks if u.tool_name(tool) not in called]
    parts += [answer.clarify(tool, param, lang) for tool, param in open_asks[:1]]
    return answer.sentences(parts, lang)


def saved_text(call: Call, tools: list) -> str:
    """The text a save_memory call kept (its text parameter)."""
    tool = next((t for t in tools if u.tool_name(t) == call.name), None)
    param = recall.text_param(tool) if tool is not None else None
    return str(call.arguments.get(param or "", "") or next(iter(call.arguments.values()), ""))


def kept_notes(turn: Turn, kept: list[dict], answered_otherwise: bool) -> list[str]:
    """"Noted: you're vegetarian. I'll remember that." for the facts the profile tool kept;
    then, if nothing else answers the rest of the request ("I'm vegetarian, where should I
    eat in Chengdu?"), that it cannot be answered."""
    if not kept:
        return []
    notes = [answer.remembered(kept, turn.lang)]
    rest = "" if answered_otherwise else u.without_preferences(turn.request)
    if rest and not (u.is_greeting(rest) or u.is_thanks(rest)):
        notes.append(answer.cannot_answer(rest, turn.lang))
    return notes


def compared(turn: Turn, plan: Plan, tools: list,
             results: list[Call]) -> tuple[u.Comparison | None, list[Call]]:
    """The comparison asked and the results it ranks: those of the calls planned for the
    clause that asks it, never another tool's numbers ("how many people live there?").
    Without a plan (no tools offered), the results of the tool whose name fits that clause."""
    if plan.comparison:
        made = [latest_made(call, turn, tools) for call in plan.compared]
        return plan.comparison, list({id(m): m for m in made if m is not None}.values())
    asked = u.comparison_in(turn.request)
    if not asked:
        return None, []
    named = [{"type": "function", "function": {"name": n}}
             for n in dict.fromkeys(c.name for c in results)]
    for clause in u.clauses(u.without_introduction(turn.request), tools or named):
        if u.comparison_in(clause.text):
            return asked, [c for c in results if c.name == u.tool_name(clause.tool)]
    return asked, results


def until_note(call: Call, turn: Turn, tools: list) -> str:
    """"After 3 checks:" before the result a "keep checking until ..." request waited for."""
    made = latest_made(call, turn, tools)
    if made is None or not shows(made, call.until or ""):
        return ""
    checks = sum(same_call(c, call, tools) for c in turn.answered())
    return answer.after_checks(checks, turn.lang)


def latest_results(turn: Turn, tools: list) -> list[Call]:
    """One answered call per distinct call, in the order first made, with its latest result."""
    kept: list[Call] = []
    for call in turn.answered():
        for k, old in enumerate(kept):
            if same_call(old, call, tools):
                kept[k] = call
                break
        else:
            kept.append(call)
    return kept


def summarise(earlier: list, pasted: bool, lang: str) -> str:
    """A summary of `earlier`: the user's name, their questions, the tool results; for a
    pasted transcript, what the assistant answered too."""
    calls = {c.id: c for m in earlier if m.get("role") == "assistant"
             for c in map(made_call, filter(lambda tc: isinstance(tc, Mapping),
                                            m.get("tool_calls") or []))}
    facts = []
    for m in earlier:
        if m.get("role") == "tool":
            call = calls.get(m.get("tool_call_id")) or Call(str(m.get("name") or "tool"), {})
            facts.append(answer.result(call.name, call.arguments, u.text_of(m), lang))
    questions = [u.text_of(m) for m in earlier if m.get("role") == "user"
                 and u.without_introduction(u.text_of(m)).strip(" ,.!?，。！？")]
    answers = [u.text_of(m) for m in earlier if pasted and m.get("role") == "assistant"
               and u.text_of(m).strip()]
    return answer.summary(u.user_name(earlier), questions, facts, lang, answers)
