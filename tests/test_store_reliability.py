"""The store's own answers where raw errors used to reach the user: lone surrogates, NUL
characters and deep nesting in what is stored or looked up, a new SQLite file opened by
many processes at once or while another writes it, and what a user is told when the
server cannot be reached. A refused write leaves the store exactly as it was.

Tests taking `url` run on SQLite and on PostgreSQL (see tests/test_sessions.py)."""

from __future__ import annotations

import ast
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from messages import answer, asks, result, user
from test_sessions import postgres_database, write_raw
from test_sessions_processes import fork, read_all

from lesson_lib import longterm
from lesson_lib.embeddings import Embedder
from lesson_lib.longterm import LongTermMemory
from lesson_lib.sessions import (
    CorruptSessionError,
    SessionStore,
    StoreError,
    StoreUnavailableError,
    UnitError,
    tables,
)
from lesson_lib.storage import MAX_DEPTH

ROOT = Path(__file__).resolve().parent.parent
LONE = "\ud800"  # half of a UTF-16 pair: a str may hold it, UTF-8 cannot
NUL = "\x00"


@pytest.fixture
def store(url):
    with SessionStore(url) as opened:
        yield opened


def everything(store) -> dict[str, list]:
    """Every row of every table the store and long-term memory keep, in a fixed order."""
    import sqlalchemy as sa

    every = [*tables().metadata.sorted_tables]
    with store._reading() as conn:
        names = set(sa.inspect(conn).get_table_names())
        every += [t for t in longterm.tables().metadata.sorted_tables if t.name in names]
        return {t.name: sorted(map(repr, conn.execute(sa.select(t)).all())) for t in every}


def nested(depth: int) -> list:
    """Lists inside lists, `depth` levels in all (built without recursion)."""
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def filled_store(store):
    """A store with a session, a tool round, a profile fact and a memory in it."""
    session = store.create_session("xiaoming", session_id="s", title="trip")
    session.add_items([user()])
    session.add_items([asks("call_1"), result("call_1"), answer()])
    store.profile("xiaoming").set("diet", "vegetarian")
    memory = LongTermMemory(store, "xiaoming", embedder=Embedder.offline())
    memory.write("I am vegetarian", source="user")
    return session, memory


# ----------------------------------------------------------------- lone surrogates

def _surrogate_cases():
    """(name, what to do with (store, session, memory), error class, the place named)."""
    return [
        ("session id", lambda s, ses, m: s.create_session("u", session_id=f"s{LONE}"),
         ValueError, "session_id"),
        ("user id", lambda s, ses, m: s.create_session(f"u{LONE}"), ValueError, "user_id"),
        ("title", lambda s, ses, m: s.create_session("u", title=f"trip {LONE}"),
         ValueError, "title"),
        ("new title", lambda s, ses, m: ses.rename(f"trip {LONE}"), ValueError, "title"),
        ("message", lambda s, ses, m: ses.add_items([user(f"hello {LONE}")]),
         UnitError, "['content']"),
        ("a key in a message", lambda s, ses, m: ses.add_items(
            [{"role": "user", "content": "hi", "meta": {f"k{LONE}": 1}}]), UnitError,
         "['meta']['k\\ud800']"),
        ("a tool reply in a round", lambda s, ses, m: ses.add_items(
            [asks("call_2"), result("call_2", f"16 {LONE}C"), answer()]), UnitError,
         "message 1 of the unit"),
        ("profile key", lambda s, ses, m: s.profile("xiaoming").set(f"d{LONE}", "x"),
         ValueError, "the profile key"),
        ("profile value", lambda s, ses, m: s.profile("xiaoming").set("diet", ["a", LONE]),
         ValueError, "the value for 'diet'"),
        ("profile source", lambda s, ses, m: s.profile("xiaoming").set(
            "diet", "vegan", source=LONE), ValueError, "source"),
        ("memory", lambda s, ses, m: m.write(f"I like tea {LONE}", source="user"),
         ValueError, "the memory text"),
        ("memory subject", lambda s, ses, m: m.write("tea", source="user", subject=LONE),
         ValueError, "subject"),
    ]


@pytest.mark.parametrize("case", _surrogate_cases(), ids=lambda c: c[0])
def test_a_lone_surrogate_is_refused_by_name_and_nothing_changes(store, case):
    _name, write, error, place = case
    session, memory = filled_store(store)
    before = everything(store)
    with pytest.raises(error) as caught:
        write(store, session, memory)
    text = str(caught.value)
    assert "lone surrogate" in text and place in text, text
    assert "errors='replace'" in text and "nothing was written" in text, "the fix, the outcome"
    assert not isinstance(caught.value, UnicodeError), "the store's error, not the codec's"
    assert everything(store) == before, "a refused write changes nothing"


def test_a_refused_unit_leaves_a_stored_memorys_window_as_it_was(store):
    """StoredMemory (what an agent writes through): the unit is refused before the window
    takes it, so the window and the log still agree, and the next unit is stored."""
    memory = store.create_session("u").memory()
    memory.add_many([user()])
    for bad in ([asks("call_1"), result("call_1", f"16 {LONE}C"), answer()],
                [{"role": "user", "content": "x", "meta": nested(5_000)}]):
        with pytest.raises(UnitError):
            memory.add_many(bad)
        assert memory.to_api_format() == [user()] == memory.log()
    memory.add_many([asks("call_1"), result("call_1"), answer()])
    assert memory.log() == memory.to_api_format() == [user(), asks("call_1"), result("call_1"),
                                                      answer()]


@pytest.mark.parametrize("text", [f"s{LONE}", f"s{NUL}"], ids=["surrogate", "NUL"])
def test_looking_up_an_id_no_store_can_hold_gets_the_same_answer_on_both(store, text):
    filled_store(store)
    for look in (store.session, store.info, store.load, store.count, store.list_sessions,
                 lambda t: store.resume(t)):
        with pytest.raises(ValueError, match="is not text the store can hold") as caught:
            look(text)
        assert not isinstance(caught.value, UnicodeError)


def test_a_repair_writes_back_a_lone_surrogate_other_code_stored_escaped(store):
    """Other code may store "\\ud800" as a JSON escape; repairing that log must not fail
    on it: the repaired log keeps it (escaped again) and comes back equal."""
    session = store.create_session("u")
    legacy = [user(f"odd {LONE}"), {**asks("call_x"), "content": f"wait {LONE}"}]
    write_raw(store, session.session_id, legacy)  # json.dumps: ASCII, \ud800 escaped
    messages, changes = store.load(session.session_id)
    assert len(changes) == 1 and messages[:2] == legacy
    assert store.load(session.session_id) == (messages, [])
    assert store.repairs(session.session_id)[0].before == legacy


def test_a_surrogate_that_gets_past_the_checks_is_still_the_stores_error(store):
    """Code inside the store's own transaction, without its checks: the driver's
    UnicodeEncodeError comes out as a StoreError, and the transaction is rolled back."""
    filled_store(store)
    before = everything(store)
    s = tables().sessions
    with pytest.raises(StoreError, match="cannot store a lone surrogate") as caught:
        with store._writing() as conn:
            conn.execute(s.update().where(s.c.id == "s").values(title="changed"))
            conn.execute(s.insert().values(id=f"x{LONE}", user_id="u", title="", created_at="",
                                           updated_at="", touched=0))
    assert not isinstance(caught.value, UnicodeError)
    assert everything(store) == before


@pytest.mark.parametrize("name", ["a\x00b.db", "a\udcffb.db"], ids=["NUL", "surrogateescape"])
def test_a_file_name_no_database_can_open_is_said_before_anything_is_made(tmp_path, name):
    with pytest.raises(StoreError, match="a database URL cannot hold a NUL character or a "
                                         "lone surrogate .*choose another path, or rename "
                                         "the file") as caught:
        SessionStore(f"sqlite:///{tmp_path / name}")
    assert not isinstance(caught.value, UnicodeError)
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------- NUL

NUL_REFUSED = [
    ("session id", lambda s, m: s.create_session("u", session_id=f"s{NUL}")),
    ("user id", lambda s, m: s.create_session(f"u{NUL}")),
    ("title", lambda s, m: s.create_session("u", title=f"a{NUL}b")),
    ("profile key", lambda s, m: s.profile("u").set(f"d{NUL}", "x")),
    ("profile source", lambda s, m: s.profile("u").set("diet", "x", source=NUL)),
    ("memory", lambda s, m: m.write(f"tea{NUL}", source="user")),
    ("memory ref", lambda s, m: m.write("tea", source="document", ref=f"a{NUL}")),
    ("search", lambda s, m: m.search(f"tea{NUL}")),
]


@pytest.mark.parametrize("case", NUL_REFUSED, ids=lambda c: c[0])
def test_a_nul_in_a_text_column_is_refused_on_both_databases(store, case):
    _name, write = case
    _session, memory = filled_store(store)
    before = everything(store)
    with pytest.raises(ValueError, match=r"NUL character \('\\x00' at position \d+\), which "
                                         "PostgreSQL cannot store") as caught:
        write(store, memory)
    assert "text.replace('\\x00', '')" in str(caught.value)
    assert not isinstance(caught.value, StoreError), "refused before the database is asked"
    assert everything(store) == before


def test_a_nul_inside_a_message_or_a_profile_value_is_kept_on_both_databases(store):
    """JSON writes NUL as \\u0000: inside a message or a profile value it is stored, and
    comes back equal, on SQLite and PostgreSQL alike."""
    session = store.create_session("u")
    unit = [asks("call_1"), result("call_1", f"bytes: a{NUL}b"),
            {"role": "assistant", "content": f"done{NUL}", f"key{NUL}": [NUL]}]
    session.add_items(unit)
    assert session.get_items() == unit
    store.profile("u").set("nick", f"x{NUL}y")
    assert store.profile("u").get("nick") == f"x{NUL}y"


def test_postgresql_refusing_a_nul_is_the_stores_error():
    """Code inside the store's transaction, without its checks: PostgreSQL's refusal is
    said as the store's (what, the fix) and nothing is written."""
    with postgres_database() as url, SessionStore(url) as store:
        s = tables().sessions
        with pytest.raises(StoreError, match=r"cannot store a NUL character \('\\x00'\) in "
                                             "text .*remove it from the text"):
            with store._writing() as conn:
                conn.execute(s.insert().values(id=f"x{NUL}", user_id="u", title="",
                                               created_at="", updated_at="", touched=0))
        assert store.list_sessions("u") == []


# ----------------------------------------------------------------- nesting

def test_nesting_up_to_the_limit_is_stored_and_beyond_it_refused(store):
    session = store.create_session("u")
    deepest = {"role": "user", "content": "x", "meta": nested(MAX_DEPTH - 1)}  # 100 levels
    session.add_items([deepest])
    assert session.get_items() == [deepest]
    before = everything(store)
    for depth in (MAX_DEPTH, 1_000, 5_000, 100_000):  # the message is one level more
        with pytest.raises(UnitError) as caught:
            session.add_items([user(), {"role": "user", "content": "x", "meta": nested(depth)}])
        text = str(caught.value)
        assert caught.value.index == 1
        assert f"more than {MAX_DEPTH} deep" in text and "(at ['meta'][0][0][0][0][0]…" in text
        assert "flatten it, or keep the deep part as one JSON string" in text
        assert "nothing was written" in text
    assert everything(store) == before


def test_a_row_nested_too_deep_for_json_is_named_not_a_recursion_error(store):
    """A row other code wrote, nested deeper than Python's JSON reader can follow."""
    session = store.create_session("u")
    session.add_items([user()])
    deep = '{"role": "user", "content": "x", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with store._writing() as conn:
        conn.execute(tables().messages.insert().values(
            session_id=session.session_id, seq=1, unit=1, role="user", message=deep))
    with pytest.raises(CorruptSessionError, match="message 1 of session .* is not JSON"):
        session.get_items()
    with pytest.raises(CorruptSessionError):
        store.resume(session.session_id)


# ----------------------------------------------------------------- opening under load

def _fresh_sqlite(tmp_path: Path, name: str) -> str:
    return f"sqlite:///{tmp_path / name}"


def test_opening_a_new_file_while_another_connection_writes_it_waits_and_works(tmp_path):
    """Switching a new file to WAL needs its exclusive lock; with another writer holding
    the write lock, SQLite said "database is locked" at once (it skips the busy handler
    where waiting could deadlock). The store now waits for the writer, as any writer does."""
    path = tmp_path / "sessions.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process's write transaction on the new file
    release = threading.Timer(0.3, holder.execute, ["ROLLBACK"])
    release.start()
    try:
        with SessionStore(f"sqlite:///{path}") as store:
            store.create_session("u", session_id="s").add_items([user()])
            assert store.session("s").get_items() == [user()]
    finally:
        release.join()
        holder.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    check.close()


def test_a_write_lock_held_past_busy_timeout_is_the_stores_error_and_the_file_untouched(
        tmp_path):
    path = tmp_path / "sessions.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreUnavailableError, match="is busy .*longer than busy_timeout; "
                                                        "retry, or raise busy_timeout"):
            SessionStore(f"sqlite:///{path}", busy_timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert path.stat().st_size == 0, "nothing was written: not even the switch to WAL"


OPENERS, ROUNDS = 6, 4


def test_six_processes_opening_a_new_store_at_once_all_get_it(url, tmp_path):
    """Six processes open a store that does not exist yet, at the same moment (a start
    line), and each writes a session; every round, on a new SQLite file (PostgreSQL: a new
    schema, one round). Every process succeeds and the store holds all of their writes."""
    rounds = ROUNDS if url.startswith("sqlite") else 1
    for r in range(rounds):
        target = url if r == 0 else _fresh_sqlite(tmp_path, f"round{r}.db")
        go_read, go_write = os.pipe()

        def opener(w, target=target, go_read=go_read):
            def child(out):
                os.read(go_read, 1)
                with SessionStore(target) as store:
                    session = store.create_session(f"w{w}", session_id=f"w{w}")
                    session.add_items([user(f"q{w}")])
                    session.add_items([asks(f"c{w}"), result(f"c{w}"), answer(f"a{w}")])
                os.write(out, b"ok")
            return child

        children = [fork(opener(w)) for w in range(OPENERS)]
        os.write(go_write, b"x" * OPENERS)
        reports = [read_all(fd) for _pid, fd in children]
        for pid, _fd in children:
            os.waitpid(pid, 0)
        os.close(go_read)
        os.close(go_write)
        assert reports == ["ok"] * OPENERS, "\n".join(reports)
        with SessionStore(target) as store:
            for w in range(OPENERS):
                assert store.session(f"w{w}").get_items() == [
                    user(f"q{w}"), asks(f"c{w}"), result(f"c{w}"), answer(f"a{w}")]
            with store._reading() as conn:
                import sqlalchemy as sa

                marker = tables().store
                assert conn.execute(sa.select(sa.func.count()).select_from(marker)).scalar() == 1


# ----------------------------------------------------------------- what a user is told

def test_no_text_a_user_reads_mentions_the_test_set_up():
    """The library's texts (every marked string) never send a user to the test set-up."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import translations
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    said = [(module, message) for module, messages in translations.marked().items()
            for message, _line in messages
            for text in (message if isinstance(message, tuple) else (message,))
            if ".ci/" in text or "postgres.sh" in text or "(tests:" in text]
    assert said == []


def test_a_server_that_does_not_answer_is_said_without_the_test_set_up():
    with pytest.raises(StoreUnavailableError) as caught:
        SessionStore("postgresql+psycopg://nobody@127.0.0.1:1/db")
    text = str(caught.value)
    assert "cannot reach" in text and "is the server running, and is the URL right?" in text
    assert "postgres.sh" not in text and "tests" not in text


# ----------------------------------------------------------------- no import circle

STORE_MODULES = ("lesson_lib.storage", "lesson_lib.sessions", "lesson_lib.profile",
                 "lesson_lib.longterm")


def _imports(module: str) -> set[str]:
    """The lesson_lib modules `module` imports, at its top or inside a function."""
    path = ROOT / (module.replace(".", "/") + ".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.startswith("lesson_lib.")
            and (ROOT / (m.replace(".", "/") + ".py")).exists()}


def test_the_store_modules_import_nothing_that_imports_them_back():
    """The house rule: no import circles. (profile.py imported sessions.py, whose
    profile() imported profile.py back.)"""
    for start in STORE_MODULES:
        seen, todo, path = set(), [(start, (start,))], None
        while todo and path is None:
            module, trail = todo.pop()
            for imported in sorted(_imports(module)):
                if imported == start:
                    path = (*trail, imported)
                elif imported not in seen:
                    seen.add(imported)
                    todo.append((imported, (*trail, imported)))
        assert path is None, "import circle: " + " → ".join(path)



# ----------------------------------------------------------------- in Chinese

def test_the_new_refusals_in_chinese(speak, url):
    speak("zh")
    with SessionStore(url) as store:
        session = store.create_session("xiaoming", session_id="s")
        with pytest.raises(ValueError) as caught:
            store.create_session("xiaoming", session_id=f"a{NUL}")
        assert str(caught.value) == (
            "session_id 'a\\x00' 不是存储能保存的文本：它含有 NUL 字符（位置 1 上的 '\\x00'）："
            "PostgreSQL 的文本存不了它，所以两种数据库都不存它；请把它删掉，例如 "
            "text.replace('\\x00', '')；什么都没有写入")
        with pytest.raises(ValueError, match="它含有一个孤立的 surrogate 码位（位置 0 上的 "
                                             "'\\\\ud800'）"):
            session.rename(LONE)
        with pytest.raises(UnitError) as caught:
            session.add_items([user(f"hi {LONE}")])
        assert caught.value.message == "单元里的消息 0 在 ['content'] 处含有一个孤立的 surrogate 码位"
        assert caught.value.explanation.endswith("或者把它删掉——什么都没有写入")
        with pytest.raises(UnitError) as caught:
            session.add_items([{"role": "user", "content": "x", "meta": nested(5_000)}])
        assert caught.value.message == "单元里的消息 0 的列表和对象嵌套超过了 100 层"
        assert "（在 ['meta'][0][0][0][0][0]…（往下 100 层） 处）" in caught.value.explanation
        assert store.count("s") == 0
