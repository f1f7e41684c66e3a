"""The core track, notebook 11: the rules that judge a learner's `my_recall(question,
memory, budget)` (retrieval before the call: the best memories as one labelled system
message under a token budget) also guard the library's `lesson_lib.longterm.recall`.

TestRecall gets the tests every core exercise gets (tests/core_track_support.py); below it,
the tests only this exercise has.
"""

from __future__ import annotations

from core_track_support import CoreTrack, what_happened

from lesson_lib.exercises import nb11
from lesson_lib.longterm import recall
from lesson_lib.tokens import count_messages, count_text

# ----------------------------------------------------------------- a correct recall, and its parts

class Recall:
    """A correct recall, written without lesson_lib's context_message: search 5, add hits
    best first when the message they make still fits, list them with date and source.
    Each wrong version below overrides one step."""

    __name__ = "my_recall"
    k = 5

    def __call__(self, question, memory, budget):
        kept = []
        for hit in self.hits(question, memory):
            if self.fits(self.message(kept + [hit]), budget):
                kept.append(hit)
            elif self.stop_at_first_misfit:
                break
        return self.message(kept) if kept else self.nothing()

    stop_at_first_misfit = False

    def hits(self, question, memory):
        return memory.search(question, self.k)

    def line(self, hit):
        return f"* {hit.text} (from {hit.source}, {hit.created_at[:10]})"

    def message(self, hits):
        return {"role": "system",
                "content": "\n".join(["Things you remember about this user:",
                                      *map(self.line, hits)])}

    def fits(self, message, budget):
        return count_messages([message]) <= budget

    def nothing(self):
        return None


class Skeleton:
    """The notebook's starting point."""
    __name__ = "my_recall"

    def __call__(self, question, memory, budget):
        raise NotImplementedError


# ----------------------------------------------------------------- the bank of wrong versions

class ReturnsTheText(Recall):
    """Returns the block of text, not a message."""
    def __call__(self, question, memory, budget):
        found = super().__call__(question, memory, budget)
        return found and found["content"]


class AsTheUser(Recall):
    """Puts the memories in a user message, as if the user had said them."""
    def message(self, hits):
        return {**super().message(hits), "role": "user"}


class SavesTheQuestion(Recall):
    """Writes each question into the memory before searching."""
    def hits(self, question, memory):
        memory.write(question, source="user")
        return super().hits(question, memory)


class IgnoresTheQuestion(Recall):
    """Sends the newest memories, whatever was asked."""
    def hits(self, question, memory):
        return sorted(memory.all(), key=lambda m: m.created_at, reverse=True)


class TextOnly(Recall):
    """One line per memory, with neither its date nor its source."""
    def line(self, hit):
        return f"- {hit.text}"


class EmptyBlock(Recall):
    """Sends the header even when there is nothing under it."""
    def nothing(self):
        return self.message([])


class NoBudget(Recall):
    """Ignores the budget: every hit goes in."""
    def fits(self, message, budget):
        return True


class CountsOnlyTheContent(Recall):
    """Counts the content's tokens, not the message's (no per-message overhead)."""
    def fits(self, message, budget):
        return count_text(message["content"]) <= budget


class CountsCharacters(Recall):
    """Measures the budget in characters."""
    def fits(self, message, budget):
        return len(message["content"]) <= budget


class StopsAtTheFirstMisfit(Recall):
    """Stops at the first hit that does not fit, though a shorter one after it would."""
    stop_at_first_misfit = True


class OnlyTheBest(Recall):
    """Sends the best hit alone."""
    k = 1


class ThreeHits(Recall):
    """Searches for 3 hits, not 5."""
    k = 3


def raises_a_typo(question, memory, budget):
    lines = []
    for hit in memory.search(question, 5):
        lines.append(hit.txt)  # a typo: the attribute is called text
    return {"role": "system", "content": "\n".join(lines)}


class TestRecall(CoreTrack):
    rules = nb11.RECALL_RULES
    check = nb11.check_my_recall
    library = [recall]
    right = [Recall()]
    wrong = {
        ReturnsTheText(): "it returns one system message",
        AsTheUser(): "it returns one system message",
        SavesTheQuestion(): "it only reads the memory",
        IgnoresTheQuestion(): "it holds the memory that best answers",
        TextOnly(): "each memory in it carries its date",
        EmptyBlock(): "with nothing to add it returns None",
        NoBudget(): "it fits the budget",
        CountsOnlyTheContent(): "it fits the budget",
        CountsCharacters(): "it leaves a memory out only when it does not fit",
        StopsAtTheFirstMisfit(): "it leaves a memory out only when it does not fit",
        OnlyTheBest(): "it leaves a memory out only when it does not fit",
        ThreeHits(): "it leaves a memory out only when it does not fit",
    }
    skeleton = Skeleton()
    hinted = TextOnly()
    hint_steps = [("what happened: the line", "hit.created_at[:10]"),
                  ("hit.created_at[:10]", None)]
    typo = staticmethod(raises_a_typo)
    typo_says = ["AttributeError", "of raises_a_typo()"]
    misgiven = [..., None, Recall]
    misgiven_says = "not done yet"


# ----------------------------------------------------------------- what only this exercise has

def test_a_long_memory_is_skipped_and_the_next_tried_by_the_library():
    with nb11._memories() as memory:
        message = recall(nb11.QUESTIONS[1], memory, 150)
        best = memory.search(nb11.QUESTIONS[1], 5)[0]
    assert best.text == nb11.GUIDE  # the long guide ranks first …
    assert message is not None and nb11.GUIDE not in message["content"]  # … does not fit …
    assert count_messages([message]) <= 150 and message["content"].count("\n- ") >= 1  # … others do


def test_what_happened_names_the_budget_and_the_tokens():
    seen = what_happened(NoBudget(), nb11.RECALL_RULES, "it fits the budget")
    assert "tokens" in seen and "returned a message of" in seen


def test_the_reading_rule_counts_what_was_written():
    seen = what_happened(SavesTheQuestion(), nb11.RECALL_RULES, "it only reads")
    assert "held 11 memories (8 before)" in seen
