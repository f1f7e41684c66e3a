"""Cross-language retrieval: a Chinese question finds an English memory, and the reverse.

The offline embedder (lesson_lib.vectors: the multilingual Universal Sentence Encoder) puts a
sentence and its translation close, so long-term memory's search finds a memory whatever
language it was written in. The cases are this file's own (not the frozen evaluation's,
lesson_lib/data/crosslang_eval.json, nor the development cases of benchmarks/): one user's
memories, half English, half Chinese, each asked about in the other language.
"""

from __future__ import annotations

import pytest

from lesson_lib.embeddings import Embedder
from lesson_lib.longterm import LongTermMemory
from lesson_lib.sessions import SessionStore

MEMORIES = {  # key: (text, the question in the other language, a code-switched question)
    "bike": ("My bike was stolen outside the gym last Thursday.",
             "我的自行车是在哪里被偷的？", "我的 bike 什么时候丢的？"),
    "flat": ("We are moving to a flat near the river in September.",
             "我们九月要搬去哪里？", "我们什么时候 move 到新家？"),
    "violin": ("My daughter practises the violin for an hour after school.",
               "女儿每天练什么乐器？", "女儿放学后练多久 violin？"),
    "visa": ("The embassy said my visa will be ready in ten working days.",
             "签证多久能办好？", "我的 visa 什么时候能拿到？"),
    "boss": ("My new manager, Mrs. Okafor, prefers reports on Monday mornings.",
             "新领导喜欢什么时候收报告？", "我的 manager 喜欢周几收报告？"),
    "gluten": ("我吃了面筋类的东西就会肚子疼，所以买面包要看配料表。",
               "Which food gives me a stomach ache?", "我吃什么 food 会肚子疼？"),
    "piano": ("爸爸退休以后开始学钢琴，每周去老年大学上两次课。",
              "What is my father learning since he retired?", "爸爸学 piano 多久一次课？"),
    "garage": ("车库的遥控器坏了，物业说下周一派人来修。",
               "When will the garage remote be repaired?", "车库的 remote 什么时候修？"),
    "wine": ("我不喝酒，聚餐的时候一般点椰汁或者乌龙茶。",
             "What do I order at dinners instead of alcohol?", "聚餐时我喝什么 drinks？"),
    "neighbour": ("楼下的邻居养了一条金毛，每天早上六点叫。",
                  "What kind of dog does my neighbour have?", "楼下 neighbour 的狗几点叫？"),
}
OTHERS = [  # memories nothing here asks about, in both languages
    "I booked a table for four at the noodle bar on Friday.",
    "The printer on the third floor is out of toner again.",
    "Our team switched to a new project tracker this week.",
    "我周末去图书馆还了三本书。",
    "公司年会定在十二月二十号。",
    "表哥下个月从广州来出差。",
]


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crosslang")
    with SessionStore(f"sqlite:///{folder / 'm.db'}") as store:
        memory = LongTermMemory(store, "user", embedder=Embedder.offline())
        ids = {key: memory.write(text, source="user").id
               for key, (text, _other, _mixed) in MEMORIES.items()}
        memory.write_many(OTHERS, source="session")
        memory.ids = ids
        yield memory


def rank(memory: LongTermMemory, question: str, key: str, method: str) -> int | None:
    hits = [h.id for h in memory.search(question, 3, method=method)]
    return hits.index(memory.ids[key]) + 1 if memory.ids[key] in hits else None


@pytest.mark.parametrize("method", ["fused", "dense"])
@pytest.mark.parametrize("key", sorted(MEMORIES))
def test_a_question_in_the_other_language_finds_the_memory(memory, key, method):
    text, question, _mixed = MEMORIES[key]
    assert rank(memory, question, key, method) is not None, (question, text)


def test_both_directions_are_covered():
    english = [k for k, (text, *_rest) in MEMORIES.items() if text.isascii()]
    assert 0 < len(english) < len(MEMORIES), "English memories asked in Chinese, and the reverse"
    assert all(not question.isascii() for k, (_t, question, _m) in MEMORIES.items()
               if k in english)


@pytest.mark.parametrize("key", sorted(MEMORIES))
def test_a_code_switched_question_finds_the_memory(memory, key):
    text, _other, mixed = MEMORIES[key]
    assert rank(memory, mixed, key, "fused") is not None, (mixed, text)


def test_the_answer_comes_first_across_languages(memory):
    first = [key for key, (_t, question, _m) in MEMORIES.items()
             if rank(memory, question, key, "dense") == 1]
    assert len(first) >= 9, f"only {first} came first"
