"""How often does the offline model call an unseen tool right? The tool bank, scored.

    python benchmarks/tool_bank.py [--part all|tuned|held-out] [--show wrong|all|none]

Each case of benchmarks/tool_bank_cases.py (42 invented tools, requests in English and
Chinese) is sent to the offline model (brain.reply, the clock frozen at the bank's NOW)
with its tool and the two after it in the bank offered. Three parts are scored apart:
"tuned" (looked at while the rules were written), "held-out" (every fourth tool, scored
once at the end, then looked at) and "fresh" (ten more tools written after that, scored
once, then looked at) and "fresh-2" (eight more, written after that). The reply is
scored:

- right: the expected call (the right tool, every argument as expected, see
  tool_bank_cases for the normalisation), or, when the request lacks a required argument,
  a question asking for that argument (the model's own clarifying question for it);
- asked: a question where a call was expected, or a question about another argument;
- wrong: any call that is not the expected one, or any call where it should have asked;
- other: a text that is neither a call nor a question.

The target: >= 85% right in each language and no wrong call at all. Prints one line per
language and part (tuned / held out), then the failures asked for by --show. Exits 1 if
any call is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import tool_bank_cases as bank  # noqa: E402

from lesson_lib.clock import frozen  # noqa: E402
from lesson_lib.offline import answer, brain  # noqa: E402
from lesson_lib.places import lookup  # noqa: E402

OUTCOMES = ("right", "asked", "wrong", "other")


def normal(value):
    """A value as compared: strings without case, outer punctuation, repeated spaces or a
    leading article, known cities by their English name; numbers as floats (a bool stays
    a bool)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        place = lookup(value.strip())
        text = place.name if place else value
        text = re.sub(r"\s+", " ", text.casefold()).strip(" \t.,!?;:。，！？；：\"'“”‘’")
        return re.sub(r"^(?:the|a|an) ", "", text)
    if isinstance(value, list):
        return [normal(v) for v in value]
    return value


def same(expected, got) -> bool:
    if isinstance(expected, bank.OneOf):
        return any(same(v, got) for v in expected.values)
    if isinstance(expected, str) != isinstance(got, str):
        return False
    if isinstance(expected, list):
        return isinstance(got, list) and len(expected) == len(got) and \
            all(same(e, g) for e, g in zip(expected, got, strict=True))
    return normal(expected) == normal(got)


def compare(case: bank.Case, name: str, arguments: dict, source=bank) -> bool:
    """Whether a call is the expected one (see tool_bank_cases for the rules); `source` is
    the bank module the case comes from (its TOOL)."""
    if not isinstance(case.expect, bank.Call) or name != case.tool:
        return False
    props = source.TOOL[case.tool]["function"]["parameters"]["properties"]
    expected = case.expect.arguments
    for key, value in arguments.items():
        if key not in expected and not ("default" in props.get(key, {})
                                        and same(props[key]["default"], value)):
            return False
    return all(key in arguments and same(value, arguments[key]) for key, value in expected.items())


def run(case: bank.Case, source=bank) -> tuple[str, str]:
    """The outcome of one case and what the model did, in a line; `source` is the bank
    module the case comes from (its TOOL and offered())."""
    body = {"model": "offline", "messages": [{"role": "user", "content": case.request}],
            "tools": source.offered(case.tool)}
    message = brain.reply(body)["message"]
    calls = message.get("tool_calls") or []
    if calls:
        said = "; ".join(f"{c['function']['name']}({c['function']['arguments']})" for c in calls)
        fn = calls[0]["function"]
        ok = len(calls) == 1 and compare(case, fn["name"], json.loads(fn["arguments"]), source)
        return ("right" if ok else "wrong"), said
    text = message.get("content") or ""
    if isinstance(case.expect, bank.Ask) and \
            answer.clarify(source.TOOL[case.tool], case.expect.param, case.lang) in text:
        return "right", text
    return ("asked" if text.rstrip().endswith(("?", "？")) else "other"), text


def score(part: str) -> tuple[dict, list]:
    """{(part, lang): Counter of outcomes}, and the failures."""
    table, failures = {}, []
    with frozen(bank.NOW):
        for case in bank.CASES:
            which = "fresh" if case.tool in bank.FRESH else "fresh-2" if case.tool in bank.FRESH2 else \
                "held-out" if case.tool in bank.HELD_OUT else "tuned"
            if part != "all" and part != which:
                continue
            outcome, said = run(case)
            table.setdefault((which, case.lang), Counter())[outcome] += 1
            if outcome != "right":
                failures.append((outcome, which, case, said))
    return table, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("all", "tuned", "held-out", "fresh", "fresh-2"), default="all")
    parser.add_argument("--show", choices=("wrong", "all", "none"), default="wrong")
    args = parser.parse_args()
    table, failures = score(args.part)
    parts = ("tuned", "held-out", "fresh", "fresh-2")
    rows = [(f"{which:<9} {lang:<4}", counts) for (which, lang), counts in
            sorted(table.items(), key=lambda kv: (parts.index(kv[0][0]), kv[0][1]))]
    return report(f"{'part':<9} {'lang':<4}", rows, failures, args.show)


def report(head: str, rows: list[tuple[str, Counter]], failures: list, show: str) -> int:
    """Print the table (a row's label, then each outcome's count and the share right) and the
    failures `show` asks for ((outcome, label, case, what the model did) each); 1 when any
    call was wrong."""
    print(f"{head} {'cases':>5} " + " ".join(f"{o:>6}" for o in OUTCOMES) + "  right%")
    for label, counts in rows:
        total = sum(counts.values())
        print(f"{label} {total:>5} " + " ".join(f"{counts[o]:>6}" for o in OUTCOMES)
              + f"  {100 * counts['right'] / total:5.1f}")
    for outcome, label, case, said in failures:
        if show == "all" or show == "wrong" and outcome == "wrong":
            print(f"[{outcome}/{label.strip()}] {case.tool} {case.request!r}\n"
                  f"    expected {case.expect}\n    got      {said}")
    return 1 if any(o == "wrong" for o, *_ in failures) else 0

if __name__ == "__main__":
    sys.exit(main())
