"""The OpenAI Agents SDK against the served offline model, under both of the SDK's models
(OpenAIResponsesModel, its default, and OpenAIChatCompletionsModel): strict function
tools, handoffs, agents used as tools, input and output guardrails, a SQLiteSession, a
streamed run and structured output, each run clean with a sensible answer, in English
and in Chinese. One server for the module; no retries, no tracing, no network.
(The Responses-only parts, previous_response_id and conversation_id, are in
test_responses_clients.py.)"""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import openai
import pydantic
import pytest

from lesson_lib.offline import MODEL_ID
from lesson_lib.offline.server import serve_in_thread

agents = pytest.importorskip("agents", reason="openai-agents is not installed "
                                              "(pip install -e '.[dev]')")
agents.set_tracing_disabled(True)

MADE: list[tuple] = []  # the tools' calls, as the functions received them
NOW = "2026-03-15 17:30"


@agents.function_tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius",
                days: int | None = None) -> str:
    """Get the current weather in a city (and the next days' outlook)."""
    MADE.append(("get_weather", city, unit, days))
    return json.dumps({"location": city, "temperature": 16, "unit": unit,
                       "condition": "cloudy"}, ensure_ascii=False)


@agents.function_tool
def get_time(timezone: str) -> str:
    """Get the current time in a time zone."""
    MADE.append(("get_time", timezone))
    return json.dumps({"timezone": timezone, "current_time": NOW})


@agents.function_tool
def find_flights(origin: str, destination: str, date: str | None = None) -> str:
    """Find flights from one city to another, on a date if one is given."""
    MADE.append(("find_flights", origin, destination, date))
    return json.dumps({"flights": ["CA1501 08:00", "MU5101 09:00"]})


class Verdict(pydantic.BaseModel):
    about_weather: bool


class Outing(pydantic.BaseModel):
    name: str
    date: str
    participants: list[str]


class WeatherReport(pydantic.BaseModel):
    location: str
    temperature: float
    condition: str


@pytest.fixture(scope="module")
def served():
    with serve_in_thread(log=None) as server:
        yield server.url + "/v1"


@pytest.fixture(params=["OpenAIResponsesModel", "OpenAIChatCompletionsModel"],
                ids=["responses", "chat completions"])
def run(request, served):
    """run(steps): `steps(model)`, a coroutine function, on one event loop, with a model of
    this API on a fresh client of the served model."""
    MADE.clear()

    def go(steps):
        async def main():
            client = openai.AsyncOpenAI(base_url=served, api_key="offline", max_retries=0,
                                        timeout=30)
            try:
                return await steps(getattr(agents, request.param)(model=MODEL_ID,
                                                                  openai_client=client))
            finally:
                await client.close()
        return asyncio.run(main())

    return go


def weather_agent(model, **kw):
    return agents.Agent(name="weather_agent", model=model, tools=[get_weather, get_time],
                        instructions="Answer questions about the weather and the time.",
                        handoff_description="Answers questions about the weather.", **kw)


def kinds(result) -> list[str]:
    return [type(item).__name__ for item in result.new_items]


# ----------------------------------------------------------------- strict function tools

@pytest.mark.parametrize("text, made, said", [
    ("What's the weather in Chengdu, and the time in Tokyo?",
     [("get_weather", "Chengdu", "celsius", None), ("get_time", "Asia/Tokyo")],
     f"Chengdu is cloudy, 16°C. It is {NOW} in Asia/Tokyo."),
    ("What's the weather in Chengdu in Fahrenheit for the next 3 days?",
     [("get_weather", "Chengdu", "fahrenheit", 3)], "Chengdu is cloudy, 16°F."),
    ("成都天气怎么样？用华氏度。", [("get_weather", "成都", "fahrenheit", None)], "成都多云，16°F。"),
    ("Find flights from Beijing to Shanghai tomorrow.",
     [("find_flights", "Beijing", "Shanghai", "tomorrow")],
     'find_flights returned flights: ["CA1501 08:00", "MU5101 09:00"].'),
    ("帮我查明天从北京到上海的航班。", [("find_flights", "北京", "上海", "明天")],
     'find_flights 返回：“flights: ["CA1501 08:00", "MU5101 09:00"]”。'),
], ids=["two tools", "optional arguments said", "Chinese", "an optional date",
        "an optional date in Chinese"])
def test_strict_tools_are_called_once_for_each_thing_asked_then_answered(run, text, made,
                                                                        said):
    """Every function tool of the SDK is strict: its optional arguments come back filled
    (null, a default, a date as written), and that is still the call planned, not one to
    make again."""
    async def steps(model):
        agent = weather_agent(model)
        agent.tools.append(find_flights)
        return await agents.Runner.run(agent, text, max_turns=4)

    result = run(steps)
    assert MADE == made
    assert result.final_output == said
    assert kinds(result) == ["ToolCallItem"] * len(made) + ["ToolCallOutputItem"] * len(made) \
        + ["MessageOutputItem"]


# ----------------------------------------------------------------- handoffs

@pytest.mark.parametrize("text, said", [
    ("What's the weather in Chengdu?", "Chengdu is cloudy, 16°C."),
    ("成都天气怎么样？", "成都多云，16°C。"),
])
def test_a_handoff_lets_the_agent_handed_to_answer_with_its_own_tools(run, text, said):
    async def steps(model):
        triage = agents.Agent(name="triage_agent", model=model, handoffs=[weather_agent(model)],
                              instructions="Send each question to the agent that can answer it.")
        return await agents.Runner.run(triage, text, max_turns=5)

    result = run(steps)
    assert result.last_agent.name == "weather_agent"
    assert result.final_output == said, "it answers; it does not echo the transfer"
    assert kinds(result) == ["HandoffCallItem", "HandoffOutputItem", "ToolCallItem",
                             "ToolCallOutputItem", "MessageOutputItem"]


@pytest.mark.parametrize("text, said", [
    ("I want to talk to support.",
     "Hello, I'm support_agent, and I'm taking over this conversation. How can I help?"),
    ("我要找 support 客服。", "你好，我是 support_agent，这段对话由我接手。有什么可以帮你的？"),
])
def test_an_agent_handed_a_conversation_it_has_nothing_for_says_who_it_is(run, text, said):
    async def steps(model):
        support = agents.Agent(name="support_agent", model=model,
                               instructions="You are the support desk.",
                               handoff_description="Talks to people who want a person's help.")
        triage = agents.Agent(name="triage_agent", model=model, handoffs=[support],
                              instructions="Send each question to the agent that can answer it.")
        return await agents.Runner.run(triage, text, max_turns=4)

    result = run(steps)
    assert (result.last_agent.name, result.final_output) == ("support_agent", said)


# ----------------------------------------------------------------- agents as tools

@pytest.mark.parametrize("text, said", [
    ("What's the weather in Chengdu?", "Chengdu is cloudy, 16°C."),
    ("成都天气怎么样？", "成都多云，16°C。"),
])
def test_an_agent_used_as_a_tool_is_asked_the_request_and_its_answer_passed_on(run, text,
                                                                            said):
    async def steps(model):
        ask = weather_agent(model).as_tool(
            tool_name="ask_weather_agent",
            tool_description="Ask the weather agent about the weather in a city")
        planner = agents.Agent(name="planner", model=model, tools=[ask],
                               instructions="Answer with the help of your tools.")
        return await agents.Runner.run(planner, text, max_turns=4)

    result = run(steps)
    calls = [item.raw_item for item in result.new_items if type(item).__name__ == "ToolCallItem"]
    assert [json.loads(call.arguments) for call in calls] == [{"input": text}]
    assert MADE == [("get_weather", "Chengdu" if text.isascii() else "成都", "celsius", None)]
    assert result.final_output == said


# ----------------------------------------------------------------- guardrails

def guarded_agent(model):
    """The weather agent, with an input guardrail (another agent judges whether the request
    is about the weather) and an output guardrail (an answer must give a number)."""
    judge = agents.Agent(name="judge", model=model, output_type=Verdict,
                         instructions="Is the user's request about the weather?")

    @agents.input_guardrail
    async def about_weather(context, agent, given):
        verdict = (await agents.Runner.run(judge, given, context=context.context)).final_output
        return agents.GuardrailFunctionOutput(output_info=verdict,
                                              tripwire_triggered=not verdict.about_weather)

    @agents.output_guardrail
    async def gives_a_number(context, agent, answer):
        return agents.GuardrailFunctionOutput(
            output_info=answer, tripwire_triggered=not any(c.isdigit() for c in answer))

    return weather_agent(model, input_guardrails=[about_weather],
                         output_guardrails=[gives_a_number])


@pytest.mark.parametrize("text, said", [
    ("What's the weather in Chengdu?", "Chengdu is cloudy, 16°C."),
    ("成都会下雨吗？", "成都多云，16°C。"),
])
def test_a_request_both_guardrails_let_through_is_answered(run, text, said):
    async def steps(model):
        return await agents.Runner.run(guarded_agent(model), text, max_turns=4)

    result = run(steps)
    assert result.final_output == said
    assert result.input_guardrail_results[0].output.output_info == Verdict(about_weather=True)
    assert not result.output_guardrail_results[0].output.tripwire_triggered


@pytest.mark.parametrize("text", ["Write me a poem about the sea.", "给我写一首关于大海的诗。"])
def test_the_input_guardrail_stops_a_request_that_is_not_about_the_weather(run, text):
    async def steps(model):
        with pytest.raises(agents.InputGuardrailTripwireTriggered) as caught:
            await agents.Runner.run(guarded_agent(model), text, max_turns=4)
        return caught.value.guardrail_result.output.output_info

    assert run(steps) == Verdict(about_weather=False)


@pytest.mark.parametrize("text, said", [
    ("Will it rain tomorrow?", "Which city would you like the weather for?"),
    ("明天会下雨吗？", "请告诉我要查哪个城市？"),
])
def test_the_output_guardrail_stops_an_answer_without_a_number(run, text, said):
    """About the weather (the input guardrail agrees), but no city: the model asks back,
    and an answer with no number is what the output guardrail stops."""
    async def steps(model):
        with pytest.raises(agents.OutputGuardrailTripwireTriggered) as caught:
            await agents.Runner.run(guarded_agent(model), text, max_turns=4)
        return caught.value.guardrail_result.output.output_info

    assert run(steps) == said


# ----------------------------------------------------------------- sessions

@pytest.mark.parametrize("turns", [
    [("My name is Xiaoming.", "Nice to meet you, Xiaoming! How can I help?"),
     ("What's the weather in Chengdu?", "Chengdu is cloudy, 16°C."),
     ("What is my name?", "You told me your name is Xiaoming.")],
    [("我叫小明。", "你好小明！有什么可以帮你的？"), ("成都天气怎么样？", "成都多云，16°C。"),
     ("我叫什么名字？", "你刚才说你叫小明。")],
], ids=["English", "Chinese"])
def test_a_sqlite_session_carries_the_conversation_between_runs(run, turns, tmp_path):
    path = str(tmp_path / "agent.db")

    async def steps(model):
        said = []
        for text, _ in turns:  # a new session object each run, as a new process would make
            session = agents.SQLiteSession("xiaoming", path)
            said.append((await agents.Runner.run(weather_agent(model), text,
                                                 session=session)).final_output)
        return said, await agents.SQLiteSession("xiaoming", path).get_items()

    said, items = run(steps)
    assert said == [answer for _, answer in turns]
    assert len(items) == 8  # three questions, three answers, one call and its output


# ----------------------------------------------------------------- streaming

@pytest.mark.parametrize("text, said", [
    ("What's the weather in Chengdu?", "Chengdu is cloudy, 16°C."),
    ("成都天气怎么样？", "成都多云，16°C。"),
])
def test_a_streamed_run_delivers_the_answer_in_pieces(run, text, said):
    async def steps(model):
        streamed = agents.Runner.run_streamed(weather_agent(model), text)
        pieces, named = [], []
        async for event in streamed.stream_events():
            if event.type == "raw_response_event" and \
                    getattr(event.data, "type", "") == "response.output_text.delta":
                pieces.append(event.data.delta)
            elif event.type == "run_item_stream_event":
                named.append(event.name)
        return streamed.final_output, pieces, named

    final, pieces, named = run(steps)
    assert final == said and "".join(pieces) == said and len(pieces) > 1
    assert named == ["tool_called", "tool_output", "message_output_created"]


# ----------------------------------------------------------------- structured output

@pytest.mark.parametrize("text, expected", [
    ("Xiaoming and Xiaohong are going to a tea tasting in Chengdu on Saturday.",
     Outing(name="tea tasting", date="Saturday", participants=["Xiaoming", "Xiaohong"])),
    ("小明和小红周六要去成都参加品茶会。",
     Outing(name="品茶会", date="周六", participants=["小明", "小红"])),
], ids=["English", "Chinese"])
def test_an_output_type_is_filled_from_the_request(run, text, expected):
    async def steps(model):
        agent = agents.Agent(name="planner", model=model, output_type=Outing,
                             instructions="Note the outing.")
        return await agents.Runner.run(agent, text)

    assert run(steps).final_output == expected


def test_an_output_type_is_filled_from_a_tool_result(run):
    async def steps(model):
        return await agents.Runner.run(weather_agent(model, output_type=WeatherReport),
                                       "What's the weather in Chengdu?")

    result = run(steps)
    assert result.final_output == WeatherReport(location="Chengdu", temperature=16,
                                                condition="cloudy")
    assert kinds(result) == ["ToolCallItem", "ToolCallOutputItem", "MessageOutputItem"]


def test_a_plain_output_type(run):
    async def steps(model):
        agent = agents.Agent(name="counter", model=model, output_type=int)
        return await agents.Runner.run(agent, "How many legs does a spider have? 8, I think.")

    assert run(steps).final_output == 8
