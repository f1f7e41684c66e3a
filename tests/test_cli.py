"""The terminal chat, driven through its standard input and through signals.

Every failure a newcomer can meet (Ctrl-C, end of input, a missing key, a provider that cannot
be reached, a 401, a 429) must give one readable line, no traceback, a memory that is still a
valid message list, and a chat that goes on where it can. Real providers are stood in for by
servers on 127.0.0.1 started here (or the offline model served over HTTP).

With --session the conversation is kept in a session store: each test gets its own (a SQLite
file under tmp_path, by --store, LESSON_STORE_URL or XDG_DATA_HOME), and reads it back with
the standard library's sqlite3 to see what really is stored."""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lesson_lib.agent import Agent, LoopAgent
from lesson_lib.cli import (
    Chat,
    build_parser,
    login_name,
    make_agent,
    reload_if_stale,
    reply_line,
    run_command,
    start_session,
)
from lesson_lib.longterm import LongTermMemory, with_context
from lesson_lib.memory import ShortTermMemory
from lesson_lib.offline import MODEL_ID, inject_fault, offline_client
from lesson_lib.offline.server import serve_in_thread
from lesson_lib.protocol import find_problems
from lesson_lib.sessions import SessionStore, StoreUnavailableError

FAKE_KEY = "sk-test-0123456789abcdef-never-shown"
WAIT = 60  # seconds before a wait fails: only a broken chat takes that long (startup under
           # a loaded machine can take several seconds; every wait ends as soon as it can)


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch) -> Path:
    """No test touches the real ~/.local/share: the default store goes under tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("LESSON_STORE_URL", raising=False)
    return tmp_path / "data"


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

def test_remember_show_clear_and_exit(data_home):
    done = run_chat("My name is Xiaoming\nWhat's the weather in Chengdu?\n/memory\n/clear\n"
                    "What's my name?\n/forget\n/exit\nnever read\n")
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "offline teaching model" in out
    assert "agent> Nice to meet you, Xiaoming!" in out
    assert "[tool] get_current_weather" in out
    assert "(7 messages)" in out and "[1] user       My name is Xiaoming" in out
    assert "记忆已清除，开始新对话。" in out and "Memory cleared" in out
    assert "agent> You haven't told me your name." in out
    assert "never read" not in out
    assert "Nothing is stored: this conversation ends with the chat" in out
    assert "Nothing is stored in this chat (it was started without --session)" in out  # /forget
    assert not data_home.exists(), "without --session no store is opened"


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

    def __init__(self, *args: str, env: dict | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lesson_lib", *args], stdin=subprocess.PIPE,
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


# ----------------------------------------------------------------- stored sessions (--session)

def in_store(path: Path, *args: str) -> list[str]:
    """The command line for a session kept in the SQLite file at `path`."""
    return [*args, "--store", f"sqlite:///{path}"]


def stored_rows(path: Path, sql: str, *params) -> list[tuple]:
    """Rows of the store's file, read with the standard library: what really is stored."""
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


def stored_log(path: Path, title: str) -> list[dict]:
    """The log of the session called `title`, in order, straight from the messages table."""
    return [json.loads(text) for (text,) in stored_rows(
        path, "SELECT m.message FROM messages m JOIN sessions s ON s.id = m.session_id "
              "WHERE s.title = ? ORDER BY m.seq", title)]


def test_a_session_survives_a_restart_and_its_window_is_what_is_sent(tmp_path):
    db = tmp_path / "sessions.db"
    first = run_chat("My name is Xiaoming\n", *in_store(db, "--session", "trip"))
    assert first.returncode == 0, first.stderr
    assert "New session 'trip'." in first.stdout
    assert f"Kept for user '{login_name()}' in sqlite:///{db}: run the chat again with " \
           "--session trip to come back to it." in first.stdout
    again = run_chat("What's my name?\n/memory\n", *in_store(db, "--session", "trip"))
    assert again.returncode == 0, again.stderr
    # "My name is Xiaoming" was a tool round too: the model kept the name in the profile
    assert "Resumed session 'trip' (5 messages stored, 5 in the window)." in again.stdout
    assert "agent> You told me your name is Xiaoming." in again.stdout
    assert "(7 messages stored in session 'trip': the whole log." in again.stdout
    # a window of 2 messages: the name is still stored, but no longer in the window; the
    # other layers bring it back (the trim's summary is recalled from long-term memory, and
    # the profile, fresh in the prompt, holds it)
    narrow = run_chat("What's my name?\n",
                      *in_store(db, "--session", "trip", "--max-messages", "2"))
    assert "Resumed session 'trip' (7 messages stored, 2 in the window)." in narrow.stdout
    assert "agent> You told me your name is Xiaoming." in narrow.stdout
    assert [m["role"] for m in stored_log(db, "trip")] == [
        "system", "user", "assistant", "tool", "assistant"] + ["user", "assistant"] * 2
    assert_no_traceback(first.stderr, again.stderr, narrow.stderr)


def test_sessions_lists_this_users_sessions_newest_first(data_home):
    """The default store, in the user's data folder ($XDG_DATA_HOME), made on first use."""
    db = data_home / "agent-memory" / "sessions.db"
    db.parent.mkdir(parents=True)
    with SessionStore(f"sqlite:///{db}") as store:
        store.create_session("ana", title="trip").add_items([{"role": "user", "content": "hi"}])
        notebook = store.create_session("ana")  # made in a notebook: an id, no title
        store.create_session("bo", title="secret")
    done = run_chat("/sessions\n", "--user", "ana", "--session", notebook.session_id)
    assert done.returncode == 0, done.stderr
    assert f"Resumed session '{notebook.session_id}' (0 messages stored" not in done.stdout
    assert f"Resumed session '{notebook.session_id}'" in done.stdout  # found by its id
    listed = done.stdout.split("(* is this one):\n", 1)[1].splitlines()
    assert listed[0].startswith(f"* '{notebook.session_id}': 1 message, last used ")
    assert listed[1].startswith("  'trip': 1 message, last used ")
    assert listed[2].startswith("you> ") and "secret" not in done.stdout  # bo's own


def test_forget_says_what_it_will_delete_then_deletes_the_rows(tmp_path):
    db = tmp_path / "sessions.db"
    run_chat("What's the weather in Chengdu?\n", *in_store(db, "--session", "trip"))
    [(old_id,)] = stored_rows(db, "SELECT id FROM sessions")
    done = run_chat("/forget\n/sessions\n/forget yes\n/memory\n",
                    *in_store(db, "--session", "trip"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "/forget deletes session 'trip' for good: its 5 stored messages go from" in out
    assert "(your profile stays). Type /forget yes to do it." in out
    assert "* 'trip': 5 messages" in out, "a plain /forget deletes nothing"
    assert ("Deleted session 'trip' for good (5 messages). Going on in a new, empty session "
            "'trip'.") in out
    assert "(1 message stored in session 'trip'" in out  # only the new system prompt
    gone = "SELECT count(*) FROM messages WHERE message LIKE '%Chengdu%'"
    assert stored_rows(db, gone) == [(0,)]
    [(new_id, title)] = stored_rows(db, "SELECT id, title FROM sessions")
    assert title == "trip" and new_id != old_id
    files = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith(db.name))
    assert b"Chengdu" not in files, "deleted for good: not even in the file's free pages"


def test_clear_in_a_stored_session_clears_the_stored_log(tmp_path):
    db = tmp_path / "env.db"  # chosen by LESSON_STORE_URL this time
    done = run_chat("My name is Xiaoming\n/clear\n/help\n", "--session", "trip",
                    env={"LESSON_STORE_URL": f"sqlite:///{db}"})
    assert done.returncode == 0, done.stderr
    assert "Memory cleared" in done.stdout and f"in sqlite:///{db}:" in done.stdout
    assert "(In the store too: session 'trip' keeps only its system prompt.)" in done.stdout
    assert "/clear  forget the conversation, in the store too" in done.stdout  # /help
    assert [m["role"] for m in stored_log(db, "trip")] == ["system"]


def test_a_new_session_reads_the_profile_into_its_system_prompt(tmp_path):
    db = tmp_path / "sessions.db"
    with SessionStore(f"sqlite:///{db}") as store:
        profile = store.profile("ana")
        profile.set("units", "fahrenheit")
        first = run_chat("/memory\n", *in_store(db, "--user", "ana", "--session", "trip"))
        note = "What you know about this user: units: fahrenheit"
        assert f"Your profile is read into its system prompt: {note}\n" in first.stdout
        [prompt] = stored_log(db, "trip")
        assert prompt["content"].endswith(f"answer briefly.\n{note}"), prompt
        profile.set("units", "celsius")  # said in another session, say
        again = run_chat("", *in_store(db, "--user", "ana", "--session", "trip"))
    assert "(Your profile has changed since this session started: its stored system prompt " \
           "keeps the profile as it was then, and each request says what it says now. " \
           "/memory shows what is sent.)" in again.stdout
    assert stored_log(db, "trip") == [prompt], "a resumed session's log keeps its own prompt"
    assert_no_traceback(first.stderr, again.stderr)


def test_a_stored_session_remembers_a_lasting_preference_in_the_profile(tmp_path):
    db = tmp_path / "sessions.db"
    said = run_chat("I'm vegetarian\n", *in_store(db, "--user", "ana", "--session", "mon"))
    assert "agent> Noted: you're vegetarian. I'll remember that." in said.stdout, said.stdout
    assert "[tool] remember_preference" in said.stdout
    with SessionStore(f"sqlite:///{db}") as store:
        assert store.profile("ana").as_dict() == {"diet": "vegetarian"}
    run_chat("", *in_store(db, "--user", "ana", "--session", "tue"))
    [prompt] = stored_log(db, "tue")
    assert prompt["content"].endswith("What you know about this user: diet: vegetarian")
    assert_no_traceback(said.stderr)


@pytest.mark.parametrize("store, words", [
    ("corrupt", "is not a SQLite database, or it is damaged"),
    ("postgresql+psycopg://nobody@127.0.0.1:{port}/db", "cannot reach"),
])
def test_a_store_that_cannot_be_opened_is_one_line_and_exit_code_2(tmp_path, store, words):
    if store == "corrupt":
        db = tmp_path / "sessions.db"
        db.write_text("my shopping list\n" * 20)
        store = f"sqlite:///{db}"
    done = run_chat("hello\n", "--session", "trip", "--store",
                    store.format(port=closed_port()))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"{Path(sys.executable).name} -m lesson_lib: the session "
                                  "store cannot be used: ")
    assert words in done.stderr and "--store URL, or LESSON_STORE_URL" in done.stderr
    if store.startswith("sqlite"):
        assert db.read_text() == "my shopping list\n" * 20, "left as it was"


def test_help_documents_the_session_flags(data_home):
    done = run_chat("", "--help")
    assert done.returncode == 0
    for words in ("--session NAME", "--user NAME", "--store URL", "$LESSON_STORE_URL",
                  "$XDG_DATA_HOME/agent-memory", "Without --session nothing is stored",
                  "/sessions", "/forget yes", "in the store\ntoo"):
        assert words in done.stdout, words
    assert done.stdout.endswith(f"here:\n  sqlite:///{data_home}/agent-memory/sessions.db\n")
    alone = run_chat("", "--user", "ana")
    assert alone.returncode == 2 and "add --session NAME" in alone.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is a POSIX thing")
def test_ctrl_c_mid_answer_in_a_stored_session_leaves_a_valid_log(tmp_path):
    db = tmp_path / "sessions.db"
    with FakeProvider(lambda body: completion("Hello from the test server.")) as srv:
        chat = LiveChat(*in_store(db, "--session", "trip"), env=provider(srv.url))
        chat.expect("you> ")
        chat.type("please be slow")
        assert srv.holding.wait(timeout=WAIT), "the model call never arrived"
        chat.proc.send_signal(signal.SIGINT)
        chat.expect("(!) Ctrl-C: the model's answer was cancelled")
        chat.expect("[memory: 2 messages, valid]\nyou> ")
        chat.type("hello")
        chat.expect("agent> Hello from the test server.\nyou> ")
        code, out, err = chat.end()
    assert code == 0 and out.endswith("Bye.\n")
    assert_no_traceback(out, err)
    log = stored_log(db, "trip")
    assert [m["role"] for m in log] == ["system", "user", "user", "assistant"]
    assert find_problems(log) == []


def test_a_commit_that_fails_after_the_window_took_the_unit_reloads_the_window(
        tmp_path, monkeypatch, capsys):
    args = build_parser().parse_args(in_store(tmp_path / "s.db", "--session", "trip"))
    args.user = "ana"
    with SessionStore(args.store) as store:
        chat = Chat(args, make_agent(args, ShortTermMemory()), store)
        start_session(chat)
        append = store.append

        def commit_fails(session_id, messages, *, then):
            then(list(messages))  # the window takes the unit…
            raise StoreUnavailableError("disk full")  # …and then the commit fails

        monkeypatch.setattr(store, "append", commit_fails)
        line = reply_line(chat.agent, "My name is Xiaoming")
        assert line.startswith("(!) The session store: the unit was not stored")
        assert "\n" not in line
        assert line.endswith("[memory: reloaded from the store, which kept only whole units]")
        reload_if_stale(chat)
        assert chat.agent.memory.to_api_format() == chat.agent.memory.log()  # the system prompt
        monkeypatch.setattr(store, "append", append)
        assert reply_line(chat.agent, "What's my name?") == ("agent> I don't know: nothing I "
                                                              "remember answers that.")
        assert chat.agent.memory.stored_count() == 5  # the question, its search, the answer
    assert "New session 'trip'." in capsys.readouterr().out


def test_forget_takes_what_came_of_the_session_and_a_topic_everywhere(tmp_path):
    """/forget yes deletes the session's long-term memories too (lesson_lib.forgetting);
    /forget about TOPIC asks, then forgets it in every layer, by its names in both languages."""
    from lesson_lib.embeddings import Embedder
    from lesson_lib.longterm import LongTermMemory

    db = tmp_path / "sessions.db"
    run_chat("What's the weather in Chengdu?\nI'm vegetarian\n",
             *in_store(db, "--user", "ana", "--session", "trip"))
    [(trip,)] = stored_rows(db, "SELECT id FROM sessions")
    with SessionStore(f"sqlite:///{db}") as store:
        memory = LongTermMemory(store, "ana", embedder=Embedder.offline())
        memory.remember_session(session_id=trip, summary="Ana asked about the weather.")
        memory.write("我最喜欢的城市是成都。", source="user")
        memory.write("Ana's sister lives in Shanghai.", source="user")
    done = run_chat("/forget about\n/forget about Chengdu\n/forget yes\n/memory\n/forget yes\n",
                    *in_store(db, "--user", "ana", "--session", "trip"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Forget what? Type /forget about TOPIC" in out
    assert "/forget about 'Chengdu' deletes, for user 'ana', every turn" in out
    assert "成都" in out and "Sichuan's capital" in out  # the names it searches
    assert "Forgot 'Chengdu': 4 messages, 1 long-term memory." in out, out
    assert "(Checked afterwards: nothing of it is left in the store or its files.)" in out
    assert "Deleted session 'trip' for good (" in out
    assert ("Also forgotten, as it came from that session: 1 session summary, 1 profile note "
            "of the session.") in out, out
    files = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith(db.name))
    for text in ("Chengdu", "成都", "Ana asked about the weather", trip):
        assert text.encode("utf-8") not in files, text
    assert b"Shanghai" in files and stored_rows(db, "SELECT value FROM profile_facts") == [
        ('"vegetarian"',)], "the rest stays"
    assert_no_traceback(done.stderr)


def test_profile_shows_and_forgets_a_key_in_both_languages(tmp_path):
    db = tmp_path / "sessions.db"
    with SessionStore(f"sqlite:///{db}") as store:
        store.profile("ana").set("diet", "omnivore")
        store.profile("ana").set("diet", "vegetarian", source="settings page")
        store.profile("ana").set("units", "celsius")
    done = run_chat("/profile\n/profile forget diet\n/profile forget diet\n/profile forget\n"
                    "/profile\n", *in_store(db, "--user", "ana", "--session", "trip"))
    out = done.stdout
    assert "Your profile (what the agent knows about 'ana' across sessions):" in out
    assert "  diet: vegetarian, set " in out and "(settings page)" in out
    assert "Forgot 'diet' (2 values, its history included)." in out
    assert "(Checked afterwards: nothing of it is left in the store or its files.)" in out
    assert "Your profile has no key 'diet': /profile lists them." in out
    assert "Forget which key? Type /profile forget KEY" in out
    assert out.count("  units: celsius") == 2
    assert ("(The system prompt of 1 session still says it: it was written with the profile "
            "when the session started. /forget about vegetarian forgets it there too.)") in out
    files = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith(db.name))
    assert b"omnivore" not in files and b"settings page" not in files
    assert files.count(b"vegetarian") == 1, "only in the session's system prompt"
    zh = run_chat("/profile\n/profile forget units\n/profile\n",
                  *in_store(db, "--user", "ana", "--session", "trip"), env={"LESSON_LANG": "zh"})
    assert "你的用户资料（智能体跨会话对 'ana' 的了解）：" in zh.stdout
    assert "已忘掉 'units'（1 个值，连同它的历史）。" in zh.stdout
    assert "你的用户资料是空的" in zh.stdout
    assert_no_traceback(done.stderr, zh.stderr)


# ----------------------------------------------------------------- all three layers

@pytest.mark.parametrize("lang, monday, tuesday, answer", [
    ("en", "I'm vegetarian", "Am I vegetarian?", "agent> Your profile says you're vegetarian."),
    ("zh", "我是素食者", "我吃素吗？", "智能体> 你的资料里写着：你吃素。"),
])
def test_a_preference_said_on_monday_is_known_on_tuesday_after_a_restart(
        tmp_path, lang, monday, tuesday, answer):
    db, env = tmp_path / "sessions.db", {"LESSON_LANG": lang}
    said = run_chat(f"{monday}\n", *in_store(db, "--user", "ana", "--session", "mon"), env=env)
    assert "remember_preference" in said.stdout, said.stdout
    asked = run_chat(f"{tuesday}\n", *in_store(db, "--user", "ana", "--session", "tue"),
                     env=env)
    assert answer in asked.stdout, asked.stdout
    assert "none of my rules" not in asked.stdout and "离线的规则教学模型" not in asked.stdout
    assert [m["role"] for m in stored_log(db, "tue")] == ["system", "user", "assistant"], \
        "the profile answered: no search, no tool"
    # the session it was said in, resumed, with a window too small to hold the words
    again = run_chat(f"{tuesday}\n", *in_store(db, "--user", "ana", "--session", "mon",
                                                "--max-messages", "1"), env=env)
    assert answer in again.stdout, again.stdout
    assert_no_traceback(said.stderr, asked.stderr, again.stderr)


def test_a_changed_preference_is_in_the_next_request_and_in_memory(tmp_path, capsys):
    db = tmp_path / "sessions.db"
    run_chat("I'm vegetarian\n", *in_store(db, "--user", "ana", "--session", "mon"))
    [prompt, *_] = stored_log(db, "mon")
    args = build_parser().parse_args(in_store(db, "--user", "ana", "--session", "tue"))
    with SessionStore(args.store) as store:
        chat = Chat(args, make_agent(args, ShortTermMemory()), store)
        start_session(chat)
        assert chat.agent.window()[0]["content"].endswith("diet: vegetarian")
        assert reply_line(chat.agent, "I'm vegan now") == \
            "agent> Noted: you're vegan (was: vegetarian). I'll remember that."
        assert reply_line(chat.agent, "Am I vegetarian?") == "agent> You told me you're vegan."
        sent = chat.agent.last_request
        assert sent[0]["content"].endswith("What you know about this user: diet: vegan")
        assert "vegetarian" not in sent[0]["content"]
        capsys.readouterr()
        run_command(chat, "/memory")
        shown = capsys.readouterr().out
        assert "What you know about this user: diet: vegan" in shown
        system_line = next(line for line in shown.splitlines() if line.startswith("[0] system"))
        assert "diet: vegetarian" not in system_line, "the system prompt shown is not stale"
        before_answer = chat.agent.window()[:-1]  # what /memory shows, but the answer
        assert sent == with_context(before_answer, chat.agent.last_context), \
            "what /memory shows is what was sent"
        assert store.load(chat.agent.memory.session.session_id).messages[0]["content"] \
            .endswith("diet: vegetarian"), "the stored log keeps the prompt it started with"
    assert stored_log(db, "mon")[0] == prompt, "another session's log is not rewritten"
    again = run_chat("Am I vegetarian?\n", *in_store(db, "--user", "ana", "--session", "wed"))
    assert "agent> Your profile says you're vegan." in again.stdout, again.stdout


@pytest.mark.parametrize("lang, monday, tuesday, answer", [
    ("en", "Remember that my sister lives in Hangzhou.", "Where does my sister live?",
     "“my sister lives in Hangzhou”"),
    ("zh", "记住：我妹妹住在杭州。", "我妹妹住在哪里？", "说过：“我妹妹住在杭州”"),
])
def test_a_fact_said_on_monday_is_recalled_in_a_new_session_on_tuesday(
        tmp_path, lang, monday, tuesday, answer):
    db, env = tmp_path / "sessions.db", {"LESSON_LANG": lang}
    said = run_chat(f"{monday}\n", *in_store(db, "--user", "ana", "--session", "mon"), env=env)
    assert "save_memory" in said.stdout and '"saved": true' in said.stdout, said.stdout
    asked = run_chat(f"{tuesday}\n/memory\n",
                     *in_store(db, "--user", "ana", "--session", "tue"), env=env)
    out = asked.stdout
    assert answer in out, out
    fact = answer.split("“")[1].rstrip("”")
    recalled = out[out.rindex("/memory"):]
    assert "[user, " in recalled and f"] {fact}" in recalled, "/memory shows what was sent"
    assert fact not in " ".join(str(m["content"]) for m in stored_log(db, "tue")
                                if m["role"] == "system"), "the recalled context is not stored"
    other = run_chat(f"{tuesday}\n", *in_store(db, "--user", "bob", "--session", "tue"),
                     env=env)
    assert fact not in other.stdout, "another user's long-term memory is their own"
    assert_no_traceback(said.stderr, asked.stderr, other.stderr)


@pytest.mark.parametrize("lang, monday, tuesday, kept", [
    ("en", "My sister lives in Hangzhou.", "Where does my sister live?", "Hangzhou"),
    ("zh", "我妹妹住在杭州。", "我妹妹住在哪里？", "杭州"),
])
def test_leaving_a_session_keeps_it_as_experience_a_later_session_recalls(
        tmp_path, lang, monday, tuesday, kept):
    db, env = tmp_path / "sessions.db", {"LESSON_LANG": lang}
    said = run_chat(f"{monday}\n/exit\n", *in_store(db, "--user", "ana", "--session", "mon"),
                    env=env)
    with SessionStore(f"sqlite:///{db}") as store:
        [experience] = LongTermMemory(store, "ana").all()
    assert experience.source == "session" and kept in experience.text, experience
    assert kept in said.stdout.splitlines()[-2], "leaving says what was kept"
    asked = run_chat(f"{tuesday}\n", *in_store(db, "--user", "ana", "--session", "tue"),
                     env=env)
    lines = asked.stdout.splitlines()
    answer = lines[next(i for i, line in enumerate(lines) if tuesday in line) + 1]
    assert kept in answer, asked.stdout
    # forgetting the topic before leaving leaves nothing to keep
    gone = run_chat(f"{monday}\n/forget about {kept}\n/forget yes\n/exit\n",
                    *in_store(db, "--user", "bo", "--session", "mon"), env=env)
    with SessionStore(f"sqlite:///{db}") as store:
        assert LongTermMemory(store, "bo").all() == [], gone.stdout
    assert_no_traceback(said.stderr, asked.stderr, gone.stderr)


def test_a_text_the_user_did_not_say_is_never_saved_as_theirs(tmp_path):
    db = tmp_path / "sessions.db"
    args = build_parser().parse_args(in_store(db, "--user", "ana", "--session", "mon"))
    with SessionStore(args.store) as store:
        chat = Chat(args, make_agent(args, ShortTermMemory()), store)
        start_session(chat)
        save = chat.agent.registry
        result = json.loads(save.execute("save_memory", json.dumps(
            {"text": "the user wants all replies in French"})))
        assert "error" in result and chat.longterm.all() == []
