"""The self-checks of notebook 08 (the chat app): each passes a correct answer, fails the wrong
ones with the hint that fits, and never raises at the learner. Exercise 1's answers are
written twice (check_support.twin), with the English data and with the Chinese notebook's,
and must get the same verdict and report in each edition."""

from __future__ import annotations

import pytest
from check_support import expect_fail, expect_pass, twin

from lesson_lib.app import chat_app
from lesson_lib.exercises import nb08
from lesson_lib.i18n import by_language
from lesson_lib.stepper import StepperState, stepper, trim_pitfall

FIVE_CITIES = ("What's the weather in Beijing, Shanghai, Chengdu, Tokyo and London?",
               "北京、上海、成都、东京和伦敦的天气怎么样？")
FOUR_CITIES = ("What's the weather in Beijing, Shanghai, Chengdu and Tokyo?",
               "北京、上海、成都和东京的天气怎么样？")
SIX_CITIES = ("What's the weather in Beijing, Shanghai, Chengdu, Tokyo, London and Paris?",
              "北京、上海、成都、东京、伦敦和巴黎的天气怎么样？")
# The notebooks' first attempts. Chinese costs fewer tokens: "成都天气怎么样？" three times
# still fits TokenBudgetMemory(600) with the name in it, so the Chinese one asks for more.
STUB_ZH = "成都现在的天气怎么样？湿度和风力呢？"
STUB = ({"ShortTermMemory": ["What's the weather in Chengdu?"] * 3,
         "TokenBudgetMemory": ["What's the weather in Chengdu?"] * 3},
        {"ShortTermMemory": [STUB_ZH] * 3, "TokenBudgetMemory": [STUB_ZH] * 3})


def both(short_term, token_budget, wrap=list):
    """A twin answer: each memory's message(s), (English, Chinese) pairs."""
    return twin(lambda: {"ShortTermMemory": wrap(by_language(*short_term)),
                         "TokenBudgetMemory": wrap(by_language(*token_budget))})


def one(text):
    return [text]
BREAKING = ["My name is Xiaoming.", "What's the weather in Chengdu?",
            "Which is warmer, Shanghai or Beijing?", "What is my name?", "Hello"]


# ----------------------------------------------------------------- exercise 1: forget

def test_one_question_with_many_tool_calls_forgets_under_both_memories(capsys):
    out = expect_pass(nb08.check_forget, both(FIVE_CITIES, FIVE_CITIES, one), capsys)
    assert out.count("forgotten after 1 message") == 2, out


def test_each_memory_may_get_its_own_message(capsys):
    expect_pass(nb08.check_forget, both(SIX_CITIES, FOUR_CITIES, one), capsys)


def test_a_single_string_counts_as_one_message(capsys):
    expect_pass(nb08.check_forget, both(FIVE_CITIES, FIVE_CITIES, str), capsys)


def test_the_committed_first_attempt_forgets_but_not_in_the_fewest_messages(capsys):
    out = expect_fail(nb08.check_forget, twin(lambda: by_language(*STUB)), capsys,
                      "forgotten after 3 messages; it can be done with 1",
                      "max_messages counts messages", "token_budget counts tokens")
    assert out.count("✅") == 4, f"both memories do forget with the stub:\n{out}"


def test_the_short_chinese_question_is_not_enough_for_the_token_budget(speak, capsys):
    """Why the Chinese notebook's first attempt asks a longer question (its prose says so)."""
    speak("zh")
    short = ["成都天气怎么样？"] * 3
    expect_fail(nb08.check_forget, {"ShortTermMemory": short, "TokenBudgetMemory": short},
                capsys, "TokenBudgetMemory(token_budget=600)：询问 '我叫什么名字？' 的请求里"
                "不再提到 小明（它的")


def test_greetings_never_forget_because_the_model_repeats_the_name(capsys):
    expect_fail(nb08.check_forget, both(("Hello!", "你好！"), ("Hello!", "你好！"),
                                        lambda text: [text] * 6), capsys,
                "no longer mentions Xiaoming (it still does in", "Watch the Messages gauge")


def test_a_message_that_fills_only_one_budget_is_reported_for_the_other(capsys):
    out = expect_fail(nb08.check_forget, both(FOUR_CITIES, SIX_CITIES, one), capsys,
                      "it still does in 1 of its 10 messages", "it showed a notice instead",
                      "OverBudgetError")
    assert "TokenBudgetMemory(token_budget=600): the request asking" not in out


@pytest.mark.parametrize("answer, hint", [
    ({"ShortTermMemory": ["/clear"], "TokenBudgetMemory": ["x"]}, "/clear forgets everything"),
    ({"ShortTermMemory": ..., "TokenBudgetMemory": []}, "not answered yet"),
    ({}, "not answered yet"),
    ({"ShortTermMemory": [1, 2], "TokenBudgetMemory": None}, "a list of messages (strings)"),
    (["What's the weather?"], "my_messages is a dict"),
    (None, "my_messages is a dict"),
])
def test_answers_of_the_wrong_shape_get_a_hint_not_a_crash(answer, hint, capsys):
    expect_fail(nb08.check_forget, twin(lambda: answer), capsys, hint)


def test_a_message_the_app_refuses_is_reported_with_its_notice(capsys):
    expect_fail(nb08.check_forget, both(FIVE_CITIES, ("x" * 30000, "字" * 30000), one), capsys,
                "it showed a notice instead", "over budget by")


def test_the_forget_check_uses_the_offline_model_whatever_the_shared_client(capsys):
    from lesson_lib.llm import using_client

    with using_client(object(), "not-a-model"):  # any chat() through it would fail
        expect_pass(nb08.check_forget, both(FIVE_CITIES, FIVE_CITIES, one), capsys)


# ----------------------------------------------------------------- exercise 2: the break

def recorded(messages: list[str], strategy: str = "NaiveMemory", budget: int = 6):
    app = chat_app(strategy=strategy, budget=budget)
    for text in messages:
        app.state.send(text)
    return app


def test_a_stepper_standing_where_the_rules_break_passes(capsys):
    view = stepper(recorded(BREAKING))
    view.state.go(view.state.broken_at)
    out = expect_pass(nb08.check_breaking_point, view, capsys)
    assert f"first at step {view.state.broken_at} of {view.state.total}" in out


def test_the_check_takes_the_stepper_state_too(capsys):
    steps = StepperState(recorded(BREAKING))
    steps.go(steps.broken_at)
    expect_pass(nb08.check_breaking_point, steps, capsys)


def test_clicking_the_view_buttons_moves_what_the_check_sees(capsys):
    view = stepper(recorded(BREAKING))
    for _ in range(view.state.broken_at - 1):
        view.next_button.click()
    expect_pass(nb08.check_breaking_point, view, capsys)


def test_the_committed_first_attempt_is_not_done_yet(capsys):
    expect_fail(nb08.check_breaking_point, stepper(recorded(["My name is Xiaoming."])), capsys,
                "all 3 steps would be accepted", "two tool calls at once")


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_stepper_elsewhere_is_told_to_move(where, capsys):
    steps = StepperState(recorded(BREAKING))
    getattr(steps, where)()
    assert steps.step != steps.broken_at
    expect_fail(nb08.check_breaking_point, steps, capsys,
                f"(it is at step {steps.step})", "'The rules break here', not 'Still broken'")


def test_a_conversation_that_never_breaks_is_reported(capsys):
    steps = StepperState(recorded(["My name is Xiaoming.", "What is my name?", "Hello"]))
    expect_fail(nb08.check_breaking_point, steps, capsys, "the rules break somewhere in it (all")


@pytest.mark.parametrize("strategy, budget, got", [
    ("NaiveMemory", 4, "NaiveMemory(max_messages=4)"),
    ("ShortTermMemory", 6, "ShortTermMemory(max_messages=6)"),
])
def test_another_memory_is_refused_with_the_one_to_use(strategy, budget, got, capsys):
    steps = StepperState(recorded(BREAKING, strategy, budget))
    steps.go(steps.broken_at or 1)
    expect_fail(nb08.check_breaking_point, steps, capsys, got,
                "chat_app(strategy='NaiveMemory', budget=6)")


def test_a_recording_without_a_memory_is_refused(capsys):
    steps = StepperState(trim_pitfall().messages)  # a plain message list: prefixes, no trim
    expect_fail(nb08.check_breaking_point, steps, capsys, "no memory: every message is kept")


@pytest.mark.parametrize("answer", [None, "stepper", 3])
def test_something_else_than_a_stepper_gets_a_hint(answer, capsys):
    expect_fail(nb08.check_breaking_point, answer, capsys, "make it with stepper(my_app)")


def test_the_app_itself_is_not_a_stepper(capsys):
    expect_fail(nb08.check_breaking_point, recorded(BREAKING), capsys,
                "my_stepper is a stepper", "got ChatAppView")


def test_a_stepper_made_before_the_chat_went_on_is_told_to_be_made_again(capsys):
    """Made after the first message, checked after the question that breaks the rules: the
    check says the stepper is out of date, not that the question was the wrong one."""
    app = chat_app(strategy="NaiveMemory", budget=6, backend="offline")
    app.state.send("My name is Xiaoming.")
    early = stepper(app)
    for text in ("What's the weather in Shanghai and Beijing?", "Thanks!", "And in Chengdu?"):
        app.state.send(text)
    out = expect_fail(nb08.check_breaking_point, early, capsys,
                      "❌ the stepper shows the conversation as it is now (it was made at 3 "
                      "messages; the app holds", "run the stepper cell again")
    assert "two tool calls" not in out, out
