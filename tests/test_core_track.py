"""The core track, notebook 02: the rules that judge a learner's memory also guard the
library's ShortTermMemory.

TestMemory gets the tests every core exercise gets (tests/core_track_support.py): the
library's version and a correct one written here keep every rule; each wrong version in the
bank (a mistake learners really make) is caught, first, by the rule whose hint fits that
mistake; the untouched skeleton gets "not written yet", not a wall of failures. Below it,
the tests only this exercise has.
"""

from __future__ import annotations

import copy
import json

import pytest
from core_track_support import CoreTrack, what_happened

from lesson_lib.exercises import nb02
from lesson_lib.memory import ShortTermMemory

# ----------------------------------------------------------------- notebook 02: the memory

class IndependentMemory:
    """A correct version, written without looking at lesson_lib's."""

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
            self.history.pop(others[0])

    def to_api_format(self):
        return copy.deepcopy(self.history)

    def clear_non_system(self):
        self.history = [m for m in self.history if m["role"] == "system"]

    def message_count(self):
        return len(self.history)


class CopiesThroughJson(IndependentMemory):
    """Another correct version: a JSON round trip copies every level too (a message is
    JSON: it is what the API is sent)."""

    def add(self, message):
        self.history.append(json.loads(json.dumps(message)))
        self._trim()

    def to_api_format(self):
        return json.loads(json.dumps(self.history))


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
        self._trim()

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
        self.history.append(copy.deepcopy(message))


class DropsTheNewest(IndependentMemory):
    def add(self, message):
        self.history.append(copy.deepcopy(message))
        while len(self.history) > self.max_messages:
            self.history.pop()


class DropsIndexZero(IndependentMemory):
    def add(self, message):
        self.history.append(copy.deepcopy(message))
        while len(self.history) > self.max_messages:
            self.history.pop(0)


class KeepsOnlyTheLeadingSystem(IndependentMemory):
    """Assumes the system prompt is always at index 0, so it drops index 1."""

    def add(self, message):
        self.history.append(copy.deepcopy(message))
        while len(self.history) > self.max_messages:
            if len(self.history) < 2:
                return
            self.history.pop(1 if self.history[0]["role"] == "system" else 0)


class CountsOnlyTheConversation(IndependentMemory):
    def message_count(self):
        return sum(m["role"] != "system" for m in self.history)


class OffByOne(IndependentMemory):
    def add(self, message):
        self.history.append(copy.deepcopy(message))
        while len(self.history) >= self.max_messages:
            others = [i for i, m in enumerate(self.history) if m["role"] != "system"]
            if not others:
                return
            self.history.pop(others[0])


class DropsTheOldestUserOnly(IndependentMemory):
    """Looks for role == "user" instead of role != "system"."""

    def add(self, message):
        self.history.append(copy.deepcopy(message))
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
            self.system.append(copy.deepcopy(message))
        else:
            super().add(message)

    def to_api_format(self):
        return copy.deepcopy(self.system + self.history)

    def clear_non_system(self):
        self.history = []

    def message_count(self):
        return len(self.system) + len(self.history)


class TrimsOnlyWhenReading(IndependentMemory):
    """Keeps everything, and sends only the newest max_messages."""

    def add(self, message):
        self.history.append(copy.deepcopy(message))

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


class NeverStopsWhenOnlySystemsAreLeft(IndependentMemory):
    """A `for` without `else: break`: when only system messages are left it finds nothing
    to drop, and the `while` goes round for ever."""

    def _trim(self):
        while len(self.history) > self.max_messages:
            for i, m in enumerate(self.history):
                if m["role"] != "system":
                    del self.history[i]
                    break


class NextWithoutADefault(IndependentMemory):
    """next() without a default: StopIteration when only system messages are left."""

    def _trim(self):
        while len(self.history) > self.max_messages:
            del self.history[next(i for i, m in enumerate(self.history)
                                   if m["role"] != "system")]


class CountsEveryAdd(IndependentMemory):
    """Counts the add() calls: right until clear_non_system() (or the trim) removes some."""

    def __init__(self, max_messages=40):
        super().__init__(max_messages)
        self.adds = 0

    def add(self, message):
        super().add(message)
        self.adds = min(self.adds + 1, self.max_messages)

    def message_count(self):
        return self.adds


class CopiesOneLevel(IndependentMemory):
    """dict(message) and [dict(m) for m in ...]: a new list of new dicts, whose insides
    (a tool call) are still shared."""

    def add(self, message):
        self.history.append(dict(message))
        self._trim()

    def to_api_format(self):
        return [dict(m) for m in self.history]


class CopiesWithCopyMethods(IndependentMemory):
    """The same mistake in other words: {**message} in, m.copy() out."""

    def add(self, message):
        self.history.append({**message})
        self._trim()

    def to_api_format(self):
        return [m.copy() for m in self.history]


class DeepOutOneLevelIn(IndependentMemory):
    """to_api_format() is deep, but add() keeps the caller's tool_calls list."""

    def add(self, message):
        self.history.append(message.copy())
        self._trim()


class DeepInOneLevelOut(IndependentMemory):
    """add() is deep, but to_api_format() hands out the memory's own tool_calls lists."""

    def to_api_format(self):
        return [dict(m) for m in self.history]


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
    NeverStopsWhenOnlySystemsAreLeft: "when only system messages are left",
    NextWithoutADefault: "when only system messages are left",
    CountsEveryAdd: "message_count()",
    CopiesOneLevel: "the copies go all the way down",
    CopiesWithCopyMethods: "the copies go all the way down",
    DeepOutOneLevelIn: "the copies go all the way down",
    DeepInOneLevelOut: "the copies go all the way down",
}


class Typo(IndependentMemory):
    def message_count(self):
        return len(self.messages)  # a typo: the attribute is called history


class TestMemory(CoreTrack):
    rules = nb02.MEMORY_RULES
    check = nb02.check_my_memory
    library = [ShortTermMemory]
    right = [IndependentMemory, CopiesThroughJson]
    wrong = WRONG_02
    skeleton = Skeleton
    skeleton_says = ("write add(), _trim(), to_api_format(), clear_non_system() and "
                     "message_count(): each still raises NotImplementedError",)
    hinted = ReturnsItsOwnList
    hint_steps = [
        ("what happened: memory.to_api_format().append(...) changed the memory",
         "returning self._messages"),
        ("returning self._messages hands the caller your own list", None),
    ]
    typo = Typo
    typo_says = ("your code raised AttributeError", "of message_count()")
    misgiven = [IndependentMemory()]
    misgiven_says = "pass the class itself"
    both_languages = True


# ----------------------------------------------------------------- what only notebook 02 has

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


def test_the_property_rule_shows_the_smallest_conversation_that_breaks_it():
    assert what_happened(DropsTheOldestUserOnly, nb02.MEMORY_RULES, "for any conversation") == (
        "max_messages=2, adding [system 1, assistant 2, user 3] one at a time keeps "
        "[system 1, assistant 2]; expected [system 1, user 3]")


def test_hypothesis_keeps_its_files_in_the_users_own_cache(tmp_path, monkeypatch):
    """On a shared server a fixed folder (/tmp/...) is the first learner's, and the next
    cannot write there: the checks' Hypothesis files go to the user's XDG cache."""
    from lesson_lib.exercises.contract import hypothesis_folder

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert hypothesis_folder() == tmp_path / "cache" / "lesson_lib" / "hypothesis"
    for ignored in ("", "relative/cache"):  # the XDG rules: only an absolute path counts
        monkeypatch.setenv("XDG_CACHE_HOME", ignored)
        assert hypothesis_folder() == tmp_path / "home" / ".cache" / "lesson_lib" / "hypothesis"


def test_a_learners_check_writes_in_their_home_and_nowhere_shared(tmp_path):
    """Two learners' checks, each in a process of its own (as two kernels): each one's
    Hypothesis files are in that learner's home, none in the notebooks folder."""
    import os
    import subprocess
    import sys

    run = ("from lesson_lib.exercises import nb02\n"
           "from lesson_lib.memory import ShortTermMemory\n"
           "assert nb02.check_my_memory(ShortTermMemory)\n"
           "from hypothesis import configuration\n"
           "print(configuration.storage_directory().path)\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_CACHE_HOME", "HYPOTHESIS_STORAGE_DIRECTORY")}
    for learner in ("xiaoming", "xiaohong"):
        home, folder = tmp_path / learner, tmp_path / f"{learner}-notebooks"
        folder.mkdir(parents=True)
        done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True,
                              timeout=120, cwd=folder, env={**env, "HOME": str(home)})
        assert done.returncode == 0, done.stdout + done.stderr
        where = home / ".cache" / "lesson_lib" / "hypothesis"
        assert done.stdout.splitlines()[-1] == str(where), done.stdout
        assert where.is_dir() and list(folder.iterdir()) == [], list(folder.iterdir())


def test_a_trim_that_never_ends_is_stopped_and_named(capsys):
    from lesson_lib.exercises import deadline

    assert nb02.check_my_memory(NeverStopsWhenOnlySystemsAreLeft) is False
    out = capsys.readouterr().out
    assert "❌ when only system messages are left to drop, the trim stops" in out, out
    assert (f"your trim did not finish in {deadline.CALL_SECONDS:g} s on this history: "
            "max_messages=2, adding [system 1, system 2, system 3]") in out, out
    assert "it was running add() → _trim() when the check stopped it" in out, out
    assert nb02.check_my_memory(NeverStopsWhenOnlySystemsAreLeft) is False  # asked again
    assert "there is nothing the trim may drop: the loop must stop" in capsys.readouterr().out


def test_a_count_kept_apart_from_the_list_is_told_to_count_the_list(capsys):
    assert "message_count() says 6" in what_happened(CountsEveryAdd, nb02.MEMORY_RULES,
                                                    "message_count()")


def test_wrong_parameters_get_one_sentence_about_the_method(capsys):
    class AddWithoutMessage(IndependentMemory):
        def add(self):
            pass

    assert nb02.check_my_memory(AddWithoutMessage) is False
    out = capsys.readouterr().out
    assert ("your AddWithoutMessage.add(self) cannot be called the way the check calls it, "
            "memory.add(message)") in out, out
    assert "judge" not in out and "line " not in out and len(out.splitlines()) == 3, out


@pytest.mark.parametrize("version, seen, named", [
    (CopiesOneLevel, "after add(message), message['tool_calls'][0]['function']['arguments'] = "
     "'{\"location\": \"Beijing\"}' changed the memory too",
     "a copy of the dict still shares the dict's insides: dict(message)"),
    (CopiesWithCopyMethods, "after add(message)", "a copy of the dict still shares"),
    (DeepOutOneLevelIn, "after add(message)", "a copy of the dict still shares"),
    (DeepInOneLevelOut, "memory.to_api_format()[2]['tool_calls'][0]['function']['arguments'] "
     "= '{}' changed the memory's message too: it now holds '{}'",
     "a copy of the list of dicts still shares the dicts' insides: [dict(m) for m in ...]"),
])
def test_a_one_level_copy_is_shown_the_edit_then_told_what_it_shares(version, seen, named,
                                                                    capsys, monkeypatch):
    from collections import Counter

    from lesson_lib import exercises

    monkeypatch.setattr(exercises, "_ASKED", Counter())  # a fresh kernel: nothing asked
    assert nb02.check_my_memory(version) is False
    out = capsys.readouterr().out
    assert "❌ the copies go all the way down" in out and seen in out, out
    assert named not in out, out
    assert nb02.check_my_memory(version) is False
    assert named in capsys.readouterr().out
