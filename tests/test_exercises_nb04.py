"""Notebook 04's exercise checks pass correct trims, fail wrong ones with the right hint,
and never raise at the learner."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from lesson_lib.exercises.nb04 import (
    TRIM_SCENARIOS,
    TrimScenario,
    check_my_trim,
    check_turn_trim,
    scenario,
    show_trim,
)
from lesson_lib.protocol import find_problems, is_valid

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "04_trimming_pitfalls.ipynb"


def run(check, answer, capsys, **kw) -> tuple[bool, str]:
    passed = check(answer, **kw)
    return passed, capsys.readouterr().out


def line_of(out: str, name: str) -> str:
    """The report line of one scenario, with its hint line if it has one."""
    lines = out.splitlines()
    for k, line in enumerate(lines):
        if f" {name} (" in line:
            more = lines[k + 1] if k + 1 < len(lines) and "hint:" in lines[k + 1] else ""
            return line + "\n" + more
    raise AssertionError(f"no line for scenario {name!r} in:\n{out}")


# ----------------------------------------------------------------- solutions (kept out of the notebook)

def solved_trim(messages, max_messages, turn_aware=False):
    """Drop whole groups (an assistant with tool_calls and its tool replies), oldest first,
    never a system message, the latest question or the newest group."""
    groups = []
    for m in messages:
        if m["role"] == "tool":
            groups[-1].append(m)  # a tool reply belongs to the assistant(tool_calls) before it
        else:
            groups.append([m])
    asked = [g for g in groups if g[0]["role"] == "user"][-1]
    k = 0
    while k < len(groups) - 1:  # the newest group is never dropped
        first = next(g for g in groups if g[0]["role"] != "system")
        fits = sum(map(len, groups)) <= max_messages
        if fits and (not turn_aware or first[0]["role"] == "user"):
            break
        if groups[k][0]["role"] == "system" or groups[k] is asked:
            k += 1
        else:
            del groups[k]
    return [m for g in groups for m in g]


def solved_turn_trim(messages, max_messages):
    return solved_trim(messages, max_messages, turn_aware=True)


# ----------------------------------------------------------------- wrong answers a learner may write

def naive_trim(messages, max_messages):  # the notebook's stub
    trimmed = list(messages)
    while len(trimmed) > max_messages:
        oldest = next(i for i, m in enumerate(trimmed) if m["role"] != "system")
        del trimmed[oldest]
    return trimmed


def seed_trim(messages, max_messages):  # the source article's rule, as a function
    trimmed = list(messages)
    while len(trimmed) > max_messages:
        i = next((i for i, m in enumerate(trimmed) if m["role"] != "system"), None)
        if i is None:
            break
        trimmed.pop(i)
        while i < len(trimmed) and trimmed[i]["role"] == "tool":
            trimmed.pop(i)
    return trimmed


def question_only(messages, max_messages):  # valid, but forgets everything
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [m for i, m in enumerate(messages) if m["role"] == "system" or i == last]


def tail_slice(messages, max_messages):
    return messages[-max_messages:]


def first_system_only(messages, max_messages):  # loses a system message in the middle
    rest = solved_trim([m for m in messages[1:] if m["role"] != "system"], max_messages - 1)
    return [messages[0], *rest]


def pops_the_input(messages, max_messages):
    while len(messages) > max_messages:
        i = next(i for i, m in enumerate(messages) if m["role"] != "system")
        messages.pop(i)
        while messages[i]["role"] == "tool":
            messages.pop(i)
    return messages


def rewrites_content(messages, max_messages):  # content None, as the SDK's reply has it
    return [{**m, "content": None} if m.get("tool_calls") else m
            for m in solved_trim(messages, max_messages)]


# ----------------------------------------------------------------- the bank itself

def test_scenario_names_are_unique_and_found_by_name():
    names = [s.name for s in TRIM_SCENARIOS]
    assert len(names) == len(set(names)), f"duplicate scenario names in {names}"
    for name in names:
        assert scenario(name).name == name
    with pytest.raises(KeyError, match="parallel group at the cut"):
        scenario("no such scenario")


@pytest.mark.parametrize("s", TRIM_SCENARIOS, ids=lambda s: s.name)
def test_every_scenario_is_a_valid_history_with_a_question(s):
    problems = find_problems(s.messages)
    assert not problems, f"{s.name}: expected a valid history, got {problems[0]}"
    assert any(m["role"] == "user" for m in s.messages), f"{s.name} has no user message"


@pytest.mark.parametrize("s", TRIM_SCENARIOS, ids=lambda s: s.name)
def test_solution_meets_the_limit_in_every_scenario(s):
    got = solved_trim(copy.deepcopy(s.messages), s.max_messages)
    assert len(got) <= s.max_messages and is_valid(got), (
        f"{s.name}: expected a valid list of at most {s.max_messages}, got {len(got)} messages")


def test_the_bank_has_the_tricky_cases_the_notebook_names():
    names = {s.name for s in TRIM_SCENARIOS}
    for wanted in ("parallel group at the cut", "system message in the middle",
                   "three tool rounds in one turn", "assistant with both content and tool_calls"):
        assert wanted in names, f"expected a scenario called {wanted!r}, have {sorted(names)}"


# ----------------------------------------------------------------- exercise 1: my_trim

def test_check_my_trim_passes_a_correct_trim(capsys):
    passed, out = run(check_my_trim, solved_trim, capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert f"{len(TRIM_SCENARIOS)} of {len(TRIM_SCENARIOS)} scenarios pass" in out
    assert "❌" not in out and "All checks passed." in out


def test_check_my_trim_passes_a_turn_aware_trim_too(capsys):
    passed, out = run(check_my_trim, solved_turn_trim, capsys)
    assert passed, f"a stricter, turn-aware trim must also pass exercise 1, got:\n{out}"


def test_naive_stub_fails_on_orphans_and_the_lost_question(capsys):
    passed, out = run(check_my_trim, naive_trim, capsys)
    assert not passed
    assert "1 of 5 scenarios pass" in out, out
    assert "✅ nothing to trim" in out
    for name in ("parallel group at the cut", "system message in the middle",
                 "assistant with both content and tool_calls"):
        line = line_of(out, name)
        assert "❌" in line and "must be a response to a preceeding message" in line, line
        assert "drop every tool message right after it too" in line, line
    line = line_of(out, "three tool rounds in one turn")
    assert "dropped the latest user message" in line and "never drop it" in line, line


def test_seed_rule_fails_only_when_the_turn_is_longer_than_the_limit(capsys):
    passed, out = run(check_my_trim, seed_trim, capsys)
    assert not passed and "4 of 5 scenarios pass" in out, out
    line = line_of(out, "three tool rounds in one turn")
    assert "❌" in line and "dropped the latest user message" in line, line
    assert "longer than max_messages" in line, "the hint should name what is tricky"


def test_keeping_only_the_question_is_reported_as_forgetting_too_much(capsys):
    passed, out = run(check_my_trim, question_only, capsys)
    assert not passed
    line = line_of(out, "parallel group at the cut")
    assert "kept only 2 messages where 4 can stay" in line, line
    assert "dropped the newest message" in line_of(out, "three tool rounds in one turn")
    assert "kept only 2 messages where 7 can stay" in line_of(out, "nothing to trim")


def test_a_tail_slice_loses_the_system_message(capsys):
    passed, out = run(check_my_trim, tail_slice, capsys)
    assert not passed
    line = line_of(out, "system message in the middle")
    assert "dropped 2 of the 2 system messages" in line, line
    assert "never drop a system message" in line, line


def test_a_dropped_middle_system_message_is_named(capsys):
    passed, out = run(check_my_trim, first_system_only, capsys)
    assert not passed
    assert "dropped 1 of the 2 system messages" in line_of(out, "system message in the middle")
    assert "✅ parallel group at the cut" in out, "only the middle system message is wrong"


def test_changing_the_callers_list_is_reported(capsys):
    passed, out = run(check_my_trim, pops_the_input, capsys)
    assert not passed
    line = line_of(out, "parallel group at the cut")
    assert "changed the list it was given" in line and "work on a copy" in line, line


def test_edited_messages_are_reported(capsys):
    passed, out = run(check_my_trim, rewrites_content, capsys)
    assert not passed
    line = line_of(out, "three tool rounds in one turn")
    assert "not the input with some messages removed" in line, line
    assert "only remove messages" in line, line


def test_returning_too_many_messages_is_reported(capsys):
    passed, out = run(check_my_trim, lambda messages, max_messages: list(messages), capsys)
    assert not passed
    line = line_of(out, "parallel group at the cut")
    assert "kept 9 messages, more than 6" in line and "len(result) <= max_messages" in line


@pytest.mark.parametrize("answer, expected", [
    (lambda messages, max_messages: tuple(messages), "returned a tuple, not a list"),
    (lambda messages, max_messages: [m["role"] for m in messages], "not message dicts"),
    (lambda messages, max_messages: messages[0]["nope"], "raised KeyError"),
    (lambda messages, max_messages: 1 / 0, "raised ZeroDivisionError"),
])
def test_odd_answers_become_findings_not_crashes(answer, expected, capsys):
    passed, out = run(check_my_trim, answer, capsys)
    assert not passed and expected in out, f"expected {expected!r} in:\n{out}"
    assert "Not yet" in out


def test_a_raising_trim_points_at_show_trim(capsys):
    def broken(messages, max_messages):
        return messages[max_messages]["role"]  # IndexError in "nothing to trim"

    passed, out = run(check_my_trim, broken, capsys)
    assert not passed
    line = line_of(out, "nothing to trim")
    assert "raised IndexError" in line and "show_trim(your_function, 'nothing to trim')" in line


def test_an_unwritten_stub_is_not_done_yet(capsys):
    def my_trim(messages, max_messages):
        ...

    passed, out = run(check_my_trim, my_trim, capsys)
    assert not passed and "not done yet" in out and "returns None for every history" in out
    assert out.count("  ❌ ") == 1, f"one line for an unwritten stub, got:\n{out}"


@pytest.mark.parametrize("value", [..., None, "my_trim", 3])
def test_a_value_instead_of_a_function_is_not_done_yet(value, capsys):
    passed, out = run(check_my_trim, value, capsys)
    assert not passed and "not done yet" in out and "pass the function itself" in out


def test_another_bank_can_be_passed_in(capsys):
    tiny = [TrimScenario("tiny", [{"role": "user", "content": "hi"}], 1, "nothing at all")]
    passed, out = run(check_my_trim, solved_trim, capsys, scenarios=tiny)
    assert passed and "1 of 1 scenarios pass" in out, out


# ----------------------------------------------------------------- exercise 2: my_turn_trim

def test_check_turn_trim_passes_a_turn_aware_trim(capsys):
    passed, out = run(check_turn_trim, solved_turn_trim, capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert "❌" not in out


def test_check_turn_trim_fails_a_trim_that_starts_with_an_answer(capsys):
    passed, out = run(check_turn_trim, solved_trim, capsys)
    assert not passed
    line = line_of(out, "parallel group at the cut")
    assert "starts with an assistant message whose question is gone" in line, line
    assert "first non-system message is not a user message" in line, line


def test_check_turn_trim_still_checks_the_pairing_rule(capsys):
    passed, out = run(check_turn_trim, naive_trim, capsys)
    assert not passed
    assert "must be a response to a preceeding" in line_of(out, "parallel group at the cut")


def test_check_turn_trim_reports_an_unwritten_stub(capsys):
    def my_turn_trim(messages, max_messages):
        ...

    passed, out = run(check_turn_trim, my_turn_trim, capsys)
    assert not passed and "Exercise 2" in out and "not done yet" in out


# ----------------------------------------------------------------- show_trim and the notebook

def test_show_trim_draws_before_and_after():
    view = show_trim(naive_trim, "parallel group at the cut")
    text = str(view)
    assert "parallel group at the cut (max_messages=6)" in text and "after naive_trim" in text
    assert "must be a response to a preceeding message" in text, "the orphan should show"
    assert "<table" in view._repr_html_()


def stub_source(name: str) -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and f"def {name}(" in source:
            return source
    raise AssertionError(f"no cell defines {name} in {NOTEBOOK.name}")


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="notebook not built yet")
def test_notebook_stubs_are_unsolved_first_attempts(capsys):
    namespace: dict = {}
    exec(stub_source("my_trim"), namespace)  # noqa: S102  (our own notebook's stub)
    exec(stub_source("my_turn_trim"), namespace)  # noqa: S102
    assert not check_my_trim(namespace["my_trim"]), "the committed my_trim must not be a solution"
    assert "1 of 5 scenarios pass" in capsys.readouterr().out
    assert not check_turn_trim(namespace["my_turn_trim"])
    assert "not done yet" in capsys.readouterr().out
