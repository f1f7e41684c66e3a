"""The offline model over real HTTP, on 127.0.0.1 only, with the standard library.

    python -m lesson_lib.offline serve --port 8765
    curl http://127.0.0.1:8765/v1/models

Any OpenAI-compatible client can then use `base_url="http://127.0.0.1:8765/v1"`,
`model=MODEL_ID` and any API key. Every request is answered by `api.handle()`, the
same function the in-process transport calls, so both give byte-identical bodies.
HTTP/1.1 keep-alive; streams are sent with chunked transfer encoding. One log line
per request (method, path, status, milliseconds) goes to stderr.

`--workers 2` forks a second process on the same listening socket (POSIX only):
the model is CPU-bound Python, so one process uses one core; see
benchmarks/offline_model.py for the figures.

For tests and notebooks, `serve_in_thread()` runs a server in a background thread:

    with serve_in_thread() as server:          # or: url, stop = serve_in_thread()
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="offline")
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TextIO

from lesson_lib.offline import DEFAULT_CONTEXT_WINDOW
from lesson_lib.offline.api import handle
from lesson_lib.tokens import _encoding

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8765


class OfflineHandler(BaseHTTPRequestHandler):
    """One connection: reads requests, answers each with `api.handle()`."""

    protocol_version = "HTTP/1.1"            # keep-alive, and chunked streams
    server_version = "lesson-lib-offline/1"
    disable_nagle_algorithm = True           # small answers leave at once (no 40 ms stalls)
    server: OfflineServer

    def do_POST(self) -> None:
        started = time.perf_counter()
        status, headers, payload = handle(self.command, self.path, self.headers, self._body(),
                                          context_window=self.server.context_window)
        self.send_response_only(status)
        for key, value in headers.items():
            self.send_header(key, value)
        if isinstance(payload, bytes):
            self.send_header("content-length", str(len(payload)))
            self.end_headers_and(payload)
        else:
            self.send_header("transfer-encoding", "chunked")
            self.end_headers_and(b"")
            for event in payload:  # one chunk per server-sent event, sent as it comes
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.write(b"0\r\n\r\n")
        self.server.log(f"{self.command} {self.path} {status} "
                        f"{(time.perf_counter() - started) * 1000:.1f} ms")

    do_GET = do_PUT = do_PATCH = do_DELETE = do_POST

    def end_headers_and(self, payload: bytes) -> None:
        """Headers and body in one write: one packet for a small answer."""
        self._headers_buffer.append(b"\r\n" + payload)
        self.wfile.write(b"".join(self._headers_buffer))
        self._headers_buffer = []

    def _body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def log_message(self, format: str, *args) -> None:  # noqa: A002  (the base class's name)
        self.server.log(format % args)  # only http.server's own errors (bad request lines)

    def setup(self) -> None:
        super().setup()
        self.server.connections[self.connection] = threading.current_thread()

    def finish(self) -> None:
        self.server.connections.pop(self.connection, None)
        super().finish()


class OfflineServer(ThreadingHTTPServer):
    """A threaded HTTP server bound to 127.0.0.1 that answers as the offline model."""

    daemon_threads = True
    request_queue_size = 128  # many clients may connect at once

    def __init__(self, port: int = DEFAULT_PORT,        # 0 picks a free port
                 context_window: int | None = None,    # tokens; None → the default
                 log: TextIO | None = sys.stderr,      # where request lines go; None: silent
                 host: str = LOOPBACK):                # 127.0.0.1 only; anything else refused
        if host not in (LOOPBACK, "localhost"):
            raise ValueError(f"the offline server listens on {LOOPBACK} only, not {host!r}: "
                             "it is a teaching tool, not a service to expose")
        self.context_window = context_window or DEFAULT_CONTEXT_WINDOW
        self.log_file = log
        self.connections: dict[socket.socket, threading.Thread] = {}  # open ones: their thread
        self._log_lock = threading.Lock()
        super().__init__((LOOPBACK, port), OfflineHandler)
        _encoding()  # load the tokenizer now, not during the first request

    @property
    def url(self) -> str:
        """http://127.0.0.1:PORT (clients add /v1)."""
        return f"http://{LOOPBACK}:{self.server_address[1]}"

    def log(self, line: str) -> None:
        """One whole line per write (threads must not interleave halves of lines)."""
        if self.log_file is not None:
            with self._log_lock:
                self.log_file.write(line + "\n")
                self.log_file.flush()

    parent_pid: int | None = None  # set in a forked worker

    def get_request(self):
        connection, address = self.socket.accept()
        connection.setblocking(True)  # the listening socket may be non-blocking (workers)
        return connection, address

    def service_actions(self) -> None:
        """Called between requests: a forked worker whose parent has gone stops too."""
        if self.parent_pid is not None and os.getppid() != self.parent_pid:
            raise KeyboardInterrupt

    def handle_error(self, request, client_address) -> None:
        """A client that hangs up mid-answer (or a stop) is normal: no traceback for it."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """End the kept-alive connections and wait (briefly) for their threads to finish
        the answer and log line they may be writing."""
        open_now = list(self.connections.items())
        for conn, _ in open_now:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for _, thread in open_now:
            thread.join(timeout=2)


class RunningServer:
    """A server running in a background thread: `.url`, `.stop()`; a context manager,
    and unpackable as `url, stop = serve_in_thread()`."""

    def __init__(self, server: OfflineServer):
        self.server = server
        self.url = server.url
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"offline-server-{server.server_address[1]}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, close every connection and the listening socket (idempotent)."""
        if self._thread.is_alive():
            self.server.shutdown()
            self._thread.join()
            self.server.close_connections()
            self.server.server_close()

    def __iter__(self):
        return iter((self.url, self.stop))

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_in_thread(port: int = 0,                     # 0 picks a free port
                    context_window: int | None = None,  # tokens; None → the default
                    log: TextIO | None = None) -> RunningServer:  # request lines; None: quiet
    """Serve the offline model on 127.0.0.1 in a background thread."""
    return RunningServer(OfflineServer(port, context_window, log))


def serve(port: int = DEFAULT_PORT,                 # 0 picks a free port
          context_window: int | None = None,       # tokens; None → the default
          host: str = LOOPBACK,                    # 127.0.0.1 only
          log: TextIO = sys.stderr,                # the banner, request lines, "stopped"
          workers: int = 1) -> int:                # processes sharing the port (POSIX only)
    """Serve in the foreground until Ctrl-C (or SIGTERM); returns 0 after a clean stop.
    With `workers` > 1, forked copies accept on the same socket and use more cores."""
    server = OfflineServer(port, context_window, log, host)
    _stop_on_signals()
    children = [pid for pid in (_fork_worker(server) for _ in range(workers - 1)) if pid]
    print(f"offline teaching model on {server.url}/v1 (context window "
          f"{server.context_window} tokens, {workers} worker{'s' * (workers > 1)}); "
          "Ctrl-C stops", file=log, flush=True)
    _serve_until_interrupted(server)
    for pid in children:
        _end_child(pid)
    print("stopped", file=log, flush=True)
    return 0


def _stop_on_signals() -> None:
    """Ctrl-C and SIGTERM both raise KeyboardInterrupt (even if SIGINT was ignored,
    as it is for a `cmd &` job of a non-interactive shell)."""
    import signal  # noqa: PLC0415

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.default_int_handler)


def _serve_until_interrupted(server: OfflineServer) -> None:
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.close_connections()
        server.server_close()


def _fork_worker(server: OfflineServer) -> int:
    """A forked copy serving the same listening socket; returns its pid (in the parent)."""
    if not hasattr(os, "fork"):
        raise ValueError("workers > 1 needs os.fork (Linux or macOS): use one worker")
    server.socket.setblocking(False)  # the copies race for each connection; losers move on
    pid = os.fork()
    if pid == 0:  # the child: serve until told to stop or orphaned, never return
        server.parent_pid = os.getppid()
        _serve_until_interrupted(server)
        os._exit(0)
    return pid


def _end_child(pid: int) -> None:
    import signal  # noqa: PLC0415

    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
