"""Helpers for tests/test_browser.py: a private Jupyter server on 127.0.0.1 for one of two front
ends (JupyterLab or classic Notebook 7), and checks on what it binds.

`JupyterServer(workdir, notebooks, strip, front_end)` copies notebooks/ into `workdir`
(autosave never touches the committed files), strips the outputs of the notebook under test (so
every widget on the page comes from this run), and starts `python -m jupyterlab` or
`python -m notebook` with its own settings, config, runtime and workspace directories, no token,
no password, only on 127.0.0.1, and the app object exposed as `window.jupyterapp` (both front
ends are JupyterLab applications, so the page scripts are the same). `stop()` shuts it down,
and its kernels with it, by process id.

Also what a test does with a page in headless Chromium, for tests/test_browser.py and
tests/test_hub.py alike: `require_browser()` (skip, or fail under LESSON_REQUIRE_BROWSER=1),
`launch()`, and `wait_for()`, `run_all()`, `run_all_cleanly()` with the page scripts they use.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from lesson_lib.testing import apply_notebook_env

LAB_SETTINGS = {  # JupyterLab 4 user settings (Notebook 7 reads them too): plugin id → values
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},  # render every cell
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}
LAB_CONFIG = {"LabApp": {"news_url": None}}  # the server fetches no news feed either


@dataclass(frozen=True)
class FrontEnd:
    """One Jupyter front end: how to start its server and where it shows a notebook."""

    name: str          # the test id, and the folder its screenshots go to
    title: str         # for messages
    app_name: str      # `window.jupyterapp.name` on its pages
    module: str        # started as `python -m <module>`
    app_class: str     # its config class, which owns `expose_app_in_browser`
    home: str          # its start page (the page config there says whether news is fetched)
    notebook_url: str  # the page of one notebook, `{path}` relative to the server's root

    def open_url(self, path: str) -> str:
        return self.notebook_url.format(path=path)


# Notebook 7's server loads the jupyterlab extension too, so the LabApp settings apply to both.
LAB = FrontEnd("lab", "JupyterLab", "JupyterLab", "jupyterlab", "LabApp", "/lab",
               "/lab/tree/{path}")
NOTEBOOK7 = FrontEnd("notebook", "Notebook 7", "Jupyter Notebook", "notebook",
                     "JupyterNotebookApp", "/tree", "/notebooks/{path}")
FRONT_ENDS = (LAB, NOTEBOOK7)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def strip_outputs(path: Path) -> None:
    """Remove every output and execution count from the notebook at `path`."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb.get("metadata", {}).pop("widgets", None)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def listening_hosts(port: int) -> set[str]:
    """The local addresses on which something listens on TCP `port` (Linux /proc; an empty
    set elsewhere or when nothing listens)."""
    hosts = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port and len(address) == width:
                hosts.add(_address(address))
    return hosts


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))  # host-order 32-bit words
    return socket.inet_ntop(socket.AF_INET6, words)


def _processes_with_parent_env(pid: int) -> list[int]:
    """Kernels started by server `pid` (ipykernel gets JPY_PARENT_PID=<pid>)."""
    marker, found = f"JPY_PARENT_PID={pid}".encode(), []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker in entry.joinpath("environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


class JupyterServer:
    """A Jupyter server for `front_end` on a copy of notebooks/, for one test."""

    def __init__(self, workdir: Path, notebooks: Path, strip: str, front_end: FrontEnd = LAB):
        self.front_end = front_end
        self.workdir, self.root = workdir, workdir / "notebooks"
        shutil.copytree(notebooks, self.root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        strip_outputs(self.root / strip)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.runtime = workdir / "runtime"
        self.log_path = workdir / f"{front_end.module}.log"
        self.process: subprocess.Popen | None = None
        self._log = None

    def environment(self) -> dict:
        env = dict(os.environ)
        apply_notebook_env(env)  # the kernel: frozen clock, UTC, offline model
        settings, config = self.workdir / "lab-settings", self.workdir / "config"
        for plugin, values in LAB_SETTINGS.items():
            _write_json(settings / f"{plugin}.jupyterlab-settings", values)
        _write_json(config / "jupyter_lab_config.json", LAB_CONFIG)
        env.update(JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTER_CONFIG_DIR=str(config),
                   JUPYTER_RUNTIME_DIR=str(self.runtime),
                   JUPYTERLAB_WORKSPACES_DIR=str(self.workdir / "workspaces"),
                   IPYTHONDIR=str(self.workdir / "ipython"))
        return env

    def command(self) -> list[str]:
        return [sys.executable, "-m", self.front_end.module, "--no-browser", "--allow-root",
                "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0", "--IdentityProvider.token=",
                "--ServerApp.password=", f"--ServerApp.root_dir={self.root}",
                "--KernelManager.ip=127.0.0.1",
                f"--{self.front_end.app_class}.expose_app_in_browser=True",
                "--LabApp.extension_manager=readonly",
                "--LabApp.check_for_updates_class="
                "jupyterlab.handlers.announcements.NeverCheckForUpdate"]

    def start(self, timeout: float = 180) -> None:
        """Start the server and wait until /api/status answers (a JupyterLab started while a
        class of eight hub servers runs beside it has taken over a minute here)."""
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(self.command(), env=self.environment(), cwd=self.workdir,
                                        stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.front_end.title}'s server exited with "
                                   f"{self.process.returncode}:\n"
                                   f"{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        raise TimeoutError(f"{self.front_end.title}'s server did not answer "
                           f"{self.url}/api/status within "
                           f"{timeout:.0f} s:\n{self.log_tail()}")

    def news_disabled(self) -> bool:
        """True when the front end's page config says no news feed will be fetched."""
        with urllib.request.urlopen(f"{self.url}{self.front_end.home}", timeout=10) as answer:
            page = answer.read().decode("utf-8", errors="replace")
        return re.search(r'"news":\s*\{\s*"disabled":\s*true', page) is not None

    def running_kernels(self) -> list[dict]:
        """The kernels the server says are running (its REST API)."""
        with urllib.request.urlopen(f"{self.url}/api/kernels", timeout=10) as answer:
            return json.loads(answer.read())

    def kernel_connections(self) -> list[dict]:
        """The connection files of the kernels this server started."""
        return [json.loads(p.read_text()) for p in self.runtime.glob("kernel-*.json")]

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, timeout: float = 15) -> None:
        """SIGTERM the server (it shuts its kernels down), then SIGKILL whatever is left of
        it and of its kernels, by process id."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
        # Normally none is left: the server stops its kernels, or they see it go.
        for pid in _processes_with_parent_env(process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self._log is not None:
            self._log.close()
        self.process = None


# ----------------------------------------------------------------- a page in Chromium
# (shared by tests/test_browser.py and tests/test_hub.py)

CHROMIUM = Path(os.environ.get("LESSON_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
VIEWPORT = {"width": 1440, "height": 960}
SECONDS = 1000  # Playwright counts milliseconds

NOTEBOOK_STATE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const code = panel.content.widgets.filter(c => c.model.type === 'code');
  const prompt = c => (c.node.querySelector('.jp-InputPrompt') || {}).textContent || '';
  return {app: window.jupyterapp.name, path: panel.context.path,
          ready: panel.sessionContext.isReady,
          status: kernel ? kernel.status : 'none', total: code.length,
          executed: code.filter(c => c.model.executionCount != null).length,
          queued: code.filter(c => prompt(c).includes('*')).length};
}"""

RUN_ALL = """() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"""

ERRORS = """() => {
  const panel = window.jupyterapp.shell.currentWidget, found = [];
  panel.content.widgets.forEach((cell, index) => {
    if (cell.model.type !== 'code') return;
    const tags = cell.model.getMetadata('tags') || [];
    if (tags.includes('raises-exception')) return;
    const outputs = cell.model.outputs.toJSON();
    const bad = outputs.filter(o => o.output_type === 'error' ||
                                    (o.output_type === 'stream' && o.name === 'stderr'));
    const shown = cell.node.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').length;
    const text = cell.node.innerText;
    const traceback = /Traceback \\(most recent call last\\)|Error displaying widget/.test(text);
    if (bad.length || shown || traceback) {
      found.push({cell: index, outputs: bad.map(o => o.ename || o.name), shown: shown,
                  text: text.slice(0, 300)});
    }
  });
  return found;
}"""

SHUT_DOWN_KERNEL = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  const stop = panel && panel.sessionContext ? panel.sessionContext.shutdown() : null;
  await Promise.race([stop, new Promise(done => setTimeout(done, 10000))]);
  return true;
}"""


def require_browser():
    """The Playwright module, or skip (fail when LESSON_REQUIRE_BROWSER=1) saying what lacks."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    try:
        from playwright import sync_api
    except ImportError:
        sync_api = None
        missing.append("the playwright package (pip install -e '.[dev]')")
    if missing:
        reason = "the browser test needs " + " and ".join(missing)
        if os.environ.get("LESSON_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason}; LESSON_REQUIRE_BROWSER=1 says it must run here")
        pytest.skip(reason)
    return sync_api


def wait_for(page, what: str, test, timeout: float, poll: float = 0.25, times: int = 1):
    """Poll NOTEBOOK_STATE until `test(state)` holds `times` polls in a row; fail with the last
    state seen."""
    deadline, state, held = time.monotonic() + timeout, None, 0
    while time.monotonic() < deadline:
        state = page.evaluate(NOTEBOOK_STATE)
        held = held + 1 if state and test(state) else 0
        if held >= times:
            return state
        page.wait_for_timeout(poll * SECONDS)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last notebook "
                         f"state: {state}")


def launch(sync_api, playwright, tmp_path: Path):
    """Headless Debian Chromium with a fresh profile: (context, its page), 15 s timeouts."""
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM),
        headless=True, args=CHROMIUM_ARGS, viewport=VIEWPORT)
    context.set_default_timeout(15 * SECONDS)
    sync_api.expect.set_options(timeout=15 * SECONDS)
    return context, context.pages[0] if context.pages else context.new_page()


def run_all(page) -> dict:
    """Run every cell; return when all have run, or when the run stopped at an error (the
    kernel idle, nothing queued, an error shown), the same for a second in a row."""
    page.evaluate(RUN_ALL)

    def finished(s: dict) -> bool:
        settled = s["status"] == "idle" and s["queued"] == 0
        return settled and (s["executed"] == s["total"] or bool(page.evaluate(ERRORS)))

    state = wait_for(page, "every cell to run", finished, 120, poll=0.5, times=3)
    page.wait_for_timeout(0.5 * SECONDS)  # let the last widget messages render
    return state


def run_all_cleanly(page) -> None:
    """Run All, then no error output anywhere and every cell run."""
    state = run_all(page)
    errors = page.evaluate(ERRORS)
    assert not errors, f"error output in cells: {json.dumps(errors, indent=1)}"
    assert state["executed"] == state["total"], f"not every cell ran: {state}"
