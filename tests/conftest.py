"""Shared test set-up: no test may open a connection outside 127.0.0.1."""

import ipaddress
import socket

import pytest

_real_connect = socket.socket.connect


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        ok = host == "localhost"
        try:
            ok = ok or ipaddress.ip_address(host).is_loopback
        except ValueError:
            pass
        if not ok:
            raise AssertionError(f"test tried to connect to {address!r}: only 127.0.0.1 is allowed")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _short_time_limit(monkeypatch):
    """A check stops the learner's code on one input after 2 s here, not 5: the banks hold
    trims that never end, and each is waited for (what a trim does takes milliseconds)."""
    from lesson_lib.exercises import deadline

    monkeypatch.setattr(deadline, "CALL_SECONDS", 2)


@pytest.fixture(autouse=True)
def _hints_start_afresh_in_each_language():
    """check_support.in_both_languages keeps each language's hint steps for one test only."""
    import check_support

    check_support.STEPS.clear()
    yield
    check_support.STEPS.clear()


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.delenv("LESSON_BACKEND", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """A session store's URL: a SQLite file, then a fresh schema on the test PostgreSQL server
    (skipped without one; see tests/test_sessions.py)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sessions.db'}"
        return
    from test_sessions import postgres_database  # noqa: PLC0415

    with postgres_database() as pg_url:
        yield pg_url


@pytest.fixture
def every_line():
    """A check prints every line while the test runs: a long report is otherwise shortened
    to its first failures (lesson_lib.exercises.Report), and these tests read which cases
    it names."""
    from lesson_lib.exercises import show_details

    show_details()
    yield
    show_details(False)


@pytest.fixture
def sqlite_store(tmp_path):
    """A session store in a SQLite file of its own, closed after the test."""
    from lesson_lib.sessions import SessionStore

    with SessionStore(f"sqlite:///{tmp_path / 'sessions.db'}") as store:
        yield store


@pytest.fixture
def speak(monkeypatch):
    """Set the language the library speaks for one test (`speak("zh")`); the process's
    own choice comes back after it."""
    from lesson_lib import i18n

    monkeypatch.delenv(i18n.LANG_ENV, raising=False)
    yield i18n.use_language
    i18n.use_language(None)
