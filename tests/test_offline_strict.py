"""The offline model is strict where the real API is strict: what OpenAI answers with a
400 (or a 401) is refused offline too, with the same text, `param` and `code`, through
the real `openai` SDK; and what OpenAI accepts (every field of the SDK's `create()`,
strict schemas built by the SDK and by LangChain) is still answered.

Texts are in docs/protocol.md, with their source (verbatim or reconstructed).
"""

from __future__ import annotations

import inspect
import json

import openai
import pydantic
import pytest

from lesson_lib.offline import MODEL_ID, brain, offline_client
from lesson_lib.protocol import REQUEST_FIELDS, ProtocolError, json_type, validate_request

ASK = [{"role": "user", "content": "What's the weather in Chengdu?"}]
PARAMETERS = {"type": "object", "properties": {
    "location": {"type": "string", "description": "the city, e.g. Chengdu"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["location", "unit"], "additionalProperties": False}


def weather(name="get_current_weather", strict=False, **parameters):
    """A weather tool; `parameters` replace keys of its (strict-ready) schema."""
    function = {"name": name, "description": "Get the current weather in a city",
                "parameters": {**PARAMETERS, **parameters}}
    return {"type": "function", "function": {**function, **({"strict": True} if strict else {})}}


def without(mapping, key):
    return {k: v for k, v in mapping.items() if k != key}


def schema_format(schema, strict=True, name="weather_report"):
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema,
                                                   "strict": strict}}


NESTED = {**PARAMETERS, "properties": {**PARAMETERS["properties"], "place": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    "required": ["location", "unit", "place"]}
CALL = {"id": "call_a", "type": "function",
        "function": {"name": "get_current_weather", "arguments": '{"location":"Chengdu"}'}}


@pytest.fixture
def fake_brain(monkeypatch):
    """The brain answers a fixed text and records what reaches it."""
    bodies = []

    def reply(body):
        bodies.append(body)
        return {"message": {"role": "assistant", "content": "Chengdu is cloudy, 16°C."},
                "finish_reason": "stop"}

    monkeypatch.setattr(brain, "reply", reply)
    return bodies


@pytest.fixture
def client():
    return offline_client()


def create(client, **kw):
    kw.setdefault("model", MODEL_ID)
    kw.setdefault("messages", ASK)
    return client.chat.completions.create(**kw)


# ----------------------------------------------------------------- refused, as the API refuses

REFUSALS = {  # name: (create() arguments, code, param, message); all are 400s
    "an unknown field": (
        dict(extra_body={"foo_bar": 1}), None, None,
        "Unrecognized request argument supplied: foo_bar"),
    "two unknown fields": (
        dict(extra_body={"foo_bar": 1, "colour": "blue"}), None, None,
        "Unrecognized request arguments supplied: colour, foo_bar"),
    "a function message without name": (
        dict(messages=ASK + [{"role": "function", "content": "16°C"}]), None,
        "messages.[1].name",
        "Missing parameter 'name': messages with role 'function' must have a 'name'."),
    "a tool name with a space": (
        dict(tools=[weather("get weather")]), "invalid_value", "tools[0].function.name",
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string "
        "that matches the pattern '^[a-zA-Z0-9_-]+$'."),
    "a tool name with a dot, second tool": (
        dict(tools=[weather(), weather("weather.get")]), "invalid_value",
        "tools[1].function.name",
        "Invalid 'tools[1].function.name': string does not match pattern. Expected a string "
        "that matches the pattern '^[a-zA-Z0-9_-]+$'."),
    "a tool name over 64 characters": (
        dict(tools=[weather("w" * 65)]), "string_above_max_length", "tools[0].function.name",
        "Invalid 'tools[0].function.name': string too long. Expected a string with maximum "
        "length 64, but got a string with length 65 instead."),
    "a tool of an unknown type": (
        dict(tools=[{**weather(), "type": "plugin"}]), "invalid_value", "tools[0].type",
        "Invalid value: 'plugin'. Supported values are: 'function' and 'custom'."),
    "a tool that is a string": (
        dict(tools=["get_current_weather"]), "invalid_type", "tools[0]",
        "Invalid type for 'tools[0]': expected an object, but got a string instead."),
    "a content part without type": (
        dict(messages=[{"role": "user", "content": [{"text": "hi"}]}]),
        "missing_required_parameter", "messages[0].content[0].type",
        "Missing required parameter: 'messages[0].content[0].type'."),
    "a content part of the Responses API": (
        dict(messages=[{"role": "user", "content": [{"type": "text", "text": "hi"},
                                                    {"type": "input_text", "text": "hi"}]}]),
        "invalid_value", "messages[0].content[1].type",
        "Invalid value: 'input_text'. Supported values are: 'text', 'image_url', "
        "'input_audio', 'refusal', 'audio', and 'file'."),
    "a content part that is a string": (
        dict(messages=[{"role": "user", "content": ["hi"]}]), "invalid_type",
        "messages[0].content[0]",
        "Invalid type for 'messages[0].content[0]': expected an object, but got a string "
        "instead."),
    "a text part without text": (
        dict(messages=[{"role": "user", "content": [{"type": "text"}]}]),
        "missing_required_parameter", "messages[0].content[0].text",
        "Missing required parameter: 'messages[0].content[0].text'."),
    "a tool call without type": (
        dict(messages=ASK + [{"role": "assistant", "content": None,
                              "tool_calls": [without(CALL, "type")]},
                             {"role": "tool", "tool_call_id": "call_a", "content": "16°C"}],
             tools=[weather()]),
        "missing_required_parameter", "messages[1].tool_calls[0].type",
        "Missing required parameter: 'messages[1].tool_calls[0].type'."),
    "json_object without the word json": (
        dict(response_format={"type": "json_object"}), None, "messages",
        "'messages' must contain the word 'json' in some form, to use 'response_format' of "
        "type 'json_object'."),
    "an unknown response_format type": (
        dict(response_format={"type": "xml"}), "invalid_value", "response_format.type",
        "Invalid value: 'xml'. Supported values are: 'text', 'json_object', and "
        "'json_schema'."),
    "response_format as a string": (
        dict(response_format="json_object"), "invalid_type", "response_format",
        "Invalid type for 'response_format': expected an object, but got a string instead."),
    "json_schema without a name": (
        dict(response_format={"type": "json_schema", "json_schema": {"schema": PARAMETERS}}),
        "missing_required_parameter", "response_format.json_schema.name",
        "Missing required parameter: 'response_format.json_schema.name'."),
    "strict function without additionalProperties": (
        dict(tools=[weather(strict=True, additionalProperties=True)]),
        "invalid_function_parameters", "tools[0].function.parameters",
        "Invalid schema for function 'get_current_weather': In context=(), "
        "'additionalProperties' is required to be supplied and to be false."),
    "strict function with an optional property": (
        dict(tools=[weather(), weather("get_weather", strict=True, required=["location"])]),
        "invalid_function_parameters", "tools[1].function.parameters",
        "Invalid schema for function 'get_weather': In context=(), 'required' is required to "
        "be supplied and to be an array including every key in properties. Missing 'unit'."),
    "strict function without required": (
        dict(tools=[{**weather(strict=True), "function": {
            **weather(strict=True)["function"], "parameters": without(PARAMETERS, "required")}}]),
        "invalid_function_parameters", "tools[0].function.parameters",
        "Invalid schema for function 'get_current_weather': In context=(), 'required' is "
        "required to be supplied and to be an array including every key in properties. "
        "Missing 'location'."),
    "strict function requiring an unknown key": (
        dict(tools=[weather(strict=True, required=["location", "unit", "date"])]),
        "invalid_function_parameters", "tools[0].function.parameters",
        "Invalid schema for function 'get_current_weather': In context=(), 'required' is "
        "required to be supplied and to be an array including every key in properties. "
        "Extra required key 'date' supplied."),
    "strict function with an open nested object": (
        dict(tools=[weather(strict=True, **NESTED)]), "invalid_function_parameters",
        "tools[0].function.parameters",
        "Invalid schema for function 'get_current_weather': In context=('properties', "
        "'place'), 'additionalProperties' is required to be supplied and to be false."),
    "strict response_format without additionalProperties": (
        dict(messages=[{"role": "user", "content": "Chengdu's weather?"}],
             response_format=schema_format(without(PARAMETERS, "additionalProperties"))),
        "invalid_json_schema", "response_format",
        "Invalid schema for response_format 'weather_report': In context=(), "
        "'additionalProperties' is required to be supplied and to be false."),
    "strict response_format with an optional property": (
        dict(response_format=schema_format({**PARAMETERS, "required": ["unit"]})),
        "invalid_json_schema", "response_format",
        "Invalid schema for response_format 'weather_report': In context=(), 'required' is "
        "required to be supplied and to be an array including every key in properties. "
        "Missing 'location'."),
    "a response_format schema that is not JSON Schema": (
        dict(response_format=schema_format({"type": "object", "properties": {
            "x": {"type": "strnig"}}}, strict=False)),
        "invalid_json_schema", "response_format",
        "Invalid schema for response_format 'weather_report': In context=('properties', 'x', "
        "'type'), 'strnig' is not valid under any of the given schemas."),
    "temperature above 2": (
        dict(temperature=5), "decimal_above_max_value", "temperature",
        "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 5 "
        "instead."),
    "temperature below 0": (
        dict(temperature=-0.5), "decimal_below_min_value", "temperature",
        "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got "
        "-0.5 instead."),
    "temperature as a string": (
        dict(temperature="hot"), "invalid_type", "temperature",
        "Invalid type for 'temperature': expected a number, but got a string instead."),
    "top_p above 1": (
        dict(top_p=1.5), "decimal_above_max_value", "top_p",
        "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 1.5 "
        "instead."),
    "presence_penalty below -2": (
        dict(presence_penalty=-3), "decimal_below_min_value", "presence_penalty",
        "Invalid 'presence_penalty': decimal below minimum value. Expected a value >= -2, but "
        "got -3 instead."),
    "stream as a string": (
        dict(stream="yes"), "invalid_type", "stream",
        "Invalid type for 'stream': expected a boolean, but got a string instead."),
    "parallel_tool_calls as a string": (
        dict(tools=[weather()], parallel_tool_calls="false"), "invalid_type",
        "parallel_tool_calls",
        "Invalid type for 'parallel_tool_calls': expected a boolean, but got a string "
        "instead."),
    "five stop sequences": (
        dict(stop=["\n", "User:", "Human:", "AI:", "###"]), "array_above_max_length", "stop",
        "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an "
        "array with length 5 instead."),
    "stop as a number": (
        dict(stop=4), "invalid_type", "stop",
        "Invalid type for 'stop': expected one of a string or array of strings, but got an "
        "integer instead."),
    "max_completion_tokens as a boolean": (
        dict(max_completion_tokens=True), "invalid_type", "max_completion_tokens",
        "Invalid type for 'max_completion_tokens': expected an integer, but got a boolean "
        "instead."),
}


def test_up_to_four_stop_sequences_are_accepted(client, fake_brain):
    for stop in ("\n", [], ["\n", "User:", "Human:", "AI:"]):
        assert create(client, stop=stop).choices[0].message.content


@pytest.mark.parametrize("case", list(REFUSALS))
def test_what_the_api_refuses_is_refused_offline(client, fake_brain, case):
    kwargs, code, param, message = REFUSALS[case]
    with pytest.raises(openai.BadRequestError) as caught:
        create(client, **kwargs)
    error = caught.value
    got = (error.status_code, error.code, error.param, error.body["message"], error.type)
    assert got == (400, code, param, message, "invalid_request_error"), f"{case}: got {got}"
    assert error.message == f"Error code: 400 - {message}"
    assert fake_brain == [], "a refused request must never reach the brain"


@pytest.mark.parametrize("authorization", [openai.Omit(), "", "Bearer "])
def test_a_request_without_a_key_gets_the_real_401(client, fake_brain, authorization):
    with pytest.raises(openai.AuthenticationError) as caught:
        create(client, extra_headers={"Authorization": authorization})
    error = caught.value
    assert (error.status_code, error.code, error.param, error.type) == (
        401, None, None, "invalid_request_error")
    assert error.body["message"] == (
        "You didn't provide an API key. You need to provide your API key in an Authorization "
        "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password "
        "field (with blank username) if you're accessing the API from your browser and are "
        "prompted for a username. You can obtain an API key from "
        "https://platform.openai.com/account/api-keys.")
    with pytest.raises(openai.AuthenticationError):
        client.models.list(extra_headers={"Authorization": authorization})


def test_the_sdk_always_sends_a_key(client, fake_brain):
    """The in-process transport gets the SDK's own Authorization header: no 401."""
    assert create(client).choices[0].message.content


# ----------------------------------------------------------------- the order of the checks

def test_the_checks_come_in_the_documented_order(client, fake_brain):
    orphan = ASK + [{"role": "tool", "tool_call_id": "call_a", "content": "16°C"}]
    order = [  # (arguments with two problems, the start of the text that must win)
        (dict(model="gpt-x", extra_body={"foo": 1}), "The model `gpt-x` does not exist"),
        (dict(extra_body={"foo": 1}, tools=[weather("a b")]), "Unrecognized request argument"),
        (dict(tools=[weather("a b")], response_format="json"),
         "Invalid 'tools[0].function.name'"),
        (dict(response_format="json", messages=orphan), "Invalid type for 'response_format'"),
        (dict(response_format={"type": "json_object"}, messages=orphan),
         "Invalid parameter: messages with role 'tool'"),
        (dict(response_format={"type": "json_object"}, temperature=5),
         "'messages' must contain the word 'json'"),
        (dict(temperature=5, stream_options={"include_usage": True}), "Invalid 'temperature'"),
    ]
    for kwargs, opening in order:
        with pytest.raises(openai.APIStatusError) as caught:
            create(client, **kwargs)
        assert caught.value.body["message"].startswith(opening), (kwargs, caught.value.message)
    assert fake_brain == []


# ----------------------------------------------------------------- accepted, as the API accepts

def sdk_fields() -> set[str]:
    """The request fields `chat.completions.create()` of the installed SDK can send."""
    signature = inspect.signature(openai.resources.chat.Completions.create)
    transport = {"self", "extra_headers", "extra_query", "extra_body", "timeout"}
    return set(signature.parameters) - transport


def test_every_field_the_sdk_can_send_is_a_known_request_field():
    assert sdk_fields() - REQUEST_FIELDS == set(), (
        "the installed openai SDK sends fields the offline model would refuse as "
        "unrecognized: add them to lesson_lib.protocol.REQUEST_FIELDS")


def test_a_request_using_many_real_options_is_answered(client, fake_brain):
    reply = create(
        client, messages=[{"role": "developer", "content": "Answer in JSON."}] + ASK,
        tools=[weather(strict=True)], tool_choice="auto", parallel_tool_calls=False,
        response_format={"type": "json_object"}, temperature=2, top_p=0, n=2, stop=["\n\n"],
        max_completion_tokens=50, presence_penalty=-2, frequency_penalty=2,
        logit_bias={"1734": -100}, logprobs=True, top_logprobs=2, user="xiaoming", seed=7,
        safety_identifier="user-123", metadata={"lesson": "03"}, store=False,
        service_tier="auto", modalities=["text"], reasoning_effort="low", verbosity="low",
        prompt_cache_key="lesson-03", stream=False)
    assert len(reply.choices) == 2 and fake_brain, "the request was not answered"


@pytest.mark.parametrize("response_format", [
    {"type": "text"},
    {"type": "json_object"},
    schema_format(PARAMETERS),
    schema_format(NESTED, strict=False),
    schema_format({**NESTED, "properties": {**NESTED["properties"], "place": {
        **NESTED["properties"]["place"], "additionalProperties": False}}}),
], ids=["text", "json_object", "strict json_schema", "loose json_schema", "strict nested"])
def test_valid_response_formats_are_accepted(client, fake_brain, response_format):
    messages = [{"role": "system", "content": "Reply with a JSON object."}] + ASK
    assert create(client, messages=messages, response_format=response_format).choices


@pytest.mark.parametrize("content", [
    "Return json, please.", [{"type": "text", "text": "Answer as JSON."}]])
def test_the_word_json_counts_in_any_case_and_in_text_parts(client, fake_brain, content):
    messages = ASK + [{"role": "user", "content": content}]
    assert create(client, messages=messages, response_format={"type": "json_object"}).choices


def test_content_parts_and_function_messages_in_their_real_shape_are_accepted(client,
                                                                              fake_brain):
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "What's in this picture?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/chengdu.png"}}]},
        {"role": "assistant", "content": None,
         "function_call": {"name": "get_current_weather", "arguments": "{}"}},
        {"role": "function", "name": "get_current_weather", "content": "16°C"}]
    assert create(client, messages=messages).choices


class WeatherReport(pydantic.BaseModel):
    location: str
    temperature: float
    unit: str | None


def test_strict_tools_made_by_the_sdk_are_accepted(client, fake_brain):
    tool = openai.pydantic_function_tool(WeatherReport, name="report_weather")
    assert tool["function"]["strict"] is True
    assert create(client, tools=[tool]).choices


def test_a_structured_output_request_made_by_the_sdk_is_accepted(client, monkeypatch):
    report = {"location": "Chengdu", "temperature": 16, "unit": None}
    monkeypatch.setattr(brain, "reply", lambda body: {
        "message": {"role": "assistant", "content": json.dumps(report)}, "finish_reason": "stop"})
    parsed = client.chat.completions.parse(model=MODEL_ID, messages=ASK,
                                           response_format=WeatherReport)
    assert parsed.choices[0].message.parsed == WeatherReport(**report)


def test_langchain_structured_output_and_options_reach_the_served_model():
    langchain_openai = pytest.importorskip("langchain_openai")
    from lesson_lib.offline.server import serve_in_thread  # noqa: PLC0415

    with serve_in_thread(log=None) as server:
        llm = langchain_openai.ChatOpenAI(
            base_url=server.url + "/v1", api_key="offline", model=MODEL_ID, max_retries=0,
            timeout=30, temperature=0.3, top_p=0.9, max_tokens=200, seed=1, n=1,
            presence_penalty=0, frequency_penalty=0, stop=["\n\n\n"], stream_usage=True)
        assert llm.invoke("My name is Xiaoming.").content
        assert "".join(c.content for c in llm.stream("My name is Xiaoming."))
        structured = llm.with_structured_output(WeatherReport, method="json_schema",
                                                strict=True)
        report = structured.invoke("What's the weather in Chengdu?")  # accepted and answered
        assert isinstance(report, WeatherReport) and report.location == "Chengdu", report


# ----------------------------------------------------------------- the rules on their own

def test_json_type_names_json_types_never_python_ones():
    names = [json_type(v) for v in ({}, [], "s", 1, 1.5, True, None)]
    assert names == ["an object", "an array", "a string", "an integer", "a number",
                     "a boolean", "null"]


def test_validate_request_applies_the_same_rules_before_sending():
    body = {"model": "any-model", "messages": ASK}
    validate_request({**body, "temperature": 0, "tools": [weather(strict=True)]})
    for extra, param in (({"foo_bar": 1}, None), ({"tools": {"a": 1}}, "tools"),
                         ({"response_format": {"type": "json_object"}}, "messages")):
        with pytest.raises(ProtocolError) as caught:
            validate_request({**body, **extra})
        assert caught.value.param == param, caught.value.message
