"""The two ways a Responses test reaches the offline model: in process, and served over
HTTP (one server per test module). `client` is parametrized over both; import the fixtures
into a test module to use them. Also the two helpers every Responses test calls."""

from __future__ import annotations

import openai
import pytest

from lesson_lib.offline import MODEL_ID, offline_client
from lesson_lib.offline.server import serve_in_thread
from lesson_lib.offline.state import MemoryState


@pytest.fixture(scope="module")
def server():
    with serve_in_thread(log=None) as running:
        yield running


def served_client(server, **kw):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="offline", max_retries=0,
                         timeout=30, **kw)


@pytest.fixture(params=["in process", "served"])
def client(request, server):
    if request.param == "in process":
        return offline_client(state=MemoryState())
    return served_client(server)


def create(client, **kw):
    """responses.create with the offline model's name unless `kw` names one."""
    kw.setdefault("model", MODEL_ID)
    return client.responses.create(**kw)


def refused(call, status=400) -> dict:
    """The error body of a call the API refuses with `status`."""
    with pytest.raises(openai.APIStatusError) as caught:
        call()
    assert caught.value.status_code == status, caught.value
    return caught.value.body
