"""How well does each memory strategy remember, and at what cost? The memory benchmark's table (lesson_lib.membench).

    python benchmarks/memory_bench.py [--part public|held-out] [--strategy NAME ...]
                                      [--no-send] [--plot FILE.png]

Every strategy of lesson_lib.membench.STRATEGIES is run over the frozen conversations
(lesson_lib/data/membench/; --part held-out: the teachers' part), each question's request
is sent through the openai SDK to the model the environment chooses (the offline model by
default; --no-send scores the requests as built) and the body that went out is scored:
evidence found per category and language, tokens per request, milliseconds to build it.
With a real provider (LESSON_BACKEND=openai) the answers are judged too (score.judge_answer)
and an "answers" line is printed per strategy. Prints the table, then the time it took.

The first table, the public part, is in benchmarks/memory_bench.md (run once, when the
data was frozen, at the commit it names).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lesson_lib import membench  # noqa: E402
from lesson_lib.membench.run import warm  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("public", "held-out"), default="public")
    parser.add_argument("--strategy", action="append", choices=list(membench.STRATEGIES),
                        help="run only this strategy (again for more)")
    parser.add_argument("--no-send", action="store_true",
                        help="score the requests as built, without calling the model")
    parser.add_argument("--plot", help="also save the plot to this PNG file")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    data = membench.load(args.part)
    if any("retrieval" in n for n in args.strategy or membench.STRATEGIES):
        warm(data)
    results = []
    for name in args.strategy or membench.STRATEGIES:
        results.append(membench.run(name, data, send=not args.no_send))
        print(f"  {name}: {results[-1].seconds:.1f} s, {results[-1].model_calls} model "
              "calls", file=sys.stderr, flush=True)
    print(f"{args.part} part: {len(data['conversations'])} conversations")
    print(membench.table(results))
    for r in results:
        judged = [row["correct"] for row in r.rows if "correct" in row]
        if judged:
            print(f"answers judged right ({r.name}): {sum(judged)}/{len(judged)}")
    if args.plot:
        Path(args.plot).write_bytes(membench.plot(results).png())
    print(f"took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
