"""Compaction on the offline model, through the real `openai` SDK, in process and served:
server-side (`context_management` on create: a `compaction` output item once the context
crosses the threshold, read in place of everything before it, chained by
previous_response_id, by the input array, or in a conversation), the standalone
`responses.compact` endpoint, their refusals, the sealed content, the teaching view
`peek`, and the Agents SDK's `OpenAIResponsesCompactionSession` and server-side
compaction through `ModelSettings`, run unmodified against the served model."""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import re

import openai
import pytest
import responses_clients
from openai.types.responses import CompactedResponse, ResponseCompactionItem

from lesson_lib.offline import MODEL_ID, offline_client
from lesson_lib.offline import compaction as cp
from lesson_lib.offline import responses as rs
from lesson_lib.offline.state import MemoryState
from lesson_lib.tokens import count_messages

server, client = responses_clients.server, responses_clients.client  # the two ways in
served_client = responses_clients.served_client
create, refused = responses_clients.create, responses_clients.refused

PAD = " ".join(["I like long walks by the river in the morning."] * 40)
TURNS = ["My name is Xiaoming. " + PAD, "What's the time? " + PAD, "Tell me about tea. " + PAD,
         "What is my name?"]
COMPACTION = [{"type": "compaction", "compact_threshold": 1000}]
CMP_ID = re.compile(r"cmp_[0-9a-f]{50}")


def chain(client, turns=TURNS, **kw) -> list:
    """The turns chained by previous_response_id, each with `kw`: the responses."""
    made, previous = [], None
    for text in turns:
        made.append(create(client, input=text, previous_response_id=previous, **kw))
        previous = made[-1].id
    return made


def compactions(response) -> list:
    return [item for item in response.output if item.type == "compaction"]


# ----------------------------------------------------------------- server-side

def test_a_chain_is_compacted_once_it_crosses_the_threshold_and_still_remembers(client):
    made = chain(client, context_management=COMPACTION)
    plain = chain(client)
    assert [bool(compactions(r)) for r in made] == [False, False, True, False]
    item = made[2].output[0]
    assert isinstance(item, ResponseCompactionItem) and CMP_ID.fullmatch(item.id)
    assert item.encrypted_content.startswith("gAAAAA"), "shaped as the real content"
    assert "Xiaoming" not in item.encrypted_content
    assert made[2].output[1].type == "message", "the answer follows the compaction item"
    assert plain[2].usage.input_tokens > 1000 > made[2].usage.input_tokens
    assert made[3].usage.input_tokens < plain[3].usage.input_tokens
    assert made[3].output_text == plain[3].output_text == "You told me your name is Xiaoming."
    # what the answer was made from is what the item keeps, counted by lesson_lib.tokens
    seen = cp.peek(item)
    assert made[2].usage.input_tokens == count_messages(seen["kept"], MODEL_ID)
    assert seen["read_tokens"] == plain[2].usage.input_tokens
    assert seen["kept"][0] == {"role": "user", "content": "My name is Xiaoming."}
    assert seen["kept"][-1]["content"].startswith("Tell me about tea."), "the turn, whole"
    assert seen["dropped"]["assistant_messages"] == 1
    assert seen["dropped"]["user_messages_shortened"] == 2
    assert seen["users_in_clear"] is False


def test_under_the_threshold_nothing_is_compacted(client):
    made = chain(client, turns=TURNS[:2], context_management=[
        {"type": "compaction", "compact_threshold": 100_000}])
    assert not any(compactions(r) for r in made)


def test_stateless_chaining_reads_the_item_in_place_of_what_came_before(client):
    history, said = [], []
    for text in TURNS:
        history.append({"role": "user", "content": text})
        response = create(client, input=history, store=False, context_management=COMPACTION)
        said.append(response)
        history += [item.model_dump(exclude_none=True) for item in response.output]
    assert [bool(compactions(r)) for r in said] == [False, False, True, False]
    assert said[3].output_text == "You told me your name is Xiaoming."
    # the guide's latency tip: the items before the latest compaction item can be dropped
    start = max(k for k, item in enumerate(history) if item.get("type") == "compaction")
    pruned = create(client, input=history[start:-1], store=False)
    assert pruned.usage.input_tokens == said[3].usage.input_tokens
    assert pruned.output_text == said[3].output_text
    # counting reads the item as create does
    counted = client.responses.input_tokens.count(model=MODEL_ID, input=history[:-1])
    assert counted.input_tokens == said[3].usage.input_tokens


def test_without_a_threshold_the_context_is_compacted_when_it_would_not_fit():
    client = offline_client(800, state=MemoryState())
    over = refused(lambda: chain(client, turns=TURNS[:2]))
    assert over["code"] == "context_length_exceeded"
    made = chain(client, turns=TURNS[:2], context_management=[{"type": "compaction"}])
    assert compactions(made[1]) and made[1].usage.input_tokens <= 800


def test_a_compaction_trigger_compacts_now_and_must_be_last(client):
    first = create(client, input="My name is Xiaoming.")
    now = create(client, previous_response_id=first.id, input=[
        {"role": "user", "content": "What is my name?"}, {"type": "compaction_trigger"}])
    assert compactions(now) and now.output_text == "You told me your name is Xiaoming."
    body = refused(lambda: create(client, input=[
        {"type": "compaction_trigger"}, {"role": "user", "content": "hi"}]))
    assert body["message"] == "A compaction_trigger item must be the final input item."
    assert body["param"] == "input[0]"


WEATHER = {"type": "function", "name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
RESULT = json.dumps({"temperature": 16, "condition": "cloudy"})


def test_a_turn_under_way_is_kept_as_it_is(client):
    """Compacted between a call's output and its answer, the call and output survive: the
    model answers from them, then the next compaction drops them."""
    first = create(client, input="My name is Xiaoming. " + PAD)
    asked = create(client, input="What's the weather in Chengdu?", tools=[WEATHER],
                   previous_response_id=first.id)
    call = asked.output[0]
    output = {"type": "function_call_output", "call_id": call.call_id, "output": RESULT}
    plain = create(client, previous_response_id=asked.id, tools=[WEATHER], input=[output])
    now = create(client, previous_response_id=asked.id, tools=[WEATHER],
                 input=[output, {"type": "compaction_trigger"}])
    assert now.output_text == plain.output_text and "16" in now.output_text
    seen = cp.peek(now.output[0])
    assert [i["type"] for i in seen["tail"]] == ["function_call", "function_call_output"]
    assert [m["role"] for m in seen["kept"]] == ["user", "assistant", "user"], "under budget"
    later = create(client, previous_response_id=now.id, input="What is my name?",
                   context_management=[{"type": "compaction", "compact_threshold": 1000}],
                   tools=[WEATHER])
    assert later.output_text == "You told me your name is Xiaoming."
    again = client.responses.compact(model=MODEL_ID, previous_response_id=later.id)
    dropped = cp.peek(again.output[-1])["dropped"]
    assert dropped["function_calls"] == dropped["function_call_outputs"] == 1
    assert cp.peek(again.output[-1])["tail"] == []


def test_a_conversation_holds_the_item_and_reads_from_it(client):
    conversation = client.conversations.create()
    made = [create(client, input=text, conversation=conversation.id,
                   context_management=COMPACTION) for text in TURNS]
    assert [bool(compactions(r)) for r in made] == [False, False, True, False]
    types = [item.type for item in client.conversations.items.list(conversation.id,
                                                                    order="asc")]
    assert "compaction" in types
    assert made[3].output_text == "You told me your name is Xiaoming."
    assert made[3].usage.input_tokens < 1000


def test_the_compaction_item_is_streamed_first_whole(client):
    previous = chain(client, turns=TURNS[:2])[-1].id
    with client.responses.stream(model=MODEL_ID, input=TURNS[2], previous_response_id=previous,
                                 context_management=COMPACTION) as stream:
        events = list(stream)
        final = stream.get_final_response()
    added = [e for e in events if e.type == "response.output_item.added"]
    assert added[0].item.type == "compaction" and added[0].output_index == 0
    assert added[0].item.encrypted_content == final.output[0].encrypted_content
    assert [e.type for e in events][-1] == "response.completed"
    assert final.output_text == chain(client, turns=TURNS[:3])[-1].output_text


def test_the_same_sequence_gives_the_same_sealed_content():
    runs = []
    for _ in range(2):
        made = chain(offline_client(state=MemoryState()), context_management=COMPACTION)
        runs.append([item.model_dump() for r in made for item in r.output])
    assert runs[0] == runs[1]


# ----------------------------------------------------------------- responses.compact

def test_compact_returns_the_user_messages_then_one_compaction_item(client):
    first = create(client, input="My name is Xiaoming.")
    second = create(client, input="What's the time?", previous_response_id=first.id)
    compacted = client.responses.compact(model=MODEL_ID, previous_response_id=second.id)
    assert isinstance(compacted, CompactedResponse)
    assert compacted.object == "response.compaction" and compacted.id.startswith("resp_")
    kinds = [(item.type, getattr(item, "role", None)) for item in compacted.output]
    assert kinds == [("message", "user"), ("message", "user"), ("compaction", None)]
    assert compacted.output[0].content[0].text == "My name is Xiaoming."
    seen = cp.peek(compacted.output[-1])
    assert seen["users_in_clear"] is True
    assert [m["role"] for m in seen["kept"]] == ["assistant"], "the last answer"
    assert seen["dropped"]["assistant_messages"] == 1
    usage = compacted.usage
    assert usage.input_tokens == seen["read_tokens"] == second.usage.input_tokens + count_messages(
        [{"role": "assistant", "content": second.output_text}], MODEL_ID) - 3
    assert usage.output_tokens == seen["kept_tokens"]
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    # the compacted window goes on as the next input
    # (the SDK types the user messages as output messages: dump without its warnings)
    window = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
    answer = create(client, input=[*window, {"role": "user", "content": "What is my name?"}])
    assert answer.output_text == "You told me your name is Xiaoming."


def test_compact_takes_an_input_array_and_drops_the_tool_calls(client):
    weather = WEATHER
    asked = create(client, input="What's the weather in Chengdu?", tools=[weather])
    call = asked.output[0]
    items = [{"role": "user", "content": "What's the weather in Chengdu?"},
             call.model_dump(exclude_none=True),
             {"type": "function_call_output", "call_id": call.call_id,
              "output": RESULT}]
    answered = create(client, input=items, tools=[weather])
    items += [item.model_dump(exclude_none=True) for item in answered.output]
    compacted = client.responses.compact(model=MODEL_ID, input=items)
    seen = cp.peek(compacted.output[-1])
    assert seen["dropped"]["function_calls"] == 1
    assert seen["dropped"]["function_call_outputs"] == 1
    assert seen["kept"] == [{"role": "assistant", "content": answered.output_text}]


def test_compact_raw_body_has_the_documented_keys(client):
    raw = client.responses.with_raw_response.compact(model=MODEL_ID, input="hello")
    body = json.loads(raw.text)
    assert list(body) == ["id", "object", "created_at", "output", "usage"]
    assert list(body["output"][-1]) == ["id", "type", "encrypted_content"]
    assert body["output"][0] == {"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": "hello"}]}


def test_the_compact_fields_are_the_sdks():
    from openai.resources.responses import Responses

    params = set(inspect.signature(Responses.compact).parameters) - {
        "self", "extra_headers", "extra_query", "extra_body", "timeout"}
    assert params == rs.COMPACT_FIELDS, params ^ rs.COMPACT_FIELDS


def test_the_async_client_compacts_both_ways():
    from lesson_lib.offline import offline_async_client

    async def main():
        client = offline_async_client(state=MemoryState())
        previous = None
        for text in TURNS[:3]:
            made = await client.responses.create(model=MODEL_ID, input=text,
                                                 previous_response_id=previous,
                                                 context_management=COMPACTION)
            previous = made.id
        compacted = await client.responses.compact(model=MODEL_ID,
                                                   previous_response_id=previous)
        return made, compacted

    made, compacted = asyncio.run(main())
    assert made.output[0].type == "compaction"
    assert compacted.object == "response.compaction"
    assert cp.peek(compacted.output[-1])["users_in_clear"] is True


# ----------------------------------------------------------------- refusals

def threshold_refusals():
    at = "context_management[0]"
    return [
        ("below the minimum", [{"type": "compaction", "compact_threshold": 50}],
         f"Invalid '{at}.compact_threshold': integer below minimum value. Expected a value "
         ">= 1000, but got 50 instead.", f"{at}.compact_threshold", "integer_below_min_value"),
        ("not an integer", [{"type": "compaction", "compact_threshold": "2000"}],
         f"Invalid type for '{at}.compact_threshold': expected an integer, but got a string "
         "instead.", f"{at}.compact_threshold", "invalid_type"),
        ("a boolean", [{"type": "compaction", "compact_threshold": True}],
         f"Invalid type for '{at}.compact_threshold': expected an integer, but got a boolean "
         "instead.", f"{at}.compact_threshold", "invalid_type"),
        ("an unknown type", [{"type": "summarize", "compact_threshold": 2000}],
         "Invalid value: 'summarize'. Supported values are: 'compaction'.", f"{at}.type",
         "invalid_value"),
        ("no type", [{"compact_threshold": 2000}],
         f"Missing required parameter: '{at}.type'.", f"{at}.type",
         "missing_required_parameter"),
        ("an unknown member", [{"type": "compaction", "keep": 3}],
         f"Unknown parameter: '{at}.keep'.", f"{at}.keep", "unknown_parameter"),
        ("not a list", {"type": "compaction"},
         "Invalid type for 'context_management': expected an array of objects, but got an "
         "object instead.", "context_management", "invalid_type"),
    ]


@pytest.mark.parametrize("case", threshold_refusals(), ids=[c[0] for c in threshold_refusals()])
def test_context_management_refusals(client, case):
    _, value, message, param, code = case
    error = refused(lambda: create(client, input="hi", context_management=value))
    assert (error["message"], error["param"], error["code"]) == (message, param, code)


def a_compaction_item(client) -> dict:
    made = chain(client, turns=TURNS[:3], context_management=COMPACTION)
    return made[2].output[0].model_dump(exclude_none=True)


def test_an_edited_or_foreign_item_cannot_be_verified(client):
    item = a_compaction_item(client)
    content = item["encrypted_content"]
    edited = content[:40] + ("A" if content[40] != "A" else "B") + content[41:]
    real = "gAAAAABpZ" + base64.urlsafe_b64encode(bytes(range(200))).decode()
    for sealed in (edited, real, "not base64 at all"):
        for call in (
                lambda sealed=sealed: create(client, input=[{**item, "encrypted_content": sealed},
                                              {"role": "user", "content": "hi"}]),
                lambda sealed=sealed: client.responses.compact(model=MODEL_ID, input=[
                    {**item, "encrypted_content": sealed}])):
            error = refused(call)
            assert error == {"message": f"The encrypted content {sealed[:4]}...{sealed[-4:]} "
                                        "could not be verified.",
                             "type": "invalid_request_error", "param": None,
                             "code": "invalid_encrypted_content"}, error
        with pytest.raises(ValueError, match="not made by the offline model"):
            cp.peek({**item, "encrypted_content": sealed})
        with pytest.raises(ValueError, match="不是离线模型做的"):  # the teaching view in Chinese
            cp.peek({**item, "encrypted_content": sealed}, lang="zh")
    with pytest.raises(ValueError, match="读的是一个压缩条目"):
        cp.peek({"type": "message"}, lang="zh")


def test_a_compaction_item_needs_its_content_as_a_string(client):
    error = refused(lambda: create(client, input=[{"type": "compaction"}]))
    assert error["message"] == "Missing required parameter: 'input[0].encrypted_content'."
    error = refused(lambda: client.responses.compact(model=MODEL_ID, input=[
        {"type": "compaction", "encrypted_content": 7}]))
    assert error["message"] == ("Invalid type for 'input[0].encrypted_content': expected a "
                                "string, but got an integer instead.")


def test_compact_reads_the_context_so_it_must_fit_the_window():
    client = offline_client(300, state=MemoryState())
    error = refused(lambda: client.responses.compact(model=MODEL_ID, input=TURNS[0]))
    assert error["code"] == "context_length_exceeded"
    assert client.responses.compact(model=MODEL_ID, input=TURNS[3]).output[-1].type == \
        "compaction"


@pytest.mark.parametrize("kw, message, status", [
    ({}, 'One of "input" or "previous_response_id" must be provided.', 400),
    ({"input": "hi", "tools": []}, "Unknown parameter: 'tools'.", 400),
    ({"input": "hi", "model": "gpt-4.1"}, "The requested model 'gpt-4.1' does not exist.", 400),
    ({"previous_response_id": "resp_nope"}, "Previous response with id 'resp_nope' not found.",
     400),
], ids=["nothing to compact", "an unknown field", "another model", "an unknown response"])
def test_compact_refusals(client, kw, message, status):
    kw = {"model": MODEL_ID, **kw}
    extra = {"tools": kw.pop("tools")} if "tools" in kw else None
    body = refused(lambda: client.responses.compact(**kw, extra_body=extra), status)
    assert body["message"] == message


def test_peek_reads_only_compaction_items():
    with pytest.raises(ValueError, match="reads a compaction item"):
        cp.peek({"role": "user", "content": "hi"})


# ----------------------------------------------------------------- the Agents SDK

agents = pytest.importorskip("agents", reason="openai-agents is not installed "
                                              "(pip install -e '.[dev]')")
agents.set_tracing_disabled(True)


def run_agent(server, steps):
    async def main():
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="offline",
                                    max_retries=0, timeout=30)
        try:
            return await steps(client, agents.OpenAIResponsesModel(model=MODEL_ID,
                                                                   openai_client=client))
        finally:
            await client.close()
    return asyncio.run(main())


@pytest.mark.parametrize("mode", ["input", "previous_response_id"])
def test_the_agents_sdk_compaction_session(server, tmp_path, mode):
    from agents.memory import OpenAIResponsesCompactionSession

    said = ["My name is Xiaoming.", "What's the time?", "Tell me about tea.", "What is my name?"]

    async def steps(client, model):
        session = OpenAIResponsesCompactionSession(
            "lesson", agents.SQLiteSession("lesson", str(tmp_path / "s.db")), client=client,
            compaction_mode=mode,
            should_trigger_compaction=lambda ctx: len(ctx["compaction_candidate_items"]) >= 2)
        # The session accepts only OpenAI model names (gpt-*, o*) when it is made; the
        # offline model has its own name, so it is set after.
        session.model = MODEL_ID
        agent = agents.Agent(name="assistant", model=model)
        out, stored = [], []
        for text in said:
            result = await agents.Runner.run(agent, text, session=session)
            out.append(result.final_output)
            stored.append([i.get("type", "message") for i in await session.get_items()])
        return out, stored, await session.get_items()

    out, stored, items = run_agent(server, steps)
    assert out[-1] == "You told me your name is Xiaoming."
    assert any("compaction" in kinds for kinds in stored)
    assert [i.get("role") for i in items if i.get("type") != "compaction"] == ["user"] * 4
    assert items[-1]["type"] == "compaction"
    assert cp.peek(items[-1])["kept"] == [
        {"role": "assistant", "content": "You told me your name is Xiaoming."}]


def test_the_agents_sdk_server_side_compaction(server):
    async def steps(client, model):
        agent = agents.Agent(name="assistant", model=model, model_settings=agents.ModelSettings(
            context_management=COMPACTION))
        session = agents.SQLiteSession("server-side")
        results = [await agents.Runner.run(agent, text, session=session) for text in TURNS]
        return results, await session.get_items()

    results, items = run_agent(server, steps)
    assert results[-1].final_output == "You told me your name is Xiaoming."
    assert [i["type"] for i in items if i.get("type") == "compaction"] == ["compaction"]
    assert results[-1].context_wrapper.usage.input_tokens < 1000
