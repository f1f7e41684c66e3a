"""Forgetting (lesson_lib.forgetting): how well a topic is found, and how long forgetting takes.

    python benchmarks/forgetting.py [--sizes 10,100,1000] [--skip-timing]

(a) Finding a topic (class Topic, the default embedder's vectors called directly: the
    offline model's unless the backend switch says otherwise): for each case of
    benchmarks/forgetting_cases.py, is each text that says the topic found (recall) and is
    each text that does not left alone (false positives)? DEV is what MARGIN and FLOOR were
    chosen on; HELD_OUT was scored once with the chosen values. Also the grid of floors that
    choice was made from, on DEV only.
(b) Time to forget a user: a store holding two users, each with N sessions of 13 messages
    (a question, a tool round, an answer; English and Chinese), N long-term memories and a
    profile of 5 keys; `forget_user(store, one of them)`, wall clock, median of 3 rounds
    (each on a fresh store), and the part of it the proof took (verify_forgotten: every
    layer again, and the files byte by byte). On SQLite (a file in a temporary folder) and,
    when LESSON_TEST_POSTGRES_URL is set (`source .ci/postgres.sh start`), on PostgreSQL in
    a schema of its own (with its VACUUM FULL; the files are searched when the server's data
    directory can be read).

Prints its tables and exits 0; no target fails the run.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from forgetting_cases import DEV, HELD_OUT  # noqa: E402

from lesson_lib import forgetting  # noqa: E402
from lesson_lib.embeddings import Embedder  # noqa: E402
from lesson_lib.forgetting import FLOOR, MARGIN, Topic, forget_user  # noqa: E402
from lesson_lib.longterm import LongTermMemory  # noqa: E402
from lesson_lib.sessions import SessionStore  # noqa: E402

PG_ENV = "LESSON_TEST_POSTGRES_URL"


# ----------------------------------------------------------------- (a) finding a topic

def score(cases: dict, embedder, margin: float = MARGIN, floor: float = FLOOR) -> dict:
    found = missed = wrong = 0
    by_meaning = 0
    misses, wrongs = [], []
    for about, case in cases.items():
        topic = Topic(about, embedder=embedder, margin=margin, floor=floor)
        for text, why in zip(case["says"], topic.reasons(case["says"]), strict=True):
            if why is None:
                missed += 1
                misses.append(f"{about}: {text}")
            else:
                found += 1
                by_meaning += why.startswith("meaning")
        for text, why in zip(case["not"], topic.reasons(case["not"]), strict=True):
            if why is not None:
                wrong += 1
                wrongs.append(f"{about}: {text} ({why})")
    return {"found": found, "of": found + missed, "wrong": wrong,
            "not": sum(len(c["not"]) for c in cases.values()), "by_meaning": by_meaning,
            "misses": misses, "wrongs": wrongs}


def finding(embedder) -> None:
    print(f"(a) finding a topic, embedder {embedder.name}; MARGIN {MARGIN}, FLOOR {FLOOR}")
    print("    DEV, the grid the floor was chosen on (margin 0.10):")
    for floor in (0.4, 0.5, 0.6, 0.7, 0.8):
        s = score(DEV, embedder, floor=floor)
        print(f"      floor {floor:.2f}: found {s['found']}/{s['of']} "
              f"({s['by_meaning']} by meaning), wrongly taken {s['wrong']}/{s['not']}")
    for name, cases in (("DEV", DEV), ("HELD_OUT", HELD_OUT)):
        s = score(cases, embedder)
        print(f"    {name}: found {s['found']}/{s['of']} ({s['by_meaning']} by meaning), "
              f"wrongly taken {s['wrong']}/{s['not']}")
        for line in s["misses"]:
            print(f"      missed: {line}")
        for line in s["wrongs"]:
            print(f"      WRONG:  {line}")


# ----------------------------------------------------------------- (b) time to forget a user

def _turn(k: int) -> list[list[dict]]:
    city, zh = (("Chengdu", "成都"), ("Tokyo", "东京"), ("London", "伦敦"))[k % 3]
    cid = f"call_{k}"
    args = f'{{"location": "{zh if k % 2 else city}"}}'
    return [[{"role": "user", "content": f"What's the weather in {city}? 第{k}次问{zh}的天气。"}],
            [{"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function",
                 "function": {"name": "get_current_weather", "arguments": args}}]},
             {"role": "tool", "tool_call_id": cid, "content": f"{zh}多云，{10 + k % 20}°C"}],
            [{"role": "assistant", "content": f"It is cloudy in {city}, {10 + k % 20}°C."}]]


def fill(store: SessionStore, user: str, n: int, embedder) -> None:
    for s in range(n):
        session = store.create_session(user, title=f"{user} chat {s}")
        session.add_items([{"role": "system", "content": "You are a helpful assistant."}])
        for k in range(3):  # 1 + 3 × 4 = 13 messages
            for unit in _turn(s * 3 + k):
                session.add_items(unit)
    memory = LongTermMemory(store, user, embedder=embedder)
    texts = [f"{user} note {i}: " + ("我住在成都，喜欢喝茶。" if i % 2 else "I took the train to "
                                     f"Tokyo on day {i}.") for i in range(n)]
    memory.write_many(texts, source="user")
    profile = store.profile(user)
    for key, value in (("name", user), ("diet", "vegetarian"), ("units", "celsius"),
                       ("home", "成都"), ("project", "compiler")):
        profile.set(key, value)


def one_round(url: str, n: int, embedder) -> tuple[float, float, bool]:
    with SessionStore(url) as store:
        fill(store, "xiaoming", n, embedder)
        fill(store, "laozhang", n, embedder)
        proving = []
        real = forgetting.verify_forgotten

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                proving.append(time.perf_counter() - start)

        forgetting.verify_forgotten = timed
        try:
            start = time.perf_counter()
            report = forget_user(store, "xiaoming")
            total = time.perf_counter() - start
        finally:
            forgetting.verify_forgotten = real
        return total, sum(proving), report.ok


def timing(name: str, urls, sizes: list[int], embedder) -> None:
    print(f"(b) time to forget a user, {name}: N sessions of 13 messages, N memories, 5 profile "
          "keys (and another user as large); median of 3")
    print(f"    {'N':>6} {'forget_user':>12} {'of it, proof':>13}  proof ok")
    for n in sizes:
        runs = [one_round(next(urls), n, embedder) for _ in range(3)]
        total = statistics.median(r[0] for r in runs)
        proof = statistics.median(r[1] for r in runs)
        print(f"    {n:>6} {total * 1000:>10.0f} ms {proof * 1000:>10.0f} ms  "
              f"{all(r[2] for r in runs)}")


def sqlite_urls(folder: str):
    while True:
        yield f"sqlite:///{folder}/{uuid.uuid4().hex[:8]}.db"


def postgres_urls(admin_url: str, made: list[str]):
    import sqlalchemy as sa

    admin = sa.engine.make_url(admin_url)
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    while True:
        name = f"bench_forget_{uuid.uuid4().hex[:8]}"
        with engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
        made.append(name)
        yield admin.update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(
            hide_password=False)


def drop_schemas(admin_url: str, names: list[str]) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        for name in names:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--skip-timing", action="store_true")
    args = parser.parse_args()
    embedder = Embedder.offline()
    finding(embedder)
    if args.skip_timing:
        return 0
    sizes = [int(x) for x in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        timing("SQLite", sqlite_urls(folder), sizes, embedder)
    if os.environ.get(PG_ENV):
        made: list[str] = []
        try:
            timing("PostgreSQL", postgres_urls(os.environ[PG_ENV], made), sizes, embedder)
        finally:
            drop_schemas(os.environ[PG_ENV], made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
