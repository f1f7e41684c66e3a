"""Retries with back-off, the SDK's own: a fault ordered with `retry_after` invites a retry
(x-should-retry: true, Retry-After), which a client made with max_retries > 0 takes,
waiting what the header says; without it, or with max_retries=0, nothing is retried."""

from __future__ import annotations

import asyncio

import openai
import pytest

from lesson_lib.offline import (
    MAX_RETRY_AFTER,
    MODEL_ID,
    api,
    attempts,
    inject_fault,
    offline_async_client,
    offline_client,
)

ASK = {"model": MODEL_ID, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def waits(monkeypatch):
    """The SDK's waits between attempts, recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr("openai._base_client.time.sleep", slept.append)
    return slept


@pytest.mark.parametrize("kind", ["rate_limit", "server_error"])
def test_a_client_with_retries_waits_retry_after_then_succeeds(waits, kind):
    client = offline_client(max_retries=2)
    inject_fault(client, kind, times=2, retry_after=0.2)
    response = client.chat.completions.with_raw_response.create(**ASK)
    assert response.parse().choices[0].message.content
    assert (attempts(client), response.retries_taken) == (3, 2)
    assert waits == [0.2, 0.2], "the SDK must wait what Retry-After says"


def test_more_faults_than_retries_end_in_the_error(waits):
    client = offline_client(max_retries=2)
    inject_fault(client, "rate_limit", times=3, retry_after=0.05)
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(**ASK)
    assert attempts(client) == 3 and waits == [0.05, 0.05]
    headers = caught.value.response.headers
    assert (headers["x-should-retry"], headers["retry-after-ms"], headers["retry-after"]) == (
        "true", "50", "1")
    assert "Please try again in 50ms." in caught.value.message
    assert client.chat.completions.create(**ASK).choices, "the faults are used up"


def test_the_default_offline_client_still_never_retries(waits):
    client = offline_client()  # max_retries=0
    inject_fault(client, "rate_limit", retry_after=0.1)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(**ASK)
    assert attempts(client) == 1 and waits == []


def test_a_fault_without_retry_after_says_do_not_retry(waits):
    client = offline_client(max_retries=2)
    inject_fault(client, "rate_limit")
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(**ASK)
    assert attempts(client) == 1 and waits == []
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert "Please try again in 644ms." in caught.value.message


def test_the_async_client_retries_too(monkeypatch):
    slept: list[float] = []

    async def sleep(seconds):
        slept.append(seconds)

    monkeypatch.setattr("openai._base_client.anyio.sleep", sleep)

    async def main():
        client = offline_async_client(max_retries=1)
        inject_fault(client, "rate_limit", retry_after=0.3)
        completion = await client.chat.completions.create(**ASK)
        return completion, attempts(client)

    completion, made = asyncio.run(main())
    assert completion.choices and made == 2 and slept == [0.3]


def test_retry_headers_round_the_seconds_up():
    assert api.retry_headers(0.2) == {"x-should-retry": "true", "retry-after-ms": "200",
                                      "retry-after": "1"}
    assert api.retry_headers(2.5)["retry-after"] == "3"
    status, headers, _ = api.fault_reply("server_error", b"", 1.0)
    assert (status, headers["retry-after-ms"], headers["x-should-retry"]) == (500, "1000", "true")


@pytest.mark.parametrize("kind, retry_after, times, match", [
    ("timeout", 0.1, 1, "a timeout has no answer"),
    ("rate_limit", 0, 1, "more than 0"),
    ("rate_limit", -1, 1, "more than 0"),
    ("rate_limit", "0.1", 1, "a number of seconds"),
    ("rate_limit", MAX_RETRY_AFTER + 1, 1, f"at most {MAX_RETRY_AFTER:g}"),
    ("rate_limit", True, 1, "a number of seconds"),
    ("rate_limit", None, 0, "at least 1"),
    ("meteor", 0.1, 1, "unknown fault 'meteor'"),
])
def test_bad_fault_orders_are_refused(kind, retry_after, times, match):
    client = offline_client()
    with pytest.raises(ValueError, match=match):
        inject_fault(client, kind, times, retry_after=retry_after)
    assert client.chat.completions.create(**ASK).choices, "nothing was queued"


def test_attempts_needs_an_offline_client():
    with pytest.raises(TypeError, match="offline_client"):
        attempts(openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1"))
