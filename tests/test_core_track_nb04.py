"""The core track of notebook 04: the seed's trim (drop the oldest non-system message AND the
tool messages right after it), judged by TOOL_TRIM_RULES, the rules that also guard the
library's ShortTermMemory and SeedMemory.

TestSeedTrim gets the tests every core exercise gets (tests/core_track_support.py): the
library's ShortTermMemory and SeedMemory, and correct memories written here, keep every
rule; each wrong trim in the bank (a mistake learners really make) is caught, first, by the
rule whose hint fits it; the untouched skeleton gets "not written yet", not a wall of
failures. Below it, the tests only this exercise has: NaiveMemory breaks the rules, and
below the room the property rules give (the system messages and the largest group), even
the seed's rule orphans a parallel result that arrives one at a time (the library's guard 1).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from core_track_support import CoreTrack, rule_named, what_happened

from lesson_lib.exercises import nb04
from lesson_lib.exercises.contract import failed_rules
from lesson_lib.memory import NaiveMemory, SeedMemory, ShortTermMemory
from lesson_lib.protocol import is_valid

RULES = [rule.name for rule in nb04.TOOL_TRIM_RULES]


class IndependentMemory:
    """A correct version, written without looking at lesson_lib's: notebook 02's memory,
    whose trim now removes a whole group (the message and the tool replies after it)."""

    def __init__(self, max_messages=40):
        self.max_messages = max_messages
        self.history = []

    def add(self, message):
        self.history.append(copy.deepcopy(message))
        self._trim()

    def _trim(self):
        while len(self.history) > self.max_messages:
            others = [i for i, m in enumerate(self.history) if m["role"] != "system"]
            if not others:
                return
            start = end = others[0]
            end += 1
            while end < len(self.history) and self.history[end]["role"] == "tool":
                end += 1
            self.history[start:end] = []

    def to_api_format(self):
        return copy.deepcopy(self.history)

    def clear_non_system(self):
        self.history = [m for m in self.history if m["role"] == "system"]

    def message_count(self):
        return len(self.history)


class OnePerCall(IndependentMemory):
    """Also correct: an assistant(tool_calls) takes one reply per call with it."""

    def _trim(self):
        while len(self.history) > self.max_messages:
            i = next((i for i, m in enumerate(self.history) if m["role"] != "system"), None)
            if i is None:
                return
            dropped = self.history.pop(i)
            for _ in dropped.get("tool_calls") or []:
                if i < len(self.history) and self.history[i]["role"] == "tool":
                    self.history.pop(i)


class Skeleton(IndependentMemory):
    """The notebook's starting point: the class is whole, its _trim is to write."""

    def _trim(self):
        raise NotImplementedError


def _oldest(history):
    return next((i for i, m in enumerate(history) if m["role"] != "system"), None)


# ----------------------------------------------------------------- the bank of wrong trims

class DropsOnlyTheOldest(IndependentMemory):
    """Notebook 02's trim, unchanged: the tool replies stay behind."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            del self.history[i]


class SwallowsTheRepliesBefore(IndependentMemory):
    """Looks for the tool replies before the dropped message instead of after it."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            start = i
            while start > 0 and self.history[start - 1]["role"] == "tool":
                start -= 1
            del self.history[start:i + 1]


class ForgetsTheListShifted(IndependentMemory):
    """pop(i) moves the first reply to index i, but it looks from i + 1 on."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            self.history.pop(i)
            while i + 1 < len(self.history) and self.history[i + 1]["role"] == "tool":
                self.history.pop(i + 1)


class SwallowsWithIf(IndependentMemory):
    """`if` where `while` belongs: one reply is swallowed, a parallel group's others stay."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            end = i + 1
            if end < len(self.history) and self.history[end]["role"] == "tool":
                end += 1
            del self.history[i:end]


class SwallowsTheFirstCallsReply(IndependentMemory):
    """Removes the reply to tool_calls[0] only: the other calls' replies stay behind."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            dropped = self.history.pop(i)
            if dropped.get("tool_calls"):
                first = dropped["tool_calls"][0]["id"]
                self.history = [m for m in self.history if m.get("tool_call_id") != first]


class SwallowsEveryToolMessage(IndependentMemory):
    """When the dropped message asked for tools, removes every tool message in the list:
    the replies of the rounds it keeps go too."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            dropped = self.history.pop(i)
            if dropped.get("tool_calls"):
                self.history = [m for m in self.history if m["role"] != "tool"]


class SwallowsOneMessageTooMany(IndependentMemory):
    """Takes `end` as the last reply and deletes [i:end + 1]: the next message goes too."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            end = i + 1
            while end < len(self.history) and self.history[end]["role"] == "tool":
                end += 1
            del self.history[i:end + 1]


class SwallowsSystemMessages(IndependentMemory):
    """Swallows whatever is not a user or assistant message: a system message too."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            end = i + 1
            while end < len(self.history) and self.history[end]["role"] not in ("user",
                                                                                "assistant"):
                end += 1
            del self.history[i:end]


class SwallowsTheSystemNoteAfterARound(IndependentMemory):
    """After a dropped assistant(tool_calls), swallows until the conversation goes on (a
    user or assistant message): a system message right after the replies goes too."""

    def _trim(self):
        while len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            end = i + 1
            if self.history[i].get("tool_calls"):
                while end < len(self.history) and self.history[end]["role"] not in (
                        "user", "assistant"):
                    end += 1
            del self.history[i:end]


class KeepsOnlyTheLeadingSystem(IndependentMemory):
    """Assumes the system prompt is always at index 0, so it drops index 1 and its group."""

    def _trim(self):
        while len(self.history) > self.max_messages and len(self.history) > 1:
            i = 1 if self.history[0]["role"] == "system" else 0
            end = i + 1
            while end < len(self.history) and self.history[end]["role"] == "tool":
                end += 1
            del self.history[i:end]


class TrimsBeforeAppending(IndependentMemory):
    """Trims first, then appends: the memory ends one message over max_messages."""

    def add(self, message):
        self._trim()
        self.history.append(copy.deepcopy(message))


class WaitsForTheRoundThenTrimsWithIf(IndependentMemory):
    """Waits for a round's last reply before trimming (as the library's guard 1 does), but
    trims with `if`: after a round, several groups may have to go, and only one does."""

    def add(self, message):
        self.history.append(copy.deepcopy(message))
        if message["role"] == "assistant" and message.get("tool_calls"):
            self.waiting = {call["id"] for call in message["tool_calls"]}
        elif message["role"] == "tool":
            self.waiting.discard(message["tool_call_id"])
        if not getattr(self, "waiting", None):
            self._trim()

    def _trim(self):
        if len(self.history) > self.max_messages and (i := _oldest(self.history)) is not None:
            end = i + 1
            while end < len(self.history) and self.history[end]["role"] == "tool":
                end += 1
            del self.history[i:end]


class NeverStopsWhenOnlySystemsAreLeft(IndependentMemory):
    """Swallows the group whole, but its `for` has no `else: break`: with only system
    messages left it finds nothing to drop, and goes round for ever."""

    def _trim(self):
        while len(self.history) > self.max_messages:
            for i, m in enumerate(self.history):
                if m["role"] != "system":
                    end = i + 1
                    while end < len(self.history) and self.history[end]["role"] == "tool":
                        end += 1
                    del self.history[i:end]
                    break


WRONG = {
    DropsOnlyTheOldest: "dropping an assistant(tool_calls)",
    SwallowsTheRepliesBefore: "dropping an assistant(tool_calls)",
    ForgetsTheListShifted: "dropping an assistant(tool_calls)",
    SwallowsWithIf: "a parallel group",
    SwallowsTheFirstCallsReply: "a parallel group",
    SwallowsEveryToolMessage: "for any conversation, given room: no orphan",
    SwallowsOneMessageTooMany: "the trim drops the oldest",
    SwallowsSystemMessages: "the trim never drops a system message",
    SwallowsTheSystemNoteAfterARound: "it swallows only tool replies",
    KeepsOnlyTheLeadingSystem: "the trim never drops a system message",
    TrimsBeforeAppending: "the trim keeps max_messages",
    WaitsForTheRoundThenTrimsWithIf: "for any conversation, given room: the system",
    NeverStopsWhenOnlySystemsAreLeft: "when only system messages are left",
}


class Typo(IndependentMemory):
    def _trim(self):
        while len(self.messages) > self.max_messages:  # the attribute is called history
            pass


class TestSeedTrim(CoreTrack):
    rules = nb04.TOOL_TRIM_RULES
    check = nb04.check_seed_trim
    library = [ShortTermMemory, SeedMemory]
    right = [IndependentMemory, OnePerCall]
    wrong = WRONG
    skeleton = Skeleton
    skeleton_says = ("write the body of _trim",)
    hinted = DropsOnlyTheOldest
    hint_steps = [
        ("what happened: max_messages=4, adding [system 1, user 2, assistant 3 (1 call), "
         "tool 4, assistant 5, user 6] one at a time keeps [system 1, tool 4, assistant 5, "
         "user 6]; expected [system 1, assistant 5, user 6]: tool 4 is an orphan",
         "are its replies"),
        ("the tool messages right after an assistant(tool_calls) are its replies",
         "the replies come AFTER"),
        ("the replies come AFTER the message you drop", None),
    ]
    typo = Typo
    typo_says = ("your code raised AttributeError", "of _trim()")
    misgiven = [IndependentMemory()]
    misgiven_says = "pass the class itself"
    both_languages = True


# ----------------------------------------------------------------- what only notebook 04 has

def test_the_naive_memory_breaks_the_tool_rules():
    assert failed_rules(NaiveMemory, nb04.TOOL_TRIM_RULES)[0] == rule_named(
        nb04.TOOL_TRIM_RULES, "dropping an assistant")


def test_notebook_02s_rules_are_reused_by_name_and_test():
    from lesson_lib.exercises import nb02

    theirs = {rule.name: rule for rule in nb02.MEMORY_RULES}
    reused = [rule for rule in nb04.TOOL_TRIM_RULES if rule.name in theirs]
    assert len(reused) == 5 and RULES[:5] == [rule.name for rule in reused]
    assert all(rule.test is theirs[rule.name].test for rule in reused)


def test_the_properties_show_the_smallest_conversation_that_breaks_them():
    assert what_happened(SwallowsEveryToolMessage, nb04.TOOL_TRIM_RULES,
                         "for any conversation, given room: no orphan") == (
        "max_messages=3, adding [assistant 1 (1 call), tool 2, assistant 3 (1 call), tool 4] "
        "one at a time: after tool 4 it holds [assistant 3 (1 call)]; assistant 3 (1 call) "
        "lost its tool replies, and the API answers 400")
    assert what_happened(WaitsForTheRoundThenTrimsWithIf, nb04.TOOL_TRIM_RULES,
                         "for any conversation, given room: the system") == (
        "max_messages=4, adding [user 1, user 2, assistant 3 (3 calls), tool 4, tool 5, tool 6] "
        "one at a time: after tool 6 it holds [user 2, assistant 3 (3 calls), tool 4, tool 5, "
        "tool 6]; expected [assistant 3 (3 calls), tool 4, tool 5, tool 6]")


# ----------------------------------------------------------------- the room the properties give

def test_below_the_room_the_seeds_rule_breaks_as_the_guards_say():
    """The properties give max_messages room for the system messages and the largest group.
    One less, and the seed's rule drops the round it just completed, newest reply included
    (what guard 2 prevents); two less, and it drops the round's assistant message before its
    last reply arrives, which is then stored as an orphan (what guard 1 prevents)."""
    spec = ["system", "user", "calls:3"]
    room = nb04._room(spec)
    assert room == 5
    for memory in (SeedMemory, ShortTermMemory):
        assert nb04._stays_valid(memory, (spec, room)) is None
        assert nb04._keeps_the_newest(memory, (spec, room)) is None
    messages = nb04.conversation(spec)
    one_less = nb04.labels(nb04._replay(SeedMemory, room - 1, messages).to_api_format())
    assert one_less == nb04.labels(nb04.seed_rule(messages, room - 1)[-1]) == "[system 1]"
    guarded = nb04._replay(ShortTermMemory, room - 1, messages).to_api_format()
    assert nb04.labels(guarded) == "[system 1, assistant 3 (3 calls), tool 4, tool 5, tool 6]"
    assert nb04._stays_valid(SeedMemory, (spec, room - 2)) == (
        "max_messages=3, adding [system 1, user 2, assistant 3 (3 calls), tool 4, tool 5, "
        "tool 6] one at a time: after tool 6 it holds [system 1, tool 6]; tool 6 is an "
        "orphan: the call it answers was dropped")
    assert nb04._stays_valid(ShortTermMemory, (spec, room - 2)) is None


def test_the_seeds_rule_reference_keeps_every_list_valid_given_room():
    spec = ["system", "user", "calls:2", "assistant", "system", "user", "calls:3", "assistant"]
    messages = nb04.conversation(spec)
    for n, kept in enumerate(nb04.seed_rule(messages, nb04._room(spec))):
        if not nb04._open_calls(messages[:n + 1]):
            assert is_valid(kept), (n, nb04.labels(kept))


# ----------------------------------------------------------------- the notebook's cells

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "04_trimming_pitfalls.ipynb"
SOLUTIONS = ROOT / "solutions"


def _cell_defining(name: str) -> str:
    """The source of the notebook's code cell that defines class `name`."""
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    (source,) = ["".join(c["source"]) for c in nb["cells"]
                 if c["cell_type"] == "code" and f"class {name}" in "".join(c["source"])]
    return source


def test_the_notebooks_skeleton_is_not_written_yet(capsys):
    namespace: dict = {}
    exec(_cell_defining("MyMemory"), namespace)  # noqa: S102  (our own notebook's skeleton)
    assert nb04.check_seed_trim(namespace["MyMemory"]) is False
    out = capsys.readouterr().out
    assert "not done yet" in out and "write the body of _trim" in out, out


def test_the_notebooks_skeleton_with_a_written_trim_keeps_every_rule():
    """The skeleton's other methods are right: only _trim is left to write (here, the
    worked solution's)."""
    namespace: dict = {}
    exec(_cell_defining("MyMemory"), namespace)  # noqa: S102
    solution: dict = {}
    exec((SOLUTIONS / "04_seed_trim.py").read_text(encoding="utf-8"), solution)  # noqa: S102
    memory = namespace["MyMemory"]
    memory._trim = solution["MyMemory"]._trim
    assert failed_rules(memory, nb04.TOOL_TRIM_RULES) == []
