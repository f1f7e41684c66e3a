"""The offline model's HTTP layer, through the real `openai` SDK, in process.

Most tests replace the brain with a fixed answer (`fake_brain`), so they protect the
HTTP layer (shapes, errors, usage, streaming, faults) whatever the brain says. A few
end-to-end tests at the bottom use the real brain.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys

import openai
import pytest
from messages import TIME_TOOL, WEATHER_TOOL

from lesson_lib.offline import (
    MODEL_ID,
    api,
    brain,
    inject_fault,
    is_offline,
    offline_async_client,
    offline_client,
)
from lesson_lib.offline.transport import OfflineTransport
from lesson_lib.tokens import count_messages, count_request, count_text, count_tools

WEATHER, TIME = WEATHER_TOOL, TIME_TOOL
KEY = {"authorization": "Bearer offline"}  # what the SDK sends; handle() refuses no key
ASK = [{"role": "system", "content": "You are a helpful assistant."},
       {"role": "user", "content": "What's the weather in Chengdu and Beijing?"}]

TEXT_ANSWER = {"message": {"role": "assistant",
                           "content": "Chengdu is cloudy, 16°C, with a light breeze. 成都多云。"},
               "finish_reason": "stop"}
CALL_ANSWER = {"message": {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_Y6qJ7ofLgOrBnMD5WbVAeiRV", "type": "function",
     "function": {"name": "get_current_weather", "arguments": '{"location":"Chengdu"}'}},
    {"id": "call_Bz9qJ7ofLgOrBnMD5WbVAeiR", "type": "function",
     "function": {"name": "get_current_weather", "arguments": '{"location":"Beijing"}'}}]},
    "finish_reason": "tool_calls"}


@pytest.fixture
def fake_brain(monkeypatch):
    """The brain answers with `fake_brain.answer` (text by default) and records the bodies."""
    class Fake:
        answer = TEXT_ANSWER
        bodies: list = []

        def reply(self, body):
            self.bodies.append(body)
            return json.loads(json.dumps(self.answer))

    fake = Fake()
    fake.bodies = []
    monkeypatch.setattr(brain, "reply", fake.reply)
    return fake


@pytest.fixture
def client():
    return offline_client()


def transport_of(client) -> OfflineTransport:
    return client._client._transport


def create(client, **kw):
    kw.setdefault("model", MODEL_ID)
    kw.setdefault("messages", ASK)
    return client.chat.completions.create(**kw)


# ----------------------------------------------------------------- success shapes

def test_reply_is_a_genuine_chat_completion_with_ids_in_the_real_format(client, fake_brain):
    reply = create(client)
    assert isinstance(reply, openai.types.chat.ChatCompletion), f"got {type(reply)}"
    assert re.fullmatch(r"chatcmpl-[A-Za-z0-9]{29}", reply.id), f"bad id {reply.id!r}"
    assert (reply.object, reply.model) == ("chat.completion", MODEL_ID)
    choice = reply.choices[0]
    assert (choice.index, choice.finish_reason, choice.logprobs) == (0, "stop", None)
    assert choice.message.content == TEXT_ANSWER["message"]["content"]
    assert choice.message.role == "assistant" and choice.message.refusal is None


def test_raw_body_has_exactly_the_documented_keys(client, fake_brain):
    fake_brain.answer = CALL_ANSWER
    raw = client.chat.completions.with_raw_response.create(model=MODEL_ID, messages=ASK,
                                                           tools=[WEATHER])
    body = json.loads(raw.content)
    assert list(body) == ["id", "object", "created", "model", "choices", "usage"], list(body)
    choice = body["choices"][0]
    assert set(choice) == {"index", "message", "logprobs", "finish_reason"}, set(choice)
    assert set(choice["message"]) == {"role", "content", "refusal", "tool_calls"}
    assert choice["message"]["content"] is None and choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == CALL_ANSWER["message"]["tool_calls"]
    assert isinstance(body["created"], int) and 1_700_000_000 < body["created"] < 1_900_000_000
    assert raw.headers["content-type"] == "application/json"


def test_usage_is_counted_with_lesson_lib_tokens(client, fake_brain):
    usage = create(client, tools=[WEATHER, TIME]).usage
    prompt = count_request(ASK, [WEATHER, TIME])
    completion = count_text(TEXT_ANSWER["message"]["content"])
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (
        prompt, completion, prompt + completion), f"expected {prompt}+{completion}, got {usage}"


def test_tool_call_usage_counts_names_and_arguments(client, fake_brain):
    fake_brain.answer = CALL_ANSWER
    usage = create(client, tools=[WEATHER]).usage
    expected = sum(count_text(c["function"]["name"]) + count_text(c["function"]["arguments"])
                   for c in CALL_ANSWER["message"]["tool_calls"])
    assert usage.completion_tokens == expected, f"expected {expected}, got {usage}"


def test_same_request_twice_gives_byte_identical_bodies(fake_brain):
    first = offline_client().chat.completions.with_raw_response.create(model=MODEL_ID,
                                                                      messages=ASK)
    second = offline_client().chat.completions.with_raw_response.create(model=MODEL_ID,
                                                                       messages=ASK)
    assert first.content == second.content, "two identical requests gave different bytes"


def test_a_different_request_gets_a_different_id(client, fake_brain):
    one = create(client)
    other = create(client, messages=ASK + [{"role": "user", "content": "and tomorrow?"}])
    assert one.id != other.id and one.created != other.created


def test_the_brain_sees_the_body_without_delivery_options(client, fake_brain):
    create(client, stream=True, stream_options={"include_usage": True}).close()
    create(client, temperature=0.2)
    assert "stream" not in fake_brain.bodies[0] and "stream_options" not in fake_brain.bodies[0]
    assert fake_brain.bodies[1]["temperature"] == 0.2


def test_sampling_options_are_accepted_and_change_nothing_but_the_id(client, fake_brain):
    plain = create(client)
    tuned = create(client, temperature=0.1, top_p=0.5, seed=7, user="xiaoming",
                   metadata={"lesson": "03"}, store=False, presence_penalty=0.5,
                   parallel_tool_calls=True, tools=[WEATHER])
    assert tuned.choices[0].message.content == plain.choices[0].message.content


def test_n_gives_n_identical_choices_and_counts_n_completions(client, fake_brain):
    reply = create(client, n=3)
    assert [c.index for c in reply.choices] == [0, 1, 2]
    assert len({c.message.content for c in reply.choices}) == 1
    one = count_text(TEXT_ANSWER["message"]["content"])
    assert reply.usage.completion_tokens == 3 * one, f"expected {3 * one}, got {reply.usage}"


@pytest.mark.parametrize("option", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_cuts_the_content_and_finishes_with_length(client, fake_brain, option):
    reply = create(client, **{option: 5})
    choice = reply.choices[0]
    full = TEXT_ANSWER["message"]["content"]
    assert choice.finish_reason == "length", f"expected 'length', got {choice.finish_reason!r}"
    assert full.startswith(choice.message.content) and choice.message.content != full
    assert reply.usage.completion_tokens == 5, f"expected 5, got {reply.usage.completion_tokens}"


def test_max_tokens_large_enough_changes_nothing(client, fake_brain):
    choice = create(client, max_tokens=1000).choices[0]
    assert (choice.finish_reason, choice.message.content) == (
        "stop", TEXT_ANSWER["message"]["content"])


def test_max_tokens_cuts_tool_call_arguments_like_the_real_api(client, fake_brain):
    fake_brain.answer = CALL_ANSWER
    reply = create(client, tools=[WEATHER], max_tokens=8)
    calls = reply.choices[0].message.tool_calls
    assert reply.choices[0].finish_reason == "length"
    assert len(calls) == 1, f"only the first call fits in 8 tokens, got {len(calls)}"
    assert '{"location":"Chengdu"}'.startswith(calls[0].function.arguments)
    assert reply.usage.completion_tokens == 8


def test_models_list_and_retrieve(client):
    assert [m.id for m in client.models.list()] == [MODEL_ID]
    model = client.models.retrieve(MODEL_ID)
    assert (model.id, model.object) == (MODEL_ID, "model")
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("gpt-x")
    assert caught.value.code == "model_not_found"


# ----------------------------------------------------------------- streaming

def assemble(chunks) -> dict:
    """Rebuild a message from stream chunks, as a careful client does."""
    content, calls, finish = [], {}, None
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            content.append(delta.content or "")
            for tc in delta.tool_calls or []:
                call = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                call["id"] = tc.id or call["id"]
                call["name"] += (tc.function.name or "") if tc.function else ""
                call["arguments"] += (tc.function.arguments or "") if tc.function else ""
            finish = choice.finish_reason or finish
    return {"content": "".join(content), "calls": [calls[k] for k in sorted(calls)],
            "finish": finish}


def flat(reply) -> dict:
    message = reply.choices[0].message
    return {"content": message.content or "",
            "calls": [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                      for c in message.tool_calls or []],
            "finish": reply.choices[0].finish_reason}


@pytest.mark.parametrize("answer", [TEXT_ANSWER, CALL_ANSWER], ids=["text", "tool_calls"])
def test_streamed_chunks_assemble_to_the_non_streamed_answer(client, fake_brain, answer):
    fake_brain.answer = answer
    chunks = list(create(client, tools=[WEATHER], stream=True))
    whole = create(client, tools=[WEATHER])
    assert assemble(chunks) == flat(whole), "the stream and the plain answer differ"
    assert {c.id for c in chunks} == {whole.id}, "every chunk must carry the completion's id"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.choices[0].delta.role is None for c in chunks[1:])
    last = chunks[-1].choices[0]
    assert last.delta.content is None and last.delta.tool_calls is None and last.finish_reason


def test_stream_splits_content_into_several_deltas(client, fake_brain):
    chunks = list(create(client, stream=True))
    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert len(pieces) > 5, f"expected token-sized pieces, got {pieces}"


def test_stream_tool_call_deltas_name_the_call_only_once(client, fake_brain):
    fake_brain.answer = CALL_ANSWER
    deltas = [tc for c in create(client, tools=[WEATHER], stream=True)
              for tc in c.choices[0].delta.tool_calls or []]
    for index in (0, 1):
        mine = [d for d in deltas if d.index == index]
        assert mine[0].id and mine[0].type == "function" and mine[0].function.name
        assert all(d.id is None and d.function.name is None for d in mine[1:]), mine
        assert len(mine) > 2, "arguments should arrive in fragments"


def test_stream_usage_chunk_only_with_include_usage(client, fake_brain):
    with_usage = list(create(client, stream=True, stream_options={"include_usage": True}))
    assert with_usage[-1].choices == [] and with_usage[-1].usage == create(client).usage
    assert all(c.usage is None for c in with_usage[:-1])
    raw = client.chat.completions.with_raw_response.create(model=MODEL_ID, messages=ASK,
                                                           stream=True)
    events = [line for line in raw.http_response.read().decode().split("\n\n") if line]
    assert events[-1] == "data: [DONE]", events[-1]
    assert all('"usage"' not in e for e in events), "no usage key without include_usage"


def test_stream_with_n_choices_delivers_each_choice_by_index(client, fake_brain):
    chunks = list(create(client, n=2, stream=True))
    for index in (0, 1):
        text = "".join(c.choices[0].delta.content or "" for c in chunks
                       if c.choices and c.choices[0].index == index)
        assert text == TEXT_ANSWER["message"]["content"], f"choice {index}: got {text!r}"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason]
    assert finishes == ["stop", "stop"], finishes


def test_stream_options_without_stream_is_refused(client, fake_brain):
    with pytest.raises(openai.BadRequestError) as caught:
        create(client, stream_options={"include_usage": True})
    assert caught.value.param == "stream_options"


# ----------------------------------------------------------------- every docs/protocol.md error

CALL_A = {"id": "call_a", "type": "function",
          "function": {"name": "get_current_weather", "arguments": '{"location":"Chengdu"}'}}
CALL_B = {**CALL_A, "id": "call_b"}
ASKED_AB = [{"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None, "tool_calls": [CALL_A, CALL_B]}]
NO_PROPS = {"type": "function", "function": {"name": "get_news", "description": "news",
                                             "parameters": {"type": "object"}}}

ERROR_CASES = {  # name: (create() arguments, exception, code, param, message)
    "pairing": (dict(messages=ASKED_AB + [{"role": "user", "content": "hello?"}],
                     tools=[WEATHER]), openai.BadRequestError, None, "messages.[2].role",
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                "response messages: call_a, call_b"),
    "orphan tool": (dict(messages=[{"role": "user", "content": "hi"},
                                   {"role": "tool", "tool_call_id": "call_a", "content": "16"}]),
                    openai.BadRequestError, None, "messages.[1].role",
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."),
    "unknown tool_call_id": (
        dict(messages=ASKED_AB + [{"role": "tool", "tool_call_id": "call_x", "content": "1"}],
             tools=[WEATHER]), openai.BadRequestError, None, "messages.[2].tool_call_id",
        "Invalid parameter: 'tool_call_id' of 'call_x' not found in 'tool_calls' of previous "
        "message."),
    "unknown tool_choice": (dict(tools=[WEATHER], tool_choice="any"), openai.BadRequestError,
                            "invalid_value", "tool_choice",
                            "Invalid value: 'any'. Supported values are: 'none', 'auto', and "
                            "'required'."),
    "tool_choice without tools": (
        dict(tool_choice="auto"), openai.BadRequestError, None, "tool_choice",
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
        "specified."),
    "tool_choice names a missing function": (
        dict(tools=[WEATHER], tool_choice={"type": "function", "function": {"name": "get_news"}}),
        openai.BadRequestError, None, "tool_choice",
        "Tool choice 'get_news' not found in 'tools' parameter."),
    "tools empty": (dict(tools=[]), openai.BadRequestError, "empty_array", "tools",
                    "Invalid 'tools': empty array. Expected an array with minimum length 1, but "
                    "got an empty array instead."),
    "invalid schema": (dict(tools=[WEATHER, NO_PROPS]), openai.BadRequestError,
                       "invalid_function_parameters", "tools[1].function.parameters",
                       "Invalid schema for function 'get_news': In context=(), object schema "
                       "missing properties."),
    "no model": (dict(model=""), openai.BadRequestError, None, None,
                 "you must provide a model parameter"),
    "null content": (dict(messages=[{"role": "user", "content": None}]),
                     openai.BadRequestError, None, "messages.[0].content",
                     "Invalid value for 'content': expected a string, got null."),
    "unknown model": (dict(model="gpt-x"), openai.NotFoundError, "model_not_found", None,
                      "The model `gpt-x` does not exist or you do not have access to it."),
    "tool message without tool_call_id": (
        dict(messages=ASKED_AB + [{"role": "tool", "content": "16"}], tools=[WEATHER]),
        openai.BadRequestError, None, "messages.[2].tool_call_id",
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a "
        "'tool_call_id'."),
    "content is an object": (
        dict(messages=[{"role": "user", "content": {"text": "hi"}}]), openai.BadRequestError,
        "invalid_type", "messages[0].content",
        "Invalid type for 'messages[0].content': expected one of a string or array of objects, "
        "but got an object instead."),
    "content is a number": (
        dict(messages=[{"role": "user", "content": 42}]), openai.BadRequestError,
        "invalid_type", "messages[0].content",
        "Invalid type for 'messages[0].content': expected one of a string or array of objects, "
        "but got an integer instead."),
    "messages is an object": (
        dict(messages={"role": "user", "content": "hi"}), openai.BadRequestError,
        "invalid_type", "messages",
        "Invalid type for 'messages': expected an array of objects, but got an object instead."),
    "a message is a string": (
        dict(messages=[{"role": "user", "content": "hi"}, "and Beijing?"]),
        openai.BadRequestError, "invalid_type", "messages[1]",
        "Invalid type for 'messages[1]': expected an object, but got a string instead."),
    "tools is an object": (
        dict(tools=WEATHER), openai.BadRequestError, "invalid_type", "tools",
        "Invalid type for 'tools': expected an array of objects, but got an object instead."),
    "tool without type": (
        dict(tools=[{"function": WEATHER["function"]}]), openai.BadRequestError,
        "missing_required_parameter", "tools[0].type",
        "Missing required parameter: 'tools[0].type'."),
    "tool without function": (
        dict(tools=[WEATHER, {"type": "function"}]), openai.BadRequestError,
        "missing_required_parameter", "tools[1].function",
        "Missing required parameter: 'tools[1].function'."),
    "tool function without name": (
        dict(tools=[{"type": "function", "function": {"description": "weather"}}]),
        openai.BadRequestError, "missing_required_parameter", "tools[0].function.name",
        "Missing required parameter: 'tools[0].function.name'."),
    "max_tokens is a string": (
        dict(max_tokens="ten"), openai.BadRequestError, "invalid_type", "max_tokens",
        "Invalid type for 'max_tokens': expected an integer, but got a string instead."),
    "n is a decimal": (
        dict(n=1.5), openai.BadRequestError, "invalid_type", "n",
        "Invalid type for 'n': expected an integer, but got a number instead."),
}

STATUS = {openai.BadRequestError: 400, openai.AuthenticationError: 401,
          openai.NotFoundError: 404}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_protocol_error_raises_the_sdk_exception_with_the_real_fields(client, fake_brain, case):
    kwargs, exc_type, code, param, message = ERROR_CASES[case]
    with pytest.raises(exc_type) as caught:
        create(client, **kwargs)
    error = caught.value
    got = (error.code, error.param, error.body["message"], error.type)
    assert got == (code, param, message, "invalid_request_error"), f"{case}: got {got}"
    assert error.status_code == STATUS[exc_type], f"{case}: got {error.status_code}"
    assert error.message == str(error) == f"Error code: {error.status_code} - {message}"
    assert transport_of(client).requests == 1, "the error must not be retried"
    assert fake_brain.bodies == [], "a refused request must never reach the brain"


@pytest.mark.parametrize("tools", [None, [WEATHER, TIME]], ids=["no tools", "with tools"])
def test_context_too_long_reports_the_lesson_lib_token_counts(fake_brain, tools):
    window = 30
    client = offline_client(window)
    messages = ASK + [{"role": "user", "content": "tell me more " * 10}]
    with pytest.raises(openai.BadRequestError) as caught:
        create(client, messages=messages, **({"tools": tools} if tools else {}))
    m, t = count_messages(messages), count_tools(tools)
    if tools:
        detail = (f"{m + t} tokens ({m} in the messages, {t} in the functions). Please reduce the "
                  "length of the messages or functions.")
    else:
        detail = f"{m} tokens. Please reduce the length of the messages."
    expected = (f"This model's maximum context length is {window} tokens. However, your "
                f"messages resulted in {detail}")
    error = caught.value
    assert (error.code, error.param, error.body["message"]) == (
        "context_length_exceeded", "messages", expected), f"got {error.message!r}"


@pytest.mark.parametrize("window", [0, -5, "4096", 2.5, True])
def test_an_impossible_context_window_is_refused_when_the_client_is_made(window):
    for make in (offline_client, offline_async_client):
        with pytest.raises(ValueError, match=r"context_window is a number of tokens, at least "
                                             r"1, got .*gives the default 16384"):
            make(context_window=window)


def test_context_window_is_inclusive(fake_brain):
    size = count_request(ASK)
    assert create(offline_client(size)).choices[0].finish_reason == "stop"
    with pytest.raises(openai.BadRequestError):
        create(offline_client(size - 1))


def test_bad_key_gets_the_real_401_with_the_key_masked(fake_brain):
    key = "sk-bad-lesson-0123456789abcdefwjh3"
    client = offline_client(api_key=key)
    with pytest.raises(openai.AuthenticationError) as caught:
        create(client)
    error = caught.value
    masked = "sk-bad-l" + "*" * (len(key) - 12) + "wjh3"
    assert error.body["message"] == (f"Incorrect API key provided: {masked}. You can find your API key "
                             "at https://platform.openai.com/account/api-keys."), error.message
    assert (error.status_code, error.code, error.param) == (401, "invalid_api_key", None)
    assert key not in str(error) and key not in json.dumps(error.body)


def test_any_other_key_is_accepted(fake_brain):
    for key in ("offline", "sk-proj-anything", "ollama", "sk-ba"):
        assert create(offline_client(api_key=key)).choices, f"key {key!r} was refused"


def test_mask_key_keeps_8_and_4_and_hides_the_rest():
    assert api.mask_key("sk-abc1234567890wjh3") == "sk-abc12********wjh3"
    assert api.mask_key("sk-bad") == "sk-***"


# ----------------------------------------------------------------- faults

def test_rate_limit_fault_is_the_real_429(client, fake_brain):
    inject_fault(client, "rate_limit")
    with pytest.raises(openai.RateLimitError) as caught:
        create(client)
    error = caught.value
    assert error.body["message"].startswith(f"Rate limit reached for {MODEL_ID} in organization ")
    assert "Please try again in 644ms." in error.message
    assert (error.status_code, error.code, error.type) == (429, "rate_limit_exceeded", "tokens")
    headers = error.response.headers
    assert headers["retry-after-ms"] == "644" and headers["x-ratelimit-limit-tokens"] == "30000"
    assert headers["x-should-retry"] == "false"


def test_server_error_fault_is_a_500(client, fake_brain):
    inject_fault(client, "server_error")
    with pytest.raises(openai.InternalServerError) as caught:
        create(client)
    assert (caught.value.status_code, caught.value.type) == (500, "server_error")
    assert caught.value.body["message"] == ("The server had an error while processing your request. "
                                    "Sorry about that!")


def test_timeout_fault_raises_api_timeout_error(client, fake_brain):
    inject_fault(client, "timeout")
    with pytest.raises(openai.APITimeoutError):
        create(client)
    assert transport_of(client).requests == 1


def test_a_fault_is_consumed_by_the_next_calls_only(client, fake_brain):
    inject_fault(client, "server_error", times=2)
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            create(client)
    assert create(client).choices[0].finish_reason == "stop"
    assert transport_of(client).requests == 3
    assert fake_brain.bodies and len(fake_brain.bodies) == 1


@pytest.mark.parametrize("kind", ["rate_limit", "server_error"])
def test_errors_are_not_retried_even_when_the_client_allows_retries(fake_brain, kind):
    client = offline_client(max_retries=3)  # x-should-retry: false still stops the SDK
    inject_fault(client, kind, times=5)
    with pytest.raises(openai.APIStatusError):
        create(client)
    assert transport_of(client).requests == 1, "the SDK retried an offline error"


def test_every_error_answer_says_do_not_retry():
    statuses = []
    for path, body in (("/v1/chat/completions", b"{not json"), ("/v1/nothing", b""),
                       ("/v1/chat/completions", json.dumps({"model": "gpt-x"}).encode())):
        status, headers, _ = api.handle("POST", path, KEY, body)
        statuses.append(status)
        assert headers["x-should-retry"] == "false", f"{path}: {headers}"
    for kind in ("rate_limit", "server_error"):
        assert api.fault_reply(kind, b"")[1]["x-should-retry"] == "false"
    status, headers, _ = api.handle("POST", "/v1/chat/completions", {}, b"{}")  # no key
    assert (status, headers["x-should-retry"]) == (401, "false")
    assert statuses == [400, 404, 404]


def test_inject_fault_on_a_real_provider_client_is_refused():
    real = openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(TypeError, match="offline_client"):
        inject_fault(real, "rate_limit")
    assert not is_offline(real) and is_offline(offline_client())


def test_unknown_fault_kind_is_refused(client):
    with pytest.raises(ValueError, match="rate_limit, server_error, timeout"):
        inject_fault(client, "meteor")


# ----------------------------------------------------------------- raw handle()

def test_bad_json_gets_a_400_with_the_parse_error_text():
    status, headers, body = api.handle("POST", "/v1/chat/completions", KEY, b"{oops")
    error = json.loads(body)["error"]
    assert status == 400 and error["message"].startswith("We could not parse the JSON body")
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", None, None)


def test_unknown_url_gets_a_404():
    status, _, body = api.handle("GET", "/v1/chat/completions", KEY, b"")
    assert status == 404, status
    assert json.loads(body)["error"]["message"] == "Invalid URL (GET /v1/chat/completions)"


def test_a_bug_in_the_brain_answers_500_not_a_crash(monkeypatch, capsys):
    def broken(body):
        raise RuntimeError("a bug")

    monkeypatch.setattr(brain, "reply", broken)
    status, headers, body = api.handle("POST", "/v1/chat/completions", KEY, json.dumps(
        {"model": MODEL_ID, "messages": ASK}).encode())
    assert status == 500 and json.loads(body)["error"]["type"] == "server_error"
    assert "a bug" in capsys.readouterr().err, "the traceback should reach stderr"


@pytest.mark.parametrize(("option", "value", "code"), [
    ("n", 0, "integer_below_min_value"), ("n", 129, "integer_above_max_value"),
    ("max_tokens", 0, "integer_below_min_value"), ("max_tokens", "ten", "invalid_type")])
def test_out_of_range_options_are_refused(client, fake_brain, option, value, code):
    with pytest.raises(openai.BadRequestError) as caught:
        create(client, **{option: value})
    assert (caught.value.code, caught.value.param) == (code, option)


# ----------------------------------------------------------------- async

def test_async_client_gets_the_same_answer_and_errors(fake_brain):
    async def run():
        client = offline_async_client()
        reply = await client.chat.completions.create(model=MODEL_ID, messages=ASK)
        stream = await client.chat.completions.create(model=MODEL_ID, messages=ASK, stream=True)
        chunks = [chunk async for chunk in stream]
        inject_fault(client, "rate_limit")
        try:
            await client.chat.completions.create(model=MODEL_ID, messages=ASK)
        except openai.RateLimitError as error:
            return reply, chunks, error
        return reply, chunks, None

    reply, chunks, error = asyncio.run(run())
    assert isinstance(reply, openai.types.chat.ChatCompletion)
    assert flat(reply) == flat(create(offline_client()))
    assert assemble(chunks) == flat(reply)
    assert error is not None and error.code == "rate_limit_exceeded"


def test_async_timeout_fault_raises_api_timeout_error(fake_brain):
    async def run():
        client = offline_async_client()
        inject_fault(client, "timeout")
        await client.chat.completions.create(model=MODEL_ID, messages=ASK)

    with pytest.raises(openai.APITimeoutError):
        asyncio.run(run())


# ----------------------------------------------------------------- no network, cheap import

def test_the_in_process_client_opens_no_socket_at_all(monkeypatch, fake_brain):
    opened = []

    def refuse(kind):
        def guard(*args, **kwargs):
            opened.append((kind, args[1:] if kind != "getaddrinfo" else args))
            raise AssertionError(f"the offline client used the network: {kind}{args}")
        return guard

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    client = offline_client()
    create(client)
    list(create(client, stream=True))
    list(client.models.list())
    inject_fault(client, "rate_limit")
    with pytest.raises(openai.RateLimitError):
        create(client)
    assert opened == [], f"expected no socket use, got {opened}"


def test_importing_the_package_does_not_import_openai():
    code = ("import sys, lesson_lib.offline; "
            "print(sorted(m for m in ('openai', 'httpx2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", f"import lesson_lib.offline should stay cheap, it imported {out}"


# ----------------------------------------------------------------- end to end, real brain

WEATHER_QUESTION = [{"role": "user", "content": "What's the weather like in Chengdu today?"}]


def test_real_brain_answers_a_weather_question_with_a_tool_call(client):
    reply = create(client, messages=WEATHER_QUESTION, tools=[WEATHER, TIME])
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls", f"expected a tool call, got {choice}"
    call = choice.message.tool_calls[0]
    assert call.function.name == "get_current_weather"
    assert json.loads(call.function.arguments)["location"] == "Chengdu"
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", call.id), call.id


def test_real_brain_round_trip_ends_with_a_text_answer(client):
    first = create(client, messages=WEATHER_QUESTION, tools=[WEATHER]).choices[0].message
    call = first.tool_calls[0]
    result = json.dumps({"location": "Chengdu", "temperature": 16, "unit": "celsius",
                         "condition": "cloudy"})
    history = WEATHER_QUESTION + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": result}]
    final = create(client, messages=history, tools=[WEATHER]).choices[0]
    assert final.finish_reason == "stop" and "16" in final.message.content, final


def test_real_brain_stream_equals_plain_answer(client):
    kwargs = dict(messages=WEATHER_QUESTION, tools=[WEATHER])
    assert assemble(create(client, stream=True, **kwargs)) == flat(create(client, **kwargs))
