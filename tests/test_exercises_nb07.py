"""The self-checks of notebook 07 (token budgets): each passes a correct answer, fails the
wrong ones with the hint that fits, and never raises at the learner."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest
from check_support import line_of, run, stub_source

from lesson_lib.budget import truncate_text
from lesson_lib.costs import SCRIPT, CostPlot
from lesson_lib.exercises import nb07
from lesson_lib.repair import repair_messages
from lesson_lib.tokens import count_messages, count_text
from lesson_lib.trimcheck import TRIM_CASES, naive_trim, seed_trim

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "07_token_budgets.ipynb"
BROKEN = [c.name for c in TRIM_CASES if c.broken]


# ----------------------------------------------------------------- solutions (kept out of the notebook)

def solved_budget_trim(messages, budget):
    """Repair; keep system messages and the current turn; drop whole units oldest first;
    then cut the current turn's largest tool results; raise when even that cannot fit."""
    history = repair_messages(messages).messages
    last = max((i for i, m in enumerate(history) if m["role"] == "user"), default=0)
    units, i = [], 0
    while i < last:  # units before the current turn: a message, or a call with its results
        j = i + 1
        while history[i].get("tool_calls") and j < last and history[j]["role"] == "tool":
            j += 1
        units.append(history[i:j])
        i = j
    turn = history[last:]

    def cost() -> int:
        return count_messages([m for u in units for m in u] + turn)

    k = 0
    while cost() > budget and k < len(units):
        if units[k][0]["role"] == "system":
            k += 1
        else:
            del units[k]
    results = sorted((n for n, m in enumerate(turn) if m["role"] == "tool"),
                     key=lambda n: -count_text(turn[n]["content"]))
    for n in results:
        over = cost() - budget
        if over <= 0:
            break
        text = turn[n]["content"]
        turn[n] = {**turn[n], "content": truncate_text(text, max(count_text(text) - over, 0))}
    if cost() > budget:
        raise ValueError(f"over budget by {cost() - budget} tokens")
    return [m for u in units for m in u] + turn


def solved_summarizer(messages):
    name = None
    for m in messages:
        text = m.get("content") or ""
        if m["role"] == "system" and "the user's name is " in text:
            name = text.split("the user's name is ")[1].split(".")[0]
        if m["role"] == "user" and "My name is " in text:
            name = text.split("My name is ")[1].strip(" .!")
    return f"Summary: the user's name is {name}." if name else "Summary: nothing to keep."


# ----------------------------------------------------------------- exercise 1: my_budget_trim

def test_check_my_budget_trim_passes_a_learner_written_solution(capsys):
    passed, out = run(nb07.check_my_budget_trim, solved_budget_trim, capsys)
    assert passed, f"expected the solution to pass every case, got:\n{out}"
    assert f"score {len(TRIM_CASES)}/{len(TRIM_CASES)}" in out and "❌" not in out


def test_the_seed_rule_fails_the_cases_it_should(capsys):
    passed, out = run(nb07.check_my_budget_trim, partial(seed_trim, unit="tokens"), capsys)
    assert not passed and "score 17/28" in out, out
    line = line_of(out, "huge tool result in the current turn")
    assert "❌" in line and "it lost the latest user question" in line, line
    line = line_of(out, "results stored before their call")
    assert "❌" in line and "run repair_messages() on it first" in line, line


def test_a_trim_returning_none_is_told_to_return(capsys):
    passed, out = run(nb07.check_my_budget_trim, lambda messages, budget: None, capsys)
    assert not passed and "it returned None" in out and "end your function with `return`" in out


def test_a_placeholder_is_not_a_function(capsys):
    passed, out = run(nb07.check_my_budget_trim, ..., capsys)
    assert not passed and "not a function" in out


def test_compare_my_trim_runs_the_conversation_and_plots_it(capsys):
    plot, out = run(nb07.compare_my_trim, solved_budget_trim, capsys)
    assert isinstance(plot, CostPlot) and plot.names == ["my_budget_trim"], plot
    assert "✅ it ran 50 of 50 turns" in out and "❌" not in out, out
    assert "Its answer to \"What's my name?\"" in out
    assert plot.png().startswith(b"\x89PNG")


def test_compare_my_trim_reports_the_api_refusing_a_naive_trim(capsys):
    _, out = run(nb07.compare_my_trim, partial(naive_trim, unit="tokens"), capsys)
    assert "❌ it ran 13 of 50 turns; stopped at turn 14: BadRequestError" in out, out
    assert "must be a response to a preceeding message with 'tool_calls'" in out
    assert "Its answer" not in out, "no final answer when the run stopped early"


def test_compare_my_trim_reports_a_trim_that_never_trims(capsys):
    script = SCRIPT[:20]  # the full history is over the budget by turn 13
    nb07.compare_my_trim(lambda messages, budget: messages, script=script)
    out = capsys.readouterr().out
    assert "20-turn conversation" in out and "✅ it ran 20 of 20 turns" in out, out
    largest = re.search(r"❌ its largest request was ([\d,]+) tokens \(budget 1,800\)", out)
    assert largest and int(largest[1].replace(",", "")) > 1800, out


def test_compare_my_trim_of_a_placeholder_says_not_done(capsys):
    plot, out = run(nb07.compare_my_trim, ..., capsys)
    assert plot is None and "not done yet" in out


# ----------------------------------------------------------------- exercise 2: my_summarizer

def test_check_my_summarizer_passes_a_third_person_summary_that_carries_the_name(capsys):
    passed, out = run(nb07.check_my_summarizer, solved_summarizer, capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert "'You told me your name is Xiaoming.'" in out


def test_a_summary_of_the_last_questions_forgets_the_name(capsys):
    def last_questions(messages):
        questions = [m["content"] for m in messages if m["role"] == "user"]
        return "Earlier, the user asked: " + " / ".join(questions[-3:])

    passed, out = run(nb07.check_my_summarizer, last_questions, capsys)
    assert not passed and "You haven't told me your name." in out, out
    assert "Carry it forward, and state it in the third person" in out


def test_a_summary_that_grows_into_a_transcript_is_too_long(capsys):
    def transcript(messages):
        return "Summary: the user's name is Xiaoming. " + " ".join(
            m.get("content") or "" for m in messages)

    passed, out = run(nb07.check_my_summarizer, transcript, capsys)
    assert not passed and f"(at most {nb07.SUMMARY_LIMIT})" in out, out
    assert "not a transcript" in out


def test_a_summarizer_that_returns_none_or_raises_is_reported(capsys):
    passed, out = run(nb07.check_my_summarizer, lambda messages: None, capsys)
    assert not passed and "it returns text (for a short history it returned None)" in out

    def broken(messages):
        return messages[0]["text"]

    passed, out = run(nb07.check_my_summarizer, broken, capsys)
    assert not passed and "your code raised KeyError" in out and "of broken()" in out


def test_check_my_summarizer_of_a_placeholder_says_not_done(capsys):
    passed, out = run(nb07.check_my_summarizer, ..., capsys)
    assert not passed and "not done yet" in out


# ----------------------------------------------------------------- the notebook's stubs

@pytest.mark.skipif(not NOTEBOOK.exists(), reason="notebook not built yet")
def test_notebook_stubs_are_unsolved_first_attempts(capsys):
    namespace: dict = {"count_messages": count_messages}
    exec(stub_source(NOTEBOOK, "my_budget_trim"), namespace)  # noqa: S102  (our own notebook's stub)
    exec(stub_source(NOTEBOOK, "my_summarizer"), namespace)  # noqa: S102
    assert not nb07.check_my_budget_trim(namespace["my_budget_trim"])
    assert "score 17/28" in capsys.readouterr().out, "the first attempt is the seed's rule"
    assert not nb07.check_my_summarizer(namespace["my_summarizer"])
    assert "You haven't told me your name." in capsys.readouterr().out


# These tests read which cases a check names: every line is printed (conftest.every_line).
pytestmark = pytest.mark.usefixtures("every_line")
