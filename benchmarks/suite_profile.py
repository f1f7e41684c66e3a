"""Where the test suite's time goes: run it (or read a JUnit report) and print time per file.

    python benchmarks/suite_profile.py                    # runs the README's test command
    python benchmarks/suite_profile.py -- tests/test_x.py # passes arguments to pytest
    python benchmarks/suite_profile.py --report run.xml   # reads a report already made

Prints the wall time, the number of tests, and each test file (each notebook under nbval)
with the seconds its tests took, largest first, then the slowest single tests. Under xdist
the suite's files run on two workers at once, so the seconds add up to about twice the wall
time; the Run All tests start their notebooks ahead (tests/test_run_all.py), so each of them
counts the time it waited for its run, and the file's total is that worker's time with it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_suite(args: list[str], report: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", f"--junitxml={report}", *args],
                   cwd=ROOT, check=False)
    return time.perf_counter() - start


def by_file(report: Path) -> tuple[dict[str, float], dict[str, int], list[tuple[float, str]]]:
    seconds, counts, tests = defaultdict(float), defaultdict(int), []
    for case in ET.parse(report).iter("testcase"):
        where = (case.get("classname") or "").split(".")
        group = ".".join(where[:-1]) if where[-1].startswith("Test") else ".".join(where)
        took = float(case.get("time") or 0)
        seconds[group] += took
        counts[group] += 1
        tests.append((took, f"{group}::{case.get('name')}"))
    return seconds, counts, sorted(tests, reverse=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="a JUnit XML report to read instead")
    parser.add_argument("--top", type=int, default=25, help="rows to print (default 25)")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    options = parser.parse_args(argv)
    wall = None
    report = options.report
    if report is None:
        report = Path(tempfile.mkdtemp()) / "suite.xml"
        wall = run_suite(options.pytest_args, report)
    seconds, counts, tests = by_file(report)
    total = sum(seconds.values())
    if wall is not None:
        print(f"wall time {wall:.0f} s")
    print(f"{sum(counts.values())} tests, {total:.0f} s of test time\n")
    print(f"{'seconds':>8} {'share':>6} {'tests':>6}  file")
    for group, took in sorted(seconds.items(), key=lambda kv: -kv[1])[:options.top]:
        print(f"{took:8.1f} {took / total:6.1%} {counts[group]:6d}  {group}")
    print("\nslowest tests:")
    for took, name in tests[:options.top]:
        print(f"{took:8.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
