"""check_trim(): run a trim function against a bank of histories built from real failures.

Each TrimCase is a history that broke someone's agent (a parallel group at the cut, a
system message in the middle, a run interrupted between a call and its result, a history
reloaded in the wrong order …) and says what it protects against. It carries two budgets,
so one bank judges both kinds of trim: `check_trim(fn, "messages")` calls
`fn(messages, case.max_messages)`, `check_trim(fn, "tokens")` calls
`fn(messages, case.max_tokens)` (tokens as lesson_lib.tokens.count_messages counts them).

A result passes when:

1. the API accepts it (validate_messages(), and no result answers the same call twice);
2. every system message is still there, and so is the current turn: the latest user
   message and everything after it (a tool result in it may be cut if it says "truncated");
3. it fits the budget. When even the system messages and the current turn do not fit:
   with a message budget, keep just those; with a token budget, raise ValueError saying
   by how much (the API would refuse the request anyway);
4. it is the input with its oldest messages removed: nothing invented, nothing moved, no
   gap (system messages aside, what stays is the newest part). A case marked `broken`
   breaks the API's rules before any trim: hand back a valid list anyway
   (repair_messages() first, or drop the broken part);
5. it forgets no more than a whole-turn trim would (as many user messages kept as
   budget_trim(..., drop="turn") keeps), and the list it was given is left unchanged. A
   trim that drops one unit at a time is held to more: `drop="unit"` (judge_one,
   judge_trim, check_trim) asks it to keep as many of the earlier messages as
   budget_trim(..., drop="unit") keeps, so that dropping a whole turn where one message
   would do is caught.

Each call of the trim has a time limit (lesson_lib.exercises.deadline): a trim whose loop
never ends is stopped and reported ("your trim did not finish in 5 s on this history: …"),
and a trim whose parameters are not (messages, budget) is told so in one sentence.

`naive_trim` and `seed_trim` are the two tempting ways, for comparison; `budget_trim` is
the library's (repair, then TokenBudgetMemory's or MessageBudgetMemory's trimming).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.budget import MessageBudgetMemory, TokenBudgetMemory
from lesson_lib.exercises import (
    Report,
    Stuck,
    finishing,
    not_called,
    signature_problem,
    where_hint,
    wrong_signature,
)
from lesson_lib.i18n import CATALOGUES, N_, _, by_language, catalogue, ngettext
from lesson_lib.protocol import find_problems
from lesson_lib.repair import find_duplicate_ids, repair_messages
from lesson_lib.text import columns, pad
from lesson_lib.tokens import count_messages

UNITS = ("messages", "tokens")
DROPS = ("turn", "unit")  # what a trim is held to forget no more than (rule 5)


@dataclass(frozen=True)
class TrimCase:
    """One history to trim, its two budgets, and the failure it protects against."""
    name: str             # says what is tricky, e.g. "parallel group at the cut"
    messages: list[dict]  # oldest first
    max_messages: int     # the budget when a trim counts messages
    max_tokens: int       # the budget when a trim counts tokens (count_messages)
    protects: str         # the real failure this case protects against
    broken: bool = False  # the input itself breaks the API's rules

    def budget(self, unit: str) -> int:
        return self.max_messages if unit == "messages" else self.max_tokens


def request_cost(messages: list[dict], unit: str = "tokens") -> int:
    """What a list costs against a budget: its length, or its tokens (count_messages)."""
    return len(messages) if unit == "messages" else count_messages(messages)


# ----------------------------------------------------------------- three trims, for comparison

def naive_trim(messages: list[dict],  # the history (left unchanged)
               budget: int,           # most messages (or tokens) to keep
               *, unit: str = "messages") -> list[dict]:
    """THE WRONG WAY: while over budget, drop the oldest message that is not a system
    message. It leaves tool results without their call (the API's 400), drops the
    question itself when the budget is small, and passes a broken history on as it is."""
    trimmed = list(messages)
    while request_cost(trimmed, unit) > budget:
        i = next((i for i, m in enumerate(trimmed) if m["role"] != "system"), None)
        if i is None:
            break
        del trimmed[i]
    return trimmed


def seed_trim(messages: list[dict], budget: int, *, unit: str = "messages",
              cost: Callable[[list[dict]], int] | None = None) -> list[dict]:
    """The source article's rule: drop the oldest non-system message and the tool messages
    right after it. No orphan is left behind, but the current question (and half of the
    current turn) can go, and a broken history is passed on as it is. `cost` replaces the
    way a list is counted (default: request_cost in `unit`)."""
    cost = cost or (lambda ms: request_cost(ms, unit))
    trimmed = list(messages)
    while cost(trimmed) > budget:
        i = next((i for i, m in enumerate(trimmed) if m["role"] != "system"), None)
        if i is None:
            break
        end = i + 1
        while end < len(trimmed) and trimmed[end]["role"] == "tool":
            end += 1
        del trimmed[i:end]
    return trimmed


def budget_trim(messages: list[dict],  # the history, possibly broken (left unchanged)
                budget: int,           # most tokens (or messages) a request may cost
                *, unit: str = "tokens",  # "tokens": TokenBudgetMemory; "messages": Message…
                drop: str = "unit",       # "unit" or "turn", as in TokenBudgetMemory
                tools: list[dict] | None = None) -> list[dict]:
    """The library's way: repair the history, then trim it as TokenBudgetMemory does
    (whole units, oldest first; system messages and the current turn kept; the current
    turn's largest tool results cut if needed). Raises OverBudgetError when even that
    cannot fit a token budget."""
    memory = (TokenBudgetMemory(budget, tools=tools, drop=drop) if unit == "tokens"
              else MessageBudgetMemory(budget, drop=drop))
    memory.add_many(repair_messages(messages).messages)
    return memory.to_api_format()


# ----------------------------------------------------------------- judging one result

@dataclass
class TrimVerdict:
    """What check_trim found for one case."""
    case: TrimCase
    unit: str
    result: Any = None
    problems: list[tuple[str, str]] = field(default_factory=list)  # (what went wrong, hint)

    @property
    def passed(self) -> bool:
        return not self.problems


def _current_turn(messages: list[dict]) -> list[dict]:
    """The latest user message and everything after it (all of it when there is none)."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=0)
    return messages[last:]


def _floor(case: TrimCase) -> list[dict]:
    """The least a trim may keep: every system message and the current turn (of the
    repaired history, for a broken case)."""
    history = repair_messages(case.messages).messages
    turn = _current_turn(history)
    before = history[:len(history) - len(turn)]
    return [m for m in before if m["role"] == "system"] + turn


def too_big(case: TrimCase, unit: str) -> bool:
    """True when even the system messages and the current turn exceed the case's budget
    (for tokens: even with every tool result of the current turn cut to nothing)."""
    floor = _floor(case)
    if unit == "messages":
        return len(floor) > case.max_messages
    emptied = [{**m, "content": ""} if m["role"] == "tool" else m for m in floor]
    return count_messages(emptied) > case.max_tokens


def _is_cut(kept: Mapping, original: Mapping) -> bool:
    """`kept` is tool result `original`, shortened with a visible "truncated" marker."""
    return (kept.get("role") == original.get("role") == "tool"
            and kept.get("tool_call_id") == original.get("tool_call_id")
            and isinstance(kept.get("content"), str) and isinstance(original.get("content"), str)
            and len(kept["content"]) < len(original["content"])
            and "truncated" in kept["content"].lower())


def _same(kept: Mapping, original: Mapping) -> bool:
    return kept == original or _is_cut(kept, original)


def _is_subsequence(part: list, whole: list, same: Callable = _same) -> bool:
    rest = iter(whole)
    return all(any(same(p, w) for w in rest) for p in part)


def _validity(case: TrimCase, result: list[dict]) -> list[tuple[str, str]]:
    """The first rule the API would refuse `result` for, with the protocol's explanation."""
    problems = find_problems(result) + (find_duplicate_ids(result) if result else [])
    if not problems:
        return []
    p = min(problems, key=lambda q: q.index or 0)
    m = result[p.index] if p.index is not None and p.index < len(result) else {}
    who = (_("message {i} ({label})").format(i=p.index, label=_label(m)) if m
           else _("the list"))
    hint = p.explanation or _("run validate_messages() on your result to see why")
    if case.broken:
        hint += _(" (this history was broken before any trim: run repair_messages() on it "
                  "first, or drop the broken part)")
    return [(_("the API would refuse it: {who}: {error}").format(who=who, error=p.message),
             hint)]


def _label(m: Mapping) -> str:
    if m.get("role") == "tool":
        return f"tool, {m.get('tool_call_id')}"
    if m.get("tool_calls"):
        n = len(m["tool_calls"])
        return "assistant→" + ngettext("{n} call", "{n} calls", n).format(n=n)
    return str(m.get("role"))


def _lost(case: TrimCase, result: list[dict]) -> list[tuple[str, str]]:
    """System messages, the latest question and the current turn: all must stay."""
    found = []
    systems = [m for m in case.messages if m["role"] == "system"]
    missing = [m for m in systems if m not in result]
    if missing:
        found.append((ngettext("it lost {lost} of the {n} system message, e.g. {example}",
                               "it lost {lost} of the {n} system messages, e.g. {example}",
                               len(systems)).format(lost=len(missing), n=len(systems),
                                                    example=repr(missing[0]['content'][:50])),
                      _("never drop a system message, wherever it stands: skip role 'system' "
                        "when you choose what to drop")))
    turn = _current_turn(case.messages)
    if turn and turn[0]["role"] == "user" and turn[0] not in result:
        found.append((_("it lost the latest user question {question}").format(
                          question=repr(turn[0]['content'][:60])),
                      _("find the latest user message first and never drop it or anything "
                        "after it: the model must see the question it is answering")))
    elif not case.broken and (cut := unmarked_cut(turn, result)) is not None:
        found.append((_("it cut the tool result for {id} without saying so: {kept} of its "
                        "{was} characters, and no 'truncated' marker").format(
                          id=cut[0], kept=f"{cut[1]:,}", was=f"{cut[2]:,}"),
                      _("a result cut short must say so, or the model takes the part for the "
                        "whole: truncate_text() (lesson_lib.budget) adds '[truncated … "
                        "characters]'")))
    elif not case.broken and not _is_subsequence(turn, result, lambda t, r: _same(r, t)):
        found.append((_("it dropped part of the current turn ({n} messages from the latest "
                        "question on)").format(n=len(turn)),
                      _("keep every tool round after the latest question: without its results "
                        "the model calls the same tools again")))
    return found


def unmarked_cut(turn: list[dict], result: list) -> tuple[str, int, int] | None:
    """(call id, characters kept, characters it had) for a tool result of `turn` that
    `result` holds shortened without a "truncated" marker; None when there is none."""
    for original in turn:
        if original.get("role") != "tool" or not isinstance(original.get("content"), str):
            continue
        for kept in result:
            if (isinstance(kept, Mapping) and kept.get("role") == "tool"
                    and kept.get("tool_call_id") == original.get("tool_call_id")
                    and isinstance(kept.get("content"), str)
                    and len(kept["content"]) < len(original["content"])
                    and "truncated" not in kept["content"].lower()):
                return str(original["tool_call_id"]), len(kept["content"]), \
                    len(original["content"])
    return None


def _over(case: TrimCase, unit: str, result: list[dict]) -> list[tuple[str, str]]:
    """The budget: met, or (when impossible) as close as allowed."""
    cost, budget = request_cost(result, unit), case.budget(unit)
    if unit == "messages":
        limit = len(_floor(case)) if too_big(case, unit) else budget
        if cost <= limit:
            return []
        return [(_("it kept {cost} messages, more than {limit}").format(cost=cost, limit=limit),
                 _("keep dropping whole groups (never the system messages or the current turn) "
                   "until len(result) <= max_messages"))]
    if cost <= budget:
        return []  # (when nothing can fit, a list that fits has lost something: _lost says what)
    if too_big(case, unit):
        return [(_("it returned {cost} tokens for a budget of {budget}: the API would "
                   "refuse it (context_length_exceeded)").format(cost=f"{cost:,}",
                                                                 budget=f"{budget:,}"),
                 _("when the system messages and the current turn cannot fit even with tool "
                   "results cut, raise ValueError saying by how many tokens"))]
    return [(_("it is {cost} tokens, {over} over the budget of {budget}").format(
                cost=f"{cost:,}", over=f"{cost - budget:,}", budget=f"{budget:,}"),
             _("count with count_messages() (tool-call arguments and every message's overhead "
               "count; characters are not tokens), and cut the current turn's largest tool "
               "result when dropping old turns is not enough"))]


def _invented(case: TrimCase, result: list[dict]) -> list[tuple[str, str]]:
    """Only removals (and cut tool results); for a broken input, its other messages'
    order and text must stay."""
    if not case.broken and _is_subsequence(result, case.messages):
        return []
    if case.broken:
        said = [(m["role"], m.get("content")) for m in case.messages if m["role"] != "tool"]
        kept = [(m["role"], m.get("content")) for m in result if m["role"] != "tool"]
        if _is_subsequence(kept, said, lambda a, b: a == b):
            return []
    return [(_("it is not the input with some messages removed (a message was added, changed "
               "or moved)"), _("only remove messages (or cut a tool result, saying "
                               "'truncated'); keep the others as they are, in their order"))]


def _gaps(case: TrimCase, result: list[dict]) -> list[tuple[str, str]]:
    """Oldest first: what stays (system messages aside) is the newest part of the history."""
    said = [m for m in case.messages if m["role"] != "system"]
    kept = [m for m in result if m["role"] != "system"]
    if case.broken or not _is_subsequence(result, case.messages) or not kept:
        return []
    tail = said[len(said) - len(kept):]
    if all(_same(k, t) for k, t in zip(kept, tail, strict=True)):
        return []
    return [(_("it dropped messages newer than some it kept"),
             _("drop from the oldest end only: what stays must be the newest part of the "
               "conversation, whole (the model needs the most recent context)"))]


def _forgot(case: TrimCase, unit: str, result: list[dict],
            drop: str = "turn") -> list[tuple[str, str]]:
    """drop="turn": as many earlier user messages kept as a whole-turn trim keeps.
    drop="unit": as many earlier messages (system ones aside) as a trim that drops one unit
    at a time keeps (a message, or a call with its results)."""
    if too_big(case, unit):
        return []
    reference = budget_trim(case.messages, case.budget(unit), unit=unit, drop=drop)
    if drop == "unit":
        can, did = (sum(m["role"] != "system" for m in x[:len(x) - len(_current_turn(x))])
                    for x in (reference, result))
        if did >= can:
            return []
        return [(_("it kept {did} of the earlier messages where {can} can stay: it dropped "
                   "more than the budget needs").format(did=did, can=can),
                 _("drop one unit at a time (a message, or a call with all its results), "
                   "oldest first, and stop as soon as the list fits (a list exactly at the "
                   "budget fits): every unit more is forgotten for nothing, a whole turn too"))]
    can, did = (max(sum(m["role"] == "user" for m in x) - 1, 0) for x in (reference, result))
    if did >= can:
        return []
    return [(_("it kept {did} of the earlier user messages where {can} can stay").format(
                did=did, can=can),
             _("stop dropping as soon as the list fits: a trim should forget as little as it "
               "can"))]


def _shape(result: Any) -> list[tuple[str, str]]:
    if result is None:
        return [(_("it returned None"), _("end your function with `return` and the trimmed "
                                          "list"))]
    if not isinstance(result, list) or not all(isinstance(m, Mapping) for m in result):
        return [(_("it returned {type}, not a list of message dicts").format(
                    type=type(result).__name__),
                 _("return the list of message dicts itself"))]
    return []


def _raised(case: TrimCase, unit: str, error: Exception) -> list[tuple[str, str]]:
    """An exception passes only where nothing can fit, and only a ValueError."""
    if isinstance(error, ValueError) and too_big(case, unit):
        return []
    hint = (where_hint(error) if not too_big(case, unit) or not_called(error)
            else _("nothing can fit here: raise ValueError saying by how much"))
    return [(_("it raised {error}: {message}").format(error=type(error).__name__,
                                                     message=str(error)[:120]), hint)]


TRIM_HINTS = (N_("a trim's loop must end even when nothing more can be dropped (only system "
                 "messages and the current turn are left): then stop, `break`"),
              N_("a `for` that looks for the message to drop needs `else: break` for when it "
                 "finds none, and next(...) a default, next((...), None), checked before "
                 "anything is dropped"))


def history_label(messages: list, budget: int, unit: str = "messages") -> str:
    """A history in a few words each, for a report: [system, user 'hi', assistant→1 call,
    tool, …] (max_messages=4)."""
    def label(m: Any) -> str:
        if not isinstance(m, Mapping):
            return type(m).__name__
        return f"tool({m.get('tool_call_id')})" if m.get("role") == "tool" else _label(m)

    shown = ", ".join(label(m) for m in messages[:12])
    more = _(", … {n} more").format(n=len(messages) - 12) if len(messages) > 12 else ""
    name = "max_messages" if unit == "messages" else "budget"
    return f"[{shown}{more}] ({name}={budget})"


def judge_one(fn: Callable, case: TrimCase, unit: str = "messages",
              drop: str = "turn") -> TrimVerdict:
    """Run `fn` on a copy of one case and list what is wrong with what it returns (rule 5
    against a trim that drops whole turns, or one unit at a time: `drop`). A trim that does
    not finish in deadline.CALL_SECONDS raises Stuck, saying on which history."""
    verdict, given = TrimVerdict(case, unit), copy.deepcopy(case.messages)
    try:
        with finishing(lambda: _("this history: {history}").format(
                           history=history_label(case.messages, case.budget(unit), unit)),
                       who=N_("your trim"), hints=TRIM_HINTS):
            verdict.result = fn(given, case.budget(unit))
    except Exception as error:  # the learner's code failed: a finding, not a crash
        verdict.problems += _raised(case, unit, error)
    else:
        verdict.problems += _shape(verdict.result) or (
            _validity(case, verdict.result) + _lost(case, verdict.result)
            + _over(case, unit, verdict.result) + _invented(case, verdict.result)
            + _gaps(case, verdict.result) + _forgot(case, unit, verdict.result, drop))
    if given != case.messages:
        verdict.problems.append((_("it changed the list it was given"),
                                 _("work on a copy: trimmed = list(messages), then remove "
                                   "from it")))
    return verdict


def judge_trim(fn: Callable, unit: str = "messages",
               cases: Sequence[TrimCase] | None = None, drop: str = "turn") -> list[TrimVerdict]:
    """A verdict per case (no printing): what check_trim() reports. Stops at a case the
    trim does not finish (Stuck: the check reports it alone)."""
    if unit not in UNITS:
        raise ValueError(f"unit must be 'messages' or 'tokens', got {unit!r}")
    if drop not in DROPS:
        raise ValueError(f"drop must be 'turn' or 'unit', got {drop!r}")
    return [judge_one(fn, case, unit, drop) for case in (trim_cases() if cases is None else cases)]


def verdict_table(verdicts: Mapping[str, Sequence[TrimVerdict]]) -> str:
    """judge_trim's verdicts of several trims side by side: {trim's name: verdicts}, each
    list for the same cases. One row per case (pass or FAIL in each trim's column), then
    each trim's score; in the learner's language."""
    lists = list(verdicts.values())
    if not lists:
        return ""
    width = max(columns(_(v.case.name) + (_(" (broken)") if v.case.broken else ""))
                for v in lists[0]) + 2
    width = max(width, 46)
    lines = [pad(_("case"), width, right=False) + "".join(pad(name, 13) for name in verdicts)]
    for k, verdict in enumerate(lists[0]):
        name = _(verdict.case.name) + (_(" (broken)") if verdict.case.broken else "")
        lines.append(pad(name, width, right=False) + "".join(
            pad(_("pass") if v[k].passed else _("FAIL"), 13) for v in lists))
    lines.append(pad(_("score"), width, right=False) + "".join(
        pad(f"{sum(v.passed for v in one)}/{len(one)}", 13) for one in lists))
    return "\n".join(lines)


def check_trim(fn: Any,               # your trim: fn(messages, budget) -> trimmed list
               unit: str = "messages",  # what the budget counts: "messages" or "tokens"
               cases: Sequence[TrimCase] | None = None,
               detail: bool = False,    # True: a line for every case, however many
               drop: str = "turn") -> bool:  # rule 5: forget no more than a "turn"/"unit" trim
    """Run `fn` on every case; print ✅ or what went wrong (with a hint) per case, and the
    score (a long report is shortened unless `detail`). True when every case passes."""
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__",
                                                    "your trim")
    if not callable(fn):
        report = Report(f"check_trim({name}, {unit!r})")
        report.expect(False, _("not a function"), _("pass the function itself (no "
                                                     "parentheses)"))
        print(report)
        return False
    title = f"check_trim({name}, {unit!r})"
    if wrong_signature(title, signature_problem(
            fn, f"{name}(messages, {'max_messages' if unit == 'messages' else 'budget'})",
            [], 0)):
        return False
    try:
        verdicts = judge_trim(fn, unit, cases, drop)
    except Stuck as stuck:  # a case the trim never finished: that alone is the report
        report = Report(title)
        report.expect(False, stuck.what, stuck.hints)
        print(report)
        return False
    score = sum(v.passed for v in verdicts)
    report = Report(_("check_trim({name}, {unit}): score {score}/{total}").format(
                        name=name, unit=repr(unit), score=score, total=len(verdicts)),
                    detail=detail)
    for v in verdicts:
        size = case_size(v.case, unit)
        if v.passed:
            kept = (_("kept {n}").format(n=len(v.result)) if isinstance(v.result, list)
                    else _("raised ValueError: nothing can fit"))
            report.expect(True, _("{case} ({size}): {what}").format(
                case=_(v.case.name), size=size, what=kept))
            continue
        report.expect(False, _("{case} ({size}): {what}").format(
                          case=_(v.case.name), size=size,
                          what=_("; ").join(w for w, _hint in v.problems)),
                      _("{hint}. This case protects against {protects}").format(
                          hint=v.problems[0][1], protects=_(v.case.protects)))
    print(report)
    return report.passed


def case_size(case: TrimCase, unit: str) -> str:
    """"12 messages, budget 6" (or tokens), in the learner's language."""
    cost = request_cost(case.messages, unit)
    amount = (_("{n} tokens") if unit == "tokens" else _("{n} messages")).format(n=f"{cost:,}")
    return _("{size}, budget {budget}").format(size=amount, budget=f"{case.budget(unit):,}")


class UnknownTrimCase(KeyError):
    """A name no trim case has. Its message is a sentence in the learner's language (a
    plain KeyError would show it as a quoted repr)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_QUOTES = "\"'`“”‘’「」『』 \t\n"
_SUFFIX = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")  # "(9 messages, budget 6)", "（本身已损坏）"


def _names(case: TrimCase) -> dict[str, str]:
    """The names `case` goes by, folded for matching → the case's English name."""
    found = [case.name, *(catalogue(lang).gettext(case.name) for lang in CATALOGUES)]
    return {name.casefold(): case.name for name in found}


def trim_case(name: str, cases: Sequence[TrimCase] | None = None) -> TrimCase:
    """The case called `name`: its English name, or its name in any language the reports
    speak ("裁剪点落在并行工具调用组上" finds "parallel group at the cut"), copied as a report
    prints it (in quotes, with its size or "(broken)" after it: "… (9 messages, budget 6)").
    Any other name: UnknownTrimCase, naming the cases (and the nearest one) in the
    learner's language."""
    bank = trim_cases() if cases is None else cases  # the bank of the language spoken
    names = {folded: english for case in bank for folded, english in _names(case).items()}
    wanted = str(name).strip(_QUOTES).casefold()
    while True:
        if wanted in names:
            return next(case for case in bank if case.name == names[wanted])
        shorter = _SUFFIX.sub("", wanted).strip(_QUOTES)
        if shorter == wanted:
            break
        wanted = shorter
    shown = [_(case.name) for case in bank]
    near = difflib.get_close_matches(str(name).strip(_QUOTES), shown, n=1, cutoff=0.5) or \
        [_(names[m]) for m in difflib.get_close_matches(wanted, list(names), n=1, cutoff=0.5)]
    cases_text = ", ".join(repr(n) for n in shown)
    if near:
        raise UnknownTrimCase(_("no trim case called {name}; did you mean {near}? Copy a "
                                "name as the check's report prints it; the cases are "
                                "{cases}").format(name=repr(name), near=repr(near[0]),
                                                  cases=cases_text))
    raise UnknownTrimCase(_("no trim case called {name}; the cases are {cases}").format(
        name=repr(name), cases=cases_text))


# ----------------------------------------------------------------- the bank's messages

# The bank is built twice, once in each edition's language (bank(lang)): the same histories,
# the same traps, the Chinese edition's in Chinese (小明, 成都多云16°C), and each budget
# computed from its own messages (Chinese costs other token counts than English).
_LANG = ["en"]  # the language of the bank being built


def _t(en: str, zh: str) -> str:
    """The text of the bank being built."""
    return zh if _LANG[0] == "zh" else en


_CITY_ZH = {"Chengdu": "成都", "Shanghai": "上海", "Beijing": "北京", "Tokyo": "东京"}


def _city(name: str) -> str:
    """A city of the bank as the bank being built names it (成都 for Chengdu in Chinese)."""
    return _t(name, _CITY_ZH.get(name, name))


_WEATHER = {"Chengdu": (16, "cloudy"), "Shanghai": (22, "sunny"), "Beijing": (18, "cloudy"),
            "Tokyo": (20, "light rain"), "成都": (16, "多云"), "上海": (22, "晴"),
            "北京": (18, "多云"), "东京": (20, "小雨")}


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _said(text: str) -> dict:
    return {"role": "assistant", "content": text}


def _note(text: str) -> dict:
    return {"role": "system", "content": text}


def _asks(*calls: tuple[str, str, dict], content: str | None = None) -> dict:
    """An assistant message with tool_calls, each given as (id, function name, arguments)."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": cid, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
        for cid, name, args in calls]}


def _w(cid: str, city: str) -> tuple[str, str, dict]:
    return cid, "get_current_weather", {"location": _city(city)}


def _result(cid: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def _weather(cid: str, city: str) -> dict:
    city = _city(city)
    celsius, condition = _WEATHER[city]
    return _result(cid, json.dumps({"location": city, "temperature": celsius,
                                    "unit": "celsius", "condition": condition},
                                   ensure_ascii=False))


def _texts() -> tuple[dict, list[dict], dict, str, str]:
    """The system prompt, the name's turn, the question for it, a guide and an article."""
    system = {"role": "system", "content": _t(
        "You are a helpful assistant. Use the tools you are given for live information; "
        "answer briefly.", "你是一个乐于助人的助手。需要实时信息时使用提供给你的工具；回答要简短。")}
    name = [_user(_t("My name is Xiaoming.", "我叫小明。")),
            _said(_t("Nice to meet you, Xiaoming!", "你好小明！有什么可以帮你的？"))]
    ask = _user(_t("What is my name?", "我叫什么名字？"))
    guide = " ".join(_t(f"Day {d}: walk from Chunxi Road to the Wenshu Monastery, try the "
                        f"hotpot on Jinli Street (stall {d}), then tea in People's Park.",
                        f"第 {d} 天：从春熙路走到文殊院，在锦里（{d} 号摊位）吃火锅，"
                        f"再去人民公园喝茶。") for d in range(1, 131))
    article = " ".join(_t(f"Paragraph {p}: Chengdu's teahouses open at seven; regulars bring "
                          f"their own cups and stay until noon, reading, talking, playing "
                          f"cards.",
                          f"第 {p} 段：成都的茶馆早上七点开门；老茶客自带茶杯，一坐就到中午，"
                          f"看书、聊天、打牌。") for p in range(1, 61))
    return system, name, ask, guide, article


def _tokens(*parts: dict | list[dict]) -> int:
    """count_messages() of the messages given (single dicts or lists of them)."""
    flat = [m for p in parts for m in (p if isinstance(p, list) else [p])]
    return count_messages(flat)


def _cost(*messages: dict) -> int:
    """What these messages add to a request (no reply priming)."""
    return _tokens(*messages) - _tokens()


def _valid_cases() -> list[TrimCase]:
    """Histories the API accepts, each with a trap for a trim."""
    _SYSTEM, _NAME, _ASK_NAME, _GUIDE, _ARTICLE = _texts()  # noqa: N806  (the bank's names)
    cd = [_user(_t("What's the weather in Chengdu?", "成都天气怎么样？")),
          _asks(_w("call_cd1", "Chengdu")), _weather("call_cd1", "Chengdu"),
          _said(_t("Chengdu is cloudy, 16°C.", "成都多云，16°C。"))]
    c1 = [_SYSTEM, *_NAME, *cd, _user(_t("Thanks!", "谢谢！"))]
    c3 = [_SYSTEM, _user(_t("Hi!", "嗨！")),
          _said(_t("Hello! How can I help?", "你好！有什么可以帮你的？")), *_NAME,
          _user(_t("I live in Chengdu.", "我住在成都。")),
          _said(_t("Chengdu is a lovely city.", "成都是个好地方。")), _ASK_NAME]
    c4 = [_SYSTEM, *cd, *_NAME, _ASK_NAME]
    warmer = _user(_t("Which is warmer, Shanghai or Beijing?", "上海和北京哪个更暖和？"))
    both = _said(_t("Shanghai is warmer: 22°C, against 18°C in Beijing.",
                    "上海更暖和：22°C，北京18°C。"))
    c5 = [_SYSTEM, warmer, _asks(_w("call_sh5", "Shanghai"), _w("call_bj5", "Beijing")),
          _weather("call_sh5", "Shanghai"), _weather("call_bj5", "Beijing"), both, *_NAME,
          _ASK_NAME]
    three = _asks(_w("call_cd6", "Chengdu"), _w("call_sh6", "Shanghai"), _w("call_tk6", "Tokyo"))
    c6 = [_SYSTEM, _user(_t("What's the weather in Chengdu, Shanghai and Tokyo?",
                            "成都、上海和东京的天气怎么样？")), three,
          _weather("call_cd6", "Chengdu"), _weather("call_sh6", "Shanghai"),
          _weather("call_tk6", "Tokyo"),
          _said(_t("Chengdu is cloudy (16°C), Shanghai sunny (22°C), Tokyo has light rain "
                   "(20°C).", "成都多云（16°C），上海晴（22°C），东京小雨（20°C）。")),
          _user(_t("Thanks!", "谢谢！"))]
    chinese = _note(_t("From now on, answer in Chinese.", "从现在起，请用中文回答。"))
    c7 = [_SYSTEM, *_NAME, chinese, *cd[:3], _said("成都多云，16°C。"), _ASK_NAME]
    rounds = [_user(_t("Check Chengdu, then Shanghai, then Tokyo, one city at a time.",
                       "先查成都，再查上海，然后查东京，一次查一个城市。"))]
    for cid, city in (("call_cd8", "Chengdu"), ("call_sh8", "Shanghai"), ("call_tk8", "Tokyo")):
        rounds += [_asks(_w(cid, city)), _weather(cid, city)]
    c8 = [_SYSTEM, *_NAME, *rounds]
    c9 = [_SYSTEM, *_NAME, cd[0]]
    guide = [_user(_t("Find me a travel guide for Chengdu.", "帮我找一份成都旅游攻略。")),
             _asks(("call_g10", "search_web", {"query": _t("Chengdu travel guide", "成都旅游攻略")})),
             _result("call_g10", _GUIDE),
             _said(_t("Here is a day-by-day guide, starting at Chunxi Road.",
                      "这是一份按天安排的攻略，从春熙路开始。"))]
    c10 = [_SYSTEM, *guide, *_NAME, _ASK_NAME]
    c11 = [_SYSTEM, *_NAME, _user(_t("Read me the Chengdu travel guide.", "给我读一下成都旅游攻略。")),
           _asks(("call_g11", "get_travel_guide", {"city": _city("Chengdu")})),
           _result("call_g11", _GUIDE)]
    c12 = [_SYSTEM, *_NAME, _user(_t(f"Here is an article. {_ARTICLE} Summarise it in one line.",
                                     f"这是一篇文章。{_ARTICLE} 用一句话概括它。"))]
    tokyo = [_user(_t("What's the weather in Tokyo?", "东京天气怎么样？")),
             _asks(_w("call_tk13", "Tokyo"),
                   content=_t("Let me check the weather in Tokyo.", "我查一下东京的天气。")),
             _weather("call_tk13", "Tokyo"), _said(_t("Tokyo has light rain, 20°C.", "东京小雨，20°C。"))]
    c13 = [_SYSTEM, *tokyo, _user(_t("Thanks!", "谢谢！")), _said(_t("You're welcome!", "不客气！")),
           _ASK_NAME]
    c14 = [_SYSTEM, cd[0], _asks(_w("call_0", "Chengdu")), _weather("call_0", "Chengdu"), cd[3],
           _user(_t("And in Shanghai?", "上海呢？")), _asks(_w("call_0", "Shanghai")),
           _weather("call_0", "Shanghai"), _said(_t("Shanghai is sunny, 22°C.", "上海晴，22°C。")),
           _user(_t("Which city was warmer?", "哪个城市更暖和？"))]
    c15 = [_SYSTEM, *_NAME, warmer, _asks(_w("call_sh15", "Shanghai"), _w("call_bj15", "Beijing")),
           _weather("call_bj15", "Beijing"), _weather("call_sh15", "Shanghai"), both,
           _user(_t("Thanks!", "谢谢！"))]
    slow = _note(_t("The user is on a slow connection: answer in one short sentence.",
                    "用户的网络很慢：用一句短话回答。"))
    c16 = [_SYSTEM, *_NAME, *cd[:3], slow]
    c17 = [_SYSTEM, *_NAME, *cd]
    c18 = [*_NAME, *cd, _ASK_NAME]
    zh = [_user("成都今天天气怎么样？"), _asks(_w("call_cd19", "成都")), _weather("call_cd19", "成都"),
          _said("成都今天多云，气温16°C。"), _user("我叫什么名字？")]
    c19 = [_SYSTEM, _user("我叫小明。"), _said("你好小明！有什么可以帮你的？"), *zh]
    note = _t("Shopping list for Saturday: rice, chilli oil, Sichuan pepper, tofu, pork belly, "
              "spring onions, ginger, garlic, bok choy, and jasmine tea for grandma. ",
              "周六购物清单：大米、辣椒油、花椒、豆腐、五花肉、葱、姜、蒜、小白菜，"
              "还有给奶奶的茉莉花茶。") * 4
    saturday = _t("Saturday", "周六")
    saves = [_user(_t("Please save a note for me.", "请帮我存一条笔记。")),
             _asks(("call_nt20", "save_note", {"title": saturday, "text": note})),
             _result("call_nt20", '{"saved": true}'),
             _said(_t("Saved your note “Saturday”.", "已保存你的笔记“周六”。"))]
    c20 = [_SYSTEM, *saves, *_NAME, _ASK_NAME]
    return [
        TrimCase(N_("nothing to trim"), c1, 10, _tokens(c1) + 20,
                 N_("a trim that always cuts something, or cuts from the wrong end, and forgets "
                    "for nothing")),
        TrimCase(N_("exactly at the budget"), c1, len(c1), _tokens(c1),
                 N_("an off-by-one (>= instead of >) that drops a message from a list that "
                    "already fits")),
        TrimCase(N_("plain chat over the budget"), c3, 4, _tokens(c3[0], *c3[-3:]) + 2,
                 N_("dropping the system prompt to make room, or dropping from the newest end")),
        TrimCase(N_("single tool round at the cut"), c4, 6, _tokens(c4) - _cost(*c4[1:3]),
                 N_("dropping an assistant(tool_calls) but keeping its tool result: the API's 400 "
                    "'messages with role tool must be a response to a preceeding message with "
                    "tool_calls'")),
        TrimCase(N_("parallel group at the cut"), c5, 6, _tokens(c5) - _cost(*c5[1:4]),
                 N_("dropping an assistant message and only the one tool message after it: with "
                    "parallel calls the other results stay behind as orphans")),
        TrimCase(N_("cut through a group of three"), c6, 4, _tokens(c6) - _cost(*c6[1:4]),
                 N_("keeping 'the last N messages' (messages[-n:]): the slice starts inside a "
                    "tool group")),
        TrimCase(N_("system message in the middle"), c7, 5, _tokens(c7) - _cost(*c7[1:3], *c7[4:6]),
                 N_("keeping only messages[0] as 'the' system message: a later instruction "
                    "(answer in Chinese) is lost")),
        TrimCase(N_("three tool rounds in one turn"), c8, 5, _tokens(c8[0], *rounds) + 4,
                 N_("a current turn longer than the budget: dropping its first tool rounds (or "
                    "the question) makes the model call the same tools again")),
        TrimCase(N_("only the system message fits"), c9, 1, _tokens(_SYSTEM) + 2,
                 N_("a budget too small for the question itself: dropping the question sends a "
                    "request the model cannot answer; keep it (messages) or raise (tokens)")),
        TrimCase(N_("huge tool result in an old turn"), c10, 7, _tokens(_SYSTEM, guide[3], *_NAME,
                                                                   _ASK_NAME) + 30,
                 N_("counting messages instead of tokens: one old tool result (a whole web page) "
                    "is over the token budget on its own")),
        TrimCase(N_("huge tool result in the current turn"), c11, 5, 400,
                 N_("a single tool result bigger than the whole budget: dropping the pair loses "
                    "the answer; cut it, with a visible marker, instead")),
        TrimCase(N_("a huge user message"), c12, 3, 300,
                 N_("silently sending a request the API refuses: when the question alone is over "
                    "the budget, only a clear error helps")),
        TrimCase(N_("assistant with both content and tool calls"), c13, 6,
                 _tokens(c13) - _cost(*c13[1:3]),
                 N_("treating an assistant message that has text as a plain answer: it still "
                    "opens a tool group, and its results must go with it")),
        TrimCase(N_("ids reused across turns"), c14, 8, _tokens(c14) - _cost(*c14[1:3]),
                 N_("matching results to calls by id across the whole history: some providers "
                    "number calls call_0, call_1 … again in every turn")),
        TrimCase(N_("results in another order than the calls"), c15, 7, _tokens(c15) - _cost(*_NAME),
                 N_("checking results against calls by position (zip(calls, results)): the API "
                    "accepts a group's results in any order")),
        TrimCase(N_("system message in the current turn"), c16, 6, _tokens(c16) - _cost(*_NAME),
                 N_("rebuilding the list as 'system messages first, then the rest': a reminder "
                    "inside the current turn moves before the question")),
        TrimCase(N_("the question is not the last message"), c17, 4, _tokens(c17[0], *cd) + 3,
                 N_("treating the newest message as the question: after a tool round and an "
                    "answer, the question is several messages back")),
        TrimCase(N_("no system message"), c18, 3, _tokens(c18) - _cost(*c18[:3], c18[3]),
                 N_("assuming messages[0] is the system prompt (or that there is one): the trim "
                    "crashes, or keeps an old user message forever")),
        TrimCase(N_("chinese conversation"), c19, 6, _tokens(_SYSTEM, *zh) + 2,
                 N_("estimating tokens as characters ÷ 4: Chinese costs about a token per "
                    "character, so the estimate says 'fits' when it does not")),
        TrimCase(N_("long tool-call arguments"), c20, 7, _tokens(c20) - 5,
                 N_("counting only the content field: tool-call arguments (a whole note) are "
                    "tokens too")),
    ]


def _broken_cases() -> list[TrimCase]:
    """Histories the API refuses before any trim: a good trim hands back a valid list."""
    _SYSTEM, _NAME, _ASK_NAME, _GUIDE, _ARTICLE = _texts()  # noqa: N806
    cd_ask = _user(_t("What's the weather in Chengdu?", "成都天气怎么样？"))
    b1 = [_SYSTEM, *_NAME, cd_ask, _asks(_w("call_cd21", "Chengdu")),
          _user(_t("Hello? Are you still there?", "喂？你还在吗？"))]
    warmer = _user(_t("Which is warmer, Shanghai or Beijing?", "上海和北京哪个更暖和？"))
    b2 = [_SYSTEM, warmer, _asks(_w("call_sh22", "Shanghai"), _w("call_bj22", "Beijing")),
          _weather("call_sh22", "Shanghai"), _user(_t("Well?", "好了吗？"))]
    b2_fixed = repair_messages(b2).messages
    b3 = [_SYSTEM, cd_ask, _asks(_w("call_cd23", "Chengdu")), _weather("call_cd23", "Chengdu"),
          _weather("call_cd23", "Chengdu"), _said(_t("Chengdu is cloudy, 16°C.", "成都多云，16°C。")),
          _user(_t("And in Shanghai?", "上海呢？")), _asks(_w("call_sh23", "Shanghai")),
          _weather("call_sh23", "Shanghai")]
    b4 = [_SYSTEM, warmer, _asks(_w("call_0", "Shanghai"), _w("call_0", "Beijing")),
          _weather("call_0", "Shanghai"), _weather("call_0", "Beijing"),
          _said(_t("Shanghai is warmer.", "上海更暖和。")), _user(_t("Thanks!", "谢谢！"))]
    b5 = [_SYSTEM, warmer, _weather("call_sh25", "Shanghai"), _weather("call_bj25", "Beijing"),
          _asks(_w("call_sh25", "Shanghai"), _w("call_bj25", "Beijing")),
          _said(_t("Shanghai is warmer: 22°C, against 18°C in Beijing.", "上海更暖和：22°C，北京18°C。")),
          _user(_t("Thanks!", "谢谢！"))]
    b6 = [_SYSTEM, *_NAME, cd_ask, _asks(_w("call_cd26", "Chengdu")),
          _user(_t("Also, what time is it there?", "还有，那里现在几点？")),
          _weather("call_cd26", "Chengdu")]
    b7 = [_SYSTEM, _user(_t("Hi!", "嗨！")),
          {**_said(_t("Hello! How can I help?", "你好！有什么可以帮你的？")), "tool_calls": []},
          *_NAME, _ASK_NAME]
    b8 = [_weather("call_cd28", "Chengdu"), _said(_t("Chengdu is cloudy, 16°C.", "成都多云，16°C。")),
          _user(_t("Thanks!", "谢谢！")), _said(_t("You're welcome!", "不客气！")), _ASK_NAME]
    return [TrimCase(name, messages, max_messages, max_tokens, protects, broken=True)
            for name, messages, max_messages, max_tokens, protects in [
        (N_("interrupted run"), b1, 10, _tokens(repair_messages(b1).messages) + 10,
         N_("a run that stopped between a tool call and its result (a crash, a timeout, a closed "
            "tab): the stored call has no result, and every later request fails")),
        (N_("interrupted parallel calls"), b2, 4, _tokens(b2_fixed) - _cost(warmer),
         N_("a parallel round where only some results were saved before the run stopped")),
        (N_("result stored twice"), b3, 12, _tokens(b3) + 10,
         N_("a retry that wrote the same result twice: the API refuses two results for one call "
            "('Duplicate value for tool_call_id')")),
        (N_("two calls share an id"), b4, 12, _tokens(b4) + 10,
         N_("a provider that gives two parallel calls the same id: their two results look like "
            "one result stored twice")),
        (N_("results stored before their call"), b5, 10, _tokens(b5) + 10,
         N_("a history reloaded in the wrong order (rows sorted by a timestamp that put each "
            "result before its call): every result is an orphan, every call unanswered")),
        (N_("result stored after the next question"), b6, 10, _tokens(b6) + 10,
         N_("a result saved late (the user typed while the tool ran): it lands after the next "
            "user message, away from its call")),
        (N_("empty tool_calls list"), b7, 10, _tokens(b7) + 10,
         N_("a serializer that writes tool_calls: [] on every plain answer: the API refuses an "
            "empty array")),
        (N_("history cut by other code"), b8, 10, _tokens(b8) + 10,
         N_("a history another part of the program already cut badly: it starts with an orphan "
            "tool result")),
    ]]


def bank(lang: str = "en") -> list[TrimCase]:
    """The bank in one edition's language: "en", or "zh" (its twin in Chinese)."""
    if lang not in _BANKS:
        _LANG[0] = lang
        try:
            _BANKS[lang] = _valid_cases() + _broken_cases()
        finally:
            _LANG[0] = "en"
    return _BANKS[lang]


_BANKS: dict[str, list[TrimCase]] = {}
bank("en"), bank("zh")  # both now, as the one bank was: a check's first run builds nothing


def trim_cases() -> list[TrimCase]:
    """TRIM_CASES: the bank in the language spoken now (the Chinese edition's is Chinese)."""
    return bank(by_language("en", "zh"))


def __getattr__(name: str) -> Any:
    if name == "TRIM_CASES":
        return trim_cases()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

