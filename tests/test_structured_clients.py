"""The SDKs' structured-output helpers work against the offline model, as against the real
API: `client.chat.completions.parse(response_format=Model)` and
`openai.pydantic_function_tool(Model)` (in process and served over HTTP) and LangChain's
`with_structured_output(Model)` (served). The OpenAI Agents SDK's `Agent(output_type=...)`
is tested under both its models in test_agents_sdk.py."""

from __future__ import annotations

import asyncio
import datetime
import enum
import json

import openai
import pydantic
import pytest

from lesson_lib.offline import MODEL_ID, offline_async_client, offline_client
from lesson_lib.offline.server import serve_in_thread

EVENT_TEXT = "Alice and Bob are going to a science fair on Friday."
EXTRACT = [{"role": "system", "content": "Extract the event information."},
           {"role": "user", "content": EVENT_TEXT}]


class CalendarEvent(pydantic.BaseModel):
    name: str
    date: str
    participants: list[str]


EXPECTED = CalendarEvent(name="science fair", date="Friday", participants=["Alice", "Bob"])


class Unit(str, enum.Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class GetWeather(pydantic.BaseModel):
    """Get the current weather in a city."""
    location: str
    unit: Unit
    days: int | None


class CreateEvent(pydantic.BaseModel):
    """Add an event to the calendar."""
    name: str
    date: datetime.date
    participants: list[str]


class Contact(pydantic.BaseModel):
    name: str
    age: int
    email: str | None
    city: str | None


@pytest.fixture(scope="module")
def served():
    with serve_in_thread(log=None) as server:
        yield server.url + "/v1"


@pytest.fixture(params=["in process", "served"])
def client(request, served):
    if request.param == "in process":
        return offline_client()
    return openai.OpenAI(base_url=served, api_key="offline", max_retries=0, timeout=30)


# ----------------------------------------------------------------- the openai SDK

def test_parse_returns_the_parsed_model(client):
    completion = client.chat.completions.parse(model=MODEL_ID, messages=EXTRACT,
                                               response_format=CalendarEvent)
    message = completion.choices[0].message
    assert message.parsed == EXPECTED and message.refusal is None
    assert json.loads(message.content) == EXPECTED.model_dump()


def test_parse_with_nullable_fields(client):
    text = "Add Xiaoming to my contacts: he is 25 years old and lives in Shanghai."
    completion = client.chat.completions.parse(
        model=MODEL_ID, messages=[{"role": "user", "content": text}], response_format=Contact)
    assert completion.choices[0].message.parsed == Contact(name="Xiaoming", age=25, email=None,
                                                           city="Shanghai")


def test_pydantic_function_tools_get_valid_strict_calls(client):
    tools = [openai.pydantic_function_tool(GetWeather), openai.pydantic_function_tool(CreateEvent)]
    weather = client.chat.completions.parse(
        model=MODEL_ID, tools=tools,
        messages=[{"role": "user", "content": "What's the weather in Chengdu in Fahrenheit?"}])
    call = weather.choices[0].message.tool_calls[0].function
    assert call.parsed_arguments == GetWeather(location="Chengdu", unit=Unit.fahrenheit, days=None)
    forced = client.chat.completions.parse(
        model=MODEL_ID, tools=tools, messages=[{"role": "user", "content": "hello"}],
        tool_choice={"type": "function", "function": {"name": "CreateEvent"}})
    made = forced.choices[0].message.tool_calls[0].function.parsed_arguments
    assert isinstance(made, CreateEvent) and made.participants == []


def test_a_strict_date_argument_is_an_iso_date(client):
    tools = [openai.pydantic_function_tool(CreateEvent)]
    text = "Add an event to my calendar: Alice and Bob are going to a science fair on 2026-06-05."
    completion = client.chat.completions.parse(
        model=MODEL_ID, tools=tools, messages=[{"role": "user", "content": text}])
    made = completion.choices[0].message.tool_calls[0].function.parsed_arguments
    assert made == CreateEvent(name="science fair", date=datetime.date(2026, 6, 5),
                               participants=["Alice", "Bob"])


def test_the_async_client_parses_too():
    async def main():
        client = offline_async_client()
        completion = await client.chat.completions.parse(
            model=MODEL_ID, messages=EXTRACT, response_format=CalendarEvent)
        return completion.choices[0].message.parsed

    assert asyncio.run(main()) == EXPECTED


def test_a_structured_stream_is_parsed_by_the_sdk(client):
    with client.chat.completions.stream(model=MODEL_ID, messages=EXTRACT,
                                        response_format=CalendarEvent) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.parsed == EXPECTED


# ----------------------------------------------------------------- LangChain

def test_langchain_with_structured_output_default_method(served):
    langchain_openai = pytest.importorskip("langchain_openai")
    llm = langchain_openai.ChatOpenAI(base_url=served, api_key="offline", model=MODEL_ID,
                                      max_retries=0, timeout=30)
    structured = llm.with_structured_output(CalendarEvent)
    assert structured.invoke([("system", "Extract the event information."),
                              ("human", EVENT_TEXT)]) == EXPECTED
    raw = llm.with_structured_output(CalendarEvent, include_raw=True).invoke(EVENT_TEXT)
    assert raw["parsed"] == EXPECTED and raw["parsing_error"] is None
    sent = raw["raw"].response_metadata
    assert sent["model_name"] == MODEL_ID


def test_langchain_strict_tools_and_function_calling(served):
    langchain_openai = pytest.importorskip("langchain_openai")
    llm = langchain_openai.ChatOpenAI(base_url=served, api_key="offline", model=MODEL_ID,
                                      max_retries=0, timeout=30)
    text = "Add an event: " + EVENT_TEXT
    asked = llm.bind_tools([CalendarEvent], strict=True).invoke(text)
    assert [(c["name"], c["args"]) for c in asked.tool_calls] == [
        ("CalendarEvent", EXPECTED.model_dump())]
    forced = llm.with_structured_output(CalendarEvent, method="function_calling", strict=True)
    assert forced.invoke(text) == EXPECTED


@pytest.mark.parametrize("where", ["system", "human"])
def test_langchain_json_mode_follows_format_instructions(served, where):
    langchain_openai = pytest.importorskip("langchain_openai")
    parsers = pytest.importorskip("langchain_core.output_parsers")
    llm = langchain_openai.ChatOpenAI(base_url=served, api_key="offline", model=MODEL_ID,
                                      max_retries=0, timeout=30)
    instructions = ("Extract the event. Answer in JSON.\n"
                    + parsers.PydanticOutputParser(pydantic_object=CalendarEvent)
                    .get_format_instructions())
    messages = [("system", instructions), ("human", EVENT_TEXT)] if where == "system" else \
        [("human", instructions + "\n\n" + EVENT_TEXT)]
    structured = llm.with_structured_output(CalendarEvent, method="json_mode")
    assert structured.invoke(messages) == EXPECTED


def test_a_cut_structured_answer_is_refused_by_parse_as_with_the_real_api(client):
    with pytest.raises(openai.LengthFinishReasonError):
        client.chat.completions.parse(model=MODEL_ID, messages=EXTRACT,
                                      response_format=CalendarEvent, max_tokens=5)
