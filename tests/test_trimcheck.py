"""The trim checker's bank catches each failure it claims to protect against; the library's
trims pass every case with either budget; the naive and the seed's trims fail exactly the
cases they should; check_trim reports findings and never raises at the learner."""

from __future__ import annotations

import copy
from functools import partial

import pytest

from lesson_lib.budget import OverBudgetError
from lesson_lib.protocol import find_problems
from lesson_lib.repair import find_duplicate_ids
from lesson_lib.tokens import count_messages
from lesson_lib.trimcheck import (
    TRIM_CASES,
    UNITS,
    TrimCase,
    budget_trim,
    check_trim,
    judge_one,
    judge_trim,
    naive_trim,
    request_cost,
    seed_trim,
    too_big,
    trim_case,
)

BROKEN = {c.name for c in TRIM_CASES if c.broken}
NAIVE_FAILS = {
    "messages": {"single tool round at the cut", "parallel group at the cut",
                 "cut through a group of three", "system message in the middle",
                 "three tool rounds in one turn", "only the system message fits",
                 "assistant with both content and tool calls", "ids reused across turns",
                 "the question is not the last message", "no system message"} | BROKEN,
    "tokens": {"single tool round at the cut", "parallel group at the cut",
               "cut through a group of three", "system message in the middle",
               "only the system message fits", "huge tool result in the current turn",
               "a huge user message", "assistant with both content and tool calls",
               "ids reused across turns", "no system message"} | BROKEN,
}
SEED_FAILS = {
    "messages": {"three tool rounds in one turn", "only the system message fits",
                 "the question is not the last message"} | BROKEN,
    "tokens": {"only the system message fits", "huge tool result in the current turn",
               "a huge user message"} | BROKEN,
}
TOO_BIG = {"messages": {"three tool rounds in one turn", "only the system message fits",
                        "the question is not the last message"},
           "tokens": {"only the system message fits", "a huge user message"}}


def failing(fn, unit):
    return {v.case.name for v in judge_trim(fn, unit) if not v.passed}


def problems_of(fn, name, unit):
    return " | ".join(what for what, _ in judge_one(fn, trim_case(name), unit).problems)


# ----------------------------------------------------------------- the bank itself

def test_bank_has_at_least_25_cases_with_unique_names():
    names = [c.name for c in TRIM_CASES]
    assert len(names) >= 25, f"expected at least 25 cases, got {len(names)}"
    assert len(set(names)) == len(names), "duplicate case names"
    assert trim_case("parallel group at the cut").name == "parallel group at the cut"
    with pytest.raises(KeyError, match="parallel group at the cut"):
        trim_case("no such case")


@pytest.mark.parametrize("case", TRIM_CASES, ids=lambda c: c.name)
def test_every_case_says_what_it_protects_against(case):
    assert len(case.protects) > 30, f"{case.name}: say what real failure this protects against"
    assert any(m["role"] == "user" for m in case.messages), f"{case.name} has no question"
    assert case.max_messages >= 1 and case.max_tokens > 3


@pytest.mark.parametrize("case", TRIM_CASES, ids=lambda c: c.name)
def test_broken_flag_says_whether_the_api_accepts_the_input(case):
    refused = bool(find_problems(case.messages) + find_duplicate_ids(case.messages))
    assert refused == case.broken, (f"{case.name}: broken={case.broken} but the API "
                                    f"{'refuses' if refused else 'accepts'} it")


@pytest.mark.parametrize("unit", UNITS)
def test_cases_too_big_for_their_budget_are_the_intended_ones(unit):
    got = {c.name for c in TRIM_CASES if too_big(c, unit)}
    assert got == TOO_BIG[unit], f"expected {sorted(TOO_BIG[unit])}, got {sorted(got)}"


@pytest.mark.parametrize("case", TRIM_CASES, ids=lambda c: c.name)
def test_library_raises_exactly_where_nothing_fits_a_token_budget(case):
    if too_big(case, "tokens"):
        with pytest.raises(OverBudgetError, match="over budget by"):
            budget_trim(case.messages, case.max_tokens)
    else:
        kept = budget_trim(case.messages, case.max_tokens)
        assert count_messages(kept) <= case.max_tokens


# ----------------------------------------------------------------- who passes, who fails

@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("drop", ["unit", "turn"])
def test_library_trims_pass_every_case(unit, drop):
    got = failing(partial(budget_trim, unit=unit, drop=drop), unit)
    assert got == set(), f"budget_trim(unit={unit!r}, drop={drop!r}) failed {sorted(got)}"


@pytest.mark.parametrize("unit", UNITS)
def test_naive_trim_fails_exactly_the_cases_it_should(unit):
    got = failing(partial(naive_trim, unit=unit), unit)
    assert got == NAIVE_FAILS[unit], (f"unexpected: {sorted(got - NAIVE_FAILS[unit])}; "
                                      f"missing: {sorted(NAIVE_FAILS[unit] - got)}")


@pytest.mark.parametrize("unit", UNITS)
def test_seed_trim_fails_exactly_the_cases_it_should(unit):
    got = failing(partial(seed_trim, unit=unit), unit)
    assert got == SEED_FAILS[unit], (f"unexpected: {sorted(got - SEED_FAILS[unit])}; "
                                     f"missing: {sorted(SEED_FAILS[unit] - got)}")


@pytest.mark.parametrize("unit", UNITS)
def test_naive_and_seed_fail_for_the_right_reasons(unit):
    naive, seed = partial(naive_trim, unit=unit), partial(seed_trim, unit=unit)
    orphan = "must be a response to a preceeding message with 'tool_calls'"
    for name in ("single tool round at the cut", "parallel group at the cut",
                 "ids reused across turns", "no system message"):
        assert orphan in problems_of(naive, name, unit), f"naive, {name}: expected an orphan"
    assert "lost the latest user question" in problems_of(seed, "only the system message fits",
                                                          unit)
    for name in BROKEN:
        assert "the API would refuse it" in problems_of(seed, name, unit), (
            f"seed, {name}: a broken history passed on as it is")


# ----------------------------------------------------------------- each case catches its trap

def _cost_trim(cost):
    """The seed's rule with another way of counting."""
    return partial(seed_trim, cost=cost)


def tail_slice(messages, budget):  # messages[-n:], system prompt and all
    return messages[-budget:]


def system_and_tail(messages, budget):  # the first system message plus the newest n - 1
    return [messages[0], *[m for m in messages[1:] if m["role"] != "system"][-(budget - 1):]]


def drops_one_result(messages, budget):  # an assistant(tool_calls) and ONE message after it
    trimmed = list(messages)
    while len(trimmed) > budget:
        i = next(i for i, m in enumerate(trimmed) if m["role"] != "system")
        del trimmed[i:i + (2 if trimmed[i].get("tool_calls") else 1)]
    return trimmed


def first_system_only(messages, budget):
    rest = [m for m in messages[1:] if m["role"] != "system"]
    return [messages[0], *budget_trim(rest, budget - 1, unit="messages")]


def groups_only_without_text(messages, budget):  # an assistant with text "is not a group"
    trimmed = list(messages)
    while len(trimmed) > budget:
        i = next(i for i, m in enumerate(trimmed) if m["role"] != "system")
        end = i + 1
        while trimmed[i].get("content") is None and trimmed[end]["role"] == "tool":
            end += 1
        del trimmed[i:end]
    return trimmed


def matches_ids_globally(messages, budget):  # orphans found by looking ids up anywhere
    trimmed = list(messages)
    while len(trimmed) > budget:
        del trimmed[next(i for i, m in enumerate(trimmed) if m["role"] != "system")]
        asked = {c["id"] for m in trimmed for c in m.get("tool_calls") or []}
        trimmed = [m for m in trimmed if m["role"] != "tool" or m["tool_call_id"] in asked]
    return trimmed


def pairs_by_position(messages, budget):  # a group whose results are not in call order "is broken"
    kept, i = [], 0
    while i < len(messages):
        ids = [c["id"] for c in messages[i].get("tool_calls") or []]
        group = messages[i:i + 1 + len(ids)]
        if all(r["tool_call_id"] == cid for r, cid in zip(group[1:], ids, strict=False)):
            kept += group
        i += len(group)
    return budget_trim(kept, budget, unit="messages")


def systems_first(messages, budget):
    ordered = sorted(messages, key=lambda m: m["role"] != "system")
    return budget_trim(ordered, budget, unit="messages")


def assumes_a_system_prompt(messages, budget):
    system = next(m for m in messages if m["role"] == "system")
    return [system, *budget_trim([m for m in messages if m is not system], budget - 1,
                                 unit="messages")]


def never_raises(messages, budget):
    try:
        return budget_trim(messages, budget)
    except ValueError:
        return messages


def by_content(ms):
    return count_messages([{"role": m["role"], "content": m.get("content") or ""} for m in ms])


TRAPS = {  # case: (a trim that falls into its trap, the budget's unit, what the checker says)
    "nothing to trim": (lambda m, b: seed_trim(m, min(b, len(m) - 1)), "messages",
                        "where 2 can stay"),
    "exactly at the budget": (lambda m, b: seed_trim(m, b - 1), "messages", "can stay"),
    "plain chat over the budget": (tail_slice, "messages", "lost 1 of the 1 system"),
    "single tool round at the cut": (naive_trim, "messages", "preceeding message"),
    "parallel group at the cut": (drops_one_result, "messages", "call_bj5"),
    "cut through a group of three": (system_and_tail, "messages", "preceeding message"),
    "system message in the middle": (first_system_only, "messages", "lost 1 of the 2 system"),
    "three tool rounds in one turn": (seed_trim, "messages", "lost the latest user question"),
    "only the system message fits": (partial(naive_trim, unit="tokens"), "tokens",
                                     "lost the latest user question"),
    "huge tool result in an old turn": (partial(budget_trim, unit="messages"), "tokens",
                                        "over the budget"),
    "huge tool result in the current turn": (partial(seed_trim, unit="tokens"), "tokens",
                                             "lost the latest user question"),
    "a huge user message": (never_raises, "tokens", "context_length_exceeded"),
    "assistant with both content and tool calls": (groups_only_without_text, "messages",
                                                   "preceeding message"),
    "ids reused across turns": (matches_ids_globally, "messages", "preceeding message"),
    "results in another order than the calls": (pairs_by_position, "messages",
                                                 "newer than some it kept"),
    "system message in the current turn": (systems_first, "messages", "changed or moved"),
    "the question is not the last message": (system_and_tail, "messages",
                                             "lost the latest user question"),
    "no system message": (assumes_a_system_prompt, "messages", "raised StopIteration"),
    "chinese conversation": (_cost_trim(lambda ms: sum(len(m.get("content") or "")
                                                       for m in ms) // 4), "tokens",
                             "over the budget"),
    "long tool-call arguments": (_cost_trim(by_content), "tokens", "over the budget"),
    **{name: (naive_trim, "messages", "the API would refuse it") for name in BROKEN},
}


def test_every_case_has_a_trap():
    missing = {c.name for c in TRIM_CASES} - set(TRAPS)
    assert not missing, f"cases without a trap test: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_each_case_catches_the_failure_it_protects_against(name):
    trap, unit, says = TRAPS[name]
    verdict = judge_one(trap, trim_case(name), unit)
    found = " | ".join(what for what, _ in verdict.problems)
    assert not verdict.passed, f"{name}: the trap passed, the case protects nothing"
    assert says in found, f"{name}: expected a finding with {says!r}, got {found!r}"
    assert judge_one(partial(budget_trim, unit=unit), trim_case(name), unit).passed


# ----------------------------------------------------------------- judging details

def test_a_cut_tool_result_must_say_it_was_truncated():
    case = trim_case("huge tool result in the current turn")

    def cut_quietly(messages, budget):
        kept = budget_trim(messages, budget)
        kept[-1]["content"] = kept[-1]["content"].split("\n[truncated")[0]
        return kept
    assert judge_one(budget_trim, case, "tokens").passed
    found = problems_of(cut_quietly, case.name, "tokens")
    assert "changed or moved" in found, f"a silent cut must be reported, got {found!r}"


def test_changing_the_input_is_reported():
    def pops(messages, budget):
        while len(messages) > budget:
            messages.pop(1)
        return messages
    found = problems_of(pops, "plain chat over the budget", "messages")
    assert "it changed the list it was given" in found


def test_only_a_value_error_passes_where_nothing_fits():
    def raises_key_error(messages, budget):
        raise KeyError("oops")
    case = "a huge user message"
    assert judge_one(budget_trim, trim_case(case), "tokens").passed
    assert "raised KeyError" in problems_of(raises_key_error, case, "tokens")
    assert "raised KeyError" in problems_of(raises_key_error, "nothing to trim", "tokens")


def test_message_budget_over_the_floor_may_keep_the_floor_or_raise():
    case = trim_case("three tool rounds in one turn")
    assert judge_one(partial(budget_trim, unit="messages"), case, "messages").passed

    def refuses(messages, budget):
        raise ValueError("the current turn alone is 8 messages, 3 over max_messages=5")
    assert judge_one(refuses, case, "messages").passed


def test_judge_trim_names_its_units():
    with pytest.raises(ValueError, match="'messages' or 'tokens'"):
        judge_trim(naive_trim, "characters")


def test_request_cost_counts_messages_or_tokens():
    case = trim_case("nothing to trim")
    assert request_cost(case.messages, "messages") == len(case.messages)
    assert request_cost(case.messages) == count_messages(case.messages)


def test_a_case_can_be_built_and_checked_on_its_own(capsys):
    own = TrimCase("mine", copy.deepcopy(trim_case("nothing to trim").messages), 3, 60,
                   "a learner's own history")
    assert check_trim(budget_trim, "tokens", cases=[own]) is True
    assert "score 1/1" in capsys.readouterr().out


# ----------------------------------------------------------------- what the learner sees

def test_report_shows_score_passes_failures_and_hints(capsys):
    passed = check_trim(seed_trim)
    out = capsys.readouterr().out
    n = len(TRIM_CASES)
    assert passed is False
    assert f"check_trim(seed_trim, 'messages'): score {n - len(SEED_FAILS['messages'])}/{n}" in out
    assert "✅ parallel group at the cut (9 messages, budget 6): kept 5" in out
    assert "❌ only the system message fits" in out and "lost the latest user question" in out
    assert "This case protects against" in out and "hint:" in out
    assert "repair_messages()" in out, "broken cases should point at repair_messages()"


def test_report_for_the_library_passes(capsys):
    assert check_trim(partial(budget_trim, unit="tokens"), "tokens") is True
    out = capsys.readouterr().out
    assert f"score {len(TRIM_CASES)}/{len(TRIM_CASES)}" in out and "All checks passed." in out
    assert "raised ValueError: nothing can fit" in out


def test_check_trim_never_raises_at_the_learner(capsys):
    def crashes(messages, budget):
        return messages[99]
    assert check_trim(crashes) is False
    out = capsys.readouterr().out
    assert "it raised IndexError" in out and "see line" in out

    def unfinished(messages, budget):
        pass
    assert check_trim(unfinished) is False
    assert "it returned None" in capsys.readouterr().out

    assert check_trim("my_trim") is False
    assert "not a function" in capsys.readouterr().out


# These tests read which cases a check names: every line is printed (conftest.every_line).
pytestmark = pytest.mark.usefixtures("every_line")


def test_the_verdict_table_puts_trims_side_by_side_in_the_learners_language(speak):
    from lesson_lib.text import columns
    from lesson_lib.trimcheck import verdict_table

    verdicts = {"naive_trim": judge_trim(partial(naive_trim, unit="tokens"), "tokens"),
                "budget_trim": judge_trim(budget_trim, "tokens")}
    speak("en")
    lines = verdict_table(verdicts).splitlines()
    assert lines[0].split() == ["case", "naive_trim", "budget_trim"]
    assert len(lines) == len(TRIM_CASES) + 2
    naive_passes = sum(v.passed for v in verdicts["naive_trim"])
    assert lines[-1].split() == ["score", f"{naive_passes}/{len(TRIM_CASES)}",
                                 f"{len(TRIM_CASES)}/{len(TRIM_CASES)}"]
    broken = next(k for k, case in enumerate(TRIM_CASES) if case.broken)
    assert lines[broken + 1].startswith(TRIM_CASES[broken].name + " (broken)")
    assert lines[broken + 1].split()[-2:] == ["FAIL", "pass"]
    speak("zh")
    lines = verdict_table(verdicts).splitlines()
    assert lines[0].startswith("用例") and lines[-1].startswith("得分")
    assert "（本身已损坏）" in lines[broken + 1] and lines[broken + 1].split()[-2:] == ["失败", "通过"]
    assert len({columns(line) for line in lines}) == 1  # every column lines up
    assert verdict_table({}) == ""
