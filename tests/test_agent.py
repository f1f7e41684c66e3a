"""The memory agent and the agent loop, on the offline model."""

import openai
import pytest
from messages import failing_weather_tools

import lesson_lib.agent as agent_module
from lesson_lib.agent import Agent, LoopAgent, transcript_json
from lesson_lib.memory import ShortTermMemory
from lesson_lib.offline import inject_fault, offline_client
from lesson_lib.protocol import validate_messages
from lesson_lib.tools import default_registry


def roles(agent):
    return [m["role"] + ("(tool_calls)" if m.get("tool_calls") else "")
            for m in agent.memory.to_api_format()]


@pytest.fixture
def spy(monkeypatch):
    """Record the tools argument of every chat() call the agent makes."""
    calls = []
    real = agent_module.chat

    def recording(messages, tools=None, tool_choice=None, **kw):
        calls.append({"n_messages": len(messages), "tools": tools})
        return real(messages, tools, tool_choice, **kw)

    monkeypatch.setattr(agent_module, "chat", recording)
    return calls


def test_the_seeds_three_rounds(spy):
    agent = Agent()
    assert agent.chat("My name is Xiaoming") == "Nice to meet you, Xiaoming! How can I help?"
    assert roles(agent) == ["system", "user", "assistant"]
    answer = agent.chat("What's the weather in Chengdu?")
    assert "Chengdu" in answer and "16" in answer
    assert roles(agent) == ["system", "user", "assistant", "user", "assistant(tool_calls)",
                            "tool", "assistant"]
    assert agent.chat("What's my name?") == "You told me your name is Xiaoming."
    assert len(roles(agent)) == 9
    validate_messages(agent.memory.to_api_format())
    assert [c["tools"] is not None for c in spy] == [True, True, False, True], (
        "each input's first call offers the tools; only the call after a tool round goes "
        "out with tools=None")


def test_chinese_rounds_and_clear():
    agent = Agent()
    assert "小明" in agent.chat("我叫小明")
    assert "成都" in agent.chat("帮我查一下成都天气")
    assert "小明" in agent.chat("我刚才说我叫什么名字？")
    agent.clear()
    assert roles(agent) == ["system"]
    assert agent.chat("我刚才说我叫什么名字？") == "你没有告诉我你的名字。"


def test_parallel_calls_are_one_group_with_all_results():
    events = []
    agent = Agent(on_tool=events.append)
    agent.chat("What's the weather in Shanghai and Beijing?")
    assert [e.name for e in events] == ["get_current_weather"] * 2
    assert roles(agent)[2:] == ["assistant(tool_calls)", "tool", "tool", "assistant"]


def test_a_server_error_after_the_tool_round_leaves_memory_valid():
    client = offline_client()
    agent = Agent(client=client, on_tool=lambda event: inject_fault(client, "server_error"))
    with pytest.raises(openai.InternalServerError):
        agent.chat("What's the weather in Chengdu?")
    history = agent.memory.to_api_format()
    validate_messages(history)
    assert roles(agent) == ["system", "user", "assistant(tool_calls)", "tool"]
    agent.on_tool = None
    assert "Xiaoming" not in agent.chat("What's my name?")  # the agent goes on afterwards
    validate_messages(agent.memory.to_api_format())


@pytest.mark.parametrize("kind, error", [("rate_limit", openai.RateLimitError),
                                         ("timeout", openai.APITimeoutError)])
def test_a_failed_first_call_keeps_the_users_message_and_nothing_else(kind, error):
    client = offline_client()
    agent = Agent(client=client)
    inject_fault(client, kind)
    with pytest.raises(error):
        agent.chat("What's the weather in Chengdu?")
    assert roles(agent) == ["system", "user"]
    validate_messages(agent.memory.to_api_format())


def test_the_loop_runs_a_chain_where_the_second_call_needs_the_first_result():
    agent = LoopAgent(max_turns=5)
    result = agent.run("Which is warmer right now, Beijing or Shanghai, and what time is it there?")
    assert [(e.turn, e.name) for e in result.events] == [
        (1, "get_current_weather"), (1, "get_current_weather"), (2, "get_current_time")]
    assert result.turns == 3 and not result.hit_max_turns
    assert "Shanghai" in result.reply
    validate_messages(agent.memory.to_api_format())
    assert '"turns": 3' in transcript_json(result)


def test_max_turns_stops_a_model_that_never_stops_and_says_so():
    agent = LoopAgent(max_turns=3)
    result = agent.run("Keep checking the weather in Chengdu until it is sunny.")
    assert result.hit_max_turns and result.turns == 3 and len(result.events) == 3
    assert "max_turns=3" in result.reply
    history = agent.memory.to_api_format()
    validate_messages(history)
    assert history[-1] == {"role": "assistant", "content": result.reply}


def test_max_turns_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        LoopAgent(max_turns=0)


def test_a_failing_tool_is_fed_back_and_the_model_answers():
    tools = failing_weather_tools(ConnectionError("weather service unreachable"))
    agent = LoopAgent(tools=tools)
    result = agent.run("What's the weather in Chengdu?")
    assert "ConnectionError" in result.events[0].result
    assert not result.hit_max_turns and result.reply
    validate_messages(agent.memory.to_api_format())


def test_memory_trim_keeps_the_agent_valid_over_many_rounds():
    agent = LoopAgent(memory=ShortTermMemory(max_messages=6))
    for city in ["Chengdu", "Beijing", "Shanghai", "Tokyo", "London"]:
        agent.chat(f"What's the weather in {city}?")
        validate_messages(agent.memory.to_api_format())
        assert agent.memory.message_count() <= 6


def test_agent_uses_the_default_registry():
    assert Agent().registry is default_registry


@pytest.mark.parametrize("max_turns", [0, "3", 2.5, True])
def test_an_impossible_max_turns_is_refused_with_what_it_means(max_turns):
    with pytest.raises(ValueError, match=r"max_turns is how many model calls one input may "
                                         r"take, a whole number of at least 1, got"):
        LoopAgent(max_turns=max_turns)
