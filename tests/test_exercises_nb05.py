"""Notebook 05's exercise checks pass a correct answer, fail wrong ones with the right hint,
and never raise at the learner.


from __future__ import annotations

Each answer runs in both editions (check_support.twin): with the English data, and with the
Chinese data a Chinese learner's notebook holds; the verdict and every message of the report
must be the same.
"""

from __future__ import annotations

import pytest
from check_support import in_both_languages, twin

from lesson_lib.agent import Agent
from lesson_lib.exercises import nb05
from lesson_lib.exercises.nb05 import (
    check_my_agent,
    check_predicted_roles,
    check_replay,
    offline_agent,
    roles_of,
)
from lesson_lib.i18n import by_language
from lesson_lib.offline import offline_client
from lesson_lib.tools import ToolRegistry

DISHES_EN = {"Chengdu": "mapo tofu", "Beijing": "Peking duck"}
DISHES_ZH = {"成都": "麻婆豆腐", "北京": "北京烤鸭"}


def dishes() -> dict:
    return by_language(DISHES_EN, DISHES_ZH)


class Built:
    """An argument built in each language by `make()` (a registry whose descriptions and
    data are the edition's own)."""

    def __init__(self, make):
        self.make = make


def both(en, zh) -> Built:
    """An argument with its Chinese twin."""
    return Built(lambda: by_language(en, zh))


def run(check, *args, capsys):
    """The check's verdict and what it printed, in English, after the same answer written
    with the Chinese edition's data got the same verdict and report in Chinese."""
    made = twin(lambda: tuple(a.make() if isinstance(a, Built) else a for a in args), many=True)
    return in_both_languages(check, made, capsys)["en"]


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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_predict_roles_matches_what_the_agent_really_does(lang, speak):
    speak(lang)
    agent = offline_agent()
    agent.chat(nb05.PREDICT_INPUT)
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


def replay_counts_first(agent, inputs):
    """Reads the count before chat() has added the input and its answer."""
    counts = []
    for text in inputs:
        counts.append(agent.memory.message_count())
        if text.strip().lower() == "/clear":
            agent.clear()
        else:
            agent.chat(text)
    return counts


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
    (replay_new_agent, "use it, not a new Agent()"),
    (replay_counts_first, "count after agent.chat(text) returns"),
    (replay_hard_coded, "don't write them in"),
    (replay_one_argument, "def replay(agent, inputs)"),
    ("replay", "def replay(agent, inputs)"),
    (replay_crashes, "your code raised AttributeError"),
])
def test_replay_fails_wrong_answers_with_a_hint(replay, hint, capsys):
    passed, out = run(check_replay, replay, capsys=capsys)
    assert not passed, f"expected {replay!r} to fail, got:\n{out}"
    assert "❌" in out and hint in out, f"expected the hint {hint!r}, got:\n{out}"


def test_replay_that_counts_first_is_not_told_to_use_the_agent_passed_in(capsys):
    passed, out = run(check_replay, replay_counts_first, capsys=capsys)
    assert not passed and "✅ the inputs went to the agent you were given" in out, out
    assert "new Agent()" not in out, out


# ----------------------------------------------------------------- exercise 3

CHENGDU = both({"city": "Chengdu"}, {"city": "成都"})
QUESTION = both("What should I eat in Chengdu?", "成都有什么好吃的？")
DOC = ("""Use this when the user asks what to eat in a city: a famous local dish.

        Args:
            city: City name in English, e.g. Chengdu.
        """, """当用户问在某个城市该吃什么时使用：一道当地名菜。

        Args:
            city: 城市名，例如 成都。
        """)


def dish_registry(body=None, doc=True) -> ToolRegistry:
    tools = ToolRegistry()

    def recommend_local_dish(city: str) -> dict:
        return body(city) if body else {"city": city, "dish": dishes().get(city, "noodles")}

    recommend_local_dish.__doc__ = by_language(*DOC)
    if not doc:
        recommend_local_dish.__doc__ = """TODO: say when the model should use this tool.

        Args:
            city: TODO
        """
    tools.register(recommend_local_dish)
    return tools


def test_my_agent_passes_a_right_answer(capsys):
    passed, out = run(check_my_agent, Built(lambda: Agent(tools=dish_registry())), QUESTION,
                      CHENGDU, capsys=capsys)
    assert passed, f"expected a working dish agent to pass, got:\n{out}"
    assert "❌" not in out and "mapo tofu" in out


def test_my_agent_is_judged_without_asking_any_model(monkeypatch, capsys):
    from lesson_lib import llm

    previous = llm.set_client(None)
    try:
        monkeypatch.setenv("LESSON_BACKEND", "openai")  # no key: a real client would fail
        passed, out = run(check_my_agent,
                          Built(lambda: Agent(tools=dish_registry(), client=object())),
                          QUESTION, CHENGDU, capsys=capsys)
        assert passed, out
        assert llm._client is None
    finally:
        llm.set_client(*previous)


def test_my_agent_leaves_the_learners_agent_alone(capsys):
    seen = []
    agents = []

    def make():
        agents.append(Agent(tools=dish_registry(), on_tool=seen.append))
        return agents[-1]

    passed, _ = run(check_my_agent, Built(make), QUESTION, CHENGDU, capsys=capsys)
    assert passed and seen == [] and [a.memory.message_count() for a in agents] == [1, 1]


def test_my_agent_accepts_a_string_result(capsys):
    def says(city):
        return by_language(f"In {city}, try mapo tofu.", f"在{city}，尝尝麻婆豆腐。")

    agent = Built(lambda: Agent(tools=dish_registry(body=says)))
    passed, out = run(check_my_agent, agent, QUESTION, CHENGDU, capsys=capsys)
    assert passed, f"expected a plain-text result to pass, got:\n{out}"


def test_a_description_in_chinese_that_says_when_passes(capsys):
    tools = ToolRegistry()

    @tools.tool
    def local_dish(city: str) -> str:
        """当用户问某个城市有什么好吃的时使用。

        Args:
            city: 城市名, e.g. 成都
        """
        return "麻婆豆腐"

    passed, out = run(check_my_agent, Agent(tools=tools), "成都吃什么？", {"city": "成都"},
                      capsys=capsys)
    assert passed, out


def raises(city):
    raise KeyError(city)


@pytest.mark.parametrize("agent, question, arguments, hint", [
    (Built(Agent), QUESTION, CHENGDU, "Agent(tools=my_tools)"),
    ("agent", QUESTION, CHENGDU, "got str"),
    (Built(lambda: Agent(tools=dish_registry())), "", CHENGDU,
     "ask something your tool can answer"),
    (Built(lambda: Agent(tools=dish_registry())), None, CHENGDU,
     "ask something your tool can answer"),
    (Built(lambda: Agent(tools=dish_registry(doc=False))), QUESTION, CHENGDU,
     "a model picks a tool by its description alone"),
    (Built(lambda: Agent(tools=dish_registry(doc=False))), QUESTION, CHENGDU,
     "city: describe it"),
    (Built(lambda: Agent(tools=dish_registry())), QUESTION, both("Chengdu", "成都"),
     "write e.g. {\"city\": \"Chengdu\"}"),
    (Built(lambda: Agent(tools=dish_registry())), QUESTION,
     both({"location": "Chengdu"}, {"location": "成都"}),
     "'city' is a required property"),
    (Built(lambda: Agent(tools=dish_registry(body=lambda city: None))), QUESTION, CHENGDU,
     "instead of None"),
    (Built(lambda: Agent(tools=dish_registry(body=raises))), QUESTION, CHENGDU,
     "raised KeyError"),
])
def test_my_agent_fails_wrong_answers_with_a_hint(agent, question, arguments, hint, capsys):
    passed, out = run(check_my_agent, agent, question, arguments, capsys=capsys)
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

    passed, out = run(check_my_agent, Built(Agent), QUESTION, CHENGDU, capsys=capsys)
    assert not passed and "Agent(tools=my_tools)" in out
    passed, out = run(check_my_agent, Agent(tools=tools), QUESTION, CHENGDU, capsys=capsys)
    assert not passed and "❌ recommend_local_dish's description says when to use it" in out, out


def test_a_tool_the_api_would_refuse_is_said_before_the_agent_runs(capsys):
    from lesson_lib.tools import ToolRegistry

    tools = ToolRegistry()
    tools.register(lambda **city: "mapo tofu", {"type": "function", "function": {
        "name": "local_dish", "description": "Use this when the user asks what to eat.",
        "parameters": {"type": "object"}}})  # the registry takes it; the API does not
    passed, out = run(check_my_agent, Agent(tools=tools), QUESTION, {}, capsys=capsys)
    assert not passed and "❌ the API accepts the agent's tools" in out, out
    assert "object schema missing properties" in out and "see line" not in out, out
