"""What does an add cost as the history grows? TokenBudgetMemory against LangChain's trim_messages.

    python benchmarks/memory.py [--adds 90] [--sizes 100,1000,10000]

(a) Per add, at 100, 1,000 and 10,000 messages held. The history is a realistic one (turns
    with tool rounds, some with two parallel calls, and small talk), and the budget is what
    that history costs, so every add makes the oldest units leave: each add is an add plus
    a trim. A turn is three adds: the user message, the assistant(tool_calls) with its
    results (add_many), the answer.
    - TokenBudgetMemory: counts each message once, when it is added, and pops from the
      front: the cost of an add should stay flat as the history grows.
    - trim_messages (langchain-core), the way an app uses it: the app keeps its messages
      (as LangChain messages, converted once), appends what comes, and re-trims the whole
      list with trim_messages after every add, keeping the result. Same budget, same counts.
    Target: flat for ours; at 1,000 messages at least 10x cheaper than trim_messages.
(b) The trim checker's bank (lesson_lib.trimcheck, 28 histories), budget in tokens:
    budget_trim (repair, then TokenBudgetMemory's trimming) against trim_messages wrapped
    as a trim over dict messages.

trim_messages is called with strategy="last", include_system=True, start_on="human",
allow_partial=False and no end_on (end_on="human"/"tool" would drop a trailing system note,
which the bank's "system message in the current turn" case keeps). Its token_counter counts
exactly as lesson_lib.tokens does: one LangChain message is turned into the dict the API
gets (convert_to_openai_messages) and counted with count_message(); max_tokens is the
budget minus the reply priming (3 tokens), so that "fits" means count_messages() <= budget,
as in the bank and in TokenBudgetMemory. An approximate counter (count_tokens_approximately,
about 4 characters a token) would make it fail the bank for counting, not for trimming:
it passes 11 of 28 cases that way. In (a) the counter is cached per message object, so
tokenizing never repeats: what is measured is trim_messages' own work over the list.

The wrapper for (b) converts the dicts to LangChain messages and hands back the original
dicts of the messages trim_messages kept (it returns the same objects when allow_partial
is False); converting them back with convert_to_openai_messages instead turns content None
into "" and rewrites tool-call arguments, which the checker would count as "changed".
Messages trim_messages made itself, if any, are converted back.

Prints two tables and exits 0. Runs in well under a minute on two cores.
"""

import argparse
import copy
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from langchain_core.messages import (  # noqa: E402
    BaseMessage,
    convert_to_messages,
    convert_to_openai_messages,
    trim_messages,
)

from lesson_lib.budget import TokenBudgetMemory  # noqa: E402
from lesson_lib.tokens import REPLY_PRIMING, count_message, count_messages  # noqa: E402
from lesson_lib.trimcheck import TRIM_CASES, budget_trim, judge_trim  # noqa: E402

CITIES = ("Chengdu", "Beijing", "Shanghai", "Tokyo", "London", "Sydney", "New York")
TIME_LIMIT = 12.0  # seconds per (size, trim): stop adding early rather than run long


# ----------------------------------------------------------------- a realistic history

def _weather(cid: str, city: str, k: int) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": json.dumps(
        {"location": city, "temperature": 10 + k % 17, "unit": "celsius",
         "condition": ("cloudy", "sunny", "light rain")[k % 3], "humidity": f"{50 + k % 40}%"})}


def _call(cid: str, city: str) -> dict:
    return {"id": cid, "type": "function", "function": {
        "name": "get_current_weather", "arguments": json.dumps({"location": city})}}


def turn(k: int) -> list[list[dict]]:
    """Turn k as the adds that write it: [user], [assistant(tool_calls), results], [answer]
    (small talk: [user], [answer])."""
    a, b = CITIES[k % len(CITIES)], CITIES[(k * 3 + 1) % len(CITIES)]
    if k % 4 == 3:
        return [[{"role": "user", "content": f"Thanks! That was question {k}."}],
                [{"role": "assistant", "content": "You're welcome!"}]]
    if k % 4 == 1 and a != b:
        ids = (f"call_{k}a", f"call_{k}b")
        return [[{"role": "user", "content": f"Which is warmer, {a} or {b}? (question {k})"}],
                [{"role": "assistant", "content": None, "tool_calls": [_call(ids[0], a),
                                                                       _call(ids[1], b)]},
                 _weather(ids[0], a, k), _weather(ids[1], b, k + 5)],
                [{"role": "assistant", "content": f"{a} is warmer than {b} today."}]]
    cid = f"call_{k}"
    return [[{"role": "user", "content": f"What's the weather in {a}? (question {k})"}],
            [{"role": "assistant", "content": None, "tool_calls": [_call(cid, a)]},
             _weather(cid, a, k)],
            [{"role": "assistant", "content": f"{a}: {10 + k % 17}°C."}]]


def history(size: int) -> list[dict]:
    """A valid history of at least `size` messages: a system prompt, then whole turns."""
    messages, k = [{"role": "system", "content": "You are a helpful assistant."}], 0
    while len(messages) < size:
        messages += [m for add in turn(k) for m in add]
        k += 1
    return messages


def new_adds(start: int, adds: int) -> list[list[dict]]:
    """The next `adds` adds after the history, turn after turn."""
    out, k = [], start
    while len(out) < adds:
        out += turn(k)
        k += 1
    return out[:adds]


# ----------------------------------------------------------------- the two memories

def timed(step, adds: list) -> float:
    """The median time of step(add) over the adds, in seconds (the median: robust to a
    busy machine); stops early after TIME_LIMIT seconds."""
    times, began = [], time.perf_counter()
    for add in adds:
        started = time.perf_counter()
        step(add)
        times.append(time.perf_counter() - started)
        if time.perf_counter() - began > TIME_LIMIT:
            break
    return statistics.median(times)


def ours(held: list[dict], budget: int, adds: list[list[dict]]) -> tuple[float, int]:
    """Seconds per add, and the messages held at the end, for TokenBudgetMemory."""
    memory = TokenBudgetMemory(budget)
    memory.add_many(held)  # setup, not timed
    return timed(memory.add_many, adds), memory.message_count()


def lesson_count(message: BaseMessage) -> int:  # (no `from __future__ import annotations`:
    """One LangChain message's tokens, counted as lesson_lib.tokens counts the API's dict.
    trim_messages calls it per message because its parameter is annotated BaseMessage."""
    return count_message(convert_to_openai_messages(message))


def cached_counter():
    """lesson_count, cached per message object (kept alive, so an id is never reused)."""
    cache: dict[int, tuple[BaseMessage, int]] = {}

    def count(message: BaseMessage) -> int:
        hit = cache.get(id(message))
        if hit is None:
            hit = cache[id(message)] = (message, lesson_count(message))
        return hit[1]
    return count  # annotated with BaseMessage: trim_messages sums it over the messages


def langchain(held: list[dict], budget: int, adds: list[list[dict]]) -> tuple[float, int]:
    """Seconds per add, and messages held at the end, for an app that re-trims its list
    with trim_messages after every add."""
    counter = cached_counter()
    kept = convert_to_messages(held)  # setup, not timed: the app stores LangChain messages
    options = {"max_tokens": budget - REPLY_PRIMING, "token_counter": counter,
               "strategy": "last", "include_system": True, "start_on": "human",
               "allow_partial": False}
    trim_messages(kept, **options)  # warm the cache: tokenizing is not what is measured
    new = [convert_to_messages(add) for add in adds]
    for add in new:
        for m in add:
            counter(m)
    def step(add: list[BaseMessage]) -> None:
        nonlocal kept
        kept = trim_messages([*kept, *add], **options)

    return timed(step, new), len(kept)


# ----------------------------------------------------------------- the bank

def langchain_trim(messages: list[dict], budget: int) -> list[dict]:
    """trim_messages as a trim over dict messages, for lesson_lib.trimcheck."""
    converted = convert_to_messages(messages)
    origin = {id(lc): m for lc, m in zip(converted, messages, strict=True)}
    kept = trim_messages(converted, max_tokens=budget - REPLY_PRIMING,
                         token_counter=lesson_count, strategy="last", include_system=True,
                         start_on="human", allow_partial=False)
    return [copy.deepcopy(origin[id(m)]) if id(m) in origin else convert_to_openai_messages(m)
            for m in kept]


# ----------------------------------------------------------------- the run

def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=90, help="adds timed per size (90)")
    parser.add_argument("--sizes", default="100,1000,10000", help="messages held")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    began = time.perf_counter()

    print("(a) one add plus its trim (median per add), with the history at its budget")
    print(f"{'messages':>9}  {'budget':>9}  {'TokenBudgetMemory':>18}  {'trim_messages':>14}  "
          f"{'ratio':>6}  held (ours / LC)")
    warm = history(100)  # warm up first: the tokenizer, imports, caches
    ours(copy.deepcopy(warm), count_messages(warm), new_adds(len(warm), 30))
    langchain(warm, count_messages(warm), new_adds(len(warm), 30))
    ratios, per_add = {}, {}
    for size in sizes:
        held = history(size)
        budget = count_messages(held)
        adds = new_adds(len(held), args.adds)
        ours_s, ours_held = ours(copy.deepcopy(held), budget, adds)
        lc_s, lc_held = langchain(held, budget, adds)
        ratios[size], per_add[size] = lc_s / ours_s, ours_s
        print(f"{len(held):>9,}  {budget:>9,}  {ours_s * 1e6:>15,.0f} µs  {lc_s * 1e6:>11,.0f} µs  "
              f"{ratios[size]:>5,.0f}x  {ours_held:,} / {lc_held:,}")

    print("\n(b) the trim checker's bank, budget in tokens")
    for name, fn in (("budget_trim (TokenBudgetMemory)", budget_trim),
                     ("trim_messages", langchain_trim)):
        verdicts = judge_trim(fn, "tokens")
        failed = [v.case.name for v in verdicts if not v.passed]
        print(f"{name:32} {len(verdicts) - len(failed):>2}/{len(TRIM_CASES)} pass"
              + (f"; fails: {', '.join(failed)}" if failed else ""))

    spread = max(per_add.values()) / min(per_add.values())
    print(f"\ntarget 1, flat: ours costs {spread:.2f}x as much at its dearest size as at its "
          f"cheapest, with {max(sizes) // min(sizes):,}x more messages held: "
          + ("met" if spread < 2 else "NOT met"))
    if 1000 in ratios:
        print(f"target 2: at 1,000 messages, {ratios[1000]:,.0f}x cheaper than trim_messages "
              "(at least 10x): " + ("met" if ratios[1000] >= 10 else "NOT met"))
    print(f"done in {time.perf_counter() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
