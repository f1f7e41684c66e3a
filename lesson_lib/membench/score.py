"""The score: is a question's evidence in the request an agent sent for it, at what token cost, and is nothing misleading sent.

A **request** is what the agent sent to the model for one question, as it went on the
wire: a Chat Completions body (`{"messages": [...]}`, or just the list of messages) or a
Responses body (`{"input": [...], "instructions": ...}`). Its **text** (`request_text`) is
every string the model reads in it: each message's content (text parts joined), tool
calls' names and arguments, tool results, the instructions, and, for an offline
`compaction` item, what the item keeps, read through the offline model's teaching view
(`lesson_lib.offline.compaction.peek`; a real provider's item is encrypted, so what it
holds cannot be scored without a model, and counts as holding nothing).

**Evidence present** (model-free): a question's `facts` (short strings of its evidence
messages, in its language) are *all* found in the request's text, both sides normalized
(NFKC, so full-width forms match; case folded; white space runs made one space). A
substring test, so the data's facts are chosen to be the words an answer needs ("3500",
"微辣", "Ms. Alvarez"), and tests/test_membench.py checks that each is in its evidence
messages and not in the question itself.

**Abstention**: a question nothing said answers scores when *nothing misleading is sent*:
none of its `decoys` (strings of earlier messages about a neighbouring thing, marked as
decoys for that question in the data) is in the request's text. Sending nothing abstains
perfectly; sending everything fails wherever a decoy was said.

**Tokens**: the request's cost counted by `lesson_lib.tokens` as the model in use counts
it (`count_request` for messages; for a Responses body, the messages its text view holds).
**Seconds**: how long the strategy took to build the request (its retrieval included).

**Answers** (only with a real provider, `LESSON_BACKEND=openai`; CI never calls one): the
judge rule `judge_answer` is model-free too: an answer to an answerable question is right
when it holds every fact (normalized as above); an answer to an abstention question is
right when it holds no decoy *and* it declines (one of DECLINES, in English or Chinese).
It under-credits a right answer in other words (a date written "the 6th of July" for "6
July"), so it is a floor, never an exact accuracy. The offline model's answers are not a
measure of a real model's: the benchmark never judges them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lesson_lib.membench.data import normalized, text_of
from lesson_lib.tokens import count_messages, count_request

DECLINES = ("don't know", "do not know", "not sure", "no record", "didn't mention",
            "did not mention", "haven't told", "have not told", "never told", "not mentioned",
            "不知道", "没有提到", "没提到", "没有说过", "没说过", "不清楚", "没有记录", "无法确定")


def _item_messages(item: Mapping) -> list[dict]:
    """One Responses input item as the messages the model reads of it."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return [{"role": item.get("role", "user"), "content": text_of(item)}]
    if kind == "function_call":
        return [{"role": "assistant", "content": f"{item.get('name', '')} "
                                                 f"{item.get('arguments', '')}"}]
    if kind == "function_call_output":
        return [{"role": "tool", "content": str(item.get("output", ""))}]
    if kind == "compaction":
        from lesson_lib.offline.compaction import peek  # noqa: PLC0415 (the teaching view)

        try:
            seen = peek(item)
        except ValueError:  # a real provider's item: encrypted, nothing readable
            return []
        return [{"role": m.get("role", "user"), "content": text_of(m)}
                for m in [*seen["kept"], *seen["tail"]]]
    return []


def as_messages(request: Any) -> list[dict]:
    """The request as the plain messages the model reads (text only, in order)."""
    if isinstance(request, Mapping) and "input" in request:
        said = request["input"]
        items = [{"role": "user", "content": said}] if isinstance(said, str) else said
        head = [{"role": "system", "content": request["instructions"]}] \
            if request.get("instructions") else []
        return head + [m for item in items for m in _item_messages(item)]
    messages = request["messages"] if isinstance(request, Mapping) else request
    return [{"role": m.get("role"), "content": text_of(m)} for m in messages]


def request_text(request: Any) -> str:
    """Every string the model reads in `request`, normalized, one message a line."""
    return "\n".join(normalized(m["content"] or "") for m in as_messages(request))


def request_tokens(request: Any) -> int:
    """What `request` costs, counted by lesson_lib.tokens for the model in use."""
    if isinstance(request, Mapping) and "input" in request:
        return count_messages(as_messages(request))
    messages = request["messages"] if isinstance(request, Mapping) else request
    tools = request.get("tools") if isinstance(request, Mapping) else None
    return count_request(list(messages), tools)


def present(strings: Sequence[str], text: str) -> list[str]:
    """Those of `strings` found in `text` (already normalized)."""
    return [s for s in strings if normalized(s) in text]


def score_request(question: Mapping, request: Any, seconds: float = 0.0) -> dict:
    """One question's row: `found` (answerable: every fact in the request; abstention:
    None), `abstained` (abstention: no decoy in the request; otherwise None), the facts
    and decoys sent, `tokens`, `seconds`."""
    text = request_text(request)
    facts, decoys = present(question["facts"], text), present(question["decoys"], text)
    abstain = question["category"] == "abstention"
    return {"id": question["id"], "category": question["category"], "lang": question["lang"],
            "found": None if abstain else len(facts) == len(question["facts"]),
            "abstained": (not decoys) if abstain else None,
            "facts_sent": facts, "decoys_sent": decoys,
            "tokens": request_tokens(request), "seconds": seconds}


def judge_answer(question: Mapping, answer: str) -> bool:
    """The documented judge rule for a real model's answer (see the module docstring)."""
    said = normalized(answer or "")
    if question["category"] == "abstention":
        return not present(question["decoys"], said) and any(d in said for d in DECLINES)
    return len(present(question["facts"], said)) == len(question["facts"])
