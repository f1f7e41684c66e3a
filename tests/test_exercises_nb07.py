"""The self-checks of notebook 07 (token budgets): each passes a correct answer, fails the
wrong ones with the hint that fits, and never raises at the learner. (The trim's rules,
with their bank of wrong trims, are tested in tests/test_core_track_nb07.py.)"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest
from check_support import expect_fail, expect_pass, run, stub_source, twin
from other_model import reword

from lesson_lib.budget import model_summarizer, truncate_text
from lesson_lib.costs import SCRIPT, CostPlot
from lesson_lib.exercises import nb07
from lesson_lib.llm import chat
from lesson_lib.offline import offline_client
from lesson_lib.repair import repair_messages
from lesson_lib.tokens import count_messages, count_text
from lesson_lib.trimcheck import naive_trim, seed_trim

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOK = NOTEBOOKS / "07_token_budgets.ipynb"  # the summarizer's exercise
NOTEBOOK_B = NOTEBOOKS / "07b_repairing_and_trimming.ipynb"  # the build: my_budget_trim


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


def summarizer_in(said: str, kept: str, end: str, head: str):
    """A summarizer in one language, third person, carried forward: the name from the user's
    words (`said` before it) or from the last summary (`kept` before it, up to `end`)."""
    def summarize(messages):
        name = None
        for m in messages:
            text = m.get("content") or ""
            if m["role"] == "system" and kept in text:
                name = text.split(kept)[1].split(end)[0]
            if m["role"] == "user" and said in text:
                name = text.split(said)[1].strip(" .!。！")
        return f"{head}{kept}{name}{end}" if name else f"{head}-"
    return summarize


solved_summarizer = summarizer_in("My name is ", "the user's name is ", ".", "Summary: ")
solved_summarizer_zh = summarizer_in("我叫", "用户叫", "。", "摘要：")  # the Chinese learner's


# ----------------------------------------------------------------- Build it: my_budget_trim

def test_check_my_budget_trim_passes_a_learner_written_solution(capsys):
    passed, out = run(nb07.check_my_budget_trim, solved_budget_trim, capsys)
    assert passed, f"expected the solution to pass every rule, got:\n{out}"
    assert "All checks passed." in out and "❌" not in out


def test_the_seed_rule_is_told_to_keep_the_current_turn(capsys):
    passed, out = run(nb07.check_my_budget_trim, partial(seed_trim, unit="tokens"), capsys)
    assert not passed, out
    assert "❌ it keeps the current turn: the latest question and everything after it" in out
    assert "it lost the latest user question" in out
    assert "❌ a broken history comes back valid" in out


def test_a_trim_returning_none_is_told_to_return(capsys):
    passed, out = run(nb07.check_my_budget_trim, lambda messages, budget: None, capsys)
    assert not passed and "what happened: " in out and ": it returned None" in out, out


def test_a_placeholder_is_not_done_yet(capsys):
    passed, out = run(nb07.check_my_budget_trim, ..., capsys)
    assert not passed and "not done yet" in out and "pass the function itself" in out


def test_compare_my_trim_runs_the_conversation_and_plots_it(capsys):
    plot, out = run(nb07.compare_my_trim, solved_budget_trim, capsys)
    assert isinstance(plot, CostPlot) and plot.names == ["solved_budget_trim"], plot
    assert "solved_budget_trim in the 50-turn conversation" in out
    assert "✅ it ran 50 of 50 turns" in out and "❌" not in out, out
    assert "Its answer to \"What's my name?\"" in out
    assert plot.png().startswith(b"\x89PNG")


def test_compare_my_trim_reports_the_api_refusing_a_naive_trim(capsys):
    _, out = run(nb07.compare_my_trim, partial(naive_trim, unit="tokens"), capsys)
    assert "naive_trim in the 50-turn conversation" in out
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


@pytest.mark.parametrize("answer", [..., "my_budget_trim"])
def test_compare_my_trim_of_a_placeholder_says_not_done(answer, capsys):
    plot, out = run(nb07.compare_my_trim, answer, capsys)
    assert plot is None and "not done yet" in out


def test_compare_my_trim_of_the_skeleton_says_not_done(capsys):
    def my_budget_trim(messages, budget):
        raise NotImplementedError

    plot, out = run(nb07.compare_my_trim, my_budget_trim, capsys)
    assert plot is None and "not done yet" in out and "check_my_budget_trim" in out, out
    assert len(out.splitlines()) <= 4


# ----------------------------------------------------------------- exercise 1: my_summarizer

def test_check_my_summarizer_passes_a_summary_that_carries_the_name(capsys):
    passed, out = run(nb07.check_my_summarizer, solved_summarizer, capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert "its summary keeps the name: \"Summary: the user's name is Meimei.\"" in out
    assert re.search(r"✅ all \d+ summaries keep the name Xiaoming", out), out


def test_a_summary_in_the_first_person_passes_too(capsys):
    """No wording is asked for: what counts is that the name is kept."""
    def quoted(messages):
        said = [m["content"] for m in messages if m["role"] == "user"
                and "name" in (m.get("content") or "")]
        if said:
            return "Kept from earlier: " + said[0]
        earlier = [m["content"] for m in messages if m["role"] == "system"]
        return earlier[0] if earlier else "Nothing kept."

    expect_pass(nb07.check_my_summarizer, quoted, capsys)


def test_a_summarizer_asking_a_model_that_words_things_its_own_way_passes(capsys):
    """A real model writes its own sentences: the offline model's summaries, reworded as
    the Run All tests' other model rewords them (the facts kept, other words, another
    order), pass as they are."""
    offline = offline_client()

    def other_model(messages):
        return {"role": "assistant", "content": reword(chat(messages, client=offline).content)}

    out = expect_pass(nb07.check_my_summarizer, model_summarizer(other_model), capsys)
    assert "the user's name is Meimei" not in out.split("keeps the name:")[1].split("\n")[0]


def test_the_offline_model_as_summarizer_passes(capsys):
    offline = offline_client()
    expect_pass(nb07.check_my_summarizer,
                model_summarizer(lambda messages: chat(messages, client=offline)), capsys)


def test_a_summary_of_the_last_questions_forgets_the_name(capsys):
    def last_questions(messages):
        questions = [m["content"] for m in messages if m["role"] == "user"]
        return "Earlier, the user asked: " + " / ".join(questions[-3:])

    out = expect_fail(nb07.check_my_summarizer, last_questions, capsys,
                      "❌ given that summary (first, role system) and a later turn, its next "
                      "summary still has the name", "Carry its facts forward")
    assert re.search(r"❌ summary \d+ of \d+ no longer has the name Xiaoming", out), out


def test_a_summary_that_always_says_xiaoming_is_caught(capsys):
    expect_fail(nb07.check_my_summarizer, lambda messages: "The user's name is Xiaoming.",
                capsys, "❌ given turns where the user says 'Hi! My name is Meimei.', its "
                        "summary keeps the name", "in any words")


def test_a_summary_that_grows_into_a_transcript_is_too_long(capsys):
    def transcript(messages):
        return "Summary: " + " ".join(m.get("content") or "" for m in messages)

    passed, out = run(nb07.check_my_summarizer, transcript, capsys)
    assert not passed and f"(at most {nb07.SUMMARY_LIMIT})" in out, out
    assert "not a transcript" in out


def test_a_summary_that_only_appends_is_caught(capsys):
    """Each summary the previous one with the new questions added: it keeps the name and
    stays under the limit for fifty turns, and never condenses anything."""
    def appends(messages):
        earlier = messages[0]["content"] if messages[0]["role"] == "system" else "Summary:"
        return earlier + " " + " ".join(m["content"] for m in messages if m["role"] == "user")

    out = expect_fail(nb07.check_my_summarizer, appends, capsys,
                      "its summaries only grow: each of the",
                      "it grows with every trim and never condenses")
    assert re.search(r"✅ its longest summary was \d+ tokens", out), out


def test_a_summarizer_with_other_parameters_is_told_in_one_sentence(capsys):
    out = expect_fail(nb07.check_my_summarizer, lambda messages, name: "", capsys,
                      "your <lambda>(messages, name) cannot be called the way the check "
                      "calls it, my_summarizer(messages)")
    assert len(out.splitlines()) == 3, out


def test_a_summarizer_that_returns_none_or_raises_is_reported(capsys):
    passed, out = run(nb07.check_my_summarizer, lambda messages: None, capsys)
    assert not passed and "it returns text (given the first turns, it returned None)" in out

    def broken(messages):
        return messages[0]["text"]

    passed, out = run(nb07.check_my_summarizer, broken, capsys)
    assert not passed and "your code raised KeyError" in out and "of broken()" in out


def test_check_my_summarizer_of_a_placeholder_or_skeleton_says_not_done(capsys):
    passed, out = run(nb07.check_my_summarizer, ..., capsys)
    assert not passed and "not done yet" in out

    def my_summarizer(messages):
        raise NotImplementedError

    passed, out = run(nb07.check_my_summarizer, my_summarizer, capsys)
    assert not passed and "not done yet" in out and len(out.splitlines()) <= 4, out


def test_the_summarizer_check_uses_the_offline_model_whatever_the_shared_client(capsys):
    from lesson_lib.llm import using_client

    with using_client(object(), "not-a-model"):  # any chat() through it would fail
        expect_pass(nb07.check_my_summarizer, solved_summarizer, capsys)


# ----------------------------------------------------------------- the notebook's cells

def test_the_notebooks_start_from_a_skeleton_and_a_first_attempt(capsys):
    namespace: dict = {"count_messages": count_messages}
    exec(stub_source(NOTEBOOK_B, "my_budget_trim"), namespace)  # noqa: S102  (our own notebook's stub)
    exec(stub_source(NOTEBOOK, "my_summarizer"), namespace)  # noqa: S102
    assert not nb07.check_my_budget_trim(namespace["my_budget_trim"])
    assert "not done yet" in capsys.readouterr().out, "the trim is a skeleton"
    assert not nb07.check_my_summarizer(namespace["my_summarizer"])
    out = capsys.readouterr().out
    assert "its next summary still has the name" in out and "❌" in out, out


# These tests read which cases a check names: every line is printed (conftest.every_line).
pytestmark = pytest.mark.usefixtures("every_line")


# ----------------------------------------------------------------- exercise 1 in both editions
# The Chinese edition runs the Chinese script (你好！我叫小明。… 我叫什么名字？) and calls the
# summarizer directly on 美美's first turns: each answer below is written twice, once for
# each edition's data, and must get the same verdict and the same report, translated.

def _chinese() -> bool:
    from lesson_lib import i18n

    return i18n.is_chinese()


def test_both_editions_pass_a_summary_that_carries_the_name(capsys):
    out = expect_pass(nb07.check_my_summarizer,
                      twin(lambda: solved_summarizer_zh if _chinese() else solved_summarizer),
                      capsys)
    assert re.search(r"✅ all \d+ summaries keep the name Xiaoming", out), out


def test_both_editions_pass_the_offline_model_as_summarizer(capsys):
    offline = offline_client()
    expect_pass(nb07.check_my_summarizer,
                twin(lambda: model_summarizer(lambda messages: chat(messages, client=offline))),
                capsys)


def test_both_editions_fail_a_summary_of_the_last_questions(capsys):
    def make():
        head = "之前用户问过：" if _chinese() else "Earlier, the user asked: "
        return lambda messages: head + " / ".join(
            [m["content"] for m in messages if m["role"] == "user"][-3:])

    out = expect_fail(nb07.check_my_summarizer, twin(make), capsys, "Carry its facts forward")
    assert re.search(r"❌ summary \d+ of \d+ no longer has the name Xiaoming", out), out


def test_both_editions_fail_a_summary_that_always_names_xiaoming(capsys):
    expect_fail(nb07.check_my_summarizer,
                twin(lambda: (lambda messages: "用户叫小明。") if _chinese()
                     else (lambda messages: "The user's name is Xiaoming.")),
                capsys, "summary keeps the name", "in any words")


def test_both_editions_fail_a_transcript_and_a_summary_that_only_appends(capsys):
    def transcript():
        head = "摘要：" if _chinese() else "Summary: "
        return lambda messages: head + " ".join(m.get("content") or "" for m in messages)

    expect_fail(nb07.check_my_summarizer, twin(transcript), capsys, "not a transcript")

    def appends():
        first = "摘要：" if _chinese() else "Summary:"
        return lambda messages: ((messages[0]["content"] if messages[0]["role"] == "system"
                                  else first) + " "
                                 + " ".join(m["content"] for m in messages if m["role"] == "user"))

    expect_fail(nb07.check_my_summarizer, twin(appends), capsys,
                "its summaries only grow: each of the")


def test_the_chinese_check_judges_chinese_data(speak, capsys):
    """What a Chinese learner's summarizer is given: 美美 introduces herself in Chinese, and
    the conversation is the Chinese script."""
    speak("zh")
    seen: list[str] = []

    def watching(messages):
        seen.extend(m.get("content") or "" for m in messages if m["role"] == "user")
        return solved_summarizer_zh(messages)

    assert nb07.check_my_summarizer(watching) is True
    assert seen[0] == "你好！我叫美美。" and "帮我找一份成都旅游攻略。" in seen, seen[:3]
    assert "全部检查通过。" in capsys.readouterr().out
