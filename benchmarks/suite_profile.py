"""Where the test suite's time goes: run it (or read a JUnit report) and print time per file.

    python benchmarks/suite_profile.py                    # runs the README's test command
    python benchmarks/suite_profile.py -- tests/test_x.py # passes arguments to pytest
    python benchmarks/suite_profile.py --report run.xml   # reads a report already made
    python benchmarks/suite_profile.py --cpu              # and the CPU each file costs

Prints the wall time, the number of tests, and each test file (each notebook under nbval)
with the seconds its tests took, largest first, then the slowest single tests. Under xdist
the suite's files run on two workers at once, so the seconds add up to about twice the wall
time; the Run All tests start their notebooks ahead (tests/test_run_all.py), so each of them
counts the time it waited for its run, and the file's total is that worker's time with it.

With --cpu the tests' CPU is measured too (tests/cpu_profile.py: each worker and every
process under it, kernels and servers included): the total is what the suite costs the two
cores, whatever the wall time, and half of it is the least wall time two workers can take.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_suite(args: list[str], report: Path, cpu_log: Path | None = None) -> float:
    start = time.perf_counter()
    env = {**os.environ, **({"LESSON_CPU_PROFILE": str(cpu_log)} if cpu_log else {})}
    subprocess.run([sys.executable, "-m", "pytest", "-q", f"--junitxml={report}", *args],
                   cwd=ROOT, check=False, env=env)
    return time.perf_counter() - start


def cpu_by_file(log: Path) -> dict[str, float]:
    """CPU seconds per test file (a notebook under nbval counts as one file)."""
    seconds: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        seconds[entry["test"].split("::")[0]] += entry["cpu"]
    return seconds


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
    parser.add_argument("--cpu", action="store_true", help="measure each file's CPU too")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    options = parser.parse_args(argv)
    wall = None
    report, cpu_log = options.report, None
    if report is None:
        report = Path(tempfile.mkdtemp()) / "suite.xml"
        cpu_log = report.with_name("cpu.jsonl") if options.cpu else None
        wall = run_suite(options.pytest_args, report, cpu_log)
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
    if cpu_log is not None and cpu_log.exists():
        cpu = cpu_by_file(cpu_log)
        spent = sum(cpu.values())
        print(f"\nCPU: {spent:.0f} s in all; on 2 cores at least {spent / 2:.0f} s of wall time")
        print(f"{'CPU s':>8} {'share':>6}  file")
        for name, took in sorted(cpu.items(), key=lambda kv: -kv[1])[:options.top]:
            print(f"{took:8.1f} {took / spent:6.1%}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
