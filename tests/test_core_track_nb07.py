"""The core track, notebook 07b (part two of 07): the rules that judge a learner's
token-budget trim also guard the library's `budget_trim`.

TestBudgetTrim gets the tests every core exercise gets (tests/core_track_support.py): the
library's budget_trim keeps every rule of TRIM_RULES (the trim checker's bank, read one rule
at a time, and a property over random histories and budgets); a correct trim written here,
independently of TokenBudgetMemory, keeps every rule; each wrong trim in the bank (a mistake
learners really make) is caught, FIRST by the rule whose hint fits that mistake; the
untouched skeleton gets "not done yet", not a wall of failures. Below it, the tests only
this exercise has: the report says what happened in words that fit each wrong trim.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from check_support import stub_source
from core_track_support import CoreTrack, rule_named, what_happened

from lesson_lib.budget import truncate_text
from lesson_lib.exercises import nb07
from lesson_lib.exercises.contract import failed_rules
from lesson_lib.repair import repair_messages
from lesson_lib.tokens import count_messages, count_text
from lesson_lib.trimcheck import TRIM_CASES, budget_trim, check_trim, seed_trim

NOTEBOOK = (Path(__file__).resolve().parent.parent / "notebooks"
            / "07b_repairing_and_trimming.ipynb")  # where my_budget_trim is built


def _rule(start: str) -> str:
    """The one rule whose name starts with `start`."""
    return rule_named(nb07.TRIM_RULES, start)


# ----------------------------------------------------------------- a correct trim, and its parts

class Trim:
    """A correct token trim, written without TokenBudgetMemory: repair, split the history
    into the units before the current turn and the turn itself, drop units oldest first
    (never a system message), cut the turn's largest tool results, raise if still over.
    Each wrong trim below overrides one step."""

    def __call__(self, messages, budget):
        history = self.repair(messages)
        units, turn = self.split(history)
        units = self.drop(units, turn, budget)
        turn = self.cut(units, turn, budget)
        least = self.flat(u for u in units if not self.droppable(u)) + turn
        if self.cost(least) > budget:  # even the system messages and the turn do not fit
            self.give_up(least, budget)
        return self.flat(units) + turn

    __name__ = "my_budget_trim"

    def repair(self, messages):
        return repair_messages(messages).messages

    def cost(self, messages):
        return count_messages(messages)

    @staticmethod
    def flat(units):
        return [m for unit in units for m in unit]

    def split(self, history):
        """(units before the current turn, the current turn): a unit is one message, or an
        assistant message with tool_calls and the tool messages after it."""
        last = max((i for i, m in enumerate(history) if m["role"] == "user"), default=0)
        units, i = [], 0
        while i < last:
            j = i + 1
            while history[i].get("tool_calls") and j < last and history[j]["role"] == "tool":
                j += 1
            units.append(history[i:j])
            i = j
        return units, history[last:]

    def droppable(self, unit):
        return unit[0]["role"] != "system"

    def over(self, units, turn, budget):
        return self.cost(self.flat(units) + turn) > budget

    def drop(self, units, turn, budget):
        units = list(units)
        k = 0
        while self.over(units, turn, budget) and k < len(units):
            if self.droppable(units[k]):
                del units[k]
            else:
                k += 1
        return units

    def cut(self, units, turn, budget):
        turn = list(turn)
        results = sorted((n for n, m in enumerate(turn) if m["role"] == "tool"),
                         key=lambda n: -count_text(turn[n]["content"]))
        for n in results:
            over = self.cost(self.flat(units) + turn) - budget
            if over <= 0:
                break
            text = turn[n]["content"]
            turn[n] = {**turn[n], "content": truncate_text(text, max(count_text(text) - over, 0))}
        return turn

    def give_up(self, kept, budget):
        raise ValueError(f"over budget by {self.cost(kept) - budget} tokens")


class Skeleton:
    """The notebook's starting point."""
    __name__ = "my_budget_trim"

    def __call__(self, messages, budget):
        raise NotImplementedError


# ----------------------------------------------------------------- the bank of wrong trims

class CountsMessages(Trim):
    """Keeps notebook 04's budget: len(messages) instead of tokens."""
    def cost(self, messages):
        return len(messages)


class CountsOnlyTheContent(Trim):
    """Counts the tokens of the content fields alone: no per-message overhead, no
    tool-call arguments."""
    def cost(self, messages):
        return sum(count_text(m.get("content") or "") for m in messages)


class DropsOneMessageAtATime(Trim):
    """Drops the oldest message, leaving its tool replies behind."""
    def split(self, history):
        units, turn = super().split(history)
        return [[m] for m in self.flat(units)], turn


class DropsTheSystemPrompt(Trim):
    """Treats a system message like any other."""
    def droppable(self, unit):
        return True


class DropsTheCurrentQuestion(Trim):
    """The source article's rule with a token count: no current turn, every unit may go."""
    def split(self, history):
        units, turn = super().split(history + [{"role": "user", "content": "-"}])
        return units, []


class KeepsOneUnitTooMany(Trim):
    """Counts the list as if the oldest unit were already gone: stops one unit too late,
    over the budget (the first unit it should drop stays)."""
    def over(self, units, turn, budget):
        return self.cost(self.flat(units[1:]) + turn) > budget


class DropsEverythingWhenOver(Trim):
    def drop(self, units, turn, budget):
        if not self.over(units, turn, budget):
            return units
        return [u for u in units if not self.droppable(u)]


class ReturnsItUnchanged(Trim):
    def __call__(self, messages, budget):
        return list(messages)


class MutatesTheCallersList(Trim):
    """Trims the list it was given in place, and returns it."""
    def __call__(self, messages, budget):
        kept = super().__call__(messages, budget)
        messages[:] = kept
        return messages


class RaisesInsteadOfCutting(Trim):
    def cut(self, units, turn, budget):
        return turn


class GivesUpSilently(Trim):
    """Sends the list anyway when nothing can fit."""
    def give_up(self, kept, budget):
        pass


class RaisesWithoutSayingHowMuch(Trim):
    def give_up(self, kept, budget):
        raise ValueError("the conversation is too long")


class RaisesWhenTheSystemMessagesFill(Trim):
    """Gives up as soon as the system messages and the current turn are over the budget,
    instead of cutting the turn's tool result first."""
    def cut(self, units, turn, budget):
        if self.over(units, turn, budget):
            self.give_up(self.flat(units) + turn, budget)
        return turn


class NeverRepairs(Trim):
    def repair(self, messages):
        return list(messages)


class OffByOne(Trim):
    """>= instead of >: drops a unit from a list exactly at the budget."""
    def over(self, units, turn, budget):
        return self.cost(self.flat(units) + turn) >= budget


class DropsTheNewestFirst(Trim):
    def drop(self, units, turn, budget):
        units = list(units)
        k = len(units) - 1
        while self.over(units, turn, budget) and k >= 0:
            if self.droppable(units[k]):
                del units[k]
            k -= 1
        return units


class ReturnsNothing(Trim):
    """Trims, but forgets the return."""
    def __call__(self, messages, budget):
        super().__call__(messages, budget)


class CutsOnlyTheLargest(Trim):
    """Cuts the largest tool result of the current turn, and gives up if that is not
    enough: right on every case of the bank, wrong where a turn has several results."""
    def cut(self, units, turn, budget):
        turn = list(turn)
        results = [n for n, m in enumerate(turn) if m["role"] == "tool"]
        over = self.cost(self.flat(units) + turn) - budget
        if results and over > 0:
            n = max(results, key=lambda n: count_text(turn[n]["content"]))
            text = turn[n]["content"]
            turn[n] = {**turn[n], "content": truncate_text(text, max(count_text(text) - over, 0))}
        return turn


class DropsWholeTurns(Trim):
    """Drops the oldest whole turn (a question with everything after it) where one message
    would be enough."""
    def drop(self, units, turn, budget):
        units = list(units)
        while self.over(units, turn, budget):
            start = next((k for k, u in enumerate(units) if u[0]["role"] == "user"), None)
            if start is None:
                return super().drop(units, turn, budget)
            end = next((k for k in range(start + 1, len(units))
                        if units[k][0]["role"] == "user"), len(units))
            units = units[:start] + [u for u in units[start:end] if not self.droppable(u)] \
                + units[end:]
        return units


class CutsWithoutSaying(Trim):
    """Cuts the largest tool result by its characters, with no marker."""
    def cut(self, units, turn, budget):
        turn = list(turn)
        for n in sorted((n for n, m in enumerate(turn) if m["role"] == "tool"),
                        key=lambda n: -len(turn[n]["content"])):
            while self.cost(self.flat(units) + turn) > budget and turn[n]["content"]:
                turn[n] = {**turn[n], "content": turn[n]["content"][:len(turn[n]["content"]) // 2]}
        return turn


class NeverStopsWhenNothingCanGo(Trim):
    """Its `for` finds nothing more to drop (only system messages left before the turn), and
    its `while` goes round for ever."""
    def drop(self, units, turn, budget):
        units = list(units)
        while self.over(units, turn, budget):
            for k, unit in enumerate(units):
                if self.droppable(unit):
                    del units[k]
                    break
        return units


# wrong trim -> (the rule that must catch it first, words its report must show)
WRONG = {
    CountsMessages: ("it fits the budget", "over the budget of"),
    CountsOnlyTheContent: ("it fits the budget", "over the budget of"),
    DropsOneMessageAtATime: ("the API accepts what it returns",
                             "must be a response to a preceeding message with 'tool_calls'"),
    DropsTheSystemPrompt: ("it keeps every system message", "it dropped 1 of the"),
    DropsTheCurrentQuestion: ("it keeps the current turn", "it lost the latest user question"),
    KeepsOneUnitTooMany: ("it fits the budget", "over the budget of"),
    DropsEverythingWhenOver: ("it forgets no more than it must",
                              "of the earlier messages where"),
    DropsWholeTurns: ("it forgets no more than it must",
                      "it dropped more than the budget needs"),
    CutsWithoutSaying: ("when the current turn alone is over the budget",
                        "without saying so"),
    NeverStopsWhenNothingCanGo: ("it returns the trimmed list", "did not finish in"),
    ReturnsItUnchanged: ("it fits the budget", "over the budget of"),
    MutatesTheCallersList: ("it leaves the list it was given unchanged",
                            "8 messages before the call and 4 after"),
    RaisesInsteadOfCutting: ("when the current turn alone is over the budget",
                             "it raised ValueError: over budget by"),
    RaisesWhenTheSystemMessagesFill: ("when the current turn alone is over the budget",
                                      "fits once its tool result is cut"),
    GivesUpSilently: ("when nothing can fit", "the API would refuse it (context_length_exceeded)"),
    RaisesWithoutSayingHowMuch: ("when nothing can fit", "which does not say by how many tokens"),
    NeverRepairs: ("a broken history comes back valid", "the API would refuse it"),
    OffByOne: ("it forgets no more than it must", "exactly at the budget"),
    DropsTheNewestFirst: ("it only removes messages, oldest first",
                          "it dropped messages newer than some it kept"),
    ReturnsNothing: ("it returns the trimmed list", "it returned None"),
    CutsOnlyTheLargest: ("for any history and budget", "but a trim fits"),
}


def my_budget_trim(messages, budget):
    """A trim whose code raises."""
    kept = []
    for m in messages:
        if m["content"].strip():  # content is None in an assistant(tool_calls)
            kept.append(m)
    return kept


class TestBudgetTrim(CoreTrack):
    rules = nb07.TRIM_RULES
    check = nb07.check_my_budget_trim
    library = [budget_trim]
    right = [Trim()]
    wrong = {trim(): rule for trim, (rule, _words) in WRONG.items()}
    skeleton = Skeleton()
    hinted = DropsOneMessageAtATime()
    hint_steps = [
        ("what happened: no system message (109 tokens, budget 61): the API would refuse "
         "it: message 0 (tool, call_cd1)", "a unit is one message"),
        ("a unit is one message, or an assistant message with tool_calls", None),
    ]
    typo = my_budget_trim
    typo_says = ("it raised AttributeError", "of my_budget_trim())")
    misgiven = [[]]
    misgiven_says = "pass the function itself"
    both_languages = True


# ----------------------------------------------------------------- what only notebook 07b has

def test_the_library_budget_trim_passes_the_same_bank_in_check_trim(capsys):
    assert check_trim(budget_trim, "tokens") is True
    assert f"score {len(TRIM_CASES)}/{len(TRIM_CASES)}" in capsys.readouterr().out


def test_the_library_keeps_the_property_on_many_more_histories():
    """The property, tried ten times as often as a check tries it."""
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=1000, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(nb07._histories())
    def keeps(example):
        assert nb07._any_history(budget_trim, example) is None

    keeps()


@pytest.mark.parametrize("wrong", list(WRONG), ids=lambda c: c.__name__)
def test_each_wrong_trim_is_told_what_happened_in_words_that_fit(wrong, capsys):
    assert nb07.check_my_budget_trim(wrong()) is False
    out = capsys.readouterr().out
    rule, words = WRONG[wrong]
    shown = out.split(f"❌ {_rule(rule)}", 1)
    assert len(shown) == 2, f"{wrong.__name__}: the rule is not shown first:\n{out}"
    assert words in shown[1].split("❌")[0], f"{wrong.__name__}:\n{out}"


def test_the_bank_teaches_at_least_eight_different_rules():
    assert len({rule for rule, _ in WRONG.values()}) >= 8, "they should teach different rules"


def test_the_notebook_skeleton_is_not_written_yet(capsys):
    namespace: dict = {}
    exec(stub_source(NOTEBOOK, "my_budget_trim"), namespace)  # noqa: S102  (our own notebook)
    assert nb07.check_my_budget_trim(namespace["my_budget_trim"]) is False
    assert "not done yet" in capsys.readouterr().out


def test_the_rules_that_build_on_a_list_wait_for_one(capsys):
    nb07.check_my_budget_trim(ReturnsNothing())
    out = capsys.readouterr().out
    assert "❌ it returns the trimmed list" in out and "it returned None" in out
    assert "more rules will be judged once the ones above hold" in out


def test_the_property_shows_the_smallest_history_that_breaks_it():
    what = what_happened(CutsOnlyTheLargest(), nb07.TRIM_RULES, "for any history and budget")
    assert what.startswith("budget ") and "history [" in what, what
    assert "tool " in what and "it raised ValueError: over budget by" in what, what


def test_the_seed_rule_is_caught_by_the_current_turn():
    broken = failed_rules(partial(seed_trim, unit="tokens"), nb07.TRIM_RULES)
    assert broken[0] == _rule("it keeps the current turn"), broken


def test_the_property_histories_are_valid_and_their_budgets_vary():
    from hypothesis import HealthCheck, given, settings

    from lesson_lib.protocol import find_problems

    seen = {"raise": 0, "cut": 0, "fits": 0}

    @settings(max_examples=300, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(nb07._histories())
    def valid(example):
        messages, budget = example
        assert find_problems(messages) == [], json.dumps(messages)
        emptied, _, uncut = nb07._least(messages)
        seen["raise" if emptied > budget else "cut" if uncut > budget else "fits"] += 1

    valid()
    assert all(n >= 20 for n in seen.values()), seen
