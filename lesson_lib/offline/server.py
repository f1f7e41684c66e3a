"""The offline model over real HTTP: asyncio for the connections, h11 for HTTP/1.1.

    python -m lesson_lib.offline serve          # prints its URL: http://127.0.0.1:PORT/v1
    curl -H "Authorization: Bearer anything" http://127.0.0.1:PORT/v1/models

Without `--port` it takes a port no other program holds, so that learners sharing one
machine (a JupyterHub, where everyone's 127.0.0.1 is the same) never collide, and its
first lines say where it is: the URL, and the line to paste into a shell,
`export OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`. `--port N` chooses one.
Any OpenAI-compatible client can then use `base_url="http://127.0.0.1:PORT/v1"`,
`model=MODEL_ID` and any API key. Every request is answered by `api.handle()`, the
same function the in-process transport calls, so both give byte-identical bodies.
HTTP/1.1 keep-alive; streams are sent with chunked transfer encoding. One log line
per request (method, path, status, milliseconds) goes to stderr.

By default it listens on 127.0.0.1 only. A classroom on one network is an explicit
choice that needs a key: `serve --host 0.0.0.0 --api-key KEY` (or the key in
LESSON_SERVE_API_KEY); then every request must carry `Authorization: Bearer KEY`, and
any other gets the real API's 401. The start-up line gives the address students use,
never the key.

Requests are read by h11, whose framing follows RFC 9112: a body is sized by
Content-Length or chunked transfer coding, and anything ambiguous is refused (both
together, conflicting lengths; a length repeated with the same value counts once, as RFC
9110 allows). A body Python's json reads but the real API would not (nested over
MAX_DEPTH levels, a lone UTF-16 surrogate) gets the API's own parse error. On top of it,
the limits a server shared by a room needs: a request head over `max_head` bytes gets a
431, a body over `max_body` (50 MiB) a 413 (from its Content-Length, before it is read; a chunked
one as soon as it passes the limit), a head or body that stops arriving a 408, and a
kept-alive connection idle for `idle_timeout` seconds is closed. A request that cannot
be read is answered (4xx, never 5xx) and its connection closed after the client's unread
bytes are drained, so the client sees the answer rather than a reset.

One asyncio event loop answers every connection of a process. The model is CPU-bound
Python, so one loop is both the fastest and the fairest way to share a core: no thread
waits on the GIL behind another. What could hold the loop for long is moved or cut short:
a body too big is refused unread; a big body (over INLINE_BODY, up to MAX_BODY: tens of
megabytes, as the real API takes) is answered by one thread of its own while the loop
serves the others (its counting runs in the tokenizer, outside the GIL); and a long answer
(a stream of n=128 choices) is made and written half a millisecond at a time, the loop
serving other connections in between, so one client's big request does not stall the
others (benchmarks/offline_model.py, part c).
`--workers 2` forks a second process on the same listening socket (POSIX only) to use
a second core.

For tests and notebooks, `serve_in_thread()` runs a server in a background thread:

    with serve_in_thread() as server:          # or: url, stop = serve_in_thread()
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="offline")
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import errno
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any, TextIO

import h11

from lesson_lib.offline import BAD_KEY_PREFIX, MODEL_ID, context_window_or_default
from lesson_lib.offline.api import check_key, error_reply, handle
from lesson_lib.offline.state import MemoryState, SqliteState
from lesson_lib.protocol import ProtocolError
from lesson_lib.text import plural
from lesson_lib.tokens import encoding_for

LOOPBACK = "127.0.0.1"
ANY_PORT = 0  # the default port: a free one the system picks, so that no two servers collide
KEY_ENV = "LESSON_SERVE_API_KEY"  # where `serve` finds the key if --api-key is not given
MAX_HEAD = 64 * 1024       # bytes of request line + headers before a 431
# A body over MAX_BODY gets a 413. The real API takes bodies of tens of megabytes (its
# image guide documented "up to 50 MB total payload size per request", 512 MB since 2026)
# and answers one whose text is too long for the window with the API's 400
# context_length_exceeded: so does this server, up to 50 MiB, which still bounds the
# memory one request may take on a classroom's machine.
MAX_BODY = 50 * 1024 * 1024
# A body over INLINE_BODY is answered off the event loop, in the worker's one thread for
# big bodies: parsing, checking and counting 30 MB of text takes about 1.5 s of CPU, and
# every other connection would wait for it. The tokenizer lets go of the GIL while it
# counts, so the loop goes on answering the others meanwhile (benchmarks/offline_model.py,
# part c). A smaller body is answered in the loop, at once (under a millisecond or two).
INLINE_BODY = 256 * 1024
MAX_DEPTH = 100            # JSON nesting a body may have; deeper gets the API's parse error
HEAD_TIMEOUT_S = 10.0      # a request head must arrive whole within this of its first byte
BODY_TIMEOUT_S = 30.0      # ... and its body may pause at most this long between bytes
IDLE_TIMEOUT_S = 30.0      # a kept-alive connection with no request for this long is closed
WRITE_TIMEOUT_S = 30.0     # a client that reads nothing of its answer for this long is dropped
LINGER_S = 5.0             # on closing: how long bytes the client still sends are drained
SLICE_S = 0.0005           # a long answer is made this long at a time, then others' turn
BATCH = 64 * 1024          # stream events go out in chunks of about this many bytes
READ_SIZE = 64 * 1024
QUOTED = 8 * 1024          # bytes of a request head kept to quote in an error about it
ORPHAN_CHECK_S = 0.5       # how often a forked worker checks that its parent is alive
SERVER_NAME = "lesson-lib-offline/1"
# A lone UTF-16 surrogate: JSON's \ud800 escape, or its raw (invalid) UTF-8 bytes.
SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}|\xed[\xa0-\xbf]")


class BadRequest(Exception):
    """A request this server cannot read: answered with `status`, then the connection ends."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


class OfflineServer:
    """An HTTP/1.1 server that answers as the offline model: on 127.0.0.1 with any key, or
    on another address only with `api_key`, which every request must then carry.
    The socket is bound when it is made (so `.url` is known); `serve_forever()` serves."""

    def __init__(self, port: int = ANY_PORT,            # 0 picks a free port
                 context_window: int | None = None,    # tokens; None → the default
                 log: TextIO | None = sys.stderr,      # where request lines go; None: silent
                 host: str = LOOPBACK,                 # beyond loopback only with api_key
                 *, api_key: str | None = None,        # None: any key (loopback only)
                 max_head: int = MAX_HEAD,             # bytes; a longer head gets a 431
                 max_body: int = MAX_BODY,             # bytes; a longer body gets a 413
                 head_timeout: float = HEAD_TIMEOUT_S,   # seconds; then a 408
                 body_timeout: float = BODY_TIMEOUT_S,   # seconds of silence; then a 408
                 idle_timeout: float = IDLE_TIMEOUT_S,   # seconds; then the connection closes
                 write_timeout: float = WRITE_TIMEOUT_S,  # seconds; then it is dropped
                 state: Any = None):  # stored responses; None: this server's own, in memory
        self.host = bind_address(host, api_key)
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0 to 65535 (0: any free port), got {port}")
        for name, value in (("max_head", max_head), ("max_body", max_body)):
            if value < 1:
                raise ValueError(f"{name} is a number of bytes, at least 1, got {value}")
        for name, value in (("head_timeout", head_timeout), ("body_timeout", body_timeout),
                            ("idle_timeout", idle_timeout), ("write_timeout", write_timeout)):
            if not value > 0:
                raise ValueError(f"{name} is a number of seconds above 0, got {value}")
        self.context_window = context_window_or_default(context_window)
        self.api_key = api_key
        self.state = state if state is not None else MemoryState()  # for all its clients
        self.max_head, self.max_body = max_head, max_body
        self.head_timeout, self.body_timeout = head_timeout, body_timeout
        self.idle_timeout, self.write_timeout = idle_timeout, write_timeout
        self.log_file = log
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            self.socket = socket.create_server((self.host, port), family=family, backlog=128)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            taken = OSError(port_in_use(self.host, port))
            taken.errno = error.errno
            raise taken from None
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()
        self.parent_pid: int | None = None    # set in a forked worker
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._big: concurrent.futures.ThreadPoolExecutor | None = None  # for big bodies
        encoding_for(MODEL_ID)  # load the tokenizer now, not during the first request

    @property
    def url(self) -> str:
        """Where this machine reaches the server, e.g. http://127.0.0.1:PORT (clients add /v1)."""
        host = {"0.0.0.0": LOOPBACK, "::": "::1"}.get(self.host, self.host)
        return f"http://{_bracketed(host)}:{self.server_address[1]}"

    def student_urls(self) -> list[str]:
        """Where other machines reach it: this machine's network addresses when it listens
        on all of them (if they can be found without the network), else its host."""
        port = self.server_address[1]
        hosts = lan_addresses() if self.host in ("0.0.0.0", "::") else []
        return [f"http://{_bracketed(h)}:{port}" for h in hosts or [self.host]]

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
        self._big = concurrent.futures.ThreadPoolExecutor(  # made here: after any fork
            max_workers=1, thread_name_prefix="offline-big-body")
        server = await asyncio.start_server(self._connection, sock=self.socket,
                                            limit=READ_SIZE)
        watch = asyncio.ensure_future(self._watch_parent()) if self.parent_pid else None
        try:
            await self._stop.wait()
        finally:
            if watch:
                watch.cancel()
            server.close()
            self._big.shutdown(wait=False, cancel_futures=True)
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
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.max_head)
        try:
            while await self._one_request(conn, reader, writer):
                conn.start_next_cycle()
            await _close_gently(reader, writer)
        except (ConnectionError, asyncio.TimeoutError, asyncio.CancelledError):
            pass  # a client that hangs up or stops reading (or a stop) is normal
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _one_request(self, conn: h11.Connection, reader: asyncio.StreamReader,
                           writer: asyncio.StreamWriter) -> bool:
        """Answer one request; True if the connection stays open for another."""
        method = path = "?"
        seen = bytearray()  # the start of this request as it came, to quote in an error
        try:
            request = await self._request_head(conn, reader, seen)
            if request is None:  # closed, or idle too long, between requests
                return False
            started = time.perf_counter()
            method, path = request.method.decode("latin-1"), request.target.decode("latin-1")
            headers = {name.decode("latin-1"): value.decode("latin-1")
                       for name, value in request.headers}
            self._check_head(request, headers)
            body = await self._request_body(conn, reader, writer)
        except BadRequest as error:
            await self._refuse(writer, method, path, error, seen)
            return False
        except h11.RemoteProtocolError as error:
            await self._refuse(writer, method, path, bad_request(error, seen), seen)
            return False
        if len(body) > INLINE_BODY:  # answered by the big bodies' thread, the loop free
            status, answer_headers, payload = await asyncio.get_running_loop().run_in_executor(
                self._big, self._answer, method, path, headers, body)
        else:
            status, answer_headers, payload = self._answer(method, path, headers, body)
        problem = await self._deliver(conn, writer, method, status, answer_headers, payload)
        self.log(f"{method} {path} {status} " + (
            f"({problem})" if problem else f"{(time.perf_counter() - started) * 1000:.1f} ms"))
        return not problem and conn.our_state is h11.DONE and conn.their_state is h11.DONE

    async def _deliver(self, conn: h11.Connection, writer: asyncio.StreamWriter, method: str,
                       status: int, headers: dict[str, str],
                       payload: bytes | Iterable[bytes]) -> str | None:
        """Write the answer; None once it is sent, else what went wrong (for the log)."""
        try:
            await self._write_answer(conn, writer, method, status, headers, payload)
        except asyncio.TimeoutError:
            writer.transport.abort()  # what is still buffered for it is dropped too
            return f"the client read nothing for {self.write_timeout:g} s: dropped"
        except ConnectionError:
            writer.transport.abort()
            return "the client hung up before the end"
        except Exception:  # a bug while a stream is made: it ends without its last chunk
            traceback.print_exc(file=sys.stderr)
            return "the answer failed part way: a bug"
        return None

    async def _request_head(self, conn: h11.Connection, reader: asyncio.StreamReader,
                            seen: bytearray) -> h11.Request | None:
        """The next request's head (its first bytes also go to `seen`); None if the client
        closed, or sent nothing for `idle_timeout` seconds, between requests."""
        deadline = None  # set by the first byte of this request
        while (event := conn.next_event()) is h11.NEED_DATA:
            wait = self.idle_timeout if deadline is None else deadline - time.monotonic()
            data = await _read(reader, wait)
            if data is None:
                if deadline is None:
                    return None
                raise BadRequest(408, f"the request head did not arrive within "
                                      f"{self.head_timeout:g} s of its first byte: send the "
                                      "request line and headers whole")
            deadline = deadline or time.monotonic() + self.head_timeout
            seen += data[:QUOTED - len(seen)]
            conn.receive_data(data)
        return event if isinstance(event, h11.Request) else None  # else ConnectionClosed

    def _check_head(self, request: h11.Request, headers: dict[str, str]) -> None:
        """Refuse what h11 lets through but this server will not take."""
        size = len(request.method) + len(request.target) + 12 + sum(
            len(name) + len(value) + 4 for name, value in request.headers)
        if size > self.max_head:
            raise BadRequest(431, f"the request line and headers are over {self.max_head:,} "
                                  "bytes: send fewer or shorter headers")
        if "content-length" in headers and "transfer-encoding" in headers:
            raise BadRequest(400, "a request may not have both content-length and "
                                  "transfer-encoding (RFC 9112 section 6.3: that is how "
                                  "requests are smuggled): send one of them")
        length = int(headers.get("content-length", "0"))
        if length > self.max_body:
            raise BadRequest(413, too_large(self.max_body, f"is {length:,} bytes"))

    async def _request_body(self, conn: h11.Connection, reader: asyncio.StreamReader,
                            writer: asyncio.StreamWriter) -> bytes:
        """The body, as it arrives; a chunked one is cut off once it passes `max_body`."""
        if conn.they_are_waiting_for_100_continue:
            writer.write(conn.send(h11.InformationalResponse(status_code=100, headers=[],
                                                             reason=b"Continue")))
        parts, size = [], 0
        while not isinstance(event := conn.next_event(), h11.EndOfMessage):
            if event is h11.NEED_DATA:
                data = await _read(reader, self.body_timeout)
                if data is None:
                    raise BadRequest(408, f"the request body stopped arriving (nothing for "
                                          f"{self.body_timeout:g} s): send it whole")
                conn.receive_data(data)
            elif isinstance(event, h11.Data):
                size += len(event.data)
                if size > self.max_body:
                    raise BadRequest(413, too_large(self.max_body, "passed it"))
                parts.append(event.data)
        return b"".join(parts)

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes):
        """`api.handle()`'s answer, after this server's key (if it has one)."""
        if self.api_key is not None:
            try:
                check_key(headers, self.api_key)
            except ProtocolError as error:
                return error_reply(error)
        if unreadable_json(body):  # answered as the API answers a body it cannot parse
            body = b""
        return handle(method, path, headers, body, context_window=self.context_window,
                      state=self.state)

    async def _write_answer(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                            method: str, status: int, headers: dict[str, str],
                            payload: bytes | Iterable[bytes]) -> None:
        """Status line, headers and body; a stream (an iterator of events) goes out chunked."""
        fields = [("server", SERVER_NAME), *headers.items()]
        if isinstance(payload, bytes):
            fields.append(("content-length", str(len(payload))))
        head = conn.send(h11.Response(status_code=status, headers=fields,
                                      reason=HTTPStatus(status).phrase.encode()))
        if method == "HEAD":  # the head alone, as HTTP says
            writer.write(head + conn.send(h11.EndOfMessage()))
        elif isinstance(payload, bytes):  # one write: one packet when small
            writer.write(head + conn.send(h11.Data(data=payload))
                         + conn.send(h11.EndOfMessage()))
        else:
            writer.write(head)
            await self._write_stream(conn, writer, payload)
        await self._drain(writer)

    async def _write_stream(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                            events: Iterable[bytes]) -> None:
        """Events in chunks of about BATCH bytes; every SLICE_S seconds the loop serves
        other connections, so a long stream does not stall them."""
        batch: list[bytes] = []
        size, slice_end = 0, time.perf_counter() + SLICE_S
        for event in events:
            batch.append(event)
            size += len(event)
            if size >= BATCH or time.perf_counter() > slice_end:
                writer.write(conn.send(h11.Data(data=b"".join(batch))))
                batch, size = [], 0
                await self._drain(writer)
                if time.perf_counter() > slice_end:
                    await asyncio.sleep(0)
                    slice_end = time.perf_counter() + SLICE_S
        writer.write(conn.send(h11.Data(data=b"".join(batch))) if batch else b"")
        writer.write(conn.send(h11.EndOfMessage()))

    async def _drain(self, writer: asyncio.StreamWriter) -> None:
        """Wait while the client is behind (at most `write_timeout` seconds)."""
        if writer.transport.get_write_buffer_size() > BATCH:
            await asyncio.wait_for(writer.drain(), self.write_timeout)
        else:
            await writer.drain()  # returns at once; raises if the client has gone

    async def _refuse(self, writer: asyncio.StreamWriter, method: str, path: str,
                      error: BadRequest, seen: bytes) -> None:
        """A request that cannot be read: a plain-text error and a log line (then the
        connection closes). To a HEAD request (as far as it was read), the head alone."""
        text = f"{error.status} {HTTPStatus(error.status).phrase}: {error}\n".encode()
        head = (f"HTTP/1.1 {error.status} {HTTPStatus(error.status).phrase}\r\n"
                f"server: {SERVER_NAME}\r\ncontent-type: text/plain; charset=utf-8\r\n"
                f"content-length: {len(text)}\r\nconnection: close\r\n\r\n")
        self.log(f"{method} {path} {error.status} ({error})")
        head_only = method == "HEAD" or seen.startswith(b"HEAD ")
        writer.write(head.encode("latin-1") + (b"" if head_only else text))
        await self._drain(writer)


# ----------------------------------------------------------------- reading and refusing

async def _read(reader: asyncio.StreamReader, timeout: float) -> bytes | None:
    """What the client sends next (b"" once it has closed); None after `timeout` seconds.
    (A timer that cancels the read: cheaper than `asyncio.wait_for`'s task per read.)"""
    task = asyncio.current_task()
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    timer = asyncio.get_running_loop().call_later(max(timeout, 0), expire)
    try:
        return await reader.read(READ_SIZE)
    except asyncio.CancelledError:
        if expired:
            return None
        raise
    finally:
        timer.cancel()


async def _close_gently(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """End our side, then read and drop what the client still sends (the rest of a refused
    body, a pipelined request after `connection: close`) until it closes or LINGER_S pass:
    closing with unread bytes would reset the connection, and the client could lose the
    answer it has not read yet."""
    if reader.at_eof() or writer.transport.is_closing():
        return
    if writer.can_write_eof():
        writer.write_eof()
    deadline = time.monotonic() + LINGER_S
    while (left := deadline - time.monotonic()) > 0:
        if not await _read(reader, min(left, 0.5)):  # closed, or quiet for half a second
            return


def too_large(limit: int, what: str) -> str:
    return (f"the request body {what}, over this server's limit of {limit:,} bytes: send a "
            "shorter conversation (trim old messages)")


# h11's short reasons, as sentences that name the rule and the fix.
H11_REASONS = (
    ("illegal request line", "bad request line {}: expected 'METHOD /path HTTP/1.1'"),
    ("no request line", "no request line: a request starts 'METHOD /path HTTP/1.1'"),
    ("illegal header line", "bad header line {}: expected 'name: value'"),
    ("illegal header name", "bad header name {}: a name is letters, digits and -"),
    ("illegal header value", "bad header value {}: no control characters"),
    ("conflicting content-length", "conflicting content-length headers {}: send one"),
    ("bad content-length", "bad content-length {}: expected a whole number of bytes "
                           "(ASCII digits)"),
    ("transfer-encoding", "unsupported transfer-encoding {}: send the body with "
                          "content-length or 'transfer-encoding: chunked'"),
    ("illegal chunk header", "bad chunk size {}: expected a hexadecimal number of bytes"),
    ("missing mandatory host", "an HTTP/1.1 request needs a host header (RFC 9112 section "
                               "3.2): add 'host: ADDRESS:PORT'"),
    ("peer unexpectedly closed", "the connection closed in the middle of a request"),
)


def bad_request(error: h11.RemoteProtocolError, seen: bytes = b"") -> BadRequest:
    """A 400 (or h11's 431) in this server's words, quoting what was wrong (from h11's
    reason, or from `seen`, the start of the request). A 501 for a transfer coding h11
    does not know is a 400 here: every answer to a client's mistake is a 4xx."""
    reason = str(error)
    found = re.search(r": bytearray\((b['\"].*['\"])\)$", reason)
    shown = repr(_bytes_literal(found.group(1)).rstrip("\r\n")) if found else "?"
    for name in ("content-length", "transfer-encoding"):
        if name in reason.lower():
            values = re.findall(rb"(?im)^" + name.encode() + rb"[ \t]*:[ \t]*(.*?)[ \t]*\r?$",
                                seen)
            shown = ", ".join(repr(v.decode("utf-8", "replace")) for v in values) or "?"
    for start, sentence in H11_REASONS:
        if start in reason.lower():
            return BadRequest(431 if error.error_status_hint == 431 else 400,
                              sentence.format(shown[:80]))
    if error.error_status_hint == 431:
        return BadRequest(431, "the request line and headers are over the limit: send fewer "
                               "or shorter headers")
    return BadRequest(400, f"the request is not valid HTTP/1.1 ({reason[:120]})")


def _bytes_literal(text: str) -> str:
    """b'GARBAGE' (as h11 shows it) → 'GARBAGE'."""
    try:
        return ast.literal_eval(text).decode("latin-1")
    except (ValueError, SyntaxError, AttributeError):  # shown as it is
        return text


def unreadable_json(body: bytes) -> bool:
    """True for a body Python's json reads but the real API cannot: nested deeper than
    MAX_DEPTH (Python's own limit is a RecursionError) or holding a lone UTF-16 surrogate
    (JavaScript clients send them when they cut an emoji in two). Cheap for a body with
    neither: two byte counts and one search."""
    deep = body.count(b"[") + body.count(b"{") > MAX_DEPTH
    maybe_surrogate = (b"\\ud" in body or b"\\uD" in body or b"\xed" in body) and \
        SURROGATE.search(body)
    if not deep and not maybe_surrogate:
        return False
    try:
        data = json.loads(body)
    except RecursionError:
        return True
    except ValueError:  # not JSON at all: api.handle() answers that itself
        return False
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                return True
            items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return False


# ----------------------------------------------------------------- who may connect

def bind_address(host: str, api_key: str | None) -> str:
    """The address to listen on; anything beyond loopback needs a key."""
    if host == "localhost":
        host = LOOPBACK
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"--host is an IP address of this machine, e.g. {LOOPBACK} (this "
                         f"machine only) or 0.0.0.0 (every network it is on), not {host!r}"
                         ) from None
    if api_key is not None:
        check_server_key(api_key)
    elif not address.is_loopback:
        raise ValueError(
            f"without a key the offline server listens on {LOOPBACK} only, not {host!r}: "
            "to serve other machines (a classroom), choose a key and pass --api-key KEY "
            f"or set {KEY_ENV}=KEY; students then send it as their API key")
    return str(address)


def check_server_key(key: str) -> None:
    """A key students can send in a header: printable ASCII, no spaces, not a lesson's
    deliberately bad one."""
    if not key or not key.isascii() or not key.isprintable() or " " in key:
        raise ValueError("the API key must be printable ASCII without spaces, e.g. "
                         "class-2026-spring")
    if key.startswith(BAD_KEY_PREFIX):
        raise ValueError(f"the API key may not start with {BAD_KEY_PREFIX!r}: the lessons "
                         "use such keys to show the 401")


def port_in_use(host: str, port: int) -> str:
    """What to do when `port` is taken: on a shared machine it is often another learner's."""
    return (f"port {port} on {host} is already in use (by another program, or by another "
            "user of this machine: on a shared server everyone's 127.0.0.1 is the same): "
            "leave out --port and the server takes a free port and prints its URL, or "
            "choose another --port")


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback, read from its network interfaces
    (Linux); [] where they cannot be read without the network."""
    try:
        import fcntl  # noqa: PLC0415 -- POSIX only
    except ImportError:
        return []
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(probe.fileno(), 0x8915,  # SIOCGIFADDR
                                     struct.pack("256s", name.encode()[:15]))
            except OSError:  # no IPv4 address, or not Linux
                continue
            address = socket.inet_ntoa(packed[20:24])
            if not ipaddress.ip_address(address).is_loopback and address not in found:
                found.append(address)
    return found


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


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
                    log: TextIO | None = None,          # request lines; None: quiet
                    host: str = LOOPBACK,               # beyond loopback only with api_key
                    **options) -> RunningServer:        # api_key, limits: see OfflineServer
    """Serve the offline model in a background thread (on 127.0.0.1 by default)."""
    return RunningServer(OfflineServer(port, context_window, log, host, **options))


def serve(port: int = ANY_PORT,                     # 0 picks a free port
          context_window: int | None = None,       # tokens; None → the default
          host: str = LOOPBACK,                    # beyond loopback only with api_key
          log: TextIO = sys.stderr,                # the banner, request lines, "stopped"
          workers: int = 1,                        # processes sharing the port (POSIX only)
          api_key: str | None = None,              # None: any key, on loopback only
          state_path: str | None = None) -> int:   # a file keeps stored responses
    """Serve in the foreground until Ctrl-C (or SIGTERM); returns 0 after a clean stop.
    With `workers` > 1, forked copies accept on the same socket and use more cores.

    What the Responses API stores lives in memory with one worker; with several, in a
    temporary SQLite file they share (removed when the server stops); with `state_path`,
    in that file, so that it survives a restart."""
    if workers < 1:
        raise ValueError(f"workers is how many processes serve, at least 1, got {workers}")
    temporary = None
    if state_path is None and workers > 1:
        temporary = tempfile.mkdtemp(prefix="lesson-offline-")
        state: Any = SqliteState(os.path.join(temporary, "responses.db"), durable=False)
    elif state_path is not None:
        state = SqliteState(state_path)
    else:
        state = None
    try:
        server = OfflineServer(port, context_window, log, host, api_key=api_key, state=state)
        children = [pid for pid in (_fork_worker(server) for _ in range(workers - 1)) if pid]
        print(banner(server, workers), file=log, flush=True)
        try:
            server.serve_forever(on_signals=True)
        except KeyboardInterrupt:  # where signals cannot be handled by the loop (Windows)
            pass
        for pid in children:
            _end_child(pid)
    finally:
        if temporary is not None:
            state.close()
            shutil.rmtree(temporary, ignore_errors=True)
    print("stopped", file=log, flush=True)
    return 0


def banner(server: OfflineServer, workers: int) -> str:
    """The start-up lines: where clients connect, and whether they need the key (never
    the key itself); then the line a shell or a notebook's launch can take the URL from,
    `export OPENAI_BASE_URL=...`."""
    urls = [url + "/v1" for url in server.student_urls()]
    where = urls[0] + (f" (also {', '.join(urls[1:])})" if urls[1:] else "")
    wildcard = server.host in ("0.0.0.0", "::") and not lan_addresses()
    if wildcard:
        where += " (use this machine's network address: see `ip addr` or `ipconfig`)"
    settings = (f"context window {server.context_window} tokens, "
                f"{plural(workers, 'worker')}")
    base_url = server.url + "/v1" if wildcard else urls[0]
    if server.api_key is None:
        return (f"offline teaching model on {where} ({settings}); Ctrl-C stops\n"
                f"export OPENAI_BASE_URL={base_url}  # for other programs; any API key")
    return (f"offline teaching model on {where} ({settings}); every request needs the API "
            "key you chose (Authorization: Bearer KEY; not shown here); Ctrl-C stops\n"
            f"export OPENAI_BASE_URL={base_url}  # and OPENAI_API_KEY=the key you chose")


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
