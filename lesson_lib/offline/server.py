"""The offline model over real HTTP, on 127.0.0.1 only, with the standard library.

    python -m lesson_lib.offline serve --port 8765
    curl -H "Authorization: Bearer anything" http://127.0.0.1:8765/v1/models

Any OpenAI-compatible client can then use `base_url="http://127.0.0.1:8765/v1"`,
`model=MODEL_ID` and any API key. Every request is answered by `api.handle()`, the
same function the in-process transport calls, so both give byte-identical bodies.
HTTP/1.1 keep-alive; streams are sent with chunked transfer encoding. One log line
per request (method, path, status, milliseconds) goes to stderr.

One asyncio event loop answers every connection of a process, one request at a time
in the order they arrive. The model is CPU-bound Python, so this is both the fastest
and the fairest way to share a core: no thread waits on the GIL behind another, and a
client's wait is the queue ahead of it (see benchmarks/offline_model.py).
`--workers 2` forks a second process on the same listening socket (POSIX only) to use
a second core.

For tests and notebooks, `serve_in_thread()` runs a server in a background thread:

    with serve_in_thread() as server:          # or: url, stop = serve_in_thread()
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="offline")
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import threading
import time
from http import HTTPStatus
from typing import TextIO

from lesson_lib.offline import MODEL_ID, context_window_or_default
from lesson_lib.offline.api import handle
from lesson_lib.text import plural
from lesson_lib.tokens import encoding_for

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_HEAD = 64 * 1024       # bytes of request line + headers before a 431
ORPHAN_CHECK_S = 0.5       # how often a forked worker checks that its parent is alive


class BadRequest(Exception):
    """A request this server cannot read: answered with `status`, then the connection ends."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


class OfflineServer:
    """An HTTP/1.1 server bound to 127.0.0.1 that answers as the offline model.
    The socket is bound when it is made (so `.url` is known); `serve_forever()` serves."""

    def __init__(self, port: int = DEFAULT_PORT,        # 0 picks a free port
                 context_window: int | None = None,    # tokens; None → the default
                 log: TextIO | None = sys.stderr,      # where request lines go; None: silent
                 host: str = LOOPBACK):                # 127.0.0.1 only; anything else refused
        if host not in (LOOPBACK, "localhost"):
            raise ValueError(f"the offline server listens on {LOOPBACK} only, not {host!r}: "
                             "it is a teaching tool, not a service to expose")
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0 to 65535 (0: any free port), got {port}")
        self.context_window = context_window_or_default(context_window)
        self.log_file = log
        self.socket = socket.create_server((LOOPBACK, port), backlog=128)
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()
        self.parent_pid: int | None = None    # set in a forked worker
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        encoding_for(MODEL_ID)  # load the tokenizer now, not during the first request

    @property
    def url(self) -> str:
        """http://127.0.0.1:PORT (clients add /v1)."""
        return f"http://{LOOPBACK}:{self.server_address[1]}"

    def log(self, line: str) -> None:
        """One whole line per write."""
        if self.log_file is not None:
            self.log_file.write(line + "\n")
            self.log_file.flush()

    # ------------------------------------------------------------- running and stopping

    def serve_forever(self, *, on_signals: bool = False) -> None:
        """Serve until `shutdown()` (or, with `on_signals`, SIGINT/SIGTERM); then close
        every connection and the listening socket."""
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve(on_signals))
        finally:
            loop.close()
            self.socket.close()

    def shutdown(self) -> None:
        """Ask a running `serve_forever()` to stop (from any thread)."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:  # the loop closed meanwhile: it has stopped already
                pass

    async def _serve(self, on_signals: bool) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        handled = []
        for sig in (signal.SIGINT, signal.SIGTERM) if on_signals else ():
            try:
                self._loop.add_signal_handler(sig, self._stop.set)
                handled.append(sig)
            except (NotImplementedError, RuntimeError):  # Windows: Ctrl-C raises instead
                pass
        server = await asyncio.start_server(self._connection, sock=self.socket,
                                            limit=MAX_HEAD)
        watch = asyncio.ensure_future(self._watch_parent()) if self.parent_pid else None
        try:
            await self._stop.wait()
        finally:
            if watch:
                watch.cancel()
            server.close()
            for writer in list(self._writers):  # kept-alive connections end now
                writer.transport.abort()
            await asyncio.sleep(0)  # let their handlers see it and finish
            # A second signal (Ctrl-C twice; the parent's SIGTERM to a worker already
            # stopping) must not reach the loop while it closes: a worker ignores it.
            for sig in handled:
                self._loop.remove_signal_handler(sig)
                if self.parent_pid:
                    signal.signal(sig, signal.SIG_IGN)

    async def _watch_parent(self) -> None:
        """A forked worker whose parent has gone stops too."""
        while os.getppid() == self.parent_pid:
            await asyncio.sleep(ORPHAN_CHECK_S)
        self._stop.set()

    # ------------------------------------------------------------- one connection

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        """Read requests off one connection and answer each in turn, until it closes."""
        self._writers.add(writer)
        sock = writer.get_extra_info("socket")
        if sock is not None:  # small answers leave at once (no 40 ms Nagle stalls)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # a client that hangs up mid-request (or a stop) is normal
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _one_request(self, reader: asyncio.StreamReader,
                           writer: asyncio.StreamWriter) -> bool:
        """Answer one request; True if the connection stays open for another."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if error.partial.strip():
                await self._refuse(writer, "?", "?", BadRequest(
                    400, "the connection closed in the middle of a request head"))
            return False
        except asyncio.LimitOverrunError:
            await self._refuse(writer, "?", "?", BadRequest(
                431, f"the request line and headers are over {MAX_HEAD:,} bytes: send fewer "
                     "or shorter headers"))
            return False
        started = time.perf_counter()
        try:
            method, path, version, headers = parse_head(head)
        except BadRequest as error:
            await self._refuse(writer, "?", "?", error)
            return False
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            body = await read_body(reader, headers)
        except BadRequest as error:
            await self._refuse(writer, method, path, error)
            return False
        status, answer_headers, payload = handle(method, path, headers, body,
                                                 context_window=self.context_window)
        try:
            await write_answer(writer, status, answer_headers, payload)
        except ConnectionError:
            self.log(f"{method} {path} {status} (the client hung up before the end)")
            return False
        self.log(f"{method} {path} {status} {(time.perf_counter() - started) * 1000:.1f} ms")
        return keep_alive(version, headers)

    async def _refuse(self, writer: asyncio.StreamWriter, method: str, path: str,
                      error: BadRequest) -> None:
        """A request that cannot be read: a plain-text error, a log line, then close."""
        text = f"{error.status} {HTTPStatus(error.status).phrase}: {error}\n".encode()
        await write_answer(writer, error.status, {"content-type": "text/plain",
                                                  "connection": "close"}, text)
        self.log(f"{method} {path} {error.status} ({error})")


# ----------------------------------------------------------------- HTTP/1.1, by hand


def parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    """(method, path, version, headers with lower-case names) of a request head."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, f"bad request line {lines[0][:80]!r}: expected "
                         "'METHOD /path HTTP/1.1'")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise BadRequest(400, f"bad header line {line[:80]!r}: expected 'name: value'")
            headers[name.lower()] = value.strip()
    return parts[0], parts[1], parts[2], headers


async def read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    """The request body: by content-length, or the chunks of a chunked one."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size_line = (await reader.readuntil(b"\r\n")).split(b";")[0].strip()
            try:
                size = int(size_line or b"0", 16)
            except ValueError:
                raise BadRequest(400, f"bad chunk size {size_line[:20]!r}: expected a hexadecimal "
                                 "number of bytes") from None
            if size == 0:
                break
            parts.append(await reader.readexactly(size))
            await reader.readuntil(b"\r\n")
        while (await reader.readuntil(b"\r\n")) != b"\r\n":
            pass  # trailers
        return b"".join(parts)
    length = headers.get("content-length", "0")
    if not length.isdigit():
        raise BadRequest(400, f"bad content-length {length[:20]!r}: expected a whole number "
                         "of bytes")
    return await reader.readexactly(int(length))


async def write_answer(writer: asyncio.StreamWriter, status: int, headers: dict[str, str],
                       payload) -> None:
    """Status line, headers and body; a stream (an iterator of events) goes out chunked,
    each event as it comes."""
    head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n",
            "server: lesson-lib-offline/1\r\n"]
    head += [f"{key}: {value}\r\n" for key, value in headers.items()]
    if isinstance(payload, bytes):
        head.append(f"content-length: {len(payload)}\r\n\r\n")
        writer.write("".join(head).encode("latin-1") + payload)  # one packet when small
    else:
        head.append("transfer-encoding: chunked\r\n\r\n")
        writer.write("".join(head).encode("latin-1"))
        for event in payload:
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
    await writer.drain()


def keep_alive(version: str, headers: dict[str, str]) -> bool:
    """HTTP/1.1 keeps a connection unless told to close; HTTP/1.0 only if asked."""
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return connection == "keep-alive"
    return connection != "close"


# ----------------------------------------------------------------- ways to run it

class RunningServer:
    """A server running in a background thread: `.url`, `.stop()`; a context manager,
    and unpackable as `url, stop = serve_in_thread()`."""

    def __init__(self, server: OfflineServer):
        self.server = server
        self.url = server.url
        self._thread = threading.Thread(target=server.serve_forever,
                                        name=f"offline-server-{server.server_address[1]}",
                                        daemon=True)
        self._thread.start()
        while server._stop is None and self._thread.is_alive():  # until it listens
            time.sleep(0.001)

    def stop(self) -> None:
        """Stop serving, close every connection and the listening socket (idempotent)."""
        if self._thread.is_alive():
            self.server.shutdown()
            self._thread.join()

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
    if workers < 1:
        raise ValueError(f"workers is how many processes serve, at least 1, got {workers}")
    server = OfflineServer(port, context_window, log, host)
    children = [pid for pid in (_fork_worker(server) for _ in range(workers - 1)) if pid]
    print(f"offline teaching model on {server.url}/v1 (context window "
          f"{server.context_window} tokens, {plural(workers, 'worker')}); "
          "Ctrl-C stops", file=log, flush=True)
    try:
        server.serve_forever(on_signals=True)
    except KeyboardInterrupt:  # where signals cannot be handled by the loop (Windows)
        pass
    for pid in children:
        _end_child(pid)
    print("stopped", file=log, flush=True)
    return 0


def _fork_worker(server: OfflineServer) -> int:
    """A forked copy serving the same listening socket; returns its pid (in the parent)."""
    if not hasattr(os, "fork"):
        raise ValueError("workers > 1 needs os.fork (Linux or macOS): use one worker")
    pid = os.fork()
    if pid == 0:  # the child: serve until told to stop or orphaned, never return
        server.parent_pid = os.getppid()
        try:
            server.serve_forever(on_signals=True)
        finally:
            os._exit(0)
    return pid


def _end_child(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
