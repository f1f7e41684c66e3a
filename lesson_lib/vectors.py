"""The offline embedder: texts become unit vectors from weights that ship inside a wheel.

This is what the offline model computes for `POST /v1/embeddings` (lesson_lib.offline.api)
and what its recall of long-term memories compares (offline/recall.py); the lesson's side,
`embed()` through the backend switch and the `Embedder` of long-term memory, is
lesson_lib.embeddings, which re-exports these names.

WordLlama's static embeddings ("l2_supercat", 256 dimensions): a 16 MB table of token
vectors that ships inside the `wordllama` wheel. A text's vector is the average of its
tokens' vectors, made unit length. It is loaded once, on first use (about half a second),
from the installed package folder, with downloads disabled: nothing is fetched, ever. The
same text always gets the same vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from lesson_lib.i18n import _

DIMENSIONS = 256                 # the offline embedder's vectors
MAX_INPUTS = 2048                # inputs in one request: the real API's limit
MAX_INPUT_TOKENS = 8192          # tokens in one input: the real embedding models' limit
WORDLLAMA_CONFIG = "l2_supercat"


@lru_cache(maxsize=1)
def offline_embedder() -> Any:
    """WordLlama's model, loaded once from the installed package (never downloaded)."""
    import logging  # noqa: PLC0415

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # noqa: PLC0415  (lazy: most lessons never embed)
    except ImportError as e:  # pragma: no cover - it is a dependency of the project
        raise RuntimeError(_("the offline embedder needs the package wordllama: "
                             "pip install -e . (it is in pyproject.toml's dependencies)")) from e
    finally:  # its import calls logging.basicConfig(level=INFO): every library's INFO
        for handler in root.handlers[:]:  # lines (each HTTP request…) would be printed
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    folder = Path(wordllama.__file__).parent  # holds weights/ and tokenizers/ of the wheel
    # cache_dir=the package folder: its plain offline load looks for the tokenizer elsewhere
    return wordllama.WordLlama.load(WORDLLAMA_CONFIG, cache_dir=folder, dim=DIMENSIONS,
                                    disable_download=True)


def offline_vectors(texts: Sequence[str],           # the texts, any language
                    dimensions: int | None = None,  # fewer than 256: the first ones, renormed
                    ) -> Any:
    """The offline model's vectors: a float32 numpy array, one unit-length row per text
    (an empty text, which has no tokens, gets a row of zeros)."""
    import numpy as np  # noqa: PLC0415

    texts = list(texts)
    if not texts:
        return np.zeros((0, dimensions or DIMENSIONS), dtype=np.float32)
    raw = offline_embedder().embed(texts, norm=False)  # its norm=True divides 0 by 0
    if dimensions is not None and dimensions < raw.shape[1]:
        raw = raw[:, :dimensions]  # trained "matryoshka": the first dimensions carry most
    return unit_rows(raw)


def unit_rows(matrix: Any) -> Any:
    """Each row scaled to length 1 (a row of zeros stays zeros), as float32."""
    import numpy as np  # noqa: PLC0415

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
