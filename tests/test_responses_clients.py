"""Clients people use, on the offline model's Responses API: the OpenAI Agents SDK with its
default model (OpenAIResponsesModel) and LangChain's ChatOpenAI(use_responses_api=True),
in process and served."""

from __future__ import annotations

import asyncio
import json

import openai
import pydantic
import pytest

from lesson_lib.offline import MODEL_ID, offline_async_client
from lesson_lib.offline.server import serve_in_thread
from lesson_lib.offline.state import MemoryState

CHENGDU = {"location": "Chengdu", "temperature": 16, "condition": "cloudy"}


@pytest.fixture(scope="module")
def server():
    with serve_in_thread(log=None) as running:
        yield running


# ----------------------------------------------------------------- the OpenAI Agents SDK

@pytest.fixture(params=["in process", "served"])
def agents_run(request, server):
    """(agents, an agent with a weather tool, run(…) that runs it on one event loop with the
    SDK's default model provider, the client)."""
    agents = pytest.importorskip("agents", reason="openai-agents is not installed "
                                                  "(pip install -e '.[dev]')")
    agents.set_tracing_disabled(True)

    @agents.function_tool
    def get_current_weather(location: str) -> str:
        """Get the current weather in a city."""
        return json.dumps({**CHENGDU, "location": location})

    agent = agents.Agent(name="weather", instructions="Report the weather.", model=MODEL_ID,
                         tools=[get_current_weather])

    def make_client():
        if request.param == "in process":
            return offline_async_client(state=MemoryState())
        return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="offline",
                                  max_retries=0, timeout=30)

    def run(steps):
        """Run `steps(client, config)` (a coroutine function) on one event loop."""
        async def main():
            client = make_client()
            config = agents.RunConfig(model_provider=agents.OpenAIProvider(openai_client=client))
            return await steps(client, config)
        return asyncio.run(main())

    return agents, agent, run


def test_the_default_model_is_the_responses_model(agents_run):
    agents, _, run = agents_run

    async def steps(client, config):
        return config.model_provider.get_model(MODEL_ID)

    assert type(run(steps)).__name__ == "OpenAIResponsesModel"


def test_an_agent_tool_round_trip(agents_run):
    agents, agent, run = agents_run

    async def steps(client, config):
        return await agents.Runner.run(agent, "What's the weather in Chengdu?", run_config=config)

    result = run(steps)
    assert result.final_output == "Chengdu is cloudy, 16°C."
    kinds = [type(item).__name__ for item in result.new_items]
    assert kinds == ["ToolCallItem", "ToolCallOutputItem", "MessageOutputItem"], kinds
    assert result.last_response_id.startswith("resp_")


def test_a_run_continued_with_previous_response_id(agents_run):
    agents, agent, run = agents_run

    async def steps(client, config):
        first = await agents.Runner.run(agent, "My name is Xiaoming.", run_config=config)
        weather = await agents.Runner.run(agent, "What's the weather in Chengdu?",
                                          previous_response_id=first.last_response_id,
                                          run_config=config)
        name = await agents.Runner.run(agent, "What is my name?",
                                       previous_response_id=weather.last_response_id,
                                       run_config=config)
        items = [i async for i in client.responses.input_items.list(name.last_response_id,
                                                                    order="asc")]
        return weather, name, items

    weather, name, items = run(steps)
    assert weather.final_output == "Chengdu is cloudy, 16°C."
    assert name.final_output == "You told me your name is Xiaoming."
    assert [(i.type, getattr(i, "role", None)) for i in items] == [
        ("message", "user"), ("message", "assistant"), ("message", "user"),
        ("function_call", None), ("function_call_output", None), ("message", "assistant"),
        ("message", "user")], "the server held the whole chain; the client sent one turn"


def test_a_run_on_a_conversation(agents_run):
    agents, agent, run = agents_run

    async def steps(client, config):
        conversation = await client.conversations.create()
        said = []
        for text in ("My name is Xiaoming.", "What's the weather in Chengdu?",
                     "What is my name?"):
            result = await agents.Runner.run(agent, text, conversation_id=conversation.id,
                                             run_config=config)
            said.append(result.final_output)
        items = [i async for i in client.conversations.items.list(conversation.id,
                                                                  order="asc")]
        return said, items

    said, items = run(steps)
    assert said == ["Nice to meet you, Xiaoming! How can I help?", "Chengdu is cloudy, 16°C.",
                    "You told me your name is Xiaoming."]
    assert [i.type for i in items] == ["message", "message", "message", "function_call",
                                       "function_call_output", "message", "message", "message"]


def test_a_sqlite_session_resends_its_history(agents_run, tmp_path):
    agents, agent, run = agents_run
    path = str(tmp_path / "agent.db")

    async def steps(client, config):
        said = []
        for text in ("My name is Xiaoming.", "What's the weather in Chengdu?",
                     "What is my name?"):
            session = agents.SQLiteSession("xiaoming", path)  # a new process, say: same file
            result = await agents.Runner.run(agent, text, session=session, run_config=config)
            said.append((result.final_output, result.raw_responses[-1].usage.input_tokens))
        return said, await agents.SQLiteSession("xiaoming", path).get_items()

    said, items = run(steps)
    assert [text for text, _ in said] == [
        "Nice to meet you, Xiaoming! How can I help?", "Chengdu is cloudy, 16°C.",
        "You told me your name is Xiaoming."]
    tokens = [n for _, n in said]
    assert tokens == sorted(tokens), "the history is sent every time: the input grows"
    assert len(items) == 8


def test_a_streamed_agent_run(agents_run):
    agents, agent, run = agents_run

    async def steps(client, config):
        streamed = agents.Runner.run_streamed(agent, "What's the weather in Chengdu?",
                                              run_config=config)
        kinds = [event.type async for event in streamed.stream_events()]
        return streamed.final_output, kinds

    final, kinds = run(steps)
    assert final == "Chengdu is cloudy, 16°C."
    assert "raw_response_event" in kinds and "run_item_stream_event" in kinds


# ----------------------------------------------------------------- LangChain

@pytest.fixture
def llm(server):
    langchain_openai = pytest.importorskip("langchain_openai")
    return langchain_openai.ChatOpenAI(base_url=server.url + "/v1", api_key="offline",
                                       model=MODEL_ID, use_responses_api=True, max_retries=0,
                                       timeout=30)


def test_langchain_answers_through_the_responses_api(llm):
    reply = llm.invoke("My name is Xiaoming.")
    assert reply.text == "Nice to meet you, Xiaoming! How can I help?"
    assert reply.response_metadata["id"].startswith("resp_")
    assert reply.usage_metadata["input_tokens"] == 13


def test_langchain_tool_round_trip_sync_async_and_streamed(llm):
    messages_ = pytest.importorskip("langchain_core.messages")
    tools = pytest.importorskip("langchain_core.tools")

    @tools.tool
    def get_current_weather(location: str) -> str:
        """Get the current weather in a city."""
        return json.dumps({**CHENGDU, "location": location})

    bound = llm.bind_tools([get_current_weather])
    history = [messages_.HumanMessage("What's the weather in Chengdu?")]
    asked = bound.invoke(history)
    assert [(c["name"], c["args"]) for c in asked.tool_calls] == [
        ("get_current_weather", {"location": "Chengdu"})]
    history += [asked, *(messages_.ToolMessage(get_current_weather.invoke(c["args"]),
                                               tool_call_id=c["id"]) for c in asked.tool_calls)]
    assert bound.invoke(history).text == "Chengdu is cloudy, 16°C."
    assert asyncio.run(bound.ainvoke(history)).text == "Chengdu is cloudy, 16°C."
    streamed = "".join(chunk.text for chunk in bound.stream(history))
    assert streamed == "Chengdu is cloudy, 16°C."


def test_langchain_structured_output(llm):
    class CalendarEvent(pydantic.BaseModel):
        name: str
        date: str
        participants: list[str]

    event = llm.with_structured_output(CalendarEvent).invoke(
        [("system", "Extract the event information."),
         ("human", "Alice and Bob are going to a science fair on Friday.")])
    assert event == CalendarEvent(name="science fair", date="Friday",
                                  participants=["Alice", "Bob"])


def test_langchain_with_previous_response_id(server):
    langchain_openai = pytest.importorskip("langchain_openai")
    messages_ = pytest.importorskip("langchain_core.messages")
    llm = langchain_openai.ChatOpenAI(base_url=server.url + "/v1", api_key="offline",
                                      model=MODEL_ID, use_responses_api=True,
                                      use_previous_response_id=True, max_retries=0)
    first = llm.invoke([messages_.HumanMessage("My name is Xiaoming.")])
    second = llm.invoke([messages_.HumanMessage("My name is Xiaoming."), first,
                         messages_.HumanMessage("What is my name?")])
    assert second.text == "You told me your name is Xiaoming."
    assert second.usage_metadata["input_tokens"] > first.usage_metadata["input_tokens"], \
        "only the new message was sent, but the server's chain counts"
