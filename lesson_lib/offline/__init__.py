"""The offline teaching model: a protocol-strict, rule-based stand-in for a chat model.

It is reached through the real `openai` SDK, so a lesson gets genuine `ChatCompletion`
objects and genuine `openai.BadRequestError`s, with no key and no network:

    from lesson_lib.offline import MODEL_ID, offline_client
    client = offline_client()                      # an openai.OpenAI
    client.chat.completions.create(model=MODEL_ID, messages=[...])

The Responses API answers from the same brain (`responses.py`), with what it stores
(responses, conversations) kept in `state.py`:

    first = client.responses.create(model=MODEL_ID, input="My name is Xiaoming.")
    client.responses.create(model=MODEL_ID, input="What is my name?",
                            previous_response_id=first.id)

Compaction, as the real API does it (`context_management` on create, and
`client.responses.compact(...)`), makes opaque `compaction` items (`compaction.py`);
`compaction.peek(item)` is a teaching view of what the offline one kept and dropped.

Two ways in, one behaviour (`api.handle`):
- in process: `offline_client()` plugs `transport.OfflineTransport` into the SDK's
  HTTP client; the base URL uses the reserved `.invalid` domain, so nothing could be
  resolved even if the transport were bypassed, and no socket is ever opened;
- over HTTP: `python -m lesson_lib.offline serve` (or `server.serve_in_thread()`)
  answers on 127.0.0.1 for any OpenAI-compatible client (curl, LangChain, ...).

Only `MODEL_ID` is accepted as the model name (any other name gets the real 404
`model_not_found`), so a request that reaches it by mistake fails loudly. Any API key
is accepted, except keys that start with `BAD_KEY_PREFIX` ("sk-bad"): those get the
real 401 `invalid_api_key` text, with the key masked, for the lesson about keys.

Faults on demand, for lessons and tests: `inject_fault(client, "rate_limit")` (429),
`"server_error"` (500) or `"timeout"` (openai.APITimeoutError) on the client's next
call(s). By default offline clients never retry (`max_retries=0`, and every error answer
says `x-should-retry: false`).

To show the SDK's own retry with back-off, order retryable faults and give the client
retries of its own:

    client = offline_client(max_retries=2)
    inject_fault(client, "rate_limit", times=2, retry_after=0.2)
    client.chat.completions.create(...)   # 429, wait 0.2 s, 429, wait 0.2 s, answered

With `retry_after` (seconds, more than 0 and at most MAX_RETRY_AFTER) the 429 (or the
500) says `x-should-retry: true`, `retry-after-ms` (the SDK prefers it) and `retry-after`
(whole seconds, rounded up, as the real header), and the 429's text says "Please try
again in 200ms."; the SDK then waits that long before each retry instead of its own
back-off (0.5 s doubling, with jitter). A client with `max_retries=0` still does not
retry, and more faults than retries end in the error. `transport.requests` counts the
attempts (`lesson_lib.offline.attempts(client)`).

Importing this package is cheap: `openai` and `httpx2` are imported on first use.
"""

from __future__ import annotations

import functools
import json
from typing import Any

MODEL_ID = "offline-rule-based-teacher"
DEFAULT_CONTEXT_WINDOW = 16_384  # tokens; a lesson shrinks it to show context_length_exceeded
BASE_URL = "http://offline.invalid/v1"  # reserved TLD (RFC 2606): never resolvable
OFFLINE_API_KEY = "offline"


def context_window_or_default(tokens: int | None) -> int:
    """The context window to use: `tokens`, or the default for None; anything but a whole
    number of at least 1 is refused here, not at the first request."""
    if tokens is None:
        return DEFAULT_CONTEXT_WINDOW
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        raise ValueError(f"context_window is a number of tokens, at least 1, got {tokens!r} "
                         f"(None, or leaving it out, gives the default {DEFAULT_CONTEXT_WINDOW})")
    return tokens
BAD_KEY_PREFIX = "sk-bad"  # keys starting with this get the real 401, for the lesson on keys
FAULT_KINDS = ("rate_limit", "server_error", "timeout")
RETRYABLE_FAULTS = ("rate_limit", "server_error")  # those that can carry a Retry-After
MAX_RETRY_AFTER = 60.0  # seconds; the SDK itself gives up on waits over 120 s

__all__ = ["MODEL_ID", "DEFAULT_CONTEXT_WINDOW", "BASE_URL", "BAD_KEY_PREFIX", "FAULT_KINDS",
           "RETRYABLE_FAULTS", "MAX_RETRY_AFTER", "offline_client", "offline_async_client",
           "inject_fault", "is_offline", "attempts"]


def offline_client(context_window: int | None = None,  # tokens; None → DEFAULT_CONTEXT_WINDOW
                   *, api_key: str = OFFLINE_API_KEY,  # "sk-bad…" to see the real 401
                   timeout: float = 60.0,              # seconds (the SDK's own setting)
                   state: Any = None,                  # stored responses: see below
                   **kw: Any):                         # more openai.OpenAI(...) arguments
    """An `openai.OpenAI` client wired to the offline teaching model, in process.

    What the Responses API stores (responses, conversations) is shared by every in-process
    client, as one account's clients share it on the real API; `state=MemoryState()`
    (lesson_lib.offline.state) gives a client a store of its own, empty, which makes the
    ids it is given repeat from one run to the next."""
    import openai  # noqa: PLC0415  (lazy: `import openai` costs about half a second)

    from lesson_lib.offline.transport import OfflineTransport  # noqa: PLC0415

    transport = OfflineTransport(context_window, state)
    kw.setdefault("max_retries", 0)  # errors are answered with x-should-retry: false anyway
    return openai.OpenAI(api_key=api_key, base_url=BASE_URL, timeout=timeout,
                         http_client=openai.DefaultHttpxClient(transport=transport), **kw)


def offline_async_client(context_window: int | None = None,  # tokens; None → default window
                         *, api_key: str = OFFLINE_API_KEY,  # "sk-bad…" to see the real 401
                         timeout: float = 60.0,              # seconds
                         state: Any = None,                  # as offline_client's
                         **kw: Any):                         # more openai.AsyncOpenAI arguments
    """An `openai.AsyncOpenAI` client wired to the offline teaching model, in process."""
    import openai  # noqa: PLC0415

    from lesson_lib.offline.transport import AsyncOfflineTransport  # noqa: PLC0415

    transport = AsyncOfflineTransport(context_window, state)
    kw.setdefault("max_retries", 0)
    return openai.AsyncOpenAI(api_key=api_key, base_url=BASE_URL, timeout=timeout,
                              http_client=openai.DefaultAsyncHttpxClient(transport=transport),
                              **kw)


def _transport_of(client: Any):
    """The offline transport behind an SDK client, an httpx2 client or a transport; else None."""
    from lesson_lib.offline import transport  # noqa: PLC0415

    kinds = (transport.OfflineTransport, transport.AsyncOfflineTransport)
    for candidate in (client, getattr(client, "_transport", None),
                      getattr(getattr(client, "_client", None), "_transport", None)):
        if isinstance(candidate, kinds):
            return candidate
    return None


def is_offline(client: Any) -> bool:
    """True when the offline teaching model answers `client`: in process (made by
    offline_client()), or served (`serve`, a teacher's machine) at a base URL whose
    `/v1/models` lists MODEL_ID as the offline model's. Only a loopback or private-network
    address is asked, once per URL: a public provider is never probed."""
    if _transport_of(client) is not None:
        return True
    base_url = getattr(client, "base_url", None)
    return base_url is not None and _served_here(str(base_url).rstrip("/"),
                                                 getattr(client, "api_key", "") or "")


def is_served(client: Any) -> bool:
    """True when `client` reaches the offline model over HTTP (not in process)."""
    return _transport_of(client) is None and is_offline(client)


@functools.lru_cache(maxsize=16)
def _served_here(base_url: str, api_key: str) -> bool:
    """Does the server at `base_url` (loopback or private network only) serve the offline model?"""
    import ipaddress  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415
    from urllib.parse import urlsplit  # noqa: PLC0415

    host = urlsplit(base_url).hostname or ""
    try:
        near = host == "localhost" or ipaddress.ip_address(host).is_private
    except ValueError:  # a name: only localhost is known to be this machine
        near = False
    if not near:
        return False
    request = urllib.request.Request(f"{base_url}/models",
                                     headers={"Authorization": f"Bearer {api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=2) as answer:  # noqa: S310 (http to a near host)
            listed = json.loads(answer.read()).get("data") or []
    except Exception:  # not listening, not JSON, a 401: not (usably) the offline model
        return False
    from lesson_lib.offline.api import OWNED_BY  # noqa: PLC0415

    return any(isinstance(m, dict) and m.get("id") == MODEL_ID and m.get("owned_by") == OWNED_BY
               for m in listed)


def _offline_transport(client: Any, what: str):
    transport = _transport_of(client)
    if transport is None:
        raise TypeError(
            f"{what}() works on clients made by offline_client(); this "
            f"{type(client).__name__} does not use the offline transport (a real provider's "
            "faults cannot be ordered): build the client with lesson_lib.offline.offline_client()")
    return transport


def check_retry_after(kind: str, retry_after: float | None) -> float | None:
    """`retry_after` if it can be ordered for `kind`; else a ValueError naming the rule."""
    if retry_after is None:
        return None
    if kind not in RETRYABLE_FAULTS:
        raise ValueError(
            f"retry_after is for faults answered with an HTTP error ({', '.join(RETRYABLE_FAULTS)}), "
            f"not {kind!r}: a timeout has no answer to carry a Retry-After header (the SDK "
            "retries a timeout by itself when max_retries > 0)")
    if isinstance(retry_after, bool) or not isinstance(retry_after, (int, float)) or \
            not 0 < retry_after <= MAX_RETRY_AFTER:
        raise ValueError(f"retry_after is a number of seconds, more than 0 and at most "
                         f"{MAX_RETRY_AFTER:g}, got {retry_after!r} (e.g. retry_after=0.2)")
    return float(retry_after)


def inject_fault(client: Any,       # a client made by offline_client() / offline_async_client()
                 kind: str,         # "rate_limit" (429), "server_error" (500) or "timeout"
                 times: int = 1,    # how many of the client's next calls fail
                 *, retry_after: float | None = None):  # seconds: the SDK may retry after it
    """Make the client's next `times` calls fail the way a real service sometimes does.
    With `retry_after` the errors invite a retry (x-should-retry: true, Retry-After), which
    a client made with max_retries > 0 takes; without it they say not to retry."""
    transport = _offline_transport(client, "inject_fault")
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault {kind!r}: use one of {', '.join(FAULT_KINDS)}")
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise ValueError(f"times is how many calls fail, a whole number of at least 1, "
                         f"got {times!r}")
    transport.fail_next(kind, times, retry_after=check_retry_after(kind, retry_after))


def attempts(client: Any) -> int:
    """How many requests the client has sent to the offline model, retries and faults
    included: after a call retried twice, two more than before it."""
    return _offline_transport(client, "attempts").requests
