"""lesson_lib.tools: the seed tools, schema derivation, the registry, and execute() never raising."""

import json
from datetime import datetime, timezone
from typing import Annotated, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

from lesson_lib.clock import frozen
from lesson_lib.places import lookup
from lesson_lib.tools import (
    TIME_TOOL,
    WEATHER_DATA,
    WEATHER_TOOL,
    ToolRegistry,
    default_registry,
    execute_tool,
    get_current_time,
    get_current_weather,
    get_tools_schema,
    schema_from_function,
)

FROZEN = "2026-05-01T09:30:00+00:00"


def weather(location, unit="celsius"):
    return json.loads(get_current_weather(location, unit))


def as_error(result: str) -> dict:
    """The error JSON execute() returned, checked for its {"error", "hint"} shape."""
    assert isinstance(result, str), f"expected a str result, got {type(result).__name__}"
    data = json.loads(result)
    assert isinstance(data, dict) and set(data) == {"error", "hint"}, (
        f"expected {{'error', 'hint'}}, got {data!r}")
    assert data["error"] and data["hint"], f"expected non-empty error and hint, got {data!r}"
    return data


# --------------------------------------------------------------------------- weather


@pytest.mark.parametrize("city, temperature, condition", [
    ("Beijing", 18, "cloudy"),
    ("Shanghai", 22, "sunny"),
    ("San Francisco", 15, "foggy"),
    ("Chengdu", 16, "cloudy"),
])
def test_weather_has_the_seed_cities(city, temperature, condition):
    got = weather(city)
    expected = {"location": city, "temperature": temperature, "unit": "celsius",
                "condition": condition}
    assert {k: got[k] for k in expected} == expected, f"expected {expected}, got {got}"
    assert set(got) == {"location", "temperature", "unit", "condition", "wind", "humidity"}, (
        f"expected the six result keys, got {sorted(got)}")


def test_chengdu_has_a_light_breeze():
    got = weather("Chengdu")
    assert got["wind"] == "light breeze", f"expected 'light breeze', got {got['wind']!r}"


@pytest.mark.parametrize("city", list(WEATHER_DATA))
def test_every_weather_city_is_in_the_gazetteer_and_complete(city):
    place = lookup(city)
    assert place is not None and place.name == city, f"expected places to know {city!r}"
    for name in (city, place.zh):
        got = weather(name)
        assert "error" not in got and got["location"] == city, f"{name!r}: got {got}"
        assert got["wind"] and got["humidity"].endswith("%"), f"{name!r}: got {got}"


@pytest.mark.parametrize("name, canonical", [
    ("成都", "Chengdu"), ("chengdu", "Chengdu"), ("CHENGDU", "Chengdu"), ("成都市", "Chengdu"),
    ("北京", "Beijing"), ("peking", "Beijing"), ("上海", "Shanghai"),
    ("旧金山", "San Francisco"), ("san francisco", "San Francisco"), (" 东京 ", "Tokyo"),
])
def test_weather_accepts_chinese_and_english_names(name, canonical):
    got = weather(name)["location"]
    assert got == canonical, f"{name!r}: expected {canonical!r}, got {got!r}"


@pytest.mark.parametrize("city, fahrenheit", [
    ("Chengdu", 60.8), ("Beijing", 64.4), ("Shanghai", 71.6), ("San Francisco", 59.0),
])
def test_fahrenheit_converts_and_rounds_to_one_decimal(city, fahrenheit):
    got = weather(city, "fahrenheit")
    assert (got["temperature"], got["unit"]) == (fahrenheit, "fahrenheit"), (
        f"expected {fahrenheit} fahrenheit, got {got}")


@pytest.mark.parametrize("place", ["Atlantis", "Harbin", "火星", ""])
def test_unknown_place_is_an_honest_error_with_known_locations(place):
    got = get_current_weather(place)
    data = json.loads(got)
    assert data == {"error": f"no weather data for {place!r}",
                    "known_locations": list(WEATHER_DATA)}, f"got {data}"
    assert place in got, f"expected {place!r} unescaped (ensure_ascii=False) in {got}"


def test_weather_result_keeps_chinese_readable():
    result = get_current_weather("火星")
    assert "\\u" not in result, f"expected no \\u escapes, got {result}"


def test_weather_called_directly_with_an_unknown_unit_says_so():
    got = weather("Chengdu", "kelvin")
    assert "error" in got and "kelvin" in got["error"], f"got {got}"


# --------------------------------------------------------------------------- time


@pytest.mark.parametrize("zone, expected", [
    ("Asia/Shanghai", "2026-05-01 17:30:00 CST+0800"),
    ("America/New_York", "2026-05-01 05:30:00 EDT-0400"),
    ("UTC", "2026-05-01 09:30:00 UTC+0000"),
])
def test_time_with_a_frozen_clock_is_exact(zone, expected):
    with frozen(FROZEN):
        got = json.loads(get_current_time(zone))
    assert got == {"timezone": zone, "current_time": expected}, f"expected {expected}, got {got}"


def test_time_defaults_to_shanghai_and_runs_through_execute():
    with frozen(FROZEN):
        got = execute_tool("get_current_time", "{}")
    expected = '{"timezone": "Asia/Shanghai", "current_time": "2026-05-01 17:30:00 CST+0800"}'
    assert got == expected, f"expected {expected}, got {got}"


def test_time_with_env_var(monkeypatch):
    monkeypatch.setenv("LESSON_FROZEN_TIME", FROZEN)
    got = json.loads(get_current_time("Asia/Tokyo"))["current_time"]
    assert got == "2026-05-01 18:30:00 JST+0900", f"got {got}"


@pytest.mark.parametrize("zone", ["Mars/Base", "", "成都", "../etc/passwd"])
def test_unknown_time_zone_returns_the_seed_error_shape(zone):
    got = json.loads(get_current_time(zone))
    assert got == {"error": f"Unknown time zone: {zone}"}, f"got {got}"


# --------------------------------------------------------------------------- schemas


@pytest.mark.parametrize("fn, hand_written", [
    (get_current_weather, WEATHER_TOOL), (get_current_time, TIME_TOOL),
])
def test_derived_schema_equals_the_hand_written_one_key_for_key(fn, hand_written):
    derived = schema_from_function(fn)
    assert derived == hand_written, f"expected {hand_written}\ngot {derived}"
    same_order = json.dumps(derived, ensure_ascii=False) == json.dumps(hand_written, ensure_ascii=False)
    assert same_order, "expected the keys in the same order as the hand-written schema"


def test_get_tools_schema_is_the_seed_schemas_as_fresh_copies():
    tools = get_tools_schema()
    assert tools == [WEATHER_TOOL, TIME_TOOL], f"got {[t['function']['name'] for t in tools]}"
    tools[0]["function"]["name"] = "changed"
    assert get_tools_schema()[0] == WEATHER_TOOL, "mutating a returned schema changed the registry"


def _walk_keys(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _walk_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk_keys(inner)


def book_table(
    restaurant: Annotated[str, "Restaurant name, e.g. Hotpot House."],
    people: int,
    when: str = "19:00",
    seating: Literal["indoor", "outdoor"] = "indoor",
    budget: float = 100.0,
    vegetarian: bool = False,
    note: Annotated[str, Field(description="Anything the restaurant should know.")] = "",
) -> dict:
    """Use this when the user wants to book a table at a restaurant.
    Needs the restaurant and the number of people.

    Returns a confirmation. (Not part of the description: only the first paragraph is.)

    Args:
        restaurant: Loses to the Annotated description.
        people (int): How many people will eat,
            children included.
        when: Time of the booking, 24-hour HH:MM.
        seating: Where to sit.
        vegetarian: Whether everyone eats vegetarian.

    Returns:
        budget: not a parameter description (this is the Returns section).
    """
    return {"restaurant": restaurant, "people": people, "when": when, "seating": seating,
            "budget": budget, "vegetarian": vegetarian, "note": note}


BOOK_TABLE_SCHEMA = {
    "type": "function",
    "function": {
        "name": "book_table",
        "description": "Use this when the user wants to book a table at a restaurant. "
                       "Needs the restaurant and the number of people.",
        "parameters": {
            "type": "object",
            "properties": {
                "restaurant": {"type": "string", "description": "Restaurant name, e.g. Hotpot House."},
                "people": {"type": "integer",
                           "description": "How many people will eat, children included."},
                "when": {"type": "string", "description": "Time of the booking, 24-hour HH:MM.",
                         "default": "19:00"},
                "seating": {"type": "string", "enum": ["indoor", "outdoor"],
                            "description": "Where to sit.", "default": "indoor"},
                "budget": {"type": "number", "default": 100.0},
                "vegetarian": {"type": "boolean", "description": "Whether everyone eats vegetarian.",
                               "default": False},
                "note": {"type": "string", "description": "Anything the restaurant should know.",
                         "default": ""},
            },
            "required": ["restaurant", "people"],
        },
    },
}


def test_decorator_derives_a_learner_tool_schema():
    registry = ToolRegistry()
    decorated = registry.tool(book_table)
    assert decorated is book_table, "expected the decorator to return the function unchanged"
    got = registry.schemas()
    assert got == [BOOK_TABLE_SCHEMA], f"expected {BOOK_TABLE_SCHEMA}\ngot {got}"
    assert "title" not in set(_walk_keys(got)), f"expected no pydantic 'title' keys, got {got}"


def test_decorator_with_description_and_name_override():
    registry = ToolRegistry()

    @registry.tool(description="Use this to add two numbers.", name="add_numbers")
    def add(a: int, b: int = 2) -> int:
        """Adds."""
        return a + b

    schema = registry.schemas()[0]["function"]
    assert (schema["name"], schema["description"]) == ("add_numbers", "Use this to add two numbers."), (
        f"got {schema}")
    assert registry.execute("add_numbers", '{"a": 40}') == "42", "expected the int result JSON-encoded"
    assert add(1) == 3, "expected the decorated function to stay callable"


def test_bare_decorator_registers_under_the_function_name():
    registry = ToolRegistry()

    @registry.tool
    def shout(text: str) -> str:
        """Use this to make text loud."""
        return text.upper()

    assert registry.names() == ["shout"] and "shout" in registry, f"got {registry.names()}"
    assert registry.execute("shout", '{"text": "hi"}') == "HI"


def test_numpy_docstring_and_field_default_descriptions():
    def convert(amount: float, currency: str = Field("CNY", description="ISO 4217 code.")) -> str:
        """Use this to convert money.

        Parameters
        ----------
        amount : float
            How much money,
            in the source currency.
        currency : str
            Loses to the Field description.

        Returns
        -------
        str
        """
        return f"{amount} {currency}"

    props = schema_from_function(convert)["function"]["parameters"]["properties"]
    expected = {"amount": {"type": "number", "description": "How much money, in the source currency."},
                "currency": {"type": "string", "description": "ISO 4217 code.", "default": "CNY"}}
    assert props == expected, f"expected {expected}, got {props}"


def test_a_parameter_called_title_survives_title_stripping():
    def rename(title: str) -> str:
        """Use this to rename a document."""
        return title

    params = schema_from_function(rename)["function"]["parameters"]
    assert params == {"type": "object", "properties": {"title": {"type": "string"}},
                      "required": ["title"]}, f"got {params}"


@pytest.mark.parametrize("source, fragment", [
    ("def f(x: str):\n    return x", "no docstring"),
    ('def f(x):\n    """Doc."""', "no type annotation"),
    ('def f(*args: str):\n    """Doc."""', "named parameters only"),
])
def test_underivable_functions_raise_a_clear_error(source, fragment):
    namespace: dict = {}
    exec(source, namespace)
    with pytest.raises(TypeError) as caught:
        ToolRegistry().register(namespace["f"])
    assert fragment in str(caught.value), f"expected {fragment!r}, got {caught.value}"


@pytest.mark.parametrize("schema, fragment", [
    ({"name": "f"}, '"type": "function"'),
    ({"type": "function", "function": {"name": "bad name!"}}, "1-64"),
    ({"type": "function", "function": {"name": "f", "parameters": {"type": "array"}}}, '"object"'),
])
def test_register_refuses_a_malformed_schema(schema, fragment):
    with pytest.raises(ValueError) as caught:
        ToolRegistry().register(lambda: "x", schema)
    assert fragment in str(caught.value), f"expected {fragment!r}, got {caught.value}"


# --------------------------------------------------------------------------- the registry


def test_registry_basics():
    registry = default_registry
    assert registry.names() == ["get_current_weather", "get_current_time"], registry.names()
    assert len(registry) == 2 and "get_current_time" in registry and "nope" not in registry
    assert registry.get("get_current_weather").function is get_current_weather
    assert registry.get("nope") is None and registry.get(["unhashable"]) is None
    assert repr(registry) == "ToolRegistry(['get_current_weather', 'get_current_time'])"


def test_subset_keeps_the_given_order_and_refuses_unknown_names():
    smaller = default_registry.subset(["get_current_time"])
    assert smaller.schemas() == [TIME_TOOL] and len(default_registry) == 2, smaller.names()
    both = default_registry.subset(["get_current_time", "get_current_weather"])
    assert both.names() == ["get_current_time", "get_current_weather"], both.names()
    with pytest.raises(ValueError, match="get_news"):
        default_registry.subset(["get_news"])


def test_registering_a_name_again_replaces_it_in_place():
    registry = default_registry.subset(["get_current_weather", "get_current_time"])
    registry.register(lambda location, unit="celsius": "sunny everywhere", WEATHER_TOOL)
    assert registry.names() == ["get_current_weather", "get_current_time"], registry.names()
    got = registry.execute("get_current_weather", '{"location": "Chengdu"}')
    assert got == "sunny everywhere", f"expected the new function to run, got {got}"


def test_register_keeps_its_own_copy_of_the_schema():
    schema = json.loads(json.dumps(TIME_TOOL))
    registry = ToolRegistry()
    registry.register(get_current_time, schema)
    schema["function"]["name"] = "changed"
    assert registry.names() == ["get_current_time"] and registry.schemas() == [TIME_TOOL]


# --------------------------------------------------------------------------- execute


def test_execute_runs_the_seed_weather_tool():
    got = json.loads(execute_tool("get_current_weather", '{"location": "成都", "unit": "fahrenheit"}'))
    assert (got["location"], got["temperature"]) == ("Chengdu", 60.8), f"got {got}"


def test_missing_required_argument_error_matches_the_lesson_text():
    got = json.loads(execute_tool("get_current_weather", "{}"))
    expected = {"error": "invalid arguments for get_current_weather: 'location' is a required property",
                "hint": 'call get_current_weather again with location, e.g. {"location": "Chengdu"}'}
    assert got == expected, f"expected {expected}, got {got}"


BAD_CALLS = {
    "empty string": ("get_current_weather", "", "empty string"),
    "blank string": ("get_current_weather", "  \n", "empty string"),
    "not JSON": ("get_current_weather", "location=Chengdu", "not valid JSON"),
    "trailing comma": ("get_current_weather", '{"location": "Chengdu",}', "not valid JSON"),
    "single quotes": ("get_current_weather", "{'location': 'Chengdu'}", "not valid JSON"),
    "JSON list": ("get_current_weather", '["Chengdu"]', "got an array"),
    "JSON string": ("get_current_weather", '"Chengdu"', "got a string"),
    "JSON null": ("get_current_weather", "null", "got null"),
    "JSON number": ("get_current_time", "8", "got a number"),
    "not a str": ("get_current_weather", {"location": "Chengdu"}, "must be a JSON string"),
    "None": ("get_current_weather", None, "must be a JSON string"),
    "unknown tool": ("get_weather", '{"location": "Chengdu"}', "unknown tool 'get_weather'"),
    "tool name not a str": (None, "{}", "unknown tool None"),
    "missing required": ("get_current_weather", '{"unit": "celsius"}', "'location' is a required"),
    "wrong type": ("get_current_weather", '{"location": 42}', "42 is not of type 'string'"),
    "wrong type (bool)": ("get_current_time", '{"timezone": true}', "(at 'timezone')"),
    "outside the enum": ("get_current_weather", '{"location": "Chengdu", "unit": "kelvin"}',
                         "'kelvin' is not one of ['celsius', 'fahrenheit'] (at 'unit')"),
    "extra argument": ("get_current_weather", '{"location": "Chengdu", "city": "Chengdu"}',
                       "('city' was unexpected)"),
    "deeply nested": ("get_current_time", "[" * 100_000, "not valid JSON"),
}


@pytest.mark.parametrize("name, arguments, fragment", BAD_CALLS.values(), ids=list(BAD_CALLS))
def test_every_bad_call_returns_error_json_and_never_raises(name, arguments, fragment):
    data = as_error(execute_tool(name, arguments))
    assert fragment in data["error"], f"expected {fragment!r} in the error, got {data['error']!r}"


def test_unknown_tool_hint_lists_the_available_tools():
    hint = as_error(execute_tool("get_news", "{}"))["hint"]
    for name in ("get_current_weather", "get_current_time"):
        assert name in hint, f"expected {name} in the hint, got {hint!r}"


@pytest.mark.parametrize("arguments, fragment", [
    ('{"location": "Chengdu", "unit": "kelvin"}', '["celsius", "fahrenheit"]'),
    ('{"location": "Chengdu", "city": "x"}', "leave out city"),
    ('{"location": 42}', '"string"'),
    ('{"location": "Chengdu",}', "no trailing comma"),
])
def test_hints_say_what_to_do(arguments, fragment):
    hint = as_error(execute_tool("get_current_weather", arguments))["hint"]
    assert fragment in hint, f"expected {fragment!r} in the hint, got {hint!r}"


def test_exception_inside_a_tool_names_type_and_message_without_traceback():
    registry = ToolRegistry()

    @registry.tool
    def divide(a: float, b: float) -> float:
        """Use this to divide a by b."""
        return a / b

    data = as_error(registry.execute("divide", '{"a": 1, "b": 0}'))
    assert data["error"] == "divide raised ZeroDivisionError: division by zero", f"got {data}"
    assert "Traceback" not in json.dumps(data), f"expected no traceback, got {data}"


@pytest.mark.parametrize("value, expected", [
    ({"ok": True, "city": "成都"}, '{"ok": true, "city": "成都"}'),
    ([1, 2], "[1, 2]"),
    (None, "null"),
    (3.5, "3.5"),
    (datetime(2026, 5, 1, tzinfo=timezone.utc), '"2026-05-01 00:00:00+00:00"'),
])
def test_non_string_results_are_json_encoded(value, expected):
    registry = ToolRegistry()
    registry.register(lambda: value, {"type": "function", "function": {"name": "give"}})
    got = registry.execute("give", "{}")
    assert got == expected, f"expected {expected!r}, got {got!r}"


def test_a_learner_tool_runs_through_execute_with_defaults():
    registry = ToolRegistry()
    registry.tool(book_table)
    got = json.loads(registry.execute("book_table", '{"restaurant": "Hotpot House", "people": 4}'))
    assert (got["people"], got["when"], got["seating"]) == (4, "19:00", "indoor"), f"got {got}"
    bad = as_error(registry.execute("book_table", '{"restaurant": "x", "people": "four"}'))
    assert "'four' is not of type 'integer' (at 'people')" in bad["error"], f"got {bad}"


# --------------------------------------------------------------------------- never raises


def _fragile(text: str, count: int = 1) -> str:
    """Use this to test: fails on some inputs, returns odd values on others."""
    if "x" in text:
        raise ValueError(f"no x allowed: {text!r}")
    return {"echo": text * min(count, 3)} if count > 0 else None


_fuzz_registry = default_registry.subset(["get_current_weather", "get_current_time"])
_fuzz_registry.register(_fragile)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


def _check_never_raises(name, arguments) -> None:
    result = _fuzz_registry.execute(name, arguments)
    assert isinstance(result, str), f"expected a str, got {type(result).__name__}"
    try:
        data = json.loads(result)
    except ValueError:
        return
    if isinstance(data, dict) and "error" in data and "hint" in data:
        assert isinstance(data["error"], str) and "Traceback" not in result, result


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_fuzz_registry.names()) | st.text(max_size=20), arguments=st.text())
def test_execute_never_raises_for_arbitrary_text(name, arguments):
    _check_never_raises(name, arguments)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_fuzz_registry.names()),
       arguments=st.dictionaries(
           st.sampled_from(["location", "unit", "timezone", "text", "count"]) | st.text(max_size=5),
           _json_values, max_size=4))
def test_execute_never_raises_for_arbitrary_json_objects(name, arguments):
    _check_never_raises(name, json.dumps(arguments))


def test_a_broken_hand_written_schema_becomes_an_error_not_an_exception():
    registry = ToolRegistry()
    schema = {"type": "function", "function": {"name": "broken", "parameters": {
        "type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}}}
    registry.register(lambda x: x, schema)
    data = as_error(registry.execute("broken", '{"x": 1}'))
    assert data["error"].startswith("could not check the arguments for broken"), f"got {data}"


@pytest.mark.parametrize("text, says", [
    ('{"location": "Chengdu",}', "a trailing comma at line 1 column 23"),
    ("[\n1,\n]", "a trailing comma at line 2 column 2"),
    ('{"location": "Chengdu"', "it stops at column 23, before the JSON is complete"),
    ("{location: 1}", "unexpected 'l' at line 1 column 2"),
    ('{"a": 1}{', "unexpected '{' at line 1 column 9"),
])
def test_broken_json_is_described_the_same_on_every_python(text, says):
    """json's own messages differ by version (3.13: "Illegal trailing comma …"); ours do not."""
    from lesson_lib.tools import json_problem

    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    assert json_problem(caught.value) == says


def test_strict_version_is_accepted_keeps_meaning_and_leaves_the_tool_alone():
    import copy

    import jsonschema

    from lesson_lib.protocol import validate_request
    from lesson_lib.tools import WEATHER_TOOL, strict_version, without_nulls

    before = copy.deepcopy(WEATHER_TOOL)
    strict = strict_version(WEATHER_TOOL)
    assert WEATHER_TOOL == before and strict["function"]["strict"] is True
    validate_request({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                      "tools": [strict]})
    check = jsonschema.Draft202012Validator(strict["function"]["parameters"]).is_valid
    assert check({"location": "Chengdu", "unit": None})
    assert not check({"location": None, "unit": None})
    assert not check({"location": "Chengdu", "unit": "kelvin"})
    assert without_nulls({"location": "Chengdu", "unit": None}) == {"location": "Chengdu"}
