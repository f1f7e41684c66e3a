"""Notebook kernels forked from a warm process, so a test run does not pay each kernel's start.

A fresh `python -m ipykernel_launcher` spends about 1.5 s of CPU before a notebook's first
cell has done anything: starting Python, importing IPython, ipykernel, zmq and tornado, then
(in the notebook's first cells) openai, pydantic and jsonschema. The suite starts some 160
kernels (every notebook under nbval, and again in each Run All world), so that was about a
third of its notebook time. Here one *zygote* process per test process imports those
third-party modules once and forks a kernel per request; the child then becomes exactly the
kernel `jupyter_client` asked for: the command's arguments, the environment it was given
(the world's clock, time zone and model), the working directory, a session of its own, the
standard streams it was handed, default signal handlers, and `time.tzset()` for the zone.

What a fork cannot give is refused, and the kernel is started the ordinary way instead:
a command other than `python -m ipykernel_launcher` with this interpreter, or an environment
whose interpreter-start variables (PYTHON*, LC_*, LANG, and the BLAS libraries' OPENBLAS*, OMP_*, MKL_*) differ from the zygote's, since
Python reads those once when it starts. Nothing of the lesson is imported before the fork
(`lesson_lib` reads the environment on import), and nothing is put in the kernel's
namespace: a notebook that forgets an import still fails. The zygote holds no thread when it
forks (checked on each fork).

Use: `ForkingKernelManager` as nbclient's kernel manager class (tests/run_all.py), or any
kernel spec passed through `with_forking()` (nbval, conftest.py). `LESSON_FORK_KERNELS=0` turns
the zygote off: every kernel then starts fresh.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from importlib.metadata import EntryPoint
from pathlib import Path

from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.provisioning import LocalProvisioner
from jupyter_client.provisioning.factory import KernelProvisionerFactory
from traitlets import default

ENV_SWITCH = "LESSON_FORK_KERNELS"
PROVISIONER = "lesson-forked-kernel"
# Imported once in the zygote: what every kernel and the notebooks' first cells import.
PRELOAD = ("ipykernel.kernelapp", "ipykernel.ipkernel", "IPython.core.completer",
           "openai", "pydantic", "jsonschema", "pygments.lexers.python",
           "pygments.formatters.html", "hypothesis.strategies", "ipywidgets", "numpy",
           "matplotlib.pyplot", "matplotlib_inline.backend_inline", "sqlalchemy")
STARTUP_VARS = ("PYTHON", "LC_", "LANG", "OPENBLAS", "OMP_", "MKL_")  # read once, at start


def startup_environment(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith(STARTUP_VARS)}


# ----------------------------------------------------------------- the zygote (its own process)

ZYGOTE_SOURCE = r"""
import sys
sys.path.insert(0, {tests!r})
import kernel_fork
sys.path.pop(0)
del sys.modules["kernel_fork"]
kernel_fork.zygote_main({socket_path!r})
"""


def reap(signum, frame) -> None:
    """Reap every kernel that has exited. Reaped (not ignored, as SIG_IGN would), a kernel's
    CPU time is added to this process's children's times, where tests/cpu_profile.py reads
    it; it leaves no zombie behind either."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def zygote_main(socket_path: str) -> None:
    """Import PRELOAD, then fork a kernel for each request on the Unix socket, until the
    test process that started this one closes its end of our standard input."""
    import importlib
    import runpy  # noqa: F401  (the child uses it; imported before any fork)
    import select

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (a module not installed is simply not preloaded)
            pass
    signal.signal(signal.SIGCHLD, reap)  # exited kernels are reaped at once, their CPU counted
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path)
    server.listen(8)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        ready, _, _ = select.select([server, sys.stdin], [], [])
        if sys.stdin in ready:  # the test process has gone, or asks us to stop
            return
        conn, _ = server.accept()
        with conn:
            message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            request = json.loads(message)
            if threading.active_count() != 1:
                conn.sendall(json.dumps({"error": "the zygote holds a thread"}).encode())
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                server.close()
                conn.close()
                become_kernel(request, fds)  # never returns
            for fd in fds:
                os.close(fd)
            conn.sendall(json.dumps({"pid": pid}).encode())


def become_kernel(request: dict, fds: list[int]) -> None:
    """In the forked child: turn into the kernel `request` describes, then exit."""
    import runpy

    code = 1
    try:
        os.setsid()  # a session of its own, as jupyter_client's start_new_session=True
        for target, fd in zip((0, 1, 2), fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["JPY_PARENT_PID"] = str(os.getppid())  # the kernel follows the zygote
        os.chdir(request["cwd"])
        time.tzset()
        sys.path[0] = os.getcwd()  # what `python -m` puts first
        sys.path_importer_cache.clear()
        # IPKernelApp.parent_handle read JPY_PARENT_PID when the zygote imported it: say it
        sys.argv = ["-m", *request["argv"], f"--IPKernelApp.parent_handle={os.getppid()}"]
        code = 0
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


# ----------------------------------------------------------------- the test process's side

class Zygote:
    """The warm process of this test process (started on first use, stopped at exit)."""

    _instance: Zygote | None = None
    _lock = threading.Lock()

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="kernel-zygote-")
        self.path = os.path.join(self.folder, "zygote.sock")
        self.environ = dict(os.environ)
        source = ZYGOTE_SOURCE.format(tests=str(Path(__file__).parent), socket_path=self.path)
        self.process = subprocess.Popen([sys.executable, "-c", source], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, cwd=self.folder)
        if self.process.stdout.readline().strip() != b"ready":
            raise RuntimeError("the kernel zygote did not start")
        atexit.register(self.stop)

    @classmethod
    def get(cls) -> Zygote | None:
        if os.environ.get(ENV_SWITCH, "1") == "0" or not hasattr(os, "fork"):
            return None
        with cls._lock:
            if cls._instance is None or cls._instance.process.poll() is not None:
                cls._instance = cls()
            return cls._instance

    def can_fork(self, cmd: list[str], env: dict) -> bool:
        return (len(cmd) >= 3 and cmd[1:3] == ["-m", "ipykernel_launcher"]
                and os.path.realpath(cmd[0]) == os.path.realpath(sys.executable)
                and startup_environment(env) == startup_environment(self.environ))

    def fork(self, cmd: list[str], env: dict, cwd: str, streams: list) -> ForkedKernel:
        fds = [s.fileno() if hasattr(s, "fileno") else s for s in streams]
        request = json.dumps({"argv": cmd[2:], "env": env, "cwd": cwd}).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self.path)
            socket.send_fds(conn, [request], fds)
            answer = json.loads(conn.recv(1 << 16))
        if "pid" not in answer:
            raise RuntimeError(answer.get("error", "the zygote did not fork"))
        return ForkedKernel(answer["pid"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        for name in (self.path, self.folder):
            try:
                os.rmdir(name) if name == self.folder else os.unlink(name)
            except OSError:
                pass


class ForkedKernel:
    """The part of subprocess.Popen that jupyter_client uses, for a process that is not our
    child (the zygote's): its exit code is not ours to read, so an ended kernel reports 0."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                self.returncode = 0
            except PermissionError:  # the pid was taken by another user's process
                self.returncode = 0
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
            time.sleep(0.02)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkedProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, launching through the zygote where it can."""

    async def launch_kernel(self, cmd: list[str], **kwargs):
        zygote = Zygote.get()
        env = kwargs.get("env") or dict(os.environ)
        if zygote is None or not zygote.can_fork(cmd, env):
            return await super().launch_kernel(cmd, **kwargs)
        devnull = os.open(os.devnull, os.O_RDWR)
        streams = [devnull]  # the kernel reads nothing from its standard input
        for name, inherited in (("stdout", 1), ("stderr", 2)):
            stream = kwargs.get(name)
            streams.append(devnull if stream == subprocess.DEVNULL else
                           inherited if stream is None else stream)
        cwd = str(kwargs.get("cwd") or os.getcwd())
        try:
            self.process = zygote.fork(cmd, env, cwd, streams)
        finally:
            os.close(devnull)
        self.pid = self.pgid = self.process.pid
        self.cwd = cwd
        return self.connection_info


def register() -> None:
    """Make the provisioner known to jupyter_client under PROVISIONER (no package metadata
    needed: the factory's cache of entry points gets one more)."""
    factory = KernelProvisionerFactory.instance()
    factory.provisioners[PROVISIONER] = EntryPoint(
        name=PROVISIONER, value=f"{__name__}:ForkedProvisioner",
        group=KernelProvisionerFactory.GROUP_NAME)


class ForkingKernelSpecManager(KernelSpecManager):
    """Kernel specs as usual, each asking for the forking provisioner."""

    def get_kernel_spec(self, kernel_name):
        return with_forking(super().get_kernel_spec(kernel_name))


class ForkingKernelManager(AsyncKernelManager):
    """nbclient's kernel manager, with the forking kernel specs."""

    @default("kernel_spec_manager")
    def _forking_specs(self):
        return ForkingKernelSpecManager(data_dir=self.data_dir)


def with_forking(spec):
    """A kernel spec that asks for the forking provisioner."""
    register()
    spec.metadata = {**(spec.metadata or {}),
                     "kernel_provisioner": {"provisioner_name": PROVISIONER}}
    return spec
