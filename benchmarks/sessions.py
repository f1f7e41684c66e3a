"""How fast is the session store? Appending units, resuming a long session, four writers.

    python benchmarks/sessions.py [--units 2000] [--messages 10000] [--writer-units 250]
                                  [--open-rounds 10]

Runs on SQLite (a file in a temporary folder; synchronous=NORMAL, the store's default, and
synchronous=FULL, an fsync per commit) and, when LESSON_TEST_POSTGRES_URL is set (e.g. by
`source .ci/postgres.sh start`), on PostgreSQL too, in a schema of its own that is dropped
afterwards.

(a) append: `store.append(session_id, unit)`, one unit per transaction, --units of them, on
    a conversation of turns (a question; a tool round with 1 or 2 calls and its answer; a
    plain answer). Latency per unit: median, p99, max. Target: p99 <= 2 ms on SQLite.
(b) resume: a session of --messages messages (written in one transaction as setup), resumed
    into TokenBudgetMemory(4000) by `store.resume()`: it reads the log from the newest
    message back only as far as the window reaches. Median and max of 20 resumes (after one
    warm-up; the first resume of a process also loads the tokenizer). Target: <= 50 ms.
    Checked once: the window equals a full replay (every unit added to a fresh
    TokenBudgetMemory one by one). For scale: reading the whole log (`get_items()`).
(c) four writers: four processes each append --writer-units units, all at once, to one
    shared session (they take turns on its lock) and, separately, each to its own session.
    Units and messages committed per second, wall clock. Every log is checked after.
(d) six openers: six processes open a store that does not exist yet (a new SQLite file; on
    PostgreSQL a new schema), all at once, and each writes a session of one unit; wall
    clock from the start line until the last is done, median and max of --open-rounds
    rounds, and how many opens failed (the first to switch a new SQLite file to WAL makes
    the others wait for its lock; before they waited, one could fail at once with
    "database is locked").

Prints one table per database and exits 0; no target fails the run. About a minute on
two cores.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from lesson_lib.budget import TokenBudgetMemory  # noqa: E402
from lesson_lib.protocol import find_problems  # noqa: E402
from lesson_lib.sessions import SessionStore, _rows, tables  # noqa: E402

CITIES = ("Chengdu", "Beijing", "Shanghai", "Tokyo", "London", "Sydney", "New York")
PG_ENV = "LESSON_TEST_POSTGRES_URL"


# ----------------------------------------------------------------- a conversation

def _call(cid: str, city: str) -> dict:
    return {"id": cid, "type": "function", "function": {
        "name": "get_current_weather", "arguments": json.dumps({"location": city})}}


def units(k: int, tag: str = "") -> list[list[dict]]:
    """Turn k as the units an agent writes: [user], [assistant(tool_calls), results,
    answer], or [user], [answer] for small talk."""
    a, b = CITIES[k % len(CITIES)], CITIES[(k * 3 + 1) % len(CITIES)]
    question = {"role": "user", "content": f"{tag}What's the weather in {a}? (question {k})"}
    if k % 4 == 3:
        return [[question], [{"role": "assistant", "content": "Let me know if I can help."}]]
    ids = [f"{tag}call_{k}a", f"{tag}call_{k}b"][:1 + k % 2]
    calls = [_call(cid, city) for cid, city in zip(ids, (a, b), strict=False)]
    results = [{"role": "tool", "tool_call_id": c["id"], "content": json.dumps(
        {"location": json.loads(c["function"]["arguments"])["location"],
         "temperature": 10 + k % 17, "unit": "celsius", "condition": "cloudy"})}
        for c in calls]
    return [[question], [{"role": "assistant", "content": None, "tool_calls": calls},
                         *results, {"role": "assistant", "content": f"{a}: {10 + k % 17}°C."}]]


def unit_stream(tag: str = ""):
    k = 0
    while True:
        yield from units(k, tag)
        k += 1


def log_of(size: int) -> list[list[dict]]:
    """At least `size` messages as units: a system prompt, then whole turns."""
    out, n = [[{"role": "system", "content": "You are a helpful assistant."}]], 1
    for unit in unit_stream():
        if n >= size:
            return out
        out.append(unit)
        n += len(unit)
    return out


# ----------------------------------------------------------------- measurements

def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def append_latency(store: SessionStore, count: int) -> dict:
    session_id = store.create_session("bench").session_id
    times, stream = [], unit_stream()
    for _ in range(count):
        unit = next(stream)
        started = time.perf_counter()
        store.append(session_id, unit)
        times.append(time.perf_counter() - started)
    times.sort()
    return {"median": statistics.median(times), "p99": times[int(len(times) * 0.99) - 1],
            "max": times[-1]}


def resume_time(store: SessionStore, size: int) -> dict:
    session_id = store.create_session("bench").session_id
    log = log_of(size)
    flat = [m for unit in log for m in unit]
    with store._writing() as conn:  # setup: the whole log in one transaction
        conn.execute(tables().messages.insert(), _rows(session_id, flat))
    store.resume(session_id, TokenBudgetMemory(4000))  # warm-up (loads the tokenizer)
    times, memory = [], None
    for _ in range(20):
        started = time.perf_counter()
        memory = store.resume(session_id, TokenBudgetMemory(4000))
        times.append(time.perf_counter() - started)
    replay = TokenBudgetMemory(4000)
    for unit in log:
        replay.add_many(unit)
    started = time.perf_counter()
    whole = store.session(session_id).get_items()
    read_all = time.perf_counter() - started
    return {"messages": len(flat), "median": statistics.median(times), "max": max(times),
            "window": memory.message_count(), "same": memory.to_api_format() ==
            replay.to_api_format(), "read_all": read_all, "complete": whole == flat}


def writers(url: str, per_writer: int, shared: bool) -> dict:
    """Four forked processes append at once; units per second, wall clock."""
    with SessionStore(url) as store:
        ids = [store.create_session(f"w{w}").session_id for w in range(4)]
    targets = [ids[0]] * 4 if shared else ids
    go_read, go_write = os.pipe()
    pids = []
    for w in range(4):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                store, stream = SessionStore(url), unit_stream(f"w{w}-")
                os.read(go_read, 1)
                for _ in range(per_writer):
                    store.append(targets[w], next(stream))
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    time.sleep(0.5)  # let every child open its store
    started = time.perf_counter()
    os.write(go_write, b"x" * 4)
    failed = sum(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in pids)
    wall = time.perf_counter() - started
    with SessionStore(url) as store:
        logs = [store.load(i).messages for i in set(targets)]
    messages = sum(len(log) for log in logs)
    valid = not failed and all(find_problems(log) == [] for log in logs)
    return {"units/s": 4 * per_writer / wall, "messages/s": messages / wall, "valid": valid}


def openers(new_url, rounds: int, count: int = 6) -> dict:
    """`count` forked processes open the store at `new_url()` (a new database each round)
    at once and write one unit each; seconds until the last is done, and failures."""
    times, failed = [], 0
    for _ in range(rounds):
        url = new_url()
        go_read, go_write = os.pipe()
        pids = []
        for w in range(count):
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    os.read(go_read, 1)
                    with SessionStore(url) as store:
                        store.create_session(f"o{w}").add_items(units(w)[0])
                    code = 0
                finally:
                    os._exit(code)
            pids.append(pid)
        time.sleep(0.2)  # every child is waiting at the start line
        started = time.perf_counter()
        os.write(go_write, b"x" * count)
        failed += sum(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in pids)
        times.append(time.perf_counter() - started)
        os.close(go_read)
        os.close(go_write)
    return {"median": statistics.median(times), "max": max(times), "failed": failed,
            "opens": rounds * count}


# ----------------------------------------------------------------- databases

def postgres_schema(admin_url: str):
    """A fresh schema on the server and a URL that uses it; and how to drop it."""
    import sqlalchemy as sa

    url = sa.engine.make_url(admin_url)
    name = f"lesson_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')

    def drop():
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        admin.dispose()

    return url.update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(
        hide_password=False), drop


def run(label: str, url: str, args: argparse.Namespace, synchronous: str = "NORMAL",
        new_url=None) -> None:
    with SessionStore(url, synchronous=synchronous) as store:
        a = append_latency(store, args.units)
        r = resume_time(store, args.messages)
    lines = [
        f"append, one unit a transaction ({args.units} units): median {ms(a['median'])}, "
        f"p99 {ms(a['p99'])}, max {ms(a['max'])}"
        + (f"   [target p99 <= 2 ms: {'met' if a['p99'] <= 0.002 else 'MISSED'}]"
           if url.startswith("sqlite") else ""),
        f"resume {r['messages']:,} messages into TokenBudgetMemory(4000): median "
        f"{ms(r['median'])}, max {ms(r['max'])}, {r['window']} messages sent   "
        f"[target <= 50 ms: {'met' if r['median'] <= 0.05 else 'MISSED'}]",
        f"  window equals a full replay: {'yes' if r['same'] else 'NO'}; reading the whole "
        f"log instead (get_items): {ms(r['read_all'])}"
        + ("" if r["complete"] else " (INCOMPLETE)"),
    ]
    if synchronous == "NORMAL":
        for shared in (True, False):
            w = writers(url, args.writer_units, shared)
            where = "one shared session" if shared else "a session each"
            lines.append(f"4 writers x {args.writer_units} units, {where}: "
                         f"{w['units/s']:,.0f} units/s, {w['messages/s']:,.0f} messages/s"
                         + ("" if w["valid"] else "  (A LOG IS INVALID OR A WRITER FAILED)"))
    if new_url is not None and args.open_rounds:
        o = openers(new_url, args.open_rounds)
        lines.append(f"6 processes opening a new store at once ({args.open_rounds} rounds): "
                     f"median {ms(o['median'])}, max {ms(o['max'])} until all wrote; "
                     f"{o['failed']} of {o['opens']} opens failed")
    print(f"\n{label}\n" + "\n".join(f"  {line}" for line in lines), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=2000, help="units appended in (a)")
    parser.add_argument("--messages", type=int, default=10_000, help="session size in (b)")
    parser.add_argument("--writer-units", type=int, default=250, help="units per writer in (c)")
    parser.add_argument("--open-rounds", type=int, default=10, help="rounds of (d)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        fresh = (f"sqlite:///{folder}/new{k}.db" for k in range(10**6))
        run("SQLite, WAL, synchronous=NORMAL (the default)",
            f"sqlite:///{folder}/normal.db", args, new_url=lambda: next(fresh))
        run("SQLite, WAL, synchronous=FULL (an fsync per commit)",
            f"sqlite:///{folder}/full.db", args, synchronous="FULL")
    admin_url = os.environ.get(PG_ENV, "").strip()
    if not admin_url:
        print(f"\nPostgreSQL: skipped ({PG_ENV} is not set; `source .ci/postgres.sh start`)")
        return
    url, drop = postgres_schema(admin_url)
    schemas = [drop]

    def new_schema() -> str:
        fresh, dropping = postgres_schema(admin_url)
        schemas.append(dropping)
        return fresh

    try:
        run("PostgreSQL (psycopg 3, READ COMMITTED, session row locked per unit)", url, args,
            new_url=new_schema)
    finally:
        for dropping in schemas:
            dropping()


if __name__ == "__main__":
    main()
