"""Would an approximate index make a big memory's search faster, and what would it lose?

    pip install -e ".[ann]"        # faiss-cpu and usearch: for this script only
    python benchmarks/ann.py [--db FILE] [--size 100000] [--rounds 3]

LongTermMemory's dense search is exact: at 100,000 memories it scans a rough int8 copy of
every vector (51 MB) on two threads, then scores again the few hundred rows that could be
among the best (lesson_lib.longterm, `_Matrix.top`). The usual way to go faster is an
approximate index, which looks at a part of the vectors only. This script measures two
kinds of them on the memory benchmarks/longterm.py builds (the evaluation's memories among
invented distractors, half English and half Chinese), in the same place of the search:

- exact: `_Matrix.top(question, 50, balance=True)`, the code the series runs;
- IVF: faiss's IndexIVFScalarQuantizer (k-means lists, int8 vectors), `nprobe` lists read;
- HNSW: usearch's graph index (int8 vectors, cosine), `ef` candidates kept while searching.

Each approximate index is built per script (one for the Chinese memories, one for the
others), so the search keeps the exact one's balance: a script's level is the mean of the
BALANCE best cosines found in that script, each candidate is ranked by its cosine less its
script's level, and the cosines are the float32 rows' own. For each it prints the time to
build, the milliseconds of the dense step (p50, p99; the question already embedded) and of
the whole search (`search(question, 5)`, fused: the question embedded, the words looked up,
the hits read), how much of the exact top 5 and top 50 it finds (overlap), and the fused
search's recall@5 on the evaluation's answerable questions, with it in place of the exact
step. The exact search is timed again after the IVF indexes, to show the machine's drift.

Measured (2026-12-06, the slower machine of benchmarks/longterm.py's notes, 2 cores, load
average 1.3 at the start, nothing else running, faiss-cpu 1.15.1, usearch 2.26.6, 100,000
memories, the 109 questions 3 times): p50 / p99 ms of the dense step and of the whole
search, overlap with the exact top 5, fused recall@5.

    exact (the series)         11.88 / 13.31   24.71 / 38.00   1.000   0.969
    IVF, 256 lists, 16 read     1.69 /  2.11   13.16 / 27.15   0.705   0.928   (14 s to build)
    IVF, 256 lists, 32 read     2.84 /  4.23   13.32 / 29.47   0.809   0.948
    IVF, 256 lists, 64 read     4.93 /  6.01   15.90 / 31.35   0.881   0.979
    exact again                 9.58 / 14.12   22.55 / 42.31   1.000   0.969
    HNSW, 16 links, ef 128      2.03 /  3.13   13.60 / 28.62   0.475   0.876   (21 to 28 s)
    HNSW, 16 links, ef 512      5.14 /  7.92   18.24 / 30.71   0.594   0.907
    HNSW, 32 links, ef 1,024    8.58 / 13.02   25.82 / 33.02   0.943   0.969

(An earlier run the same hour gave the same overlaps and recalls, the exact dense step at
8.62 / 11.82 ms; faiss's own HNSW, 16 links, ef 128, found 0.40 of the exact top 5 in a
prototype.) The graph index loses half of the exact top 5 before it is much faster, and is
as slow as the exact scan where it is close to it. The IVF index at 64 lists of 256 keeps
the fused recall (0.979: the dense list changes, and fusion with the words makes up for it)
at half the exact step's time. But no index brings the whole search near 20 ms p99 here:
with the dense step at 1.7 ms, the search is still 27 ms p99, since embedding the question
(5 to 9 ms alone on this machine, more with the lexical thread beside it), the words and
reading the hits remain. The distractors are
made from templates, so many are near copies of each other: a graph index gets lost among
them, and their k-means lists are not apart (a user's real memories repeat themselves too:
the same trip, the same meal, written down each week). And once usearch 2.26 is imported,
the simsimd int8 scan the exact search uses fails in the same process (its numkong and
simsimd disagree on int8 arrays). The exact scan stays; see
benchmarks/longterm.py for where the rest of a search's time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from lesson_lib import longterm as lt  # noqa: E402
from lesson_lib.longterm_eval import fill, load_eval, recall  # noqa: E402
from lesson_lib.sessions import SessionStore  # noqa: E402

N = 50  # a fused search's dense list (lesson_lib.longterm.CANDIDATES)


def build_memory(path: str, size: int) -> tuple[lt.LongTermMemory, dict[str, int]]:
    """The benchmark's memory in `path` (made once, then reused): the evaluation's memories
    among distractors up to `size`; returns it and {eval id: memory id}."""
    import longterm as bench  # noqa: PLC0415 - benchmarks/longterm.py: its distractors

    sidecar = path + ".ids.json"
    memory = lt.LongTermMemory(SessionStore(f"sqlite:///{path}"), "xiaoming")
    if os.path.exists(sidecar):
        return memory, json.loads(open(sidecar, encoding="utf-8").read())
    ids = fill(memory, load_eval())
    bench.grow(memory, size, seed=size)
    with open(sidecar, "w", encoding="utf-8") as out:
        json.dump(ids, out)
    return memory, ids


class Approximate:
    """An approximate index per script over a memory's matrix, searched like _Matrix.top."""

    def __init__(self, matrix: lt._Matrix, kind: str, links: int, width: int):
        size = len(matrix)
        self.matrix, self.vectors = matrix, matrix.matrix[:size]
        self.ids, self.han = matrix.ids[:size], matrix.han[:size]
        self.scripts = [np.flatnonzero(~self.han), np.flatnonzero(self.han)]
        self.kind, self.indexes = kind, []
        start = time.perf_counter()
        for rows in self.scripts:
            vectors = np.ascontiguousarray(self.vectors[rows])
            if kind == "ivf":
                import faiss  # noqa: PLC0415

                lists = min(links, len(rows) // 39)  # faiss wants 39 training rows per list
                index = faiss.IndexIVFScalarQuantizer(
                    faiss.IndexFlatIP(vectors.shape[1]), vectors.shape[1], lists,
                    faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
                index.cp.seed = 1234
                index.train(vectors[np.linspace(0, len(rows) - 1, min(len(rows), 64 * lists))
                                    .astype(np.int64)])
                index.add(vectors)
                index.nprobe = min(width, lists)
            else:
                from usearch.index import Index  # noqa: PLC0415

                index = Index(ndim=vectors.shape[1], metric="cos", dtype="i8",
                              connectivity=links, expansion_add=128, expansion_search=width)
                index.add(np.arange(len(rows)), vectors, threads=2)
            self.indexes.append(index)
        self.built = time.perf_counter() - start

    def top(self, query, n, helpers=None, balance=False):  # noqa: ARG002 - _Matrix.top's
        query = np.asarray(query, dtype=np.float32)
        found, level = [], []
        for rows, index in zip(self.scripts, self.indexes, strict=True):
            want = max(n, lt.BALANCE)
            if self.kind == "ivf":
                _distances, near = index.search(query[None, :], want)
                near = near[0][near[0] >= 0]
            else:
                near = index.search(query, want).keys.astype(np.int64)
            near = rows[near]
            scores = self.vectors[near] @ query
            found.append((near, scores))
            level.append(np.sort(scores)[::-1][:lt.BALANCE].mean())
        rows = np.concatenate([near for near, _scores in found])
        scores = np.concatenate([scores for _near, scores in found])
        ranked = scores - np.where(self.han[rows], level[1], level[0]) if balance else scores
        best = np.lexsort((-self.ids[rows], -ranked))[:n]
        return [(int(self.ids[rows[i]]), float(scores[i])) for i in best]


def timed(step, inputs, rounds: int) -> tuple[float, float]:
    """p50 and p99 milliseconds of step(x) over `inputs`, `rounds` times."""
    samples = []
    for _round in range(rounds):
        for x in inputs:
            start = time.perf_counter()
            step(x)
            samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(round(0.99 * (len(samples) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.path.join(tempfile.gettempdir(), "lesson_ann.db"),
                        help="the memory's SQLite file: made if missing, then reused")
    parser.add_argument("--size", type=int, default=100_000, help="memories in it")
    parser.add_argument("--rounds", type=int, default=3, help="times each question is searched")
    args = parser.parse_args()
    import importlib.util  # noqa: PLC0415

    if not all(importlib.util.find_spec(name) for name in ("faiss", "usearch")):
        sys.exit("this script needs faiss-cpu and usearch: pip install -e \".[ann]\"")
    print(f"{os.cpu_count()} cores, load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    start = time.perf_counter()
    memory, ids = build_memory(args.db, args.size)
    data = load_eval()
    memory.search("warm-up", 5)
    matrix = memory._matrix
    print(f"{len(matrix):,} memories ready in {time.perf_counter() - start:.0f} s ({args.db})")
    vectors = [memory._vectors([q["q"]])[0] for q in data.questions]
    exact = [matrix.top(v, N, lt._pool(), balance=True) for v in vectors]
    questions = [q["q"] for q in data.questions]

    def search(question: str) -> None:
        memory.search(question, 5)

    def exact_row(name: str) -> None:
        p50, p99 = timed(lambda v: matrix.top(v, N, lt._pool(), balance=True), vectors,
                         args.rounds)
        s50, s99 = timed(search, questions, args.rounds)
        fused = recall(memory, data, ids, 5, ("fused",))["fused"]
        print(f"{name:<28} {'':>8} {p50:>7.2f} {p99:>7.2f} {s50:>7.2f} {s99:>7.2f} "
              f"{1:>10.3f} {1:>6.3f}   {fused['all']:.3f} ({fused['en']:.3f}, "
              f"{fused['zh']:.3f})", flush=True)

    print(f"\n{'':<28} {'':>8} {'dense step':>15} {'whole search':>15}")
    print(f"{'index':<28} {'build s':>8} {'p50 ms':>7} {'p99 ms':>7} {'p50 ms':>7} "
          f"{'p99 ms':>7} {'overlap@5':>10} {'@50':>6}   fused recall@5 (en, zh)")
    exact_row("exact (the series)")
    configs = [("ivf", 256, 16), ("ivf", 256, 32), ("ivf", 256, 64),  # usearch last: once
               ("hnsw", 16, 128), ("hnsw", 16, 512), ("hnsw", 32, 1024)]  # it is imported,
    # simsimd's int8 scan fails in the same process (usearch 2.26's numkong: "Input tensors
    # must have matching datatypes"), so the exact search is measured before it
    original = lt._Matrix.top
    for kind, links, width in configs:
        index = Approximate(matrix, kind, links, width)
        p50, p99 = timed(lambda v, _i=index: _i.top(v, N, balance=True), vectors, args.rounds)
        got = [index.top(v, N, balance=True) for v in vectors]
        at5 = statistics.mean(len({i for i, _s in a[:5]} & {i for i, _s in e[:5]}) / 5
                              for a, e in zip(got, exact, strict=True))
        at50 = statistics.mean(len({i for i, _s in a} & {i for i, _s in e}) / len(e)
                               for a, e in zip(got, exact, strict=True))
        lt._Matrix.top = lambda self, q, n, helpers=None, balance=False, _i=index: \
            _i.top(q, n, balance=balance)
        try:
            fused = recall(memory, data, ids, 5, ("fused",))["fused"]
            s50, s99 = timed(search, questions, args.rounds)
        finally:
            lt._Matrix.top = original
        name = (f"IVF {links} lists, {width} read" if kind == "ivf"
                else f"HNSW {links} links, ef {width}")
        print(f"{name:<28} {index.built:>8.1f} {p50:>7.2f} {p99:>7.2f} {s50:>7.2f} {s99:>7.2f} "
              f"{at5:>10.3f} {at50:>6.3f}   {fused['all']:.3f} ({fused['en']:.3f}, "
              f"{fused['zh']:.3f})", flush=True)
        if kind == "ivf" and width == configs[2][2]:  # before usearch is imported (below)
            exact_row("exact again")


if __name__ == "__main__":
    main()
