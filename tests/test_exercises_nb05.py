"""Notebook 05's exercise checks pass a correct answer, fail wrong ones with the right hint,
and never raise at the learner."""

from __future__ import annotations

import pytest

from lesson_lib.agent import Agent
from lesson_lib.exercises.nb05 import (
    PREDICT_INPUT,
    check_my_agent,
    check_predicted_roles,
    check_replay,
    offline_agent,
    roles_of,
)
from lesson_lib.offline import offline_client
from lesson_lib.tools import ToolRegistry

DISHES = {"Chengdu": "mapo tofu", "Beijing": "Peking duck"}


def run(check, *args, capsys):
    """The check's verdict and what it printed."""
    passed = check(*args)
    return passed, capsys.readouterr().out


# ----------------------------------------------------------------- exercise 1

def test_roles_of_reads_a_memory_or_a_list():
    agent = offline_agent()
    assert roles_of(agent.memory) == roles_of(agent.memory.to_api_format()) == ["system"]


def test_predict_roles_passes_the_right_list(capsys):
    passed, out = run(check_predicted_roles,
                      ["system", "user", "assistant", "tool", "tool", "assistant"], capsys=capsys)
    assert passed, f"expected the right roles to pass, got:\n{out}"
    assert "❌" not in out and "All checks passed." in out


def test_predict_roles_accepts_the_tool_calls_label(capsys):
    passed, out = run(check_predicted_roles, ["system", "user", "assistant(tool_calls)",
                                              "tool", "tool", "assistant"], capsys=capsys)
    assert passed, f"expected 'assistant(tool_calls)' to count as 'assistant', got:\n{out}"


def test_predict_roles_matches_what_the_agent_really_does():
    agent = offline_agent()
    agent.chat(PREDICT_INPUT)
    assert roles_of(agent.memory) == ["system", "user", "assistant", "tool", "tool",
                                      "assistant"], "the exercise's premise changed"


@pytest.mark.parametrize("answer, hint", [
    (..., "still ..."),
    ("system, user", "it is str"),
    (["system", "user", "assistant", "tool", "assistant"], "how many tool messages does each call get"),
    (["system", "user", "assistant"], "the weather needs a tool"),
    (["user", "assistant", "tool", "tool", "assistant"], "system prompt into memory"),
    (["system", "user", "assistant", "tool", "tool", "user", "assistant"], "input once"),
    (["system", "user", "assistant", "tools", "assistant"], "'tools'] is not"),
    (["system", "user", "tool", "tool", "assistant", "assistant"], "position 2"),
])
def test_predict_roles_fails_wrong_answers_with_a_hint(answer, hint, capsys):
    passed, out = run(check_predicted_roles, answer, capsys=capsys)
    assert not passed, f"expected {answer!r} to fail, got:\n{out}"
    assert "❌" in out and hint in out, f"expected the hint {hint!r}, got:\n{out}"


# ----------------------------------------------------------------- exercise 2

def replay_right(agent, inputs):
    counts = []
    for text in inputs:
        if text.strip().lower() == "/clear":
            agent.clear()
        else:
            agent.chat(text)
        counts.append(agent.memory.message_count())
    return counts


def replay_stub(agent, inputs):  # the notebook's first attempt
    counts = []
    for text in inputs:
        agent.chat(text)
    return counts


def replay_sends_clear(agent, inputs):
    counts = []
    for text in inputs:
        agent.chat(text)
        counts.append(agent.memory.message_count())
    return counts


def replay_new_agent(agent, inputs):
    return replay_right(Agent(client=offline_client()), inputs)


def replay_hard_coded(agent, inputs):
    replay_right(agent, inputs)
    return [3, 7, 1, 3]


def replay_one_argument(inputs):
    return []


def replay_crashes(agent, inputs):
    return [agent.memory.count()]  # no such method


def test_replay_passes_a_right_answer(capsys):
    passed, out = run(check_replay, replay_right, capsys=capsys)
    assert passed, f"expected the right replay to pass, got:\n{out}"
    assert "❌" not in out


@pytest.mark.parametrize("replay, hint", [
    (replay_stub, "append agent.memory.message_count()"),
    (replay_sends_clear, "call agent.clear()"),
    (replay_new_agent, "use the agent passed in"),
    (replay_hard_coded, "don't write them in"),
    (replay_one_argument, "def replay(agent, inputs)"),
    ("replay", "def replay(agent, inputs)"),
    (replay_crashes, "your code raised AttributeError"),
])
def test_replay_fails_wrong_answers_with_a_hint(replay, hint, capsys):
    passed, out = run(check_replay, replay, capsys=capsys)
    assert not passed, f"expected {replay!r} to fail, got:\n{out}"
    assert "❌" in out and hint in out, f"expected the hint {hint!r}, got:\n{out}"


# ----------------------------------------------------------------- exercise 3

def dish_registry(body=None, doc=True) -> ToolRegistry:
    tools = ToolRegistry()

    def recommend_local_dish(city: str) -> dict:
        """Use this when the user asks what to eat in a city: a famous local dish.

        Args:
            city: City name in English, e.g. Chengdu.
        """
        return body(city) if body else {"city": city, "dish": DISHES.get(city, "noodles")}

    if not doc:
        recommend_local_dish.__doc__ = "TODO: say when the model should use this tool."
    tools.register(recommend_local_dish)
    return tools


def test_my_agent_passes_a_right_answer(capsys):
    agent = Agent(tools=dish_registry())
    passed, out = run(check_my_agent, agent, "What should I eat in Chengdu?", capsys=capsys)
    assert passed, f"expected a working dish agent to pass, got:\n{out}"
    assert "❌" not in out


def test_my_agent_keeps_the_learners_on_tool(capsys):
    seen = []
    agent = Agent(tools=dish_registry(), on_tool=seen.append)
    passed, _ = run(check_my_agent, agent, "What should I eat in Beijing?", capsys=capsys)
    assert passed and [e.name for e in seen] == ["recommend_local_dish"]
    assert agent.on_tool == seen.append, "the check must put the agent's on_tool back"


def test_my_agent_accepts_a_string_result(capsys):
    agent = Agent(tools=dish_registry(body=lambda city: f"In {city}, try mapo tofu."))
    passed, out = run(check_my_agent, agent, "What should I eat in Chengdu?", capsys=capsys)
    assert passed, f"expected a plain-text result to pass, got:\n{out}"


def raises(city):
    raise KeyError(city)


@pytest.mark.parametrize("agent, question, hint", [
    (Agent(), "What should I eat in Chengdu?", "Agent(tools=my_tools)"),
    ("agent", "What should I eat in Chengdu?", "got str"),
    (Agent(tools=dish_registry()), "", "ask something your tool can answer"),
    (Agent(tools=dish_registry()), None, "ask something your tool can answer"),
    (Agent(tools=dish_registry(doc=False)), "What should I eat in Chengdu?",
     "the words it shares"),
    (Agent(tools=dish_registry()), "What's the weather in Chengdu?", "it called no tool"),
    (Agent(tools=dish_registry(body=lambda city: None)), "What should I eat in Chengdu?",
     "instead of None"),
    (Agent(tools=dish_registry(body=raises)), "What should I eat in Chengdu?",
     "it returned the error"),
])
def test_my_agent_fails_wrong_answers_with_a_hint(agent, question, hint, capsys):
    passed, out = run(check_my_agent, agent, question, capsys=capsys)
    assert not passed, f"expected ({agent!r}, {question!r}) to fail, got:\n{out}"
    assert "❌" in out and hint in out, f"expected the hint {hint!r}, got:\n{out}"


def test_the_notebooks_stub_is_reported_not_raised(capsys):
    tools = ToolRegistry()

    @tools.tool
    def recommend_local_dish(city: str) -> dict:
        """TODO: say when the model should use this tool.

        Args:
            city: TODO
        """
        ...

    passed, out = run(check_my_agent, Agent(), "What should I eat in Chengdu?", capsys=capsys)
    assert not passed and "Agent(tools=my_tools)" in out
    passed, out = run(check_my_agent, Agent(tools=tools), "What should I eat in Chengdu?",
                      capsys=capsys)
    assert not passed and "❌ the model called your tool" in out, out
