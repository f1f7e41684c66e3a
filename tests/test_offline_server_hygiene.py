"""The served offline model against what a room of clients may send: malformed framing,
bodies too big or too deep, half-sent requests, idle connections, a classroom key, and a
property-based fuzz test over real sockets. Every answer is a 4xx (never a 5xx), and
every connection is answered or closed cleanly."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.offline import MODEL_ID, api, brain
from lesson_lib.offline.server import OfflineServer, serve_in_thread

ASK = [{"role": "user", "content": "What's the weather in Chengdu?"}]
BODY = json.dumps({"model": MODEL_ID, "messages": ASK}).encode()
ANSWER = {"message": {"role": "assistant", "content": "Chengdu is cloudy, 16°C."},
          "finish_reason": "stop"}
PARSE_ERROR = b"We could not parse the JSON body of your request. (HINT: This likely means"
LIMITS = {"max_body": 64 * 1024, "head_timeout": 1.0, "body_timeout": 1.0, "idle_timeout": 1.0,
          "write_timeout": 2.0}
WAIT_S = 8  # a client gives up on an answer after this (far past every server timeout)


@pytest.fixture(scope="module")
def server():
    with serve_in_thread(**LIMITS) as running:
        yield running


@pytest.fixture
def fake_brain(monkeypatch):
    monkeypatch.setattr(brain, "reply", lambda body: json.loads(json.dumps(ANSWER)))


def post(body: bytes, extra: bytes = b"", length: bytes | None = None) -> bytes:
    """A POST /v1/chat/completions request with `body` and its content-length."""
    length = str(len(body)).encode() if length is None else length
    return (b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            b"authorization: Bearer offline\r\ncontent-type: application/json\r\n" + extra +
            b"content-length: " + length + b"\r\n\r\n" + body)


def exchange(url: str, data: bytes, *, half_close: bool = True,
             source: str | None = None) -> bytes:
    """Send `data` on a new connection (then, by default, end our side); everything the
    server sends until it closes. A reset or a hang fails the test."""
    host, port = urlsplit(url).hostname, urlsplit(url).port
    conn = socket.create_connection((host, port), timeout=WAIT_S,
                                    source_address=(source, 0) if source else None)
    with conn:
        conn.sendall(data)
        if half_close:
            conn.shutdown(socket.SHUT_WR)
        received = b""
        try:
            while chunk := conn.recv(65536):
                received += chunk
        except ConnectionResetError:
            pytest.fail(f"the server reset the connection after {received[:200]!r}")
        except TimeoutError:
            pytest.fail(f"no answer or close within {WAIT_S} s; got {received[:200]!r}")
    return received


def responses(received: bytes, to_head: bool = False) -> list[tuple[int, bytes]]:
    """(status, body) of each response in `received` (to HEAD requests, if `to_head`: no
    bodies); fails on anything not well formed."""
    found = []
    while received:
        head, sep, rest = received.partition(b"\r\n\r\n")
        match = re.fullmatch(rb"HTTP/1\.1 ([1-5]\d\d) [^\r\n]*((?:\r\n[^\r\n:]+: [^\r\n]*)*)",
                             head)
        assert sep and match, f"not an HTTP/1.1 response: {received[:300]!r}"
        status, fields = int(match.group(1)), match.group(2).lower()
        if status < 200:
            received = rest
            continue
        length = re.search(rb"\r\ncontent-length: (\d+)", fields)
        if b"\r\nconnection: close" in fields:  # the last; a refusal of a non-HEAD has a body
            body, received = rest, b""
        elif to_head and (not rest or rest.startswith(b"HTTP/1.1 ")):
            body, received = b"", rest  # (a pipelined request after a HEAD may be another
            # method, "*HEAD …": its answer has a body, read below)
        elif length:
            body, received = rest[:int(length.group(1))], rest[int(length.group(1)):]
        elif b"transfer-encoding: chunked" in fields:
            body, received = dechunk(rest)
        else:
            body, received = rest, b""
        found.append((status, body))
    return found


def dechunk(data: bytes) -> tuple[bytes, bytes]:
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return body, data.partition(b"\r\n")[2]
        body, data = body + data[:size], data[size + 2:]


def only(received: bytes) -> tuple[int, bytes]:
    answers = responses(received)
    assert len(answers) == 1, answers
    return answers[0]


# ----------------------------------------------------------------- bodies the API cannot read

def test_json_nested_10000_deep_gets_the_apis_parse_error(server):
    status, body = only(exchange(server.url, post(b"[" * 10_000 + b"]" * 10_000)))
    assert status == 400 and PARSE_ERROR in body, body
    assert json.loads(body)["error"]["type"] == "invalid_request_error"


def test_deep_nesting_inside_a_request_gets_the_parse_error_too(server):
    deep = b'{"model": "%s", "messages": [{"role": "user", "content": %s}]}' % (
        MODEL_ID.encode(), b"[" * 500 + b"]" * 500)
    status, body = only(exchange(server.url, post(deep)))
    assert status == 400 and PARSE_ERROR in body, body


@pytest.mark.parametrize("text", [rb'"\ud800"', rb'"cut emoji \ud83d"', rb'"\udc00 low"',
                                  b'"raw \xed\xa0\x80 bytes"'])
def test_a_lone_surrogate_gets_the_apis_parse_error(server, text):
    data = b'{"model": "%s", "messages": [{"role": "user", "content": %s}]}' % (
        MODEL_ID.encode(), text)
    status, body = only(exchange(server.url, post(data)))
    assert status == 400 and PARSE_ERROR in body, body


def test_a_whole_emoji_as_a_surrogate_pair_is_read(server, fake_brain):
    data = b'{"model": "%s", "messages": [{"role": "user", "content": "hi \\ud83d\\ude00"}]}' % (
        MODEL_ID.encode())
    assert only(exchange(server.url, post(data)))[0] == 200


def test_a_message_of_a_million_characters_gets_the_context_error_not_a_500():
    with serve_in_thread() as big:  # the default limit
        data = json.dumps({"model": MODEL_ID, "messages": [
            {"role": "user", "content": "Chengdu " * 150_000}]}).encode()
        status, body = only(exchange(big.url, post(data)))
    assert status == 400 and json.loads(body)["error"]["code"] == "context_length_exceeded"


def test_a_body_of_tens_of_megabytes_gets_the_api_error_while_others_are_answered():
    """The real API takes a 20 MB body and answers context_length_exceeded (no 413): so
    does the server, and counting those 20 MB (a second of CPU) happens off its event loop:
    a small request on another connection is answered all the while, never waiting long."""
    import threading  # noqa: PLC0415

    text = "The quick brown fox jumps over the lazy dog. " * (20 * 10**6 // 45)
    data = json.dumps({"model": MODEL_ID, "messages": [{"role": "user", "content": text}]})
    answered, done = [], threading.Event()
    with serve_in_thread() as running:
        host, port = urlsplit(running.url).hostname, urlsplit(running.url).port

        def small():
            with socket.create_connection((host, port), timeout=WAIT_S) as conn:
                while not done.is_set():
                    conn.sendall(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n"
                                 b"authorization: Bearer offline\r\n\r\n")
                    got = b""
                    while not got.endswith(b"}]}"):
                        got += conn.recv(65536)
                    answered.append(time.perf_counter())
                    time.sleep(0.005)

        asker = threading.Thread(target=small)
        asker.start()
        time.sleep(0.2)
        sent = time.perf_counter()
        status, body = only(exchange(running.url, post(data.encode())))
        took = time.perf_counter() - sent
        done.set()
        asker.join()
    assert status == 400 and json.loads(body)["error"]["code"] == "context_length_exceeded"
    during = [sent] + [t for t in answered if sent < t < sent + took] + [sent + took]
    longest = max(b - a for a, b in zip(during, during[1:], strict=False))
    assert longest < 0.4, f"the small requests waited {longest:.2f} s (the big one {took:.2f} s)"


def test_a_long_text_is_counted_in_pieces_as_exactly_as_whole():
    """Counting a long text in pieces (what lets a big body get the 400, not a 500) keeps
    the count of the whole text, double spaces, newlines and emoji included."""
    from lesson_lib.tokens import PIECE_CHARS, count_text, encoding_for  # noqa: PLC0415

    words = ["Chengdu", "weather", " ", "cloudy,", "16°C.", "成都", "\n", "tea-house", "🙂"]
    text = " ".join(words[(k * 7) % len(words)] for k in range(90_000))
    whole = len(encoding_for(MODEL_ID).encode(text, disallowed_special=()))
    assert len(text) > 2 * PIECE_CHARS and count_text(text, MODEL_ID) == whole
    assert count_text("成" * 1_500_000, MODEL_ID) > 0  # a million characters: counted


# ----------------------------------------------------------------- framing (RFC 9112)

@pytest.mark.parametrize("length, says", [
    ("²".encode(), b"bad content-length '\xc2\xb2': expected a whole number of bytes"),
    (b"-1", b"bad content-length '-1'"),
    (b"0x10", b"bad content-length '0x10'"),
    (b"99999999999999999999999", b"bad content-length"),
])
def test_a_bad_content_length_gets_a_400_and_a_clean_close(server, length, says):
    status, body = only(exchange(server.url, post(BODY, length=length), half_close=False))
    assert status == 400 and says in body, body


def test_conflicting_content_lengths_get_a_400(server):
    received = exchange(server.url, post(BODY, extra=b"content-length: 3\r\n"), half_close=False)
    status, body = only(received)
    assert status == 400 and b"conflicting content-length headers" in body, body


def test_identical_content_lengths_are_one_as_rfc_9110_allows(server, fake_brain):
    extra = b"content-length: %d\r\n" % len(BODY)
    assert only(exchange(server.url, post(BODY, extra=extra)))[0] == 200


def test_content_length_with_transfer_encoding_is_refused_and_closed(server):
    data = post(b"5\r\nhello\r\n0\r\n\r\n", extra=b"transfer-encoding: chunked\r\n",
                length=b"5")
    status, body = only(exchange(server.url, data, half_close=False))
    assert status == 400 and b"both content-length and transfer-encoding" in body, body


@pytest.mark.parametrize("size", [b"-5", b"zz", b"5 5", "٥".encode()])
def test_a_bad_chunk_size_gets_a_400_and_a_clean_close(server, size):
    data = (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer k\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + size + b"\r\nhello\r\n0\r\n\r\n")
    status, body = only(exchange(server.url, data, half_close=False))
    quoted = b"'" + size + b"'" if size.isascii() else b""  # the line is quoted as it came
    assert status == 400 and b"bad chunk size " + quoted in body, body
    assert b"expected a hexadecimal number of bytes" in body, body


@pytest.mark.parametrize("coding", [b"gzip", b"chunked, gzip", b"gzip, chunked"])
def test_an_unknown_transfer_coding_is_a_400_not_a_5xx(server, coding):
    data = (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: " + coding +
            b"\r\n\r\n0\r\n\r\n")
    status, body = only(exchange(server.url, data, half_close=False))
    assert status == 400 and b"transfer-encoding" in body, body


def test_pipelined_requests_are_answered_in_order(server, fake_brain):
    models = b"GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer k\r\n\r\n"
    answers = responses(exchange(server.url, post(BODY) + models + post(b"{}")))
    assert [status for status, _ in answers] == [200, 200, 400], answers
    assert json.loads(answers[1][1])["data"][0]["id"] == MODEL_ID


def test_a_request_without_host_is_told_to_add_one(server):
    status, body = only(exchange(server.url, b"GET /v1/models HTTP/1.1\r\n\r\n"))
    assert status == 400 and b"needs a host header" in body, body


# ----------------------------------------------------------------- limits and timeouts

def test_a_body_over_the_limit_is_refused_from_its_content_length_unread(server):
    """Only the head is sent: the 413 comes without the body ever being read."""
    head = post(b"", length=str(LIMITS["max_body"] + 1).encode())
    status, body = only(exchange(server.url, head, half_close=False))
    assert status == 413 and b"over this server's limit of 65,536 bytes" in body, body


def test_a_big_body_already_on_its_way_gets_the_413_not_a_reset(server):
    data = post(b"x" * 2_000_000)
    status, body = only(exchange(server.url, data, half_close=False))
    assert status == 413 and b"is 2,000,000 bytes" in body, body


def test_a_chunked_body_is_cut_off_when_it_passes_the_limit(server):
    chunk = b"%x\r\n%s\r\n" % (10_000, b"x" * 10_000)
    data = (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer k\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + chunk * 10)  # never ends
    status, body = only(exchange(server.url, data, half_close=False))
    assert status == 413 and b"passed it" in body, body


def test_expect_100_continue_over_the_limit_gets_the_413_instead_of_continue(server):
    head = post(b"", extra=b"expect: 100-continue\r\n", length=b"100000")
    assert only(exchange(server.url, head, half_close=False))[0] == 413


def test_a_half_sent_head_gets_a_408_after_the_head_timeout(server):
    received = exchange(server.url, b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n",
                        half_close=False)
    status, body = only(received)
    assert status == 408 and b"did not arrive within 1 s" in body, body


def test_a_half_sent_body_gets_a_408_after_the_body_timeout(server):
    received = exchange(server.url, post(BODY[:10], length=str(len(BODY)).encode()),
                        half_close=False)
    status, body = only(received)
    assert status == 408 and b"stopped arriving" in body, body


def test_an_idle_kept_alive_connection_is_closed(server, fake_brain):
    """One answer, then nothing from the client: the server closes after idle_timeout."""
    received = exchange(server.url, post(BODY), half_close=False)
    assert [status for status, _ in responses(received)] == [200]


def test_a_client_that_stops_reading_a_long_stream_is_dropped(monkeypatch):
    long = {"message": {"role": "assistant", "content": "Chengdu is cloudy. " * 30000},
            "finish_reason": "stop"}
    monkeypatch.setattr(brain, "reply", lambda body: json.loads(json.dumps(long)))
    log = io.StringIO()
    with serve_in_thread(log=log, write_timeout=0.5) as slow:
        with socket.socket() as conn:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills at once
            conn.connect(("127.0.0.1", urlsplit(slow.url).port))
            conn.sendall(post(json.dumps({"model": MODEL_ID, "messages": ASK,
                                          "stream": True}).encode()))
            deadline = time.monotonic() + 30
            while "dropped" not in log.getvalue() and time.monotonic() < deadline:
                time.sleep(0.05)
        assert only(exchange(slow.url, models_request(b"Bearer k")))[0] == 200
    assert log.getvalue().splitlines()[0] == (
        "POST /v1/chat/completions 200 (the client read nothing for 0.5 s: dropped)"), log


def test_a_bug_part_way_through_a_stream_is_logged_and_the_server_goes_on(monkeypatch,
                                                                          fake_brain, capsys):
    def broken(completion, include_usage):
        yield b"data: {}\n\n"
        raise RuntimeError("a bug in the stream")

    monkeypatch.setattr(api, "sse_events", broken)
    log = io.StringIO()
    with serve_in_thread(log=log) as buggy:
        received = exchange(buggy.url, post(json.dumps({"model": MODEL_ID, "messages": ASK,
                                                        "stream": True}).encode()))
        assert received.startswith(b"HTTP/1.1 200 OK\r\n"), received
        assert not received.endswith(b"0\r\n\r\n"), "a broken stream must not look whole"
        assert only(exchange(buggy.url, models_request(b"Bearer k")))[0] == 200
    assert log.getvalue().splitlines()[0] == (
        "POST /v1/chat/completions 200 (the answer failed part way: a bug)"), log.getvalue()
    assert "RuntimeError: a bug in the stream" in capsys.readouterr().err


def test_limits_are_checked_when_the_server_is_made():
    with pytest.raises(ValueError, match="max_body is a number of bytes, at least 1, got 0"):
        OfflineServer(0, max_body=0)
    with pytest.raises(ValueError, match="idle_timeout is a number of seconds above 0"):
        OfflineServer(0, idle_timeout=0)


# ----------------------------------------------------------------- a classroom

def models_request(authorization: bytes | None) -> bytes:
    auth = b"authorization: " + authorization + b"\r\n" if authorization else b""
    return b"GET /v1/models HTTP/1.1\r\nhost: x\r\n" + auth + b"connection: close\r\n\r\n"


def test_beyond_loopback_needs_a_key():
    with pytest.raises(ValueError, match="127.0.0.1 only, not '0.0.0.0'.*--api-key KEY"):
        OfflineServer(0, host="0.0.0.0")
    with pytest.raises(ValueError, match="may not start with 'sk-bad'"):
        OfflineServer(0, host="0.0.0.0", api_key="sk-bad-key")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="127.0.0.2 is lo on Linux")
def test_a_classroom_server_answers_another_address_only_with_its_key():
    """Bound to 0.0.0.0, reached from 127.0.0.2 (all of 127/8 is lo on Linux), as a
    student's machine would: no key, a wrong key, then the right one."""
    with serve_in_thread(host="0.0.0.0", api_key="class-2026-spring") as room:
        url = f"http://127.0.0.2:{urlsplit(room.url).port}"
        missing = only(exchange(url, models_request(None), source="127.0.0.2"))
        wrong = only(exchange(url, models_request(b"Bearer wrong-key-123456"),
                              source="127.0.0.2"))
        right = only(exchange(url, models_request(b"Bearer class-2026-spring"),
                              source="127.0.0.2"))
    assert missing[0] == 401 and json.loads(missing[1])["error"]["message"].startswith(
        "You didn't provide an API key."), missing
    error = json.loads(wrong[1])["error"]
    assert wrong[0] == 401 and error["code"] == "invalid_api_key", wrong
    assert error["message"].startswith("Incorrect API key provided: wrong-ke****3456."), error
    assert right[0] == 200 and json.loads(right[1])["data"][0]["id"] == MODEL_ID


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="127.0.0.2 is lo on Linux")
def test_a_loopback_server_is_not_reachable_from_another_address():
    with serve_in_thread() as local:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.2", urlsplit(local.url).port), timeout=5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="127.0.0.2 is lo on Linux")
def test_cli_serves_a_classroom_with_the_key_from_the_environment_and_never_prints_it():
    key = "class-secret-4242"
    process = subprocess.Popen(
        [sys.executable, "-m", "lesson_lib.offline", "serve", "--host", "0.0.0.0", "--port",
         "0", "--workers", "1"], stderr=subprocess.PIPE, text=True,
        env={**os.environ, "LESSON_SERVE_API_KEY": key})
    try:
        banner = process.stderr.readline()
        port = re.search(r"http://[\d.]+:(\d+)/v1", banner).group(1)
        url = f"http://127.0.0.2:{port}"
        statuses = [only(exchange(url, models_request(auth), source="127.0.0.2"))[0]
                    for auth in (None, b"Bearer " + key.encode())]
        process.send_signal(2)
        rest = process.communicate(timeout=10)[1]
    finally:
        if process.poll() is None:
            process.kill()
    assert statuses == [401, 200], statuses
    assert "every request needs the API key" in banner and key not in banner + rest, banner
    assert "127.0.0.1" not in banner.split(";")[0] or "0.0.0.0" not in banner, banner


def test_cli_refuses_a_public_host_without_a_key_with_the_way_to_give_one():
    done = subprocess.run([sys.executable, "-m", "lesson_lib.offline", "serve", "--host",
                           "0.0.0.0", "--port", "0"], capture_output=True, text=True,
                          timeout=60, env={k: v for k, v in os.environ.items()
                                           if k != "LESSON_SERVE_API_KEY"})
    assert done.returncode == 2, done.stderr
    assert "pass --api-key KEY or set LESSON_SERVE_API_KEY=KEY" in done.stderr, done.stderr


# ----------------------------------------------------------------- fuzzing over real sockets

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
surrogate_text = st.text(max_size=20).map(lambda t: t + "\ud800")  # json.dumps escapes it
chat_bodies = st.fixed_dictionaries({"model": st.sampled_from([MODEL_ID, "gpt-x"]),
                                     "messages": st.just(ASK)},
                                    optional={"stream": st.booleans(),
                                              "n": st.integers(-2, 5),
                                              "max_tokens": st.integers(-1, 50)})
bodies = st.one_of(
    chat_bodies.map(lambda b: json.dumps(b).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
    st.integers(1, 3000).map(lambda d: b"[" * d + b"]" * d),
    surrogate_text.map(lambda t: json.dumps({"model": MODEL_ID, "messages": [
        {"role": "user", "content": t}]}).encode()),
)
lengths = st.one_of(st.just("right"), st.just("none"), st.integers(-5, 300).map(str),
                    st.sampled_from(["²", "1e3", " 12", "0x1f", "12, 13", "+4", "", "٣"]))
codings = st.sampled_from([None, "chunked", "Chunked", "gzip", "chunked, gzip", "identity",
                           "chunked\r\ntransfer-encoding: chunked"])


@st.composite
def well_formed(draw) -> bytes:
    """A well-framed POST to the chat endpoint with a body of any kind."""
    body = draw(bodies)
    extra = draw(st.sampled_from([b"", b"expect: 100-continue\r\n", b"connection: close\r\n",
                                  b"authorization: Bearer sk-bad-1\r\n"]))
    if draw(st.booleans()):
        return post(body, extra=extra)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[k:k + 7]), body[k:k + 7])
                      for k in range(0, len(body), 7))
    return (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer k\r\n"
            + extra + b"transfer-encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")


@st.composite
def odd(draw) -> bytes:
    """A request with odd framing: any method, path, version, headers, lengths, codings."""
    body = draw(bodies)
    method = draw(st.sampled_from(["POST", "GET", "HEAD", "PUT", "P@ST"]))
    path = draw(st.sampled_from(["/v1/chat/completions", "/v1/models", "/v1/models/x", "/",
                                 "*", "/v1/chat/completions?x=1", "no-slash"]))
    version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/9.9"]))
    lines = [f"{method} {path} {version}"]
    if draw(st.booleans()) or version == "HTTP/1.1":
        lines.append("host: 127.0.0.1")
    lines += draw(st.lists(st.sampled_from([
        "authorization: Bearer offline", "authorization: Bearer sk-bad-1", "authorization:",
        "expect: 100-continue", "expect: something-else", "connection: close",
        "connection: keep-alive", "content-type: application/json", "x-odd: \u00e9",
        " folded: line", "no colon here", "x:\x01", "x: " + "y" * 300]), max_size=4))
    coding = draw(codings)
    length = draw(lengths)
    framed = body
    if coding is not None:
        lines.append(f"transfer-encoding: {coding}")
        size = draw(st.sampled_from([f"{len(body):x}", "-1", "zz", f"{len(body):X};ext=1",
                                     "ffffffffffffffffffff"]))
        framed = (f"{size}\r\n".encode() + body + b"\r\n0\r\n\r\n") if body else b"0\r\n\r\n"
    if length != "none" and (coding is None or draw(st.booleans())):
        lines.append(f"content-length: {len(framed) if length == 'right' else length}")
        if draw(st.integers(0, 5)) == 0:
            lines.append(f"content-length: {len(framed)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogatepass") + framed


@st.composite
def requests(draw) -> bytes:
    """One raw request (sometimes two, pipelined), well formed or odd, sometimes cut short."""
    data = draw(st.one_of(well_formed(), odd()))
    cut = draw(st.sampled_from([None, None, None, 0.5, 0.9]))
    if cut:
        return data[:int(len(data) * cut)]
    return data + data if draw(st.integers(0, 3)) == 0 else data  # pipelined: twice


@settings(max_examples=150, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=requests())
def test_fuzz_no_5xx_and_every_connection_answered_or_closed_cleanly(server, data):
    received = exchange(server.url, data)  # half-closed: a short request ends, not waits
    for status, body in responses(received, to_head=data.startswith(b"HEAD ")):
        assert status < 500, (data[:300], status, body[:300])


def test_the_server_still_answers_after_the_fuzzing(server):
    assert only(exchange(server.url, models_request(b"Bearer k")))[0] == 200
