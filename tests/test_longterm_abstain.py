"""Search can say "nothing": the minimum score (min_score=, a floor on the cosine), in English,
Chinese and across the two; and the fusion's known cliff (a memory first by words falls
behind when it is outside the dense candidates), with the cosine it still gets. Tests taking `url` run on SQLite and PostgreSQL."""

from __future__ import annotations

import math

import pytest

from lesson_lib import longterm
from lesson_lib.embeddings import Embedder
from lesson_lib.longterm import ABSTAIN_FLOOR, MIN_SCORE, LongTermMemory, recall
from lesson_lib.sessions import SessionStore

OFFLINE = Embedder.offline()

MEMORIES = [
    ("My dog is called Biscuit; he is a three-year-old beagle.", "user", None),
    ("I am allergic to shellfish, especially shrimp.", "user", None),
    ("我在一家做太阳能电池板的公司当工程师。", "user", None),
    ("我妹妹住在杭州，她是小学老师。", "user", None),
    ("weather(Lisbon, May 12): sunny, 24°C, light wind.", "tool", "weather(Lisbon)"),
]


@pytest.fixture
def memory(url):
    with SessionStore(url) as store:
        memory = LongTermMemory(store, "ana", embedder=OFFLINE)
        for text, source, ref in MEMORIES:
            memory.write(text, source=source, ref=ref)
        yield memory


@pytest.mark.parametrize("question", ["What is my favourite movie?", "Which bank do I use?",
                                      "我喜欢听什么音乐？", "我的护照号码是多少？"])
def test_a_question_nothing_answers_gets_no_hit_and_no_context(memory, question):
    assert memory.search(question, min_score=ABSTAIN_FLOOR) == []
    assert recall(question, memory, budget=500, min_score=ABSTAIN_FLOOR) is None
    assert len(memory.search(question)) == 5, "no floor by default: the k best, as before"


@pytest.mark.parametrize(("question", "answer"), [
    ("Which food am I allergic to?", "shellfish"),          # en → en
    ("我妹妹是做什么工作的？", "杭州"),                       # zh → zh
    ("我的狗叫什么名字？", "Biscuit"),                        # zh → en
    ("Where does my sister live?", "杭州"),                  # en → zh
    ("What does my company make?", "太阳能"),                # en → zh
])
def test_answerable_questions_keep_their_hits(memory, question, answer):
    hits = memory.search(question, min_score=ABSTAIN_FLOOR)
    assert any(answer in h.text for h in hits), [h.text for h in hits]
    assert all(h.dense is not None and h.dense >= ABSTAIN_FLOOR for h in hits)
    context = recall(question, memory, budget=500, min_score=ABSTAIN_FLOOR)
    assert context is not None and answer in context["content"]


def test_the_floor_is_a_parameter(memory):
    question = "Which food am I allergic to?"
    assert memory.search(question, min_score=1.0) == []
    assert recall(question, memory, budget=500, min_score=1.0) is None
    assert len(memory.search(question, min_score=-1.0)) == 5
    assert MIN_SCORE is None, "off by default: a cosine floor cannot tell a near miss"
    assert "min_score" in LongTermMemory.search.__doc__ and str(ABSTAIN_FLOOR) in \
        LongTermMemory.search.__doc__
    for bad in (2, "high", True, -1.5):
        with pytest.raises(ValueError, match="min_score"):
            memory.search(question, min_score=bad)


@pytest.mark.parametrize("method", longterm.METHODS)
def test_every_method_applies_the_floor(memory, method):
    assert memory.search("What is my favourite movie?", method=method,
                         min_score=ABSTAIN_FLOOR) == []
    hits = memory.search("allergic shellfish", method=method, min_score=ABSTAIN_FLOOR)
    assert hits and "shellfish" in hits[0].text


def test_a_tool_memory_s_context_line_says_where_it_came_from(memory):
    context = recall("What's the weather going to be in Lisbon?", memory, budget=500)
    assert context is not None
    assert "[tool, weather(Lisbon)] weather(Lisbon, May 12)" in context["content"]


# ----------------------------------------------------------------- the cliff

class _Placed:
    """A test embedder that puts each memory at a chosen cosine from the question e0: the
    memory's vector is c·e0 + sqrt(1 - c²)·e_j, its own axis; any other text is on the last
    axis (cosine 0 with everything)."""

    name = "test-placed"

    def __init__(self, cosines: dict[str, float]):
        self.cosines = cosines
        self.axis = {text: j for j, text in enumerate(cosines, start=1)}
        self.size = len(cosines) + 2

    def __call__(self, texts):
        import numpy as np  # noqa: PLC0415

        out = np.zeros((len(texts), self.size), dtype=np.float32)
        for row, text in enumerate(texts):
            if text == QUERY:
                out[row, 0] = 1.0
            elif text in self.cosines:
                c = self.cosines[text]
                out[row, 0], out[row, self.axis[text]] = c, math.sqrt(1 - c * c)
            else:
                out[row, -1] = 1.0
        return out


QUERY = "kiwi zebra"


def test_the_cliff_a_memory_first_by_words_outside_the_dense_candidates_falls_behind(url):
    """60 memories closer in meaning than the target (dense ranks 1 … 50 fill the candidate
    list); six of those at dense ranks 45 … 50 share one word with the question; the target
    shares both, so it is first by words, and 51st by meaning. Reciprocal rank fusion gives
    it nothing from the dense list (1/61 in all), below each of the six (about 1/105 +
    1/65): it falls to seventh. That is the cliff longterm's docstring keeps (removing it as
    tried cost cross-language recall); the hit still carries its own cosine."""
    assert longterm.CANDIDATES == 50
    pads = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    fillers = []
    for rank in range(1, 61):
        if 45 <= rank <= 50:  # the nearer in meaning, the longer: the lower by words
            text = f"kiwi note {rank} " + " ".join(pads[: 2 + (50 - rank)])
        else:
            text = f"plain note {rank} about something close"
        fillers.append((text, 0.95 - 0.01 * rank))
    target = "kiwi zebra record"
    cosines = dict(fillers)
    cosines[target] = 0.95 - 0.01 * 50 - 0.005  # between dense ranks 50 and 51
    with SessionStore(url) as store:
        memory = LongTermMemory(store, "ana", embedder=_Placed(cosines))
        for text, _c in fillers:
            memory.write(text, source="document")
        wanted = memory.write(target, source="document")
        by_words = memory.search(QUERY, 5, method="lexical", min_score=None)
        assert by_words[0].id == wanted.id, "the target is first by words"
        by_meaning = [h.id for h in memory.search(QUERY, 60, method="dense", min_score=None)]
        assert by_meaning.index(wanted.id) == 50, "and 51st by meaning"
        hits = memory.search(QUERY, 10)
        place = [h.id for h in hits].index(wanted.id)
        assert place == 6, f"expected the cliff to leave it seventh, got {place + 1}"
        assert hits[place].dense == pytest.approx(cosines[target], abs=1e-5)
