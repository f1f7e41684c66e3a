"""The core track: the rules that judge a learner's piece also guard the library's own.

For each core exercise:
- the library's version keeps every rule (the same rules the notebook's check runs);
- a correct version written here, independently of the library, keeps every rule;
- each wrong version in the bank (a mistake learners really make) is caught, and the rule
  that catches it is the one whose hint fits that mistake;
- the untouched skeleton gets "not written yet", not a wall of failures.
"""

from __future__ import annotations

import copy

import pytest

from lesson_lib.exercises import nb02
from lesson_lib.exercises.contract import failed_rules, judge
from lesson_lib.memory import ShortTermMemory

# ----------------------------------------------------------------- notebook 02: the memory

RULES_02 = {rule.name: rule for rule in nb02.MEMORY_RULES}


def _rule(start: str) -> str:
    """The one rule of notebook 02 whose name starts with `start`."""
    (name,) = [n for n in RULES_02 if n.startswith(start)]
    return name


class IndependentMemory:
    """A correct version, written without looking at lesson_lib's."""

    def __init__(self, max_messages=40):
        self.max_messages = max_messages
        self.history = []

    def add(self, message):
        self.history.append({**message})
        while len(self.history) > self.max_messages:
            others = [i for i, m in enumerate(self.history) if m["role"] != "system"]
            if not others:
                return
            self.history.pop(others[0])

    def to_api_format(self):
        return [dict(m) for m in self.history]

    def clear_non_system(self):
        self.history = [m for m in self.history if m["role"] == "system"]

    def message_count(self):
        return len(self.history)


class Skeleton:
    """The notebook's starting point: signatures and docstrings only."""

    def __init__(self, max_messages=40):
        self.max_messages = max_messages
        self._messages = []

    def add(self, message):
        raise NotImplementedError

    def _trim(self):
        raise NotImplementedError

    def to_api_format(self):
        raise NotImplementedError

    def clear_non_system(self):
        raise NotImplementedError

    def message_count(self):
        raise NotImplementedError


class ReturnsItsOwnList(IndependentMemory):
    def to_api_format(self):
        return self.history


class ShallowCopy(IndependentMemory):
    def to_api_format(self):
        return list(self.history)


class StoresTheCallersDict(IndependentMemory):
    def add(self, message):
        self.history.append(message)
        while len(self.history) > self.max_messages:
            others = [i for i, m in enumerate(self.history) if m["role"] != "system"]
            if not others:
                return
            self.history.pop(others[0])

    def to_api_format(self):
        return copy.deepcopy(self.history)


class ClearsEverything(IndependentMemory):
    def clear_non_system(self):
        self.history = []


class ClearKeepsOnlyTheFirst(IndependentMemory):
    def clear_non_system(self):
        self.history = self.history[:1]


class NoTrim(IndependentMemory):
    def add(self, message):
        self.history.append(dict(message))


class DropsTheNewest(IndependentMemory):
    def add(self, message):
        self.history.append(dict(message))
        while len(self.history) > self.max_messages:
            self.history.pop()


class DropsIndexZero(IndependentMemory):
    def add(self, message):
        self.history.append(dict(message))
        while len(self.history) > self.max_messages:
            self.history.pop(0)


class KeepsOnlyTheLeadingSystem(IndependentMemory):
    """Assumes the system prompt is always at index 0, so it drops index 1."""

    def add(self, message):
        self.history.append(dict(message))
        while len(self.history) > self.max_messages:
            if len(self.history) < 2:
                return
            self.history.pop(1 if self.history[0]["role"] == "system" else 0)


class CountsOnlyTheConversation(IndependentMemory):
    def message_count(self):
        return sum(m["role"] != "system" for m in self.history)


class OffByOne(IndependentMemory):
    def add(self, message):
        self.history.append(dict(message))
        while len(self.history) >= self.max_messages:
            others = [i for i, m in enumerate(self.history) if m["role"] != "system"]
            if not others:
                return
            self.history.pop(others[0])


class DropsTheOldestUserOnly(IndependentMemory):
    """Looks for role == "user" instead of role != "system"."""

    def add(self, message):
        self.history.append(dict(message))
        while len(self.history) > self.max_messages:
            users = [i for i, m in enumerate(self.history) if m["role"] == "user"]
            if not users:
                return
            self.history.pop(users[0])


class SystemMessagesFirst(IndependentMemory):
    """Keeps the system messages apart and always sends them first."""

    def __init__(self, max_messages=40):
        super().__init__(max_messages)
        self.system = []

    def add(self, message):
        if message["role"] == "system":
            self.system.append(dict(message))
        else:
            super().add(message)

    def to_api_format(self):
        return [dict(m) for m in self.system + self.history]

    def clear_non_system(self):
        self.history = []

    def message_count(self):
        return len(self.system) + len(self.history)


class TrimsOnlyWhenReading(IndependentMemory):
    """Keeps everything, and sends only the newest max_messages."""

    def add(self, message):
        self.history.append(dict(message))

    def to_api_format(self):
        return copy.deepcopy(self.history[-self.max_messages:])


class KeepsACounter(IndependentMemory):
    """Counts adds in a counter of its own, which the trim does not lower."""

    def __init__(self, max_messages=40):
        super().__init__(max_messages)
        self.count = 0

    def add(self, message):
        super().add(message)
        self.count += 1

    def clear_non_system(self):
        super().clear_non_system()
        self.count = len(self.history)

    def message_count(self):
        return self.count


class ClearReturnsTheList(IndependentMemory):
    """Builds the kept list and returns it, but never stores it."""

    def clear_non_system(self):
        return [m for m in self.history if m["role"] == "system"]


WRONG_02 = {
    ReturnsItsOwnList: "to_api_format() returns a new list",
    ShallowCopy: "to_api_format() copies each message",
    StoresTheCallersDict: "add() stores a copy",
    ClearsEverything: "clear_non_system()",
    ClearKeepsOnlyTheFirst: "clear_non_system()",
    NoTrim: "the trim keeps max_messages",
    DropsTheNewest: "the trim drops the oldest",
    DropsIndexZero: "the trim drops the oldest",
    KeepsOnlyTheLeadingSystem: "the trim never drops a system message",
    CountsOnlyTheConversation: "message_count()",
    OffByOne: "the trim keeps max_messages",
    DropsTheOldestUserOnly: "for any conversation",
    SystemMessagesFirst: "add() keeps messages in order",
    TrimsOnlyWhenReading: "the trim keeps max_messages",
    KeepsACounter: "the trim keeps max_messages",
    ClearReturnsTheList: "clear_non_system()",
}


def test_the_library_memory_keeps_every_rule_of_notebook_02():
    assert failed_rules(ShortTermMemory, nb02.MEMORY_RULES) == []


def test_an_independent_correct_memory_keeps_every_rule():
    assert failed_rules(IndependentMemory, nb02.MEMORY_RULES) == []


@pytest.mark.parametrize("wrong", list(WRONG_02), ids=lambda c: c.__name__)
def test_each_wrong_memory_is_caught_by_the_rule_that_fits(wrong):
    broken = failed_rules(wrong, nb02.MEMORY_RULES)
    assert broken, f"{wrong.__name__} passed every rule"
    assert broken[0] == _rule(WRONG_02[wrong]), (wrong.__name__, broken)


def test_the_bank_of_wrong_memories_is_at_least_eight():
    assert len(WRONG_02) >= 8


def test_the_untouched_skeleton_is_not_written_yet(capsys):
    assert nb02.check_my_memory(Skeleton) is False
    out = capsys.readouterr().out
    assert "not done yet" in out and len(out.splitlines()) <= 4, out
    assert ("write add(), _trim(), to_api_format(), clear_non_system() and message_count(): "
            "each still raises NotImplementedError") in out, out


def test_a_half_written_skeleton_names_the_methods_still_to_write(capsys):
    class Half(Skeleton):  # add() calls a _trim() that is not written yet
        def add(self, message):
            self._messages.append(copy.deepcopy(message))
            self._trim()

        def to_api_format(self):
            return copy.deepcopy(self._messages)

    assert nb02.check_my_memory(Half) is False
    out = capsys.readouterr().out
    assert "not done yet" in out and len(out.splitlines()) <= 4, out
    assert "write _trim(), clear_non_system() and message_count(): each still" in out, out

    class AllButTrim(Half):
        def clear_non_system(self):
            self._messages = [m for m in self._messages if m["role"] == "system"]

        def message_count(self):
            return len(self._messages)

    assert nb02.check_my_memory(AllButTrim) is False
    assert "write _trim(): it still raises NotImplementedError" in capsys.readouterr().out


def test_a_wrong_memory_gets_the_smallest_case_then_more_hints(capsys):
    assert nb02.check_my_memory(ReturnsItsOwnList) is False
    first = capsys.readouterr().out
    assert "what happened: memory.to_api_format().append(...) changed the memory" in first
    assert "returning self._messages" not in first
    nb02.check_my_memory(ReturnsItsOwnList)
    assert "returning self._messages hands the caller your own list" in capsys.readouterr().out


def test_the_property_rule_shows_the_smallest_conversation_that_breaks_it():
    verdicts = dict((r.name, w) for r, w in judge(DropsTheOldestUserOnly, nb02.MEMORY_RULES))
    assert verdicts[_rule("for any conversation")] == (
        "max_messages=2, adding [system 1, assistant 2, user 3] one at a time keeps "
        "[system 1, assistant 2]; expected [system 1, user 3]")


def test_a_class_that_raises_is_reported_with_its_line(capsys):
    class Typo(IndependentMemory):
        def message_count(self):
            return len(self.messages)  # a typo: the attribute is called history

    assert nb02.check_my_memory(Typo) is False
    out = capsys.readouterr().out
    assert "your code raised AttributeError" in out and "of message_count()" in out, out


def test_passing_an_instance_says_to_pass_the_class(capsys):
    assert nb02.check_my_memory(IndependentMemory()) is False
    assert "pass the class itself" in capsys.readouterr().out
