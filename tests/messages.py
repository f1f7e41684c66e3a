"""Message builders and tools shared by the memory, budget, repair, agent and app tests."""

import json

from hypothesis import strategies as st

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "the city, e.g. Chengdu"}},
        "required": ["location"]}}}
TIME_TOOL = {"type": "function", "function": {
    "name": "get_current_time", "description": "Get the current time in a time zone",
    "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}}}}


def user(text="What's the weather in Chengdu?"):
    return {"role": "user", "content": text}


def answer(text="Chengdu is cloudy, 16°C."):
    return {"role": "assistant", "content": text}


def call(cid, location="Chengdu"):
    args = json.dumps({"location": location}, ensure_ascii=False)
    return {"id": cid, "type": "function",
            "function": {"name": "get_current_weather", "arguments": args}}


def asks(*ids, content=None):
    return {"role": "assistant", "content": content, "tool_calls": [call(i) for i in ids]}


def failing_weather_tools(error: Exception):
    """A ToolRegistry whose get_current_weather always raises `error` (a broken service)."""
    from lesson_lib.tools import ToolRegistry  # noqa: PLC0415

    tools = ToolRegistry()

    @tools.tool
    def get_current_weather(location: str) -> str:
        """Use this when the user asks about the weather in a city.

        Args:
            location: the city, e.g. Chengdu
        """
        raise error

    return tools


def result(cid, content='{"location": "Chengdu", "temperature": 16, "condition": "cloudy"}'):
    return {"role": "tool", "tool_call_id": cid, "content": content}


def filled(memory, *messages):
    for m in messages:
        memory.add(m)
    return memory


def roles(memory):
    return [m["role"] for m in memory.to_api_format()]


@st.composite
def conversations(draw, texts, results=None, kinds=("user", "assistant", "system", "round"),
                  max_size=24):
    """A valid conversation as units: one message, or a whole tool round (1-3 calls whose
    results come in any order)."""
    units, k = [], 0
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=max_size)):
        if kind != "round":
            units.append([{"role": kind, "content": draw(texts)}])
            continue
        ids = [f"call_{k + j}" for j in range(draw(st.integers(1, 3)))]
        k += len(ids)
        ask = {"role": "assistant", "content": draw(st.sampled_from([None, "", "let me check"])),
               "tool_calls": [call(i) for i in ids]}
        units.append([ask, *[result(i, draw(texts if results is None else results)) for i in draw(st.permutations(ids))]])
    return units
