"""The terminal chat, driven through its standard input and through signals.

Every failure a newcomer can meet (Ctrl-C, end of input, a missing key, a provider that cannot
be reached, a 401, a 429) must give one readable line, no traceback, a memory that is still a
valid message list, and a chat that goes on where it can. Real providers are stood in for by
servers on 127.0.0.1 started here (or the offline model served over HTTP)."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lesson_lib.agent import Agent, LoopAgent
from lesson_lib.cli import reply_line
from lesson_lib.offline import MODEL_ID, inject_fault, offline_client
from lesson_lib.offline.server import serve_in_thread
from lesson_lib.protocol import find_problems

FAKE_KEY = "sk-test-0123456789abcdef-never-shown"
WAIT = 60  # seconds before a wait fails: only a broken chat takes that long (startup under
           # a loaded machine can take several seconds; every wait ends as soon as it can)


def run_chat(lines: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lesson_lib", *args], input=lines,
                          capture_output=True, text=True, timeout=WAIT,
                          env={**os.environ, **(env or {})})


def provider(url: str, key: str = FAKE_KEY, model: str = "test-model") -> dict:
    """The environment that points the chat at an OpenAI-compatible server at `url`."""
    return {"LESSON_BACKEND": "openai", "OPENAI_API_KEY": key, "OPENAI_BASE_URL": url,
            "LESSON_MODEL": model}


def assert_no_traceback(*outputs: str) -> None:
    for text in outputs:
        assert "Traceback" not in text, text


def notices(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("(!)")]


# ----------------------------------------------------------------- the conversation

def test_remember_show_clear_and_exit():
    done = run_chat("My name is Xiaoming\nWhat's the weather in Chengdu?\n/memory\n/clear\n"
                    "What's my name?\n/exit\nnever read\n")
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "offline teaching model" in out
    assert "agent> Nice to meet you, Xiaoming!" in out
    assert "[tool] get_current_weather" in out
    assert "(7 messages)" in out and "[1] user       My name is Xiaoming" in out
    assert "记忆已清除，开始新对话。" in out and "Memory cleared" in out
    assert "agent> You haven't told me your name." in out
    assert "never read" not in out


def test_end_of_input_exits_cleanly():
    done = run_chat("我叫小明\n")
    assert done.returncode == 0 and "你好小明" in done.stdout and "Bye." in done.stdout
    assert_no_traceback(done.stdout, done.stderr)


def test_loop_mode_and_help():
    done = run_chat("/help\nKeep checking the weather in Chengdu until it is sunny.\n",
                    "--loop", "--max-turns", "2")
    assert done.returncode == 0, done.stderr
    assert "/clear" in done.stdout and "max_turns=2" in done.stdout


# ----------------------------------------------------------------- the name in the usage line

def test_usage_names_python_dash_m_when_run_as_a_module():
    done = run_chat("", "--help")
    assert done.returncode == 0
    assert done.stdout.startswith(f"usage: {Path(sys.executable).name} -m lesson_lib ")


CONSOLE_SCRIPT = Path(sys.executable).with_name("lesson-chat")


@pytest.mark.parametrize("how", ["as pip's launcher runs it", "the installed script"])
def test_usage_names_the_console_script(how):
    if how == "the installed script":
        if not CONSOLE_SCRIPT.exists():
            pytest.skip("lesson-chat is not installed next to this Python")
        command = [str(CONSOLE_SCRIPT), "--help"]
    else:  # what the generated `lesson-chat` script does: set argv[0], call main()
        command = [sys.executable, "-c", "import sys; from lesson_lib.cli import main; "
                   "sys.argv[0] = 'lesson-chat'; sys.exit(main())", "--help"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: lesson-chat ")


# ----------------------------------------------------------------- a backend that cannot be used

def test_missing_key_is_one_line_and_exit_code_2():
    done = run_chat("hello\n", env={"LESSON_BACKEND": "openai"})
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"{Path(sys.executable).name} -m lesson_lib: "
                                  "LESSON_BACKEND=openai needs OPENAI_API_KEY")


def test_unknown_backend_is_one_line_and_never_shows_the_key():
    done = run_chat("hello\n", env={"LESSON_BACKEND": "antropic", "OPENAI_API_KEY": FAKE_KEY})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "LESSON_BACKEND='antropic' is not a backend" in done.stderr
    assert FAKE_KEY not in done.stdout + done.stderr


# ----------------------------------------------------------------- API errors: one line, go on

def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (just freed by the OS)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_provider_is_one_line_and_the_chat_goes_on():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = run_chat("hi\n/memory\n/exit\n", env=provider(url))
    assert done.returncode == 0, done.stderr
    assert_no_traceback(done.stdout, done.stderr)
    [line] = notices(done.stdout)
    assert line.startswith("(!) Could not reach the model: No connection to 127.0.0.1.")
    assert "OPENAI_BASE_URL" in line and "fix them in your shell" in line
    assert line.endswith("[memory: 2 messages, valid]")
    assert "[1] user       hi" in done.stdout and "(2 messages)" in done.stdout  # it went on
    assert FAKE_KEY not in done.stdout + done.stderr


def test_401_names_the_fix_never_the_key_and_the_chat_goes_on():
    bad_key = "sk-bad-0123456789abcdef"
    with serve_in_thread() as srv:
        done = run_chat("hi\n/memory\n/exit\n",
                        env=provider(srv.url + "/v1", key=bad_key, model=MODEL_ID))
    assert done.returncode == 0, done.stderr
    assert_no_traceback(done.stdout, done.stderr)
    [line] = notices(done.stdout)
    assert line.startswith("(!) The API answered 401 (invalid_api_key)")
    assert "Check OPENAI_API_KEY" in line and "fix them in your shell" in line
    assert line.endswith("[memory: 2 messages, valid]")
    assert "(2 messages)" in done.stdout and done.stdout.endswith("Bye.\n")
    assert bad_key not in done.stdout + done.stderr


class FakeProvider(ThreadingHTTPServer):
    """An OpenAI-compatible server on 127.0.0.1 whose answers a test chooses:
    `answer(request_body) -> (status, headers, body)`. Requests asking for "slow" are
    held until `release` is set, and `holding` tells the test when one is."""

    daemon_threads = True

    def __init__(self, answer):
        super().__init__(("127.0.0.1", 0), _FakeHandler)
        self.answer, self.holding, self.release = answer, threading.Event(), threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.shutdown()
        self.server_close()


class _FakeHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the name http.server calls)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "slow" in body["messages"][-1]["content"]:
            self.server.holding.set()
            self.server.release.wait(timeout=WAIT)
        status, headers, reply = self.server.answer(body)
        try:
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(json.dumps(reply).encode())
        except OSError:
            pass  # the chat stopped waiting (Ctrl-C) and closed the connection

    def log_message(self, *args):
        pass  # quiet


def completion(text: str) -> tuple[int, dict, dict]:
    return 200, {}, {"id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                     "model": "test-model",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}]}


RATE_LIMITED = (429, {"x-should-retry": "false"},  # else the SDK retries twice, with back-off
                {"error": {"message": "Rate limit reached for test-model: 3 requests per min.",
                           "type": "requests", "param": None, "code": "rate_limit_exceeded"}})


def test_429_says_wait_and_the_chat_goes_on():
    with FakeProvider(lambda body: RATE_LIMITED) as srv:
        done = run_chat("hi\n/memory\n/exit\n", env=provider(srv.url))
    assert done.returncode == 0, done.stderr
    assert_no_traceback(done.stdout, done.stderr)
    [line] = notices(done.stdout)
    assert line.startswith("(!) The API answered 429 (rate_limit_exceeded): Rate limit reached")
    assert "wait a moment and send again" in line
    assert "read these settings at start" not in line  # waiting is the fix, not a restart
    assert line.endswith("[memory: 2 messages, valid]") and "(2 messages)" in done.stdout


# ----------------------------------------------------------------- Ctrl-C, as a real signal

class LiveChat:
    """The chat in a subprocess, talked to through pipes: type lines, wait for output with a
    deadline (never a blind sleep), send signals. Output is read by a thread as it comes."""

    def __init__(self, env: dict | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lesson_lib"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})},
            preexec_fn=_sigint_as_in_a_terminal if _sigint_ignored() else None)
        self.out, self.seen, self._lock = b"", 0, threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while chunk := os.read(self.proc.stdout.fileno(), 4096):
            with self._lock:
                self.out += chunk

    @property
    def stdout(self) -> str:
        with self._lock:
            return self.out.decode()

    def expect(self, text: str, timeout: float = WAIT) -> None:
        """Wait until `text` appears after what was expected before."""
        deadline = time.monotonic() + timeout
        while (found := self.stdout.find(text, self.seen)) < 0:
            assert time.monotonic() < deadline, f"no {text!r} in:\n{self.stdout}"
            time.sleep(0.02)
        self.seen = found + len(text)

    def waiting_for_input(self, timeout: float = WAIT) -> None:
        """Wait for the prompt, and (where /proc tells) until the chat sleeps in read().
        A signal that lands after the prompt is written but before read() starts would
        only be noticed after the next line arrives: a race no learner can hit, but a test
        could."""
        self.expect("you> ", timeout)
        stat = Path(f"/proc/{self.proc.pid}/stat")
        deadline = time.monotonic() + timeout
        while stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "S":
            assert time.monotonic() < deadline, "the chat never waited for input"
            time.sleep(0.02)

    def type(self, line: str) -> None:
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def end(self, timeout: float = WAIT) -> tuple[int, str, str]:
        """Close standard input (end of input), wait; (exit code, stdout, stderr)."""
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout)  # its pipe ends with the process: all output is read
        with self.proc.stdout, self.proc.stderr:
            return code, self.stdout, self.proc.stderr.read().decode()


def _sigint_ignored() -> bool:
    """A background job of a non-interactive shell starts with Ctrl-C ignored, and so would
    the chat; a learner's terminal never does that, so the test restores the default."""
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def _sigint_as_in_a_terminal():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is a POSIX thing")
def test_ctrl_c_at_the_prompt_says_bye_without_a_traceback():
    chat = LiveChat()
    chat.expect("you> ")
    chat.type("My name is Xiaoming")
    chat.expect("agent> Nice to meet you, Xiaoming!")
    chat.waiting_for_input()
    chat.proc.send_signal(signal.SIGINT)
    chat.expect("Bye.")
    code, out, err = chat.end()
    assert code == 0
    assert_no_traceback(out, err)
    assert out.endswith("you> \n(Ctrl-C) Leaving the chat.\nBye.\n") and err == ""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is a POSIX thing")
def test_ctrl_c_while_the_model_answers_cancels_that_message_only():
    with FakeProvider(lambda body: completion("Hello from the test server.")) as srv:
        chat = LiveChat(env=provider(srv.url))
        chat.expect("you> ")
        chat.type("please be slow")
        assert srv.holding.wait(timeout=WAIT), "the model call never arrived"
        chat.proc.send_signal(signal.SIGINT)  # the chat is waiting for the answer now
        chat.expect("(!) Ctrl-C: the model's answer was cancelled; your message stays in "
                    "the memory, unanswered. Type your next message, or press Ctrl-C again "
                    "to leave. [memory: 2 messages, valid]\nyou> ")
        chat.type("/memory")
        chat.expect("[1] user       please be slow")
        chat.expect("(2 messages)\nyou> ")
        chat.type("hello")  # the chat goes on, and so does the same connection pool
        chat.expect("agent> Hello from the test server.\nyou> ")
        chat.type("/memory")
        chat.expect("(4 messages)")
        code, out, err = chat.end()
    assert code == 0 and out.endswith("Bye.\n")
    assert_no_traceback(out, err)


# ----------------------------------------------------------------- the memory after a failure

def test_a_failed_call_leaves_the_memory_valid_and_the_next_turn_works():
    client = offline_client()
    agent = Agent(client=client)
    inject_fault(client, "rate_limit")
    line = reply_line(agent, "My name is Xiaoming")
    assert line.startswith("(!) The API answered 429") and "\n" not in line
    assert find_problems(agent.memory.to_api_format()) == []
    assert reply_line(agent, "What's my name?").startswith("agent> ")
    assert find_problems(agent.memory.to_api_format()) == []


def failing_after_the_tools(make_failure):
    """A LoopAgent whose turn fails after its first tool round is in the memory."""
    client = offline_client()
    agent = LoopAgent(client=client, on_tool=lambda event: make_failure(client))
    line = reply_line(agent, "What's the weather in Chengdu?")
    roles = [m["role"] for m in agent.memory.to_api_format()]
    assert roles == ["system", "user", "assistant", "tool"]  # the round, written whole
    assert find_problems(agent.memory.to_api_format()) == []
    return line


def test_an_api_error_mid_turn_keeps_the_tool_round_and_the_memory_valid():
    line = failing_after_the_tools(lambda client: inject_fault(client, "server_error"))
    assert line.startswith("(!) The API answered 500")
    assert line.endswith("[memory: 4 messages, valid]") and "\n" not in line


def test_an_interrupt_mid_turn_keeps_the_memory_valid():
    def ctrl_c(client):
        raise KeyboardInterrupt

    line = failing_after_the_tools(ctrl_c)
    assert line.startswith("(!) Ctrl-C: the model's answer was cancelled")
    assert line.endswith("[memory: 4 messages, valid]")


def test_an_unexpected_error_is_one_line_that_names_it_and_where():
    def bug(client):
        raise ValueError("a bug in a tool callback")

    line = failing_after_the_tools(bug)
    assert line.startswith("(!) Something went wrong: ValueError: a bug in a tool callback "
                           "(raised in test_cli.py, line ")
    assert "\n" not in line
