"""The memory benchmark (lesson_lib.membench): its frozen data's shape, and its score on tiny
hand-made cases whose right answer is obvious (a strategy that sends nothing, one that
sends everything, one the learner writes)."""

from __future__ import annotations

import copy
import hashlib
import re
import tempfile
from collections import Counter

import pytest

from lesson_lib import membench
from lesson_lib.membench import data as mdata
from lesson_lib.membench.run import Results, figures, recording_client
from lesson_lib.membench.score import judge_answer, request_text, score_request
from lesson_lib.membench.strategies import Context, FullHistory, Nothing, Strategy

# The frozen files' hashes: the data was written by hand before any strategy ran on it.
# Never edit the files; a new version of the benchmark is a new file with its own hash.
FROZEN = {"membench.json": "85a4d2715f7d157c4514211e042f42de6e101be5b507417fb1df7015b50af5d8",
          "membench_heldout.json":
              "8c86db7359776ca6eab6696c858c361ab69dd02b3bce6fa9100e483b833fbf17"}
HAN = re.compile(r"[\u3400-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


@pytest.fixture(scope="module")
def parts() -> dict:
    return {part: membench.load(part) for part in mdata.FILES}


# ----------------------------------------------------------------- the data

@pytest.mark.parametrize("name", sorted(FROZEN))
def test_the_data_is_frozen(name):
    raw = (mdata.FOLDER / name).read_bytes()
    assert b"FROZEN" in raw[:200], "the file says it is frozen, first thing"
    assert hashlib.sha256(raw).hexdigest() == FROZEN[name], \
        f"{name} changed: the benchmark's data is frozen (do not edit it, do not tune on it)"


def test_the_data_is_well_formed(parts):
    for part, data in parts.items():
        assert mdata.problems(data) == [], part


def test_the_shape_check_can_fail(parts):
    data = copy.deepcopy(parts["public"])
    conv = data["conversations"][0]
    question = next(q for q in conv["questions"] if q["category"] == "single")
    question["facts"] = ["words nobody said"]
    later = conv["sessions"][-1]["messages"][0]["id"]
    other = next(q for q in conv["questions"] if q["category"] == "update")
    other["evidence"] = [later]
    found = " ".join(mdata.problems(data))
    assert "words nobody said" in found and f"{later} is not a message of an earlier" in found


def test_counts_per_language_and_category(parts):
    convs = [c for data in parts.values() for c in data["conversations"]]
    questions = [q for c in convs for q in c["questions"]]
    langs = Counter(c["lang"] for c in convs)
    assert len(convs) >= 40 and langs["en"] == langs["zh"] and langs["mixed"] >= 4, langs
    assert len(questions) >= 250
    by = Counter((q["lang"], q["category"]) for q in questions)
    for lang in membench.LANGUAGES:
        for category in membench.CATEGORIES:
            assert by[lang, category] >= 4, (lang, category, by[lang, category])
    tool_rounds = [c["id"] for c in convs if any(m["role"] == "tool" for s in c["sessions"]
                                                 for m in s["messages"])]
    assert len(tool_rounds) >= 10
    assert all(len(c["sessions"]) >= 3 for c in convs)


def test_each_question_is_in_its_language(parts):
    """en: no Chinese; zh: Chinese, no English word; mixed: the questions are Chinese, a
    third of them at least, and most of the user's messages, with English words in them."""
    def both(text: str) -> bool:
        return bool(HAN.search(text)) and bool(LATIN_WORD.search(text))

    for data in parts.values():
        for conv in data["conversations"]:
            for q in conv["questions"]:
                han, latin = bool(HAN.search(q["question"])), bool(LATIN_WORD.search(q["question"]))
                assert {"en": not han, "zh": han and not latin, "mixed": han}[q["lang"]], \
                    (q["id"], q["question"])
            if conv["lang"] == "mixed":
                said = [m["content"] for s in conv["sessions"] for m in s["messages"]
                        if m["role"] == "user"]
                assert 2 * sum(map(both, said)) > len(said), conv["id"]
                assert 3 * sum(both(q["question"]) for q in conv["questions"]) >= \
                    len(conv["questions"]), conv["id"]


def test_the_held_out_part_is_a_balanced_fifth_and_disjoint(parts):
    public, held = parts["public"]["conversations"], parts["held-out"]["conversations"]
    assert {c["id"] for c in public}.isdisjoint(c["id"] for c in held)
    texts = {q["question"] for c in public for q in c["questions"]}
    assert texts.isdisjoint(q["question"] for c in held for q in c["questions"])
    share = len(held) / (len(held) + len(public))
    assert 0.15 <= share <= 0.25, share
    assert Counter(c["lang"] for c in held)["en"] == Counter(c["lang"] for c in held)["zh"]
    assert {c["lang"] for c in held} == set(membench.LANGUAGES)
    assert {q["category"] for c in held for q in c["questions"]} == set(membench.CATEGORIES)


# ----------------------------------------------------------------- the score, by hand

TINY = {"conversations": [{
    "id": "t1", "lang": "en", "title": "tiny", "sessions": [
        {"id": "t1s1", "date": "2026-03-02", "messages": [
            {"id": "t1m1", "role": "user", "content": "I'm vegetarian, and my rent is 3200 yuan."},
            {"id": "t1m2", "role": "assistant", "content": "Noted."},
            {"id": "t1m3", "role": "user", "content": "My neighbour's cat is called Tofu."},
            {"id": "t1m4", "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {
                    "name": "get_current_weather", "arguments": "{\"location\": \"Chengdu\"}"}}]},
            {"id": "t1m5", "role": "tool", "tool_call_id": "call_1",
             "content": "{\"forecast\": \"light rain\"}"}]},
        {"id": "t1s2", "date": "2026-03-09", "messages": [
            {"id": "t1m6", "role": "user", "content": "My rent went up to 3500 yuan."}]},
        {"id": "t1s3", "date": "2026-03-20", "messages": []}],
    "questions": [
        {"id": "t1q1", "session": "t1s2", "category": "preference", "lang": "en",
         "question": "Suggest a dinner.", "evidence": ["t1m1"], "facts": ["vegetarian"],
         "decoy_evidence": [], "decoys": []},
        {"id": "t1q2", "session": "t1s2", "category": "abstention", "lang": "en",
         "question": "What's my cat called?", "evidence": [], "facts": [],
         "decoy_evidence": ["t1m3"], "decoys": ["Tofu"]},
        {"id": "t1q3", "session": "t1s3", "category": "update", "lang": "en",
         "question": "What's my rent now?", "evidence": ["t1m6"], "facts": ["3500"],
         "decoy_evidence": [], "decoys": []},
        {"id": "t1q4", "session": "t1s3", "category": "single", "lang": "en",
         "question": "What was the forecast?", "evidence": ["t1m5"], "facts": ["light rain"],
         "decoy_evidence": [], "decoys": []}]}]}


def test_the_tiny_case_is_well_formed():
    assert mdata.problems(TINY) == []


def by_id(results: Results) -> dict:
    return {row["id"]: row for row in results.rows}


def test_sending_nothing_finds_nothing_and_abstains_perfectly():
    rows = by_id(membench.run(Nothing, TINY, send=False))
    assert [rows[q]["found"] for q in ("t1q1", "t1q3", "t1q4")] == [False] * 3
    assert rows["t1q2"]["abstained"] is True and rows["t1q2"]["decoys_sent"] == []


def test_sending_everything_finds_all_costs_most_and_fails_abstention():
    everything = by_id(membench.run(FullHistory, TINY, send=False))
    nothing = by_id(membench.run(Nothing, TINY, send=False))
    assert [everything[q]["found"] for q in ("t1q1", "t1q3", "t1q4")] == [True] * 3
    assert everything["t1q2"]["abstained"] is False
    assert everything["t1q2"]["decoys_sent"] == ["Tofu"]
    assert all(everything[q]["tokens"] > nothing[q]["tokens"] for q in everything)
    assert everything["t1q3"]["tokens"] > everything["t1q1"]["tokens"], "it grows"


def test_what_is_scored_is_what_went_out_on_the_wire():
    sent = membench.run(FullHistory, TINY, send=True, judge=False)
    built = membench.run(FullHistory, TINY, send=False)
    assert [(r["found"], r["abstained"], r["tokens"]) for r in sent.rows] == \
        [(r["found"], r["abstained"], r["tokens"]) for r in built.rows]
    assert sent.model_calls == len(TINY["conversations"][0]["questions"])


def test_a_learners_strategy_runs_and_is_scored():
    class RentOnly(Strategy):
        """Keeps only what the user said about rent."""
        def __init__(self, context):
            super().__init__(context)
            self.notes = []

        def take(self, message):
            if message["role"] == "user" and "rent" in message["content"]:
                self.notes = [message["content"]]  # the newest wins

        def request(self, question):
            return [self.system(*self.notes), {"role": "user", "content": question}]

    rows = by_id(membench.run(RentOnly, TINY, send=False, name="rent only"))
    assert rows["t1q3"]["found"] is True and rows["t1q4"]["found"] is False
    assert rows["t1q2"]["abstained"] is True


def test_compaction_items_are_read_through_the_teaching_view():
    rows = by_id(membench.run("compaction", TINY, send=True, judge=False))
    # compaction keeps the user's messages, drops the finished tool round
    assert rows["t1q3"]["found"] is True and rows["t1q1"]["found"] is True
    assert rows["t1q4"]["found"] is False
    assert rows["t1q2"]["abstained"] is False


def test_facts_match_across_full_width_forms_and_case():
    q = TINY["conversations"][0]["questions"][2]
    assert score_request(q, [{"role": "user", "content": "租金 ３５００ 元"}])["found"] is True
    assert "light rain" in request_text([{"role": "tool", "content": "LIGHT  Rain"}])
    assert score_request(q, {"instructions": "rent 3500", "input": "hi"})["found"] is True


def test_the_judge_rule():
    single, cat = TINY["conversations"][0]["questions"][2], TINY["conversations"][0]["questions"][1]
    assert judge_answer(single, "Your rent is 3500 yuan now.")
    assert not judge_answer(single, "Your rent is 3200 yuan.")
    assert judge_answer(cat, "I don't know, you never told me your cat's name.")
    assert not judge_answer(cat, "Your cat is Tofu.")
    assert not judge_answer(cat, "Your cat is Mimi."), "a made-up answer does not decline"


def test_the_table_and_the_plot():
    results = [membench.run(Nothing, TINY, send=False, name="nothing"),
               membench.run(FullHistory, TINY, send=False, name="everything")]
    text = membench.table(results)
    lines = text.splitlines()
    assert lines[1].split()[0] == "nothing" and lines[2].split()[0] == "everything"
    assert "0%" in lines[1] and "100%" in lines[2]
    assert figures(results[1])["found"] == (3, 3)
    assert figures(results[0])["abstention"] == (1, 1)
    assert membench.plot(results).png().startswith(b"\x89PNG")


@pytest.mark.parametrize("name", sorted(membench.STRATEGIES))
def test_every_strategy_runs_and_never_keeps_a_question(name):
    """Each strategy of the series, on the tiny case: a row per question, and the request
    for a question never holds an earlier question (a probe is not remembered)."""
    results = membench.run(name, TINY, send=False)
    assert [r["id"] for r in results.rows] == ["t1q1", "t1q2", "t1q3", "t1q4"]
    assert all(r["tokens"] > 0 for r in results.rows)
    make = membench.STRATEGIES[name]
    client, model, _recorder = recording_client()
    with tempfile.TemporaryDirectory() as where:
        strategy = make(Context("probe", client, model, where))
        strategy.start_session("p1", "2026-03-02")
        strategy.take({"role": "user", "content": "I'm vegetarian."})
        strategy.end_session()
        strategy.start_session("p2", "2026-03-09")
        strategy.request("What is the capital of Freedonia?")
        later = request_text(strategy.request("Suggest a dinner."))
        if strategy.context._store is not None:
            strategy.context._store.close()
    assert "freedonia" not in later


def test_everything_finds_every_fact_of_the_public_part(parts):
    """The data and the score agree: sending the whole history (or the plain file) holds
    every answerable question's facts, and sending nothing holds no decoy."""
    data = parts["public"]
    for name in ("full history", "plain file"):
        rows = membench.run(name, data, send=False).rows
        assert [r["id"] for r in rows if r["found"] is False] == [], name
        assert all(r["abstained"] is False for r in rows if r["category"] == "abstention")
    rows = membench.run(Nothing, data, send=False).rows
    assert all(r["abstained"] for r in rows if r["category"] == "abstention")


def test_answers_are_judged_when_asked():
    """The judge's code path (a real provider's runs take it by default; CI never calls
    one): each row gets the answer and the judge rule's verdict."""
    rows = membench.run(FullHistory, TINY, send=True, judge=True).rows
    assert all(isinstance(r["answer"], str) and isinstance(r["correct"], bool) for r in rows)


def test_the_benchmark_prints_the_table(capsys):
    from scripts_support import load_benchmark

    bench = load_benchmark("memory_bench")
    assert bench.main(["--part", "held-out", "--strategy", "full history", "--strategy",
                       "message trim", "--no-send"]) == 0
    out = capsys.readouterr().out
    assert "held-out part: 8 conversations" in out
    assert out.count("full history") == 1 and "message trim" in out
    assert "56 questions" in out
