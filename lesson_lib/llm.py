"""`chat()`: one call to a chat model, on the backend the environment chooses.

- Default: the offline teaching model (no key, no network, deterministic).
- `LESSON_BACKEND=openai` with `OPENAI_API_KEY`: a real provider. Optional
  `OPENAI_BASE_URL` for any OpenAI-compatible endpoint (DeepSeek, Qwen/DashScope,
  Ollama, vLLM …) and `LESSON_MODEL` for the model name.

Every call is made with the real `openai` SDK; only the HTTP transport differs.
The key is read from the environment by the SDK and never printed.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any

from lesson_lib.i18n import _

BACKENDS = ("offline", "openai")
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

_client: Any = None
_model: str | None = None


class BackendError(RuntimeError):
    """The environment asks for a backend that cannot be used as configured."""


def backend_name() -> str:
    """'offline' (the default) or 'openai', from LESSON_BACKEND."""
    name = os.environ.get("LESSON_BACKEND", "offline").strip().lower() or "offline"
    if name not in BACKENDS:
        raise BackendError(_("LESSON_BACKEND={name} is not a backend: use 'offline' (the "
                             "default) or 'openai' (any OpenAI-compatible provider)").format(
                               name=repr(name)))
    return name


def _make_client() -> tuple[Any, str]:
    if backend_name() == "offline":
        from lesson_lib.offline import MODEL_ID, offline_client

        return offline_client(), MODEL_ID
    if not os.environ.get("OPENAI_API_KEY"):
        raise BackendError(_("LESSON_BACKEND=openai needs OPENAI_API_KEY in the environment "
                             "(set it in your shell, not in a notebook cell); unset "
                             "LESSON_BACKEND to go back to the offline model"))
    import openai

    base_url = os.environ.get("OPENAI_BASE_URL") or None  # None: api.openai.com
    return openai.OpenAI(base_url=base_url), os.environ.get("LESSON_MODEL", DEFAULT_OPENAI_MODEL)


def get_client() -> Any:
    """The shared client (made on first use from the environment)."""
    global _client, _model
    if _client is None:
        _client, _model = _make_client()
    return _client


def model_name() -> str:
    """The model every call uses."""
    get_client()
    return _model  # type: ignore[return-value]


def set_client(client: Any, model: str | None = None) -> tuple[Any, str | None]:
    """Make `client` (and `model`) the shared ones; returns the previous pair.
    `set_client(None)` goes back to the environment's choice on the next call."""
    global _client, _model
    previous = (_client, _model)
    _client = client
    _model = model or (_model if client is not None else None)
    if client is not None and _model is None:
        from lesson_lib.offline import MODEL_ID

        _model = MODEL_ID
    return previous


@contextmanager
def using_client(client: Any, model: str | None = None):
    """Use `client` for the calls inside the `with` block, then restore."""
    previous = set_client(client, model)
    try:
        yield client
    finally:
        set_client(*previous)


def _model_for(client: Any) -> str:
    if client is None:
        return model_name()
    from lesson_lib.offline import MODEL_ID, is_offline

    return MODEL_ID if is_offline(client) else model_name()


def describe_backend() -> str:
    """One line saying which model answers, without any secret."""
    from lesson_lib.offline import is_offline, is_served

    client = get_client()
    if is_served(client):
        return _("offline teaching model '{model}' served at {url} (rule-based)").format(
            model=_model, url=client.base_url)
    if is_offline(client):
        return _("offline teaching model '{model}' (rule-based, no key, no network)").format(
            model=_model)
    return _("model '{model}' at {url}").format(model=_model, url=client.base_url)


def complete(messages: list[dict], tools: list[dict] | None = None,
             tool_choice: Any = None, *, client: Any = None, **extra: Any):
    """One Chat Completions request; returns the whole `ChatCompletion`."""
    kwargs: dict[str, Any] = {"model": extra.pop("model", None) or _model_for(client),
                              "messages": messages, "temperature": 0}
    if tools is not None:        # leave the key out entirely when there are no tools
        kwargs["tools"] = tools
    if tool_choice is not None:  # likewise: the API refuses tool_choice without tools
        kwargs["tool_choice"] = tool_choice
    return (client or get_client()).chat.completions.create(**kwargs, **extra)


def chat(messages: list[dict], tools: list[dict] | None = None,
         tool_choice: Any = None, *, client: Any = None, **extra: Any):
    """The seed's chat(): send `messages` (and `tools`), return the assistant message."""
    return complete(messages, tools, tool_choice, client=client, **extra).choices[0].message
