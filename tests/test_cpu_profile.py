"""The suite's CPU profile (tests/cpu_profile.py) counts what ended under the test process:
a child that ran and exited, and a kernel forked by the zygote (tests/kernel_fork.py reaps
its kernels so that their CPU reaches it)."""

import subprocess
import sys
from pathlib import Path

import nbformat
import psutil
from cpu_profile import tree_cpu
from nbformat.v4 import new_code_cell, new_notebook
from run_all import WORLDS, kernel_env, run_notebook

BUSY = "sum(i * i for i in range(3_000_000))"


def test_a_child_that_has_ended_is_counted():
    me = psutil.Process()
    before = tree_cpu(me)
    child = subprocess.run([sys.executable, "-c", BUSY], check=True)
    assert child.returncode == 0
    assert tree_cpu(me) - before > 0.1


def test_a_forked_kernel_s_cpu_reaches_the_test_process(tmp_path: Path):
    path = tmp_path / "busy.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(BUSY)]), path)
    world = kernel_env(WORLDS["real-clock-pago-pago"])
    run_notebook(path, world, repo=None)  # the zygote is started (and warm) before counting
    me = psutil.Process()
    before = tree_cpu(me)
    run = run_notebook(path, world, repo=None)
    assert run.cpu_seconds > 0.1
    assert tree_cpu(me) - before >= run.cpu_seconds * 0.9
