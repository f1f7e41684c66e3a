"""The blind bank of unseen tools, scored: right / asked / wrong / other per language.

    python benchmarks/unseen_tools.py [--show wrong|all|none]

Each case of benchmarks/unseen_tools_cases.py (48 tools nobody tuned the offline model on,
requests in English and Chinese) is sent to the offline model with its tool and the two
after it offered, the clock frozen at the bank's NOW, and scored by benchmarks/tool_bank.py
(run() and compare(): the same rules for right, asked, wrong and other). The target:
>= 90% right in each language and no wrong call at all. Prints one line per language,
then the failures asked for by --show. Exits 1 if any call is wrong.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import tool_bank  # noqa: E402
import unseen_tools_cases as unseen  # noqa: E402

from lesson_lib.clock import frozen  # noqa: E402


def score() -> tuple[dict, list]:
    """{lang: Counter of outcomes}, and the failures as (outcome, case, what the model did)."""
    table, failures = {}, []
    with frozen(unseen.NOW):
        for case in unseen.CASES:
            outcome, said = tool_bank.run(case, unseen)
            table.setdefault(case.lang, Counter())[outcome] += 1
            if outcome != "right":
                failures.append((outcome, case, said))
    return table, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", choices=("wrong", "all", "none"), default="wrong")
    args = parser.parse_args()
    table, failures = score()
    rows = [(f"{lang:<4}", counts) for lang, counts in sorted(table.items())]
    return tool_bank.report(f"{'lang':<4}", rows,
                            [(o, case.lang, case, said) for o, case, said in failures],
                            args.show)

if __name__ == "__main__":
    sys.exit(main())
