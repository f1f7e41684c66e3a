"""Self-checks for notebook 06, the agent loop.

- Build it: `check_my_loop(my_loop)`, the learner's `my_loop(messages, registry,
  max_turns)`, the `while tool_calls` loop written by hand with `chat()` and
  `registry.execute()`, judged by LOOP_RULES with a scripted model
  (lesson_lib.exercises.scripted): replies written in advance, every request recorded, and
  a loop that never stops stopped after LIMIT model calls and reported. The same rules
  guard the library's loop, LoopAgent.run (`library_loop` gives it my_loop's signature;
  tests/test_core_track_nb06.py).
- `check_predictions(my_predictions)` (exercise 1): how many model calls each of
  PREDICTION_QUESTIONS takes (the check asks the offline teaching model, whatever backend
  the notebook uses, through a client that counts the calls, and compares).
- `check_two_step_chain(my_registry)` (notebook 06b's exercise, part two of 06): a registry
  with the weather tool and the learner's own dish tool: the tool's schema says when to use
  it and takes the city, and LoopAgent, driven by a scripted model through the chain of
  DISH_QUESTION (the weather of both cities, then the learner's tool for the colder one,
  then the answer), runs it.

No verdict depends on which tool a model picks or how it words an answer: the build and
06b's exercise use a scripted model, and the predictions are about the offline model by
design.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from lesson_lib.exercises import (
    Report,
    not_done,
    run_check,
    signature_problem,
    wrong_signature,
)
from lesson_lib.exercises.contract import Rule, check_rules, expect, property_rule
from lesson_lib.exercises.nb05 import says_when, undescribed
from lesson_lib.exercises.scripted import (
    LIMIT,
    Reply,
    Request,
    Script,
    ScriptedClient,
    ScriptEnded,
    TooManyCalls,
    WatchedTools,
    answering,
    call_index,
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
from lesson_lib.i18n import N_, _, by_language, ngettext
from lesson_lib.protocol import assistant_to_dict

SEED_TOOLS = ("get_current_weather", "get_current_time")

# The data each check uses, in the learner's language (a Chinese learner is judged on
# Chinese questions by the same rules): read through dish_question(), prediction_questions()
# …, or as the module's names DISH_QUESTION, PREDICTION_QUESTIONS … (module __getattr__).
_DISH_QUESTION = {
    "en": "Which is colder, Beijing or Shanghai, and what local dish should I try there?",
    "zh": "北京和上海哪个更冷？在那里我该尝尝什么当地菜？"}

# Exercise 1: key -> (question, max_turns). The model calls each takes are computed live.
_PREDICTION_QUESTIONS: dict[str, dict[str, tuple[str, int]]] = {
    "en": {
        "a": ("Hello!", 5),
        "b": ("What is the weather in Beijing, Shanghai and Chengdu, and the time in Tokyo?", 5),
        "c": ("Which is colder, Tokyo or London, and what time is it there?", 5),
        "d": ("Keep checking the weather in Shanghai until it is sunny.", 5),
        "e": ("Keep checking the weather in Chengdu until it is sunny.", 4),
    },
    "zh": {
        "a": ("你好！", 5),
        "b": ("北京、上海和成都的天气怎么样？东京现在几点？", 5),
        "c": ("东京和伦敦哪个更冷？那里现在几点？", 5),
        "d": ("一直查上海的天气，直到晴天为止。", 5),
        "e": ("一直查成都的天气，直到晴天为止。", 4),
    },
}


def _lang() -> str:
    return by_language("en", "zh")


def dish_question() -> str:
    """Exercise 06b's question: which city is colder, and its dish."""
    return _DISH_QUESTION[_lang()]


def prediction_questions() -> dict[str, tuple[str, int]]:
    """Exercise 1's questions: key -> (question, max_turns)."""
    return dict(_PREDICTION_QUESTIONS[_lang()])


PREDICTION_HINTS = {
    "a": N_("a greeting needs no tool: the first reply is already the answer"),
    "b": N_("parallel calls share one assistant message: one round of tools, then the answer"),
    "c": N_("the time zone depends on which city is colder: weather first, then the time, "
            "then the answer (a chain, like Beijing or Shanghai above)"),
    "d": N_("'until it is sunny' ends as soon as a result says sunny: what is Shanghai's "
            "weather in the simulated data?"),
    "e": N_("Chengdu stays cloudy, so the model never stops by itself: count what max_turns "
            "allows"),
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
            raise RuntimeError(_("model call {n} refused by the check: your loop did not stop "
                                 "after {limit} calls").format(n=self.calls, limit=self.limit))
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


# ----------------------------------------------------------------- core: build the loop
#
# The learner writes my_loop(messages, registry, max_turns): while the reply has tool_calls,
# append the call (a plain dict) and one tool message per call, and ask again, with the
# tools, for at most max_turns model calls; append the answer and return (reply, turns); at
# the cap, return a notice for the user and leave a valid history. LOOP_RULES judge it with
# a scripted model. The library's loop is LoopAgent.run; `library_loop` runs it with
# my_loop's signature, and tests/test_core_track_nb06.py holds it to the same rules.

LOOP_TITLE = N_("Build it · your agent loop")
_QUESTION = {"en": "What's the weather in Chengdu?", "zh": "成都天气怎么样？"}
_ANSWER = {"en": "It is cloudy in Chengdu, 16°C.", "zh": "成都多云，16°C。"}


def loop_question() -> str:
    """The user's input every run of my_loop starts from."""
    return _QUESTION[_lang()]


def loop_answer() -> str:
    """The scripted model's answer, when it answers."""
    return _ANSWER[_lang()]


def library_loop(messages: list, registry: Any, max_turns: int = 5) -> tuple[str, int]:
    """LoopAgent.run with my_loop's signature: `messages` (ending with the user's input) is
    the memory, and what the loop adds is appended to it; returns (reply, model calls)."""
    from lesson_lib.agent import LoopAgent  # noqa: PLC0415
    from lesson_lib.memory import ShortTermMemory  # noqa: PLC0415

    *before, question = messages
    memory = ShortTermMemory(max_messages=len(messages) + 8 * max_turns + 2)  # never trims
    memory.add_many(before)
    agent = LoopAgent(max_turns=max_turns, tools=registry, memory=memory)
    result = agent.run(question["content"])
    messages[:] = agent.memory.to_api_format()
    return result.reply, result.turns


@dataclass
class Looped:
    """One run of a loop on the scripted model: what it returned and left behind."""
    returned: Any
    messages: list            # the list it was given, afterwards
    requests: list[Request]   # what each model call sent
    script: Script            # the model's replies (tool call ids included)
    tools: WatchedTools       # the calls it ran (tools.ran)
    runaway: str | None       # why the check stopped it, if it did
    raised: Exception | None = None  # what it raised at the cap, instead of returning

    @property
    def pair(self) -> tuple[Any, Any]:
        """(reply, turns), or (what it returned, None) when that was not a pair."""
        ok = isinstance(self.returned, tuple) and len(self.returned) == 2
        return self.returned if ok else (self.returned, None)

    def asked(self) -> Reply:
        """The first reply that asked for tools."""
        return next(r for r in self.script.replies if r.calls)


def _looped(my_loop: Callable, script: Script, max_turns: int = 5, *,
            forever: Callable[[Script], Reply] | None = None) -> Looped:
    """Run `my_loop` on [system, user QUESTION] with the scripted model and watched tools."""
    from lesson_lib.agent import SYSTEM_PROMPT  # noqa: PLC0415

    client, tools = ScriptedClient(script, forever=forever), weather_tools()
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": loop_question()}]
    returned = runaway = raised = None
    with answering(client):
        try:
            returned = my_loop(messages, tools, max_turns)
        except TooManyCalls:
            runaway = _("the model asked for a tool on every call; my_loop made {n} model "
                        "calls and the check stopped it: no cap").format(n=LIMIT)
        except ScriptEnded:
            runaway = _("after a reply without tool_calls, my_loop called the model again "
                        "(call {n})").format(n=len(client.requests))
        except Exception as error:
            if forever is None or len(client.requests) != max_turns:
                raise  # not the cap: the code failed, and the rule reports it
            raised = error  # it stopped at the cap, by raising: the rule on the cap says so
    return Looped(returned, messages, client.requests, client.script, tools, runaway, raised)


def _answered(my_loop: Callable, *rounds: int, max_turns: int = 5) -> Looped:
    """The model asks for tools in `rounds` (that many calls each), then answers."""
    script = Script()
    for k, calls in enumerate(rounds):
        script.calls(*weather_calls(calls, start=k))
    script.answer(loop_answer())
    ran = _looped(my_loop, script, max_turns)
    expect(ran.runaway is None, ran.runaway or "")
    return ran


def _asking_forever(script: Script) -> Reply:
    """The never-ending model's next reply: the weather in Chengdu, once more."""
    return Reply(None, (script.call(*weather_calls(1)[0]),))


def _never_ending(my_loop: Callable, max_turns: int = 3) -> Looped:
    return _looped(my_loop, Script(), max_turns, forever=_asking_forever)


def _returns_pair(my_loop: Callable) -> None:
    ran = _looped(my_loop, _script_for([]))
    if ran.runaway:  # it did not return at all: the rules on stopping say why
        return
    got = ran.returned
    expect(isinstance(got, tuple) and len(got) == 2,
           _("my_loop returned {got}, not a pair (reply, turns)").format(got=_short(repr(got))))


def _plain_answer(my_loop: Callable) -> None:
    ran = _answered(my_loop)
    reply, _turns = ran.pair
    n = len(ran.requests)
    expect(n == 1, _("the model answered at once; my_loop made {n} model calls").format(n=n))
    expect(reply == loop_answer(),
           _("the model answered {answer}; my_loop returned the reply as a {kind} "
             "object").format(answer=repr(loop_answer()), kind=type(reply).__name__)
           if not isinstance(reply, (str, type(None))) else
           _("the model answered {answer}; my_loop returned the reply {reply}").format(
               answer=repr(loop_answer()), reply=repr(reply)))


def _counts_calls(my_loop: Callable) -> None:
    for rounds in ((), (1, 1)):  # (whether it makes the right calls is other rules' to say)
        ran = _answered(my_loop, *rounds)
        _reply, turns = ran.pair
        n = len(ran.requests)
        expect(turns == n, (ngettext("the model answered at once: my_loop made {n} model call, "
                                     "and returned turns={turns}",
                                     "the model answered at once: my_loop made {n} model "
                                     "calls, and returned turns={turns}", n) if not rounds else
                            ngettext("two rounds of tools, then the answer: my_loop made {n} "
                                     "model call, and returned turns={turns}",
                                     "two rounds of tools, then the answer: my_loop made {n} "
                                     "model calls, and returned turns={turns}", n)).format(
                                         n=n, turns=repr(turns)))


def _appends_answer(my_loop: Callable) -> None:
    ran = _answered(my_loop)
    messages, want = ran.messages, {"role": "assistant", "content": loop_answer()}
    expect(len(messages) > 2, _("messages still holds [system, user] after my_loop: nothing "
                                "was appended to the list it was given"))
    objects = [type(m).__name__ for m in messages if not isinstance(m, dict)]
    expect(not objects, _("messages holds {messages}: the answer was appended as a {kind} "
                          "object, not a dict").format(messages=labels(messages),
                                                       kind=objects[0] if objects else ""))
    expect(normalized(messages[-1]) == want and len(messages) == 3,
           (_("after the answer, messages holds {messages}")
            if any(m.get("content") == loop_answer() for m in messages) else
            _("after the answer, messages holds {messages}: the answer is not in it")).format(
                messages=labels(messages)))


def _offers_tools(my_loop: Callable) -> None:
    ran = _answered(my_loop, 1, 1)
    want = ran.tools.schemas()
    for n, request in enumerate(ran.requests, 1):
        expect(request.tools == want, _("model call {n} offered tools={tools}, not "
                                        "{want}").format(n=n, tools=tool_names(request.tools),
                                                         want=tool_names(want)))


def _keeps_going(my_loop: Callable) -> None:
    ran = _answered(my_loop, 1, 1)
    reply, _turns = ran.pair
    n = len(ran.requests)
    expect(n == 3, ngettext("the model asked for tools twice, then answered; my_loop made {n} "
                            "model call and returned {reply}",
                            "the model asked for tools twice, then answered; my_loop made {n} "
                            "model calls and returned {reply}", n).format(
                                n=n, reply=_short(repr(reply))))
    expect(reply == loop_answer(),
           _("my_loop made the 3 calls but returned {reply}, not the answer {answer}").format(
               reply=_short(repr(reply)), answer=repr(loop_answer())))


def _appends_call(my_loop: Callable) -> None:
    ran = _answered(my_loop, 2)
    expect_call_before_results(ran.messages,
                               ngettext("{n} tool call", "{n} tool calls", 2).format(n=2),
                               _("afterwards"), "messages")


def _call_is_a_dict(my_loop: Callable) -> None:
    ran = _answered(my_loop, 2)
    stored = ran.messages[call_index(ran.messages)]
    expect(isinstance(stored, dict),
           _("the call was appended as a {kind} object, not a dict").format(
               kind=type(stored).__name__))
    expect(all(isinstance(c, dict) for c in stored["tool_calls"]),
           _("the call is a dict, but its tool_calls hold the SDK's objects"))
    want = assistant_to_dict(ran.asked().message())
    expect(assistant_to_dict(stored) == want,
           _("the call appended is {stored}; the model sent {want}").format(stored=stored,
                                                                            want=want))


def _keeps_text_beside_calls(my_loop: Callable) -> None:
    script = Script()
    script.calls(*weather_calls(1), content=beside())
    script.answer(loop_answer())
    ran = _looped(my_loop, script)
    expect(ran.runaway is None, ran.runaway or "")
    at = call_index(ran.messages)
    stored = ran.messages[at] if at is not None else None
    content = stored.get("content") if isinstance(stored, dict) else None
    expect(content == beside(),
           _("the model wrote {text} beside its call; messages holds the call with content "
             "{content}").format(text=repr(beside()), content=repr(content)))


def _runs_every_call(my_loop: Callable) -> None:
    ran = _answered(my_loop, 3)
    asked = [args for _name, args in weather_calls(3)]
    done = [parsed(args) for _name, args in ran.tools.ran]
    cities = ", ".join(a["location"] for a in asked)
    expect(sorted(map(repr, done)) == sorted(map(repr, asked)),
           _("the model asked for 3 calls in one reply ({cities}); my_loop ran {n}: "
             "{calls}").format(cities=cities, n=len(done), calls=", ".join(
                 json.dumps(d, ensure_ascii=False) for d in done)) if done else
           _("the model asked for 3 calls in one reply ({cities}); my_loop ran {n}").format(
               cities=cities, n=len(done)))


def _answers_each_call(my_loop: Callable) -> None:
    ran = _answered(my_loop, 3)
    expect_each_call_answered(ran.messages, ran.asked(), "messages", _short)


def _stops(my_loop: Callable) -> None:
    ran = _never_ending(my_loop)
    expect(ran.runaway is None, ran.runaway or "")


def _cap_is_max_turns(my_loop: Callable) -> None:
    for max_turns in (3, 1):
        ran = _never_ending(my_loop, max_turns)
        _reply, turns = ran.pair
        n = len(ran.requests)
        expect(n == max_turns, _("max_turns={max_turns} and a model that never stops: my_loop "
                                 "made {n} model calls").format(max_turns=max_turns, n=n))
        if ran.raised is None:  # (raising instead of returning is the next rule's)
            expect(turns == max_turns, _("max_turns={max_turns}: {max_turns} model calls, but "
                                         "turns={turns}").format(max_turns=max_turns,
                                                                 turns=repr(turns)))


def _valid_after_cap(my_loop: Callable) -> None:
    ran = _never_ending(my_loop, 3)
    expect(ran.raised is None,
           _("at the cap (max_turns=3) my_loop raised {error}: {message}; the user is shown an "
             "error instead of an answer").format(error=type(ran.raised).__name__,
                                                  message=_short(str(ran.raised), 90)),
           (N_("reaching the cap is no failure of your code: the model just kept asking. The "
               "loop stops and says so, and the agent goes on with the next input"),
            N_("after the loop, return a short notice and the turns, e.g. ('I stopped after "
               "3 model calls without an answer.', max_turns), instead of raising")))
    reply, _turns = ran.pair
    problem = first_problem(ran.messages)
    expect(problem is None, _("after the cap, messages holds {messages}, which the API "
                              "refuses: {problem}").format(messages=labels(ran.messages),
                                                           problem=problem))
    expect(isinstance(reply, str) and reply.strip() != "",
           _("at the cap my_loop returned the reply {reply}: the user is told nothing").format(
               reply=_short(repr(reply))))


# ----------------------------------------------------------------- the property

def _runs():
    from hypothesis import strategies as st  # noqa: PLC0415

    # rounds of 1-3 parallel calls before the model answers, and the cap; with as many
    # rounds as max_turns or more, the cap is hit before the answer
    return st.tuples(st.lists(st.integers(1, 3), max_size=4), st.integers(1, 4))


def _script_for(rounds: list[int]) -> Script:
    script = Script()
    for k, calls in enumerate(rounds):
        script.calls(*weather_calls(calls, start=k))
    script.answer(loop_answer())
    return script


def _without_notice(messages: list) -> list:
    """The history without a last plain assistant message (the notice at the cap)."""
    last = messages[-1] if messages else None
    notice = isinstance(last, dict) and last.get("role") == "assistant" \
        and not last.get("tool_calls")
    return messages[:-1] if notice else messages


def _first_change(mine: Looped, theirs: Looped, capped: bool) -> str | None:
    if mine.runaway:
        return mine.runaway
    if len(mine.requests) != len(theirs.requests):
        return _("it made {n} model calls, LoopAgent {theirs}").format(
            n=len(mine.requests), theirs=len(theirs.requests))
    for n, (a, b) in enumerate(zip(mine.requests, theirs.requests, strict=True), 1):
        if [normalized(m) for m in a.messages] != [normalized(m) for m in b.messages]:
            return _("model call {n} sent {mine}, LoopAgent's {theirs}").format(
                n=n, mine=labels(a.messages), theirs=labels(b.messages))
        if a.tools != b.tools:
            return _("model call {n} offered tools={mine}, LoopAgent's {theirs}").format(
                n=n, mine=tool_names(a.tools), theirs=tool_names(b.tools))
    (reply, turns), (_their_reply, their_turns) = mine.pair, theirs.pair
    if turns != their_turns:
        return _("it returned turns={turns}, LoopAgent {theirs}").format(turns=repr(turns),
                                                                         theirs=their_turns)
    ours, lib = [normalized(m) for m in mine.messages], [normalized(m) for m in theirs.messages]
    if capped:  # the notice at the cap is free text, and keeping it is LoopAgent's choice
        ours, lib = _without_notice(ours), _without_notice(lib)
    if ours != lib:
        return _("messages ends as {mine}, LoopAgent's {theirs}").format(mine=labels(ours),
                                                                         theirs=labels(lib))
    if not capped and reply != loop_answer():
        return _("it returned the reply {reply}, not the answer {answer}").format(
            reply=_short(repr(reply)), answer=repr(loop_answer()))
    problem = first_problem(mine.messages)
    return _("messages is not valid: {problem}").format(problem=problem) if problem else None


def _any_run(my_loop: Callable, example: tuple[list[int], int]) -> str | None:
    rounds, max_turns = example
    mine = _looped(my_loop, _script_for(rounds), max_turns)
    theirs = _looped(library_loop, _script_for(rounds), max_turns)
    capped = len(rounds) >= max_turns
    what = _first_change(mine, theirs, capped)
    shown = ", ".join(ngettext("{n} call", "{n} calls", n).format(n=n) for n in rounds) \
        or _("no tools")
    return _("rounds [{rounds}] then an answer, max_turns={max_turns}: {what}").format(
        rounds=shown, max_turns=max_turns, what=what) if what else None


_BESIDE = {"en": "Let me check the weather first.", "zh": "我先查一下天气。"}


def beside() -> str:
    """What the model writes beside its tool call."""
    return _BESIDE[_lang()]
L_PAIR = N_("my_loop returns a pair (reply, turns)")
L_PLAIN = N_("a reply without tool_calls ends the loop: one model call, and its text returned")
L_TURNS = N_("turns counts the model calls, the answer's included")
L_BESIDE = N_("text the model wrote beside its calls is appended with them")
L_APPEND = N_("the answer is appended to messages, the list my_loop was given")
L_TOOLS = N_("every model call offers the tools, inside the loop too")
L_CHAIN = N_("while the reply has tool_calls, it calls again: two rounds, then the answer, "
             "take 3 calls")
L_CALL = N_("the assistant message with the tool_calls is appended, before its results")
L_DICT = N_("the call is appended as a plain dict (assistant_to_dict(message))")
L_EVERY = N_("every call of a parallel reply is run (all of message.tool_calls)")
L_IDS = N_("each call gets one tool message, with its tool_call_id and the tool's result")
L_STOPS = N_("it stops even when the model never does")
L_CAP = N_("the cap is max_turns model calls, and turns says so")
L_AFTER = N_("at the cap the history is still valid, and the user gets a notice")

LOOP_RULES: list[Rule] = [
    Rule(L_PAIR, _returns_pair, (N_("end with return reply, turns"),)),
    Rule(L_PLAIN, _plain_answer,
         (N_("a reply without tool_calls is the answer: return its text, message.content"),
          N_("stop (return) as soon as a reply has no tool_calls"))),
    Rule(L_TURNS, _counts_calls,
         (N_("turns is how many times the model was called, the call that brought the answer "
             "included: not how many rounds of tools ran"),
          N_("add 1 for every chat() call (for turn in range(1, max_turns + 1) counts them), "
             "and return that count")), needs=(L_PLAIN,)),
    Rule(L_APPEND, _appends_answer,
         (N_("the next question's call must see the answer: append it before returning"),
          N_("messages is the memory you were given: append to it (messages.append(...)), not "
             "to a copy; append a plain dict, {'role': 'assistant', 'content': text}"))),
    Rule(L_TOOLS, _offers_tools,
         (N_("notebook 05's second call had tools=None; in a loop every call must be able to "
             "ask for the next tool"),
          N_("pass tools=registry.schemas() to every chat() call"))),
    Rule(L_CHAIN, _keeps_going,
         (N_("one round only? that is notebook 05's `if`"),
          N_("loop: call, and while the reply has tool_calls, run them, append them and call "
             "again; return only the reply without tool_calls"))),
    Rule(L_CALL, _appends_call,
         (N_("a tool message answers a call: the assistant message that made the call comes "
             "first"),
          N_("messages.append(assistant_to_dict(message)), then the tool messages"))),
    Rule(L_DICT, _call_is_a_dict,
         (N_("messages holds plain dicts, the API's JSON; the SDK's message object is not one"),
          N_("assistant_to_dict(message) turns the reply into the dict to append")),
         needs=(L_CALL,)),
    Rule(L_BESIDE, _keeps_text_beside_calls,
         (N_("a real model sometimes writes a sentence beside its calls (notebook 03): it is "
             "part of what the model said, and the next call must carry it back"),
          N_("append assistant_to_dict(message), which keeps message.content with the calls, "
             "rather than a dict built by hand with content None")),
         needs=(L_CALL,)),
    Rule(L_EVERY, _runs_every_call,
         (N_("one reply can ask for several calls at once"),
          N_("loop over message.tool_calls and run each with registry.execute(call.function"
             ".name, call.function.arguments)"))),
    Rule(L_IDS, _answers_each_call,
         (N_("every call needs its own tool message, or the API refuses the next request"),
          N_("{'role': 'tool', 'tool_call_id': call.id, 'content': the string execute() "
             "returned}, one per call")), needs=(L_CALL,)),
    Rule(L_STOPS, _stops,
         (N_("a model can ask for tools for ever ('keep checking until it is sunny'): a loop "
             "needs a cap"),
          N_("count the model calls and stop after max_turns of them"))),
    Rule(L_CAP, _cap_is_max_turns,
         (N_("max_turns is how many model calls one input may take: exactly that many, when "
             "the model never stops"),
          N_("for turn in range(1, max_turns + 1) makes max_turns calls; check where your "
             "count starts and whether it compares with < or <=")), needs=(L_STOPS,)),
    Rule(L_AFTER, _valid_after_cap,
         (N_("the last round's call and its results are appended together, even at the cap"),
          N_("after the loop, return a short notice such as 'I stopped after 3 model "
             "calls' (and the turns)")), needs=(L_STOPS,)),
    property_rule(
        N_("for any run: the same requests, turns and messages as LoopAgent"),
        _runs(), _any_run,
        (N_("the run above is the smallest where yours and LoopAgent part: follow it call by "
            "call"),
         N_("each reply with tool_calls: append it and its results; the reply without: append "
            "it and return; max_turns calls at most")),
        examples=40,
        needs=(L_PAIR, L_PLAIN, L_TURNS, L_APPEND, L_TOOLS, L_CHAIN, L_CALL, L_DICT,
               L_BESIDE, L_EVERY, L_IDS, L_STOPS, L_CAP, L_AFTER)),
]


def check_my_loop(my_loop: Any) -> bool:  # my_loop(messages, registry, max_turns)
    """The core exercise: judge the learner's loop by LOOP_RULES, on a scripted model."""
    if not callable(my_loop):
        return not_done(_(LOOP_TITLE), _("define my_loop(messages, registry, max_turns=5) in "
                                         "the cell above, then run this check"))
    if wrong_signature(_(LOOP_TITLE), signature_problem(
            my_loop, "my_loop(messages, registry, max_turns)", [], None, 5)):
        return False
    return check_rules(_(LOOP_TITLE), my_loop, LOOP_RULES,
                       start=_("write the body of my_loop in the skeleton, then run this "
                               "check again"))


# ----------------------------------------------------------------- exercise 1: predictions

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
            report.expect(False, _("my_predictions is a dict like {'a': 1, 'b': 2, ...}"),
                          _("got {kind}").format(kind=type(my_predictions).__name__))
            return
        for key, (question, max_turns) in prediction_questions().items():
            guess = my_predictions.get(key, ...)
            where = f"({key}) {question}"
            if guess is ... or guess is None:
                report.expect(False, _("{where}: not answered yet").format(where=where),
                              _("replace ... with a whole number (max_turns={max_turns})").format(
                                  max_turns=max_turns))
                continue
            if isinstance(guess, bool) or not isinstance(guess, int):
                report.expect(False, _("{where}: {guess} is not a whole number").format(
                                  where=where, guess=repr(guess)),
                              _("write how many times the model is called, e.g. 2"))
                continue
            real = model_calls(question, max_turns)
            calls = ngettext("{n} model call", "{n} model calls", guess).format(n=guess)
            said = (_("{where}: {calls}") if guess == real else
                    _("{where}: {calls}? It takes more") if real > guess else
                    _("{where}: {calls}? It takes fewer"))
            report.expect(guess == real, said.format(where=where, calls=calls),
                          _(PREDICTION_HINTS[key]))
    return run_check(_("predictions"), body)


# --------------------------------------------------- notebook 06b, exercise 1: a two-step chain
#
# Which tool a model calls in the second step is the model's choice; the notebook shows
# what yours does in the cell after the check. The check judges what the learner controls:
# the registry, the tool's schema (it says when to use it; it takes the city), and that
# LoopAgent, driven by a scripted model through the chain, runs the tool for Beijing.

CHAIN_TITLE = N_("two-step chain")
_COLDER = {"en": "Beijing", "zh": "北京"}  # the simulated weather: 18 °C in Beijing, 22 in Shanghai


def _registry_ok(report: Report, my_registry: Any) -> list[str]:
    """The learner's own tool names (not the seed tools); [] with a ❌ if the registry won't do."""
    from lesson_lib.tools import WEATHER_TOOL, ToolRegistry  # noqa: PLC0415

    if not isinstance(my_registry, ToolRegistry):
        report.expect(False, _("my_registry is a ToolRegistry"),
                      _("got {kind}: start with my_registry = ToolRegistry()").format(
                          kind=type(my_registry).__name__))
        return []
    weather = my_registry.get("get_current_weather")
    if not report.expect(weather is not None and weather.schema == WEATHER_TOOL,
                         _("my_registry has get_current_weather ({names})").format(
                             names=my_registry.names()),
                         _("step 1 compares temperatures: my_registry.register("
                           "get_current_weather, WEATHER_TOOL)")):
        return []
    own = [n for n in my_registry.names() if n not in SEED_TOOLS]
    report.expect(bool(own), _("my_registry has a tool of your own ({names})").format(
                      names=", ".join(own) or _("none")),
                  _("write a function that returns a city's famous dish and register it"))
    return own


def _city_parameter(report: Report, schema: dict) -> str | None:
    """The name of the tool's one required text parameter (the city), else None with a ❌."""
    name = schema["function"]["name"]
    parameters = schema["function"]["parameters"]
    required = parameters.get("required", [])
    ok = len(required) == 1 and parameters["properties"][required[0]].get("type") == "string"
    report.expect(ok, _("{name} takes the city as its one required parameter").format(name=name),
                  _("it requires {required}: def {name}(city: str)").format(
                      required=required or _("nothing"), name=name))
    return required[0] if ok else None


def _chain(my_registry: Any, name: str, city: str) -> Any:
    """LoopAgent with `my_registry`, the model scripted through the chain: the weather in
    Beijing and Shanghai, then `name` for the colder city, then an answer."""
    from lesson_lib.agent import LoopAgent  # noqa: PLC0415

    script = Script()
    colder, warmer = by_language(("Beijing", "Shanghai"), ("北京", "上海"))
    script.calls(("get_current_weather", {"location": colder}),
                 ("get_current_weather", {"location": warmer}))
    script.calls((name, {city: colder}))
    script.answer(by_language("Beijing is colder: try its local dish.",
                              "北京更冷：去尝尝那里的当地菜吧。"))
    client = ScriptedClient(script)
    with answering(client):
        agent = LoopAgent(tools=my_registry, max_turns=5, client=client)
        return agent.run(dish_question())


def _chain_steps(report: Report, my_registry: Any, own: list[str]) -> None:
    schema = my_registry.get(own[0]).schema
    description = schema["function"]["description"]
    report.expect(says_when(description),
                  _("{tool}'s description says when to use it").format(tool=own[0]),
                  (_("it says {description}: the model picks a tool by its name and "
                     "description only (notebook 03), so say when to use it, in the words a "
                     "user would use (a local dish, food to try)").format(
                         description=repr(description)),
                   N_('begin the docstring with "Use this when the user asks …", and describe '
                      "the city under 'Args:' or in its annotation, "
                      "Annotated[str, \"City name, e.g. Beijing.\"] (section 1.2)")))
    bare = undescribed(schema)
    report.expect(not bare, _("each parameter has a description"),
                  _("{names}: describe it under 'Args:' in the docstring, or in its annotation, "
                    "Annotated[str, \"City name, e.g. Beijing.\"] (section 1.2), with "
                    "an example value").format(names=", ".join(bare)))
    city = _city_parameter(report, schema)
    if city is None:
        return
    refused = tools_refused(my_registry.schemas())
    if refused is not None:  # (said only when it does not: the usual case needs no line)
        report.expect(False, _("the API accepts my_registry's tools"), refused)
        return
    result = _chain(my_registry, own[0], city)
    mine = [e for e in result.events if e.name == own[0]]
    error = _error_in(mine[0].result) if mine else _("it did not run")
    if not report.expect(error is None, _("turn 2: {tool} ran for {city} without an error "
                                          "({result})").format(
                             tool=own[0], city=colder(),
                             result=_short(_readable(mine[0].result) if mine else "")),
                         _("it returned an error: {error}").format(error=error)):
        return
    report.expect(dish_named() in _readable(mine[0].result),
                  _("its result names {city}'s dish, {dish}").format(city=colder(),
                                                                      dish=dish_named()),
                  _("look the dish up in DISHES, by the city it is given"))


_DISHES_NAMED = {"en": "Peking duck", "zh": "北京烤鸭"}  # DISHES of Beijing, in the notebook


def colder() -> str:
    """The colder city of DISH_QUESTION, as the learner names it."""
    return _COLDER[_lang()]


def dish_named() -> str:
    """What the learner's tool must answer for the colder city (the notebook's DISHES)."""
    return _DISHES_NAMED[_lang()]


_DATA = {"DISH_QUESTION": dish_question, "PREDICTION_QUESTIONS": prediction_questions,
         "QUESTION": loop_question, "ANSWER": loop_answer, "BESIDE": beside,
         "COLDER": colder, "DISHES_NAMED": dish_named}


def __getattr__(name: str) -> Any:
    """DISH_QUESTION, PREDICTION_QUESTIONS …: the data, in the language spoken now."""
    if name in _DATA:
        return _DATA[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _readable(result: Any) -> str:
    """A tool's result as a reader sees it: JSON with its text unescaped (json.dumps writes
    "北京烤鸭" as "\\u5317…" unless told ensure_ascii=False), anything else as it is."""
    try:
        return json.dumps(json.loads(result), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(result)


def _error_in(result: str) -> str | None:
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        return None
    return str(data["error"]) if isinstance(data, dict) and "error" in data else None


def check_two_step_chain(my_registry: Any) -> bool:  # a ToolRegistry with your tool
    """Judge the learner's registry for DISH_QUESTION's chain (see the section's comment)."""
    def body(report: Report) -> None:
        own = _registry_ok(report, my_registry)
        if own:
            _chain_steps(report, my_registry, own)
    return run_check(_(CHAIN_TITLE), body)
