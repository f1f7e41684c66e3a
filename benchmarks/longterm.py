"""How fast and how good is long-term memory? Search latency, indexing, recall@5.

    python benchmarks/longterm.py [--sizes 1000,10000,100000] [--queries 200]

One user's memory in a SQLite file (a temporary folder) holds the evaluation's memories
(lesson_lib.longterm_eval: 49 kept) among invented distractors of the same kinds (trips,
meals, work, family; half English, half Chinese), grown to each size in turn. Memories and
questions are embedded the way a lesson does it: `LongTermMemory(store, user)` with its
default embedder, the offline model's `/v1/embeddings` through the backend switch.

(a) indexing: memories written per second, by write_many() in batches of 1,000 (one
    embedding request of up to 2,048 texts, one transaction each: the row, its vector, its
    lexical index entries, the change log).
(b) search latency, per method (fused, dense, lexical), at each size: search(question,
    k=5) for --queries questions (the evaluation's, repeated), end to end: the question's
    embedding, the lexical index, the vector matrix, reading the hits. p50, p99, max.
    Target: p99 <= 20 ms at 100,000 memories on 2 cores. The first search of a process
    loads the matrix from the database (and, from 16,384 memories on, makes its rough int8
    copy): timed apart ("load"). Wall-clock times are those of a quiet machine only: other
    programs on the two cores inflate them (and the CPU times less so); note the load
    average printed beside each size.
(c) recall@5 per method, overall, English and Chinese, at each size: the evaluation's
    answerable questions (97), with the distractors around them. Before the distractors:
    whether a score threshold alone could say "I don't know" (longterm_eval.abstention).
(d) deleting at the largest size: delete() of one memory, forget(about=…) of one subject;
    with SQLite older than 3.44 each purges the lexical index ('optimize').
(e) end to end, before the distractors: each question asked of the offline model with
    retrieval before the call (longterm_eval.answer_accuracy): right answers, per language,
    and "I don't know" for the questions nothing answers.

Measured on a quiet machine (2026-12-05, commit 880f3aa, 2 cores, load average 1.1 while
searching; 200 and then 400 queries): fused p50 7.44 / 7.49 ms, p99 18.36 / 17.80 ms at
100,000 memories (dense p99 6.90 / 7.56, lexical 9.84 / 10.50); recall@5 fused 0.959 (en
0.917, zh 1.000). The 20.9 ms p99 of 2026-12-04 was measured at a load average of 2.3.

Measured again (2026-12-05, after fusion balanced the scripts and ties took their mean
position, with the rows that could be among the n best bounded from a sample and BM25
counting terms without splitting; 400 queries, load average 1.0 to 1.1 while searching):
fused p50 8.92 ms, p99 22.18 ms, max 99.9 ms (dense p99 8.07, lexical 15.58); recall@5 fused
0.969 (en 0.938, zh 1.000), up from 0.959. The same run earlier that day, before the last
two speed-ups, gave p99 20.86 and 23.73, with dense p50 5.30 and 6.26 on an unchanged path:
this machine's speed moved by a fifth between runs, more than the changes did. Interleaved
on one database of 100,000 memories (the commit before the balance against the new one,
872 searches a round, seven rounds each), p99 17.5 to 23.5 ms against 17.4 to 24.9 ms, p50
7.3 to 9.5 against 7.5 to 10.1: the same within that noise. On this day's runs the 20 ms
target was not met by either; a fused search waits for both lists, and on two cores the
scan's two threads and the lexical thread take turns, so its tail is about the dense time
plus the lexical time of the questions with common words (up to 12 ms).

Measured on another machine of the same kind (2026-12-05, a later session, the search code
unchanged since the run above, 400 queries, nothing else running, load average 1.0 to 1.1
while searching): fused p50 19.47 ms, p99 46.12 ms (dense p50 15.41, p99 20.95; lexical p50
3.71, p99 28.39); recall@5 the same (0.969). This machine is slower at what the scan does:
one float32 product of 100,000 × 512 vectors with a question takes 16.5 ms here (numpy with
OpenBLAS), a memory-bound read of 200 MB. The target was not met here either; it is a
quiet machine's figure, and a slower machine moves it by more than any change measured.

Measured again on that slower machine (2026-12-05, a third session, before and after BM25
found each question word in one string of the candidates' terms and counted it per memory
with numpy, rounding and sorting only those that can be among the n best; the same 100,000
memories, 400 queries, load average 0.9 to 1.2 while searching): lexical p50 2.97 → 3.18 ms,
p99 24.10 → 14.06 ms; fused p50 17.08 → 17.68 ms, p99 37.56 → 28.46 ms (dense unchanged,
p99 16.62 and 16.92); recall@5 unchanged (fused 0.969, en 0.938, zh 1.000). Where a fused
search's time goes there (medians, the 109 questions): embedding the question 4.4 to 4.7
ms (the Universal Sentence Encoder on one thread), the int8 scan 5.2 ms with two threads
(9.3 with one), the scripts' levels 1.3 ms, scoring the ~280 contenders again 0.14 ms. The
target is still not met on this machine: the question's embedding and the scan alone are
about 10 ms, and both read memory at this machine's speed. Then, with a search reading
from the database only the memories its hits need (k and the ties of the k-th, not a fused
search's 50 candidates: 1.8 ms median for 50 rows, 0.5 ms for 5, read alone): fused p50
18.05 ms, p99 30.25 ms, dense p50 14.87, p99 18.71, lexical p99 16.41 (load average 1.0
while searching), recall the same: the dense path, which that change does not touch, was
a fifth slower than in the run before, so no gain shows through this machine's noise. An
exact scan with fewer bytes was looked for and not found: rotated onto its principal axes
(96% of the energy in 128 of 512 dimensions, 99% in 256), a row's rest bounded by
Cauchy-Schwarz still leaves a median 7,257 of 100,000 rows to score again at 256
dimensions (94,168 at 128), more work than the int8 scan; below this an approximate index
(and its recall, measured) is the way left.

Prints one table per part and exits 0; no target fails the run. With the default sizes
about two to four minutes on two cores (building 100,000 memories is most of it).
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from lesson_lib.longterm import METHODS, LongTermMemory  # noqa: E402
from lesson_lib.longterm_eval import abstention, answer_accuracy, fill, load_eval, recall  # noqa: E402
from lesson_lib.sessions import SessionStore  # noqa: E402

# ----------------------------------------------------------------- distractors

PEOPLE = ["Lao Wang", "Xiaohong", "Li Na", "Zhang Wei", "Chen Jie", "Auntie Liu", "Mr. Zhao",
          "Wang Fang", "Sun Yue", "Professor Huang", "Dr. Gao", "Uncle Ma"]
PLACES = ["Hangzhou", "Xi'an", "Shenzhen", "Qingdao", "Kunming", "Harbin", "Suzhou", "Xiamen",
          "Guilin", "Lhasa", "Dali", "Nanjing", "Wuhan", "Chongqing", "Tianjin", "Sanya"]
THINGS = ["a new kettle", "running shoes", "a desk lamp", "concert tickets", "a rice cooker",
          "a yoga mat", "winter boots", "a phone case", "noise-cancelling headphones",
          "a bookshelf", "an air purifier", "a bicycle helmet", "green tea leaves"]
TOPICS = ["the quarterly report", "the search feature", "the mobile app release",
          "the hiring plan", "the data warehouse", "the login bug", "the design review",
          "the customer survey", "the security audit", "the office move"]
FOODS = ["dumplings", "noodles with beef", "steamed fish", "fried rice", "hot and sour soup",
         "roast duck", "spring rolls", "tofu with mushrooms", "lamb skewers", "congee"]
EN = [
    "On {d} we talked about a weekend in {p}; {who} recommended the old town and {f}.",
    "Xiaoming bought {t} for {n} yuan on {d}.",
    "Meeting on {d}: {who} presented {topic}; the next review is in {n} days.",
    "{who} called on {d} about {topic} and asked for the numbers by Friday.",
    "We compared trains and flights to {p} on {d}; the cheapest option was {n} yuan.",
    "Dinner with {who} on {d}: we had {f} and talked about moving to {p}.",
    "Reminder written on {d}: return {t} to the shop within {n} days.",
    "Xiaoming read an article about {p} and saved it for a future trip; it mentions {f}.",
    "The team agreed on {d} to postpone {topic} by {n} weeks.",
    "{who} lent Xiaoming {t} on {d}.",
]
ZH_PEOPLE = ["老王", "小红", "李娜", "张伟", "陈杰", "刘阿姨", "赵老师", "王芳", "孙悦", "黄教授"]
ZH_PLACES = ["杭州", "西安", "深圳", "青岛", "昆明", "哈尔滨", "苏州", "厦门", "桂林", "拉萨",
             "大理", "南京", "武汉", "重庆", "天津", "三亚"]
ZH_THINGS = ["电水壶", "跑鞋", "台灯", "演唱会门票", "电饭煲", "瑜伽垫", "雪地靴", "手机壳",
             "降噪耳机", "书架", "空气净化器", "自行车头盔"]
ZH_TOPICS = ["季度报告", "搜索功能", "手机应用发布", "招聘计划", "数据仓库", "登录问题",
             "设计评审", "用户调研", "安全审计", "办公室搬迁"]
ZH_FOODS = ["饺子", "牛肉面", "清蒸鱼", "炒饭", "酸辣汤", "烤鸭", "春卷", "麻婆豆腐", "羊肉串", "小米粥"]
ZH = [
    "{d}聊了去{p}过周末的计划，{who}推荐了老城区和{f}。",
    "小明{d}花{n}元买了{t}。",
    "{d}开会：{who}讲了{topic}，下次评审在{n}天以后。",
    "{who}{d}打电话问{topic}的进展，要求周五前给数据。",
    "{d}比较了去{p}的火车和飞机，最便宜的是{n}元。",
    "{d}和{who}吃饭，吃了{f}，聊到搬去{p}的事。",
    "{d}记下的提醒：{n}天内把{t}退回商店。",
    "小明看了一篇关于{p}的文章，收藏起来以后旅行用，里面提到{f}。",
    "团队{d}决定把{topic}推迟{n}周。",
    "{who}{d}借给小明{t}。",
]


def distractors(count: int, seed: int) -> list[str]:
    """`count` invented memories, half English, half Chinese, from a fixed seed."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        if i % 2 == 0:
            out.append(rng.choice(EN).format(
                d=f"{day} {['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][month - 1]}",
                p=rng.choice(PLACES), who=rng.choice(PEOPLE), t=rng.choice(THINGS),
                topic=rng.choice(TOPICS), f=rng.choice(FOODS), n=rng.randint(2, 3000)))
        else:
            out.append(rng.choice(ZH).format(
                d=f"{month}月{day}日", p=rng.choice(ZH_PLACES), who=rng.choice(ZH_PEOPLE),
                t=rng.choice(ZH_THINGS), topic=rng.choice(ZH_TOPICS), f=rng.choice(ZH_FOODS),
                n=rng.randint(2, 3000)))
    return out


# ----------------------------------------------------------------- measuring

def percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return statistics.median(ordered), p99, ordered[-1]


def grow(memory: LongTermMemory, target: int, seed: int, batch: int = 1000) -> tuple[int, float]:
    """Add distractors until the memory holds `target`; (added, seconds)."""
    missing = target - len(memory)
    if missing <= 0:
        return 0, 0.0
    texts = distractors(missing, seed)
    start = time.perf_counter()
    for at in range(0, len(texts), batch):
        memory.write_many(texts[at:at + batch], source="assistant", ref="bench")
    return missing, time.perf_counter() - start


def latency(memory: LongTermMemory, questions: list[str],
            method: str) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU milliseconds of each search (CPU time adds up every thread of
    the process, NumPy's BLAS threads included; it is what other programs on the machine
    cannot inflate)."""
    wall, cpu = [], []
    for question in questions:
        start, start_cpu = time.perf_counter(), time.process_time()
        memory.search(question, 5, method=method)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def load() -> str:
    try:
        return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on this platform
        return "load average unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="memory counts to measure at, comma-separated")
    parser.add_argument("--queries", type=int, default=200, help="searches per method and size")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"SQLite {sqlite3.sqlite_version}, {os.cpu_count()} cores, {load()}; sizes {sizes}")
    data = load_eval()
    questions = [q["q"] for q in data.questions]
    questions = (questions * (args.queries // len(questions) + 1))[:args.queries]
    indexing, rows = [], []
    with tempfile.TemporaryDirectory() as folder, \
            SessionStore(f"sqlite:///{folder}/longterm.db") as store:
        memory = LongTermMemory(store, "xiaoming")
        start = time.perf_counter()
        ids = fill(memory, data)
        print(f"evaluation: {data}; written in {time.perf_counter() - start:.2f} s")
        gate = abstention(memory, data)
        print(f"'I don't know' by a score alone (the evaluation only, best dense cosine): the "
              f"best threshold, {gate['threshold']:.3f}, keeps {gate['answerable_kept']:.0%} of "
              f"the answerable and refuses {gate['unanswerable_refused']:.0%} of the rest")
        right = answer_accuracy(memory, data, ids)
        print("(e) end to end, the offline model answering after retrieval (the evaluation "
              f"only): right {right['all']:.3f} (en {right['en']:.3f}, zh {right['zh']:.3f}); "
              f"answerable {right['answerable']:.3f}, 'I don't know' when nothing answers "
              f"{right['unanswerable']:.3f}")
        for size in sizes:
            added, seconds = grow(memory, size, seed=size)
            if added:
                indexing.append((size, added, added / seconds))
            fresh = LongTermMemory(store, "xiaoming")  # a new process's first search
            start = time.perf_counter()
            fresh.search("warm-up", 5, method="dense")
            load_ms = (time.perf_counter() - start) * 1000
            for method in METHODS:
                memory.search(questions[0], 5, method=method)  # warm
                wall, cpu = latency(memory, questions, method)
                p50, p99, worst = percentiles(wall)
                cpu50, cpu99, _ = percentiles(cpu)
                at5 = recall(memory, data, ids, 5, (method,))[method]
                rows.append((size, method, p50, p99, worst, cpu50, cpu99, at5, load_ms))
            print(f"  measured at {size:,} memories ({load()})", flush=True)
        print("\n(a) indexing (write_many, batches of 1,000, embedded via /v1/embeddings)")
        print(f"{'up to':>9} {'added':>8} {'memories/s':>11}")
        for size, added, rate in indexing:
            print(f"{size:>9,} {added:>8,} {rate:>11,.0f}")
        print("\n(b, c) search(question, k=5): wall-clock and CPU ms; recall@5 of the "
              "evaluation; load: the first search of a new LongTermMemory (ms)")
        print(f"{'memories':>9} {'method':>8} {'p50':>7} {'p99':>7} {'max':>7} "
              f"{'cpu p50':>8} {'cpu p99':>8}   {'recall@5':>8} {'en':>6} {'zh':>6}   "
              f"{'load':>6}")
        for size, method, p50, p99, worst, cpu50, cpu99, at5, load_ms in rows:
            print(f"{size:>9,} {method:>8} {p50:>7.2f} {p99:>7.2f} {worst:>7.2f} "
                  f"{cpu50:>8.2f} {cpu99:>8.2f}   {at5['all']:>8.3f} {at5['en']:>6.3f} "
                  f"{at5['zh']:>6.3f}   {load_ms:>6.0f}")
        print(f"\n(d) deleting at {len(memory):,} memories")
        victim = memory.search("lent Xiaoming", 1, method="lexical")[0]
        start = time.perf_counter()
        memory.delete(victim.id)
        print(f"delete(one memory): {(time.perf_counter() - start) * 1000:.0f} ms")
        start = time.perf_counter()
        gone = memory.forget(about="Mantou")
        print(f"forget(about='Mantou'): {len(gone)} memories in "
              f"{(time.perf_counter() - start) * 1000:.0f} ms; mentions after: "
              f"{memory.mentions('Mantou')}")
    print("\ntargets: p99 <= 20 ms at 100,000 memories; recall@5 >= 0.9 for the default "
          "(fused), overall and in Chinese")


if __name__ == "__main__":
    main()
