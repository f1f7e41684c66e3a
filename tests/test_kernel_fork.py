"""A kernel forked from the warm zygote (tests/kernel_fork.py) is the kernel a fresh start
gives: the same interpreter state a notebook can see, in the world it was asked for."""

from __future__ import annotations

import json
import os

import pytest
from kernel_fork import Zygote
from nbformat.v4 import new_code_cell, new_notebook
from run_all import WORLDS, kernel_env, run_notebook

LOOK = r"""
import json, os, signal, sys, time
from ipykernel.kernelapp import IPKernelApp
env = {k: v for k, v in os.environ.items() if k not in ("JPY_PARENT_PID", "JPY_SESSION_NAME")}
print(json.dumps({
    "cwd": os.getcwd(), "path": sys.path, "argv0": os.path.basename(sys.argv[0]),
    "env": env, "zone": time.tzname, "now_zone": time.strftime("%Z"),
    "signals": {n: str(signal.getsignal(getattr(signal, n)))
                for n in ("SIGINT", "SIGCHLD", "SIGPIPE", "SIGTERM")},
    "session_leader": os.getsid(0) == os.getpid(),
    "parent_handle": IPKernelApp.instance().parent_handle != 0,
    "lesson_lib": sorted(m for m in sys.modules if m.startswith("lesson_lib")),
    "user_names": sorted(n for n in globals() if not n.startswith("_")),
    "name": __name__}))
"""


def look(tmp_path, fork: str, world: str) -> dict:
    path = tmp_path / "look.ipynb"
    path.write_text(json.dumps(new_notebook(cells=[new_code_cell(LOOK)])))
    env = {k: v for k, v in kernel_env(WORLDS[world]).items() if k != "LESSON_FORK_KERNELS"}
    saved = os.environ.get("LESSON_FORK_KERNELS")
    os.environ["LESSON_FORK_KERNELS"] = fork
    try:
        run = run_notebook(path, env, repo=None)
    finally:
        os.environ.pop("LESSON_FORK_KERNELS") if saved is None else \
            os.environ.__setitem__("LESSON_FORK_KERNELS", saved)
    assert run.problems == []
    return json.loads(run.nb.cells[0].outputs[0]["text"])


@pytest.mark.parametrize("world", ["dst-new-york", "real-clock-pago-pago"])
def test_a_forked_kernel_sees_what_a_fresh_one_sees(tmp_path, world):
    if Zygote.get() is None:
        pytest.skip("no fork on this platform")
    fresh, forked = look(tmp_path, "0", world), look(tmp_path, "1", world)
    assert set(forked["env"].items()) ^ set(fresh["env"].items()) == set()
    assert forked == fresh
    assert fresh["zone"] != ["UTC", "UTC"] and fresh["cwd"] == str(tmp_path)
    assert fresh["lesson_lib"] == []  # nothing of the lesson is loaded before its cells


def test_an_environment_python_reads_at_start_is_never_forked():
    zygote = Zygote.get()
    if zygote is None:
        pytest.skip("no fork on this platform")
    import sys

    cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "x.json"]
    assert zygote.can_fork(cmd, dict(os.environ))
    assert not zygote.can_fork(cmd, {**os.environ, "PYTHONHASHSEED": "1"})
    assert not zygote.can_fork(cmd, {**os.environ, "LC_ALL": "tr_TR.UTF-8"})
    assert not zygote.can_fork(["/usr/bin/python3", *cmd[1:]], dict(os.environ)) or \
        os.path.realpath("/usr/bin/python3") == os.path.realpath(sys.executable)
    assert not zygote.can_fork([sys.executable, "-m", "other_kernel"], dict(os.environ))
