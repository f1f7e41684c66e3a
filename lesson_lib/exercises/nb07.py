"""Self-checks for notebook 07, token budgets and the cost of remembering.

Build it (the core exercise of notebook 07b, part two of 07):
`check_my_budget_trim(my_budget_trim)` judges the learner's
`my_budget_trim(messages, budget)` by TRIM_RULES. Each rule reads one condition of the trim
checker (lesson_lib.trimcheck) on the histories of its bank (the valid ones, or for one rule
the broken ones), the bank that also guards the library's `budget_trim`, and shows the
smallest history that breaks it; the last rule is a property over random histories and
budgets. tests/test_core_track_nb07.py runs the
same rules on `budget_trim`. `compare_my_trim(my_budget_trim, runs)` then runs the trim
through the scripted conversation of lesson_lib.costs and returns the cost plot with it.

Exercise 1: `check_my_summarizer(my_summarizer)`: the learner's summarizer (the text of ONE
system message standing for the messages it is given, the previous summary first) is called
on a short history with a name in it, then on its own summary and a later turn, then plugged
into TokenBudgetMemory for the scripted conversation. What is judged is what the summaries
keep (the user's name, in any words), never how a model answers: a summarizer that asks a
real model passes as well as one written by hand.

The conversations of both checks are answered by the offline model (whatever backend the
notebook uses), so a check says the same for everyone.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from lesson_lib import costs
from lesson_lib.budget import TokenBudgetMemory
from lesson_lib.budget import _cut as _marker_cut
from lesson_lib.costs import (
    SMALL_WINDOW,
    TOKEN_BUDGET,
    ConversationRun,
    CostPlot,
    FunctionTrimMemory,
    Meter,
    lesson_tools,
    plot_costs,
    run_conversation,
)
from lesson_lib.exercises import (
    Report,
    Stuck,
    _learner_frame,
    finishing,
    not_called,
    not_done,
    run_check,
    signature_problem,
    where_hint,
    wrong_signature,
)
from lesson_lib.exercises.contract import Broken, Finding, Rule, check_rules, property_rule
from lesson_lib.i18n import N_, Twins, _, by_language, ngettext
from lesson_lib.memory import _role_label
from lesson_lib.protocol import find_problems
from lesson_lib.tokens import count_message, count_messages, count_text, encoding_name_for
from lesson_lib.trimcheck import (
    TRIM_HINTS,
    TrimCase,
    _current_turn,
    _floor,
    _forgot,
    _gaps,
    _invented,
    _is_subsequence,
    _lost,
    _over,
    _raised,
    _same,
    _shape,
    _validity,
    history_label,
    too_big,
    trim_cases,
    unmarked_cut,
)

SUMMARY_LIMIT = TOKEN_BUDGET // 4  # tokens: a summary keeps what matters, it is not a transcript
# In the language spoken now (read as NAME, OTHER_NAME, SAMPLE): the name the conversation's
# user gives, and the one the direct calls use, so a summary must take it from the messages
_DATA = Twins(
    NAME=("Xiaoming", "小明"),
    OTHER_NAME=("Meimei", "美美"),
    SAMPLE=([{"role": "system", "content": "You are a helpful assistant."},
             {"role": "user", "content": "Hi! My name is Xiaoming."},
             {"role": "assistant", "content": "Nice to meet you, Xiaoming! How can I help?"}],
            [{"role": "system", "content": "你是一个乐于助人的助手。"},
             {"role": "user", "content": "你好！我叫小明。"},
             {"role": "assistant", "content": "很高兴认识你，小明！有什么可以帮你的？"}]),
)


def _offline_meter() -> Meter:
    from lesson_lib.offline import offline_client  # noqa: PLC0415

    return Meter(offline_client())


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ----------------------------------------------------------------- Build it: the trim's rules
# TRIM_RULES judge it; tests/test_core_track_nb07.py runs the same rules on budget_trim.

TRIM_TITLE = N_("Build it · your token-budget trim")
UNIT = "tokens"


def valid_cases() -> list[TrimCase]:
    """The bank's histories the API accepts, in the language spoken now (trimcheck.bank)."""
    return [c for c in trim_cases() if not c.broken]


def broken_cases() -> list[TrimCase]:
    """The bank's histories the API refuses before any trim."""
    return [c for c in trim_cases() if c.broken]


_BY_LANGUAGE = {"VALID": valid_cases, "BROKEN": broken_cases, "TRIM_CASES": trim_cases}


def __getattr__(name: str) -> Any:
    """VALID, BROKEN, TRIM_CASES …: the data of the language spoken now."""
    if name in _BY_LANGUAGE:
        return _BY_LANGUAGE[name]()
    if name in ("NAME", "OTHER_NAME", "SAMPLE"):
        return getattr(_DATA, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Outcome(NamedTuple):
    """What the trim did with one case: its result, or the exception it raised (or, when it
    never finished, the Stuck that says so)."""
    result: Any
    error: Exception | None
    given: list            # the list it was given, as it was after the call
    stuck: Stuck | None = None


_OUTCOMES: dict[tuple[Any, str], _Outcome] = {}  # (trim, case name) -> outcome, for one check


def _on(case: TrimCase) -> Callable[[], str]:
    return lambda: _("this history: {history}").format(
        history=history_label(case.messages, case.max_tokens, "tokens"))


def _outcome(fn: Callable, case: TrimCase) -> _Outcome:
    """What `fn` does with (a copy of) one case; the rules of one check share it. A trim
    that does not finish is stopped once: each rule that asks again gets its Stuck."""
    try:
        key: tuple | None = (fn, case.name, by_language("en", "zh"))  # each bank's own
        if key in _OUTCOMES:
            return _stuck_or(_OUTCOMES[key])
    except TypeError:  # an unhashable callable: run it every time
        key = None
    given = copy.deepcopy(case.messages)
    try:
        with finishing(_on(case), who=N_("your trim"), hints=TRIM_HINTS):
            outcome = _Outcome(fn(given, case.max_tokens), None, given)
    except NotImplementedError:
        raise  # the skeleton: the check says "not done yet"
    except Stuck as stuck:
        outcome = _Outcome(None, None, given, stuck)
    except Exception as error:  # the learner's code failed: a finding, not a crash
        outcome = _Outcome(None, error, given)
    if key is not None:
        if len(_OUTCOMES) > 20 * len(trim_cases()):
            _OUTCOMES.clear()
        _OUTCOMES[key] = outcome
    return _stuck_or(outcome)


def _stuck_or(outcome: _Outcome) -> _Outcome:
    if outcome.stuck is not None:
        raise Stuck(outcome.stuck.what, outcome.stuck.hints)
    return outcome


def _is_list(outcome: _Outcome) -> bool:
    return outcome.error is None and not _shape(outcome.result)


def _crash(error: Exception) -> str:
    if not_called(error):
        return _("it could not be called: {message} ({hint})").format(
            message=_short(str(error), 120), hint=where_hint(error))
    where = _learner_frame(error)
    return _("it raised {error}: {message} (line {line} of {function}())").format(
        error=type(error).__name__, message=_short(str(error), 120), line=where.lineno,
        function=where.name)


_COUNTED: dict[str, int] = {}  # message (as JSON) -> tokens: the checks count the same ones often


def _tokens(message: Any) -> int:
    key = encoding_name_for() + json.dumps(message, sort_keys=True, default=str)
    if key not in _COUNTED:
        if len(_COUNTED) > 20_000:
            _COUNTED.clear()
        _COUNTED[key] = count_message(message)
    return _COUNTED[key]


def _cost(messages: list) -> int:
    """count_messages(messages), each message counted once per kernel."""
    return count_messages([]) + sum(_tokens(m) for m in messages)


def _size(case: TrimCase) -> str:
    return _("{tokens} tokens, budget {budget}").format(tokens=f"{_cost(case.messages):,}",
                                                        budget=f"{case.max_tokens:,}")


def _floor_cost(case: TrimCase) -> int:
    """The system messages and the current turn, uncut."""
    return _cost(_floor(case))


def _smallest(fn: Callable, cases: Sequence[TrimCase],
              finder: Callable[[TrimCase, _Outcome], str | None]) -> None:
    """Raise Broken for the smallest case (in tokens; a valid history before a broken one)
    where `finder` says what broke."""
    found = [(case, what) for case in cases
             if (what := finder(case, _outcome(fn, case))) is not None]
    if found:
        case, what = min(found, key=lambda f: (f[0].broken, _cost(f[0].messages)))
        raise Broken(f"{case.name} ({_size(case)}): {what.rstrip('.')}",
                     getattr(what, "hints", ()))  # a finding with hints of its own: them


def _bank_rule(name: str, cases: Callable[[], Sequence[TrimCase]],  # the cases, when judged
               finder: Callable[[TrimCase, _Outcome], str | None],
               hints: Sequence[str], needs: Sequence[str] = ()) -> Rule:
    return Rule(name, lambda fn: _smallest(fn, cases(), finder), tuple(hints), tuple(needs))


# ---- what each rule looks for in one case

def _returns_a_list(case: TrimCase, o: _Outcome) -> str | None:
    if o.error is not None:  # a ValueError is judged by the rule about raising
        return None if isinstance(o.error, ValueError) else _crash(o.error)
    shape = _shape(o.result)
    return shape[0][0] if shape else None


def _unchanged(case: TrimCase, o: _Outcome) -> str | None:
    if o.given == case.messages:
        return None
    if len(o.given) != len(case.messages):
        return _("the list it was given had {before} messages before the call and {after} "
                 "after").format(before=len(case.messages), after=len(o.given))
    k = next(k for k, (a, b) in enumerate(zip(o.given, case.messages, strict=True)) if a != b)
    return _("message {k} ({role}) of the list it was given was changed").format(
        k=k, role=_role_label(case.messages[k]))


def _accepted(case: TrimCase, o: _Outcome) -> str | None:
    found = _validity(case, o.result) if _is_list(o) else []
    return found[0][0] if found else None


def _systems_kept(case: TrimCase, o: _Outcome) -> str | None:
    if not _is_list(o):
        return None
    systems = [m for m in case.messages if m["role"] == "system"]
    missing = [m for m in systems if m not in o.result]
    if not missing:
        return None
    return ngettext("it dropped {missing} of the {n} system message: {content}",
                    "it dropped {missing} of the {n} system messages: {content}",
                    len(systems)).format(missing=len(missing), n=len(systems),
                                         content=repr(_short(missing[0]['content'], 50)))


def _turn_kept(case: TrimCase, o: _Outcome) -> str | None:
    if not _is_list(o) or unmarked_cut(_current_turn(case.messages), o.result) is not None:
        return None  # (a result cut without its marker: the rule on cutting says so)
    lost = _lost(case, o.result)  # a lost system message comes first: another rule's
    if any(m not in o.result for m in case.messages if m["role"] == "system"):
        lost = lost[1:]
    return lost[0][0] if lost else None


def _fits(case: TrimCase, o: _Outcome) -> str | None:
    """Where dropping older messages is enough (the system messages and the current turn
    fit), the result fits."""
    if not _is_list(o) or _floor_cost(case) > case.max_tokens:
        return None
    found = _over(case, UNIT, o.result)
    return found[0][0] if found else None


def _cut(case: TrimCase, o: _Outcome) -> str | None:
    """Where the current turn alone is over the budget but fits with its tool results cut:
    the result fits (so a tool result was cut), and the trim did not give up. Anywhere: a
    result cut short says so."""
    if _is_list(o) and (cut := unmarked_cut(_current_turn(case.messages), o.result)):
        return Finding(_("it cut the tool result for {id} without saying so: {kept} of its "
                         "{was} characters, and no 'truncated' marker").format(
                             id=cut[0], kept=f"{cut[1]:,}", was=f"{cut[2]:,}"),
                       (N_("a result cut short must say so: the model would take the part "
                           "for the whole, and answer from a page it has not read to the end"),
                        N_("truncate_text(text, max_tokens) (lesson_lib.budget) cuts and adds "
                           "'[truncated … characters]'; any cut of your own must end with a "
                           "marker that says 'truncated'")))
    floor = _floor_cost(case)
    if floor <= case.max_tokens or too_big(case, UNIT):
        return None
    if isinstance(o.error, ValueError):
        return _("it raised ValueError: {message}, but the current turn fits once its tool "
                 "result is cut").format(message=_short(str(o.error), 80))
    if not _is_list(o) or _cost(o.result) <= case.max_tokens:
        return None
    return _("it is {tokens} tokens, over the budget of {budget}: the system messages and "
             "the current turn alone are {floor}").format(
        tokens=f"{_cost(o.result):,}", budget=f"{case.max_tokens:,}", floor=f"{floor:,}")


def _raises(case: TrimCase, o: _Outcome) -> str | None:
    """ValueError, saying by how much, exactly where nothing can fit."""
    if not too_big(case, UNIT):
        if isinstance(o.error, ValueError) and _floor_cost(case) <= case.max_tokens:
            return _("it raised ValueError: {message}, but dropping older messages fits "
                     "the budget").format(message=_short(str(o.error), 80))
        return None
    if isinstance(o.error, ValueError):
        return None if _says_how_much(o.error) else (
            _("it raised ValueError({message}), which does not say by how many "
              "tokens").format(message=repr(_short(str(o.error), 60))))
    if not _is_list(o):
        return None
    return _("it returned {tokens} tokens for a budget of {budget}: the API would refuse it "
             "(context_length_exceeded)").format(tokens=f"{_cost(o.result):,}",
                                                 budget=f"{case.max_tokens:,}")


def _says_how_much(error: Exception) -> bool:
    return re.search(r"\d", str(error)) is not None


def _oldest_first(case: TrimCase, o: _Outcome) -> str | None:
    if not _is_list(o):
        return None
    found = _invented(case, o.result) + _gaps(case, o.result)
    return found[0][0] if found else None


def _no_more_than_needed(case: TrimCase, o: _Outcome) -> str | None:
    found = _forgot(case, UNIT, o.result, "unit") if _is_list(o) else []
    return found[0][0] if found else None


def _repaired(case: TrimCase, o: _Outcome) -> str | None:
    """A broken case, judged as check_trim judges it (the API's rules first)."""
    if o.error is not None:
        found = _raised(case, UNIT, o.error)
    else:
        found = _shape(o.result) or (
            _validity(case, o.result) + _lost(case, o.result) + _over(case, UNIT, o.result)
            + _invented(case, o.result) + _gaps(case, o.result)
            + _forgot(case, UNIT, o.result, "unit"))
    return found[0][0] if found else None


# ---- the property: random valid histories, random budgets

_RAIN = "light rain, 16 degrees, humidity 70%; "


def _labels(messages: list) -> str:
    """A history as short labels with each message's tokens, e.g. [system 12, user 8]."""
    try:
        return "[" + ", ".join(f"{_role_label(m)} {_tokens(m)}" for m in messages) + "]"
    except (AttributeError, TypeError):
        return _short(repr(messages), 120)


def _histories() -> Any:
    """(history, budget): 1 to 3 turns, each a question, 0 to 2 tool rounds of 1 to 3 calls
    (results of any length), an answer (the last turn may still be open), system messages
    here and there; a budget from just below the least anything can fit in to above the
    whole, often where the current turn itself must be cut."""
    from hypothesis import strategies as st  # noqa: PLC0415

    @st.composite
    def history_and_budget(draw: Callable) -> tuple[list[dict], int]:
        ids, notes = itertools.count(1), itertools.count(1)
        messages: list[dict] = []

        def note() -> None:
            if draw(st.integers(0, 4)) == 4:  # one time in five (shrinks to none)
                messages.append({"role": "system", "content": f"Note {next(notes)}: be brief."})

        if draw(st.booleans()):
            messages.append({"role": "system", "content": "You are a helpful assistant."})
        turns = draw(st.integers(1, 3))
        for t in range(1, turns + 1):
            messages.append({"role": "user", "content": f"Question {t}?"})
            for _round in range(draw(st.integers(0, 2))):
                calls = [f"call_{next(ids)}" for _ in range(draw(st.integers(1, 3)))]
                messages.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": c, "type": "function", "function": {
                        "name": "get_current_weather",
                        "arguments": json.dumps({"location": f"City {c[5:]}"})}}
                    for c in calls]})
                messages += [{"role": "tool", "tool_call_id": c,
                              "content": f"{c}: " + _RAIN * draw(st.integers(0, 8))}
                             for c in calls]
                note()
            if t < turns or draw(st.booleans()):
                messages.append({"role": "assistant", "content": f"Answer {t}."})
            note()
        emptied, marked, uncut = _least(messages)
        least = max(emptied - 10, 1)
        budget = draw(st.one_of(
            st.integers(least, marked + 10),             # nothing fits, or only just
            st.integers(marked, max(marked, uncut)),     # the current turn must be cut
            st.integers(least, _cost(messages) + 10)))   # anything, up to all of it fits
        return messages, budget

    return history_and_budget()


def _least(messages: list[dict]) -> tuple[int, int, int]:
    """What the system messages and the current turn cost: with every tool result of the
    current turn emptied (no trim can send less), with each cut to the library's marker
    alone (the least budget_trim sends before it gives up), and uncut."""
    turn = _current_turn(messages)
    before = messages[:len(messages) - len(turn)]
    systems = [m for m in before if m["role"] == "system"]

    def marked(m: dict) -> dict:
        cut = {**m, "content": _marker_cut(m["content"], 0)}  # truncate_text's marker alone
        return cut if _tokens(cut) < _tokens(m) else m

    emptied = [{**m, "content": ""} if m["role"] == "tool" else m for m in turn]
    cut = [marked(m) if m["role"] == "tool" else m for m in turn]
    return _cost(systems + emptied), _cost(systems + cut), _cost(systems + turn)


def _any_history(fn: Callable, example: tuple[list[dict], int]) -> str | None:
    """What breaks (None: nothing) when `fn` trims this random history to this budget."""
    messages, budget = example
    given = copy.deepcopy(messages)
    seen = _("budget {budget}, history {history} ({tokens} tokens)").format(
        budget=budget, history=_labels(messages), tokens=_cost(messages))
    impossible, beyond_the_library = (least > budget for least in _least(messages)[:2])
    try:
        with finishing(lambda: _("this history: {history}").format(
                           history=history_label(messages, budget, "tokens")),
                       who=N_("your trim"), hints=TRIM_HINTS):
            result = fn(given, budget)
    except NotImplementedError:
        raise
    except ValueError as error:
        if not beyond_the_library:
            return _("{seen}: it raised ValueError: {message}, but a trim fits").format(
                seen=seen, message=_short(str(error), 80))
        if not _says_how_much(error):
            return _("{seen}: it raised ValueError({message}), not saying by how "
                     "much").format(seen=seen, message=repr(str(error)))
        return None
    except Exception as error:
        return f"{seen}: {_crash(error)}"
    what = _property_problem(messages, budget, result, impossible)
    if what is None and given != messages:
        what = _("it changed the list it was given")
    return None if what is None else _("{seen}: it returned {history}: {what}").format(
        seen=seen, history=_labels(result), what=what)


def _property_problem(messages: list[dict], budget: int, result: Any,
                      impossible: bool) -> str | None:
    if _shape(result):
        return _shape(result)[0][0]
    problems = find_problems(result)
    if problems:
        return _("the API would refuse it: {problem}").format(problem=problems[0].message)
    if any(m not in result for m in messages if m["role"] == "system"):
        return _("a system message is missing")
    if (cut := unmarked_cut(_current_turn(messages), result)) is not None:
        return _("the tool result for {id} was cut without a 'truncated' marker").format(
            id=cut[0])
    if not _is_subsequence(_current_turn(messages), result, lambda t, r: _same(r, t)):
        return _("part of the current turn is missing")
    if _cost(result) > budget:
        if impossible:
            return _("{tokens} tokens: nothing can fit this budget, so raise ValueError "
                     "saying by how much").format(tokens=_cost(result))
        return _("{tokens} tokens, {over} over the budget").format(tokens=_cost(result),
                                                                   over=_cost(result) - budget)
    if not _is_subsequence(result, messages):
        return _("it is not the input with messages removed (one was added, changed or "
                 "moved)")
    said = [m for m in messages if m["role"] != "system"]
    kept = [m for m in result if m["role"] != "system"]
    if kept and not all(_same(k, t) for k, t in zip(kept, said[len(said) - len(kept):],
                                                    strict=True)):
        return _("it dropped messages newer than some it kept")
    return None


# ---- the rules, in the order a learner meets them

_LIST = N_("it returns the trimmed list (a list of message dicts)")
_ACCEPTED = N_("the API accepts what it returns: a tool call and its results stay or go together")
_SYSTEMS = N_("it keeps every system message, wherever it stands")
_TURN = N_("it keeps the current turn: the latest question and everything after it")
_FITS = N_("it fits the budget, counted with count_messages()")
_OLDEST = N_("it only removes messages, oldest first: nothing added, changed or moved")

TRIM_RULES: list[Rule] = [
    _bank_rule(_LIST, valid_cases, _returns_a_list,
               (N_("end with `return` and the list of the message dicts you keep"),
                N_("an exception shows its line: run your function on that case by hand, "
                   "trim_case(name).messages (from lesson_lib.trimcheck)"))),
    _bank_rule(N_("it leaves the list it was given unchanged"), trim_cases, _unchanged,
               (N_("the caller still needs its history: never del, pop or remove on the list "
                   "you were given, nor edit its messages"),
                N_("work on a copy: kept = list(messages), then remove from kept")),
               needs=(_LIST,)),
    _bank_rule(_ACCEPTED, valid_cases, _accepted,
               (N_("a unit is one message, or an assistant message with tool_calls together "
                   "with ALL the tool messages right after it: drop whole units, never part "
                   "of one"),
                N_("walk the list once and group it: the tool messages that follow an "
                   "assistant(tool_calls) belong to its unit")),
               needs=(_LIST,)),
    _bank_rule(_SYSTEMS, valid_cases, _systems_kept,
               (N_("a system message can stand anywhere (an instruction added mid-conversation), "
                   "not only at index 0: never choose one to drop"),),
               needs=(_LIST,)),
    _bank_rule(_TURN, valid_cases, _turn_kept,
               (N_("find the latest user message first: it and everything after it (the tool "
                   "rounds it caused) is the current turn, and the model needs all of it"),
                N_("only units before the current turn may be dropped; when that is not enough, "
                   "the next rules say what to do")),
               needs=(_LIST,)),
    _bank_rule(_FITS, valid_cases, _fits,
               (N_("count the whole list with count_messages(): each message's overhead and the "
                   "tool calls' arguments are tokens too, and characters are not tokens"),
                N_("drop the oldest unit, count again, and go on while the list is over the "
                   "budget (an off-by-one here keeps one unit too many)")),
               needs=(_LIST,)),
    _bank_rule(N_("when the current turn alone is over the budget, its largest tool result is "
                  "cut (marked 'truncated') to fit"), valid_cases, _cut,
               (N_("dropping older units cannot help when the current turn itself is too big, "
                   "and dropping the tool result loses the answer: shorten it instead"),
                N_("truncate_text(text, max_tokens) keeps the longest start of a text that fits "
                   "and adds '[truncated … characters]': give it what the result may still cost, "
                   "its tokens minus how far over you are")),
               needs=(_LIST,)),
    _bank_rule(N_("when nothing can fit, it raises ValueError saying by how many tokens (and "
                  "only then)"), valid_cases, _raises,
               (N_("when the system messages and the current turn do not fit even with its tool "
                   "results cut, every list you could return is refused by the API: raise instead"),
                N_("say by how much, e.g. ValueError(f\"over budget by {over} tokens\"), so the "
                   "caller can tell the user; as long as a trimmed list fits, return it")),
               needs=(_LIST,)),
    _bank_rule(_OLDEST, valid_cases, _oldest_first,
               (N_("only remove messages: keep the others as they are, in their order (a tool "
                   "result cut with a 'truncated' marker is the one change allowed)"),
                N_("drop from the oldest end: what stays (system messages aside) is the newest "
                   "part of the conversation")),
               needs=(_LIST,)),
    _bank_rule(N_("it forgets no more than it must: it stops as soon as the list fits"),
               valid_cases,
               _no_more_than_needed,
               (N_("check the budget after every unit you drop, and stop when the list fits: "
                   "a list exactly at the budget fits"),
                N_("never drop everything at once: each unit dropped is something the model "
                   "forgets")),
               needs=(_LIST,)),
    _bank_rule(N_("a broken history comes back valid, by the same rules (repair it first)"),
               broken_cases, _repaired,
               (N_("histories break outside the trim: a run interrupted mid-round, a result "
                   "stored twice or before its call. The API refuses them whatever you drop"),
                N_("run repair_messages(messages).messages first (it returns a valid copy), "
                   "then trim what it gives back")),
               needs=(_LIST,)),
    property_rule(
        N_("for any history and budget: valid, system messages and current turn kept, within "
           "the budget (or ValueError), oldest dropped first"),
        _histories(), _any_history,
        (N_("the history above is the smallest one your trim gets wrong (each message with its "
            "tokens): build it by hand and run your function on it"),
         N_("a current turn can hold several tool rounds and several results: when one cut is "
            "not enough, the next largest result may need cutting too")),
        examples=100,
        needs=(_ACCEPTED, _SYSTEMS, _TURN, _FITS, _OLDEST)),
]


def check_my_budget_trim(my_budget_trim: Any) -> bool:  # my_budget_trim(messages, budget)
    """Build it: judge the learner's trim by TRIM_RULES (the trim checker's bank, rule by
    rule, then random histories); print the report, return True when every rule holds."""
    if not callable(my_budget_trim):
        return not_done(_(TRIM_TITLE), _("define my_budget_trim(messages, budget) above and "
                                         "pass the function itself (no parentheses)"))
    if wrong_signature(_(TRIM_TITLE), signature_problem(
            my_budget_trim, "my_budget_trim(messages, budget)", [], 0)):
        return False
    _OUTCOMES.clear()  # each check runs the trim afresh (it may have been edited)
    try:
        return check_rules(_(TRIM_TITLE), my_budget_trim, TRIM_RULES,
                           start=_("write the body of my_budget_trim, then run this check "
                                   "again"))
    finally:
        _OUTCOMES.clear()


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__",
                                                    _("your trim"))


def _unwritten(fn: Callable) -> bool:
    """The skeleton still raises NotImplementedError."""
    try:
        with finishing(lambda: "", who=N_("your trim")):
            fn([dict(m) for m in _DATA.SAMPLE], TOKEN_BUDGET)
    except NotImplementedError:
        return True
    except (Exception, Stuck):  # noqa: BLE001  anything else is the run's to report
        return False
    return False


def _limited(fn: Callable) -> Callable:
    """`fn`, stopped (Stuck) when one call does not finish: for the 50-turn conversation."""
    def trim(messages: list[dict], budget: int) -> Any:
        with finishing(lambda: _("this history: {history}").format(
                           history=history_label(messages, budget, "tokens")),
                       who=N_("your trim"), hints=TRIM_HINTS):
            return fn(messages, budget)

    trim.__name__ = _name(fn)
    return trim


def compare_my_trim(my_budget_trim: Any,                 # your trim(messages, budget) -> list
                    runs: Sequence[ConversationRun] = (),  # the library's runs, to compare
                    token_budget: int = TOKEN_BUDGET,
                    window: int = SMALL_WINDOW,
                    script: Sequence[str] | None = None) -> CostPlot | None:  # None: SCRIPT
    """Your trim in the conversation: run the script with it as the memory's trim
    (FunctionTrimMemory), print whether it got through within the budget, and return the
    cost plot of your run next to `runs`."""
    script = script if script is not None else costs.SCRIPT
    name = _name(my_budget_trim)
    title = _("{name} in the {turns}-turn conversation").format(name=name, turns=len(script))
    if not callable(my_budget_trim) or _unwritten(my_budget_trim):
        not_done(title, _("write my_budget_trim(messages, budget) above (check_my_budget_trim "
                          "judges it), then run this cell again"))
        return None
    tools = lesson_tools().schemas()
    report = Report(title)
    try:
        mine = run_conversation(FunctionTrimMemory(_limited(my_budget_trim), token_budget,
                                                   tools=tools),
                                script, name=name, meter=_offline_meter())
    except Stuck as stuck:
        report.expect(False, stuck.what, stuck.hints)
        print(report)
        return None
    report.expect(mine.error is None, _("it ran {done} of {turns} turns").format(
                      done=len(mine.turns), turns=len(script))
                  + (_("; stopped at {error}").format(error=mine.error) if mine.error else ""),
                  _("a request the API refuses, or an exception in your trim, stops the "
                    "conversation: check_my_budget_trim shows which history breaks it"))
    largest = max((t.largest.tokens for t in mine.turns), default=0)
    report.expect(largest <= token_budget,
                  _("its largest request was {tokens} tokens (budget {budget})").format(
                      tokens=f"{largest:,}", budget=f"{token_budget:,}"),
                  _("count with count_messages() and keep dropping whole units until it fits"))
    print(report)
    if mine.error is None:
        print(_("Its answer to {question}: {reply}").format(
            question=repr(mine.turns[-1].question), reply=mine.turns[-1].reply))
    return plot_costs([*runs, mine], window, token_budget)


# ----------------------------------------------------------------- exercise 1: a summarizer

SUMMARIZER_TITLE = N_("Exercise 1 · my_summarizer")


def _weather_round(n: int, question: str, city: str, reply: str) -> list[dict]:
    call = f"call_s{n}"
    return [{"role": "user", "content": question},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call, "type": "function", "function": {
                    "name": "get_current_weather",
                    "arguments": json.dumps({"location": city})}}]},
            {"role": "tool", "tool_call_id": call,
             "content": json.dumps({"location": city, "temperature": 16, "unit": "celsius",
                                    "condition": "cloudy"}, ensure_ascii=False)},
            {"role": "assistant", "content": reply}]


def first_dropped(name: str | None = None) -> list[dict]:
    """The first turns a memory drops: the user's name (None: OTHER_NAME), then a weather
    round, in the language spoken now."""
    name = name or _DATA.OTHER_NAME
    if by_language(False, True):
        return [{"role": "user", "content": f"你好！我叫{name}。"},
                {"role": "assistant", "content": f"很高兴认识你，{name}！有什么可以帮你的？"},
                *_weather_round(1, "成都天气怎么样？", "成都", "成都多云，16°C。")]
    return [{"role": "user", "content": f"Hi! My name is {name}."},
            {"role": "assistant", "content": f"Nice to meet you, {name}! How can I help?"},
            *_weather_round(1, "What's the weather in Chengdu?", "Chengdu",
                            "Chengdu is cloudy, 16°C.")]


def later_dropped() -> list[dict]:
    """A later turn a memory drops: no name in it."""
    return _weather_round(2, *by_language(
        ("And in Shanghai?", "Shanghai", "Shanghai is cloudy, 16°C."),
        ("上海呢？", "上海", "上海多云，16°C。")))


def _mentions(text: Any, name: str) -> bool:
    return isinstance(text, str) and name.lower() in text.lower()


def check_my_summarizer(my_summarizer: Any,            # my_summarizer(messages) -> str
                        script: Sequence[str] | None = None) -> bool:  # the turns (None: SCRIPT)
    """Exercise 1: what the learner's summaries keep (the name, in any words), called
    directly and then in TokenBudgetMemory(TOKEN_BUDGET, drop="turn") through the
    50-turn conversation, answered by the offline model."""
    script = script if script is not None else costs.SCRIPT
    if not callable(my_summarizer):
        return not_done(_(SUMMARIZER_TITLE), _("define my_summarizer(messages) above and pass "
                                               "the function itself (no parentheses)"))
    if wrong_signature(_(SUMMARIZER_TITLE), signature_problem(
            my_summarizer, "my_summarizer(messages)", [])):
        return False
    try:
        first = my_summarizer(copy.deepcopy(first_dropped()))
    except NotImplementedError:
        return not_done(_(SUMMARIZER_TITLE), _("write the body of my_summarizer, then run "
                                               "this check again"))
    except Exception:  # noqa: BLE001  reported with its line by run_check below
        first = None

    def body(report: Report) -> None:
        summary = my_summarizer(copy.deepcopy(first_dropped())) if first is None else first
        if not report.expect(isinstance(summary, str) and summary.strip() != "",
                             _("it returns text (given the first turns, it returned "
                               "{summary})").format(summary=_short(repr(summary))),
                             _("return the summary as one string: it becomes the content of "
                               "one system message")):
            return
        _judge_direct(report, my_summarizer, summary)
        written: list[str] = []

        def summarize(messages: list[dict]) -> str:
            text = my_summarizer(messages)
            written.append(text if isinstance(text, str) else "")
            return text

        run = run_conversation(TokenBudgetMemory(TOKEN_BUDGET, tools=lesson_tools().schemas(),
                                                 drop="turn", summarizer=summarize),
                               script, name="my_summarizer", meter=_offline_meter())
        _judge_run(report, run, written, len(script))

    return run_check(_(SUMMARIZER_TITLE), body)


def _judge_direct(report: Report, my_summarizer: Callable, summary: str) -> None:
    """The summary of turns that say a name keeps it; the next summary, written from that
    one and a later turn, still does."""
    other = _DATA.OTHER_NAME
    if not report.expect(_mentions(summary, other),
                         _("given turns where the user says {said}, its summary keeps the "
                           "name: {summary}").format(said=repr(first_dropped()[0]["content"]),
                                                     summary=repr(_short(summary))),
                         _("a summary stands for the messages it replaces: keep the facts the "
                           "user gave (here the name, said in the first message), in any "
                           "words")):
        return
    again = my_summarizer([{"role": "system", "content": summary}, *later_dropped()])
    report.expect(_mentions(again, other),
                  _("given that summary (first, role system) and a later turn, its next "
                    "summary still has the name: {summary}").format(summary=_short(repr(again))),
                  _("the previous summary comes first, as a system message, and it is dropped "
                    "with the rest: whatever it says is lost unless your new summary says it "
                    "again. Carry its facts forward"))


def _only_appends(written: list[str]) -> tuple[int, int] | None:
    """(tokens of the first summary, of the last) when every summary holds the first one
    whole and the last is at least twice as long: summaries that only ever grow, each the
    old text with more added (whatever TokenBudgetMemory handed back as the old one)."""
    texts = [t.strip() for t in written]
    if len(texts) < 3 or not texts[0] or not all(texts[0] in t for t in texts[1:]):
        return None
    first, last = count_text(texts[0]), count_text(texts[-1])
    return (first, last) if last >= 2 * first else None


def _judge_run(report: Report, run: ConversationRun, written: list[str], turns: int) -> None:
    """What exercise 1 asks of the conversation run with the learner's summarizer."""
    if not report.expect(run.error is None, _("the conversation ran {done} of {turns} "
                                              "turns").format(done=len(run.turns), turns=turns)
                         + (_("; stopped at {error}").format(error=run.error) if run.error
                            else ""),
                         _("your summarizer raised, or returned something that is not text")):
        return
    if not report.expect(len(written) >= 2, _("it was called {n} times (once per trim that "
                                              "dropped turns)").format(n=len(written)),
                         _("it is called only when turns are dropped")):
        return
    name = _DATA.NAME
    lost = [k for k, text in enumerate(written, 1) if not _mentions(text, name)]
    report.expect(not lost,
                  _("all {n} summaries keep the name {name}").format(n=len(written), name=name)
                  if not lost else
                  _("summary {k} of {n} no longer has the name {name}: {summary}").format(
                      k=lost[0], n=len(written), name=name,
                      summary=_short(repr(written[lost[0] - 1]))),
                  _("the name was said in turn 1, so only the first summary sees it in the "
                    "messages; after that only your previous summary (the first message you "
                    "are given, role system) still has it"))
    grown = _only_appends(written)
    if grown is not None:  # (said only when it does: a summary that condenses is the norm)
        report.expect(False, _("its summaries only grow: each of the {n} holds the first "
                               "({first} tokens) whole with more added, the last {last} tokens; "
                               "it grows with every trim and never condenses").format(
                                   n=len(written), first=grown[0], last=grown[1]),
                      (N_("a summary stands for the messages it replaces, the previous summary "
                          "among them: the new one is written afresh, keeping what matters, "
                          "not the old one with the new turns added at its end"),
                       N_("at this pace it outgrows the budget in a longer conversation, and "
                          "crowds the conversation out of it: keep facts (the name), not "
                          "everything that was said")))
    longest = max((count_text(t) for t in written), default=0)
    report.expect(longest <= SUMMARY_LIMIT, _("its longest summary was {tokens} tokens (at "
                                              "most {limit})").format(
                      tokens=f"{longest:,}", limit=f"{SUMMARY_LIMIT:,}"),
                  _("keep what matters (the name, open questions), not a transcript: a summary "
                    "that grows crowds the conversation out of the budget"))
