"""Self-checks for notebook 07, token budgets and the cost of remembering.

1. `check_my_budget_trim(my_budget_trim)`: the learner's `my_budget_trim(messages, budget)`
   against the trim checker's bank (lesson_lib.trimcheck), with a token budget: valid for
   the API, every system message and the current turn kept, within the budget (or a
   ValueError when nothing can fit), nothing invented, nothing forgotten needlessly.
   `compare_my_trim(my_budget_trim, runs)` then runs it through the scripted conversation
   of lesson_lib.costs and returns the cost plot with it next to the library's memories.
2. `check_my_summarizer(my_summarizer)`: the learner's summarizer (the text of ONE system
   message standing for the messages it is given, the previous summary first) is plugged
   into TokenBudgetMemory and the scripted conversation is run: it must get through, the
   model must still know Xiaoming's name at the end, and the summary must stay short.

Every check talks to the offline model (whatever backend the notebook uses), so what it
says does not depend on a provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lesson_lib.budget import TokenBudgetMemory
from lesson_lib.costs import (
    SCRIPT,
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
from lesson_lib.exercises import Report, not_done, run_check
from lesson_lib.tokens import count_text
from lesson_lib.trimcheck import check_trim

NAME = "Xiaoming"
SUMMARY_LIMIT = TOKEN_BUDGET // 4  # tokens: a summary keeps what matters, it is not a transcript
SAMPLE = [{"role": "system", "content": "You are a helpful assistant."},
          {"role": "user", "content": "Hi! My name is Xiaoming."},
          {"role": "assistant", "content": "Nice to meet you, Xiaoming! How can I help?"}]


def _offline_meter() -> Meter:
    from lesson_lib.offline import offline_client  # noqa: PLC0415

    return Meter(offline_client())


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ----------------------------------------------------------------- exercise 1

def check_my_budget_trim(my_budget_trim: Any) -> bool:  # my_budget_trim(messages, budget)
    """Exercise 1: the trim checker's whole bank, the budget counted in tokens
    (count_messages). Prints a line per case and the score."""
    return check_trim(my_budget_trim, "tokens")


def compare_my_trim(my_budget_trim: Any,                 # your trim(messages, budget) -> list
                    runs: Sequence[ConversationRun] = (),  # the library's runs, to compare
                    token_budget: int = TOKEN_BUDGET,
                    window: int = SMALL_WINDOW,
                    script: Sequence[str] = SCRIPT) -> CostPlot | None:
    """Exercise 1, in the conversation: run the script with your trim as the memory's trim
    (FunctionTrimMemory), print whether it got through within the budget, and return the
    cost plot of your run next to `runs`."""
    title = f"Exercise 1 · my_budget_trim in the {len(script)}-turn conversation"
    if not callable(my_budget_trim):
        not_done(title, "define my_budget_trim(messages, budget) above and pass the function "
                         "itself (no parentheses)")
        return None
    tools = lesson_tools().schemas()
    mine = run_conversation(FunctionTrimMemory(my_budget_trim, token_budget, tools=tools),
                            script, name="my_budget_trim", meter=_offline_meter())
    report = Report(title)
    report.expect(mine.error is None, f"it ran {len(mine.turns)} of {len(script)} turns"
                  + (f"; stopped at {mine.error}" if mine.error else ""),
                  "a request the API refuses, or an exception in your trim, stops the "
                  "conversation: check_my_budget_trim shows which history breaks it")
    largest = max((t.largest.tokens for t in mine.turns), default=0)
    report.expect(largest <= token_budget,
                  f"its largest request was {largest:,} tokens (budget {token_budget:,})",
                  "count with count_messages() and keep dropping whole units until it fits")
    print(report)
    if mine.error is None:
        print(f"Its answer to {mine.turns[-1].question!r}: {mine.turns[-1].reply}")
    return plot_costs([*runs, mine], window, token_budget)


# ----------------------------------------------------------------- exercise 2

def check_my_summarizer(my_summarizer: Any,            # my_summarizer(messages) -> str
                        script: Sequence[str] = SCRIPT) -> bool:  # the turns to run
    """Exercise 2: TokenBudgetMemory(TOKEN_BUDGET, drop="turn", summarizer=my_summarizer)
    through the 50-turn conversation, on the offline model."""
    title = "Exercise 2 · my_summarizer"
    if not callable(my_summarizer):
        return not_done(title, "define my_summarizer(messages) above and pass the function "
                                "itself (no parentheses)")

    def body(report: Report) -> None:
        sample = my_summarizer([dict(m) for m in SAMPLE])
        if not report.expect(isinstance(sample, str) and sample.strip() != "",
                             f"it returns text (for a short history it returned "
                             f"{_short(repr(sample))})",
                             "return the summary as one string: it becomes the content of "
                             "one system message"):
            return
        written: list[str] = []

        def summarize(messages: list[dict]) -> str:
            text = my_summarizer(messages)
            written.append(text if isinstance(text, str) else "")
            return text

        run = run_conversation(TokenBudgetMemory(TOKEN_BUDGET, tools=lesson_tools().schemas(),
                                                 drop="turn", summarizer=summarize),
                               script, name="my_summarizer", meter=_offline_meter())
        _judge_run(report, run, written, len(script))

    return run_check(title, body)


def _judge_run(report: Report, run: ConversationRun, written: list[str], turns: int) -> None:
    """What exercise 2 asks of the conversation run with the learner's summarizer."""
    if not report.expect(run.error is None, f"the conversation ran {len(run.turns)} of {turns} "
                         f"turns" + (f"; stopped at {run.error}" if run.error else ""),
                         "your summarizer raised, or returned something that is not text"):
        return
    report.expect(len(written) >= 2, f"it was called {len(written)} times (once per trim "
                  "that dropped turns)", "it is called only when turns are dropped")
    reply = run.turns[-1].reply
    report.expect(NAME in reply, f"at the end, asked {run.turns[-1].question!r}, the model "
                  f"said: {reply!r}",
                  "the name was said in turn 1, so it reaches your summarizer in the first "
                  "batch of dropped turns; after that only your previous summary (the first "
                  "message it is given, role system) still has it. Carry it forward, and "
                  "state it in the third person: \"the user's name is Xiaoming\" (a "
                  "system message is a note about the user, not the user talking)")
    longest = max((count_text(t) for t in written), default=0)
    report.expect(longest <= SUMMARY_LIMIT, f"its longest summary was {longest:,} tokens "
                  f"(at most {SUMMARY_LIMIT:,})",
                  "keep what matters (the name, open questions), not a transcript: a summary "
                  "that grows crowds the conversation out of the budget")
