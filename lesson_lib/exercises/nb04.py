"""Self-checks for notebook 04, trimming pitfalls.

Build it (the core exercise): `check_seed_trim(MyMemory)` judges the learner's memory class,
notebook 02's interface with the seed's trim (drop the oldest non-system message AND the
tool messages right after it), by TOOL_TRIM_RULES: notebook 02's trim rules, the tool rules,
and two properties over conversations added one message at a time. The same rules guard
lesson_lib's ShortTermMemory and SeedMemory (tests/test_core_track_nb04.py).

1. `check_my_trim(my_trim)`: the learner's `my_trim(messages, max_messages)` is judged by
   `lesson_lib.trimcheck.check_trim(my_trim, unit="messages", drop="unit")` on VALID_CASES:
   the bank's histories that the API accepts (20 of TRIM_CASES' 28); drop="unit" holds it to
   forgetting no more than a trim that drops one group at a time. The other 8 are broken before any
   trim (an interrupted run, duplicate ids, a wrong order); notebook 07b repairs those, and
   then `check_trim(my_trim)` runs all 28. Once the 20 pass, RANDOM_RULES tries the same
   rules on random valid histories.
2. `check_turn_trim(my_turn_trim)`: the same cases and rules, plus one: after the system
   messages, the kept history starts with a user message (no answer whose question is gone);
   it may forget as much as a trim that drops whole turns.

A trim that never ends is stopped after a few seconds (lesson_lib.exercises.deadline) and
named with the history it was trimming; a trim whose parameters are not (messages,
max_messages) is told so in one sentence.

`show_trim(trim, name)` shows one case before and after a trim function.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from lesson_lib.exercises import (
    Report,
    Stuck,
    finishing,
    not_done,
    signature_problem,
    wrong_signature,
)
from lesson_lib.exercises.contract import Rule, check_rules, expect, property_rule
from lesson_lib.exercises.nb02 import MEMORY_RULES, TRIM_HINTS, method_problem
from lesson_lib.i18n import N_, _, ngettext
from lesson_lib.protocol import find_problems
from lesson_lib.trimcheck import (
    TRIM_HINTS as TRIM_CALL_HINTS,
)
from lesson_lib.trimcheck import (
    TrimCase,
    check_trim,
    history_label,
    judge_one,
    judge_trim,
    trim_case,
    trim_cases,
)

# ----------------------------------------------------------------- conversations as labelled data
#
# The rules build small conversations whose messages say their place ("user 2", "tool 4"),
# so that a report can show the smallest case as a short list of labels.

def _calls(n: int, replies: int) -> list[dict]:
    """The tool calls of assistant message n: ids call_<n>_1, call_<n>_2 …"""
    return [{"id": f"call_{n}_{k}", "type": "function",
             "function": {"name": "get_current_weather", "arguments": "{}"}}
            for k in range(1, replies + 1)]


def conversation(spec: Sequence[str]) -> list[dict]:
    """Messages numbered in order from a spec of units: "system", "user", "assistant", or
    "calls:k" (an assistant message with k tool calls, then its k tool replies)."""
    messages: list[dict] = []
    for unit in spec:
        n = len(messages) + 1
        if not unit.startswith("calls:"):
            messages.append({"role": unit, "content": f"{unit} {n}"})
            continue
        calls = _calls(n, int(unit.split(":")[1]))
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": f"tool {n + k}"}
                     for k, c in enumerate(calls, 1)]
    return messages


def _label(m: Any) -> str:
    """One message as a short label: system 1, user 2, assistant 3 (2 calls), tool 4."""
    if not isinstance(m, Mapping):
        return repr(m)
    calls = m.get("tool_calls")
    if m.get("role") == "assistant" and isinstance(calls, list) and calls:
        number = str(calls[0].get("id", "")).split("_")[1:2] if isinstance(calls[0], Mapping) \
            else []
        return ngettext("assistant {number} ({n} call)", "assistant {number} ({n} calls)",
                        len(calls)).format(number="".join(number) or "?", n=len(calls))
    return str(m.get("content") if m.get("content") is not None else m.get("role"))


def labels(messages: Any) -> str:
    """A history as short labels, e.g. [system 1, user 2, assistant 3 (1 call), tool 4]."""
    if not isinstance(messages, list):
        return repr(messages)
    return "[" + ", ".join(_label(m) for m in messages) + "]"


def _group_end(messages: list, i: int) -> int:
    """The index after the tool messages that follow message i."""
    j = i + 1
    while j < len(messages) and isinstance(messages[j], Mapping) \
            and messages[j].get("role") == "tool":
        j += 1
    return j


def _orphan(messages: list) -> str | None:
    """'tool 4' for the first tool message whose call is not in the assistant message right
    before its group (the call it answers was dropped), else None."""
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") == "tool":
            continue
        calls = m.get("tool_calls") if m.get("role") == "assistant" else None
        ids = [c.get("id") for c in calls if isinstance(c, Mapping)] \
            if isinstance(calls, list) else []
        for reply in messages[i + 1:_group_end(messages, i)]:
            if reply.get("tool_call_id") not in ids:
                return _label(reply)
    first = messages[0] if messages else None
    if isinstance(first, Mapping) and first.get("role") == "tool":
        return _label(first)
    return None


def _unanswered(messages: list) -> str | None:
    """'assistant 3 (2 calls)' for the first assistant message some of whose calls have no
    tool reply right after it, else None."""
    for i, m in enumerate(messages):
        calls = m.get("tool_calls") if isinstance(m, Mapping) else None
        if isinstance(calls, list) and calls and m.get("role") == "assistant":
            answered = {r.get("tool_call_id") for r in messages[i + 1:_group_end(messages, i)]}
            if any(isinstance(c, Mapping) and c.get("id") not in answered for c in calls):
                return _label(m)
    return None


def _refused(messages: list) -> str:
    """Why the API would refuse `messages`, in the words of the lesson ('' if it accepts)."""
    if not messages:
        return _("an empty list, which the API refuses")
    if (orphan := _orphan(messages)) is not None:
        return _("{orphan} is an orphan: the call it answers was dropped, and the API "
                 "answers 400").format(orphan=orphan)
    problems = find_problems(messages)
    if not problems:
        return ""
    if (asker := _unanswered(messages)) is not None:
        return _("{asker} lost its tool replies, and the API answers 400").format(asker=asker)
    return _("the API would refuse it: {problem}").format(problem=problems[0].message)


def seed_rule(messages: list[dict], max_messages: int) -> list[list[dict]]:
    """The seed's rule applied after each add: the list after every add, for comparison."""
    kept: list[dict] = []
    after: list[list[dict]] = []
    for message in messages:
        kept.append(message)
        while len(kept) > max_messages:
            i = next((i for i, m in enumerate(kept) if m["role"] != "system"), None)
            if i is None:
                break
            del kept[i:_group_end(kept, i)]
        after.append(list(kept))
    return after


# ----------------------------------------------------------------- core: build the seed's trim
#
# The learner writes the trim of a memory class with notebook 02's interface (MyMemory(
# max_messages), add, to_api_format, clear_non_system, message_count): while there are too
# many messages, drop the oldest one that is not a system message AND the tool messages right
# after it. TOOL_TRIM_RULES judge it: notebook 02's trim rules first (without tools the trim
# is the one built there), then what tool messages change. tests/test_core_track_nb04.py runs
# the same rules on ShortTermMemory and SeedMemory (both keep them) and NaiveMemory (it fails).

SEED_TRIM_TITLE = N_("Build it · the seed's trim")


def _added(memory: Any, max_messages: int, messages: list[dict], n: int) -> None:
    """memory.add(messages[n]) (a copy), stopped and reported if the trim never ends."""
    with finishing(lambda: _("this history: max_messages={max_messages}, adding "
                             "{added}").format(max_messages=max_messages,
                                               added=labels(messages[:n + 1])),
                   who=N_("your trim"), hints=TRIM_HINTS):
        memory.add(copy.deepcopy(messages[n]))


def _replay(cls: type, max_messages: int, messages: list[dict]):
    """A new memory of `cls`, the messages added one at a time (copies: the caller's stay)."""
    memory = cls(max_messages=max_messages)
    for n in range(len(messages)):
        _added(memory, max_messages, messages, n)
    return memory


def _one_case(spec: list[str], max_messages: int) -> Callable[[type], None]:
    """A rule's test: after `spec` is added one message at a time, the memory holds what the
    seed's rule keeps."""

    def test(cls: type) -> None:
        messages = conversation(spec)
        got = _replay(cls, max_messages, messages).to_api_format()
        want = seed_rule(messages, max_messages)[-1]
        refused = _refused(got) if isinstance(got, list) else ""
        seen = _("max_messages={max_messages}, adding {messages} one at a time keeps {got}; "
                 "expected {want}").format(max_messages=max_messages, messages=labels(messages),
                                           got=labels(got), want=labels(want))
        expect(got == want, _("{what}: {why}").format(what=seen, why=refused) if refused
               else seen)

    return test


def _open_calls(messages: list[dict]) -> list[str]:
    """Ids of the calls still waiting for a reply at the end of `messages`."""
    waiting: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            waiting = [c for c in waiting if c != m["tool_call_id"]]
        else:
            waiting = [c["id"] for c in m.get("tool_calls") or []]
    return waiting


def _room(spec: list[str]) -> int:
    """The least max_messages that leaves room: every system message and the largest group
    (a message, or an assistant message with all its tool replies)."""
    groups = [1 + int(u.split(":")[1]) if u.startswith("calls:") else 1 for u in spec]
    return spec.count("system") + max(groups, default=1)


def _whole_units():
    """(spec, max_messages): a conversation of whole units, and a max_messages with room."""
    from hypothesis import strategies as st  # noqa: PLC0415

    unit = st.sampled_from(["user", "assistant", "system", "calls:1", "calls:2", "calls:3"])
    return st.lists(unit, max_size=8).flatmap(lambda spec: st.tuples(
        st.just(spec), st.integers(_room(spec), _room(spec) + 5)))


def _stays_valid(cls: type, example: tuple[list[str], int]) -> str | None:
    """What broke: an orphan after some add, or a list the API refuses when no call waits."""
    spec, max_messages = example
    messages = conversation(spec)
    memory = cls(max_messages=max_messages)
    for n, message in enumerate(messages):  # (added as copies: `messages` stays as made)
        _added(memory, max_messages, messages, n)
        got = memory.to_api_format()
        waiting = _open_calls(messages[:n + 1])
        orphan = _orphan(got) if isinstance(got, list) else None
        problem = (_("{orphan} is an orphan: the call it answers was dropped").format(
                       orphan=orphan) if orphan
                   else "" if waiting else _refused(got) if isinstance(got, list)
                   else _("to_api_format() returned {kind}").format(kind=type(got).__name__))
        if problem:
            return _("max_messages={max_messages}, adding {messages} one at a time: after "
                     "{message} it holds {got}; {problem}").format(
                         max_messages=max_messages, messages=labels(messages),
                         message=_label(message), got=labels(got), problem=problem)
    return None


def _keeps_the_newest(cls: type, example: tuple[list[str], int]) -> str | None:
    """What broke: a list, when no call waits, other than the seed's rule keeps."""
    spec, max_messages = example
    messages = conversation(spec)
    wanted = seed_rule(messages, max_messages)
    memory = cls(max_messages=max_messages)
    for n, message in enumerate(messages):  # (added as copies: `messages` stays as made)
        _added(memory, max_messages, messages, n)
        if _open_calls(messages[:n + 1]):
            continue  # an agent sends the list only when no call waits for its reply
        got = memory.to_api_format()
        if got != wanted[n]:
            return _("max_messages={max_messages}, adding {messages} one at a time: after "
                     "{message} it holds {got}; expected {want}").format(
                         max_messages=max_messages, messages=labels(messages),
                         message=_label(message), got=labels(got), want=labels(wanted[n]))
    return None


EXAMPLES = 150  # conversations each property tries: the whole check answers in about a second
_RULES_02 = {rule.name: rule for rule in MEMORY_RULES}
_ORDER = "add() keeps messages in order, and to_api_format() returns them"
_WITHIN = "the trim keeps max_messages messages: no more, and no fewer than it must"
_OLDEST = "the trim drops the oldest message that is not a system message"
_SYSTEM = "the trim never drops a system message, even one in the middle"
_ENDS = ("when only system messages are left to drop, the trim stops (it never runs for "
         "ever)")
SWALLOWS = N_("dropping an assistant(tool_calls) drops its tool reply too")
PARALLEL = N_("a parallel group (one assistant, several tool replies) is dropped whole")
ONLY_TOOL = N_("it swallows only tool replies, never a system message after them")
NO_ORPHAN = N_("for any conversation, given room: no orphan tool message after any add, and "
               "the API accepts the list whenever no call waits")
NEWEST = N_("for any conversation, given room: the system messages and the newest whole "
            "groups")

TOOL_TRIM_RULES: list[Rule] = [
    # notebook 02's rules where they apply: without tool messages, the trim is the one built
    # there (the hints say what changes now that a tool group can follow the dropped message)
    _RULES_02[_ORDER],
    _RULES_02[_WITHIN],
    replace(_RULES_02[_OLDEST], hints=(
        N_("the oldest messages are at the front of the list (index 0 is the first added)"),
        N_("find the first index whose role is not 'system' and delete it; after it, delete "
           "only messages whose role is 'tool' (a slice [start:end] stops before end)"))),
    replace(_RULES_02[_SYSTEM], hints=(
        *_RULES_02[_SYSTEM].hints,
        N_("what you swallow after the dropped message are its tool replies: role 'tool', "
           "nothing else"))),
    _RULES_02[_ENDS],
    # (notebook 02's property, "for any conversation and max_messages …", is NEWEST below
    # without tool rounds, the same reference (the seed's rule): it is not run twice)
    # what tool messages change
    Rule(SWALLOWS, _one_case(["system", "user", "calls:1", "assistant", "user"], 4),
         (N_("the tool messages right after an assistant(tool_calls) are its replies: drop "
             "the assistant message alone and they answer a call the model never sees "
             "(section 2's 400)"),
          N_("the replies come AFTER the message you drop: once it is deleted, the message "
             "now at its index is the first reply"),
          N_("keep deleting at that index while the message there has role 'tool' (and the "
             "list is not at its end)")),
         needs=(_WITHIN, _OLDEST)),
    Rule(PARALLEL, _one_case(["system", "user", "calls:3", "assistant", "user"], 6),
         (N_("an assistant message can ask for several tools at once: one tool message per "
             "call, one after the other (notebook 03b's parallel calls)"),
          N_("`if` swallows one reply, `while` swallows them all; and look at roles, not at "
             "the first call's id")),
         needs=(SWALLOWS,)),
    Rule(ONLY_TOOL, _one_case(["system", "user", "calls:1", "system", "assistant", "user"], 4),
         (N_("a system message can follow a tool group: it is an instruction, not a reply"),
          N_("stop swallowing at the first message whose role is not 'tool'")),
         needs=(SWALLOWS, _SYSTEM)),
    property_rule(
        NO_ORPHAN, _whole_units(), _stays_valid,
        (N_("the smallest conversation above is one your trim gets wrong: replay it by hand, "
            "one add() at a time"),
         N_("what goes with a dropped message is exactly the tool messages right after it: no "
            "fewer (an orphan stays), no more (another message, or another round's replies)")),
        examples=EXAMPLES, needs=(SWALLOWS, PARALLEL, ONLY_TOOL)),
    property_rule(
        NEWEST, _whole_units(), _keeps_the_newest,
        (N_("the smallest conversation above is one your trim gets wrong: replay it by hand, "
            "one add() at a time"),
         N_("each drop removes one group, oldest first: a message, or an assistant(tool_calls) "
            "with its replies; keep dropping (`while`, not `if`) until the list fits, then "
            "stop")),
        examples=EXAMPLES, needs=(NO_ORPHAN,)),
]


def check_seed_trim(MyMemory: Any) -> bool:  # noqa: N803  your class, not an instance
    """The core exercise: judge the learner's memory class (its trim) by TOOL_TRIM_RULES."""
    if not isinstance(MyMemory, type):
        return not_done(_(SEED_TRIM_TITLE),
                        _("pass the class itself: check_seed_trim(MyMemory)"))
    if wrong_signature(_(SEED_TRIM_TITLE), method_problem(MyMemory)):
        return False
    return check_rules(_(SEED_TRIM_TITLE), MyMemory, TOOL_TRIM_RULES,
                       start=_("write the body of _trim, then run this check again"))


# ----------------------------------------------------------------- exercises 1 and 2

def valid_cases() -> list[TrimCase]:
    """VALID_CASES, what 04 can judge: the bank's histories the API accepts, in the language
    spoken now (the Chinese edition's bank is Chinese: trimcheck.bank)."""
    return [c for c in trim_cases() if not c.broken]


def __getattr__(name: str) -> Any:
    if name == "VALID_CASES":
        return valid_cases()
    if name == "TRIM_CASES":
        return trim_cases()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _unwritten(fn: Any, cases: Sequence[TrimCase]) -> str | None:
    """Why `fn` is not an attempt yet (not a function, or None for every case), or None."""
    if not callable(fn):
        return _("define it with def ...(messages, max_messages): and pass the function "
                 "itself (no parentheses)")
    for case in cases:
        try:
            with finishing(lambda case=case: _("this history: {history}").format(
                               history=history_label(case.messages, case.max_messages)),
                           who=N_("your trim"), hints=TRIM_CALL_HINTS):  # Stuck: raised
                if fn(copy.deepcopy(case.messages), case.max_messages) is not None:
                    return None
        except Exception:  # an attempt that raises is judged (and reported) by the bank
            return None
    return _("it returns None for every history: write its body, ending with return and the "
             "list")


def _stuck(title: str, stuck: Stuck) -> bool:
    """The one-line report of a trim that never finished; False."""
    report = Report(title)
    report.expect(False, stuck.what, stuck.hints)
    print(report)
    return False


# ----------------------------------------------------------------- exercise 1 on random histories
#
# The bank's 20 cases are histories that broke someone's agent; a trim can still pass them
# all and break on a history none of them has (one that moves a system message to the front
# passes all 20). So once the bank passes, Hypothesis tries random valid histories and shows
# the smallest one the trim gets wrong, judged by the bank's own rules (trimcheck.judge_one).

RANDOM_TITLE = N_("Exercise 1 · my_trim on random histories")
ANY_HISTORY = N_("for any valid history and any max_messages, the five rules of the exercise "
                 "hold")


def _histories():
    """(spec, max_messages): a valid history of whole units with at least one user message
    (the question being answered), and any max_messages from 1 to one more than it holds."""
    from hypothesis import strategies as st  # noqa: PLC0415

    unit = st.sampled_from(["user", "assistant", "system", "calls:1", "calls:2", "calls:3"])
    spec = st.tuples(st.lists(unit, max_size=6), st.lists(unit, max_size=5)).map(
        lambda parts: [*parts[0], "user", *parts[1]])
    return spec.flatmap(lambda s: st.tuples(st.just(s),
                                            st.integers(1, len(conversation(s)) + 1)))


def _trims_any_history(my_trim: Callable, example: tuple[list[str], int]) -> str | None:
    """What the bank's rules find wrong with my_trim's result on one random history."""
    spec, max_messages = example
    messages = conversation(spec)
    verdict = judge_one(my_trim, TrimCase("a random history", messages, max_messages, 0, ""),
                        "messages", drop="unit")
    if verdict.passed:
        return None
    what, hint = verdict.problems[0]
    if isinstance(verdict.result, list):
        return _("max_messages={max_messages}, history conversation({spec}) = {messages}: it "
                 "returned {got}: {what} ({hint})").format(
                     max_messages=max_messages, spec=repr(spec), messages=labels(messages),
                     got=labels(verdict.result), what=_(what), hint=_(hint))
    return _("max_messages={max_messages}, history conversation({spec}) = {messages}: {what} "
             "({hint})").format(max_messages=max_messages, spec=repr(spec),
                                messages=labels(messages), what=_(what), hint=_(hint))


RANDOM_RULES: list[Rule] = [
    property_rule(
        ANY_HISTORY, _histories(), _trims_any_history,
        (N_("that is the smallest history your trim gets wrong, and none of the 20 cases is "
            "quite like it: build it with conversation(...) from lesson_lib.exercises.nb04, "
            "run my_trim on it with that max_messages, and compare with the five rules"),),
        examples=200),
]


def check_my_trim(my_trim: Any,  # your function: my_trim(messages, max_messages) -> list
                  cases: Sequence[TrimCase] | None = None,
                  detail: bool = False) -> bool:  # True: a line for every case
    """Exercise 1: check_trim(my_trim, unit="messages") on the bank's valid histories; once
    every case passes, the same rules on random valid histories (RANDOM_RULES)."""
    cases = valid_cases() if cases is None else list(cases)
    if callable(my_trim) and wrong_signature(_("Exercise 1 · my_trim"), signature_problem(
            my_trim, "my_trim(messages, max_messages)", [], 0)):
        return False
    try:
        why = _unwritten(my_trim, cases)
    except Stuck as stuck:
        return _stuck(_("Exercise 1 · my_trim"), stuck)
    if why is not None:
        return not_done(_("Exercise 1 · my_trim"), why)
    if not check_trim(my_trim, unit="messages", cases=cases, detail=detail, drop="unit"):
        return False
    return check_rules(_(RANDOM_TITLE), my_trim, RANDOM_RULES, detail=detail)


def _starts_with_answer(result: Any) -> str | None:
    """The role a kept history starts with (after system messages) when it is not 'user'."""
    if not isinstance(result, list) or not all(isinstance(m, Mapping) for m in result):
        return None
    first = next((m for m in result if m.get("role") != "system"), None)
    return None if first is None or first.get("role") == "user" else str(first.get("role"))


def check_turn_trim(my_turn_trim: Any,  # my_turn_trim(messages, max_messages) -> list
                    cases: Sequence[TrimCase] | None = None) -> bool:
    """Exercise 2: exercise 1's cases and rules, and the kept history (after the system
    messages) must start with a user message."""
    title = _("Exercise 2 · my_turn_trim")
    cases = valid_cases() if cases is None else list(cases)
    if callable(my_turn_trim) and wrong_signature(title, signature_problem(
            my_turn_trim, "my_turn_trim(messages, max_messages)", [], 0)):
        return False
    try:
        why = _unwritten(my_turn_trim, cases)
        if why is not None:
            return not_done(title, why)
        verdicts = judge_trim(my_turn_trim, "messages", cases)  # may forget whole turns
    except Stuck as stuck:
        return _stuck(title, stuck)
    ours = set()  # the problems this check adds (their hint stands alone)
    for v in verdicts:
        if (role := _starts_with_answer(v.result)) is not None:
            what = (_("after the system messages it starts with an {role} message whose "
                      "question is gone") if role[:1] in "aeiou" else
                    _("after the system messages it starts with a {role} message whose "
                      "question is gone")).format(role=role)
            ours.add(what)
            v.problems.append((what, _("after trimming, keep dropping the oldest group while "
                                       "the first non-system message is not a user message")))
    report = Report(_("{title}: score {passed}/{total}").format(
        title=title, passed=sum(v.passed for v in verdicts), total=len(verdicts)))
    for v in verdicts:
        size = _("{n} messages, budget {budget}").format(n=len(v.case.messages),
                                                          budget=v.case.max_messages)
        name = _(v.case.name)
        if v.passed:
            report.expect(True, _("{case} ({size}): kept {n}").format(
                case=name, size=size, n=len(v.result)))
        else:
            hint = _(v.problems[0][1])
            if v.problems[0][0] not in ours:
                hint = _("{hint}. This case protects against {protects}").format(
                    hint=hint, protects=_(v.case.protects))
            report.expect(False, _("{case} ({size}): {problems}").format(
                case=name, size=size, problems=_("; ").join(_(w) for w, _h in v.problems)),
                          hint)
    print(report)
    return report.passed


def _dropped(after: list, before: list[dict]) -> list[dict]:
    """The messages of `before` that `after` no longer has (matched from the end)."""
    kept, j = set(), len(before) - 1
    for m in reversed(after):
        while j >= 0 and before[j] != m:
            j -= 1
        if j < 0:
            return []
        kept.add(j)
        j -= 1
    return [m for i, m in enumerate(before) if i not in kept]


def show_trim(trim: Callable,  # a trim function: trim(messages, max_messages) -> list
              name: str,       # a case's name, e.g. "parallel group at the cut"
              cases: Sequence[TrimCase] | None = None):
    """One case before and after `trim`, side by side: what it dropped struck through,
    what the API would refuse in red."""
    from lesson_lib.display import show_messages, side_by_side  # noqa: PLC0415

    case = trim_case(name, valid_cases() if cases is None else cases)
    try:
        with finishing(lambda: _("this history: {history}").format(
                           history=history_label(case.messages, case.max_messages)),
                       who=N_("your trim"), hints=TRIM_CALL_HINTS):
            after = trim(copy.deepcopy(case.messages), case.max_messages)
    except Stuck as stuck:  # the report says so; nothing to draw
        _stuck(_("{case} (max_messages={max_messages})").format(
            case=_(case.name), max_messages=case.max_messages), stuck)
        return None
    after = after if isinstance(after, list) and all(isinstance(m, Mapping) for m in after) \
        else []
    return side_by_side(show_messages(case.messages),
                        show_messages(after, dropped=_dropped(after, case.messages)),
                        titles=[_("{case} (max_messages={max_messages})").format(
                                    case=_(case.name), max_messages=case.max_messages),
                                _("after {name}").format(
                                    name=getattr(trim, "__name__", None) or _("the trim"))])
