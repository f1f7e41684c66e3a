"""The core track, notebook 11, Build it: the rules that judge a learner's
`update_rule(stored, new, similar)` (updates by meaning: what the memory holds after a new
fact; one fact per thing, the newest text and date, whatever the subject's spelling or
language, different things kept apart) also guard the library's
`lesson_lib.longterm.update_rule`.

TestUpdateRule gets the tests every core exercise gets (tests/core_track_support.py); below
it, the tests only this exercise has.
"""

from __future__ import annotations

import re
import unicodedata

from core_track_support import CoreTrack, what_happened

from lesson_lib.exercises import nb11
from lesson_lib.longterm import update_rule

# ----------------------------------------------------------------- a correct rule, and its parts

class Rule:
    """A correct update_rule, written without lesson_lib: normalise subjects, mask values,
    two thresholds by language, keep the newest. Each wrong version overrides one step."""

    __name__ = "update_rule"
    within, across = 0.90, 0.65
    values = re.compile(r"\d+(?:[.,]\d+)*|[一二两三四五六七八九十百千万]+(?=[元岁个天])")

    def __call__(self, stored, new, similar):
        same = [f for f in stored if self.same(f, new, similar)]
        rest = [f for f in stored if not any(f is s for s in same)]
        return [*rest, self.merge(same, new)] if same else [*stored, new]

    def merge(self, same, new):
        return max([new, *same], key=lambda f: f["at"])

    def subject(self, s):
        words = re.sub(r"[^\w\s]", " ", unicodedata.normalize("NFKC", s).casefold()).split()
        return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss")
                        else w for w in words)

    def text(self, t):
        return " ".join(self.values.sub("#", unicodedata.normalize("NFKC", t)).lower().split())

    def same(self, old, new, similar):
        if old["subject"] and new["subject"]:
            a, b = self.subject(old["subject"]), self.subject(new["subject"])
        else:
            a, b = self.text(old["text"]), self.text(new["text"])
        return a == b or similar(a, b) >= self.threshold(a, b)

    def threshold(self, a, b):
        chinese = [bool(re.search(r"[\u4e00-\u9fff]", x)) for x in (a, b)]
        return self.across if chinese[0] != chinese[1] else self.within


def written_apart(stored, new, similar):
    """A second correct version, written apart: one pass, the texts' digits and Chinese
    numerals blanked with a different pattern, the winner chosen by comparing dates."""
    def key(fact):
        if fact["subject"] and new["subject"]:
            s = unicodedata.normalize("NFKC", fact["subject"]).lower()
            s = re.sub(r"\W+", " ", s).strip()
            return " ".join(re.sub(r"(?<=\w{3})s$", "", w) for w in s.split()), True
        t = unicodedata.normalize("NFKC", fact["text"]).lower()
        return " ".join(re.sub(r"[0-9][0-9,]*|[零一二两三四五六七八九十百千万]+(?=元)", "#",
                               t).split()), False

    def cjk(s):
        return any("\u4e00" <= c <= "\u9fff" for c in s)

    out, winner = [], new
    for fact in stored:
        a, b = key(fact)[0], key(new)[0]
        limit = 0.65 if cjk(a) != cjk(b) else 0.9
        if a == b or similar(a, b) >= limit:
            if fact["at"] > winner["at"]:
                winner = fact
        else:
            out.append(fact)
    return out + [winner]


written_apart.__name__ = "update_rule"


class Skeleton:
    __name__ = "update_rule"

    def __call__(self, stored, new, similar):
        raise NotImplementedError


# ----------------------------------------------------------------- the bank of wrong versions

class ExactSubjects(Rule):
    """Compares the subjects as they are."""
    def subject(self, s):
        return s


class LowerCaseOnly(Rule):
    """Lower-cases the subjects, nothing more."""
    def subject(self, s):
        return s.lower()


class SubjectsOnly(Rule):
    """Facts without a subject are never the same thing."""
    def same(self, old, new, similar):
        return bool(old["subject"] and new["subject"]) and super().same(old, new, similar)


class NoMasking(Rule):
    """Compares the texts with their values: '3000' and '5000' make them differ."""
    def text(self, t):
        return " ".join(t.lower().split())


class IgnoresLanguage(Rule):
    """One threshold, 0.90, whatever the languages."""
    across = 0.90


class ThresholdTooLow(Rule):
    """One low threshold, 0.6: the trip and the rent budget merge."""
    within = across = 0.6


class KeepsTheOlderDate(Rule):
    """Rewrites the old fact with the new text, but keeps the old date."""
    def merge(self, same, new):
        return {**same[0], "text": new["text"]}


class AlwaysTheNewWrite(Rule):
    """The fact written last replaces the old one, even when it was said earlier."""
    def merge(self, same, new):
        return new


class DropsTheRest(Rule):
    """Returns only the new fact."""
    def __call__(self, stored, new, similar):
        return [new]


def raises_a_typo(stored, new, similar):
    kept = []
    for fact in stored:
        if similar(fact["txt"], new["text"]) < 0.9:  # a typo: the key is called text
            kept.append(fact)
    return kept + [new]


class TestUpdateRule(CoreTrack):
    rules = nb11.UPDATE_RULES
    check = nb11.check_update_rule
    library = [update_rule]
    right = [Rule(), written_apart]
    wrong = {
        DropsTheRest(): "it returns what the memory holds",
        ExactSubjects(): "a subject is the same whatever its spelling",
        LowerCaseOnly(): "a subject is the same whatever its spelling",
        SubjectsOnly(): "a fact with no subject is compared by its text",
        NoMasking(): "the same thing in other words",
        IgnoresLanguage(): "the same thing in other words",
        ThresholdTooLow(): "different things both stay",
        KeepsTheOlderDate(): "the fact kept is the newest",
        AlwaysTheNewWrite(): "a fact said before the stored one",
    }
    skeleton = Skeleton()
    hinted = KeepsTheOlderDate()
    hint_steps = [("what happened: after", "merged = max("), ("AND its date", "merged = max("),
                  ("merged = max(", None)]
    typo = staticmethod(raises_a_typo)
    typo_says = ["KeyError", "of raises_a_typo()"]
    misgiven = [..., None, Rule]
    misgiven_says = "not done yet"


# ----------------------------------------------------------------- what only this exercise has

def hint_of(impl, start):
    what = what_happened(impl, nb11.UPDATE_RULES, start)
    assert what is not None
    return " ".join(what.hints)


def test_each_spelling_mistake_gets_the_hint_that_names_it():
    assert "as they are" in hint_of(ExactSubjects(), "a subject is the same")
    assert "lower-case is not enough" in hint_of(LowerCaseOnly(), "a subject is the same")


def test_each_meaning_mistake_gets_the_hint_that_names_it():
    assert "masked" in hint_of(NoMasking(), "the same thing in other words")
    assert "one threshold for both" in hint_of(IgnoresLanguage(), "the same thing in other")


def test_what_happened_names_the_lost_fact():
    seen = what_happened(ThresholdTooLow(), nb11.UPDATE_RULES, "different things both stay")
    assert "rent budget" in seen and "merged" in seen
