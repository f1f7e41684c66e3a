"""How much CPU each notebook costs a run, and what that makes the suite's floor.

    python benchmarks/notebook_cpu.py                 # every notebook, both editions
    python benchmarks/notebook_cpu.py notebooks/07_*.ipynb

Runs each notebook once as Run All does (tests/run_all.py, the offline model, the real clock
in the anchor world) and prints the kernel's own CPU seconds (user + system, its children
included; a forked kernel's start is not counted) beside the wall time. CPU time hardly
changes with what else the machine is doing, so the figures hold on a busy machine too.

Then the floor: the suite runs every notebook under nbval once and again in each Run All
world that is not skipped (tests/test_run_all.py says which). The sum of those runs' CPU,
divided by the two cores, is the least wall time the notebooks alone can take, whatever
else is made faster.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from run_all import NOTEBOOKS, WORLDS, kernel_env, label, run_notebook  # noqa: E402

ANCHOR = "real-clock-kiritimati"
CORES = 2


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or NOTEBOOKS
    total_cpu = total_wall = 0.0
    print(f"{'notebook':48} {'wall s':>7} {'CPU s':>7}")
    for path in paths:
        run = run_notebook(path, kernel_env(WORLDS[ANCHOR]), repo=None)
        cpu = run.cpu_seconds or 0.0
        total_cpu, total_wall = total_cpu + cpu, total_wall + run.seconds
        flag = "" if not run.problems else f"  ({len(run.problems)} problem(s))"
        print(f"{label(path):48} {run.seconds:7.1f} {cpu:7.1f}{flag}")
    print(f"{'all ' + str(len(paths)):48} {total_wall:7.1f} {total_cpu:7.1f}")
    print(f"one run of each on {CORES} cores: at least {total_cpu / CORES:.0f} s of wall time")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
