"""The two ways a Responses test reaches the offline model: in process, and served over
HTTP (one server per test module). `client` is parametrized over both; import the fixtures
into a test module to use them."""

from __future__ import annotations

import openai
import pytest

from lesson_lib.offline import offline_client
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
