"""The CPU each test costs, for benchmarks/suite_profile.py --cpu (LESSON_CPU_PROFILE=FILE).

Wall time says little on two cores shared by two workers and their kernels; CPU time says
what a test costs. Around each test (set-up, call and tear-down) the plugin adds up the CPU
of the worker and of every process under it: each living process's own time plus what its
children that have ended used (/proc's cutime and cstime, which a parent gains when it
reaps a child: a kernel forked by tests/kernel_fork.py's zygote is counted there). A test's
cost is the change of that sum; what a pool started ahead (the Run All runs) is counted
under the test that was running meanwhile, so only per-file and total figures are exact.
Each worker appends one JSON line per test to FILE: {"test", "cpu", "wall"}."""

from __future__ import annotations

import json
import os
import time

import psutil
import pytest

ENV_VAR = "LESSON_CPU_PROFILE"


def tree_cpu(process: psutil.Process) -> float:
    """CPU seconds of `process` and every process under it, those already ended included."""
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:  # ended meanwhile: its time reaches its parent when reaped
            pass
    return total


class CpuProfile:
    def __init__(self, path: str):
        self.path, self.me = path, psutil.Process(os.getpid())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu, wall = tree_cpu(self.me), time.perf_counter()
        yield
        line = {"test": item.nodeid, "cpu": round(tree_cpu(self.me) - cpu, 3),
                "wall": round(time.perf_counter() - wall, 3)}
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


def register(config) -> None:
    """Profile this run when LESSON_CPU_PROFILE names a file."""
    path = os.environ.get(ENV_VAR)
    if path:
        config.pluginmanager.register(CpuProfile(path), "lesson-cpu-profile")
