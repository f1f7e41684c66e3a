"""lesson_lib.clock: a real clock by default, frozen by LESSON_FROZEN_TIME or `with frozen(...)`."""

from datetime import datetime, timedelta, timezone

import pytest
import pytz

from lesson_lib import clock
from lesson_lib.clock import ENV_VAR, FrozenTimeError, frozen, now


@pytest.fixture(autouse=True)
def _no_frozen_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_now_is_aware_and_in_the_asked_zone():
    moment = now("Europe/London")
    assert moment.tzinfo is not None, f"expected an aware datetime, got {moment!r}"
    assert moment.tzinfo.zone == "Europe/London", f"expected Europe/London, got {moment.tzinfo}"


def test_now_defaults_to_shanghai_and_runs_when_not_frozen():
    before = datetime.now(timezone.utc)
    moment = now()
    after = datetime.now(timezone.utc)
    assert moment.tzinfo.zone == "Asia/Shanghai", f"expected Asia/Shanghai, got {moment.tzinfo}"
    assert before <= moment <= after, f"expected a time between {before} and {after}, got {moment}"


def test_env_var_freezes_the_clock(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "2026-05-01T09:30:00+00:00")
    got = now("Asia/Shanghai").strftime("%Y-%m-%d %H:%M:%S %Z%z")
    assert got == "2026-05-01 17:30:00 CST+0800", f"expected 17:30 CST in Shanghai, got {got}"


def test_env_var_accepts_z_for_utc(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "2026-05-01T09:30:00Z")
    got = now("UTC")
    expected = datetime(2026, 5, 1, 9, 30, tzinfo=timezone.utc)
    assert got == expected, f"expected {expected}, got {got}"


@pytest.mark.parametrize("bad", ["yesterday", "2026-05-01T09:30:00", "2026-13-01T00:00:00+00:00"])
def test_invalid_env_var_names_the_variable_the_value_and_an_example(monkeypatch, bad):
    monkeypatch.setenv(ENV_VAR, bad)
    with pytest.raises(FrozenTimeError) as caught:
        now()
    text = str(caught.value)
    for part in (ENV_VAR, repr(bad), clock.EXAMPLE):
        assert part in text, f"expected {part!r} in the error, got {text!r}"


def test_blank_env_var_means_not_frozen(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "  ")
    assert abs(now("UTC") - datetime.now(timezone.utc)) < timedelta(seconds=5)


def test_frozen_context_manager_freezes_and_restores():
    with frozen("2026-05-01T09:30:00+00:00") as instant:
        first, second = now("UTC"), now("America/New_York")
    assert first == second == instant, f"expected both to be {instant}, got {first} and {second}"
    assert second.strftime("%H:%M %Z") == "05:30 EDT", f"expected 05:30 EDT, got {second}"
    assert abs(now("UTC") - datetime.now(timezone.utc)) < timedelta(seconds=5), "not restored"


def test_frozen_wins_over_env_var_and_nests(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "2030-01-01T00:00:00+00:00")
    with frozen(datetime(2026, 5, 1, 9, 30, tzinfo=timezone.utc)):
        with frozen("2027-01-01T00:00:00+08:00"):
            inner = now("UTC")
        outer = now("UTC")
    after = now("UTC")
    assert inner.isoformat() == "2026-12-31T16:00:00+00:00", f"inner: got {inner}"
    assert outer.isoformat() == "2026-05-01T09:30:00+00:00", f"outer: got {outer}"
    assert after.isoformat() == "2030-01-01T00:00:00+00:00", f"env var again: got {after}"


@pytest.mark.parametrize("bad", ["not a time", "2026-05-01 09:30", datetime(2026, 5, 1), 42])
def test_frozen_rejects_an_instant_without_offset(bad):
    with pytest.raises(FrozenTimeError) as caught:
        with frozen(bad):
            pass
    assert clock.EXAMPLE in str(caught.value), f"expected an example, got {caught.value}"


def test_frozen_is_restored_after_an_exception():
    with pytest.raises(RuntimeError):
        with frozen("2026-05-01T09:30:00+00:00"):
            raise RuntimeError("boom")
    assert clock._frozen_at is None, f"expected no frozen time left, got {clock._frozen_at}"


def test_unknown_time_zone_raises_pytz_error():
    with pytest.raises(pytz.UnknownTimeZoneError):
        now("Mars/Base")


# What reads the time or the machine's time zone, called anywhere in lesson_lib but clock.py.
LOCAL_TIME_CALLS = {"now", "today", "utcnow", "localtime", "strftime", "ctime", "mktime",
                    "asctime", "fromtimestamp", "tzset", "time", "time_ns"}


def test_the_library_reads_the_time_only_through_clock_now():
    """tests/test_run_all.py leans on this: a notebook that imports no time module is the
    same run in every time zone, and on every frozen clock when clock.now() is not called."""
    import ast
    from pathlib import Path

    import lesson_lib

    found = []
    for path in sorted(Path(lesson_lib.__file__).parent.rglob("*.py")):
        if path.name == "clock.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            attr = node.func.attr
            if name in ("datetime", "date", "time") and attr in LOCAL_TIME_CALLS:
                found.append(f"{path.name}:{node.lineno} {name}.{attr}()")
            elif attr == "astimezone" and not node.args:
                found.append(f"{path.name}:{node.lineno} .astimezone() (the machine's zone)")
        text = path.read_text(encoding="utf-8")
        for env in ('"TZ"', "'TZ'"):
            if f"environ[{env}]" in text or f"environ.get({env}" in text or f"getenv({env}" in text:
                found.append(f"{path.name}: reads the TZ variable")
    assert not found, "read the time through lesson_lib.clock.now(): " + ", ".join(found)
