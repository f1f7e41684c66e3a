"""The self-checks of notebook 06 (the agent loop): each passes a correct answer, fails the
wrong ones with the hint that fits, and never raises at the learner."""

from __future__ import annotations

import json

import pytest
from check_support import expect_fail, expect_pass

from lesson_lib.exercises import nb06
from lesson_lib.llm import chat
from lesson_lib.protocol import assistant_to_dict
from lesson_lib.tools import (
    TIME_TOOL,
    WEATHER_TOOL,
    ToolRegistry,
    get_current_time,
    get_current_weather,
)

DISHES = {"Beijing": "Peking duck", "Shanghai": "xiaolongbao (soup dumplings)",
          "Chengdu": "mapo tofu"}


# ----------------------------------------------------------------- exercise 1: my_loop

def solution_loop(messages, registry, max_turns=5):
    tools = registry.schemas()
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=tools)
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": registry.execute(call.function.name,
                                                         call.function.arguments)})
    return f"I stopped after {max_turns} turns.", max_turns


def while_loop_solution(messages, registry, max_turns=5):
    """The same loop written as `while message.tool_calls`."""
    tools = registry.schemas()
    message, turns = chat(messages, tools=tools), 1
    while message.tool_calls:
        messages.append(assistant_to_dict(message))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": registry.execute(call.function.name,
                                                         call.function.arguments)})
        if turns == max_turns:
            return "Stopped: too many rounds.", turns
        message, turns = chat(messages, tools=tools), turns + 1
    messages.append(assistant_to_dict(message))
    return message.content, turns


def stub_loop(messages, registry, max_turns=5):
    """The notebook's first attempt: notebook 05's `if`."""
    tools = registry.schemas()
    message = chat(messages, tools=tools)
    turns = 1
    if message.tool_calls:
        messages.append(assistant_to_dict(message))
        for call in message.tool_calls:
            result = registry.execute(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        message = chat(messages, tools=tools)
        turns += 1
    messages.append({"role": "assistant", "content": message.content})
    return message.content, turns


def uncapped_loop(messages, registry, max_turns=5):
    tools = registry.schemas()
    turns = 0
    while True:
        message = chat(messages, tools=tools)
        turns += 1
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turns
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": registry.execute(call.function.name,
                                                         call.function.arguments)})


def one_too_many_loop(messages, registry, max_turns=5):
    return solution_loop(messages, registry, max_turns + 1)


def no_final_answer_loop(messages, registry, max_turns=5):
    reply, turns = solution_loop(messages, registry, max_turns)
    if messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls"):
        messages.pop()
    return reply, turns


def copying_loop(messages, registry, max_turns=5):
    return solution_loop(list(messages), registry, max_turns)


def reply_only_loop(messages, registry, max_turns=5):
    return solution_loop(messages, registry, max_turns)[0]


def raising_loop(messages, registry, max_turns=5):
    raise KeyError("tool_calls")


def test_my_loop_passes_a_for_loop_and_a_while_loop(capsys):
    out = expect_pass(nb06.check_my_loop, solution_loop, capsys)
    assert "All checks passed." in out
    expect_pass(nb06.check_my_loop, while_loop_solution, capsys)


def test_my_loop_passes_whatever_the_time_on_the_learners_clock(capsys):
    from lesson_lib import clock

    with clock.frozen("2026-05-01T01:00:00+00:00"):  # not 17:30 in Shanghai
        expect_pass(nb06.check_my_loop, solution_loop, capsys)


def test_my_loop_fails_the_notebooks_if_stub_with_one_round_hints(capsys):
    out = expect_fail(nb06.check_my_loop, stub_loop, capsys,
                      "turns=2, calls made: 2", "one round only? that is the `if`",
                      "never reached", "has content None", "instead of None")
    assert "✅ greeting" in out, f"the stub answers a greeting correctly; got:\n{out}"


def test_my_loop_reports_a_loop_that_never_stops_without_hanging(capsys):
    expect_fail(nb06.check_my_loop, uncapped_loop, capsys,
                "refused by the check", "stop after max_turns (3)")


def test_my_loop_counts_one_call_too_many(capsys):
    expect_fail(nb06.check_my_loop, one_too_many_loop, capsys,
                "stops after exactly 3 model calls (turns=4, calls made: 4)")


def test_my_loop_wants_the_final_answer_in_the_history(capsys):
    expect_fail(nb06.check_my_loop, no_final_answer_loop, capsys,
                "append the final reply too")


def test_my_loop_must_append_to_the_list_it_is_given(capsys):
    expect_fail(nb06.check_my_loop, copying_loop, capsys, "do not work on a copy")


def test_my_loop_must_return_a_pair(capsys):
    expect_fail(nb06.check_my_loop, reply_only_loop, capsys, "end with `return reply, turns`")


@pytest.mark.parametrize("answer", [raising_loop, None, lambda *a: ...])
def test_my_loop_check_never_raises_at_the_learner(answer, capsys):
    out = expect_fail(nb06.check_my_loop, answer, capsys)
    assert "Not yet" in out


def test_my_loop_says_when_the_stub_is_unwritten(capsys):
    expect_fail(nb06.check_my_loop, lambda *a: ..., capsys, "not written yet")


def test_checks_ask_the_offline_model_whatever_the_notebook_backend(monkeypatch, capsys):
    from lesson_lib import llm

    previous = llm.set_client(None)
    try:
        monkeypatch.setenv("LESSON_BACKEND", "openai")  # no key: a real client would fail
        expect_pass(nb06.check_my_loop, solution_loop, capsys)
        expect_pass(nb06.check_predictions, dict(RIGHT), capsys)
        expect_pass(nb06.check_two_step_chain, registry_with(get_local_dish), capsys)
        assert llm._client is None, "the check must restore the shared client it replaced"
    finally:
        llm.set_client(*previous)


# ----------------------------------------------------------------- exercise 2: predictions

RIGHT = {"a": 1, "b": 2, "c": 3, "d": 2, "e": 4}


def test_predictions_pass_with_the_real_counts(capsys):
    expect_pass(nb06.check_predictions, dict(RIGHT), capsys)


def test_predictions_match_what_loop_agent_really_does():
    for key, (question, max_turns) in nb06.PREDICTION_QUESTIONS.items():
        got = nb06.model_calls(question, max_turns)
        assert got == RIGHT[key], f"({key}) {question}: expected {RIGHT[key]} calls, got {got}"


def test_predictions_stub_is_reported_as_not_answered(capsys):
    out = expect_fail(nb06.check_predictions, dict.fromkeys(RIGHT, ...), capsys,
                      "not answered yet", "replace ... with a whole number")
    assert out.count("❌ (") == 5, f"expected five ❌ lines, got:\n{out}"


def test_predictions_wrong_answers_get_their_own_hints(capsys):
    wrong = {**RIGHT, "b": 5, "c": 2, "e": 5}
    out = expect_fail(nb06.check_predictions, wrong, capsys,
                      "5 model calls? It takes fewer", "parallel calls share one assistant",
                      "2 model calls? It takes more", "a chain",
                      "count what max_turns allows")
    assert out.count("❌ (") == 3, f"expected three ❌ lines, got:\n{out}"


@pytest.mark.parametrize("answer, hint", [
    ([1, 2, 3, 2, 4], "is a dict"),
    ({**RIGHT, "a": True}, "is not a whole number"),
    ({**RIGHT, "d": "2"}, "is not a whole number"),
    ({k: v for k, v in RIGHT.items() if k != "c"}, "(c) Which is colder"),
])
def test_predictions_odd_answers_are_reported_not_raised(answer, hint, capsys):
    expect_fail(nb06.check_predictions, answer, capsys, hint)


# ----------------------------------------------------------------- exercise 3: the chain

def get_local_dish(city: str) -> str:
    """Use this when the user asks what local dish or food a city is famous for.

    Args:
        city: City name, e.g. Chengdu.
    """
    return json.dumps({"city": city, "dish": DISHES.get(city, "unknown")})


def city_info(city: str) -> str:
    """Returns data about a city."""
    return json.dumps({"city": city, "dish": DISHES.get(city, "unknown")})


def registry_with(*tools) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(get_current_weather, WEATHER_TOOL)
    for fn in tools:
        registry.register(fn)
    return registry


def test_two_step_chain_passes_with_a_well_described_tool(capsys):
    out = expect_pass(nb06.check_two_step_chain, registry_with(get_local_dish), capsys)
    assert "get_local_dish{\"city\":\"Beijing\"}" in out, out


def test_two_step_chain_passes_when_only_the_description_is_fixed(capsys):
    def city_info(city: str) -> str:  # the stub's name, with a description a user would match
        """Use this when the user wants a local dish or food to try in a city."""
        return json.dumps({"city": city, "dish": DISHES.get(city, "unknown")})

    expect_pass(nb06.check_two_step_chain, registry_with(city_info), capsys)


def test_two_step_chain_fails_the_stub_with_the_description_hint(capsys):
    expect_fail(nb06.check_two_step_chain, registry_with(city_info), capsys,
                "turn 2 called nothing", "by its name and description only")


def test_two_step_chain_needs_the_weather_tool(capsys):
    registry = ToolRegistry()
    registry.register(get_local_dish)
    expect_fail(nb06.check_two_step_chain, registry, capsys,
                "register(get_current_weather, WEATHER_TOOL)")


def test_two_step_chain_needs_a_tool_of_the_learners_own(capsys):
    registry = registry_with()
    registry.register(get_current_time, TIME_TOOL)
    expect_fail(nb06.check_two_step_chain, registry, capsys, "a tool of your own (none)")


def test_two_step_chain_reports_a_tool_that_fails(capsys):
    def get_local_dish(city: str) -> str:
        """Use this when the user asks what local dish or food a city is famous for."""
        return DISHES[city.lower()]

    expect_fail(nb06.check_two_step_chain, registry_with(get_local_dish), capsys,
                "it returned an error", "KeyError")


@pytest.mark.parametrize("answer", [None, [get_local_dish], "registry"])
def test_two_step_chain_check_never_raises(answer, capsys):
    expect_fail(nb06.check_two_step_chain, answer, capsys, "is a ToolRegistry")


# These tests read which cases a check names: every line is printed (conftest.every_line).
pytestmark = pytest.mark.usefixtures("every_line")
