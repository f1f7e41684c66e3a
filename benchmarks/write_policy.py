"""What the write policy keeps as the user's fact: accuracy on labelled user messages, negations and third parties.

    python benchmarks/write_policy.py

The evaluation (lesson_lib/data/write_policy_eval.json, frozen before anyone tuned a write
policy on it) is user messages in English, Chinese and code-switched ("mixed"), some after
an assistant turn, each labelled `store` (a lasting fact about the user, with the `fact` as
it should be stored), `other` (about someone else) or `skip` (a question, a hypothetical,
small talk, a one-off request, a quote the user rejects, an injected instruction); `claim`
is the user fact a careless writer would make of it (for a store case that negates, its
opposite).

The policy measured is the library's gate for user facts, through its public API:
`LongTermMemory.remember_user_fact(text, messages)` stores `text` as a user fact when the
user's own messages say it, and refuses it (MemoryPoisoningError) otherwise. Each case is
offered to it on a fresh user's memory (SQLite in a temporary folder, the default embedder):

- store: right when `fact` is stored;
- skip and other: right when `claim` is refused (nothing in them is the user's fact);
- a negation stored as its opposite: a store case with a `claim` (its opposite) whose
  claim is stored too;
- a third party stored as the user: an `other` case whose claim is stored.

Printed: accuracy per label and per language, and those two counts. Exits 0.

First score (2026-12-04, scored once at commit 34be6bbe9a693bf755078cb00b934fac98a68c40;
benchmarks/write_policy.py, the policy LongTermMemory.remember_user_fact): accuracy 0.385
(45/117); store 0.525 (32/61), skip 0.306 (11/36), other 0.100 (2/20); en 0.366 (15/41), zh
0.403 (25/62), mixed 0.357 (5/14); store en 11/21, zh 20/33, mixed 1/7; skip en 3/13, zh
5/19, mixed 3/4; other en 1/7, zh 0/10, mixed 1/3. Negations stored as their opposite: 29 of
41. Third parties stored as the user: 18 of 20.

The write policy (lesson_lib.write_policy, which said_by_user and remember_user_fact use
since), tuned only on its own development set (lesson_lib/data/write_policy_dev.json,
written without reading this file's cases), scored once (2026-12-04, commit
cc87a223a515bdc633a8df6b8eec09a12e1778dc): accuracy 0.744 (87/117); store 0.557 (34/61),
skip 0.917 (33/36), other 1.000 (20/20); en 0.805 (33/41), zh 0.758 (47/62), mixed 0.500
(7/14); store en 14/21, zh 20/33, mixed 0/7; skip en 12/13, zh 17/19, mixed 4/4; other
en 7/7, zh 10/10, mixed 3/3. Negations stored as their opposite: 1 of 41. Third parties
stored as the user: 0 of 20.

Later scores, each after improving on the development set only (new cases written first,
for what the per-part numbers pointed at, and scored before the policy was changed for
them; this file's cases still unread), all on 2026-12-04:
- commit fd0aefa06341b7d4325b55aa6014373c9e534a6a (and the same at 15463da): accuracy
  0.855 (100/117); store 0.770 (47/61), skip 0.917 (33/36), other 1.000 (20/20); en 0.902
  (37/41), zh 0.887 (55/62), mixed 0.571 (8/14); store en 18/21, zh 28/33, mixed 1/7.
  Negations stored as their opposite: 0 of 41. Third parties stored as the user: 0 of 20.
- commit 7fefd4a0c4a6e84a5b28ec46810bddaa767c11fb (a wider lexicon for code-switching,
  passing states, weekdays), and the same at 16c037d and 900af83: accuracy 0.863
  (101/117); store 0.787 (48/61); mixed 0.714 (10/14); store zh 27/33, mixed 3/7.
  Negations stored as their opposite: 1 of 41. Third parties stored as the user: 0 of 20.
- commit bc4d315ddc04d6d131ed280307f95af7e1a10c6e (a short fact is said whole), and the
  same at 3f375455520da19566a69eefbc9fa1517f238dc9, the policy kept (when the user's
  clauses disagree, the newer wins only if it says things changed; else a plain "not"
  wins): accuracy 0.872 (102/117); store 0.803 (49/61), skip 0.917 (33/36), other 1.000
  (20/20); en 0.902 (37/41), zh 0.887 (55/62), mixed 0.714 (10/14); store en 18/21, zh
  28/33, mixed 3/7; skip en 12/13, zh 17/19, mixed 4/4. Negations stored as their
  opposite: 1 of 41. Third parties stored as the user: 0 of 20.
- commit 59d43ad026b186ea7f880ffe8b8ff278da4af17a (a fact that goes on past its first clause is read with
  the next one; a "not" must reach the same words on both sides; development batch 13, the
  known bug's own sentences, not a new blind batch), scored at ef6fd61ee683 (same policy,
  docstring only), with no tuning on this file: accuracy 0.880 (103/117); store 0.820
  (50/61), skip 0.917 (33/36), other 1.000 (20/20); en 0.902 (37/41), zh 0.903 (56/62),
  mixed 0.714 (10/14); store en 18/21, zh 29/33, mixed 3/7; skip en 12/13, zh 17/19, mixed
  4/4. Negations stored as their opposite: 1 of 41. Third parties stored as the user: 0 of
  20.
- commit 2adf4014a7fe1a72b6e88f5061536645d50b4e88 (clefts such as "对海鲜过敏的是我姐"; "my
  X says" is X speaking; a corrected "I said Tuesday" is taken back; hyphenated words read
  as their parts; a character inside a word the fact does not say is not the fact's, 车 in
  电动车; negations and facts said in other words: teetotal, 滴酒不沾, 一口都不碰, 对…敏感,
  跳槽, "born and raised in"; development batches 14 to 18, 128 new cases, each scored
  before the policy was tuned on it: 34/36, 31/32 with one negation flipped, 24/24, 16/22,
  13/14), scored once on 2026-12-04, no tuning on this file: accuracy 0.880 (103/117), the
  same in every part as the score before; store 0.820 (50/61), skip 0.917 (33/36), other
  1.000 (20/20); en 0.902 (37/41), zh 0.903 (56/62), mixed 0.714 (10/14); store en 18/21,
  zh 29/33, mixed 3/7. Negations stored as their opposite: 1 of 41. Third parties stored
  as the user: 0 of 20. The development set's gains did not reach this file's failures.
- commit bcd837252357331da266f87ff6aafd60cb0991ad, branch h-write3, NOT MERGED (289 new
  development cases, batches 19 to 23, written without reading this file and each scored
  before the policy was tuned on it; main's policy scores 261/289 on them with 6 negations
  stored as their opposite): accuracy 0.855 (100/117), lower than the score before; en
  0.854 (35/41), zh 0.887 (55/62), mixed 0.714 (10/14); negations stored as their opposite
  1 of 41. Its rules lost three store cases the policy kept; main keeps the policy scored
  0.880 until a development round finds the over-refusal without this file.
- commit 03392c4516eb48f4f87e281335e30f8dbeda3924 (2026-12-05: h-write3's development
  cases brought to main as lesson_lib/data/write_policy_dev2.json, main's policy tuned on
  them with general rules: a "nor" after a negation goes on with it, "used to" is counted
  once, a later sentence that corrects or updates the same thing with another value takes
  the earlier one back, jokes (jk, 开玩笑的) state nothing, considering is a wish,
  make-believe (a poem in which I am …, 假装) supposes, a story's characters are someone
  else, "a fan of", "a peanut allergy"; dev2 261 → 274 of 289, negations stored as their
  opposite 6 → 1; write_policy_dev.json kept at 443/443), scored once: accuracy 0.880
  (103/117), the same in every part as the kept policy's score; negations stored as their
  opposite: 1 of 41. Third parties stored as the user: 0 of 20. Kept (better on the
  development cases, no worse here). A semantic aid was also tried on the development cases
  only (a clause in the other language counts as saying the fact when its cosine with the
  fact in the first person, by the offline embedder, is at least a threshold): at 0.5 to
  0.8 it gained 1 or 2 of dev2's 289 and lost 1 of write_policy_dev's 443, so it was not
  kept and not scored here. On every clause (not only across languages) it found more of
  the stores that need knowing the world (batch 25, 37 → 44 of 50 at 0.5), but it stored
  negations as their opposite (write_policy_dev 0 → 4, dev2 1 → 3; with a guard leaving
  every clause or fact with a "not" to the rules, 0 → 6 and 1 → 4) and third parties as
  the user (dev2 0 → 2): a sentence and its opposite embed close together. Not kept.
- commit ea7dab9e1811ad07adf1e5c79c0ffcdceee41a5a (2026-12-05: a new development batch, 24,
  written blind by the lead for what the per-part numbers point at, stores said in other
  words, most of them negations (lesson_lib/data/write_policy_dev3.json, 52 cases, scored
  38/52 with two negations stored as their opposite before any change); general rules
  tuned on it: a comment after the content that says no ("Driving isn't something I do",
  开车这事我不会), quitting or not touching it is neither eating nor drinking it, a topic
  asked then said of ("Coffee? I never touch the stuff."), a workplace is a place, 老家是,
  a possessive 's, "don't get along", working from home; 49/52 with none after, dev and
  dev2 kept), scored once: accuracy 0.889 (104/117); store 0.836 (51/61), skip 0.917
  (33/36), other 1.000 (20/20); en 0.902 (37/41), zh 0.903 (56/62), mixed 0.786 (11/14);
  store en 18/21, zh 29/33, mixed 4/7; skip en 12/13, zh 17/19, mixed 4/4. Negations
  stored as their opposite: 1 of 41. Third parties stored as the user: 0 of 20. Kept.
  (One sentence first written for batch 24 was found, by the test that keeps the sets
  apart, to be in this file too; it was replaced before this score.)
- not kept (2026-12-05): a further blind batch, 25 (50 cases in write_policy_dev3.json,
  37/50 and two negations stored as their opposite before any change), and rules tuned on
  it (a 没有 after the content, two joined clauses each keeping their own no, "based in",
  常驻/定居: 40/50, none stored as its opposite; dev, dev2 and batch 24 kept). Not scored
  here on purpose, but tests/test_write_policy.py's floor test, run on them, failed: 101
  of 117 (store en 16/21). Undone unscored, rule by rule never tried here; the batch stays
  in the development set as found.
- not kept (2026-12-05, a later session, on f4a9ab9): a reading by meaning, with every rule still
  in force. Where no clause says the fact in its words, a clause that passes every other
  rule (a plain statement of the user with the fact's yes or no, not a request, a wish or
  the past, saying each number and name) supported it when the offline embedder's cosine
  between it and the fact said in the first person ("The user is a teacher" → "I am a
  teacher") was at least 0.5 (chosen on the development cases: dev2 274 → 279 of 289,
  dev3 86 → 92 of 102, dev 443 kept, no negation stored). The frozen floor test, run on
  it, failed: scored here once, accuracy 0.915 (107/117); store 0.885 (54/61), skip 0.917
  (33/36), other 1.000 (20/20); en 0.927 (38/41), zh 0.903 (56/62), mixed 0.929 (13/14);
  **negations stored as their opposite: 2 of 41** (one more), third parties 0 of 20. A
  development batch written for that failure (27: negations said without a "not") showed
  why: "I'm allergic to kiwi" is nearer "I eat kiwi" (0.755) than "I do not eat kiwi"
  (0.752), "我吃素" nearer "我吃肉" (0.762) than "我不吃肉" (0.637), so meaning stored
  "The user eats kiwi" and "The user eats meat". Three more points of accuracy for a
  negation stored as its opposite: not kept, the cases unread.
- commit 59c3383bcc5a (2026-12-05, a later session: development batches 27 and 28, 70 cases
  written blind, the first for negations said without a "not", the second a general mix
  written after the first's rules: the policy scored 11/26 with seven negations stored as
  their opposite and, with batch 27's rules, 31/44 with two (30/44 with three before them);
  general rules: avoiding, steering clear of, swearing off, selling, giving away, ditching
  or losing it says no, 远离, 忌口, 卖给…了, 走丢了; a Chinese fact's verb must be said (我对
  猕猴桃过敏 stored 用户吃猕猴桃); two joined clauses that each say no are not a yes;
  sarcasm; 是四川人; "X is my first language"; neighbours in the plural; 24/26 and 38/44
  with none, dev 443, dev2 277 with none), scored once: accuracy 0.863 (101/117), lower;
  store en 16/21. Without reading this file's cases, the joined-clauses rule was found to
  disagree with how a fact's own no was counted (by parity, so "The user does not smoke and
  does not drink" was a yes); development batch 29 (12 facts with two no's, 8/12) showed
  it. Commit 5dac529 (each part of a fact or of a clause keeps its own no; batch 29 12/12),
  scored: 0.880 (103/117); store 0.820 (50/61), skip 0.917 (33/36), other 1.000 (20/20);
  en 0.878 (36/41), zh 0.903 (56/62), mixed 0.786 (11/14); store en 17/21, zh 29/33, mixed
  4/7. Negations stored as their opposite: 1 of 41. Third parties stored as the user: 0 of
  20. Development batch 30 (30 plain stores, written to find what the new rules refuse)
  found one (sarcasm without an "oh"); after it, at commit 9c0f288, scored a third and last
  time this session: the same, 0.880 (103/117), in every part. **Kept**, one case below the
  0.889 before: the policy before stores a no said without a "not" as its opposite on
  unseen phrasing (batch 27: 7 of 26; batch 28, blind to both: three against two), which
  this file, whose 41 negations are nearly all said with a "not", hardly samples. The floor
  in tests/test_write_policy.py is 103.
- 2026-12-05, a third session that day: development batch 31 (64 cases written blind by a
  helper who had seen neither the policy nor any set; write_policy_dev3.json, ids
  dev3-b31-…), scored before any change: 42/64 (en 13/22, zh 19/28, mixed 10/14), one
  negation stored as its opposite (我吃清真，猪肉相关的都不行 → 用户吃猪肉), no third
  party. General rules from it: a time that is over, said without a "now", is not the
  present ("I was a barista in college", 大学那四年在广州住, 住过; refused as "past"); a
  comment after the content may stand for it with 相关的, 这类, 不行. 45/64, none stored as
  its opposite; dev 443, dev2 277, the earlier batches unchanged. Scored once here: 0.880
  (103/117), the same in every part. A review then narrowed the rule (a time that still
  runs is the present: "since I was 12", "still", 从小, 一直; 大学那边 is a place, 那会 a
  modal), every development set the same: scored once more, 0.880, the same in every part.
- not kept (2026-12-05, a fourth session, commit 2c0ece0): a reading by meaning again, now
  guarded, built as judge(fact, messages, meaning=embedder) and used by remember_user_fact.
  Where no clause says the fact in its words, the user's plain clause nearest the fact said
  in the first person (the offline embedder's cosine, at least 0.5) supported a fact that
  says yes, when that clause says no "not", names the user (I, my, we; a Chinese clause may
  leave the subject out), is no request, wish or past, and says each number and name, the
  Chinese fact's verb and an English fact's verb of a short list (eat, drink, own, drive,
  …). Tried first on the development sets: dev 443/443, dev2 277 → 280/289, dev3 236 →
  248/278, none stored as its opposite, no third party (without a rule that 受够了 says no,
  dev3 stored 夜班我受够了，已经辞了 as 用户上夜班). Scored here once: accuracy 0.889
  (104/117), one more than without it (store mixed 5/7); **negations stored as their
  opposite: 2 of 41**, one more; third parties 0 of 20. A meaning that stores one more
  negation as its opposite for one more right answer is not kept; the rule that 受够了 says
  no is (it changes nothing in any set, and this file's score without the reading is the
  same, 0.880, 1 of 41).
- 2026-12-06: development batches 32 and 33 (write_policy_dev3.json, ids dev3-b32-… and
  dev3-b33-…, each written blind by a helper who had seen nothing of the project). Batch 32
  (48 cases) was aimed at kinds the earlier batches missed: two no's that mean yes ("I
  never miss my Sunday swim", 从来没断过), someone else's claim about the user (算命的说我…),
  a statement that ends by asking for help ("…, any tips?", 怎么办), moves ("now I'm in
  …"), Chinese sarcasm (对对对，我最喜欢…), roles at work, refusals in idioms ("Count me out
  for …", 我是真不行). Scored first by the policy at ae069c1: 32/48 with three negations
  stored as their opposite; with rules tuned on batches 19 to 31 only: 33/48 with two;
  with general rules tuned on it too (a no with "ever" between, a report that goes on
  without a subject of its own, 特别 is not 别, a role at work is what one is, …): 44/48
  with none. Then a little knowledge of the world (a breed is a dog or a cat, teaching a
  subject is being a teacher, a reaction every time is an allergy, 常驻 is living there),
  tuned on the earlier batches' misses. Batch 33 (60 cases) is a general sample aimed at
  no rule: 53/60 with none stored as its opposite, by the policy at ae069c1 and by the
  policy with every rule above alike; 55/60 after two rules of its own ("works as a nurse"
  is being one; 烟已经戒了 is not smoking). dev 443/443, dev2 277 → 282/289, batches 24 to
  33 (dev3) 321 → 349/386 (the policy at ae069c1 there: 236/278 on batches 24 to 31, 32 and
  53 on 32 and 33), none stored as its opposite anywhere. Scored here once, after all of it: 0.880 (103/117), the
  same in every part; negations stored as their opposite 1 of 41, third parties 0 of 20.
  Rules aimed at kinds a development batch shows do not reach a general sample written
  blind (batch 33 before them, this file): what both still miss needs knowing the world
  or words (a nurse's shift, 温哥华 for Vancouver, "type 1 diabetes" for 一型糖尿病).
The target (0.95, no negation stored as its opposite) is not reached. The one negation
stored since 7fefd4a was not looked for case by case (the cases stay unread); the earlier
policy (15463da) stored none here, but its development set shows it storing the opposite of
a plain "not" beside a looser match ("我不养狗，但我很喜欢狗" → "用户养狗"), which the kept
policy refuses. tests/test_write_policy.py holds the kept policy's score as its floor.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from lesson_lib.longterm import LongTermMemory, MemoryPoisoningError  # noqa: E402
from lesson_lib.sessions import SessionStore  # noqa: E402

DATA = Path(ROOT) / "lesson_lib" / "data" / "write_policy_eval.json"
LABELS = ("store", "skip", "other")
LANGS = ("en", "zh", "mixed")


def load(path: Path = DATA) -> dict:
    """The evaluation: {"about", "cases"}."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def stored(memory: LongTermMemory, text: str, messages: list[dict]) -> bool:
    """Does the policy keep `text` as the user's fact, given the conversation?"""
    try:
        return memory.remember_user_fact(text, messages) is not None
    except MemoryPoisoningError:
        return False


def judge(store: SessionStore, cases: list[dict]) -> list[dict]:
    """Each case's outcome: right (bool), flipped (a negation's opposite stored) and
    as_user (a third party's fact stored as the user's)."""
    out = []
    for n, case in enumerate(cases):
        memory = LongTermMemory(store, f"user-{n}")  # a fresh user: nothing stored before
        messages = case["messages"]
        if case["label"] == "store":
            right = stored(memory, case["fact"], messages)
            flipped = case["claim"] is not None and stored(memory, case["claim"], messages)
            out.append({"right": right, "flipped": flipped, "as_user": False})
        else:
            kept = stored(memory, case["claim"], messages)
            out.append({"right": not kept, "flipped": False,
                        "as_user": case["label"] == "other" and kept})
    return out


def table(cases: list[dict], results: list[dict]) -> dict[str, tuple[int, int]]:
    """{part: (right, cases)}: all, per label, per language, per label and language."""
    parts: dict[str, list[bool]] = defaultdict(list)
    for case, result in zip(cases, results, strict=True):
        for part in ("all", case["label"], case["lang"], f"{case['label']} {case['lang']}"):
            parts[part].append(result["right"])
    return {part: (sum(v), len(v)) for part, v in parts.items()}


def main() -> None:
    data = load()
    cases = data["cases"]
    with tempfile.TemporaryDirectory() as folder, \
            SessionStore(f"sqlite:///{folder}/write_policy.db") as store:
        results = judge(store, cases)
    parts = table(cases, results)
    print(f"{len(cases)} cases; policy: LongTermMemory.remember_user_fact (said_by_user)")
    order = ["all", *LABELS, *LANGS,
             *(f"{label} {lang}" for label in LABELS for lang in LANGS)]
    for part in order:
        if part in parts:
            right, n = parts[part]
            print(f"  {part:<14} {right / n:6.3f}  ({right}/{n})")
    negations = [c for c in cases if c["label"] == "store" and c["claim"] is not None]
    flipped = sum(r["flipped"] for r in results)
    others = [c for c in cases if c["label"] == "other"]
    as_user = sum(r["as_user"] for r in results)
    print(f"negations stored as their opposite: {flipped} of {len(negations)}")
    print(f"third parties stored as the user: {as_user} of {len(others)}")


if __name__ == "__main__":
    main()
