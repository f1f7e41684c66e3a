"""The session store under real processes: killed with SIGKILL mid-conversation, and four
writing to one store at once, on SQLite (WAL) and PostgreSQL.

Children are forked from the test process (everything is imported already, so a child
starts in milliseconds) and talk back through a pipe; each opens its own store, as a
separate process would. The parent holds no open connection while it forks.
"""

from __future__ import annotations

import os
import random
import signal
import time
import traceback

from messages import answer, asks, result, user
from test_sessions import rows

from lesson_lib.memory import ShortTermMemory
from lesson_lib.protocol import find_problems
from lesson_lib.sessions import SessionStore

TRIALS = 60          # SIGKILLs per database
WRITERS, UNITS = 4, 40  # concurrent processes, and units each writes to each session



def unit(tag: str, k: int) -> list[dict]:
    """Unit k of writer `tag`: a question, a tool round of 1-3 parallel calls and its
    answer, or a plain answer; its messages all carry the tag and k."""
    ids = [f"{tag}-{k}-{j}" for j in range(k % 3 + 1)]
    return [[user(f"{tag} q{k}")],
            [asks(*ids), *[result(i, f"{tag} r{k}") for i in reversed(ids)], answer(f"{tag} a{k}")],
            [answer(f"{tag} a{k}")]][k % 3]


def fork(child) -> tuple[int, int]:
    """Run child(write_fd) in a forked process; returns (pid, read_fd). A child that fails
    writes its traceback to the pipe, where the parent's checks show it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 1
        try:
            child(write)
            code = 0
        except BaseException:
            os.write(write, f"\nCHILD FAILED:\n{traceback.format_exc()}".encode())
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode()


# ----------------------------------------------------------------- SIGKILL

def test_a_process_killed_at_random_points_never_leaves_half_a_unit(url):
    """Each trial, a child resumes the same session and writes units in a loop (through
    StoredMemory, as an agent does), reporting each one after its commit returns; it is
    SIGKILLed after a random delay (while opening, resuming, writing or committing)."""
    rng = random.Random(20260501)
    with SessionStore(url) as store:
        session_id = store.create_session("u").session_id
    expected: list[dict] = []
    for trial in range(TRIALS):
        def child(fd, trial=trial):
            memory = SessionStore(url).resume(session_id, ShortTermMemory(max_messages=6))
            for k in range(10_000):
                memory.add_many(unit(f"t{trial}", k))
                os.write(fd, f"{k}\n".encode())  # reported only after the commit returned

        pid, fd = fork(child)
        time.sleep(rng.uniform(0.0, 0.08))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        report = read_all(fd)
        assert "CHILD FAILED" not in report, report
        reported = [int(k) for k in report.split()]
        with SessionStore(url) as store:
            log, changes = store.load(session_id)
            assert changes == [], "units alone never leave a log to repair"
            new = log[len(expected):]
            assert log[:len(expected)] == expected, "earlier trials' units are untouched"
            committed = _whole_units(new, f"t{trial}")
            assert committed[:len(reported)] == reported, "every reported unit is there"
            assert len(committed) <= len(reported) + 1, "at most the one not yet reported"
            assert find_problems(log) == [] or not log
            assert [r[0] for r in rows(store, session_id)] == list(range(len(log)))
        expected = log


def _whole_units(new: list[dict], tag: str) -> list[int]:
    """The unit numbers `new` consists of, in order: it must be whole units 0, 1, 2 …"""
    ks, at = [], 0
    while at < len(new):
        k = len(ks)
        want = unit(tag, k)
        assert new[at:at + len(want)] == want, f"unit {k} of {tag} is not whole at {at}"
        ks.append(k)
        at += len(want)
    return ks


# ----------------------------------------------------------------- four writers at once

def test_four_processes_appending_at_once_lose_nothing_and_never_interleave_a_unit(url):
    """Four children each write UNITS units to one shared session and UNITS to their own,
    all at once; then every session is valid, gap-free, and holds every unit whole, each
    writer's in its own order."""
    with SessionStore(url) as store:
        shared = store.create_session("team").session_id
        own = [store.create_session(f"w{w}").session_id for w in range(WRITERS)]
    go_read, go_write = os.pipe()  # a start line: every child waits for one byte

    def writer(w):
        def child(fd):
            store = SessionStore(url)
            os.read(go_read, 1)
            for k in range(UNITS):
                store.append(shared, unit(f"w{w}", k))
                store.append(own[w], unit(f"w{w}", k))
            os.write(fd, b"done")
        return child

    children = [fork(writer(w)) for w in range(WRITERS)]
    os.write(go_write, b"x" * WRITERS)
    for pid, fd in children:
        assert read_all(fd) == "done"
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    os.close(go_read)
    os.close(go_write)
    with SessionStore(url) as store:
        log = store.load(shared).messages
        assert find_problems(log) == []
        assert [r[0] for r in rows(store, shared)] == list(range(len(log)))
        for w in range(WRITERS):
            tag = f"w{w}"
            mine = [m for m in log if tag in _text(m)]
            assert mine == [m for k in range(UNITS) for m in unit(tag, k)], "all, in order"
            assert _contiguous(log, tag), "no other writer's message inside one of its units"
            assert store.load(own[w]).messages == mine
        assert sum(len(unit("w", k)) for k in range(UNITS)) * WRITERS == len(log)


def _text(message: dict) -> str:
    return str(message.get("content")) + str(message.get("tool_call_id")) + str(
        [c["id"] for c in message.get("tool_calls") or []])


def _contiguous(log: list[dict], tag: str) -> bool:
    """Each of `tag`'s units appears as one unbroken run in the log."""
    k, at = 0, 0
    while k < UNITS:
        want = unit(tag, k)
        while at < len(log) and log[at] != want[0]:
            at += 1
        if log[at:at + len(want)] != want:
            return False
        k, at = k + 1, at + len(want)
    return True
