"""httpx2 transports that answer the `openai` SDK in process, with `api.handle()`.

The SDK builds a real HTTP request, the transport hands it to `handle()` and gives
back a real `httpx2.Response`; the SDK then parses it exactly as it parses a real
provider's answer. No socket is opened. A transport also keeps the faults a lesson
ordered (`fail_next`) and counts the requests that reached it (`requests`), which is
how tests prove that no error is retried.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

from lesson_lib.offline import FAULT_KINDS, context_window_or_default
from lesson_lib.offline.api import fault_reply, handle
from lesson_lib.offline.state import default_state


class _OfflineBase:
    """What the sync and async transports share: the window, the faults, the count."""

    def __init__(self, context_window: int | None = None,  # tokens; None → the default
                 state: Any = None):  # stored responses; None: shared by in-process clients
        self.context_window = context_window_or_default(context_window)
        self.state = state if state is not None else default_state()
        self.requests = 0  # requests that reached the transport (faults included)
        self._faults: deque[tuple[str, float | None]] = deque()  # (kind, retry_after)
        self._lock = threading.Lock()

    def fail_next(self, kind: str,       # "rate_limit", "server_error" or "timeout"
                  times: int = 1,        # how many of the next requests fail this way
                  retry_after: float | None = None):  # seconds: the answer invites a retry
        """Make the next `times` requests fail with `kind` (queued after earlier faults)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}: use one of {', '.join(FAULT_KINDS)}")
        with self._lock:
            self._faults.extend([(kind, retry_after)] * times)

    def _answer(self, request: httpx2.Request, body: bytes):
        """(status, headers, payload) for one request, after any fault waiting for it."""
        with self._lock:
            self.requests += 1
            fault, retry_after = self._faults.popleft() if self._faults else (None, None)
        if fault == "timeout":
            raise httpx2.ReadTimeout("offline fault: the read timed out (injected with "
                                     "inject_fault(client, 'timeout'))", request=request)
        if fault:
            return fault_reply(fault, body, retry_after)
        return handle(request.method, request.url.raw_path.decode("ascii"),
                      request.headers, body, context_window=self.context_window,
                      state=self.state)


class OfflineTransport(_OfflineBase, httpx2.BaseTransport):
    """For `openai.OpenAI`: `DefaultHttpxClient(transport=OfflineTransport())`."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        status, headers, payload = self._answer(request, request.read())
        if isinstance(payload, bytes):
            return httpx2.Response(status, headers=headers, content=payload)
        return httpx2.Response(status, headers=headers, content=_sync_stream(payload))


class AsyncOfflineTransport(_OfflineBase, httpx2.AsyncBaseTransport):
    """For `openai.AsyncOpenAI`: `DefaultAsyncHttpxClient(transport=AsyncOfflineTransport())`."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        status, headers, payload = self._answer(request, await request.aread())
        if isinstance(payload, bytes):
            return httpx2.Response(status, headers=headers, content=payload)
        return httpx2.Response(status, headers=headers, content=_async_stream(payload))


def _sync_stream(events: Iterator[bytes]) -> Iterator[bytes]:
    yield from events


async def _async_stream(events: Iterator[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event
