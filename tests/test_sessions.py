"""The session store (mid-term memory): units, order, reloads, repairs, sessions, profiles.

Every test that takes `url` runs on SQLite and on PostgreSQL. PostgreSQL needs a server:
`source .ci/postgres.sh start` exports LESSON_TEST_POSTGRES_URL; without it those tests
are skipped, unless LESSON_REQUIRE_POSTGRES=1 (CI), which makes them fail. Each
PostgreSQL test gets a schema of its own, so parallel workers never meet.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from messages import SYSTEM, answer, asks, conversations, result, user

from lesson_lib.agent import Agent
from lesson_lib.budget import MessageBudgetMemory, OverBudgetError, TokenBudgetMemory
from lesson_lib.memory import ShortTermMemory
from lesson_lib.protocol import ProtocolError, find_problems
from lesson_lib.repair import INTERRUPTED
from lesson_lib.sessions import (
    CorruptSessionError,
    NotAStoreError,
    SessionNotFoundError,
    SessionStore,
    StoredMemory,
    StoreError,
    StoreUnavailableError,
    UnitError,
    _rows,
    build_window,
    tables,
)

ROOT = Path(__file__).resolve().parent.parent
PG_URL_ENV, PG_REQUIRE_ENV = "LESSON_TEST_POSTGRES_URL", "LESSON_REQUIRE_POSTGRES"


# ----------------------------------------------------------------- databases

def postgres_admin_url() -> str:
    """The test server's URL, or a skip (a failure with LESSON_REQUIRE_POSTGRES=1)."""
    url = os.environ.get(PG_URL_ENV, "").strip()
    if url:
        return url
    reason = (f"PostgreSQL tests need {PG_URL_ENV}: start a throwaway server with "
              "`source .ci/postgres.sh start`")
    if os.environ.get(PG_REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({PG_REQUIRE_ENV}=1 makes a missing server a failure)")
    pytest.skip(reason)


@contextmanager
def postgres_database():
    """A new, empty schema on the test server (dropped afterwards): the URL to it, which
    puts it first on the search_path, so the store's tables go there."""
    import sqlalchemy as sa

    admin_url = sa.engine.make_url(postgres_admin_url())
    name = f"lesson_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
        yield admin_url.update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(
            hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        admin.dispose()


# `url`, the store fixture (a SQLite file, then a fresh PostgreSQL schema), is in conftest.py


@pytest.fixture
def store(url):
    with SessionStore(url) as opened:
        yield opened


@pytest.fixture
def sqlite_path(tmp_path):
    return tmp_path / "sessions.db"


def round_unit(*ids, text="Chengdu is cloudy, 16°C."):
    """A tool round as one unit: the call, its results, then the answer."""
    return [asks(*ids), *[result(i) for i in ids], answer(text)]


def rows(store, session_id):
    """(seq, unit, role) of every stored row, straight from the table."""
    import sqlalchemy as sa

    m = tables().messages
    with store._reading() as conn:
        return [tuple(r) for r in conn.execute(
            sa.select(m.c.seq, m.c.unit, m.c.role).where(m.c.session_id == session_id)
            .order_by(m.c.seq))]


def write_raw(store, session_id, messages):
    """Commit rows the way other code might: no unit rule, no checks (a legacy writer)."""
    m = tables().messages
    with store._writing() as conn:
        store._lock(conn, session_id)
        first = store._next_seq(conn, session_id)
        conn.execute(m.insert(), [{"session_id": session_id, "seq": first + k, "unit": first + k,
                                   "role": msg["role"], "message": json.dumps(msg)}
                                  for k, msg in enumerate(messages)])


# ----------------------------------------------------------------- units and order

def test_messages_come_back_exactly_as_given_in_seq_order(store):
    session = store.create_session("xiaoming", title="weather")
    units = [[SYSTEM], [user("我叫小明, what's the weather in 成都?")],
             round_unit("call_a", "call_b"),
             [{"role": "assistant", "content": "done", "refusal": None,
               "annotations": [], "extra": {"nested": [1, 2.5, True, None]}}]]
    for unit in units:
        session.add_items(unit)
    expected = [m for unit in units for m in unit]
    assert session.get_items() == expected
    assert store.load(session.session_id) == (expected, [])
    assert [r[0] for r in rows(store, session.session_id)] == list(range(len(expected)))
    assert [r[1] for r in rows(store, session.session_id)] == [0, 1, 2, 2, 2, 2, 6], (
        "unit = the seq where its unit starts: the tool round is one unit")


def test_a_unit_that_leaves_a_call_open_is_refused_and_nothing_is_written(store):
    session = store.create_session("u")
    session.add_items([user()])
    before = session.get_items()
    for unit in ([asks("call_1")],                                  # the call alone
                 [asks("call_1", "call_2"), result("call_1")],      # one reply missing
                 [result("call_1"), answer()],                      # a reply to no call
                 [user(), asks("call_1"), user(), result("call_1")]):  # interrupted round
        with pytest.raises(UnitError) as caught:
            session.add_items(unit)
        text = str(caught.value)
        assert "nothing was written" in text and "in the unit being written" in text
        assert isinstance(caught.value, ProtocolError), "a UnitError is the API's rule too"
    open_call = pytest.raises(UnitError, session.add_items, [asks("call_1")]).value
    assert "a unit must close every tool call it opens" in str(open_call)
    assert "add_many([assistant, *replies])" in str(open_call)
    assert session.get_items() == before
    assert len(rows(store, session.session_id)) == 1


@pytest.mark.parametrize("bad, words", [
    ("hello", "must be a dict"),
    ({"content": "no role"}, "has no 'role'"),
    ({"role": "tool", "content": "x"}, "must say which call it answers"),
    ({"role": "user", "content": ("a", "tuple")}, "content must be a string"),
    ({"role": "user", "content": "x", "meta": ("a", "tuple")}, "cannot be stored as JSON"),
    ({"role": "user", "content": "x", "score": float("nan")}, "cannot be stored as JSON"),
    ({"role": "user", "content": "x", "tags": {"a"}}, "cannot be stored as JSON"),
    ({"role": "user", "content": "x", 1: "int key"}, "cannot be stored as JSON"),
])
def test_a_message_that_is_not_a_plain_message_dict_is_refused(store, bad, words):
    session = store.create_session("u")
    with pytest.raises(UnitError) as caught:
        session.add_items([user(), bad])
    assert words in str(caught.value) and "nothing was written" in str(caught.value)
    assert caught.value.index == 1, "the error names which message of the unit"
    assert session.get_items() == []


def test_an_sdk_reply_object_is_refused_with_the_fix(store):
    class Reply:  # looks like openai's ChatCompletionMessage
        role, content, tool_calls = "assistant", "hi", None

    with pytest.raises(UnitError, match="assistant_to_dict"):
        store.create_session("u").add_items([Reply()])


def test_seqs_stay_gap_free_through_pops_and_clears(store):
    session = store.create_session("u")
    memory = session.memory()
    memory.add_system("Be brief.")
    for k in range(3):
        memory.add(user(f"q{k}"))
        memory.add_many([asks(f"c{k}"), result(f"c{k}")])
        memory.add(answer(f"a{k}"))
    memory.add_system("A note in the middle.")
    memory.add(user("last"))
    assert session.pop_item() == user("last")
    assert [r[0] for r in rows(store, session.session_id)] == list(range(14))
    memory.clear_non_system()
    assert rows(store, session.session_id) == [(0, 0, "system"), (1, 1, "system")]
    assert memory.to_api_format() == session.get_items() == [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "A note in the middle."}]
    memory.add(user("again"))
    assert [r[0] for r in rows(store, session.session_id)] == [0, 1, 2]


# ----------------------------------------------------------------- the SDK's Session methods

def test_pop_item_never_orphans_a_call_and_pop_unit_takes_the_whole_round(store):
    session = store.create_session("u")
    session.add_items([user()])
    session.add_items(round_unit("c1", "c2"))
    assert session.pop_item() == answer()
    with pytest.raises(UnitError) as caught:
        session.pop_item()
    text = str(caught.value)
    assert "pop_unit()" in text and "nothing was removed" in text and "messages 1–3" in text
    assert session.pop_unit() == [asks("c1", "c2"), result("c1"), result("c2")]
    assert session.get_items() == [user()]
    assert session.pop_unit() == [user()]
    assert session.pop_item() is None and session.pop_unit() == []


def test_get_items_limit_starts_at_a_unit_boundary(store):
    session = store.create_session("u")
    session.add_items([user()])
    session.add_items([asks("c1", "c2"), result("c1"), result("c2")])
    session.add_items([answer()])
    assert session.get_items(limit=2) == [answer()], "never a tool reply without its call"
    assert session.get_items(limit=4) == [asks("c1", "c2"), result("c1"), result("c2"), answer()]
    assert session.get_items(limit=100) == session.get_items()
    assert session.get_items(limit=0) == []
    with pytest.raises(ValueError, match="limit"):
        session.get_items(limit=-1)


def test_clear_session_removes_every_message_and_keeps_the_session(store):
    session = store.create_session("u", title="t")
    session.add_items([SYSTEM, user()])
    session.clear_session()
    assert session.get_items() == []
    assert store.info(session.session_id).title == "t"


def test_the_sdk_method_names_are_there():
    from lesson_lib.sessions import Session

    for name in ("get_items", "add_items", "pop_item", "clear_session"):
        assert callable(getattr(Session, name)), name


# ----------------------------------------------------------------- sessions

def test_sessions_are_listed_per_user_newest_first_renamed_and_deleted(store):
    first = store.create_session("xiaoming", title="first")
    second = store.create_session("xiaoming", title="second")
    other = store.create_session("xiaohong", title="hers")
    assert [i.title for i in store.list_sessions("xiaoming")] == ["second", "first"]
    first.add_items([user()])  # used last: listed first
    listed = store.list_sessions("xiaoming")
    assert [(i.title, i.message_count) for i in listed] == [("first", 1), ("second", 0)]
    assert "first" in str(listed[0]) and "1 message" in str(listed[0])
    store.rename_session(second.session_id, "renamed")
    assert store.info(second.session_id).title == "renamed"
    assert store.delete_session(first.session_id) == 1
    assert [i.session_id for i in store.list_sessions("xiaoming")] == [second.session_id]
    assert [i.title for i in store.list_sessions("xiaohong")] == ["hers"]
    assert store.list_sessions("nobody") == []
    assert other.get_items() == []


def test_a_chosen_id_is_kept_and_cannot_be_taken_twice(store):
    store.create_session("u", session_id="trip-to-chengdu")
    with pytest.raises(StoreError, match="already exists"):
        store.create_session("u", session_id="trip-to-chengdu")
    with pytest.raises(ValueError, match="user_id"):
        store.create_session("")


def test_an_unknown_session_id_is_a_clear_error_everywhere(store):
    calls = [lambda: store.session("nope"), lambda: store.load("nope"),
             lambda: store.append("nope", [user()]), lambda: store.rename_session("nope", "x"),
             lambda: store.delete_session("nope"), lambda: store.resume("nope"),
             lambda: store.repairs("nope")]
    for attempt in calls:
        with pytest.raises(SessionNotFoundError) as caught:
            attempt()
        assert "no session 'nope'" in str(caught.value)
        assert "store.list_sessions(user_id)" in str(caught.value)
    session = store.create_session("u")
    session.delete()
    with pytest.raises(SessionNotFoundError):
        session.add_items([user()])


# ----------------------------------------------------------------- stored vs sent

def test_what_is_stored_is_not_what_is_sent(store):
    session = store.create_session("u")
    memory = session.memory(ShortTermMemory(max_messages=4))
    memory.add_system("Be brief.")
    for k in range(5):
        memory.add(user(f"q{k}"))
        memory.add_many([asks(f"c{k}"), result(f"c{k}")])
        memory.add(answer(f"a{k}"))
    assert memory.stored_count() == 21 and len(memory.log()) == 21
    assert memory.message_count() <= 4
    sent = memory.to_api_format()
    assert sent[0] == {"role": "system", "content": "Be brief."} and sent[-1] == answer("a4")
    resumed = store.resume(session.session_id, ShortTermMemory(max_messages=4))
    assert resumed.to_api_format() == sent, "resuming rebuilds the same window"
    assert "21 messages stored, 4 sent" in repr(resumed)
    assert resumed.max_messages == 4, "anything else is the window's"


def test_the_agent_remembers_across_a_restart(url):
    with SessionStore(url) as store:
        session = store.create_session("xiaoming")
        agent = Agent(memory=session.memory())
        assert agent.chat("My name is Xiaoming") == "Nice to meet you, Xiaoming! How can I help?"
        assert "Chengdu" in agent.chat("What's the weather in Chengdu?")
        session_id = session.session_id
    # a new process: a new store object, nothing in memory
    with SessionStore(url) as store:
        agent = Agent(memory=store.resume(session_id, TokenBudgetMemory(2000)))
        assert agent.chat("What's my name?") == "You told me your name is Xiaoming."
        log = store.session(session_id).get_items()
    assert [m["role"] for m in log].count("system") == 1, "the system prompt is not added twice"
    assert [m["role"] for m in log] == ["system", "user", "assistant", "user", "assistant",
                                        "tool", "assistant", "user", "assistant"]
    assert find_problems(log) == []


def test_a_unit_the_window_refuses_is_not_stored_either(store):
    session = store.create_session("u")
    memory = session.memory(TokenBudgetMemory(60))
    memory.add(user("hi"))
    with pytest.raises(OverBudgetError):
        memory.add_system("You are a helpful assistant. " * 40)  # the window can never hold it
    assert memory.stored_count() == 1 and memory.message_count() == 1
    with pytest.raises(UnitError):
        memory.add_many([asks("c1")])
    assert memory.stored_count() == 1 and memory.to_api_format() == [user("hi")]


def test_a_failed_commit_after_the_window_took_the_unit_is_said_plainly(store, monkeypatch):
    session = store.create_session("u")
    memory = session.memory()

    def commit_fails(session_id, messages, *, then):
        then(list(messages))
        raise StoreUnavailableError("disk full")

    monkeypatch.setattr(store, "append", commit_fails)
    with pytest.raises(StoreError, match="the window already holds it"):
        memory.add(user())
    with pytest.raises(StoreError, match="resume the session"):
        memory.to_api_format()


def test_the_window_must_start_empty(store):
    window = ShortTermMemory()
    window.add(user())
    with pytest.raises(ValueError, match="must be empty"):
        StoredMemory(store.create_session("u"), window)


# ----------------------------------------------------------------- reloading broken logs

def test_a_call_left_open_by_other_code_is_answered_on_load_and_the_repair_kept(store):
    session = store.create_session("u")
    session.add_items([user()])
    write_raw(store, session.session_id, [asks("call_9")])  # killed before its result
    session.add_items([user("still there?")])
    broken = [user(), asks("call_9"), user("still there?")]
    messages, changes = store.load(session.session_id)
    assert messages == [user(), asks("call_9"), result("call_9", INTERRUPTED),
                        user("still there?")]
    assert [c.kind for c in changes] == ["interrupted call answered"]
    assert find_problems(session.get_items()) == [], "the repaired log was written back"
    records = session.repairs()
    assert len(records) == 1 and records[0].before == broken, "nothing stored is lost"
    assert records[0].interrupted == "answer" and "1 change" in str(records[0])
    assert [r[0] for r in rows(store, session.session_id)] == [0, 1, 2, 3]
    assert store.load(session.session_id).changes == [] and len(session.repairs()) == 1


def test_drop_removes_the_open_call_instead(store):
    session = store.create_session("u")
    session.add_items([user()])
    write_raw(store, session.session_id, [asks("call_9"), result("call_7")])
    repaired = store.load(session.session_id, interrupted="drop")
    assert repaired.messages == [user()]
    assert sorted(c.kind for c in repaired.changes) == [
        "empty message dropped", "interrupted call dropped", "orphan dropped"]
    assert store.repairs(session.session_id)[0].interrupted == "drop"
    with pytest.raises(ValueError, match="interrupted"):
        store.load(session.session_id, interrupted="ignore")


def test_resuming_a_killed_turn_gives_a_valid_window_and_says_what_it_repaired(store):
    session = store.create_session("u")
    session.add_items([SYSTEM, user()])
    write_raw(store, session.session_id, [asks("c1", "c2"), result("c2")])
    memory = store.resume(session.session_id, TokenBudgetMemory(2000))
    assert find_problems(memory.to_api_format()) == []
    assert [c.kind for c in memory.repairs] == ["interrupted call answered"]
    assert memory.to_api_format()[-2:] == [result("c2"), result("c1", INTERRUPTED)]
    memory.add(user("go on"))  # and the conversation goes on
    assert find_problems(memory.log()) == []


def test_a_row_that_is_not_a_message_is_named_and_left_alone(store):
    session = store.create_session("u")
    session.add_items([user()])
    m = tables().messages
    with store._writing() as conn:
        conn.execute(m.insert().values(session_id=session.session_id, seq=1, unit=1,
                                       role="user", message="{not json"))
    with pytest.raises(CorruptSessionError, match="message 1 of session .* is not JSON"):
        session.get_items()
    with pytest.raises(CorruptSessionError, match="fix or delete that row"):
        store.resume(session.session_id)
    assert len(rows(store, session.session_id)) == 2, "nothing was deleted"


# ----------------------------------------------------------------- bad databases

def test_a_text_file_is_not_a_store_and_is_left_untouched(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("my shopping list\n" * 20)
    with pytest.raises(NotAStoreError) as caught:
        SessionStore(f"sqlite:///{path}")
    assert "not a SQLite database" in str(caught.value) and "Nothing was changed" in str(caught.value)
    assert path.read_text() == "my shopping list\n" * 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_another_programs_sqlite_file_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "shop.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE users(id, name); CREATE TABLE orders(id, total);"
                       "INSERT INTO users VALUES (1, 'Li');")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(NotAStoreError) as caught:
        SessionStore(f"sqlite:///{path}")
    assert "orders, users" in str(caught.value) and "a database of its own" in str(caught.value)
    assert path.read_bytes() == before, "not even switched to WAL"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shop.db"]


def test_another_programs_postgres_database_is_refused():
    with postgres_database() as pg_url:
        import sqlalchemy as sa

        engine = sa.create_engine(pg_url)
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE invoices (id int)")
        engine.dispose()
        with pytest.raises(NotAStoreError, match="invoices"):
            SessionStore(pg_url)


def test_a_newer_store_version_is_refused(sqlite_path):
    SessionStore(f"sqlite:///{sqlite_path}").close()
    conn = sqlite3.connect(sqlite_path)
    conn.execute("UPDATE lesson_store SET value = 'lesson_lib.sessions/99'")
    conn.commit()
    conn.close()
    with pytest.raises(NotAStoreError, match="another version"):
        SessionStore(f"sqlite:///{sqlite_path}")


@pytest.mark.parametrize("bad_url, error, words", [
    ("not a url", StoreError, "not a database URL"),
    ("mysql+nosuchdriver://u@127.0.0.1/db", StoreError, "cannot open"),
    ("sqlite:////no/such/folder/s.db", StoreUnavailableError, "does not exist"),
    ("postgresql+psycopg://nobody@127.0.0.1:1/db", StoreUnavailableError, "cannot reach"),
])
def test_urls_that_cannot_work_say_why(bad_url, error, words):
    with pytest.raises(error, match=words):
        SessionStore(bad_url)


def test_a_store_on_a_read_only_path_says_so_and_loses_nothing():
    folder = Path(tempfile.mkdtemp(prefix="lesson-ro-", dir="/tmp"))
    try:
        url = f"sqlite:///{folder / 'sessions.db'}"
        with SessionStore(url) as store:
            store.create_session("u", session_id="s").add_items([user()])
        report = _as_a_reader(folder, url)
        assert report.count("StoreUnavailableError") == 2, report
        assert "read-only" in report and "choose a writable path" in report
        with SessionStore(url) as store:
            assert store.session("s").get_items() == [user()]
    finally:
        os.chmod(folder, 0o755)
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def _as_a_reader(folder: Path, url: str) -> str:
    """Open the store (and a new one beside it) in a child that cannot write the folder:
    as root, a child that becomes `nobody`; otherwise the folder is made read-only."""
    os.chmod(folder, 0o755 if os.geteuid() == 0 else 0o555)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what happened through the pipe, then exit
        os.close(read)
        lines = []
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            for target in (url, f"sqlite:///{folder / 'new.db'}"):
                try:
                    SessionStore(target).session("s").add_items([user("lost?")])
                    lines.append("wrote")
                except StoreError as e:
                    lines.append(f"{type(e).__name__}: {e}")
        finally:
            os.write(write, "\n".join(lines).encode())
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


# ----------------------------------------------------------------- deleting for good

def test_a_deleted_session_is_gone_from_the_files_bytes(sqlite_path):
    secret, kept = f"SECRET-{uuid.uuid4().hex}", f"KEPT-{uuid.uuid4().hex}"
    url = f"sqlite:///{sqlite_path}"
    with SessionStore(url) as store:
        doomed = store.create_session("u", title=f"title {secret}")
        doomed.add_items([user(f"my passport number is {secret}")])
        doomed.add_items(round_unit("c1", text=f"noted {secret}"))
        store.create_session("u").add_items([user(f"keep {kept}")])
        doomed.get_items()  # read it once too
        store.delete_session(doomed.session_id)
        files = [p for p in sqlite_path.parent.iterdir() if p.name.startswith("sessions.db")]
        everything = b"".join(p.read_bytes() for p in files)
        assert secret.encode() not in everything, "deleted text must not stay in free pages"
        assert kept.encode() in everything, "the other session is still there"
    check = sqlite3.connect(sqlite_path)  # a separate connection agrees
    assert check.execute("SELECT count(*) FROM messages WHERE message LIKE ?",
                         (f"%{secret}%",)).fetchone() == (0,)
    assert check.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    check.close()


# ----------------------------------------------------------------- the profile

def test_the_profile_keeps_the_newest_value_and_the_history(url):
    with SessionStore(url) as store:
        session = store.create_session("xiaoming")
        profile = store.profile("xiaoming")
        assert profile.as_prompt() == "" and profile.as_dict() == {}
        assert profile.set("name", "Xiaoming") is None
        profile.set("diet", "vegetarian", source='the user: "I\'m vegetarian"',
                    session_id=session.session_id)
        profile.set("units", "celsius")
        assert profile.set("units", "fahrenheit", source="the user: use °F") == "celsius"
        assert profile.set("units", "fahrenheit") == "fahrenheit", "same value: no change"
        profile.set("spice", ["no chili", "mild pepper"], source="我不吃辣")
        store.profile("xiaohong").set("name", "Xiaohong")
    with SessionStore(url) as store:  # it outlives the process
        profile = store.profile("xiaoming")
        assert profile.as_prompt() == ("What you know about this user: name: Xiaoming; "
                                       "diet: vegetarian; units: fahrenheit; "
                                       "spice: no chili, mild pepper")
        history = profile.history("units")
        assert [e.value for e in history] == ["celsius", "fahrenheit"]
        assert history[1].source == "the user: use °F" and history[0].set_at <= history[1].set_at
        diet = profile.history("diet")[0]
        assert diet.session_id == session.session_id and "I'm vegetarian" in str(diet)
        assert profile.get("diet") == "vegetarian" and profile.get("pets", "none") == "none"
        assert profile.forget("units") == 2 and profile.history("units") == []
        assert "units" not in profile.as_dict()
        assert store.profile("xiaohong").as_dict() == {"name": "Xiaohong"}


@pytest.mark.parametrize("key, value", [("", "x"), ("a\nb", "x"), ("diet", None),
                                        ("diet", "  "), ("diet", {"a": 1}), ("diet", [[1]]),
                                        ("diet", float("inf"))])
def test_a_profile_refuses_what_it_cannot_show(sqlite_path, key, value):
    with SessionStore(f"sqlite:///{sqlite_path}") as store:
        with pytest.raises(ValueError):
            store.profile("u").set(key, value)
        assert store.profile("u").as_dict() == {}


# ----------------------------------------------------------------- import cost

def test_importing_the_store_does_not_import_sqlalchemy():
    code = ("import sys, lesson_lib.sessions, lesson_lib.profile; "
            "assert 'sqlalchemy' not in sys.modules, 'sqlalchemy imported at import time'")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


# ----------------------------------------------------------------- resuming = replaying

TEXTS = st.text(alphabet="abc 成都?", min_size=0, max_size=30)
WINDOWS = {
    "short": lambda n: ShortTermMemory(max_messages=n),
    "tokens": lambda n: TokenBudgetMemory(40 + 15 * n),
    "tokens-turn": lambda n: TokenBudgetMemory(40 + 15 * n, drop="turn"),
    "tokens-no-system": lambda n: TokenBudgetMemory(40 + 15 * n, keep_system=False),
    "messages": lambda n: MessageBudgetMemory(n),
    "messages-turn": lambda n: MessageBudgetMemory(n, drop="turn"),
}


def replay(kind, size, units):
    """Add every unit to a fresh window, one by one, as the live StoredMemory did; the
    units it refused are not in the log. Also: did a trim cut a tool result?"""
    window, log, cut = WINDOWS[kind](size), [], False
    for unit in units:
        try:
            window.add_many(unit)
        except OverBudgetError:
            continue
        log += unit
        cut = cut or bool(getattr(window, "last_truncated", []))
    return window, log, cut


@settings(max_examples=300, deadline=None)
@given(units=conversations(TEXTS, max_size=30), kind=st.sampled_from(sorted(WINDOWS)),
       size=st.integers(1, 14))
def test_a_window_built_from_the_tail_is_the_window_a_replay_gives(units, kind, size):
    replayed, log, cut = replay(kind, size, units)
    built = build_window(WINDOWS[kind](size), log)
    if not cut:  # a replay that cut a tool result kept the cut copy; see choose_window
        assert built.to_api_format() == replayed.to_api_format()
    assert find_problems(built.to_api_format()) == [] or not log


@pytest.mark.parametrize("kind", sorted(WINDOWS))
def test_resuming_from_the_database_reads_pages_and_matches_the_replay(store, kind):
    units = []
    for k in range(150):  # 600+ messages: several pages of the newest-first reader
        units.append([user(f"q{k}")] if k % 10 else [{"role": "system", "content": f"note {k}"}])
        units.append(round_unit(f"c{k}a", f"c{k}b", text=f"answer {k}"))
    replayed, log, _ = replay(kind, 9, units)
    session = store.create_session("u")
    with store._writing() as conn:  # the log in one go (append is tested above)
        conn.execute(tables().messages.insert(), _rows(session.session_id, log))
    resumed = store.resume(session.session_id, WINDOWS[kind](9))
    assert resumed.to_api_format() == replayed.to_api_format()


# ----------------------------------------------------------------- adds, kills and reloads

OPS = st.lists(st.one_of(
    st.tuples(st.just("unit"), conversations(TEXTS, max_size=3)),
    st.tuples(st.just("bad"), st.sampled_from(["open call", "orphan", "shape"])),
    st.tuples(st.just("kill"), st.integers(0, 3)),
    st.tuples(st.just("legacy"), st.integers(1, 2)),
    st.tuples(st.just("reload"), st.sampled_from(sorted(WINDOWS))),
), max_size=14)


@pytest.fixture(scope="module")
def property_store_path(tmp_path_factory):
    return tmp_path_factory.mktemp("property") / "sessions.db"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, mode=st.sampled_from(["answer", "drop"]))
def test_any_adds_kills_and_reloads_keep_every_committed_unit_in_order(
        property_store_path, ops, mode):
    url = f"sqlite:///{property_store_path}"
    store = SessionStore(url)
    session_id = store.create_session("u").session_id
    committed, legacy = [], 0
    try:
        for op, arg in ops:
            if op == "unit":
                for unit in arg:
                    store.append(session_id, unit)
                    committed.append(unit)
            elif op == "bad":
                bad = {"open call": [asks("x")], "orphan": [result("x")],
                       "shape": [user(), {"role": "user"}]}[arg]
                with pytest.raises(UnitError):
                    store.append(session_id, bad)
            elif op == "kill":  # a process killed in the middle of writing a unit
                _killed_mid_transaction(property_store_path, session_id, arg)
            elif op == "legacy":  # other code committed a call without its results
                legacy += 1
                write_raw(store, session_id, [{**asks(*[f"legacy_{legacy}_{j}" for j in
                                                       range(arg)]), "content": "legacy"}])
            else:  # the process restarts: a new store object, a resumed window
                store.close()
                store = SessionStore(url)
                try:
                    sent = store.resume(session_id, WINDOWS[arg](6)).to_api_format()
                except OverBudgetError:  # the window cannot hold the current turn: its call
                    continue
                assert not sent or find_problems(sent) == []
        store.close()
        store = SessionStore(url)
        log = store.load(session_id, interrupted=mode).messages
        assert not log or find_problems(log) == []
        ours = [m for m in log if m.get("content") != "legacy"
                and not str(m.get("tool_call_id", "")).startswith("legacy_")]
        assert ours == [m for unit in committed for m in unit], "every committed unit, in order"
        assert [r[0] for r in rows(store, session_id)] == list(range(len(log)))
    finally:
        store.close()


def _killed_mid_transaction(path: Path, session_id: str, how_many: int) -> None:
    """A child opens a write transaction, writes part of a unit, and is SIGKILLed."""
    pid = os.fork()
    if pid == 0:
        try:
            conn = sqlite3.connect(path, isolation_level=None, timeout=10)
            conn.execute("BEGIN IMMEDIATE")
            last = conn.execute("SELECT max(seq) FROM messages WHERE session_id = ?",
                                (session_id,)).fetchone()[0]
            first = 0 if last is None else last + 1
            for k, message in enumerate([asks("k1", "k2"), result("k1"), result("k2")][:how_many]):
                conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?)",
                             (session_id, first + k, first, message["role"], json.dumps(message)))
        finally:
            os.kill(os.getpid(), signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
