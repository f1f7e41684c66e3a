"""The clock worlds of tests/test_run_all.py, asked directly in English and in Chinese.

A Chinese notebook whose code is its English twin's but for the strings is not run again in
the clock worlds (the English run shows what the clock does to that code). What differs is
the text: these tests ask the offline model, in both languages, at each world's frozen
instant, what time it is where the world is and in Shanghai (the library's default zone),
and read a long-term memory's date back, so an answer in Chinese that gets the hour or the
day wrong at a daylight-saving change or at New Year fails here.
"""

from __future__ import annotations

import re
from datetime import datetime

import pytest
import pytz
from run_all import WORLDS

from lesson_lib.agent import LoopAgent
from lesson_lib.clock import frozen
from lesson_lib.i18n import use_language
from lesson_lib.longterm import LongTermMemory, context_message
from lesson_lib.offline import offline_client
from lesson_lib.sessions import SessionStore

FROZEN = [w for w in WORLDS.values() if w.frozen_at is not None]
CITY = {"America/New_York": ("New York", "纽约"), "Asia/Shanghai": ("Shanghai", "上海")}
ASK = {"en": "What time is it in {}?", "zh": "{}现在几点？"}
FACT = {"en": ("I am vegetarian.", "Am I vegetarian?"), "zh": ("我吃素。", "我吃素吗？")}


@pytest.fixture(params=["en", "zh"])
def lang(request):
    use_language(request.param)
    yield request.param
    use_language(None)


def day_pattern(moment: datetime) -> str:
    """The day as either language writes it: 2027-01-01, or 2027 年 1 月 1 日 / 1月1日."""
    return (rf"{moment:%Y-%m-%d}|{moment.month}\s*月\s*{moment.day}\s*日")


@pytest.mark.parametrize("world", FROZEN, ids=lambda w: w.name)
@pytest.mark.parametrize("zone", sorted(CITY))
def test_the_time_asked_in_each_language_is_the_local_time_at_that_instant(world, zone, lang):
    instant = datetime.fromisoformat(world.frozen_at)
    local = instant.astimezone(pytz.timezone(zone))
    city = CITY[zone][0 if lang == "en" else 1]
    with frozen(world.frozen_at):
        answer = LoopAgent(client=offline_client()).chat(ASK[lang].format(city))
    assert f"{local:%H:%M}" in answer or f"{local.hour}:{local:%M}" in answer, (
        f"{world.name}, {lang}: asked the time in {city} at {world.frozen_at}; expected "
        f"{local:%H:%M} local time in the answer, got {answer!r}")
    assert re.search(day_pattern(local), answer), (
        f"{world.name}, {lang}: expected the local day {local:%Y-%m-%d} in {answer!r}")


@pytest.mark.parametrize("world", FROZEN, ids=lambda w: w.name)
def test_a_memory_written_at_that_instant_carries_its_day_in_each_language(world, lang):
    instant = datetime.fromisoformat(world.frozen_at)
    fact, question = FACT[lang]
    with frozen(world.frozen_at):
        memory = LongTermMemory(SessionStore("sqlite://"), "learner")
        memory.write(fact, source="user")
        hits = memory.search(question)
        context = context_message(hits, 500)["content"]
    assert hits and hits[0].text == fact, f"{world.name}, {lang}: {fact!r} not found: {hits}"
    assert hits[0].created_at.startswith(f"{instant:%Y-%m-%d}"), (
        f"{world.name}, {lang}: stored at {hits[0].created_at}, expected {world.frozen_at}")
    assert re.search(day_pattern(instant), context), (
        f"{world.name}, {lang}: the context should date the memory {instant:%Y-%m-%d}: "
        f"{context!r}")
