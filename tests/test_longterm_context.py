"""Retrieval before the call (lesson_lib.longterm): context_message puts the best hits into
one labelled system message under a token budget, recall searches and does it, and
with_context places the message so the history stays valid."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.embeddings import Embedder
from lesson_lib.longterm import (
    CONTEXT_HEAD,
    LongTermMemory,
    context_message,
    recall,
    with_context,
)
from lesson_lib.protocol import validate_messages
from lesson_lib.sessions import SessionStore
from lesson_lib.tokens import count_messages

OFFLINE = Embedder.offline()
CALL = {"role": "assistant", "content": None, "tool_calls": [{
    "id": "call_1", "type": "function",
    "function": {"name": "get_current_weather", "arguments": '{"location": "Chengdu"}'}}]}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "24 °C"}


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    path = tmp_path_factory.mktemp("context") / "m.db"
    with SessionStore(f"sqlite:///{path}") as store:
        memory = LongTermMemory(store, "xiaoming", embedder=OFFLINE)
        memory.write("I am vegetarian.", source="user", ref="s-1", at="2026-02-11T12:00:00Z")
        memory.write("We chose the G89 train to Chengdu on 14 May.", source="session",
                     ref="s-2", at="2026-03-02T10:00:00Z")
        memory.write("Chengdu metro: " + "line 18 goes to the airport; " * 40,
                     source="document", ref="metro.md", at="2026-01-01T00:00:00Z")
        yield memory


def test_the_message_is_a_labelled_system_message_newest_first(memory):
    message = context_message(memory.search("Chengdu train", 3, min_score=None), 10_000)
    assert message["role"] == "system" and set(message) == {"role", "content"}
    lines = message["content"].splitlines()
    assert lines[0] == CONTEXT_HEAD
    assert lines[1].startswith("- 2026-03-02 [session, s-2] We chose")
    assert lines[2] == "- 2026-02-11 [user, s-1] I am vegetarian."
    assert lines[3].startswith("- 2026-01-01 [document, metro.md] Chengdu metro")


def test_a_hit_that_does_not_fit_is_skipped_and_the_next_tried(memory):
    hits = memory.search("Which metro line goes to the airport?", 3, min_score=None)
    assert hits[0].source == "document"  # the long one ranks first
    budget = count_messages([{"role": "system", "content": CONTEXT_HEAD}]) + 72  # two short lines
    message = context_message(hits, budget)
    assert message is not None and "metro.md" not in message["content"]
    assert count_messages([message]) <= budget and len(message["content"].splitlines()) == 3


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(budget=st.integers(-5, 700))
def test_never_over_the_budget_and_none_rather_than_an_empty_block(memory, budget):
    message = context_message(memory.search("Chengdu", 3, min_score=None), budget)
    if message is None:
        smallest = {"role": "system", "content": CONTEXT_HEAD + "\n- 2026-02-11 [user, s-1] "
                                                 "I am vegetarian."}
        assert count_messages([smallest]) > budget
    else:
        assert count_messages([message]) <= budget
        assert len(message["content"].splitlines()) >= 2


def test_no_hits_no_message_and_a_budget_must_be_a_number(memory):
    assert context_message([], 1000) is None
    with pytest.raises(ValueError, match="budget is a number of tokens"):
        context_message([], "1000")


def test_recall_searches_and_only_reads(memory):
    before = [(m.id, m.text) for m in memory.all()]
    message = recall("What do I not eat?", memory, 1000, k=1)
    assert message["content"].count("\n- ") == 1
    assert [(m.id, m.text) for m in memory.all()] == before


def test_with_context_goes_before_the_latest_user_message_and_stays_valid(memory):
    history = [{"role": "system", "content": "You are helpful."},
               {"role": "user", "content": "Weather in Chengdu?"}, CALL, RESULT,
               {"role": "assistant", "content": "24 °C."},
               {"role": "user", "content": "When does my train leave?"}]
    context = recall("When does my train leave?", memory, 300, min_score=None)  # cosine 0.14
    sent = with_context(history, context)
    validate_messages(sent)
    assert sent[-2] == context and sent[-1] == history[-1] and sent[:-2] == history[:-1]
    assert len(history) == 6  # the history itself is not changed
    mid_round = history[:3] + [RESULT]  # the latest user message precedes the tool round
    sent = with_context(mid_round, context)
    validate_messages(sent)
    assert sent[1] == context and sent[3:] == [CALL, RESULT]
    assert with_context(history, None) == history
    assert with_context([], context) == [context]
    with pytest.raises(ValueError, match="system message"):
        with_context(history, {"role": "user", "content": "x"})


def test_the_recall_plot_is_a_png_named_by_its_text():
    from lesson_lib.longterm_eval import plot_recall

    report = {"fused": {"all": 0.9, "en": 0.88, "zh": 0.93},
              "dense": {"all": 0.8, "en": 0.9, "zh": 0.7},
              "lexical": {"all": 0.85, "en": 0.8, "zh": 0.9}}
    plot = plot_recall(report)
    assert plot.png().startswith(b"\x89PNG") and plot.png() == plot.png()
    assert repr(plot) == "<CostPlot: recall@5 of fused, dense, lexical in all, en, zh>"
