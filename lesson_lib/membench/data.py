"""The benchmark's data: frozen multi-session conversations, each question labelled with its category and evidence.

`load()` reads `lesson_lib/data/membench/membench.json` (the public part, which lessons
show); `load("held-out")` reads `membench_heldout.json` (about a fifth of the
conversations, balanced by language and category, for teachers: no lesson shows it).
Both are frozen: written by hand before any strategy was run on them, checked by hash
(tests/test_membench.py).

A conversation: `id`, `lang` ("en", "zh", or "mixed": Chinese and English in one
sentence, as bilingual learners write), `title`, `sessions` (each `id`, `date`,
`messages`: API-shaped messages with an extra `id`, tool rounds included), `questions`.

A question is asked at the start of its `session` (so all it needs was said in earlier
sessions) and carries: `category` (see CATEGORIES), `lang`, `question`, `evidence` (the
ids of the earlier messages it needs), `facts` (short strings of those messages, in the
question's language, that must all reach the model), and, for an abstention question
(nothing said answers it), `decoy_evidence` and `decoys`: the earlier messages, and
strings of them, about a neighbouring thing that a model could wrongly give as the
answer ("What's my cat called?" when only the neighbour's cat was named).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from datetime import date
from functools import cache
from pathlib import Path

from lesson_lib.i18n import N_, _

FOLDER = Path(__file__).resolve().parent.parent / "data" / "membench"
FILES = {"public": "membench.json", "held-out": "membench_heldout.json"}
CATEGORIES = {  # the categories of LongMemEval and LoCoMo, as this benchmark names them
    "single": N_("single fact"),          # said once, asked later
    "spread": N_("spread over sessions"),  # needs facts from two or more sessions
    "update": N_("knowledge update"),      # the newer value is the answer
    "temporal": N_("temporal"),            # a date or a time said earlier
    "preference": N_("preference applied"),  # a request the user's preference must shape
    "abstention": N_("abstention"),        # nothing said answers it: send nothing misleading
}
LANGUAGES = ("en", "zh", "mixed")
SPACES = re.compile(r"\s+")


def normalized(text: str) -> str:
    """`text` as the score compares it: NFKC (full-width forms become half-width), case
    folded, every run of white space one space."""
    return SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@cache
def _read(part: str) -> str:
    return (FOLDER / FILES[part]).read_text(encoding="utf-8")


def load(part: str = "public") -> dict:
    """The benchmark's data: "public" (lessons show it) or "held-out" (for teachers)."""
    if part not in FILES:
        raise ValueError(_("part must be one of {parts}, got {value}").format(
            parts=", ".join(map(repr, FILES)), value=repr(part)))
    return json.loads(_read(part))


def text_of(message: Mapping) -> str:
    """Every string of one message: its content and its tool calls' names and arguments."""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    parts = [content or ""]
    for call in message.get("tool_calls") or []:
        parts += [call["function"]["name"], call["function"]["arguments"]]
    return " ".join(parts)


def problems(data: dict) -> list[str]:
    """Why the data is not well formed (empty when it is): ids unique, sessions dated in
    order, every evidence id an earlier session's message whose text holds the question's
    facts, no fact or decoy given away by the question itself, a spread question's
    evidence in two sessions at least, an abstention question with decoys and no facts."""
    found, seen = [], set()
    for conv in data["conversations"]:
        cid = conv["id"]
        if conv["lang"] not in LANGUAGES:
            found.append(f"{cid}: unknown language {conv['lang']!r}")
        where: dict[str, int] = {}   # message id -> the index of its session
        texts: dict[str, str] = {}
        dates = [date.fromisoformat(s["date"]) for s in conv["sessions"]]
        if dates != sorted(dates):
            found.append(f"{cid}: sessions out of date order")
        for k, session in enumerate(conv["sessions"]):
            for m in session["messages"]:
                if m["id"] in seen:
                    found.append(f"{m['id']}: id used twice")
                seen.add(m["id"])
                where[m["id"]], texts[m["id"]] = k, normalized(text_of(m))
        session_index = {s["id"]: k for k, s in enumerate(conv["sessions"])}
        for q in conv["questions"]:
            qid, asked = q["id"], session_index.get(q["session"])
            if qid in seen:
                found.append(f"{qid}: id used twice")
            seen.add(qid)
            if asked is None or asked == 0:
                found.append(f"{qid}: not asked in a later session")
                continue
            if q["category"] not in CATEGORIES:
                found.append(f"{qid}: unknown category {q['category']!r}")
            if q["lang"] != conv["lang"]:
                found.append(f"{qid}: its language is not its conversation's")
            abstain = q["category"] == "abstention"
            if abstain != (not q["evidence"]) or abstain != bool(q["decoys"]) or \
                    abstain == bool(q["facts"]):
                found.append(f"{qid}: an abstention question has decoys and no evidence; "
                             "any other has evidence and facts")
            asked_text = normalized(q["question"])
            for ids, strings in ((q["evidence"], q["facts"]),
                                 (q["decoy_evidence"], q["decoys"])):
                for i in ids:
                    if i not in where or where[i] >= asked:
                        found.append(f"{qid}: {i} is not a message of an earlier session")
                for s in strings:
                    if not any(normalized(s) in texts.get(i, "") for i in ids):
                        found.append(f"{qid}: {s!r} is in none of its messages {ids}")
                    if normalized(s) in asked_text:
                        found.append(f"{qid}: the question itself says {s!r}")
            if q["category"] == "spread" and len({where.get(i) for i in q["evidence"]}) < 2:
                found.append(f"{qid}: a spread question needs two sessions' messages")
    return found


def questions(data: dict) -> list[dict]:
    """Every question of the data, in order."""
    return [q for conv in data["conversations"] for q in conv["questions"]]
