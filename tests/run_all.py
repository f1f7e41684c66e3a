"""Run a notebook top to bottom as JupyterLab's Run All does, in a chosen world, and list
every problem a learner would meet.

A *world* is the environment of the kernel: the clock (real, or frozen at an instant by
LESSON_FROZEN_TIME), the time zone (TZ) and the model (the offline one, or a served
other model reached exactly as a learner reaches a real provider: LESSON_BACKEND=openai,
OPENAI_API_KEY, OPENAI_BASE_URL, LESSON_MODEL).

    run = run_notebook(path, kernel_env(WORLDS["real-clock-kiritimati"]))
    run.problems   # ["00_start_here: cell 12 (reply = chat(...)): AssertionError: ...", ...]

The notebook is read into memory and executed with nbclient in a fresh `python3` kernel
whose working directory is the notebook's folder (as Run All's); it is never written
back. A problem is:
- an error output in a cell not tagged `raises-exception`;
- a cell tagged `raises-exception` that did not raise;
- a traceback, error or warning written to stderr by a cell not tagged `raises-exception`;
- a cell that timed out, or a kernel that died;
- an output that shows the API key the kernel was given (`secret`);
- a file in the repository that the kernel creates, writes, renames or deletes (an audit
  hook, installed silently in the kernel before the first cell, sees every such call of
  the kernel process and says which cell made it), or a new file that appears in the
  notebook's folder while it runs (git status: what a child process might have made).
Cells are numbered as nbval numbers them: N counts the code cells from 0, so
`pytest "notebooks/00_start_here.ipynb::Cell N"` is the same cell.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from kernel_fork import ForkingKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async

from lesson_lib.clock import ENV_VAR as FROZEN_VAR
from lesson_lib.testing import REAL_PROVIDER_VARS

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = [*sorted(NOTEBOOK_DIR.glob("[0-9][0-9]*_*.ipynb")),          # English
             *sorted((NOTEBOOK_DIR / "zh").glob("[0-9][0-9]*_*.ipynb"))]  # and 中文版


def label(path: Path) -> str:
    """A notebook's name in reports: "03_the_tool_calling_protocol", "zh/03_the_…"."""
    return f"zh/{path.stem}" if path.parent.name == "zh" else path.stem
CELL_TIMEOUT = 300  # seconds per cell; the slowest cells take a few seconds
RAISES = "raises-exception"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
STDERR_PROBLEM = re.compile(r"Traceback \(most recent call last\)|\w*(Error|Exception|Warning)\b")


@dataclass(frozen=True)
class World:
    """Where a notebook runs: a clock, a time zone and a model."""
    name: str
    tz: str
    frozen_at: str | None = None  # an ISO 8601 instant for LESSON_FROZEN_TIME; None: real clock
    other_model: bool = False     # True: the served other model (tests/other_model.py)
    why: str = ""


WORLDS = {w.name: w for w in [
    World("real-clock-kiritimati", "Pacific/Kiritimati",
          why="the real clock in UTC+14, the first zone to reach a new day"),
    World("real-clock-pago-pago", "Pacific/Pago_Pago",
          why="the real clock in UTC-11: the other side of the date line, a day behind"),
    World("dst-new-york", "America/New_York", frozen_at="2026-03-08T07:00:00+00:00",
          why="2 a.m. in New York on 8 March 2026, the instant US clocks spring forward to 3 a.m."
              " (02:00-02:59 local does not exist that day)"),
    World("new-year-shanghai", "Asia/Shanghai", frozen_at="2026-12-31T23:59:59+00:00",
          why="the last second of 2026 in UTC, which is already 2027-01-01 07:59:59 in Shanghai,"
              " the zone lesson_lib.clock.now() uses by default: UTC and local time disagree"
              " on the day and the year (and both fall in ISO week 2026-W53)"),
    World("other-model", "UTC", other_model=True,
          why="the real clock, and a served model that is not the offline one"),
]}


def kernel_env(world: World, provider: Mapping[str, str] | None = None,
               base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The kernel's environment in `world`: `base` (os.environ) with the clock, the time
    zone and the model variables set; PYTHONPATH (CI's network guard) kept as it is.
    `provider`: LESSON_BACKEND/OPENAI_*/LESSON_MODEL of the other model, when it is used."""
    env = dict(os.environ if base is None else base)
    env.pop(FROZEN_VAR, None)
    if world.frozen_at is not None:
        env[FROZEN_VAR] = world.frozen_at
    env["TZ"] = world.tz
    for name in REAL_PROVIDER_VARS:
        env.pop(name, None)
    if world.other_model:
        if not provider:
            raise ValueError(f"world {world.name!r} needs the other model's variables")
        env.update(provider)
    return env


@dataclass
class Run:
    """What running one notebook found."""
    notebook: str
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    nb: nbformat.NotebookNode | None = None  # the executed copy (for inspection)
    read_the_clock: bool | None = None  # lesson_lib.clock.now() was called (None: not watched)
    cpu_seconds: float | None = None  # the kernel's CPU (and its children's), after the last cell


def first_line(source: str) -> str:
    """The first line of code of a cell, for a developer to find it (comments skipped)."""
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    code = [line for line in lines if not line.startswith("#")]
    line = (code or lines or [""])[0]
    return line if len(line) <= 70 else line[:69] + "…"


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(ANSI.sub("", text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# Evaluated in the kernel right after a cell failed, silently (no output, no history entry):
# where the error was raised in the cell's own code (its last frame in the cell's file).
WHERE_EXPRESSION = (
    "(lambda tb: [(f.lineno, f.line) for f in tb if f.filename == next("
    "(g.filename for g in tb if 'ipykernel_' in g.filename), None)][-1:])("
    "__import__('traceback').extract_tb(__import__('sys').last_traceback))")


async def error_line(client: NotebookClient) -> str:
    """`line N: code` where the cell that just failed raised, asked of its kernel ("" if the
    kernel cannot say). The notebooks' `%xmode Minimal` leaves it out of the traceback."""
    try:
        msg_id = await ensure_async(client.kc.execute(
            "", silent=True, store_history=False, user_expressions={"at": WHERE_EXPRESSION}))
        reply = await client.async_wait_for_reply(msg_id)
        found = reply["content"]["user_expressions"]["at"]
        if found.get("status") != "ok":
            return ""
        frames = ast.literal_eval(found["data"]["text/plain"])
        return f"line {frames[0][0]}: {frames[0][1]}" if frames else ""
    except Exception:  # noqa: BLE001 (a location is a courtesy: never fail the run for it)
        return ""


def code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def problems_in(nb, name: str, secret: str | None = None,
                lines: Mapping[int, str] | None = None) -> list[str]:
    """Every problem the outputs of an executed notebook show (see the module docstring).
    `lines`: cell index → where in the cell an error was raised, if known."""
    found, number = [], -1
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        number += 1
        where = f"{name}: cell {number} ({first_line(cell.source)})"
        tagged = RAISES in (cell.metadata.get("tags") or [])
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if tagged and not errors:
            found.append(f"{where}: did not raise (the cell is tagged {RAISES})")
        if not tagged:
            for error in errors:
                message = one_line(error.get("evalue", "")) or "(no message)"
                at = (lines or {}).get(index, "")
                found.append(f"{where}: {error.get('ename')}: {message}"
                             + (f" [{at}]" if at else ""))
            for output in cell.get("outputs", []):
                text = output.get("text", "") if output.get("output_type") == "stream" \
                    and output.get("name") == "stderr" else ""
                if STDERR_PROBLEM.search(text):
                    hit = next(line for line in text.splitlines() if STDERR_PROBLEM.search(line))
                    found.append(f"{where}: stderr: {one_line(hit)}")
        if secret and secret in str(cell.get("outputs", [])):
            found.append(f"{where}: an output shows the API key")
    return found


# ----------------------------------------------------------------- the repository's files

# Run silently in the kernel before the first cell: an audit hook (PEP 578) that writes
# one line "time<TAB>event<TAB>path" to LOG for each file or folder under ROOT
# the kernel process opens for writing, creates, renames or deletes. Compiled caches
# (__pycache__) are left out: the import system writes them, not the lesson.
WATCH_SOURCE = r"""
import os, sys, time
ROOT, LOG = {root!r}, {log!r}
log = open(LOG, "a", encoding="utf-8", buffering=1)
clock, busy = time.time, []  # kept: a lesson that patches time.time does not change it
WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
ONE_PATH = ("os.remove", "os.rmdir", "os.mkdir", "os.truncate", "shutil.rmtree", "os.chmod",
            "sqlite3.connect")
TWO_PATHS = ("os.rename", "os.link", "os.symlink", "shutil.copyfile", "shutil.copytree",
             "shutil.move")

def relative_to(dir_fd):  # a path given with dir_fd= is relative to that folder, not the cwd
    if not isinstance(dir_fd, int) or dir_fd < 0:  # -1 or None: no dir_fd
        return None
    try:
        return os.readlink(f"/proc/self/fd/{{dir_fd}}")
    except OSError:
        return ""  # unknown folder (not Linux): the path cannot be placed

def hook(event, args):
    if busy:
        return
    base = None
    if event == "open":
        paths = [args[0]] if isinstance(args[2], int) and args[2] & WRITES else []
    elif event in ONE_PATH:
        paths = [args[0]]
        fd_at = {{"os.remove": 1, "os.rmdir": 1, "os.mkdir": 2}}.get(event)
        base = relative_to(args[fd_at]) if fd_at and len(args) > fd_at else None
    elif event in TWO_PATHS:
        paths = [args[0], args[1]] if event in ("os.rename", "shutil.move") else [args[1]]
        base = relative_to(args[2]) if event == "os.rename" and len(args) > 2 else None
    else:
        return
    if base == "":
        return
    busy.append(1)
    try:
        for path in paths:
            if isinstance(path, (str, bytes, os.PathLike)):
                full = os.path.abspath(os.path.join(base or "", os.fsdecode(path)))
                if full.startswith(ROOT + os.sep) and "__pycache__" not in full:
                    log.write(f"{{clock():.6f}}\t{{event}}\t{{full}}\n")
    except Exception:
        pass
    finally:
        busy.clear()

sys.addaudithook(hook)
"""


# Run silently in the kernel before the first cell, beside the file watch: the first read
# of lesson_lib.clock.now(), the only place the library reads the time (its docstring says
# so), creates FLAG. A run that leaves no FLAG never read the clock through the library.
CLOCK_SOURCE = r"""
import functools, lesson_lib.clock as clock
FLAG, read, before = {flag!r}, [], clock.now

@functools.wraps(before)
def now(*args, **kwargs):
    if not read:
        read.append(1)
        open(FLAG, "w").close()
    return before(*args, **kwargs)

clock.now = now
"""

# A notebook's own code reads the clock or the time zone when it imports one of these
# (or names lesson_lib.clock); none of the modules then gets past a static look.
TIME_MODULES = ("datetime", "time", "zoneinfo", "calendar", "pytz", "dateutil",
                "lesson_lib.clock", "email.utils")


def clock_source(flag: Path) -> str:
    """The silent cell that notes the first read of lesson_lib.clock.now() (in `flag`)."""
    return f"exec({CLOCK_SOURCE.format(flag=str(flag))!r}, {{}})"


def reads_time_itself(nb) -> list[str]:
    """What in the notebook's own code can read the clock or the time zone: each import of
    a time module, and each use of `clock` (static: the run shows what the library reads)."""
    found = []
    for cell in code_cells(nb):
        source = re.sub(r"^\s*[%!].*$", "", cell.source, flags=re.MULTILINE)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            found.append(f"cell {first_line(cell.source)!r} (not plain Python)")
            continue
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) else
                     [node.id] if isinstance(node, ast.Name) and node.id == "clock" else [])
            found += [name for name in names
                      if any(name == m or name.startswith(m + ".") for m in TIME_MODULES)
                      or name == "clock"]
    return found


def code_shape(nb) -> tuple[str, ...]:
    """The notebook's code with every string and bytes literal (f-strings too) and comment
    blanked: two editions with the same shape run the same statements on different text."""
    class Blank(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.Constant("") if isinstance(node.value, (str, bytes)) else node

        def visit_JoinedStr(self, node):
            return ast.Constant("")

    shapes = []
    for cell in code_cells(nb):
        source = re.sub(r"^\s*[%!].*$", "", cell.source, flags=re.MULTILINE)
        try:
            shapes.append(ast.dump(Blank().visit(ast.parse(source))))
        except SyntaxError:
            shapes.append(source)
    return tuple(shapes)


def english_twin(path: Path) -> Path | None:
    """notebooks/<name> for notebooks/zh/<name>; None for an English notebook."""
    return path.parent.parent / path.name if path.parent.name == "zh" else None


def watch_source(root: Path, log: Path) -> str:
    """The silent cell that installs the audit hook (it leaves no name in the notebook)."""
    return f"exec({WATCH_SOURCE.format(root=str(root), log=str(log))!r}, {{}})"


def where_is(nb, name: str, index: int | None) -> str:
    """"name: cell N (first line)" for the cell at `index` of nb.cells (N: nbval's number)."""
    if index is None or nb.cells[index].cell_type != "code":
        return f"{name}: before the first cell"
    number = sum(c.cell_type == "code" for c in nb.cells[:index])
    return f"{name}: cell {number} ({first_line(nb.cells[index].source)})"


def written(log: Path, nb, name: str, root: Path, starts: list[tuple[float, int]]) -> list[str]:
    """The audit log as problems: which cell touched which path (each pair once). A path
    is put down to the last cell that started before it was touched (`starts`: the time
    each cell started, and its index)."""
    found: dict[tuple, str] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        at, event, path = line.split("\t", 2)
        index = max(((t, i) for t, i in starts if t <= float(at)), default=(0, None))[1]
        where = where_is(nb, name, index)
        rel = os.path.relpath(path, root)
        what = "wrote" if event == "open" else event
        found.setdefault((where, rel), f"{where}: {what} {rel} (a file in the repository)")
    return list(found.values())


def new_paths(folder: Path) -> set[str]:
    """Untracked and ignored paths under `folder`, as git status lists them."""
    listed = subprocess.run(
        ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching",
         "--", "."], cwd=folder, capture_output=True, check=True).stdout.decode("utf-8", "replace")
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder,
                         capture_output=True, check=True, text=True).stdout.strip()
    return {str(Path(top, entry[3:]).resolve()) for entry in listed.split("\0")
            if entry[:2] in ("??", "!!") and "__pycache__" not in entry}


# ----------------------------------------------------------------- running

CPU_EXPRESSION = ("(lambda r: sum(u.ru_utime + u.ru_stime for u in (r.getrusage(r.RUSAGE_SELF), "
                  "r.getrusage(r.RUSAGE_CHILDREN))))(__import__('resource'))")


async def kernel_cpu(client: NotebookClient) -> float:
    """The CPU seconds the kernel (and the children it waited for) used so far, asked with a
    silent user expression (no output, no history entry); -1 when it cannot say. A forked
    kernel starts from zero: the zygote's imports are not counted."""
    try:
        msg_id = await ensure_async(client.kc.execute(
            "", silent=True, store_history=False, user_expressions={"cpu": CPU_EXPRESSION}))
        reply = await client.async_wait_for_reply(msg_id)
        return float(reply["content"]["user_expressions"]["cpu"]["data"]["text/plain"])
    except Exception:  # noqa: BLE001  (a measurement only: never a problem of the notebook)
        return -1.0


KERNEL_NOT_STARTED = ("Kernel didn't respond", "Kernel died before replying")


def kernel_never_started(error: BaseException | None, starts: list) -> bool:
    """Did the kernel fail to come up, before any cell ran? (A port taken between jupyter_client
    choosing it and the kernel binding it, by another process on a busy machine: the kernel
    cannot start, and nothing of the notebook is to blame.)"""
    return (isinstance(error, RuntimeError) and not starts
            and str(error).startswith(KERNEL_NOT_STARTED))


def run_notebook(path: Path, env: Mapping[str, str], *, timeout: int = CELL_TIMEOUT,
                 secret: str | None = None, repo: Path | None = ROOT,
                 watch_clock: bool = False, start_retries: int = 1) -> Run:
    """Execute a copy of the notebook at `path` in a kernel with environment `env`, as Run
    All does (the working directory is the notebook's folder), and list its problems.
    Unlike Run All, it carries on after an error, so every problem is found.
    `secret`: a value no output may show. `repo`: the git work tree in which no file may
    be created or changed meanwhile (None: not checked). `watch_clock`: note in
    `run.read_the_clock` whether the library's clock was read."""
    name = label(path)
    nb = nbformat.read(path, as_version=4)  # in memory only: never written back
    client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                            kernel_manager_class=ForkingKernelManager,  # a warm start
                            resources={"metadata": {"path": str(path.parent)}})
    starts: list[tuple[float, int]] = []  # (time.time(), cell index) as each code cell starts
    lines: dict[int, str] = {}  # cell index → "line N: code" of the error (%xmode Minimal hides it)

    def on_cell_start(cell, cell_index):
        if cell.cell_type == "code" and cell.source.strip():
            starts.append((time.time(), cell_index))

    async def on_cell_error(cell, cell_index, execute_reply):
        lines[cell_index] = await error_line(client)

    last_code = max((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), default=-1)
    cpu: list[float] = []

    async def on_cell_executed(cell, cell_index, execute_reply):
        if cell_index == last_code:  # the kernel's own count, asked silently before it stops
            cpu.append(await kernel_cpu(client))

    client.on_cell_start, client.on_cell_error = on_cell_start, on_cell_error
    client.on_cell_executed = on_cell_executed
    silent: list[tuple[str, str]] = []  # (what, source) run before the first cell
    if repo is not None:
        handle, log_name = tempfile.mkstemp(prefix="run_all_writes_", suffix=".log")
        os.close(handle)
        log, before = Path(log_name), new_paths(path.parent)
        silent.append(("the file watch", watch_source(repo.resolve(), log)))
    if watch_clock:
        flag = Path(tempfile.mkdtemp(prefix="run_all_clock_")) / "read"
        silent.append(("the clock watch", clock_source(flag)))

    async def on_notebook_start(notebook):
        for what, source in silent:
            msg_id = await ensure_async(client.kc.execute(source, silent=True,
                                                          store_history=False))
            reply = await client.async_wait_for_reply(msg_id)
            if (reply or {}).get("content", {}).get("status") != "ok":
                raise RuntimeError(f"{what} could not be installed in the kernel: "
                                   f"{(reply or {}).get('content')}")

    client.on_notebook_start = on_notebook_start
    started = time.perf_counter()
    aborted = None
    try:
        client.execute(env=dict(env))
    except (CellTimeoutError, DeadKernelError, RuntimeError) as error:
        aborted = error
    seconds = time.perf_counter() - started
    if kernel_never_started(aborted, starts) and start_retries > 0:  # once more, anew
        if watch_clock:
            flag.unlink(missing_ok=True)
            flag.parent.rmdir()
        if repo is not None:
            log.unlink()
        return run_notebook(path, env, timeout=timeout, secret=secret, repo=repo,
                            watch_clock=watch_clock, start_retries=start_retries - 1)
    run = Run(name, problems_in(nb, name, secret, lines), seconds, nb,
              cpu_seconds=cpu[0] if cpu and cpu[0] >= 0 else None)
    if aborted is not None:
        where = where_is(nb, name, starts[-1][1] if starts else None)
        run.problems.append(f"{where}: {type(aborted).__name__}: "
                            f"{one_line(str(aborted).splitlines()[0] if str(aborted) else '')}"
                            " (the run stopped here)")
    if watch_clock:
        run.read_the_clock = flag.exists()
        flag.unlink(missing_ok=True)
        flag.parent.rmdir()
    if repo is not None:
        run.problems += written(log, nb, name, repo.resolve(), starts)
        log.unlink()
        for new in sorted(new_paths(path.parent) - before):
            rel = os.path.relpath(new, repo.resolve())
            if not any(f" {rel} (a file in the repository)" in p for p in run.problems):
                run.problems.append(f"{name}: {rel} appeared while it ran (git status)")
    return run
