"""Message builders shared by the memory, budget and repair tests (plain dicts, API shape)."""

import json

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


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


def result(cid, content='{"location": "Chengdu", "temperature": 16, "condition": "cloudy"}'):
    return {"role": "tool", "tool_call_id": cid, "content": content}


def filled(memory, *messages):
    for m in messages:
        memory.add(m)
    return memory


def roles(memory):
    return [m["role"] for m in memory.to_api_format()]
