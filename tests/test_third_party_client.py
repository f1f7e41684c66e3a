"""A third-party client (LangChain's ChatOpenAI) completes a tool round trip against the
served offline model: what a learner who already uses LangChain would try first."""

from __future__ import annotations

import json

import pytest

from lesson_lib.offline import MODEL_ID
from lesson_lib.offline.server import serve_in_thread

langchain_openai = pytest.importorskip(
    "langchain_openai", reason="langchain-openai is not installed (pip install -e '.[dev]')")
messages = pytest.importorskip("langchain_core.messages")


def get_current_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a city.

    Args:
        location: the city, e.g. Chengdu or 成都
        unit: celsius or fahrenheit
    """
    return json.dumps({"location": location, "temperature": 16, "unit": unit,
                       "condition": "cloudy"})


@pytest.fixture(scope="module")
def llm():
    with serve_in_thread() as server:
        chat = langchain_openai.ChatOpenAI(base_url=server.url + "/v1", api_key="offline",
                                           model=MODEL_ID, max_retries=0, timeout=30)
        yield chat.bind_tools([get_current_weather])


def test_langchain_tool_call_round_trip_against_the_served_model(llm):
    question = messages.HumanMessage("What's the weather in Chengdu right now?")
    asked = llm.invoke([question])
    assert asked.tool_calls, f"expected a tool call, got {asked!r}"
    call = asked.tool_calls[0]
    assert call["name"] == "get_current_weather" and call["args"]["location"] == "Chengdu", call
    result = messages.ToolMessage(get_current_weather(**call["args"]), tool_call_id=call["id"])
    final = llm.invoke([question, asked, result])
    assert not final.tool_calls, f"expected a final answer, got calls {final.tool_calls}"
    assert "16" in final.content, f"expected the tool's 16°C in the answer, got {final.content!r}"
    assert final.usage_metadata["input_tokens"] > asked.usage_metadata["input_tokens"]


def test_langchain_stream_gives_the_same_tool_call(llm):
    question = [messages.HumanMessage("What's the weather in Chengdu right now?")]
    whole = llm.invoke(question)
    streamed = None
    for chunk in llm.stream(question):
        streamed = chunk if streamed is None else streamed + chunk
    assert streamed.tool_calls == whole.tool_calls, (streamed.tool_calls, whole.tool_calls)


def test_langchain_sees_the_real_400_for_a_broken_history(llm):
    import openai  # noqa: PLC0415

    orphan = messages.ToolMessage("16°C", tool_call_id="call_lost")
    with pytest.raises(openai.BadRequestError, match="preceeding message with 'tool_calls'"):
        llm.invoke([messages.HumanMessage("hi"), orphan])
