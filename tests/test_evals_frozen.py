"""The frozen long-term memory evaluations are well formed: ids, answers, quotas, languages.

lesson_lib/data/abstain_eval.json (can search say "nothing"? scored by benchmarks/abstain.py),
lesson_lib/data/crosslang_eval.json (retrieval across English and Chinese, scored by
benchmarks/crosslang.py) and lesson_lib/data/write_policy_eval.json (what to store from a
user's message, scored by benchmarks/write_policy.py). One test holds the cross-language
evaluation (its memories alone) to the floor of its later score: a retrieval that gets worse
fails it; another holds the abstention evaluation to its third score's floor.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from datetime import date

import pytest
from scripts_support import ROOT, load_benchmark

from lesson_lib.longterm import SOURCES

crosslang = load_benchmark("crosslang")
write_policy = load_benchmark("write_policy")

HAN = re.compile(r"[\u3400-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


@pytest.fixture(scope="module")
def cross() -> dict:
    return crosslang.load()


@pytest.fixture(scope="module")
def policy() -> dict:
    return write_policy.load()


def language_problems(text: str, lang: str) -> str | None:
    """Why `text` is not in `lang` ("en": no Chinese; "zh": Chinese; "mixed": both a
    Chinese character and an English word), or None."""
    han, latin = bool(HAN.search(text)), bool(LATIN_WORD.search(text))
    if lang == "en" and han:
        return "labelled en, but has Chinese characters"
    if lang == "zh" and not han:
        return "labelled zh, but has no Chinese character"
    if lang == "mixed" and not (han and latin):
        return "labelled mixed, but is not code-switched (needs Chinese and an English word)"
    if lang not in ("en", "zh", "mixed"):
        return f"unknown language {lang!r}"
    return None


def test_language_check_can_fail():
    assert language_problems("我不吃辣", "en")
    assert language_problems("I'm not vegetarian", "zh")
    assert language_problems("我不吃辣", "mixed")
    assert language_problems("我的 trip budget 是多少？", "mixed") is None


# ----------------------------------------------------------------- cross-language retrieval

def test_crosslang_ids_are_unique_and_answers_exist(cross):
    memory_ids = [m["id"] for m in cross["memories"]]
    question_ids = [q["id"] for q in cross["questions"]]
    assert [i for i, n in Counter(memory_ids).items() if n > 1] == []
    assert [i for i, n in Counter(question_ids).items() if n > 1] == []
    missing = [(q["id"], a) for q in cross["questions"] for a in q["answer"] or []
               if a not in memory_ids]
    assert missing == []
    assert all(q["answer"] is None or q["answer"] for q in cross["questions"]), \
        "an answer is a non-empty list of memory ids, or null"


def test_crosslang_memories_carry_source_date_and_language(cross):
    for m in cross["memories"]:
        assert set(m) == {"id", "lang", "source", "ref", "date", "text"}, m["id"]
        assert m["source"] in SOURCES, m["id"]
        assert m["ref"], m["id"]
        date.fromisoformat(m["date"])
        assert m["lang"] in ("en", "zh"), m["id"]
        assert language_problems(m["text"], m["lang"]) is None, (m["id"], m["text"])


def test_crosslang_questions_are_labelled_right(cross):
    by_id = {m["id"]: m for m in cross["memories"]}
    expected = {"same-language": {"same-language", "paraphrase"},
                "cross-language": {"cross-language"}, "mixed": {"mixed"},
                "unanswerable": {"unanswerable"}}
    for q in cross["questions"]:
        assert language_problems(q["q"], q["lang"]) is None, (q["id"], q["q"])
        assert q["kind"] in expected[crosslang.crossing(q, by_id)], (q["id"], q["kind"])
        if q["answer"] is not None and q["lang"] != "mixed":
            langs = {by_id[a]["lang"] for a in q["answer"]}
            assert len(langs) == 1, f"{q['id']}: its answers are all in one language"


def test_crosslang_quotas(cross):
    by_id = {m["id"]: m for m in cross["memories"]}
    how = Counter(crosslang.crossing(q, by_id) for q in cross["questions"])
    questions = len(cross["questions"])
    assert len(cross["memories"]) >= 120
    assert questions >= 150
    assert how["cross-language"] * 3 >= questions, how
    assert Counter(q["lang"] for q in cross["questions"])["mixed"] >= 20
    assert how["unanswerable"] >= 15
    assert Counter(m["lang"] for m in cross["memories"]).keys() == {"en", "zh"}
    assert {m["source"] for m in cross["memories"]} >= {"user", "session", "document", "tool"}


def test_crosslang_distractors_are_fixed_and_answer_nothing(cross):
    first = crosslang.distractors(2000, seed=7)
    assert first == crosslang.distractors(2000, seed=7)
    assert first != crosslang.distractors(2000, seed=8)
    assert Counter(HAN.search(text) is not None for _source, text in first) == \
        {True: 1000, False: 1000}
    assert {source for source, _text in first} <= set(SOURCES)
    # the user, his family and his places: no distractor may speak of them
    theirs = ["Xiaoyu", "小雨", "Su Qing", "苏晴", "林涛", "Niangao", "年糕", "周敏", "Kevin",
              "Luoyang", "洛阳", "Osaka", "大阪", "Kyoto", "京都", "Nara", "奈良", "Japan",
              "日本", "Shanghai", "上海", "深圳", "Minhang", "闵行", "TideNote", "Qiantang"]
    texts = " ".join([*(m["text"] for m in cross["memories"]),
                      *(q["q"] for q in cross["questions"])])
    assert all(name in texts for name in theirs), "the list names the evaluation's own"
    said = sorted({name for _source, text in first for name in theirs if name in text})
    assert said == []


# The later scores, the evaluation's memories alone (benchmarks/crosslang.py's docstring): at
# commit 89ceb52 (the multilingual Universal Sentence Encoder) 147/158, en 63/66, zh 59/66,
# mixed 25/26, same-language 60/60, cross-language 62/72 (en → zh 33/36, zh → en 29/36); at
# commit c2db634 (fusion balancing the scripts, ties at their mean position) 148/158, en
# 61/66, zh 62/66, mixed 25/26, same-language 60/60, cross-language 63/72 (en → zh 31/36,
# zh → en 32/36). Floors only go up: two questions below the better of the two, for another
# machine's float rounding, or the earlier floor where that is higher (en, en → zh).
FLOORS = {"all": 146, "lang en": 61, "lang zh": 60, "lang mixed": 24, "same-language": 58,
          "cross-language": 61, "en → zh": 31, "zh → en": 30}


def test_crosslang_recall_holds_its_later_score(cross, tmp_path):
    from lesson_lib.longterm import LongTermMemory
    from lesson_lib.sessions import SessionStore

    with SessionStore(f"sqlite:///{tmp_path / 'crosslang.db'}") as store:
        memory = LongTermMemory(store, "linhao")  # the default embedder, as the benchmark
        table = crosslang.recall_table(cross, crosslang.ask(memory, cross,
                                                            crosslang.fill(memory, cross)))
    below = {part: f"{table[part][0]}/{table[part][1]} < {least}"
             for part, least in FLOORS.items() if table[part][0] < least}
    assert below == {}, f"recall@5 fell below the third score's floor: {below}"


# ----------------------------------------------------------------- abstention

abstain = load_benchmark("abstain")


def test_abstain_eval_quotas_and_languages():
    """At least 60 questions: half unanswerable, half Chinese, a third cross-language; every
    answer a memory of its store; each question and memory in the language it says."""
    data = abstain.load("abstain_eval.json")
    assert "frozen" in data["note"]
    questions = [q for store in data["stores"] for q in store["questions"]]
    assert len(questions) >= 60
    assert 2 * sum(q["answer"] is None for q in questions) == len(questions)
    assert 2 * sum(q["lang"] == "zh" for q in questions) >= len(questions)
    assert 3 * sum(q["kind"] == "cross" for q in questions) >= len(questions)
    for store in data["stores"]:
        ids = {m["id"] for m in store["memories"]}
        for q in store["questions"]:
            assert q["answer"] is None or q["answer"] in ids, q
            assert language_problems(q["q"], q["lang"]) is None, q
            assert (q["kind"] == "mixed") == (q["lang"] == "mixed"), q


# The third score (benchmarks/abstain.py's docstring, min_score=ABSTAIN_FLOOR=0.18): answerable
# found 32/33 (en 12/13, zh 17/17, mixed 6/6; cross-language 21/22), unanswerable given
# nothing 9/33 (en 4/13, zh 4/17, mixed 2/6). The floors leave one question of room per
# part (float rounding on another machine can move a cosine across the floor).
ABSTAIN_FLOORS = {("all", "found"): 31, ("en", "found"): 11, ("zh", "found"): 16,
                  ("mixed", "found"): 5, ("cross", "found"): 20, ("all", "abstained"): 8,
                  ("en", "abstained"): 3, ("zh", "abstained"): 3, ("mixed", "abstained"): 1}


def test_abstain_holds_its_score(tmp_path):
    table = abstain.figures(abstain.ask(abstain.load("abstain_eval.json"),
                                        folder=str(tmp_path)))
    below = {f"{part} {what}": f"{table[part][what][0]}/{table[part][what][1]} < {least}"
             for (part, what), least in ABSTAIN_FLOORS.items()
             if table[part][what][0] < least}
    assert below == {}, f"abstention fell below its third score's floor: {below}"


# ----------------------------------------------------------------- write policy

def test_write_policy_cases_are_well_formed(policy):
    cases = policy["cases"]
    assert [i for i, n in Counter(c["id"] for c in cases).items() if n > 1] == []
    for c in cases:
        assert set(c) == {"id", "lang", "label", "messages", "fact", "claim", "tags"}, c["id"]
        assert c["label"] in write_policy.LABELS, c["id"]
        roles = [m["role"] for m in c["messages"]]
        assert roles[-1] == "user" and set(roles) <= {"user", "assistant"}, c["id"]
        said = c["messages"][-1]["content"]
        assert language_problems(said, c["lang"]) is None, (c["id"], said)
        if c["label"] in ("store", "other"):
            assert c["fact"], f"{c['id']}: a {c['label']} case says what to store"
        else:
            assert c["fact"] is None, c["id"]
        if c["label"] in ("skip", "other"):
            assert c["claim"], f"{c['id']}: the user fact a careless writer would store"
        if c["label"] == "store" and c["fact"] and c["lang"] == "zh":
            assert HAN.search(c["fact"]), f"{c['id']}: a Chinese fact is stored in Chinese"
        if c["label"] == "store" and "negation" in c["tags"]:
            assert c["claim"], f"{c['id']}: a negation names its opposite"


def test_write_policy_quotas(policy):
    cases = policy["cases"]
    langs = Counter(c["lang"] for c in cases)
    labels = Counter(c["label"] for c in cases)
    tags = Counter(t for c in cases for t in c["tags"])
    assert len(cases) >= 100
    assert langs["zh"] * 2 >= len(cases), langs
    assert min(labels[label] for label in write_policy.LABELS) >= 15, labels
    for tag, least in {"negation": 25, "no-longer": 8, "third-party": 15, "question": 5,
                       "hypothetical": 5, "quote": 5, "injection": 4, "code-switch": 10}.items():
        assert tags[tag] >= least, (tag, tags[tag])
    negated_zh = [c for c in cases if "negation" in c["tags"] and c["lang"] == "zh"]
    assert len(negated_zh) >= 10


# ----------------------------------------------------------------- the first score

FIRST = re.compile(r"First score \((\d{4}-\d{2}-\d{2}), scored once at commit ([0-9a-f]{40});"
                   r"[^\n]*")
EVALS = {"abstain": ("abstain_eval.json", "stores"),
         "crosslang": ("crosslang_eval.json", "questions"),
         "write_policy": ("write_policy_eval.json", "cases")}


def first_score(about: str) -> re.Match:
    found = FIRST.search(about)
    assert found, "the data's about records its first score: 'First score (DATE, scored " \
                  "once at commit SHA; ...'"
    return found


@pytest.mark.parametrize("name", sorted(EVALS))
def test_first_score_is_recorded_in_the_data_and_the_scorer(name):
    benchmark = load_benchmark(name)
    found = first_score(benchmark.load()["about"])
    date.fromisoformat(found.group(1))
    docstring = " ".join(benchmark.__doc__.split())
    assert found.group(0) in docstring, f"benchmarks/{name}.py's docstring repeats it"


@pytest.mark.parametrize("name", sorted(EVALS))
def test_cases_are_those_first_scored(name):
    """Frozen: the memories, questions and cases are the ones scored at the recorded commit
    (only the about changed, to record the score)."""
    benchmark = load_benchmark(name)
    data = benchmark.load()
    commit = first_score(data["about"]).group(2)
    path = f"lesson_lib/data/{EVALS[name][0]}"
    try:
        shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT,
                               capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("no git here")
    if shown.returncode != 0:
        pytest.skip(f"commit {commit[:10]} is not in this checkout's history")
    then = json.loads(shown.stdout)
    assert {k: v for k, v in then.items() if k != "about"} == \
        {k: v for k, v in data.items() if k != "about"}
    assert data["about"].startswith(then["about"])
