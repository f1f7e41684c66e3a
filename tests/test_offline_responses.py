"""The offline model's Responses and Conversations APIs, through the real `openai` SDK:
in process and served over HTTP, sync, async and streamed; every endpoint, every refusal
the issue names, determinism, and the prompt cache's `cached_tokens`."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time

import openai
import pydantic
import pytest
import responses_clients
from messages import WEATHER_TOOL

from lesson_lib.offline import MODEL_ID, offline_async_client, offline_client
from lesson_lib.offline import responses as rs
from lesson_lib.offline.server import serve_in_thread
from lesson_lib.offline.state import MemoryState, SqliteState
from lesson_lib.tokens import count_messages, count_tools

server, client = responses_clients.server, responses_clients.client  # the two ways in
served_client = responses_clients.served_client
create, refused = responses_clients.create, responses_clients.refused

WEATHER = {"type": "function", "name": WEATHER_TOOL["function"]["name"],
           "description": WEATHER_TOOL["function"]["description"],
           "parameters": WEATHER_TOOL["function"]["parameters"]}
RESULT = json.dumps({"location": "Chengdu", "temperature": 16, "condition": "cloudy"})
ID = re.compile(r"(resp|msg|fc|fco)_[0-9a-f]{50}")


@pytest.fixture(params=["in process", "served"])
def async_client(request, server):
    if request.param == "in process":
        return offline_async_client(state=MemoryState())
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="offline", max_retries=0,
                              timeout=30)


def weather_round(client, **kw):
    """A tool round trip chained by previous_response_id: (the call's response, the answer)."""
    asked = create(client, input="What's the weather in Chengdu?", tools=[WEATHER], **kw)
    call = asked.output[0]
    answered = create(client, previous_response_id=asked.id, tools=[WEATHER], input=[
        {"type": "function_call_output", "call_id": call.call_id, "output": RESULT}])
    return asked, answered


# ----------------------------------------------------------------- the response object

def test_a_string_input_gets_a_genuine_response(client):
    response = create(client, input="My name is Xiaoming.")
    assert isinstance(response, openai.types.responses.Response)
    assert ID.fullmatch(response.id) and response.id.startswith("resp_"), response.id
    assert (response.object, response.status, response.model) == ("response", "completed",
                                                                   MODEL_ID)
    assert response.output_text == "Nice to meet you, Xiaoming! How can I help?"
    [message] = response.output
    assert (message.type, message.role, message.status) == ("message", "assistant", "completed")
    assert ID.fullmatch(message.id) and message.id[4:30] == response.id[5:31], \
        "items share their response's stem, as the real ids do"
    assert [p.type for p in message.content] == ["output_text"]
    usage = response.usage
    asked = [{"role": "user", "content": "My name is Xiaoming."}]
    assert usage.input_tokens == count_messages(asked)
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0
    assert usage.output_tokens_details.reasoning_tokens == 0


def test_the_raw_body_has_the_real_keys_in_the_real_order(client):
    raw = client.responses.with_raw_response.create(model=MODEL_ID, input="hello",
                                                    tools=[WEATHER])
    body = json.loads(raw.content)
    assert list(body) == [
        "id", "object", "created_at", "status", "background", "completed_at", "error",
        "frequency_penalty", "incomplete_details", "instructions", "max_output_tokens",
        "max_tool_calls", "model", "output", "parallel_tool_calls", "presence_penalty",
        "previous_response_id", "prompt_cache_key", "reasoning", "safety_identifier",
        "service_tier", "store", "temperature", "text", "tool_choice", "tools",
        "top_logprobs", "top_p", "truncation", "usage", "user", "metadata"], list(body)
    assert list(body["output"][0]) == ["id", "type", "status", "content", "role"]
    assert body["tools"] == [{**WEATHER, "parameters": {
        **WEATHER["parameters"], "additionalProperties": False}, "strict": True}]
    assert list(body["usage"]["input_tokens_details"]) == ["cache_write_tokens",
                                                            "cached_tokens"]
    assert raw.headers["content-type"] == "application/json"


def test_a_tool_sent_without_strict_is_echoed_strict_when_its_schema_allows_it(client):
    bare = {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}
    optional = {"type": "function", "name": "get_current_time", "parameters": {
        "type": "object", "properties": {"timezone": {"type": "string"}}}}
    closed, kept = create(client, input="hello", tools=[bare, optional]).tools
    assert closed.strict is True  # as a captured answer echoes the same tool
    assert closed.parameters == {"type": "object", "properties": {},
                                 "additionalProperties": False, "required": []}
    assert (kept.strict, kept.parameters) == (False, optional["parameters"]), \
        "a schema with an optional property stays as sent, not strict"


def test_the_same_question_gets_the_same_answer_as_chat_completions(client):
    chat = offline_client()
    ask = [{"role": "system", "content": "You are a helpful assistant."},
           {"role": "user", "content": "What's the weather in Chengdu and Beijing?"}]
    completion = chat.chat.completions.create(model=MODEL_ID, messages=ask, tools=[WEATHER_TOOL])
    response = create(client, instructions=ask[0]["content"], input=ask[1]["content"],
                      tools=[WEATHER])
    assert [(c.name, c.arguments) for c in response.output] == [
        (c.function.name, c.function.arguments) for c in completion.choices[0].message.tool_calls]
    assert response.usage.input_tokens == completion.usage.prompt_tokens
    assert response.usage.output_tokens == completion.usage.completion_tokens


# ----------------------------------------------------------------- tools

def test_a_tool_round_trip_with_previous_response_id(client):
    asked, answered = weather_round(client)
    [call] = asked.output
    assert (call.type, call.name, call.status) == ("function_call", "get_current_weather",
                                                   "completed")
    assert call.id.startswith("fc_") and re.fullmatch(r"call_[A-Za-z0-9]{24}", call.call_id)
    assert json.loads(call.arguments) == {"location": "Chengdu"}
    assert answered.output_text == "Chengdu is cloudy, 16°C."
    assert answered.previous_response_id == asked.id


def test_parallel_calls_and_parallel_tool_calls_false(client):
    both = create(client, input="What's the weather in Chengdu and Beijing?", tools=[WEATHER])
    assert [json.loads(c.arguments)["location"] for c in both.output] == ["Chengdu", "Beijing"]
    one = create(client, input="What's the weather in Chengdu and Beijing?", tools=[WEATHER],
                 parallel_tool_calls=False)
    assert len(one.output) == 1 and one.parallel_tool_calls is False


def test_tool_choice_none_and_a_forced_function(client):
    said = create(client, input="What's the weather in Chengdu?", tools=[WEATHER],
                  tool_choice="none")
    assert said.output[0].type == "message"
    forced = create(client, input="hello", tools=[WEATHER],
                    tool_choice={"type": "function", "name": "get_current_weather"})
    assert forced.output[0].type == "function_call"
    assert forced.tool_choice.name == "get_current_weather"


def test_a_stateless_round_trip_sends_the_items_back(client):
    asked = create(client, input="What's the weather in Chengdu?", tools=[WEATHER], store=False)
    call = asked.output[0]
    answered = create(client, tools=[WEATHER], store=False, input=[
        {"role": "user", "content": "What's the weather in Chengdu?"},
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": RESULT}])
    assert answered.output_text == "Chengdu is cloudy, 16°C."


# ----------------------------------------------------------------- the refusals

def test_a_call_with_no_output_in_a_chain_is_refused(client):
    asked = create(client, input="What's the weather in Chengdu?", tools=[WEATHER])
    call_id = asked.output[0].call_id
    body = refused(lambda: create(client, previous_response_id=asked.id, input="hello",
                                  tools=[WEATHER]))
    assert body == {"message": f"No tool output found for function call {call_id}.",
                    "type": "invalid_request_error", "param": "input", "code": None}


def test_a_call_with_no_output_in_the_input_is_refused(client):
    call = {"type": "function_call", "call_id": "call_abc", "name": "get_current_weather",
            "arguments": '{"location":"Chengdu"}'}
    body = refused(lambda: create(client, input=[{"role": "user", "content": "hi"}, call]))
    assert (body["message"], body["param"]) == (
        "No tool output found for function call call_abc.", "input")


def test_an_output_with_no_call_is_refused(client):
    body = refused(lambda: create(client, input=[
        {"type": "function_call_output", "call_id": "call_xyz", "output": RESULT}]))
    assert (body["message"], body["param"], body["code"]) == (
        "No tool call found for function call output with call_id call_xyz.", "input", None)


@pytest.mark.parametrize("how", ["unknown", "deleted", "not stored"])
def test_a_previous_response_that_is_not_stored_is_refused(client, how):
    if how == "unknown":
        gone = "resp_" + "0" * 50
    else:
        gone = create(client, input="My name is Xiaoming.", store=how != "not stored").id
        if how == "deleted":
            client.responses.delete(gone)
    body = refused(lambda: create(client, input="What is my name?", previous_response_id=gone))
    assert body == {"message": f"Previous response with id '{gone}' not found.",
                    "type": "invalid_request_error", "param": "previous_response_id",
                    "code": "previous_response_not_found"}


REQUEST_REFUSALS = [
    ("unknown parameter", {"input": "hi", "temprature": 1},
     "Unknown parameter: 'temprature'. Did you mean 'temperature'?", "temprature",
     "unknown_parameter"),
    ("a Chat option", {"input": "hi", "n": 2}, "Unknown parameter: 'n'.", "n",
     "unknown_parameter"),
    ("messages", {"messages": [{"role": "user", "content": "hi"}], "input": "hi"},
     "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to "
     "'input'. Try again with the new parameter. See the API documentation for more "
     "information: https://platform.openai.com/docs/api-reference/responses/create.",
     None, "unsupported_parameter"),
    ("no input", {}, "Missing required parameter: 'input'.", "input",
     "missing_required_parameter"),
    ("empty input", {"input": ""},
     "One of \"input\" or \"previous_response_id\" or 'prompt' or 'conversation' must be "
     "provided.", None, "missing_required_parameter"),
    ("a tool message", {"input": [{"role": "tool", "content": "16"}]},
     "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and "
     "'user'.", "input[0]", "invalid_value"),
    ("a Chat tool call", {"input": [{"role": "assistant", "content": None, "tool_calls": []}]},
     "Unknown parameter: 'input[0].tool_calls'.", "input[0].tool_calls", "unknown_parameter"),
    ("a Chat-shaped tool", {"input": "hi", "tools": [WEATHER_TOOL]},
     "Missing required parameter: 'tools[0].name'.", "tools[0].name",
     "missing_required_parameter"),
    ("output_text from the user", {"input": [{"role": "user", "content": [
        {"type": "output_text", "text": "hi"}]}]},
     "Invalid value: 'output_text'. Supported values are: 'input_text', 'input_image', "
     "'input_file', 'scoped_content', and 'input_audio'.", "input[0].content[0]",
     "invalid_value"),
    ("max_output_tokens under 16", {"input": "hi", "max_output_tokens": 5},
     "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but "
     "got 5 instead.", "max_output_tokens", "integer_below_min_value"),
    ("truncation", {"input": "hi", "truncation": "bogus"},
     "Invalid value: 'bogus'. Supported values are: 'auto' and 'disabled'.", "truncation",
     "invalid_value"),
    ("both chain and conversation", {"input": "hi", "previous_response_id": "resp_x",
                                     "conversation": "conv_x"},
     "Mutually exclusive parameters: ''. Ensure you are only providing one of: 'pre..._id' "
     "or 'conversation'.", None, "mutually_exclusive_parameters"),
    ("JSON mode without the word", {"input": "hi", "text": {"format": {"type": "json_object"}}},
     "Response input messages must contain the word 'json' in some form to use "
     "'text.format' of type 'json_object'.", "input", None),
    ("another model", {"input": "hi", "model": "gpt-4o-mini"},
     "The requested model 'gpt-4o-mini' does not exist.", "model", "model_not_found"),
]


@pytest.mark.parametrize("case", REQUEST_REFUSALS, ids=[c[0] for c in REQUEST_REFUSALS])
def test_request_refusals_carry_the_api_texts(client, case):
    _, sent, message, param, code = case
    body = refused(lambda: client.post("/responses", cast_to=object,  # any body, as sent
                                       body={"model": MODEL_ID, **sent}))
    assert (body["message"], body["param"], body["code"]) == (message, param, code)


def test_an_unknown_conversation_is_a_404(client):
    body = refused(lambda: create(client, input="hi", conversation="conv_nope"), status=404)
    assert body["message"] == "Conversation with id 'conv_nope' not found."


def test_the_context_window_is_the_whole_chain(server):
    small = offline_client(80, state=MemoryState())
    first = create(small, input="My name is Xiaoming. " * 5)
    body = refused(lambda: create(small, input="What is my name? " * 5,
                                  previous_response_id=first.id))
    assert (body["message"], body["param"], body["code"]) == (
        "Your input exceeds the context window of this model. Please adjust your input and "
        "try again.", "input", "context_length_exceeded")
    trimmed = create(small, input="What is my name? " * 5, previous_response_id=first.id,
                     truncation="auto")
    assert trimmed.usage.input_tokens <= 80 and trimmed.truncation == "auto"
    listed = [(i.role, i.content[0].text) for i in small.responses.input_items.list(trimmed.id)]
    assert listed == [("user", "What is my name? " * 5), ("assistant", first.output_text)], \
        "the oldest item was dropped, as few as needed"


# ----------------------------------------------------------------- stored state

def test_a_chain_remembers_and_its_input_grows_as_a_client_held_list(client):
    said = ["My name is Xiaoming.", "What's the time?", "What is my name?"]
    previous, chained, held, history = None, [], [], []
    for text in said:
        response = create(client, input=text, previous_response_id=previous)
        previous = response.id
        chained.append(response.usage.input_tokens)
        history.append({"role": "user", "content": text})
        stateless = create(client, input=list(history), store=False)
        held.append(stateless.usage.input_tokens)
        history += [item.model_dump(exclude_none=True) for item in stateless.output]
    assert response.output_text == "You told me your name is Xiaoming."
    assert chained == held and chained == sorted(chained), (chained, held)


def test_instructions_are_not_carried_over(client):
    first = create(client, input="hello", instructions="Answer in Chinese.")
    second = create(client, input="hello", previous_response_id=first.id)
    assert second.instructions is None
    types = [i.type for i in client.responses.input_items.list(second.id)]
    assert types == ["message"] * 3, "the instructions are not an input item"


def test_retrieve_and_delete_a_response(client):
    made = create(client, input="My name is Xiaoming.")
    assert client.responses.retrieve(made.id) == made
    raw = client.responses.with_raw_response.delete(made.id)
    assert json.loads(raw.content) == {"id": made.id, "object": "response", "deleted": True}
    body = refused(lambda: client.responses.retrieve(made.id), status=404)
    assert body["message"] == f"Response with id '{made.id}' not found."
    not_kept = create(client, input="hi", store=False)
    assert not_kept.store is False
    refused(lambda: client.responses.retrieve(not_kept.id), status=404)


def test_input_items_list_the_whole_context_newest_first(client):
    asked, answered = weather_round(client)
    items = list(client.responses.input_items.list(answered.id))
    assert [i.type for i in items] == ["function_call_output", "function_call", "message"]
    assert items[1].id == asked.output[0].id and items[0].id.startswith("fco_")
    oldest = list(client.responses.input_items.list(answered.id, order="asc"))
    assert oldest == items[::-1]
    assert oldest[0].content[0].type == "input_text"


def test_input_items_are_paged(client):
    many = [{"role": "user", "content": f"Number {k}."} for k in range(45)]
    response = create(client, input=many)
    first = client.responses.input_items.list(response.id, limit=20, order="asc")
    assert len(first.data) == 20 and first.has_more
    assert [i.content[0].text for i in first] == [f"Number {k}." for k in range(45)], \
        "the SDK's auto-paging follows `after`"


def test_a_served_model_keeps_state_for_all_its_clients(server):
    one, other = served_client(server), served_client(server)
    made = create(one, input="My name is Xiaoming.")
    assert create(other, input="What is my name?", previous_response_id=made.id).output_text \
        == "You told me your name is Xiaoming."


def test_in_process_clients_share_one_state_unless_given_their_own():
    made = create(offline_client(), input="My name is Xiaoming.")
    assert create(offline_client(), input="What is my name?",
                  previous_response_id=made.id).output_text.endswith("Xiaoming.")
    refused(lambda: create(offline_client(state=MemoryState()), input="What is my name?",
                           previous_response_id=made.id))


def test_item_references_name_stored_items(client):
    made = create(client, input="My name is Xiaoming.")
    again = create(client, input=[{"type": "item_reference", "id": made.output[0].id},
                                  {"role": "user", "content": "What is my name?"}])
    assert again.usage.input_tokens > made.usage.input_tokens
    conversation = client.conversations.create()
    added = client.conversations.items.create(conversation.id, items=[
        {"role": "user", "content": "My name is Xiaoming."}])
    named = create(client, store=False, input=[{"type": "item_reference", "id": added.data[0].id},
                                               {"role": "user", "content": "What is my name?"}])
    assert named.output_text == "You told me your name is Xiaoming."
    body = refused(lambda: create(client, input=[{"type": "item_reference",
                                                  "id": "msg_" + "0" * 50}]), status=404)
    assert body["message"] == (f"Item with id 'msg_{'0' * 50}' not found. Items are not "
                               "persisted when `store` is set to false.")


# ----------------------------------------------------------------- conversations

def test_the_conversations_api(client):
    conversation = client.conversations.create(
        metadata={"topic": "weather"}, items=[{"role": "user", "content": "My name is Xiaoming."}])
    assert re.fullmatch(r"conv_[0-9a-f]{48}", conversation.id), conversation.id
    assert conversation.metadata == {"topic": "weather"}
    assert client.conversations.retrieve(conversation.id) == conversation
    answer = create(client, input="What is my name?", conversation=conversation.id)
    assert answer.output_text == "You told me your name is Xiaoming."
    assert answer.conversation.id == conversation.id
    items = list(client.conversations.items.list(conversation.id, order="asc"))
    assert [(i.type, i.role) for i in items] == [("message", "user"), ("message", "user"),
                                                ("message", "assistant")]
    added = client.conversations.items.create(conversation.id, items=[
        {"role": "user", "content": "I live in Chengdu."}])
    assert added.data[0].id.startswith("msg_") and added.first_id == added.data[0].id
    assert client.conversations.items.retrieve(added.data[0].id,
                                               conversation_id=conversation.id) == added.data[0]
    after = client.conversations.items.delete(added.data[0].id, conversation_id=conversation.id)
    assert after.id == conversation.id
    assert len(list(client.conversations.items.list(conversation.id))) == 3
    refused(lambda: client.conversations.items.retrieve(added.data[0].id,
                                                        conversation_id=conversation.id), 404)
    updated = client.conversations.update(conversation.id, metadata={"topic": "names"})
    assert updated.metadata == {"topic": "names"}
    deleted = client.conversations.delete(conversation.id)
    assert (deleted.id, deleted.deleted, deleted.object) == (conversation.id, True,
                                                             "conversation.deleted")
    body = refused(lambda: client.conversations.retrieve(conversation.id), status=404)
    assert body == {"message": f"Conversation with id '{conversation.id}' not found.",
                    "type": "invalid_request_error", "param": None, "code": None}


def test_a_tool_round_trip_in_a_conversation(client):
    conversation = client.conversations.create()
    asked = create(client, input="What's the weather in Chengdu?", tools=[WEATHER],
                   conversation={"id": conversation.id})
    refused(lambda: create(client, input="hello", tools=[WEATHER],
                           conversation=conversation.id))
    answered = create(client, tools=[WEATHER], conversation=conversation.id, input=[
        {"type": "function_call_output", "call_id": asked.output[0].call_id, "output": RESULT}])
    assert answered.output_text == "Chengdu is cloudy, 16°C."
    kinds = [i.type for i in client.conversations.items.list(conversation.id, order="asc")]
    assert kinds == ["message", "function_call", "function_call_output", "message"]


# ----------------------------------------------------------------- streaming

def text_of_events(events) -> str:
    return "".join(e.delta for e in events if e.type == "response.output_text.delta")


def test_a_streamed_text_answer_is_the_event_sequence(client):
    events = list(create(client, input="My name is Xiaoming.", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]
    assert kinds.count("response.output_text.delta") > 5
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1].response
    assert text_of_events(events) == final.output_text == \
        "Nice to meet you, Xiaoming! How can I help?"
    assert events[0].response.status == "in_progress" and events[0].response.output == []
    assert client.responses.retrieve(final.id) == final, "a streamed response is stored too"


def test_streamed_function_call_arguments(client):
    events = list(create(client, input="What's the weather in Chengdu?", tools=[WEATHER],
                         stream=True))
    deltas = "".join(e.delta for e in events
                     if e.type == "response.function_call_arguments.delta")
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert deltas == done[0].arguments == '{"location":"Chengdu"}'
    assert events[-1].type == "response.completed"


def test_a_background_stream_resumes_after_a_sequence_number(client):
    """A client that lost a background stream after event 3 asks for the rest: the events
    numbered 4 on, as server-sent events, ending as the first stream would have."""
    whole = list(create(client, input="What's the weather in Chengdu?", tools=[WEATHER],
                        background=True, stream=True))
    response_id = whole[0].response.id
    rest = list(client.responses.retrieve(response_id, stream=True, starting_after=3))
    assert [e.sequence_number for e in rest] == list(range(4, len(whole)))
    assert [e.model_dump() for e in rest] == [e.model_dump() for e in whole[4:]]
    assert len(list(client.responses.retrieve(response_id, stream=True))) == len(whole)
    with client.responses.stream(response_id=response_id, starting_after=3) as stream:
        assert next(iter(stream)).sequence_number == 4
        assert stream.get_final_response().output[0].arguments == '{"location":"Chengdu"}'


@pytest.mark.parametrize("made, text", [
    ({"stream": True}, "This response cannot be streamed because it was not created with "
                       "background=true."),
    ({"background": True}, "This response cannot be streamed because it was not created "
                           "with stream=true or the stream TTL has expired."),
], ids=["not background", "not streamed"])
def test_only_a_streamed_background_response_streams_again(client, made, text):
    events = create(client, input="Hello", **made)
    response_id = events.id if not made.get("stream") else list(events)[0].response.id
    body = refused(lambda: list(client.responses.retrieve(response_id, stream=True)))
    assert (body["message"], body["param"]) == (text, "stream")
    assert client.responses.retrieve(response_id).status == "completed"
    body = refused(lambda: client.get(f"/responses/{response_id}?stream=true&starting_after=x",
                                      cast_to=object))
    assert body["message"] == ("Invalid type for 'starting_after': expected an integer, but "
                               "got a string instead.")


def test_the_sdk_stream_helper_and_parse(client):
    class CalendarEvent(pydantic.BaseModel):
        name: str
        date: str
        participants: list[str]

    text = "Alice and Bob are going to a science fair on Friday."
    expected = CalendarEvent(name="science fair", date="Friday", participants=["Alice", "Bob"])
    parsed = client.responses.parse(model=MODEL_ID, instructions="Extract the event.",
                                    input=text, text_format=CalendarEvent)
    assert parsed.output_parsed == expected
    with client.responses.stream(model=MODEL_ID, instructions="Extract the event.", input=text,
                                 text_format=CalendarEvent) as stream:
        final = stream.get_final_response()
    assert final.output_parsed == expected


def test_a_cut_answer_is_incomplete_streamed_or_not(client):
    ask = "Please summarise our conversation."
    history = [{"role": "user", "content": f"What's the weather in City{k}?"} for k in range(9)]
    cut = create(client, input=[*history, {"role": "user", "content": ask}],
                 max_output_tokens=16)
    assert (cut.status, cut.incomplete_details.reason) == ("incomplete", "max_output_tokens")
    assert cut.usage.output_tokens == 16 and cut.output[0].status == "incomplete"
    events = list(create(client, input=[*history, {"role": "user", "content": ask}],
                         max_output_tokens=16, stream=True))
    assert events[-1].type == "response.incomplete"


def test_the_async_client_creates_chains_and_streams(async_client):
    async def main():
        first = await async_client.responses.create(model=MODEL_ID, input="My name is Xiaoming.")
        second = await async_client.responses.create(model=MODEL_ID, input="What is my name?",
                                                     previous_response_id=first.id)
        stream = await async_client.responses.create(model=MODEL_ID, input="What is my name?",
                                                     previous_response_id=first.id, stream=True)
        events = [e async for e in stream]
        conversation = await async_client.conversations.create()
        await async_client.responses.create(model=MODEL_ID, input="My name is Xiaoming.",
                                            conversation=conversation.id)
        listed = [i async for i in async_client.conversations.items.list(conversation.id)]
        items = [i async for i in async_client.responses.input_items.list(second.id)]
        return second, events, listed, items

    second, events, listed, items = asyncio.run(main())
    assert second.output_text == "You told me your name is Xiaoming."
    assert text_of_events(events) == second.output_text
    assert len(listed) == 2 and len(items) == 3


def test_every_endpoint_and_refusal_through_the_async_client(async_client):
    async def refused_async(call, status=400):
        with pytest.raises(openai.APIStatusError) as caught:
            await call
        assert caught.value.status_code == status
        return caught.value.body

    async def main():
        responses, conversations = async_client.responses, async_client.conversations
        asked = await responses.create(model=MODEL_ID, input="What's the weather in Chengdu?",
                                       tools=[WEATHER])
        call_id = asked.output[0].call_id
        no_output = await refused_async(responses.create(
            model=MODEL_ID, input="hello", tools=[WEATHER], previous_response_id=asked.id))
        assert no_output["message"] == f"No tool output found for function call {call_id}."
        assert (await responses.retrieve(asked.id)) == asked
        items = [i async for i in responses.input_items.list(asked.id)]
        assert [i.type for i in items] == ["message"]
        await responses.delete(asked.id)
        gone = await refused_async(responses.create(model=MODEL_ID, input="hello",
                                                    previous_response_id=asked.id))
        assert gone["code"] == "previous_response_not_found"
        await refused_async(responses.retrieve(asked.id), 404)
        conversation = await conversations.create(metadata={"a": "b"})
        assert (await conversations.retrieve(conversation.id)) == conversation
        assert (await conversations.update(conversation.id, metadata={"a": "c"})).metadata == \
            {"a": "c"}
        added = await conversations.items.create(conversation.id, items=[
            {"role": "user", "content": "My name is Xiaoming."}])
        item = await conversations.items.retrieve(added.data[0].id,
                                                  conversation_id=conversation.id)
        assert item == added.data[0]
        answer = await responses.create(model=MODEL_ID, input="What is my name?",
                                        conversation=conversation.id)
        assert answer.output_text == "You told me your name is Xiaoming."
        await conversations.items.delete(item.id, conversation_id=conversation.id)
        assert len([i async for i in conversations.items.list(conversation.id)]) == 2
        assert (await conversations.delete(conversation.id)).deleted is True
        await refused_async(conversations.retrieve(conversation.id), 404)

    asyncio.run(main())


def test_a_streamed_request_is_refused_before_its_stream(client):
    asked = create(client, input="What's the weather in Chengdu?", tools=[WEATHER])
    body = refused(lambda: create(client, input="hello", tools=[WEATHER], stream=True,
                                  previous_response_id=asked.id))
    assert body["message"].startswith("No tool output found for function call call_")
    body = refused(lambda: create(client, input="hello", stream=True,
                                  previous_response_id="resp_gone"))
    assert body["code"] == "previous_response_not_found"


# ----------------------------------------------------------------- the prompt cache

def test_cached_tokens_count_the_start_already_seen_from_1024_tokens_in_steps_of_128(client):
    long = "My name is Xiaoming and I live in Chengdu. " * 120
    first = create(client, input=long)
    assert first.usage.input_tokens > 1024 and first.usage.input_tokens_details.cached_tokens == 0
    second = create(client, input="What is my name?", previous_response_id=first.id)
    seen = count_messages([{"role": "user", "content": long},
                           {"role": "assistant", "content": first.output_text}]) - 3
    assert second.usage.input_tokens_details.cached_tokens == seen // 128 * 128
    again = create(client, input=[{"role": "user", "content": long},
                                  {"role": "assistant", "content": first.output_text},
                                  {"role": "user", "content": "What is my name?"}], store=False)
    assert again.usage.input_tokens_details.cached_tokens == seen // 128 * 128, \
        "a client resending its history hits the same cache"
    short = create(client, input="hi")
    assert create(client, input="hi", previous_response_id=short.id
                  ).usage.input_tokens_details.cached_tokens == 0, "under 1024 tokens: none"


def test_other_tools_are_another_prompt(client):
    first = create(client, input="My name is Xiaoming and I live in Chengdu. " * 120)
    same = create(client, input="What is my name?", previous_response_id=first.id)
    other = create(client, input="What is my name?", previous_response_id=first.id,
                   tools=[WEATHER])
    assert same.usage.input_tokens_details.cached_tokens > 0
    assert other.usage.input_tokens_details.cached_tokens == 0, "the tools come first"
    assert other.usage.input_tokens - same.usage.input_tokens == count_tools([WEATHER_TOOL])


# ----------------------------------------------------------------- determinism

def a_sequence(client) -> list[bytes]:
    """Every endpoint once, as raw bytes."""
    raw = client.responses.with_raw_response
    out = []
    first = raw.create(model=MODEL_ID, input="My name is Xiaoming.")
    out.append(first.content)
    first_id = json.loads(first.content)["id"]
    asked = raw.create(model=MODEL_ID, input="What's the weather in Chengdu?", tools=[WEATHER],
                       previous_response_id=first_id)
    out.append(asked.content)
    call = json.loads(asked.content)["output"][0]
    done = raw.create(model=MODEL_ID, tools=[WEATHER],
                      previous_response_id=json.loads(asked.content)["id"], input=[
                          {"type": "function_call_output", "call_id": call["call_id"],
                           "output": RESULT}])
    out.append(done.content)
    streamed = raw.create(model=MODEL_ID, input="What is my name?", stream=True,
                          previous_response_id=json.loads(done.content)["id"])
    out.append(streamed.http_response.read())
    conv = client.conversations.with_raw_response.create(metadata={"k": "v"})
    out.append(conv.content)
    conv_id = json.loads(conv.content)["id"]
    out.append(raw.create(model=MODEL_ID, input="hello", conversation=conv_id).content)
    out.append(client.conversations.items.with_raw_response.list(conv_id).content)
    out.append(raw.retrieve(first_id).content)
    out.append(client.responses.input_items.with_raw_response.list(
        json.loads(done.content)["id"]).content)
    out.append(raw.delete(first_id).content)
    return out


def test_the_same_sequence_gives_byte_identical_answers_and_ids():
    one = a_sequence(offline_client(state=MemoryState()))
    two = a_sequence(offline_client(state=MemoryState()))
    with serve_in_thread(log=None) as fresh:
        served = a_sequence(served_client(fresh))
    assert one == two, "two fresh in-process states differ"
    assert one == served, "served and in-process answers differ"
    ids = [json.loads(b)["id"] for b in one[:3]]
    assert len(set(ids)) == 3


def test_the_same_request_twice_gets_two_ids(client):
    assert create(client, input="hello").id != create(client, input="hello").id


# ----------------------------------------------------------------- HTTP and the state file

def test_unknown_paths_are_404(client):
    with pytest.raises(openai.NotFoundError):
        client.post("/responses/x/y/z", cast_to=object, body={})


def test_the_request_fields_are_the_sdks():
    import inspect

    from openai.resources.responses import Responses

    params = set(inspect.signature(Responses.create).parameters) - {
        "self", "extra_headers", "extra_query", "extra_body", "timeout"}
    assert params == rs.REQUEST_FIELDS, params ^ rs.REQUEST_FIELDS


def test_the_count_fields_are_the_sdks():
    import inspect

    from openai.resources.responses.input_tokens import InputTokens

    params = set(inspect.signature(InputTokens.count).parameters) - {
        "self", "extra_headers", "extra_query", "extra_body", "timeout"}
    assert params == rs.COUNT_FIELDS, params ^ rs.COUNT_FIELDS


def test_input_tokens_count_what_create_would_bill(client):
    """responses.input_tokens.count takes create's request and answers the input_tokens
    create reports for it: new input, instructions and tools, a chain, a conversation."""
    def both(**kw):
        counted = client.responses.input_tokens.count(**kw)
        assert counted.object == "response.input_tokens"
        return counted.input_tokens, create(client, **kw).usage.input_tokens

    alone = both(model=MODEL_ID, input="What's the weather in Chengdu?")
    assert alone[0] == alone[1] > 0
    tooled = both(model=MODEL_ID, input="成都天气怎么样？", tools=[WEATHER],
                  instructions="Answer briefly.")
    assert tooled[0] == tooled[1]
    first = create(client, input="My name is Xiaoming.")
    chained = both(model=MODEL_ID, previous_response_id=first.id, input="What is my name?")
    assert chained[0] == chained[1] > alone[0]
    conversation = client.conversations.create(items=[{"role": "user", "content": "Hi."}])
    held = both(model=MODEL_ID, conversation=conversation.id, input="What is my name?")
    assert held[0] == held[1]
    assert client.responses.input_tokens.count(input="Hi").input_tokens > 0, "model optional"


def test_input_tokens_of_a_context_over_the_window():
    """Over the window a count is still answered (that is what it is for); with
    truncation='auto' it counts what create would keep."""
    with serve_in_thread(log=None, context_window=200) as small:
        client = served_client(small)
        long = [{"role": "user", "content": f"Remember item {k}: " + "blue " * 40}
                for k in range(4)]
        over = client.responses.input_tokens.count(input=long)
        assert over.input_tokens > 200
        refused(lambda: create(client, input=long))
        kept = client.responses.input_tokens.count(input=long, truncation="auto")
        assert kept.input_tokens == create(client, input=long,
                                           truncation="auto").usage.input_tokens <= 200


def test_input_tokens_refuse_what_create_refuses(client):
    body = refused(lambda: client.responses.input_tokens.count(input="Hi",
                                                               extra_body={"stream": True}))
    assert (body["message"], body["code"]) == ("Unknown parameter: 'stream'.",
                                               "unknown_parameter")
    body = refused(lambda: client.responses.input_tokens.count(model="gpt-4o", input="Hi"))
    assert body["code"] == "model_not_found"
    body = refused(lambda: client.responses.input_tokens.count(
        previous_response_id="resp_missing", input="Hi"))
    assert body["code"] == "previous_response_not_found"


def test_a_sqlite_state_is_shared_between_openers(tmp_path):
    path = tmp_path / "responses.db"
    made = create(offline_client(state=SqliteState(path)), input="My name is Xiaoming.")
    later = offline_client(state=SqliteState(path))
    assert create(later, input="What is my name?", previous_response_id=made.id).output_text \
        == "You told me your name is Xiaoming."


def start_cli(*args):
    process = subprocess.Popen([sys.executable, "-m", "lesson_lib.offline", "serve", "--port",
                                "0", *args], stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    port = re.search(r"127\.0\.0\.1:(\d+)", line)
    assert port, line
    return process, f"http://127.0.0.1:{port.group(1)}/v1"


def stop_cli(process):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def test_two_workers_share_the_state():
    process, url = start_cli("--workers", "2")
    try:
        previous = None
        for k in range(12):  # a new connection each time: both workers answer some
            client = openai.OpenAI(base_url=url, api_key="offline", max_retries=0, timeout=30)
            previous = create(client, input=f"Number {k}.", previous_response_id=previous).id
            client.close()
        client = openai.OpenAI(base_url=url, api_key="offline", max_retries=0, timeout=30)
        assert len(list(client.responses.input_items.list(previous))) == 23
    finally:
        stop_cli(process)


def test_a_state_file_survives_a_restart(tmp_path):
    path = str(tmp_path / "state.db")
    process, url = start_cli("--workers", "1", "--state", path)
    try:
        made = create(openai.OpenAI(base_url=url, api_key="offline", max_retries=0),
                      input="My name is Xiaoming.")
    finally:
        stop_cli(process)
    time.sleep(0.1)
    process, url = start_cli("--workers", "1", "--state", path)
    try:
        again = create(openai.OpenAI(base_url=url, api_key="offline", max_retries=0),
                       input="What is my name?", previous_response_id=made.id)
        assert again.output_text == "You told me your name is Xiaoming."
    finally:
        stop_cli(process)
