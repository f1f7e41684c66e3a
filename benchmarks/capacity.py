"""How many learners a class server holds: one learner's memory, start-up time and CPU.

    python benchmarks/capacity.py              # every notebook of the English edition
    python benchmarks/capacity.py --zh         # the Chinese edition
    python benchmarks/capacity.py 01 02 11     # some notebooks (by number)

A learner on a class JupyterHub has one Jupyter server (JupyterLab's) and, per notebook
they open, one kernel. This measures both on this machine, as a learner meets them:

- the server: `jupyter lab` started on 127.0.0.1 with no browser, its resident memory (RSS)
  once it answers, and how long it took to answer;
- each notebook: a new kernel (the learner's `python3` kernel, as JupyterLab starts it), how
  long until it answers, then Run All (nbclient, every cell in order, the offline model in
  the kernel), the kernel's resident memory afterwards (with any process it started), and
  the CPU seconds the Run All cost (the kernel and its children, user + system);

and prints a table, then what one learner costs when they keep the server and their two
largest kernels open at once (a learner rarely has more running; JupyterLab's idle culler
stops the rest), and how many such learners fit in 4, 8, 16 and 32 GiB with a quarter kept
for the system and the hub. Nothing leaves 127.0.0.1; each kernel runs in a temporary copy
of the notebooks (a notebook may write files where it runs). CPU figures are per Run All:
a class that runs a notebook at the same moment needs that many CPU seconds per learner,
spread over the machine's cores. The README's teacher section quotes a run of this script.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat
import psutil
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from cpu_profile import tree_cpu as cpu  # noqa: E402  (a process's CPU, its children's too)

MIB = 1024 * 1024


def rss(process: psutil.Process) -> int:
    """Resident bytes of a process and every process it started."""
    total = 0
    for each in [process, *process.children(recursive=True)]:
        try:
            total += each.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_server(folder: Path) -> tuple[float, int]:
    """(seconds until JupyterLab's server answers, its RSS then)."""
    port, token = free_port(), "capacity"
    start = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
         f"--port={port}", f"--IdentityProvider.token={token}", f"--notebook-dir={folder}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],  # CI's containers run as root
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                            timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.perf_counter() - start > 120:
                    raise RuntimeError("the Jupyter server did not start") from None
                time.sleep(0.1)
        took = time.perf_counter() - start
        time.sleep(1.0)  # let its extensions finish loading
        return took, rss(psutil.Process(server.pid))
    finally:
        server.terminate()
        server.wait(timeout=30)


def measure_notebook(path: Path, env: dict[str, str]) -> dict:
    """A new kernel for `path`, Run All in it: start-up seconds, RSS after, CPU seconds."""
    nb = nbformat.read(path, as_version=4)
    manager = KernelManager(kernel_name="python3")
    start = time.perf_counter()
    manager.start_kernel(cwd=str(path.parent), env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        ready = time.perf_counter() - start
        kernel = psutil.Process(manager.provisioner.process.pid)
        before = cpu(kernel)
        ran = time.perf_counter()
        NotebookClient(nb, km=manager, kc=client, timeout=600, allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute(
                           cleanup_kc=False)
        wall = time.perf_counter() - ran
        errors = sum(1 for cell in nb.cells if cell.cell_type == "code"  # unexpected ones
                     and "raises-exception" not in cell.metadata.get("tags", [])
                     for out in cell.get("outputs", []) if out.get("output_type") == "error")
        return {"start": ready, "rss": rss(kernel), "cpu": cpu(kernel) - before, "wall": wall,
                "errors": errors}
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("numbers", nargs="*", help="notebook numbers (default: all)")
    parser.add_argument("--zh", action="store_true", help="the Chinese edition")
    options = parser.parse_args(argv)
    source = ROOT / "notebooks" / ("zh" if options.zh else "")
    with tempfile.TemporaryDirectory(prefix="capacity-") as tmp:
        folder = Path(tmp) / "notebooks"
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("zh", "*.db*"))
        paths = sorted(p for p in folder.glob("[0-9][0-9]*_*.ipynb")
                       if not options.numbers or p.name.split("_")[0] in options.numbers)
        env = {k: v for k, v in os.environ.items()
               if k not in ("LESSON_BACKEND", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                            "LESSON_MODEL", "LESSON_FROZEN_TIME")}
        env["LESSON_LANG"] = "zh" if options.zh else "en"
        took, server_rss = measure_server(folder)
        print(f"Jupyter server (JupyterLab): answers after {took:.1f} s, "
              f"{server_rss / MIB:.0f} MiB resident\n")
        print(f"{'notebook':<44} {'kernel up':>9} {'Run All':>8} {'CPU':>7} {'RSS':>8}")
        rows = []
        for path in paths:
            row = measure_notebook(path, env)
            rows.append(row)
            flag = f"  ({row['errors']} unexpected errors)" if row["errors"] else ""
            print(f"{path.stem:<44} {row['start']:8.1f}s {row['wall']:7.1f}s "
                  f"{row['cpu']:6.1f}s {row['rss'] / MIB:6.0f}MiB{flag}", flush=True)
    if not rows:
        return 1
    two = sorted((r["rss"] for r in rows), reverse=True)[:2]
    learner = server_rss + sum(two)
    print(f"\nkernel start-up: median {sorted(r['start'] for r in rows)[len(rows) // 2]:.1f} s;"
          f" Run All CPU: median {sorted(r['cpu'] for r in rows)[len(rows) // 2]:.1f} s, "
          f"largest {max(r['cpu'] for r in rows):.1f} s")
    print(f"one learner, the server and the two largest kernels open: {learner / MIB:.0f} MiB")
    for gib in (4, 8, 16, 32):
        print(f"  {gib:>2} GiB (a quarter kept for the system and the hub): "
              f"{int(gib * 1024 * MIB * 0.75 // learner)} learners")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
