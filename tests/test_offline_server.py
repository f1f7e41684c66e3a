"""The offline model served over real HTTP on 127.0.0.1 (raw http.client and the SDK)."""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time
from urllib.parse import urlsplit

import openai
import pytest

from lesson_lib.offline import MODEL_ID, brain, offline_client
from lesson_lib.offline.server import OfflineServer, serve_in_thread
from lesson_lib.tokens import count_messages

ASK = [{"role": "user", "content": "What's the weather in Chengdu?"}]
BODY = {"model": MODEL_ID, "messages": ASK}
KEY = "Bearer offline"  # any key works; a request without one gets the real 401
ANSWER = {"message": {"role": "assistant", "content": "Chengdu is cloudy, 16°C. 成都多云。"},
          "finish_reason": "stop"}


@pytest.fixture
def fake_brain(monkeypatch):
    monkeypatch.setattr(brain, "reply", lambda body: json.loads(json.dumps(ANSWER)))


@pytest.fixture
def served():
    log = io.StringIO()
    with serve_in_thread(log=log) as server:
        server.log = log
        yield server


def post(url: str, body, path: str = "/v1/chat/completions", headers: dict | None = None,
         conn: http.client.HTTPConnection | None = None):
    """(status, headers, raw body bytes) of one request; `body` may be bytes or JSON data.
    The request carries `Authorization: Bearer offline` unless `headers` sets it to None."""
    own = conn is None
    conn = conn or http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port,
                                              timeout=10)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"content-type": "application/json", "authorization": KEY, **(headers or {})}
    conn.request("POST" if body is not None else "GET", path, body=data if body is not None
                 else None, headers={k: v for k, v in sent.items() if v is not None})
    response = conn.getresponse()
    raw = response.read()
    if own:
        conn.close()
    return response.status, dict(response.getheaders()), raw


# ----------------------------------------------------------------- raw HTTP

def test_models_endpoint_lists_the_offline_model(served):
    status, _, raw = post(served.url, None, "/v1/models")
    assert status == 200, raw
    assert [m["id"] for m in json.loads(raw)["data"]] == [MODEL_ID]


def test_same_request_twice_gives_byte_identical_bodies_over_http(served, fake_brain):
    first, second = post(served.url, BODY), post(served.url, BODY)
    assert first[0] == second[0] == 200, first
    assert first[2] == second[2], "two identical requests gave different bytes"


def test_served_and_in_process_answers_are_byte_identical(served, fake_brain):
    over_http = post(served.url, BODY)[2]
    in_process = offline_client().chat.completions.with_raw_response.create(**BODY).content
    assert over_http == in_process


def test_keep_alive_serves_several_requests_on_one_connection(served, fake_brain):
    conn = http.client.HTTPConnection("127.0.0.1", urlsplit(served.url).port, timeout=10)
    statuses = [post(served.url, BODY, conn=conn)[0] for _ in range(3)]
    statuses.append(post(served.url, {"model": MODEL_ID}, conn=conn)[0])  # an error keeps it too
    statuses.append(post(served.url, BODY, conn=conn)[0])
    conn.close()
    assert statuses == [200, 200, 200, 400, 200], statuses


def test_request_without_model_gets_the_real_400(served):
    status, headers, raw = post(served.url, {"messages": ASK})
    assert status == 400, raw
    assert json.loads(raw) == {"error": {"message": "you must provide a model parameter",
                                         "type": "invalid_request_error", "param": None,
                                         "code": None}}
    assert headers["x-should-retry"] == "false"


def test_bad_json_gets_a_400(served):
    status, headers, raw = post(served.url, b"{'model': 'single quotes'}")
    assert status == 400 and headers["x-should-retry"] == "false", raw
    assert json.loads(raw)["error"]["message"].startswith("We could not parse the JSON body")


def test_any_key_is_accepted_over_http(served, fake_brain):
    for headers in ({"authorization": "Bearer sk-proj-real-looking"},
                    {"authorization": "Bearer ollama"}):
        assert post(served.url, BODY, headers=headers)[0] == 200, headers


@pytest.mark.parametrize("authorization", [None, "", "Bearer ", "Bearer"])
def test_no_key_gets_the_real_401_over_http(served, fake_brain, authorization):
    status, headers, raw = post(served.url, BODY, headers={"authorization": authorization})
    error = json.loads(raw)["error"]
    assert status == 401 and headers["x-should-retry"] == "false", raw
    assert error["message"].startswith("You didn't provide an API key. You need to provide your "
                                       "API key in an Authorization header using Bearer auth"), raw
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", None, None)
    assert post(served.url, None, "/v1/models", headers={"authorization": authorization})[0] == 401


def test_a_bad_lesson_key_gets_401_over_http(served):
    status, _, raw = post(served.url, BODY, headers={"authorization": "Bearer sk-bad-0123456789"})
    assert status == 401 and json.loads(raw)["error"]["code"] == "invalid_api_key", raw


def test_chunked_request_body_is_read(served, fake_brain):
    conn = http.client.HTTPConnection("127.0.0.1", urlsplit(served.url).port, timeout=10)
    parts = iter([json.dumps(BODY)[:10].encode(), json.dumps(BODY)[10:].encode()])
    conn.request("POST", "/v1/chat/completions", body=parts, encode_chunked=True,
                 headers={"content-type": "application/json", "transfer-encoding": "chunked",
                          "authorization": KEY})
    response = conn.getresponse()
    assert response.status == 200, response.read()
    conn.close()


def test_raw_stream_is_server_sent_events_ending_in_done(served, fake_brain):
    status, headers, raw = post(served.url, {**BODY, "stream": True,
                                             "stream_options": {"include_usage": True}})
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = raw.decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""], events[-2:]
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    assert all(e.startswith("data: ") for e in events[:-1])
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-2]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None,
                                        "finish_reason": "stop"}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == (
        count_messages(ASK))
    assert all(c["usage"] is None for c in chunks[:-1])
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[:-1])
    assert text == ANSWER["message"]["content"]


def test_context_window_of_the_server_is_enforced(fake_brain):
    with serve_in_thread(context_window=10) as server:
        status, _, raw = post(server.url, BODY)
    error = json.loads(raw)["error"]
    assert (status, error["code"]) == (400, "context_length_exceeded"), raw
    assert f"resulted in {count_messages(ASK)} tokens." in error["message"]


def test_unknown_path_gets_a_404(served):
    status, _, raw = post(served.url, BODY, path="/v1/completions")
    assert status == 404 and "Invalid URL (POST /v1/completions)" in raw.decode()


def raw_exchange(url: str, data: bytes) -> bytes:
    """Send raw bytes on a new connection; everything the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", urlsplit(url).port), timeout=5) as conn:
        conn.sendall(data)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    return received


def test_a_garbled_request_line_gets_a_400_and_the_connection_closes(served):
    received = raw_exchange(served.url, b"GARBAGE\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 400 Bad Request\r\n"), received
    assert b"bad request line 'GARBAGE': expected 'METHOD /path HTTP/1.1'" in received, received


def test_a_bad_content_length_gets_a_400(served):
    received = raw_exchange(served.url, b"POST /v1/chat/completions HTTP/1.1\r\n"
                                        b"content-length: lots\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 400 "), received
    assert b"bad content-length 'lots': expected a whole number of bytes" in received, received


def test_an_oversized_request_head_gets_a_431_that_says_the_limit(served):
    received = raw_exchange(served.url, b"GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: "
                            + b"a" * 70_000 + b"\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 431 Request Header Fields Too Large"), received[:80]
    assert b"over 65,536 bytes: send fewer or shorter headers" in received, received


def test_http_1_0_gets_one_answer_then_the_connection_closes(served):
    received = raw_exchange(served.url, b"GET /v1/models HTTP/1.0\r\n"
                            b"authorization: Bearer offline\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 200 OK\r\n"), received
    assert json.loads(received.split(b"\r\n\r\n", 1)[1])["data"][0]["id"] == MODEL_ID


def test_expect_100_continue_is_honoured(served, fake_brain):
    body = json.dumps(BODY).encode()
    received = raw_exchange(served.url, b"POST /v1/chat/completions HTTP/1.1\r\n"
                            b"host: 127.0.0.1\r\nexpect: 100-continue\r\nconnection: close\r\n"
                            b"authorization: Bearer offline\r\n"
                            b"content-length: %d\r\n\r\n%s" % (len(body), body))
    assert received.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"), received


def test_many_clients_at_once_all_get_their_own_answers(served):
    """32 connections in flight together (the benchmark's load, in miniature)."""
    import concurrent.futures  # noqa: PLC0415

    cities = ["Chengdu", "Beijing", "Shanghai", "Shenzhen"] * 8
    def ask(city):
        body = {"model": MODEL_ID, "messages": [{"role": "user",
                                                  "content": f"What's the weather in {city}?"}],
                "tools": [{"type": "function", "function": {
                    "name": "get_current_weather", "description": "Get the weather in a city",
                    "parameters": {"type": "object", "properties": {
                        "location": {"type": "string"}}, "required": ["location"]}}}]}
        status, _, raw = post(served.url, body)
        call = json.loads(raw)["choices"][0]["message"]["tool_calls"][0]
        return status, json.loads(call["function"]["arguments"])["location"]
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(ask, cities))
    assert answers == [(200, city) for city in cities], answers


# ----------------------------------------------------------------- the SDK against the server

def test_sdk_against_the_served_endpoint(served, fake_brain):
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="anything", max_retries=0)
    reply = client.chat.completions.create(**BODY)
    chunks = list(client.chat.completions.create(**BODY, stream=True))
    assert reply.choices[0].message.content == ANSWER["message"]["content"]
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == ANSWER["message"]["content"]
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-x", messages=ASK)
    assert caught.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL_ID, messages=ASK, tools=[])
    assert (caught.value.code, caught.value.param) == ("empty_array", "tools")
    client.close()


# ----------------------------------------------------------------- serving itself

def test_one_log_line_per_request(served, fake_brain):
    post(served.url, BODY)
    post(served.url, {"model": "gpt-x", "messages": ASK})
    post(served.url, None, "/v1/models")
    deadline = time.monotonic() + 5  # a line is written just after its answer is sent
    while len(lines := served.log.getvalue().splitlines()) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    patterns = [r"POST /v1/chat/completions 200 \d+\.\d ms", r"POST /v1/chat/completions 404 "
                r"\d+\.\d ms", r"GET /v1/models 200 \d+\.\d ms"]
    assert len(lines) == 3, lines
    assert all(re.fullmatch(p, line) for p, line in zip(patterns, lines, strict=True)), lines


def test_a_client_that_hangs_up_mid_stream_is_logged_and_the_server_goes_on(served,
                                                                           monkeypatch):
    long_answer = {"message": {"role": "assistant", "content": "Chengdu is cloudy. " * 20000},
                   "finish_reason": "stop"}
    monkeypatch.setattr(brain, "reply", lambda body: json.loads(json.dumps(long_answer)))
    body = json.dumps({**BODY, "stream": True}).encode()
    with socket.create_connection(("127.0.0.1", urlsplit(served.url).port), timeout=5) as conn:
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                     b"authorization: Bearer offline"
                     b"\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        assert conn.recv(100).startswith(b"HTTP/1.1 200 OK"), "expected the stream to begin"
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset
    deadline = time.monotonic() + 10
    while "hung up" not in served.log.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert served.log.getvalue().splitlines()[-1] == (
        "POST /v1/chat/completions 200 (the client hung up before the end)"), served.log.getvalue()
    assert post(served.url, None, "/v1/models")[0] == 200, "the server stopped answering"


def test_only_loopback_is_served():
    with pytest.raises(ValueError, match="127.0.0.1 only"):
        OfflineServer(0, host="0.0.0.0")


def test_stop_closes_the_port_and_is_idempotent():
    url, stop = serve_in_thread()
    port = urlsplit(url).port
    assert post(url, None, "/v1/models")[0] == 200
    stop()
    stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_stop_ends_kept_alive_connections():
    server = serve_in_thread()
    conn = http.client.HTTPConnection("127.0.0.1", urlsplit(server.url).port, timeout=5)
    assert post(server.url, None, "/v1/models", conn=conn)[0] == 200
    server.stop()
    with pytest.raises((http.client.HTTPException, ConnectionError, OSError)):
        post(server.url, None, "/v1/models", conn=conn)


def test_cli_serves_logs_and_stops_cleanly_on_ctrl_c():
    process = subprocess.Popen(
        [sys.executable, "-m", "lesson_lib.offline", "serve", "--port", "0",
         "--context-window", "10", "--workers", "1"], stderr=subprocess.PIPE, text=True)
    try:
        banner, export = process.stderr.readline(), process.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/v1", banner)
        assert match, f"expected the URL on the first line, got {banner!r}"
        url = f"http://127.0.0.1:{match.group(1)}"
        assert export.startswith(f"export OPENAI_BASE_URL={url}/v1  # "), export
        status, _, raw = post(url, BODY)
        assert status == 400 and b"maximum context length is 10 tokens" in raw, raw
        assert post(url, None, "/v1/models")[0] == 200
        time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=10)[1]
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, f"expected exit 0, got {process.returncode}: {rest}"
    lines = rest.splitlines()
    assert lines[-1] == "stopped", lines
    assert [line.rsplit(" ", 2)[0] for line in lines[:-1]] == [
        "POST /v1/chat/completions 400", "GET /v1/models 200"], lines


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--workers needs os.fork")
def test_cli_with_two_workers_serves_and_stops_every_process():
    process = subprocess.Popen(
        [sys.executable, "-m", "lesson_lib.offline", "serve", "--port", "0", "--workers", "2"],
        stderr=subprocess.PIPE, text=True)
    try:
        banner = process.stderr.readline()
        assert "2 workers" in banner, banner
        url = "http://127.0.0.1:" + re.search(r":(\d+)/v1", banner).group(1)
        statuses = [post(url, None, "/v1/models")[0] for _ in range(6)]  # new connection each
        children = _children(process.pid)
        assert len(children) == 1, f"expected one forked worker, got {children}"
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=10)[1]
    finally:
        if process.poll() is None:
            process.kill()
    assert statuses == [200] * 6 and process.returncode == 0, (statuses, rest)
    assert rest.splitlines()[-1] == "stopped" and rest.count("GET /v1/models 200") == 6, rest
    assert not any(os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" for pid in children)


def _children(pid: int) -> list[int]:
    path = f"/proc/{pid}/task/{pid}/children"
    if not os.path.exists(path):
        pytest.skip("needs Linux /proc to find the worker")
    with open(path) as f:
        return [int(p) for p in f.read().split()]


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.parametrize("arguments, expected", [
    (["--workers", "0"], "workers is how many processes serve, at least 1, got 0"),
    (["--port", "70000"], "port must be 0 to 65535 (0: any free port), got 70000"),
    (["--context-window", "0"], "context_window is a number of tokens, at least 1, got 0"),
])
def test_cli_refuses_impossible_settings_with_the_rule(arguments, expected):
    done = subprocess.run([sys.executable, "-m", "lesson_lib.offline", "serve", *arguments],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_cli_stop_leaves_no_noise_when_every_process_gets_the_signal():
    """`timeout` (or a terminal's Ctrl-C) signals the whole process group: the worker gets
    the parent's SIGTERM too, while it is already stopping."""
    process = subprocess.Popen([sys.executable, "-m", "lesson_lib.offline", "serve", "--port",
                                "0", "--workers", "2"], stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        assert "2 workers" in process.stderr.readline()
        assert process.stderr.readline().startswith("export OPENAI_BASE_URL=")
        time.sleep(0.3)
        os.killpg(process.pid, signal.SIGTERM)
        rest = process.communicate(timeout=10)[1]
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0 and rest.splitlines() == ["stopped"], rest


def test_cli_refuses_a_public_host():
    done = subprocess.run([sys.executable, "-m", "lesson_lib.offline", "serve", "--host",
                           "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "127.0.0.1 only" in done.stderr, done.stderr


def test_a_client_of_the_served_model_is_recognised_as_the_offline_model():
    """A notebook pointed at a teacher's served offline model still runs its offline checks:
    is_offline asks /v1/models (on a near address only) and finds the offline model there."""
    import openai

    from lesson_lib.llm import describe_backend, using_client
    from lesson_lib.offline import MODEL_ID, is_offline, is_served
    from lesson_lib.offline.server import serve_in_thread

    with serve_in_thread() as server:
        served = openai.OpenAI(base_url=server.url + "/v1", api_key="offline", max_retries=0)
        assert is_offline(served) and is_served(served)
        with using_client(served, MODEL_ID):
            assert describe_backend().startswith(f"offline teaching model '{MODEL_ID}' served at")
    nobody = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0)
    public = openai.OpenAI(base_url="https://api.example.com/v1", api_key="x", max_retries=0)
    assert not is_offline(nobody) and not is_offline(public)  # the public one is never asked


# ----------------------------------------------------------------- learners sharing one machine
# On a class server (JupyterHub) every learner's 127.0.0.1 is the same: `serve` without
# --port must take a port of its own and say which, and a key must keep a server its owner's.

EXPORT = re.compile(r"^export OPENAI_BASE_URL=(http://127\.0\.0\.1:(\d+)/v1)  # ")


def learner_env(home) -> dict[str, str]:
    """A learner of their own: HOME and every XDG folder in `home`, no server key."""
    env = {k: v for k, v in os.environ.items() if k != "LESSON_SERVE_API_KEY"}
    env["HOME"] = str(home)
    for name, folder in (("XDG_DATA_HOME", ".local/share"), ("XDG_CACHE_HOME", ".cache"),
                         ("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".local/state")):
        env[name] = str(home / folder)
    return env


def start_serving(*args: str, env: dict[str, str]) -> tuple[subprocess.Popen, list[str], str]:
    """`serve ARGS` as a learner would run it: (process, its first two lines, the URL the
    export line gives). It runs in the learner's home, as a terminal there would."""
    process = subprocess.Popen([sys.executable, "-m", "lesson_lib.offline", "serve", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env, cwd=env["HOME"])
    lines = [process.stderr.readline(), process.stderr.readline()]
    found = EXPORT.match(lines[1])
    if not found:
        process.kill()
        raise AssertionError(f"expected the URL and the export line, got {lines}: "
                             + process.communicate(timeout=10)[1])
    assert f"on {found.group(1)} (" in lines[0], lines  # the first line names the same URL
    return process, lines, found.group(1)


def stop_serving(process: subprocess.Popen) -> tuple[str, str]:
    """Ctrl-C; (stdout, stderr) of what it printed after its first two lines."""
    process.send_signal(signal.SIGINT)
    try:
        return process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()


def test_the_cli_takes_a_free_port_unless_told_one():
    from lesson_lib.offline import __main__ as cli
    from lesson_lib.offline import server

    assert server.ANY_PORT == cli.ANY_PORT == 0 and server.KEY_ENV == cli.KEY_ENV
    shown = subprocess.run([sys.executable, "-m", "lesson_lib.offline", "serve", "--help"],
                           capture_output=True, text=True, timeout=60)
    helped = " ".join(shown.stdout.split())
    assert "--port PORT port to listen on (default: a free one, printed at start" in helped, \
        helped
    assert "8765" not in helped, helped


def test_two_learners_serve_at_once_without_a_port_each_reaching_their_own(tmp_path):
    """Two learners, two homes, the same command at the same time (with its default two
    workers): two ports, both answer, and what one stores the other's server never sees."""
    homes = [tmp_path / "xiaoming", tmp_path / "xiaohong"]
    started = []
    try:
        for home in homes:
            home.mkdir()
            started.append(start_serving(env=learner_env(home)))
        urls = [url for _, _, url in started]
        assert urls[0] != urls[1], urls
        clients = [openai.OpenAI(base_url=url, api_key="offline", max_retries=0, timeout=30)
                   for url in urls]
        made = [client.responses.create(model=MODEL_ID, input=f"My name is {name}.")
                for client, name in zip(clients, ["Xiaoming", "Xiaohong"], strict=True)]
        for mine, theirs, client in ((0, 1, clients[0]), (1, 0, clients[1])):
            assert client.responses.retrieve(made[mine].id).id == made[mine].id
            with pytest.raises(openai.NotFoundError):
                client.responses.retrieve(made[theirs].id)
        asked = [client.responses.create(model=MODEL_ID, input="What is my name?",
                                         previous_response_id=response.id).output_text
                 for client, response in zip(clients, made, strict=True)]
        for client in clients:
            client.close()
    finally:
        ends = [stop_serving(process) for process, _, _ in started]
    assert asked == ["You told me your name is Xiaoming.",
                     "You told me your name is Xiaohong."], asked
    assert all(stderr.splitlines()[-1:] == ["stopped"] for _, stderr in ends), ends
    for home in homes:  # nothing written in the learner's folder either
        assert list(home.iterdir()) == [], list(home.iterdir())


def test_a_port_already_taken_is_refused_with_the_way_out(tmp_path):
    with serve_in_thread() as other:  # another learner's server, on the port asked for
        port = str(urlsplit(other.url).port)
        done = subprocess.run([sys.executable, "-m", "lesson_lib.offline", "serve", "--port",
                               port], capture_output=True, text=True, timeout=60,
                              env=learner_env(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"error: port {port} on 127.0.0.1 is already in use"), \
        done.stderr
    assert "leave out --port and the server takes a free port" in done.stderr, done.stderr


def test_a_server_started_with_a_key_answers_only_that_key_and_never_prints_it(tmp_path):
    """A learner keeps their server their own on a shared machine: `serve --api-key KEY`
    (on 127.0.0.1, no --port) refuses a request without the key with the real API's 401,
    refuses another key, answers the key; the key is in none of its output."""
    key = "own-key-7391-xm"
    process, lines, url = start_serving("--api-key", key, env=learner_env(tmp_path))
    try:
        base = url.removesuffix("/v1")
        missing = post(base, BODY, headers={"authorization": None})
        other_key = openai.OpenAI(base_url=url, api_key="offline", max_retries=0, timeout=30)
        with pytest.raises(openai.AuthenticationError) as wrong:
            other_key.chat.completions.create(model=MODEL_ID, messages=ASK)
        right = openai.OpenAI(base_url=url, api_key=key, max_retries=0, timeout=30)
        reply = right.chat.completions.create(
            model=MODEL_ID, messages=[{"role": "user", "content": "My name is Xiaoming."}])
        other_key.close()
        right.close()
    finally:
        stdout, stderr = stop_serving(process)
    assert missing[0] == 401, missing
    error = json.loads(missing[2])["error"]
    assert error["message"].startswith("You didn't provide an API key. You need to provide "
                                       "your API key in an Authorization header"), error
    assert wrong.value.status_code == 401 and wrong.value.code == "invalid_api_key"
    assert "Xiaoming" in reply.choices[0].message.content, reply
    assert "every request needs the API key you chose" in lines[0], lines
    printed = "".join(lines) + stdout + stderr
    assert key not in printed and key[:8] not in printed, printed
    assert [line.split(" ")[:3] for line in stderr.splitlines()] == [
        ["POST", "/v1/chat/completions", "401"], ["POST", "/v1/chat/completions", "401"],
        ["POST", "/v1/chat/completions", "200"], ["stopped"]], stderr
