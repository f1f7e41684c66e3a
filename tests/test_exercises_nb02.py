"""Notebook 02's exercise checks: a right answer passes, each wrong one fails with its hint,
and no answer, however broken, makes a check raise at the learner.

The solutions live here, not in the notebook."""

from __future__ import annotations

import pytest
from check_support import in_both_languages, twin

from lesson_lib.exercises import nb02
from lesson_lib.exercises.nb02 import (
    check_chat_turn,
    check_count_user_turns,
    check_prediction,
    count_cases,
)
from lesson_lib.llm import chat


def run(check, *args, capsys) -> tuple[bool, str]:
    """The verdict and report in English, after the Chinese edition (its own conversations)
    gave the same verdict and the same report in Chinese."""
    return in_both_languages(check, twin(lambda: args, many=True), capsys)["en"]


def assert_fails_with(passed: bool, out: str, *hints: str) -> None:
    assert passed is False, f"expected the check to fail, but it passed:\n{out}"
    assert "❌" in out and "Not yet" in out, f"expected ❌ lines and 'Not yet', got:\n{out}"
    for hint in hints:
        assert hint in out, f"expected the hint {hint!r} in the report, got:\n{out}"


# ----------------------------------------------------------------- exercise 1: chat_turn

def chat_turn(memory, text):  # the solution
    memory.add({"role": "user", "content": text})
    reply = chat(memory.to_api_format())
    memory.add({"role": "assistant", "content": reply.content})
    return reply.content


def sends_only_the_new_message(memory, text):  # the notebook's first attempt
    memory.add({"role": "user", "content": text})
    reply = chat([{"role": "user", "content": text}])
    memory.add({"role": "assistant", "content": reply.content})
    return reply.content


def forgets_the_reply(memory, text):
    memory.add({"role": "user", "content": text})
    return chat(memory.to_api_format()).content


def returns_the_message_object(memory, text):
    memory.add({"role": "user", "content": text})
    reply = chat(memory.to_api_format())
    memory.add({"role": "assistant", "content": reply.content})
    return reply


def adds_the_sdk_object(memory, text):
    memory.add({"role": "user", "content": text})
    reply = chat(memory.to_api_format())
    memory.add(reply)  # refused by add(): not a dict
    return reply.content


def stub(memory, text):
    return ...


def test_chat_turn_solution_passes(capsys):
    passed, out = run(check_chat_turn, chat_turn, capsys=capsys)
    assert passed, f"expected the solution to pass, got:\n{out}"
    assert "All checks passed." in out and "❌" not in out, out


def test_chat_turn_that_sends_only_the_new_message_is_told_to_send_the_memory(capsys):
    """The first hint names the rule without the answer; asking again gives the answer."""
    from lesson_lib import exercises

    exercises._ASKED.clear()
    passed, out = run(check_chat_turn, sends_only_the_new_message, capsys=capsys)
    assert_fails_with(passed, out, "the model only knows what this one call sends")
    assert "chat(memory.to_api_format())" not in out
    assert out.count("  ❌ ") == 1, f"expected only the name line to fail, got:\n{out}"
    passed, out = run(check_chat_turn, sends_only_the_new_message, capsys=capsys)
    assert_fails_with(passed, out, "chat(memory.to_api_format())")


def test_chat_turn_that_forgets_the_reply_is_told_to_add_it(capsys):
    passed, out = run(check_chat_turn, forgets_the_reply, capsys=capsys)
    assert_fails_with(passed, out, "yours added [1, 1, 1]",
                      "add the user's message before the call and the assistant's reply")


def test_chat_turn_that_never_stores_the_reply_is_not_told_about_what_it_returns(capsys):
    passed, out = run(check_chat_turn, forgets_the_reply, capsys=capsys)
    assert_fails_with(passed, out, "❌ after each turn the memory ends with the model's reply "
                                   "(it ends with a user message)",
                      "add the reply, {'role': 'assistant', 'content': reply.content}")
    assert "returns the reply's text" not in out, out


def test_chat_turn_with_other_parameters_is_told_in_one_sentence(capsys):
    def chat_turn(text):
        return text

    passed, out = run(check_chat_turn, chat_turn, capsys=capsys)
    assert_fails_with(passed, out, "your chat_turn(text) cannot be called the way "
                                   "the check calls it, chat_turn(memory, text)")
    assert len(out.splitlines()) == 3, out


def test_chat_turn_returning_the_sdk_message_is_told_to_return_its_text(capsys):
    passed, out = run(check_chat_turn, returns_the_message_object, capsys=capsys)
    assert_fails_with(passed, out, "got ChatCompletionMessage", "return reply.content")
    assert "ChatCompletionMessage(" not in out, f"expected the reply's text quoted, got:\n{out}"


def test_chat_turn_that_raises_is_reported_not_raised(capsys):
    passed, out = run(check_chat_turn, adds_the_sdk_object, capsys=capsys)
    assert_fails_with(passed, out, "your code raised ProtocolError", "assistant_to_dict")


def test_chat_turn_stub_is_reported_as_not_written_yet(capsys):
    passed, out = run(check_chat_turn, stub, capsys=capsys)
    assert_fails_with(passed, out, "not written yet")
    assert out.count("  ❌ ") == 1, f"expected one ❌ line for the untouched stub, got:\n{out}"


def test_chat_turn_check_accepts_a_non_callable_without_raising(capsys):
    passed, out = run(check_chat_turn, None, capsys=capsys)
    assert_fails_with(passed, out, "your code raised TypeError")


# ----------------------------------------------------------------- exercise 2: predict

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_prediction_sequence_gives_four_then_two(lang, speak):
    speak(lang)
    got = nb02.prediction_sequence()
    assert got == (4, 2), f"expected (4, 2), got {got}"


def test_the_chinese_edition_shows_its_own_prediction_sequence(speak):
    import inspect

    speak("zh")
    assert '"我叫小明"' in inspect.getsource(nb02.prediction_sequence)
    speak("en")
    assert '"My name is Xiaoming"' in inspect.getsource(nb02.prediction_sequence)


def test_right_prediction_passes(capsys):
    passed, out = run(check_prediction, 4, 2, capsys=capsys)
    assert passed and "All checks passed." in out, out


@pytest.mark.parametrize("first, second, hints", [
    (6, 2, ["you predicted 6", "max_messages=4 caps the memory"]),
    (5, 2, ["the system message counts toward max_messages"]),
    (4, 1, ["the user message added after the clear counts too"]),
    (4, 0, ["clear_non_system() keeps the system message"]),
    (4, 5, ["forgets everything but the system message"]),
    (7, 2, ["walk through the sequence one add at a time"]),
])
def test_wrong_prediction_fails_with_its_hint(first, second, hints, capsys):
    passed, out = run(check_prediction, first, second, capsys=capsys)
    assert_fails_with(passed, out, *hints)
    assert out.count("  ❌ ") == 1, f"expected exactly one wrong prediction, got:\n{out}"


@pytest.mark.parametrize("value", [..., None, "4", 4.0, True])
def test_unanswered_or_non_integer_prediction_is_not_answered_yet(value, capsys):
    passed, out = run(check_prediction, value, 2, capsys=capsys)
    assert_fails_with(passed, out, "not answered yet", "replace ... with a whole number")


# ----------------------------------------------------------------- exercise 3: count

def count_user_turns(memory):  # the solution
    return sum(1 for m in memory.to_api_format() if m["role"] == "user")


def halves_the_count(memory):  # the notebook's first attempt
    return memory.message_count() // 2


def counts_non_system(memory):
    return sum(1 for m in memory.to_api_format() if m["role"] != "system")


def clears_while_counting(memory):
    n = count_user_turns(memory)
    memory.clear_non_system()
    return n


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_count_cases_expect_what_the_solution_counts(lang, speak):
    speak(lang)
    for what, memory, expected, _ in count_cases():
        assert count_user_turns(memory) == expected, f"{what}: expected {expected}"


def test_count_user_turns_solution_passes(capsys):
    passed, out = run(check_count_user_turns, count_user_turns, capsys=capsys)
    assert passed and "❌" not in out, f"expected the solution to pass, got:\n{out}"


def test_halving_the_count_fails_on_tool_rounds_and_missing_system(capsys):
    passed, out = run(check_count_user_turns, halves_the_count, capsys=capsys)
    assert_fails_with(passed, out, "count roles, not messages",
                      "not every memory has a system message")


def test_counting_every_non_system_message_fails(capsys):
    passed, out = run(check_count_user_turns, counts_non_system, capsys=capsys)
    assert_fails_with(passed, out, "system + 3 plain turns: expected 3, got 6")


def test_a_count_that_changes_the_memory_fails(capsys):
    passed, out = run(check_count_user_turns, clears_while_counting, capsys=capsys)
    assert_fails_with(passed, out, "only read the memory")


def test_count_check_reports_an_exception(capsys):
    passed, out = run(check_count_user_turns, lambda memory: memory.messages, capsys=capsys)
    assert_fails_with(passed, out, "your code raised AttributeError")


def test_count_check_reports_a_missing_return(capsys):
    passed, out = run(check_count_user_turns, lambda memory: None, capsys=capsys)
    assert_fails_with(passed, out, "an empty memory: expected 0, got None")

