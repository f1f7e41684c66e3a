"""The long-term memory evaluation: does search find the memory that answers a question?

The data (lesson_lib/data/longterm_eval.json, invented for this project) is Xiaoming's
memory in two languages: summaries of past sessions (the Chengdu trip, work, family),
his own statements (diet, manager, home, goals), and pieces of documents (a city guide,
the office handbook). Some statements were later changed: they share a `subject`, and
the newer one replaces the older when the memories are written (longterm.py's rule).
Each question names the memory that answers it, or none ("I don't know"). Kinds:
direct, paraphrase (few words in common), updated (the answer is a changed fact),
name, number, unanswerable.

    from lesson_lib.longterm_eval import load_eval, fill, recall
    data = load_eval()
    ids = fill(memory, data)                   # writes the memories; {eval id: memory id}
    recall(memory, data, ids, k=5)             # {"fused": {"all": .., "en": .., "zh": ..}, ...}

recall@k: of the questions that have an answer, the share whose answer is among the
top k hits. The unanswerable questions are measured apart (`abstention()`): search's floor
(min_score, a least cosine; benchmarks/abstain.py) gives nothing when nothing is near the
question, but no threshold tells the two kinds apart well here (a near miss scores like an
answer); whether the memories found answer is the model's call, and a test of the agent.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from typing import Any

from lesson_lib.i18n import N_, _
from lesson_lib.longterm import METHODS, LongTermMemory
from lesson_lib.terms import terms

LANGUAGES = ("en", "zh")
PART_LABELS = {"all": N_("all"), "en": N_("en"), "zh": N_("zh")}  # a plot's legend


@dataclass(frozen=True)
class EvalData:
    memories: list[dict]    # id, lang, source, ref, at, subject, text; oldest first
    questions: list[dict]   # q, lang, kind, answer (a memory's id, or None)

    @property
    def answerable(self) -> list[dict]:
        return [q for q in self.questions if q["answer"] is not None]

    def __str__(self) -> str:
        kept = {m["subject"] or m["id"] for m in self.memories}
        return _("{written} memories written ({kept} kept after the newer replace the older), "
                 "{questions} questions ({answerable} with an answer)").format(
            written=len(self.memories), kept=len(kept), questions=len(self.questions),
            answerable=len(self.answerable))


def load_eval() -> EvalData:
    """The evaluation's memories and questions, from the package's data."""
    text = resources.files("lesson_lib").joinpath("data/longterm_eval.json").read_text("utf-8")
    data = json.loads(text)
    memories = sorted(data["memories"], key=lambda m: m["at"])
    return EvalData(memories, data["questions"])


def fill(memory: LongTermMemory, data: EvalData) -> dict[str, int]:
    """Write the evaluation's memories, oldest first; {eval id: memory id} of those kept."""
    ids: dict[str, int] = {}
    for m in data.memories:
        written = memory.write(m["text"], source=m["source"], ref=m["ref"],
                               subject=m["subject"], at=m["at"])
        if written is not None:
            ids[m["id"]] = written.id
    alive = {x.id for x in memory.all()}
    return {key: value for key, value in ids.items() if value in alive}


def recall(memory: LongTermMemory, data: EvalData, ids: dict[str, int], k: int = 5,
           methods: tuple[str, ...] = METHODS) -> dict[str, dict[str, float]]:
    """recall@k per method: {"fused": {"all": 0.95, "en": .., "zh": ..}, ...}."""
    report: dict[str, dict[str, float]] = {}
    for method in methods:
        found: dict[str, list[bool]] = defaultdict(list)
        for question in data.answerable:
            hits = [h.id for h in memory.search(question["q"], k, method=method)]
            ok = ids.get(question["answer"]) in hits
            found["all"].append(ok)
            found[question["lang"]].append(ok)
        report[method] = {part: sum(oks) / len(oks) for part, oks in found.items()}
    return report


def misses(memory: LongTermMemory, data: EvalData, ids: dict[str, int], k: int = 5,
           method: str = "fused") -> list[tuple[dict, list[str]]]:
    """The questions whose answer is not in the top k, with what came instead."""
    out = []
    for question in data.answerable:
        hits = memory.search(question["q"], k, method=method)
        if ids.get(question["answer"]) not in [h.id for h in hits]:
            out.append((question, [h.text for h in hits]))
    return out


def by_kind(memory: LongTermMemory, data: EvalData, ids: dict[str, int], k: int = 5,
            method: str = "fused") -> dict[str, float]:
    """recall@k per kind of question (direct, paraphrase, updated, name, number)."""
    found: dict[str, list[bool]] = defaultdict(list)
    for question in data.answerable:
        hits = [h.id for h in memory.search(question["q"], k, method=method)]
        found[question["kind"]].append(ids.get(question["answer"]) in hits)
    return {kind: sum(oks) / len(oks) for kind, oks in sorted(found.items())}


def abstention(memory: LongTermMemory, data: EvalData) -> dict[str, float]:
    """Can a score say "I don't know"? Each question's best cosine (dense search); the
    threshold that best separates the questions with an answer from those without, and
    the share of each it gets right there. Measured on this data: no threshold does well
    (with the offline embedder the best refuses every unanswerable question but keeps only
    two thirds of the others; benchmarks/longterm.py): deciding that the memories found do
    not answer is the model's job, reading them."""
    scored = []
    for question in data.questions:
        hits = memory.search(question["q"], 1, method="dense", min_score=None)
        scored.append((hits[0].dense if hits else 0.0, question["answer"] is None))
    best = {"threshold": 0.0, "answerable_kept": 1.0, "unanswerable_refused": 0.0}
    answerable = [s for s, none in scored if not none]
    unanswerable = [s for s, none in scored if none]
    for threshold in sorted({s for s, _none in scored}):
        kept = sum(s >= threshold for s in answerable) / len(answerable)
        refused = sum(s < threshold for s in unanswerable) / len(unanswerable)
        if kept + refused > best["answerable_kept"] + best["unanswerable_refused"]:
            best = {"threshold": threshold, "answerable_kept": kept,
                    "unanswerable_refused": refused}
    return best


_ABSTAINED = re.compile(r"(?i)\b(?:don'?t|do not|doesn'?t) know\b|\bno (?:memory|record)\b|"
                        r"\bnot (?:sure|remember)\b|不知道|不清楚|没有记录|不记得|没有能回答")


def abstained(reply: str) -> bool:
    """Whether a reply says it does not know."""
    return bool(_ABSTAINED.search(reply or ""))


def answered_by(reply: str, memory: LongTermMemory) -> int | None:
    """The kept memory a reply gives as its answer: the one that shares the most terms
    with it (lesson_lib.terms), None when it shares none or says it does not know."""
    if abstained(reply):
        return None
    said = set(terms(reply))
    best = max(memory.all(), key=lambda m: (len(said & set(terms(m.text))), m.created_at),
               default=None)
    return best.id if best is not None and said & set(terms(best.text)) else None


def answer_accuracy(memory: LongTermMemory, data: EvalData, ids: dict[str, int], *,
                    k: int = 5, budget: int = 400, client: Any = None,
                    system_prompt: str = "You are a helpful assistant. Answer from what you "
                    "remember; if it does not say, say you don't know.",
                    ) -> dict[str, Any]:
    """End to end: retrieval before the call (longterm.recall: the top `k`, at most
    `budget` tokens), then the model answers. A question with an answer is right when the
    reply's answer is that memory (answered_by: the memory it shares the most words with;
    fair to a model that quotes or paraphrases closely, and a rough judge of one that
    rewords); one without is right when the reply says it does not know. `client`: None
    is the offline model, in process. Returns {"all", "en", "zh", "answerable",
    "unanswerable": share right, "wrong": [(question, reply)]}."""
    from lesson_lib.llm import chat  # noqa: PLC0415
    from lesson_lib.longterm import recall as recall_context  # noqa: PLC0415

    if client is None:
        from lesson_lib.offline import offline_client  # noqa: PLC0415

        client = offline_client()
    right: dict[str, list[bool]] = defaultdict(list)
    wrong = []
    for question in data.questions:
        context = recall_context(question["q"], memory, budget, k=k)
        messages = [{"role": "system", "content": system_prompt},
                    *([context] if context else []), {"role": "user", "content": question["q"]}]
        reply = chat(messages, client=client).content or ""
        expected = ids.get(question["answer"]) if question["answer"] else None
        ok = abstained(reply) if expected is None else answered_by(reply, memory) == expected
        for part in ("all", question["lang"],
                     "unanswerable" if expected is None else "answerable"):
            right[part].append(ok)
        if not ok:
            wrong.append((question, reply))
    report: dict[str, Any] = {part: sum(oks) / len(oks) for part, oks in right.items()}
    report["wrong"] = wrong
    return report


def evaluate(memory: LongTermMemory, data: EvalData | None = None,
             ks: tuple[int, ...] = (1, 3, 5)) -> dict[str, Any]:
    """Fill an empty memory with the evaluation and measure it: recall@k for each k and
    method, overall and per language, and recall@5 per kind of question (fused)."""
    data = data or load_eval()
    if len(memory):
        raise ValueError(_("evaluate() needs an empty memory; this one has {n}").format(
            n=len(memory)))
    ids = fill(memory, data)
    return {"data": str(data), "kept": len(ids),
            "recall": {k: recall(memory, data, ids, k) for k in ks},
            "by_kind": {method: by_kind(memory, data, ids, 5, method) for method in METHODS},
            "abstention": abstention(memory, data)}


def plot_recall(report: dict[str, dict[str, float]],  # recall(): {method: {part: value}}
                k: int = 5) -> Any:
    """recall@k per method, one bar per language (and all): a figure shown as a PNG in a
    notebook (fixed size, no date inside), named by its text form."""
    from lesson_lib.costs import COLOURS, CostPlot, _figure  # noqa: PLC0415

    figure = _figure()
    figure.set_size_inches(7, 3)
    axes = figure.add_subplot()
    parts = ("all", *LANGUAGES)
    width = 0.8 / len(parts)
    for n, part in enumerate(parts):
        values = [report[method].get(part, 0.0) for method in report]
        xs = [i + (n - (len(parts) - 1) / 2) * width for i in range(len(report))]
        bars = axes.bar(xs, values, width, label=_(PART_LABELS[part]), color=COLOURS[n])
        axes.bar_label(bars, fmt="%.2f", fontsize=8)
    axes.set_xticks(range(len(report)), list(report))
    axes.set_ylim(0, 1.12)
    axes.set_ylabel(f"recall@{k}")
    axes.set_title(_("Does search find the memory that answers? (recall@{k})").format(k=k))
    axes.legend(loc="lower right", fontsize=8)
    return CostPlot(figure, [f"recall@{k} of {', '.join(report)} in {', '.join(parts)}"])
