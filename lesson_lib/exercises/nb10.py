"""Self-checks for notebook 10, "Conversations that survive a restart".

- `check_open_chat(open_chat)`: the learner's `open_chat(store, user_id, title)`, which
  resumes the user's session with that title, or starts it when there is none.
- `check_forget_user(forget_user)`: the learner's `forget_user(store, user_id)`, built
  from each layer's own calls, which forgets one user everywhere the agent keeps them (the
  sessions, the profile with every old value, the long-term memories, filed under a session
  or not) and returns what went, per layer. The check's store holds all three layers for two
  users (Chinese data when the learner reads Chinese); afterwards it reads the database file
  itself, rows and bytes, not through the store. Once it passes, the notebook shows the
  library's version, lesson_lib.forgetting.forget_user.

Each check makes its own store in a temporary folder, so it never touches yours.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from lesson_lib.exercises import Report, not_done, run_check, signature_problem, wrong_signature
from lesson_lib.i18n import N_, Twins, _, is_chinese
from lesson_lib.sessions import SessionStore, StoredMemory

# the first turn open_chat's check stores, in the language spoken (read as SAID.NAME, SAID.HI)
SAID = Twins(NAME=({"role": "user", "content": "My name is Xiaoming"},
                   {"role": "user", "content": "我叫小明"}),
             HI=({"role": "assistant", "content": "Nice to meet you, Xiaoming!"},
                 {"role": "assistant", "content": "很高兴认识你，小明！"}))


def __getattr__(name: str):
    """NAME, HI: in the language spoken now."""
    return SAID.get(name, __name__)


def _store(folder: str) -> tuple[SessionStore, Path]:
    path = Path(folder) / "check.db"
    return SessionStore(f"sqlite:///{path}"), path


# ----------------------------------------------------------------- exercise 1: open_chat

def _open(report: Report, open_chat: Callable, store: SessionStore, user: str,
          title: str) -> StoredMemory | None:
    memory = open_chat(store, user, title)
    if isinstance(memory, StoredMemory):
        return memory
    report.expect(False, _("open_chat returns a StoredMemory, the memory an Agent uses"),
                  (_("open_chat(store, {user}, {title}) returned a {type}").format(
                      user=repr(user), title=repr(title), type=type(memory).__name__),
                   N_("a session holds the log; the Agent needs its memory, as "
                      "store.resume(...) gives it"),
                   N_("for a new session, return session.memory()")))
    return None


def _sessions(store: SessionStore, user: str, title: str) -> list:
    return [s for s in store.list_sessions(user) if s.title == title]


def _check_open_chat(report: Report, open_chat: Callable, store: SessionStore) -> None:
    NAME, HI = SAID.NAME, SAID.HI  # noqa: N806 (the data, in the language spoken)
    first = _open(report, open_chat, store, "xiaoming", "trip")
    if first is None:
        return
    first.add_many([NAME, HI])
    again = _open(report, open_chat, store, "xiaoming", "trip")
    if again is None:
        return
    trips = len(_sessions(store, "xiaoming", "trip"))
    report.expect(trips == 1, _("asking twice for 'trip' gives one session, not two"),
                  (_("open_chat(store, 'xiaoming', 'trip') twice left {n} sessions titled "
                     "'trip'").format(n=trips),
                   N_("store.list_sessions(user_id) lists a user's sessions, each with its "
                      ".title and .session_id"),
                   N_("look for the title among them, and create a session only when none has "
                      "it")))
    report.expect(NAME in again.to_api_format(),
                  _("the second open_chat resumes it: {said} is in its window").format(
                      said=repr(NAME["content"])),
                  (N_("the second open_chat(store, 'xiaoming', 'trip') gave a window without "
                      "the messages the first one stored"),
                   N_("a new session starts empty; store.resume(session_id) fills the window "
                      "from the session's log"),
                   N_("when the title is there, return store.resume(that session's "
                      ".session_id)")))
    work = _open(report, open_chat, store, "xiaoming", "work")
    if work is None:
        return
    report.expect(NAME not in work.to_api_format() and
                  len(_sessions(store, "xiaoming", "work")) == 1,
                  N_("another title, 'work', starts a session of its own"),
                  (_("open_chat(store, 'xiaoming', 'work') resumed the 'trip' session")
                   if NAME in work.to_api_format() else
                   _("open_chat(store, 'xiaoming', 'work') did not leave one session titled "
                     "'work'"),
                   N_("a user has many sessions: the title says which one to resume"),
                   N_("resume a session only when its .title is the one asked for")))
    other = _open(report, open_chat, store, "laozhang", "trip")
    if other is None:
        return
    theirs = len(_sessions(store, "laozhang", "trip"))
    report.expect(NAME not in other.to_api_format() and theirs == 1,
                  N_("Lao Zhang's 'trip' is his own: it does not hold Xiaoming's messages"),
                  (_("open_chat(store, 'laozhang', 'trip') gave Lao Zhang a window with "
                     "Xiaoming's messages") if NAME in other.to_api_format() else
                   _("open_chat(store, 'laozhang', 'trip') left Lao Zhang {n} sessions titled "
                     "'trip'").format(n=theirs),
                   N_("two users may use the same title: look among this user's sessions only"),
                   N_("store.list_sessions(user_id) lists one user's; create the new session "
                      "for user_id")))


def check_open_chat(open_chat: Callable) -> bool:  # your open_chat(store, user_id, title)
    """Try `open_chat` on a fresh store: start, resume, another title, another user."""
    if open_chat is ...:
        return not_done(_("Exercise 1 · open_chat"), _("write open_chat, then run this cell "
                                                       "again"))
    if wrong_signature(_("Exercise 1 · open_chat"), signature_problem(
            open_chat, "open_chat(store, user_id, title)", None, "", "")):
        return False
    with tempfile.TemporaryDirectory() as folder:
        store, _path = _store(folder)
        try:
            return run_check(_("Exercise 1 · open_chat"),
                             lambda report: _check_open_chat(report, open_chat, store))
        finally:
            store.close()


# ----------------------------------------------------------------- exercise 2: forget_user
#
# The check's store holds, for Xiaoming and for Lao Zhang alike, three layers: sessions
# (their logs), a profile (three keys, one of them changed once, so an old value waits in
# its history) and long-term memories (a fact said in a session, a session's summary, and
# one filed under no session). After the learner's forget_user(store, "xiaoming") the
# check reads the database FILE itself, with its own connection, not through the store.

XIAOMING, LAOZHANG = "xiaoming", "laozhang"
LAYER_NAMES = {"sessions": N_("sessions"), "messages": N_("messages"),  # _Disk's fields
               "profile": N_("profile"), "memories": N_("long-term memories")}


@dataclass(frozen=True)
class _Person:
    """One user of the check's store: what each layer holds of them."""
    name: str
    sessions: tuple[tuple[str, str, str, str], ...]  # (id, title, the user's words, reply)
    profile: tuple[tuple[str, str], ...]             # (key, value) in the order set
    fact: str          # a fact said in the first session (filed under it)
    summary: str       # the summary of the second session
    loose: str         # a memory filed under no session (written from a settings page)


def _people() -> dict[str, _Person]:
    """The check's two users, in the language the learner reads."""
    if is_chinese():
        return {
            XIAOMING: _Person(
                "小明",
                (("xm-trip", "成都之行", "我周五飞成都", "祝你成都之行愉快！"),
                 ("xm-hotpot", "火锅店", "春熙路附近哪里有好吃的火锅？", "春熙路旁边的火锅街可以试试。"),
                 ("xm-work", "我的项目", "我的项目是一架风筝形状的无人机", "风筝形状的无人机，听起来很有意思！")),
                (("name", "小明"), ("diet", "素食"), ("diet", "纯素"), ("city", "成都")),
                "小明周五飞成都", "问了春熙路附近的火锅店，推荐了火锅街", "喜欢靠走道的座位"),
            LAOZHANG: _Person(
                "老张",
                (("lz-trip", "哈尔滨之行", "我一月去哈尔滨看冰灯", "哈尔滨一月很冷，多穿点！"),
                 ("lz-dumplings", "饺子馆", "中央大街附近有饺子馆吗？", "中央大街上就有一家老饺子馆。")),
                (("name", "老张"), ("units", "摄氏度"), ("units", "华氏度"), ("city", "哈尔滨")),
                "老张一月去哈尔滨看冰灯", "问了中央大街附近的饺子馆", "喜欢靠窗的座位"),
        }
    return {
        XIAOMING: _Person(
            "Xiaoming",
            (("xm-trip", "Chengdu trip", "I'm flying to Chengdu on Friday",
              "Have a good trip to Chengdu!"),
             ("xm-hotpot", "Hotpot places", "Where is good hotpot near Chunxi Road?",
              "Try the hotpot street beside Chunxi Road."),
             ("xm-work", "My project", "My project is a kite-shaped drone",
              "A kite-shaped drone sounds fun!")),
            (("name", "Xiaoming"), ("diet", "vegetarian"), ("diet", "vegan"), ("city", "Chengdu")),
            "Xiaoming is flying to Chengdu on Friday",
            "Asked for hotpot places near Chunxi Road; the hotpot street was suggested",
            "Prefers aisle seats"),
        LAOZHANG: _Person(
            "Lao Zhang",
            (("lz-trip", "Harbin trip", "I'm going to Harbin in January for the ice lanterns",
              "Harbin is cold in January: dress warmly!"),
             ("lz-dumplings", "Dumpling houses", "Is there a dumpling house near Central Street?",
              "There is an old dumpling house on Central Street.")),
            (("name", "Lao Zhang"), ("units", "celsius"), ("units", "fahrenheit"),
             ("city", "Harbin")),
            "Lao Zhang is going to Harbin in January for the ice lanterns",
            "Asked for a dumpling house near Central Street",
            "Prefers window seats"),
    }


def _fill(store: SessionStore, person: _Person, user: str) -> None:
    """Each layer of `user`, as an agent leaves them after a few conversations."""
    from lesson_lib.embeddings import Embedder  # noqa: PLC0415
    from lesson_lib.longterm import LongTermMemory  # noqa: PLC0415

    for session_id, title, said, reply in person.sessions:
        store.create_session(user, title=title, session_id=session_id).add_items(
            [{"role": "user", "content": said}, {"role": "assistant", "content": reply}])
    profile = store.profile(user)
    for key, value in person.profile:
        profile.set(key, value, source="the user's words", session_id=person.sessions[0][0])
    memory = LongTermMemory(store, user, embedder=Embedder.offline())
    memory.write(person.fact, source="user", ref=person.sessions[0][0])
    memory.remember_session(session_id=person.sessions[1][0], summary=person.summary)
    memory.write(person.loose, source="user")  # from a settings page: no session


def _texts(person: _Person) -> list[str]:
    """Everything the layers hold of a person, as text: what the files must not keep."""
    out = [t for _id, title, said, reply in person.sessions for t in (title, said, reply)]
    return out + [value for _key, value in person.profile] + [person.fact, person.summary,
                                                             person.loose]


@dataclass
class _Disk:
    """One user's rows, read from the database file with a connection of the check's own."""
    sessions: list = field(default_factory=list)   # (id, title)
    messages: list = field(default_factory=list)   # (session id, seq, message)
    profile: list = field(default_factory=list)    # (key, value), oldest first
    memories: list = field(default_factory=list)   # (text, source, ref)


def _on_disk(path: Path, user: str, person: _Person) -> _Disk:
    """What the file holds of `user`, layer by layer (not through the store being checked):
    the messages of the user's sessions, and of the sessions the check gave them (a session
    row deleted alone would leave its messages)."""
    disk = _Disk()
    ids = [session_id for session_id, *_rest in person.sessions]
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        disk.sessions = db.execute("SELECT id, title FROM sessions WHERE user_id = ? "
                                   "ORDER BY id", (user,)).fetchall()
        disk.messages = db.execute(
            "SELECT session_id, seq, message FROM messages WHERE session_id IN "
            "(SELECT id FROM sessions WHERE user_id = ?) OR session_id IN "
            f"({', '.join('?' * len(ids))}) ORDER BY session_id, seq", (user, *ids)).fetchall()
        disk.profile = [(key, json.loads(value)) for key, value in db.execute(
            "SELECT key, value FROM profile_facts WHERE user_id = ? ORDER BY id", (user,))]
        disk.memories = db.execute("SELECT text, source, ref FROM memories WHERE user_id = ? "
                                   "ORDER BY id", (user,)).fetchall()
    return disk


def _in_files(path: Path, texts: list[str]) -> list[str]:
    """Which of `texts` the database's files still hold, byte by byte (the file, its WAL)."""
    data = b"".join(f.read_bytes() for f in sorted(path.parent.glob(path.name + "*")))
    return [text for text in texts if text.encode("utf-8") in data]


def _quoted(items: list[str]) -> str:
    return ", ".join(repr(i) for i in items)


def _left_in_memory(person: _Person, memories: list) -> list[str]:
    """The memories left, each said as what it is: a session's fact or summary, or one
    filed under no session."""
    titles = {session_id: title for session_id, title, *_rest in person.sessions}
    out = []
    for text, source, ref in memories:
        if source == "session":
            out.append(_("the summary of the session {title}: {text}").format(
                title=repr(titles.get(ref, ref)), text=repr(text)))
        elif ref:
            out.append(_("a fact said in the session {title}: {text}").format(
                title=repr(titles.get(ref, ref)), text=repr(text)))
        else:
            out.append(_("a memory filed under no session: {text}").format(text=repr(text)))
    return out


def _check_forget_user(report: Report, forget_user: Callable, store: SessionStore,
                       path: Path) -> None:
    people = _people()
    me, him = people[XIAOMING], people[LAOZHANG]
    for user, person in people.items():
        _fill(store, person, user)
    his_before = _on_disk(path, LAOZHANG, him)
    removed = forget_user(store, XIAOMING)
    left = _on_disk(path, XIAOMING, me)
    name = me.name

    # the session log: no session listed, no row of it in the file
    listed = store.list_sessions(XIAOMING)
    if listed and not left.messages:
        hint = (_("{name}'s {n} sessions are still listed, with no messages in them").format(
                    name=name, n=len(listed)),
                N_("clearing a session's messages keeps the session: its row, its title "
                   "(which can say as much as a message) and its id stay"),
                N_("store.delete_session(session_id) deletes a session whole: its row, its "
                   "messages, its repairs"))
    elif listed or left.sessions or left.messages:
        hint = (_("after forget_user(store, 'xiaoming'), {n} of {name}'s {total} sessions "
                  "are still in the file").format(n=len(left.sessions), name=name,
                                                  total=len(me.sessions)),
                N_("a user has many sessions: forget every one, not the first or the open one"),
                N_("store.delete_session(session_id) for each session in "
                   "store.list_sessions(user_id)"))
    else:
        hint = ""
    report.expect(not (listed or left.sessions or left.messages),
                  N_("the session log: none of Xiaoming's sessions is left in the file"), hint)

    # the profile: no value, current or old
    was = dict(me.profile)  # each key's last value: the profile as it was
    current = {key: value for key, value in left.profile}  # the last row of a key is current
    shown = [f"{key}: {value!r}" for key, value in left.profile]
    if any(current.get(key) == value for key, value in was.items()):
        hint = (_("the file still holds {name}'s profile: {values}").format(
                    name=name, values=", ".join(shown)),
                N_("the profile is a layer of its own: it outlives every session, so deleting "
                   "the sessions leaves it"),
                N_("store.profile(user_id) is the user's profile: .as_dict() lists its keys, "
                   ".forget(key) deletes a key with every value it ever had"))
    elif left.profile:
        hint = (_("the file still holds old values of {name}'s profile: {values}").format(
                    name=name, values=", ".join(shown)),
                N_("a profile keeps every value a key had (profile.history(key)): a changed "
                   "key's old value is still there when the current one is gone or blanked"),
                N_("profile.forget(key) deletes the key and its whole history: call it for "
                   "each key of profile.as_dict()"))
    else:
        hint = ""
    report.expect(not left.profile, N_("the profile: no value of Xiaoming's, current or old, "
                                       "is left in the file"), hint)

    # long-term memory: every memory of the user, filed under a session or not
    if left.memories:
        hint = (_("the file still holds {n} of {name}'s 3 long-term memories: {which}").format(
                    n=len(left.memories), name=name,
                    which="; ".join(_left_in_memory(me, left.memories))),
                N_("long-term memory is a layer of its own: what was learnt in a session (its "
                   "facts, its summary) outlives the session, and a memory can be filed under "
                   "no session at all; a word search (memory.forget(word)) takes only what "
                   "says that word"),
                N_("LongTermMemory(store, user_id) (from lesson_lib.longterm) is the user's "
                   "long-term memory: .clear() deletes every memory of the user, whatever it "
                   "says, and returns how many"))
    else:
        hint = ""
    report.expect(not left.memories, N_("long-term memory: none of Xiaoming's memories is "
                                        "left in the file"), hint)

    # the bytes: once the rows are gone, their words not left lying in the file's pages or
    # its WAL (asked only then: while rows are left, the files hold their words, rightly)
    if not (left.sessions or left.messages or left.profile or left.memories):
        found = _in_files(path, _texts(me))
        report.expect(not found, N_("the files (the database, its WAL) hold none of Xiaoming's "
                                    "words, even in their unused space"),
                      (_("the rows are gone, but the files still hold {texts}").format(
                          texts=_quoted(found[:3])),
                       N_("a DELETE through a connection of your own frees the rows but leaves "
                          "their bytes in the page, or in the WAL, until SQLite reuses them"),
                       N_("delete with the layers' own calls (store.delete_session, "
                          "profile.forget, LongTermMemory.clear): they have SQLite overwrite "
                          "what it frees (secure_delete) and empty the WAL into the file")))

    # Lao Zhang: every layer as it was
    his_after = _on_disk(path, LAOZHANG, him)
    changed = [_(LAYER_NAMES[layer]) for layer in LAYER_NAMES
               if getattr(his_before, layer) != getattr(his_after, layer)]
    report.expect(not changed, N_("Lao Zhang's sessions, profile and memories are untouched"),
                  (_("forget_user(store, 'xiaoming') changed {name}'s {layers}").format(
                      name=him.name, layers=", ".join(changed)),
                   N_("forget one user: list, read and delete through user_id only"),
                   N_("store.list_sessions(user_id), store.profile(user_id) and "
                      "LongTermMemory(store, user_id) each reach one user's rows")))

    # what it returns: what went, per layer
    want = {"sessions": len(me.sessions), "profile values": len(me.profile), "memories": 3}
    got = dict(removed) if isinstance(removed, Mapping) else None
    wrong = [] if got is None else [k for k in want if got.get(k) != want[k]]
    if got is None and isinstance(getattr(removed, "removed", None), Mapping):
        hint = (_("forget_user returned the library's report ({value}): this exercise asks "
                  "for your own forget_user").format(value=type(removed).__name__),
                N_("build it from each layer's own calls (the table of section 8), and return "
                   "a dict with the keys 'sessions', 'profile values' and 'memories', each "
                   "with how many went; the library's version is shown once yours passes"))
    elif got is None:
        shown = repr(removed)
        hint = (_("forget_user returned {value}").format(
                    value=shown if len(shown) <= 80 else shown[:77] + "..."),
                N_("say what went in each layer, as a dict with the keys 'sessions', "
                   "'profile values' and 'memories', each with how many went"),
                N_("store.delete_session, profile.forget(key) and LongTermMemory.clear() each "
                   "return how much they deleted: add them up, layer by layer"))
    elif wrong:
        emptied = {"sessions": not (left.sessions or left.messages),
                   "profile values": not left.profile, "memories": not left.memories}
        why = {"sessions": N_("count the sessions as you delete them (a list made after "
                              "deleting is empty)"),
               "profile values": N_("a key changed once has two values: profile.forget(key) "
                                    "returns how many values it deleted, not 1 per key"),
               "memories": N_("LongTermMemory(store, user_id).clear() returns how many "
                              "memories it deleted")}
        steps = [why[k] for k in wrong if emptied[k]] or [
            N_("forget each layer first (the ❌ lines above), then count what each call "
               "deleted")]
        hint = (_("forget_user returned {got}; {name} had {want}").format(
                    got=repr(got), name=name, want=repr(want)), *steps)
    else:
        hint = ""
    report.expect(got is not None and not wrong,
                  N_("it returns what went, per layer: sessions, profile values, memories"),
                  hint)


def check_forget_user(forget_user: Callable) -> bool:  # your forget_user(store, user_id)
    """Run `forget_user` on a store with two users, each with sessions, a profile and
    long-term memories; then read the file to see what is left."""
    if forget_user is ...:
        return not_done(_("Exercise 2 · forget_user"), _("write forget_user, then run this "
                                                         "cell again"))
    if wrong_signature(_("Exercise 2 · forget_user"), signature_problem(
            forget_user, "forget_user(store, user_id)", None, "")):
        return False
    with tempfile.TemporaryDirectory() as folder:
        store, path = _store(folder)
        try:
            return run_check(_("Exercise 2 · forget_user"),
                             lambda report: _check_forget_user(report, forget_user, store, path))
        finally:
            store.close()
