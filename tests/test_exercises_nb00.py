"""Notebook 00's self-checks: right answers pass, wrong ones fail with the right hint,
and no answer, however wrong, makes a check raise."""

from __future__ import annotations

import pytest

from lesson_lib.exercises.nb00 import check_chinese_reply, check_first_history
from lesson_lib.llm import chat
from lesson_lib.offline import offline_client
from lesson_lib.protocol import assistant_to_dict


@pytest.fixture(autouse=True)
def _offline():
    from lesson_lib.llm import using_client

    with using_client(offline_client()):
        yield


def run(check, answer, capsys) -> tuple[bool, str]:
    passed = check(answer)
    return passed, capsys.readouterr().out


def assert_fails_with(check, answer, hint, capsys):
    passed, out = run(check, answer, capsys)
    assert passed is False, f"expected {answer!r} to fail, but the check passed:\n{out}"
    assert hint in out, f"expected the hint {hint!r} in the report, got:\n{out}"
    assert "Not yet" in out, f"expected the 'Not yet' summary line, got:\n{out}"


# ----------------------------------------------------------------- exercise 1

@pytest.mark.parametrize("history", [
    [{"role": "user", "content": "My name is Xiaoming."},
     {"role": "assistant", "content": "Nice to meet you, Xiaoming!"}],
    [{"role": "user", "content": "Hi, I'm Ana"}, {"role": "assistant", "content": "Hello ana!"}],
    [{"role": "user", "content": "我叫王芳"}, {"role": "assistant", "content": "你好，王芳！"}],
])
def test_first_history_passes_a_correct_history_and_shows_the_model_remembering(history,
                                                                                  capsys):
    passed, out = run(check_first_history, history, capsys)
    assert passed, f"expected a correct history to pass, got:\n{out}"
    assert "it lets the model answer" in out and "All checks passed." in out, (
        f"expected the name question's answer in the report, got:\n{out}")


def test_first_history_committed_stub_fails_on_role_and_greeting(capsys):
    stub = [{"role": "user", "content": "My name is Xiaoming."},
            {"role": "bot", "content": "Hello!"}]
    passed, out = run(check_first_history, stub, capsys)
    assert not passed
    for expected in ("Invalid value: 'bot'", "the roles are ['user', 'bot']",
                     'the reply should use it (Xiaoming)', "✅ the user says their name (Xiaoming)"):
        assert expected in out, f"expected {expected!r} in the stub's report, got:\n{out}"
    assert "lets the model answer" not in out, "the model must not be asked while a rule fails"


@pytest.mark.parametrize("answer, hint", [
    (..., "replace ... with your list of two dicts"),
    (None, "replace ... with your list of two dicts"),
    ([{"role": "user", "content": "My name is Xiaoming."}], "got a list of 1"),
    ({"role": "user", "content": "My name is Xiaoming."}, "got dict"),
    ("My name is Xiaoming.", "got str"),
    ([{"role": "user", "content": "My name is Xiaoming."}, "Hi Xiaoming"],
     'write each one as {"role": ..., "content": ...}'),
    ([{"role": "user", "content": "I like tea."}, {"role": "assistant", "content": "Hi!"}],
     "say it in a way the model recognises"),
    ([{"role": "user", "content": "My name is Xiaoming."},
      {"role": "assistant", "content": "Hello there!"}], 'the reply should use it (Xiaoming)'),
    ([{"role": "assistant", "content": "Hi Xiaoming!"},
      {"role": "user", "content": "My name is Xiaoming."}], "the roles are ['assistant', 'user']"),
    ([{"role": "user", "content": "My name is Xiaoming."},
      {"role": "assistant", "content": None}], "expected a string, got null"),
    ([{"role": "user", "content": "My name is Xiaoming."},
      {"role": "tool", "tool_call_id": "call_1", "content": "Hi Xiaoming"}],
     "must be a response to a preceeding message"),
])
def test_first_history_fails_wrong_answers_with_the_right_hint(answer, hint, capsys):
    assert_fails_with(check_first_history, answer, hint, capsys)


def test_first_history_never_raises_on_odd_input(capsys):
    for odd in (42, [1, 2], [{}, {}], [{"content": 3}, {"role": []}], [None, None]):
        passed, out = run(check_first_history, odd, capsys)
        assert passed is False, f"expected {odd!r} to fail, got:\n{out}"


# ----------------------------------------------------------------- exercise 2

def test_chinese_reply_passes_a_reply_to_a_chinese_question(capsys):
    reply = chat([{"role": "user", "content": "你好！你能做什么？"}])
    passed, out = run(check_chinese_reply, reply, capsys)
    assert passed, f"expected the offline model's Chinese reply to pass, got:\n{out}"


def test_chinese_reply_accepts_the_reply_as_a_plain_dict(capsys):
    reply = assistant_to_dict(chat([{"role": "user", "content": "成都今天天气怎么样？"}]))
    passed, out = run(check_chinese_reply, reply, capsys)
    assert passed, f"expected a dict form of the reply to pass, got:\n{out}"


def test_chinese_reply_committed_stub_fails_because_it_is_english(capsys):
    reply = chat([{"role": "user", "content": "Hello! What can you do?"}])
    assert_fails_with(check_chinese_reply, reply, "the language of your latest message", capsys)


@pytest.mark.parametrize("answer, hint", [
    (..., "set reply = chat("),
    ("你好！", "not reply.content"),
    ({"role": "user", "content": "你好！"}, "its role is 'user'"),
    ({"role": "assistant", "content": ""}, "it has text"),
    ({"role": "assistant", "content": None}, "it has text"),
])
def test_chinese_reply_fails_wrong_answers_with_the_right_hint(answer, hint, capsys):
    assert_fails_with(check_chinese_reply, answer, hint, capsys)


def test_chinese_reply_never_raises_on_odd_input(capsys):
    for odd in (42, [], {"content": 3}, object()):
        passed, out = run(check_chinese_reply, odd, capsys)
        assert passed is False, f"expected {odd!r} to fail, got:\n{out}"
