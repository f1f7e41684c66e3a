"""chat() picks the backend from the environment and sends exactly the seed's request."""

import json

import httpx2
import openai
import pytest

from lesson_lib import llm
from lesson_lib.offline import MODEL_ID, offline_client


@pytest.fixture(autouse=True)
def fresh_client():
    llm.set_client(None)
    yield
    llm.set_client(None)


def capturing_client(seen: list):
    def handler(request):
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok"}}]})
    return openai.OpenAI(api_key="test", base_url="http://capture.invalid/v1", max_retries=0,
                         http_client=openai.DefaultHttpxClient(transport=httpx2.MockTransport(handler)))


def test_default_backend_is_the_offline_model():
    assert llm.backend_name() == "offline"
    assert llm.model_name() == MODEL_ID
    assert "offline teaching model" in llm.describe_backend()
    reply = llm.chat([{"role": "user", "content": "My name is Xiaoming"}])
    assert reply.role == "assistant" and "Xiaoming" in reply.content


def test_tools_and_tool_choice_are_left_out_when_none():
    seen: list = []
    client = capturing_client(seen)
    llm.chat([{"role": "user", "content": "hi"}], client=client, model="m")
    llm.chat([{"role": "user", "content": "hi"}], tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {}}}}],
        tool_choice="auto", client=client, model="m")
    assert "tools" not in seen[0] and "tool_choice" not in seen[0], seen[0]
    assert seen[0]["temperature"] == 0
    assert seen[1]["tool_choice"] == "auto" and seen[1]["tools"][0]["function"]["name"] == "f"


def test_complete_returns_the_whole_chat_completion():
    response = llm.complete([{"role": "user", "content": "hello"}])
    assert response.object == "chat.completion" and response.id.startswith("chatcmpl-")
    assert response.usage.total_tokens > 0


def test_openai_backend_without_key_says_what_to_set(monkeypatch):
    monkeypatch.setenv("LESSON_BACKEND", "openai")
    with pytest.raises(llm.BackendError, match="OPENAI_API_KEY"):
        llm.get_client()


def test_unknown_backend_is_named(monkeypatch):
    monkeypatch.setenv("LESSON_BACKEND", "claude")
    with pytest.raises(llm.BackendError, match="'claude' is not a backend"):
        llm.backend_name()


def test_openai_backend_uses_base_url_and_model_and_never_shows_the_key(monkeypatch):
    secret = "sk-test-" + "x" * 30
    monkeypatch.setenv("LESSON_BACKEND", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LESSON_MODEL", "qwen2.5")
    described = llm.describe_backend()
    assert "qwen2.5" in described and "127.0.0.1:9" in described
    assert secret not in described and secret not in repr(llm.get_client().base_url)


def test_using_client_swaps_and_restores():
    small = offline_client(context_window=50)
    before = llm.get_client()
    with llm.using_client(small):
        assert llm.get_client() is small and llm.model_name() == MODEL_ID
        with pytest.raises(openai.BadRequestError) as info:
            llm.chat([{"role": "user", "content": "word " * 100}])
        assert info.value.code == "context_length_exceeded"
    assert llm.get_client() is before
