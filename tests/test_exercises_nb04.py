"""Notebook 04's exercise checks judge with the project's bank (lesson_lib.trimcheck): a
correct trim passes, the naive stub and the seed's rule fail the cases they should, with
the right hint, and a check never raises at the learner. Each answer is checked in both
editions: on the English bank, and on its Chinese twin (trimcheck.bank("zh")), with the same
verdict and the same report."""

from __future__ import annotations

import functools
from pathlib import Path

import check_support
import pytest
from check_support import line_of, stub_source, twin

from lesson_lib.exercises.contract import failed_rules
from lesson_lib.exercises.nb04 import (
    RANDOM_RULES,
    VALID_CASES,
    check_my_trim,
    check_turn_trim,
    show_trim,
)
from lesson_lib.trimcheck import TRIM_CASES, TrimCase, budget_trim, check_trim, judge_trim


def run(check, answer, capsys, **kw):
    """The verdict and report in English, after the Chinese edition (its own bank) gave the
    same verdict and the same report in Chinese."""
    return check_support.run(check, twin(lambda: answer), capsys, **kw)


NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "04_trimming_pitfalls.ipynb"

# what the committed stub (the naive trim) gets wrong among the valid cases
NAIVE_ORPHANS = ("single tool round at the cut", "parallel group at the cut",
                 "cut through a group of three", "system message in the middle",
                 "assistant with both content and tool calls", "ids reused across turns",
                 "no system message")
LOST_QUESTION = ("three tool rounds in one turn", "only the system message fits",
                 "the question is not the last message")


# ----------------------------------------------------------------- solutions (kept out of the notebook)

def solved_trim(messages, max_messages, turn_aware=False):
    """Keep every system message and the current turn; drop whole groups (an assistant
    with tool_calls and its tool replies) from the oldest end until the list fits."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    groups = []
    for m in messages[:last_user]:
        if m["role"] == "tool" and groups:
            groups[-1].append(m)  # a tool reply belongs to the assistant(tool_calls) before it
        else:
            groups.append([m])
    turn = messages[last_user:]

    def size():
        return sum(map(len, groups)) + len(turn)

    def first_is_answer():
        head = next((g for g in groups if g[0]["role"] != "system"), None)
        return turn_aware and head is not None and head[0]["role"] != "user"

    while size() > max_messages or first_is_answer():
        k = next((k for k, g in enumerate(groups) if g[0]["role"] != "system"), None)
        if k is None:
            break
        del groups[k]
    return [m for g in groups for m in g] + list(turn)


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


def pops_the_input(messages, max_messages):
    while len(messages) > max_messages:
        messages.pop(next(i for i, m in enumerate(messages) if m["role"] != "system"))
    return messages


def _groups(messages):
    """Units: a message, or an assistant(tool_calls) with the tool replies after it."""
    groups = []
    for m in messages:
        if m["role"] == "tool" and groups:
            groups[-1].append(m)
        else:
            groups.append([m])
    return groups


def _split(messages):
    """(the history before the latest user message, the current turn)."""
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return messages[:last], messages[last:]


def _by_groups(messages, max_messages, *, fits=lambda n, budget: n <= budget, pick=min):
    """Drop whole groups before the current turn (which one: `pick` of the candidates)
    until the list `fits`; the system messages stay."""
    head, turn = _split(messages)
    groups = _groups(head)
    while not fits(sum(map(len, groups)) + len(turn), max_messages):
        k = pick((k for k, g in enumerate(groups) if g[0]["role"] != "system"), default=None)
        if k is None:
            break
        del groups[k]
    return [m for g in groups for m in g] + turn


def drops_index_zero(messages, max_messages):
    trimmed = list(messages)
    while len(trimmed) > max_messages:
        del trimmed[0]
    return trimmed


def keeps_the_last_n(messages, max_messages):  # messages[-n:], the system messages put back
    systems = [m for m in messages if m["role"] == "system"]
    others = [m for m in messages if m["role"] != "system"]
    return systems + others[len(others) - max(max_messages - len(systems), 0):]


def systems_first(messages, max_messages):  # every system message moved to the front
    systems = [m for m in messages if m["role"] == "system"]
    return systems + _by_groups([m for m in messages if m["role"] != "system"],
                                max_messages - len(systems))


def shortens_long_messages(messages, max_messages):
    return [{**m, "content": m["content"][:500]} if isinstance(m.get("content"), str) else m
            for m in _by_groups(messages, max_messages)]


def off_by_one(messages, max_messages):  # >= where > belongs
    return _by_groups(messages, max_messages, fits=lambda n, budget: n < budget)


def drops_the_newest_history(messages, max_messages):  # the groups right before the turn
    return _by_groups(messages, max_messages, pick=max)


def one_group_only(messages, max_messages):  # `if` where `while` belongs
    head, turn = _split(messages)
    groups = _groups(head)
    if sum(map(len, groups)) + len(turn) > max_messages:
        k = next((k for k, g in enumerate(groups) if g[0]["role"] != "system"), None)
        if k is not None:
            del groups[k]
    return [m for g in groups for m in g] + turn


def keeps_only_the_turn(messages, max_messages):  # over the budget: forget everything old
    if len(messages) <= max_messages:
        return list(messages)
    head, turn = _split(messages)
    return [m for m in head if m["role"] == "system"] + turn


def forgets_a_return(messages, max_messages):
    if len(messages) <= max_messages:
        return list(messages)
    trimmed = _by_groups(messages, max_messages)  # noqa: F841  (and no return: None)


def moves_a_system_message_up(messages, max_messages):
    """Puts the system messages before the current turn first: passes all 20 cases (none
    has a system message between two user messages with nothing to drop before it)."""
    head, turn = _split(messages)
    systems = [m for m in head if m["role"] == "system"]
    kept = _by_groups([m for m in head if m["role"] != "system"] + turn,
                      max_messages - len(systems))
    return systems + kept


def drops_whole_turns(messages, max_messages):
    """Drops a whole turn (the question and all its answer) where one message would do."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    kept, turn = list(messages[:last_user]), messages[last_user:]
    while len(kept) + len(turn) > max_messages:
        start = next((i for i, m in enumerate(kept) if m["role"] == "user"), None)
        if start is None:
            break
        end = next((i for i in range(start + 1, len(kept)) if kept[i]["role"] == "user"),
                   len(kept))
        del kept[start:end]
    return kept + list(turn)


def never_stops(messages, max_messages):
    """`if k is not None` where `break` belongs: when nothing more can go, it goes round."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    kept, turn = list(messages[:last_user]), messages[last_user:]
    while len(kept) + len(turn) > max_messages:
        k = next((i for i, m in enumerate(kept) if m["role"] != "system"), None)
        if k is not None:
            end = k + 1
            while end < len(kept) and kept[end]["role"] == "tool":
                end += 1
            del kept[k:end]
    return kept + list(turn)


# A learner's mistakes, each with the case that catches it and the finding it gets there.
WRONG_TRIMS = {
    naive_trim: ("single tool round at the cut", "must be a response to a preceeding message"),
    drops_index_zero: ("plain chat over the budget", "it lost 1 of the 1 system message"),
    keeps_the_last_n: ("cut through a group of three",
                       "must be a response to a preceeding message"),
    systems_first: ("system message in the current turn",
                    "not the input with some messages removed (a message was added, changed "
                    "or moved)"),
    shortens_long_messages: ("huge tool result in an old turn",
                             "not the input with some messages removed"),
    seed_trim: ("three tool rounds in one turn", "it lost the latest user question"),
    pops_the_input: ("single tool round at the cut", "it changed the list it was given"),
    off_by_one: ("exactly at the budget",
                 "it kept 5 of the earlier messages where 6 can stay: it dropped more than "
                 "the budget needs"),
    keeps_only_the_turn: ("plain chat over the budget",
                          "it kept 0 of the earlier messages where 2 can stay"),
    drops_whole_turns: ("single tool round at the cut",
                        "it kept 2 of the earlier messages where 3 can stay"),
    drops_the_newest_history: ("plain chat over the budget",
                               "it dropped messages newer than some it kept"),
    one_group_only: ("plain chat over the budget", "it kept 7 messages, more than 4"),
    forgets_a_return: ("plain chat over the budget", "it returned None"),
}


# ----------------------------------------------------------------- the bank

def test_exercise_bank_is_the_projects_valid_cases():
    assert VALID_CASES == [c for c in TRIM_CASES if not c.broken] and len(VALID_CASES) == 20, (
        f"expected the 20 valid cases of TRIM_CASES, got {len(VALID_CASES)}")


# ----------------------------------------------------------------- exercise 1: my_trim

def test_check_my_trim_passes_a_correct_trim(capsys):
    passed, out = run(check_my_trim, solved_trim, capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert "score 20/20" in out and "❌" not in out and "All checks passed." in out


def test_check_my_trim_tells_a_turn_aware_trim_it_forgets_more_than_it_must(capsys):
    """Exercise 1 asks to forget no more than a trim has to: dropping the answer with its
    question (exercise 2's rule) is one unit more than the budget needs."""
    passed, out = run(check_my_trim, solved_turn_trim, capsys)
    assert not passed and "it dropped more than the budget needs" in out, out
    passed, out = run(check_turn_trim, solved_turn_trim, capsys)
    assert passed, f"exercise 2 is where a turn-aware trim passes, got:\n{out}"


def test_a_trim_that_never_ends_is_stopped_and_named(capsys):
    from lesson_lib.exercises import deadline

    passed, out = run(check_my_trim, never_stops, capsys)
    assert not passed and len(out.splitlines()) <= 6, out
    assert (f"your trim did not finish in {deadline.CALL_SECONDS:g} s on this history: "
            "[system, user, assistant, user, assistant→1 call, tool(call_cd8), ") in out, out
    assert "(max_messages=5); it was running never_stops() when the check stopped it" in out


def test_a_stopped_trim_is_named_the_same_when_the_timer_took_no_looks(capsys, monkeypatch):
    """On a busy machine the timer can miss every look before the stop; the report names
    the learner's function, not the generator expression the stop happened to land in."""
    from lesson_lib.exercises import deadline

    monkeypatch.setattr(deadline, "WATCH", 0.0)  # no looks: only where it stopped is known
    passed, out = run(check_my_trim, never_stops, capsys)
    assert not passed
    assert "it was running never_stops() when the check stopped it" in out, out


def test_a_trim_stuck_inside_a_generator_expression_is_named_by_its_function(capsys):
    """Every look can land inside `next(... for ...)`; the report names the function."""

    def searches_for_ever(messages, max_messages):
        while True:
            next((i for i in range(10**5) if messages[0]["role"] == "nobody"), None)

    passed, out = run(check_my_trim, searches_for_ever, capsys)
    assert not passed
    assert "it was running searches_for_ever() when the check stopped it" in out, out


def test_a_trim_with_other_parameters_is_told_in_one_sentence(capsys):
    def my_trim(messages):
        return messages

    passed, out = run(check_my_trim, my_trim, capsys)
    assert not passed and len(out.splitlines()) == 3, out
    assert ("your my_trim(messages) cannot be called the way the check calls it, "
            "my_trim(messages, max_messages)") in out, out


def test_check_my_trim_is_check_trim_on_messages(capsys):
    _, mine = run(check_my_trim, naive_trim, capsys)
    check_trim(naive_trim, unit="messages", cases=VALID_CASES, drop="unit")
    theirs = capsys.readouterr().out
    assert mine == theirs, f"expected check_trim's report, got:\n{mine}\nvs\n{theirs}"


def test_naive_stub_fails_on_orphans_and_the_lost_question(capsys):
    passed, out = run(check_my_trim, naive_trim, capsys)
    assert not passed and "score 10/20" in out, out
    for name in NAIVE_ORPHANS:
        line = line_of(out, name)
        assert "❌" in line and "must be a response to a preceeding message" in line, line
        assert "never one message of it" in line, line
    for name in LOST_QUESTION:
        line = line_of(out, name)
        assert "❌" in line and "it lost the latest user question" in line, line
    assert "✅ nothing to trim" in out


def test_seed_rule_fails_only_where_the_question_is_lost(capsys):
    passed, out = run(check_my_trim, seed_trim, capsys)
    assert not passed and "score 17/20" in out, out
    for name in LOST_QUESTION:
        assert "it lost the latest user question" in line_of(out, name)
    for name in NAIVE_ORPHANS:
        assert "✅" in line_of(out, name), f"the seed's rule leaves no orphan in {name!r}"


@pytest.mark.parametrize("wrong", list(WRONG_TRIMS), ids=lambda f: f.__name__)
def test_each_wrong_trim_gets_the_finding_that_fits(wrong, capsys):
    case, finding = WRONG_TRIMS[wrong]
    passed, out = run(check_my_trim, wrong, capsys)
    assert not passed
    line = line_of(out, case)
    assert "❌" in line and finding in line, line


def test_the_bank_of_wrong_trims_is_at_least_eight():
    assert len(WRONG_TRIMS) >= 8


def test_a_trim_that_passes_the_bank_is_then_tried_on_random_histories(capsys):
    passed, out = run(check_my_trim, solved_trim, capsys)
    assert passed and out.count("All checks passed.") == 2, out
    assert "Exercise 1 · my_trim on random histories:\n  ✅ for any valid history" in out


def test_random_histories_catch_what_the_20_cases_miss(capsys):
    assert all(v.passed for v in judge_trim(moves_a_system_message_up, "messages",
                                            VALID_CASES))
    passed, out = run(check_my_trim, moves_a_system_message_up, capsys)
    assert not passed and "score 20/20" in out, out
    assert ("what happened: max_messages=3, history conversation(['user', 'system', 'user']) "
            "= [user 1, system 2, user 3]: it returned [system 2, user 1, user 3]: it is not "
            "the input with some messages removed") in out


def test_the_library_trim_passes_exercise_1_and_its_random_histories(capsys):
    library = functools.partial(budget_trim, unit="messages")
    passed, out = run(check_my_trim, library, capsys)
    assert passed and "score 20/20" in out and out.count("All checks passed.") == 2, out
    assert failed_rules(library, RANDOM_RULES) == []


def test_changing_the_callers_list_is_reported(capsys):
    passed, out = run(check_my_trim, pops_the_input, capsys)
    assert not passed and "it changed the list it was given" in out and "work on a copy" in out


@pytest.mark.parametrize("answer, expected", [
    (lambda messages, max_messages: tuple(messages), "not a list of message dicts"),
    (lambda messages, max_messages: messages[0]["nope"], "raised KeyError"),
    (lambda messages, max_messages: 1 / 0, "raised ZeroDivisionError"),
])
def test_odd_answers_become_findings_not_crashes(answer, expected, capsys):
    passed, out = run(check_my_trim, answer, capsys)
    assert not passed and expected in out, f"expected {expected!r} in:\n{out}"


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
    tiny = [TrimCase("tiny", [{"role": "user", "content": "hi"}], 1, 100, "nothing at all")]
    passed, out = run(check_my_trim, solved_trim, capsys, cases=tiny)
    assert passed and "score 1/1" in out, out


# ----------------------------------------------------------------- exercise 2: my_turn_trim

def test_check_turn_trim_passes_a_turn_aware_trim(capsys):
    passed, out = run(check_turn_trim, solved_turn_trim, capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert "score 20/20" in out and "❌" not in out


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


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="notebook not built yet")
def test_notebook_stubs_are_unsolved_first_attempts(capsys):
    namespace: dict = {}
    exec(stub_source(NOTEBOOK, "my_trim"), namespace)  # noqa: S102  (our own notebook's stub)
    exec(stub_source(NOTEBOOK, "my_turn_trim"), namespace)  # noqa: S102
    assert not check_my_trim(namespace["my_trim"]), "the committed my_trim must not be a solution"
    assert "score 10/20" in capsys.readouterr().out
    assert not check_turn_trim(namespace["my_turn_trim"])
    assert "not done yet" in capsys.readouterr().out


# These tests read which cases a check names: every line is printed (conftest.every_line).
pytestmark = pytest.mark.usefixtures("every_line")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_show_trim_takes_a_case_name_as_either_report_prints_it(lang, speak):
    """The names the check's report prints, in either language, copied with their size or
    in quotes, find their case; the title is in the language spoken."""
    speak(lang)
    for name in ("裁剪点落在并行工具调用组上", "“裁剪点落在并行工具调用组上”",
                 "裁剪点落在并行工具调用组上（9 条消息，预算 6）",
                 "Parallel group at the cut (9 messages, budget 6)"):
        view = show_trim(naive_trim, name)
        title = "裁剪点落在并行工具调用组上" if lang == "zh" else "parallel group at the cut"
        assert f"{title}（max_messages=6）" in str(view) or f"{title} (max_messages=6)" in str(view)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_wrong_case_name_is_a_sentence_naming_the_cases_in_the_learners_language(lang, speak):
    from lesson_lib.trimcheck import UnknownTrimCase

    speak(lang)
    with pytest.raises(KeyError) as wrong:  # an UnknownTrimCase is a KeyError still
        show_trim(naive_trim, "parallel grup at the cut")
    said = str(wrong.value)
    assert isinstance(wrong.value, UnknownTrimCase) and not said.startswith(("'", '"'))
    if lang == "zh":
        assert said.startswith("没有叫 'parallel grup at the cut' 的裁剪用例；你是不是想写 "
                               "'裁剪点落在并行工具调用组上'？") and "'中文对话'" in said
        assert "no trim case" not in said
    else:
        assert said.startswith("no trim case called 'parallel grup at the cut'; did you mean "
                               "'parallel group at the cut'?") and "'chinese conversation'" in said
    assert len(said.split("', '")) == len(VALID_CASES)  # the cases show_trim draws, no more
