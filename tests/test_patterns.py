"""lesson_lib.patterns: the seed's router, task state, workflow, fallback and few-shot
patterns, each checked for what the notebook claims of it."""

from __future__ import annotations

import json

import pytest

from lesson_lib.offline import offline_client
from lesson_lib.patterns import Router, TaskState, few_shot, packing_advice, with_fallback
from lesson_lib.protocol import ProtocolError, validate_messages
from lesson_lib.tools import default_registry, get_current_weather

TEMPERATURE = {"valid": lambda d: isinstance(d.get("temperature"), (int, float))}


def test_the_workflow_asks_the_model_once_and_decides_by_rules():
    result = packing_advice("I'm off to Chengdu tomorrow, what should I pack?",
                            client=offline_client())
    assert result["arguments"]["location"] == "Chengdu"
    assert result["pack"] == ["light jacket"]  # 16 °C, cloudy: no umbrella, no coat
    assert result["note"].startswith("Chengdu: cloudy, 16°")


def test_the_workflow_reports_an_unknown_place_instead_of_advising():
    result = packing_advice("What should I pack?", client=offline_client(),
                            weather=lambda **_: json.dumps({"error": "no weather data"}))
    assert result["pack"] == [] and result["note"] == "No advice: no weather data."


def test_a_failing_source_falls_back_and_says_so():
    def service_a(location, unit="celsius"):
        raise TimeoutError("no answer in 5 s")
    log: list = []
    tool = with_fallback(service_a, get_current_weather, **TEMPERATURE, log=log)
    assert json.loads(tool(location="Chengdu"))["temperature"] == 16
    assert log == ["service_a: failed: TimeoutError: no answer in 5 s",
                   "get_current_weather: valid result"]


def test_when_no_source_is_valid_the_model_gets_an_honest_error():
    log: list = []
    tool = with_fallback(get_current_weather, **TEMPERATURE, log=log)
    result = json.loads(tool(location="Atlantis"))
    assert result["error"] == "every source failed" and "do not guess" in result["hint"]
    assert log[0].startswith("get_current_weather: invalid result")
    with pytest.raises(ValueError, match="at least one source"):
        with_fallback(**TEMPERATURE)


def test_task_state_lives_in_the_prompt_not_the_messages():
    state = TaskState("Plan a day in Chengdu", ["weather", "time"])
    state.done("weather", "cloudy, 16°C")
    assert state.pending() == ["time"]
    assert state.prompt("Be brief.").splitlines() == [
        "Be brief.", "Task: Plan a day in Chengdu", "[x] weather: cloudy, 16°C", "[ ] time"]
    with pytest.raises(ValueError, match="not a step"):
        state.done("lunch", "noodles")


def test_few_shot_examples_are_tool_rounds_the_api_accepts():
    examples = few_shot([
        ("Weather in Beijing?", [("get_current_weather", {"location": "Beijing"}, "{}")], "Sunny."),
        ("Hi!", [], "Hello!"),
        ("Shanghai and Tokyo?", [("get_current_weather", {"location": "Shanghai"}, "{}"),
                                 ("get_current_weather", {"location": "Tokyo"}, "{}")], "Both.")])
    validate_messages(examples + [{"role": "user", "content": "And Chengdu?"}])
    ids = [c["id"] for m in examples for c in m.get("tool_calls") or []]
    assert ids == ["call_example_1", "call_example_2", "call_example_3"]
    without_reply = [m for m in examples if m.get("tool_call_id") != "call_example_1"]
    with pytest.raises(ProtocolError, match="tool_call_id"):
        validate_messages(without_reply)


def test_the_router_refuses_a_choice_outside_its_toolboxes():
    router = Router({"weather": ("the weather", default_registry.subset(["get_current_weather"]))})
    tool = router.route_tool()["function"]
    assert tool["parameters"]["properties"]["toolbox"]["enum"] == ["weather"]
    assert router.tools_for("weather").names() == ["get_current_weather"]
    with pytest.raises(ValueError, match="at least one toolbox"):
        Router({})
