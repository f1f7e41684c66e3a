"""The offline model honours structured outputs and strict tools as the real API does:
`json_schema` content is always valid against the schema (and filled from the
conversation), `json_object` content is always a JSON object, and a strict function's
arguments are always valid against its parameters (lesson_lib/offline/structured.py).
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib import clock
from lesson_lib.offline import MODEL_ID, api, brain
from lesson_lib.offline.structured import pattern_sample

KEY = {"authorization": "Bearer offline"}
EVENT = {"type": "object", "properties": {
    "name": {"type": "string"}, "date": {"type": "string"},
    "participants": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "date", "participants"], "additionalProperties": False}
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string"}, "unit": {"type": "string",
                                                 "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"]}}}


def ask(messages, **body):
    """The completion the offline model answers (status 200 asserted)."""
    raw = json.dumps({"model": MODEL_ID, "messages": messages, **body}).encode()
    status, _, payload = api.handle("POST", "/v1/chat/completions", KEY, raw)
    assert status == 200, payload
    return json.loads(payload)


def content(messages, **body):
    return ask(messages, **body)["choices"][0]["message"]["content"]


def schema_format(schema, strict=True, name="answer"):
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema,
                                                   "strict": strict}}


def strict_object(properties):
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def user(text):
    return [{"role": "user", "content": text}]


# ----------------------------------------------------------------- json_schema, filled

@pytest.mark.parametrize("messages", [
    [{"role": "system", "content": "Extract the event information."},
     {"role": "user", "content": "Alice and Bob are going to a science fair on Friday."}],
    user("Extract the event: Alice and Bob are going to a science fair on Friday"),
], ids=["system prompt", "one user message"])
def test_the_classic_event_extraction(messages):
    got = json.loads(content(messages, response_format=schema_format(EVENT, name="event")))
    assert got == {"name": "science fair", "date": "Friday", "participants": ["Alice", "Bob"]}


def test_travellers_are_people():
    """Notebook 09's trip: a list of travellers is a list of people's names."""
    schema = strict_object({"city": {"type": "string"},
                            "date": {"type": ["string", "null"]},
                            "travellers": {"type": "array", "items": {"type": "string"}}})
    got = json.loads(content(user("Xiaoming and Lao Zhang fly to Chengdu on 2026-05-03."),
                             response_format=schema_format(schema, name="Trip")))
    assert got == {"city": "Chengdu", "date": "2026-05-03", "travellers": ["Xiaoming", "Lao Zhang"]}


def test_a_person_with_typed_and_formatted_fields():
    schema = strict_object({
        "name": {"type": "string"}, "age": {"type": "integer"},
        "email": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "city": {"type": ["string", "null"]}, "phone": {"type": ["string", "null"]},
        "birthday": {"type": "string", "format": "date"},
        "languages": {"type": "array", "items": {"type": "string"}}})
    text = ("John Smith is 42 years old, lives in Chengdu, email john@example.com, born "
            "March 3, 1984. He speaks English and Chinese.")
    got = json.loads(content(user(text), response_format=schema_format(schema, name="person")))
    assert got == {"name": "John Smith", "age": 42, "email": "john@example.com",
                   "city": "Chengdu", "phone": None, "birthday": "1984-03-03",
                   "languages": ["English", "Chinese"]}


def test_enums_numbers_and_booleans_come_from_the_words():
    schema = strict_object({
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "price": {"type": "number"}, "tickets": {"type": "integer"},
        "is_vegetarian": {"type": "boolean"}, "is_urgent": {"type": "boolean"}})
    text = "Book 3 tickets at $12.5 each, show Fahrenheit; I'm vegetarian, it's not urgent."
    got = json.loads(content(user(text), response_format=schema_format(schema)))
    assert got == {"unit": "fahrenheit", "price": 12.5, "tickets": 3, "is_vegetarian": True,
                   "is_urgent": False}


def test_a_relative_day_becomes_a_date_counted_from_the_clock():
    schema = strict_object({"title": {"type": "string"},
                            "day": {"type": "string", "format": "date"},
                            "starts": {"type": "string", "format": "time"}})
    with clock.frozen("2026-05-01T09:30:00+08:00"):  # a Friday
        got = json.loads(content(user("Dentist appointment next Tuesday at 3pm"),
                                 response_format=schema_format(schema)))
    assert got["day"] == "2026-05-05" and got["starts"] == "15:00:00Z", got


def test_chinese_days_are_read_too():
    schema = strict_object({"date": {"type": "string"},
                            "day": {"type": "string", "format": "date"}})
    with clock.frozen("2026-05-01T09:30:00+08:00"):  # a Friday
        got = json.loads(content(user("下周日去北京"), response_format=schema_format(schema)))
    assert got == {"date": "下周日", "day": "2026-05-10"}


@pytest.mark.parametrize("text, expected", [
    ("小明和小红周六要去成都参加品茶会。", {"name": "品茶会", "date": "周六", "participants": ["小明", "小红"]}),
    ("周五小王与小李一起参加读书会。", {"name": "读书会", "date": "周五", "participants": []}),
    ("小王与小李周五一起参加读书会。", {"name": "读书会", "date": "周五", "participants": ["小王", "小李"]}),
], ids=["小明和小红", "names not opening a clause", "小王与小李"])
def test_the_event_extraction_in_chinese(text, expected):
    """Chinese names open a clause ("小明和小红周六…"), the event is what one attends
    (参加品茶会); a name inside a clause is not guessed at."""
    assert json.loads(content(user(text), response_format=schema_format(EVENT))) == expected


@pytest.mark.parametrize("text, about", [
    ("Write me a poem about the sea.", False), ("Will it be sunny tomorrow?", True),
    ("What's the weather in Chengdu?", True), ("明天会下雨吗？", True), ("给我写一首关于大海的诗。", False),
])
def test_a_yes_no_key_reads_what_the_request_is_about(text, about):
    """"about_weather": the word "about" says nothing; rain and sun are weather."""
    schema = strict_object({"about_weather": {"type": "boolean"}})
    assert json.loads(content(user(text), response_format=schema_format(schema))) == \
        {"about_weather": about}


def test_values_come_from_tool_results_of_the_conversation():
    schema = strict_object({"location": {"type": "string"}, "temperature": {"type": "number"},
                            "condition": {"type": "string"}})
    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_current_weather", "arguments": '{"location":"Chengdu"}'}}
    messages = user("What's the weather in Chengdu?") + [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": '{"location": "Chengdu", "temp": 16, "condition": "cloudy"}'}]
    got = json.loads(content(messages, tools=[WEATHER_TOOL],
                             response_format=schema_format(schema)))
    assert got == {"location": "Chengdu", "temperature": 16, "condition": "cloudy"}


def test_an_answer_like_key_holds_the_models_reply():
    schema = strict_object({"answer": {"type": "string"}, "confidence": {"type": "number"}})
    got = json.loads(content(user("My name is Xiaoming."), response_format=schema_format(schema)))
    plain = content(user("My name is Xiaoming."))
    assert got == {"answer": plain, "confidence": 0}


def test_nothing_found_gives_the_documented_blanks():
    schema = {**strict_object({
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "colour": {"type": "string", "enum": ["red", "green"]},
        "rating": {"type": "integer", "minimum": 1, "maximum": 5},
        "kind": {"const": "report"}, "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"},
        "when": {"type": "string", "format": "date-time"},
        "link": {"$ref": "#/$defs/link"}}),
        "$defs": {"link": strict_object({"id": {"type": "string", "format": "uuid"},
                                         "next": {"anyOf": [{"$ref": "#/$defs/link"},
                                                            {"type": "null"}]}})}}
    with clock.frozen("2026-05-01T09:30:00+00:00"):
        got = json.loads(content(user("Hello"), response_format=schema_format(schema)))
    assert got == {"maybe": None, "colour": "red", "rating": 1, "kind": "report",
                   "flag": False, "tags": [], "code": "AAA-00",
                   "when": "2026-05-01T00:00:00Z",
                   "link": {"id": "00000000-0000-0000-0000-000000000000", "next": None}}
    jsonschema.Draft202012Validator(schema).validate(got)


def test_a_loose_schema_leaves_out_optional_keys_nothing_fills():
    schema = {"type": "object", "properties": {"city": {"type": "string"},
                                               "note": {"type": "string"},
                                               "count": {"type": "integer"}},
              "required": ["count"]}
    got = json.loads(content(user("Is it raining in Beijing?"),
                             response_format=schema_format(schema, strict=False)))
    assert got == {"city": "Beijing", "count": 0}


def test_a_reply_that_already_fits_is_kept(monkeypatch):
    said = '{"name": "PyCon", "date": "May 15", "participants": []}'
    monkeypatch.setattr(brain, "reply", lambda body: {
        "message": {"role": "assistant", "content": said}, "finish_reason": "stop"})
    assert content(user("Alice goes to a fair."), response_format=schema_format(EVENT)) == said


def test_streamed_structured_content_is_the_same_json():
    messages = user("Extract the event: Alice and Bob are going to a science fair on Friday")
    whole = content(messages, response_format=schema_format(EVENT))
    raw = json.dumps({"model": MODEL_ID, "messages": messages, "stream": True,
                      "response_format": schema_format(EVENT)}).encode()
    status, _, events = api.handle("POST", "/v1/chat/completions", KEY, raw)
    chunks = [json.loads(e[6:]) for e in events if e.startswith(b"data: {")]
    streamed = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks
                       if c["choices"])
    assert status == 200 and streamed == whole


# ----------------------------------------------------------------- always valid (property)

KEYS = st.sampled_from(["name", "date", "participants", "age", "city", "email", "unit",
                        "is_vegetarian", "answer", "score", "tags", "start_time", "title",
                        "languages", "count", "note", "price", "birthday"])
LEAVES = st.one_of(
    st.sampled_from([{"type": t} for t in ("string", "number", "integer", "boolean", "null")]),
    st.sampled_from([{"type": "string", "format": f}
                     for f in ("date", "date-time", "time", "email", "uuid", "ipv4")]),
    st.lists(st.sampled_from(["celsius", "fahrenheit", "red", "Friday", "positive"]),
             min_size=1, max_size=3, unique=True).map(lambda v: {"type": "string", "enum": v}),
    st.sampled_from([{"const": "fixed"}, {"const": 3}, {"enum": [1, 2, None]},
                     {"type": "string", "pattern": "^[a-z]+-\\d{2}$"}]),
    st.integers(-5, 50).map(lambda low: {"type": "integer", "minimum": low,
                                         "maximum": low + 10}),
)


def _bigger(children):
    return st.one_of(
        st.dictionaries(KEYS, children, min_size=1, max_size=4).map(strict_object),
        children.map(lambda c: {"type": "array", "items": c}),
        children.map(lambda c: {"anyOf": [c, {"type": "null"}]}),
        st.tuples(children, children).map(lambda c: {"anyOf": list(c)}))


SCHEMAS = st.builds(
    lambda props, shared: {**strict_object({**props, "shared": {"$ref": "#/$defs/Shared"}}),
                           "$defs": {"Shared": shared}},
    st.dictionaries(KEYS, st.recursive(LEAVES, _bigger, max_leaves=8), min_size=1,
                    max_size=5),
    st.recursive(LEAVES, _bigger, max_leaves=4))
TEXTS = st.sampled_from([
    "Alice and Bob are going to a science fair on Friday.",
    "John is 42 years old, lives in Chengdu, email john@example.com.",
    "Book 3 tickets at $12.5 for next Tuesday at 3pm in Fahrenheit, positive please.",
    "你好，我叫小明，明天去北京。", "hello", "", "name: red-12, tags: a, b and c",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, text=TEXTS, strict=st.booleans())
def test_json_schema_content_is_always_valid(schema, text, strict):
    messages = user(text or "?")
    got = json.loads(content(messages, response_format=schema_format(schema, strict=strict)))
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    assert not list(validator.iter_errors(got)), (schema, text, got)


def test_a_pattern_string_is_found_in_the_words():
    schema = strict_object({"code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"}})
    got = json.loads(content(user("My booking code is ABC-12, thanks."),
                             response_format=schema_format(schema)))
    assert got == {"code": "ABC-12"}


def test_pattern_samples_match_their_pattern():
    for pattern in ("^[A-Z]{3}-\\d{2}$", "^(cat|dog)s?$", "^\\w+@\\w+\\.com$", "x.y"):
        sample = pattern_sample(pattern)
        assert sample is not None and re.search(pattern, sample), (pattern, sample)


# ----------------------------------------------------------------- json_object

@pytest.mark.parametrize("messages, expected", [
    (user("Give me a JSON with fields name, age and city: Xiaoming is 25 years old and "
          "lives in Shanghai."), {"name": "Xiaoming", "age": 25, "city": "Shanghai"}),
    ([{"role": "system", "content": 'Reply in JSON like {"city": "...", "days": 0, '
                                    '"people": ["..."]}'}]
     + user("Alice and Bob fly to Beijing for 4 days."),
     {"city": "Beijing", "days": 4, "people": ["Alice", "Bob"]}),
    ([{"role": "system", "content": 'Respond in JSON with keys "answer" and "confidence".'}]
     + user("Hello"), {"answer": "Hello! I'm the offline teaching model. How can I help?",
                       "confidence": None}),
], ids=["fields in the request", "an example object", "keys in the system prompt"])
def test_json_mode_fills_the_keys_asked_for(messages, expected):
    assert json.loads(content(messages, response_format={"type": "json_object"})) == expected


@pytest.mark.parametrize("text, expected", [
    ("Tell me a joke about cats. Respond in JSON with `setup` and `punchline` keys",
     {"setup": None, "punchline": None}),
    ('Return JSON with "name" and "age" keys: Xiaoming is 25.', {"name": "Xiaoming", "age": 25}),
    ("Output a JSON object with the keys 'title' and 'year' for the film Inception (2010).",
     {"title": None, "year": 2010}),
    ("Give me JSON with fields: name, age. Xiaoming is 25.", {"name": "Xiaoming", "age": 25}),
    ("Xiaoming is 25 and lives in Shanghai. Answer in JSON containing name, age and city.",
     {"name": "Xiaoming", "age": 25, "city": "Shanghai"}),
    ("Return a JSON object where the key is `sentiment`. I love it!", {"sentiment": None}),
    ('Format your answer as JSON: {"city": ..., "days": ...}. 3 days in Chengdu.',
     {"city": "Chengdu", "days": 3}),
    ("用 JSON 回答，包含 name 和 age 字段：小明今年25岁。", {"name": "小明", "age": 25}),
    ("请以JSON格式返回，字段：name、age、city。小明25岁，住在上海。",
     {"name": "小明", "age": 25, "city": "上海"}),
    ("请返回 JSON，包含 name、age 两个字段。小明今年25岁。", {"name": "小明", "age": 25}),
], ids=["backticks before keys", "quotes before keys", "quotes after keys", "fields colon",
        "json containing", "the key is", "an example with ...", "包含…字段", "字段：", "两个字段"])
def test_json_mode_reads_the_keys_however_they_are_asked_for(text, expected):
    assert json.loads(content(user(text), response_format={"type": "json_object"})) == expected


def test_json_mode_without_named_keys_answers_in_an_answer_key():
    messages = user("What's your name? Answer in JSON.")
    got = json.loads(content(messages, response_format={"type": "json_object"}))
    assert got == {"answer": content(messages)}


def test_json_mode_never_touches_tool_calls():
    messages = user("What's the weather in Chengdu? Answer in JSON.")
    reply = ask(messages, tools=[WEATHER_TOOL], response_format={"type": "json_object"})
    message = reply["choices"][0]["message"]
    assert message["content"] is None and message["tool_calls"][0]["function"]["arguments"] \
        == '{"location":"Chengdu"}'


# ----------------------------------------------------------------- strict tools

def strict_tool(name, properties, description=""):
    return {"type": "function", "function": {
        "name": name, "description": description, "strict": True,
        "parameters": strict_object(properties)}}


EVENT_TOOL = strict_tool("create_event", EVENT["properties"], "Add an event to the calendar")


def brain_proposes(monkeypatch, name, arguments):
    """The brain proposes one call with these raw arguments; records what it saw."""
    seen = []

    def reply(body):
        seen.append(body)
        call = {"id": "call_x", "type": "function",
                "function": {"name": name, "arguments": arguments}}
        return {"message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls"}

    monkeypatch.setattr(brain, "reply", reply)
    return seen


@pytest.mark.parametrize("arguments", [
    '{"name":"science fair"}',                                      # keys missing
    '{"name":"science fair","date":5,"participants":"Alice"}',      # wrong types
    '{"name":"science fair","date":"Friday","participants":[],"room":"A"}',  # an extra key
    'not json',
], ids=["missing", "wrong types", "extra key", "not json"])
def test_a_strict_call_is_repaired_to_fit_its_schema(monkeypatch, arguments):
    brain_proposes(monkeypatch, "create_event", arguments)
    text = "Add an event: Alice and Bob are going to a science fair on Friday."
    reply = ask(user(text), tools=[EVENT_TOOL])
    got = json.loads(reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert got == {"name": "science fair", "date": "Friday", "participants": ["Alice", "Bob"]}


def test_a_non_strict_call_is_sent_as_the_brain_wrote_it(monkeypatch):
    brain_proposes(monkeypatch, "get_current_weather", '{"city":5}')
    reply = ask(user("Weather in Chengdu?"), tools=[WEATHER_TOOL])
    assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == \
        '{"city":5}'


def test_a_strict_call_that_cannot_be_made_valid_is_not_sent(monkeypatch):
    tool = strict_tool("lookup", {"code": {"type": "string", "pattern": "(?<=a)b"}})
    brain_proposes(monkeypatch, "lookup", '{"code":"x"}')
    reply = ask(user("Look up the code"), tools=[tool])
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "stop" and "tool_calls" not in choice["message"]
    assert "lookup" in choice["message"]["content"], choice


def test_the_brain_calls_a_strict_tool_without_asking_for_a_nullable_value():
    tool = strict_tool("get_weather", {
        "location": {"type": "string"}, "unit": {"$ref": "#/$defs/Unit"},
        "days": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        "Get the current weather in a city")
    tool["function"]["parameters"]["$defs"] = {"Unit": {"type": "string",
                                                        "enum": ["celsius", "fahrenheit"]}}
    reply = ask(user("What's the weather in Chengdu in Fahrenheit?"), tools=[tool])
    calls = reply["choices"][0]["message"]["tool_calls"]
    assert json.loads(calls[0]["function"]["arguments"]) == {
        "location": "Chengdu", "unit": "fahrenheit", "days": None}
    asked = ask(user("What's the weather in Fahrenheit?"), tools=[tool])["choices"][0]
    assert asked["message"]["content"] == "Which city would you like the weather for?"


def test_the_brain_fills_a_strict_event_tool_from_the_request():
    reply = ask(user("Add an event to my calendar: Alice and Bob are going to a science fair "
                     "on Friday."), tools=[EVENT_TOOL])
    call = reply["choices"][0]["message"]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == (
        "create_event", {"name": "science fair", "date": "Friday",
                         "participants": ["Alice", "Bob"]})


FLIGHT_PARAMETERS = {"origin": {"type": "string"}, "destination": {"type": "string"},
                     "date": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                     "max_stops": {"type": "integer", "default": 1}}


def loose(tool):
    """The same tool, not strict, with only the places required (as a non-strict SDK
    writes an optional argument)."""
    fn = {**tool["function"], "strict": False}
    fn["parameters"] = {**fn["parameters"], "required": ["origin", "destination"]}
    return {"type": "function", "function": fn}


def rounds(text, tool):
    """Each round's calls (name, arguments) until the model answers in words, at most 4."""
    messages, made = user(text), []
    for _ in range(4):
        message = ask(messages, tools=[tool])["choices"][0]["message"]
        if not message.get("tool_calls"):
            return made, message["content"]
        made.append([(c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for c in message["tool_calls"]])
        messages += [message] + [{"role": "tool", "tool_call_id": c["id"],
                                  "content": '{"flights": ["CA981 08:00"]}'}
                                 for c in message["tool_calls"]]
    return made, None


@pytest.mark.parametrize("text, date", [
    ("Find flights from Beijing to Shanghai tomorrow", "tomorrow"),
    ("Find flights from Beijing to Shanghai", None),
    ("帮我查明天从北京到上海的航班", "明天"),
], ids=["a date", "no date (null)", "Chinese"])
def test_a_strict_call_that_came_back_filled_is_not_made_again(text, date):
    """A strict tool's call leaves with every property (null for an unsaid optional one, a
    date as written): it is still the call the model planned, so one round, then words,
    as with the same tool not strict."""
    strict = strict_tool("search_flights", FLIGHT_PARAMETERS, "Search flights between two cities")
    made, said = rounds(text, strict)
    assert len(made) == 1 and len(made[0]) == 1, made
    assert made[0][0][1]["date"] == date and made[0][0][1]["max_stops"] == 1
    assert said and "CA981" in said
    plain_made, plain_said = rounds(text, loose(strict))
    assert len(plain_made) == 1 and said == plain_said


def test_calls_that_would_be_sent_alike_are_one_call():
    """The brain plans a call per unit; sent as a schema that keeps no unit they would be
    the same call twice in parallel: it is made once."""
    view = {"model": MODEL_ID, "messages": user("Weather in Chengdu in celsius and fahrenheit"),
            "tools": [WEATHER_TOOL]}

    def fit(name, arguments):
        return {"location": arguments["location"]}

    assert len(brain.reply(view)["message"]["tool_calls"]) == 2
    with brain.sent_as(fit):
        calls = brain.reply(view)["message"]["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"location": "Chengdu", "unit": "celsius"}]


AGENT_AS_TOOL = {"type": "function", "function": {
    "name": "ask_weather_agent", "description": "Ask the weather agent about a city",
    "strict": True, "parameters": {
        "title": "AgentAsToolInput", "type": "object", "additionalProperties": False,
        "properties": {"input": {"title": "Input", "type": "string"}}, "required": ["input"]}}}


@pytest.mark.parametrize("text", ["What's the weather in Chengdu?", "成都天气怎么样？"])
def test_an_agent_used_as_a_tool_is_asked_the_request_itself(text):
    """The Agents SDK's agent.as_tool(): the other agent gets the question, not "Chengdu"."""
    call = ask(user(text), tools=[AGENT_AS_TOOL])["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"input": text}


def test_a_forced_strict_call_with_nothing_to_fill_is_still_valid():
    reply = ask(user("hello"), tools=[EVENT_TOOL],
                tool_choice={"type": "function", "function": {"name": "create_event"}})
    call = reply["choices"][0]["message"]["tool_calls"][0]["function"]
    from lesson_lib import clock

    # typed best-effort values: no name, today for a date, nobody
    assert json.loads(call["arguments"]) == {"name": "", "date": clock.now().date().isoformat(),
                                             "participants": []}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, text=TEXTS)
def test_forced_strict_calls_are_always_valid(schema, text):
    tool = {"type": "function", "function": {"name": "record", "description": "Record it",
                                             "strict": True, "parameters": schema}}
    reply = ask(user(text or "?"), tools=[tool],
                tool_choice={"type": "function", "function": {"name": "record"}})
    arguments = json.loads(reply["choices"][0]["message"]["tool_calls"][0]["function"]
                           ["arguments"])
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    assert not list(validator.iter_errors(arguments)), (schema, text, arguments)


@pytest.mark.parametrize("text, names", [
    ("小明和老张 2026-05-03 飞成都。", ["小明", "老张"]),   # a space before the date
    ("小明和老张 5 月 3 日飞成都。", ["小明", "老张"]),     # 日飞成 is no one
    ("老张说他明天去成都。", ["老张"]),
    ("我和王芳下周五去上海。", ["王芳"]),
    ("成都的天气怎么样？", [])])                            # a place is not a person
def test_chinese_names_are_people_not_pieces_of_places_or_dates(text, names):
    from lesson_lib.offline.structured import chinese_names_in

    assert chinese_names_in(text) == names
