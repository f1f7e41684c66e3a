"""The trim bank's Chinese twin (trimcheck.bank("zh"), what the Chinese edition's checks
judge with): the same histories in Chinese, each keeping its trap. The same trims pass and
fail the same cases, for the same reasons, in both languages; each budget in tokens is
computed from the Chinese messages themselves."""

from __future__ import annotations

from functools import partial

import pytest
from check_support import recording_messages
from test_trimcheck import NAIVE_FAILS, SEED_FAILS, TOO_BIG, TRAPS

from lesson_lib.protocol import find_problems
from lesson_lib.repair import find_duplicate_ids
from lesson_lib.tokens import count_messages
from lesson_lib.trimcheck import (
    UNITS,
    bank,
    budget_trim,
    judge_one,
    judge_trim,
    naive_trim,
    seed_trim,
    too_big,
    trim_case,
    trim_cases,
)

PAIRS = list(zip(bank("en"), bank("zh"), strict=True))


def test_the_chinese_edition_judges_with_the_chinese_bank(speak):
    speak("zh")
    assert trim_cases() is bank("zh")
    speak("en")
    assert trim_cases() is bank("en")


@pytest.mark.parametrize("en, zh", PAIRS, ids=lambda c: c.name)
def test_each_case_has_a_chinese_twin_with_the_same_shape(en, zh):
    assert (zh.name, zh.protects, zh.broken, zh.max_messages) == (
        en.name, en.protects, en.broken, en.max_messages)
    assert [m["role"] for m in zh.messages] == [m["role"] for m in en.messages]
    said = " ".join(str(m.get("content") or "") for m in zh.messages)
    for english in ("Xiaoming", "Chengdu", "Shanghai", "weather", "Thanks"):
        assert english not in said, f"{zh.name}: {english!r} in the Chinese twin"
    refused = bool(find_problems(zh.messages) + find_duplicate_ids(zh.messages))
    assert refused == zh.broken


def test_the_token_budgets_are_the_chinese_messages_own():
    """Chinese costs other token counts than English: a budget computed from the messages
    (every case but the two fixed ones) differs somewhere, and each fits its own case."""
    computed = [(en, zh) for en, zh in PAIRS if en.name not in (
        "huge tool result in the current turn", "a huge user message")]
    assert any(en.max_tokens != zh.max_tokens for en, zh in computed)
    fits = {zh.name for zh in bank("zh") if count_messages(zh.messages) <= zh.max_tokens}
    assert fits == {en.name for en in bank("en")
                    if count_messages(en.messages) <= en.max_tokens}


def failing(fn, unit, lang):
    return {v.case.name for v in judge_trim(fn, unit, cases=bank(lang)) if not v.passed}


@pytest.mark.parametrize("unit", UNITS)
def test_the_same_trims_fail_the_same_cases(unit):
    assert failing(partial(naive_trim, unit=unit), unit, "zh") == NAIVE_FAILS[unit]
    assert failing(partial(seed_trim, unit=unit), unit, "zh") == SEED_FAILS[unit]
    assert failing(partial(budget_trim, unit=unit), unit, "zh") == set()
    assert {c.name for c in bank("zh") if too_big(c, unit)} == TOO_BIG[unit]


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_each_trap_is_caught_for_the_same_reason(name, speak):
    trap, unit, _says = TRAPS[name]
    found = {}
    for lang in ("en", "zh"):
        speak(lang)
        case = trim_case(name)
        with recording_messages() as said:
            verdict = judge_one(trap, case, unit)
            problems = [what for what, _hint in verdict.problems]
        assert not verdict.passed, f"{name} ({lang}): the trap passed"
        assert judge_one(partial(budget_trim, unit=unit), case, unit).passed
        found[lang] = (said, len(problems))
    assert found["en"] == found["zh"], f"{name}: {found}"
