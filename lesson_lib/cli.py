"""The terminal chat. Its description is DESCRIPTION below, which is also its --help, in
the learner's language, and this module's __doc__."""

from __future__ import annotations

import argparse
import getpass
import os
import re
import shlex
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lesson_lib.agent import SYSTEM_PROMPT, Agent, LoopAgent, ToolEvent
from lesson_lib.embeddings import Embedder
from lesson_lib.forgetting import (
    ForgetReport,
    Proof,
    forget_session,
    forget_topic,
    names_of,
    verify_files,
)
from lesson_lib.i18n import LANG_ENV, N_, _, ngettext, normalise
from lesson_lib.llm import BackendError, describe_backend
from lesson_lib.longterm import LongTermMemory
from lesson_lib.memory import ShortTermMemory
from lesson_lib.profile import PROMPT_HEAD, UserProfile
from lesson_lib.protocol import find_problems
from lesson_lib.sessions import (
    STORE_URL_ENV,
    Session,
    SessionInfo,
    SessionStore,
    StoredMemory,
    StoreError,
    StoreUnavailableError,
    default_store_path,
    default_store_url,
    find_session,
)

CLEARED = N_("记忆已清除，开始新对话。 (Memory cleared: starting a new conversation.)")
HELP = N_("Commands: /clear  forget the conversation · /memory  show the messages · /exit  quit")
HELP_STORED = N_("Commands: /clear  forget the conversation, in the store too · /memory  show "
                 "what is sent, and how much is stored · /sessions  list your sessions · "
                 "/forget  delete this session for good · /forget about TOPIC  forget a topic "
                 "everywhere · /profile  what the agent knows about you (/profile forget KEY) "
                 "· /exit  quit")
NOTHING_STORED = N_("Nothing is stored in this chat (it was started without --session): "
                    "/clear forgets the conversation; --session NAME keeps one across restarts.")
RESTART = N_("(The chat reads these settings at start: fix them in your shell, then run it "
             "again.)")

# What the terminal chat does: the --help text (a literal, so the catalogue can see it).
DESCRIPTION = N_("""The terminal chat: `python -m lesson_lib` (or `lesson-chat`) talks to the memory agent.

Without --session nothing is kept: the conversation lives in the process, in a
ShortTermMemory, and ends with it (as in Part I). With --session NAME it is kept in a
session store (mid-term memory, lesson_lib.sessions): the whole log is stored, a window of
it is sent, and running the chat again with the same NAME resumes it. NAME is the
session's title, one per user (or the id a notebook's session got). A stored session
carries all three layers of memory: the window of messages (short-term); the session and
your profile (lesson_lib.profile: what the agent knows about you), written into the system
prompt of every request as it is at that moment, so "I'm vegan now" is in the next one
(the stored log keeps the prompt the session started with); and long-term memory
(lesson_lib.longterm): the model may save what you say that lasts (save_memory keeps only
your own words) and search it, and before each message the memories that answer it are
recalled and sent with it, so what you said on Monday is used on Tuesday, in another
session too. Its vectors are the offline embedder's, computed here whatever the chat
model: nothing of your memories is sent anywhere to be embedded.

Commands: /clear forgets everything but the system prompt (with --session: in the store
too), /memory prints the message list the next call would send (with --session: with the
profile as it is now, the memories recalled for your last message, and how many messages
are stored), /sessions lists your stored sessions, /forget deletes this one
for good with what came of it (it asks for /forget yes first), /forget about TOPIC forgets
a topic (e.g. Chengdu, also written 成都) in your sessions, profile and long-term memories
(it asks too), /profile shows what the agent knows about you and /profile forget KEY
forgets one key; each says what was deleted and what, if anything, is still on disk
(lesson_lib.forgetting). /help lists the commands, /exit quits (so does
end of input, Ctrl-D, and Ctrl-C at the prompt); leaving a stored session keeps it in
long-term memory as experience, summarised, for later sessions to recall. The offline
model answers unless the
environment chooses a real provider (see lesson_lib.llm).

When something goes wrong you get one line saying what happened and what to do,
never a traceback: a provider that cannot be reached, a 401, a 429 or any other
API error, or Ctrl-C while the model is answering. The chat then goes on, and
the memory is still a valid message list (it is checked after every failure; a stored
session's log only ever gets whole units). A store that cannot be opened stops the chat
with one line (exit code 2).
""")
__doc__ = DESCRIPTION  # help(lesson_lib.cli) shows the whole of it


def _print_tool(event: ToolEvent) -> None:
    print(_("  [tool] {call} → {result}").format(call=f"{event.name}({event.arguments})",
                                                 result=event.result))


def handle_command(agent: Agent, line: str, out: Callable[[str], None] = print) -> bool:
    """Run a /command; return False when the chat should end."""
    command = line.strip().lower()
    if command in ("/exit", "/quit"):
        return False
    if command == "/clear":
        agent.clear()
        out(CLEARED)
    elif command == "/memory":
        from lesson_lib.display import show_messages

        out(str(show_messages(agent.memory.to_api_format())))
        out(f"({agent.memory.message_count()} messages)")
    else:
        out(HELP)
    return True


def say(text: str) -> None:
    """print(), in the learner's language, for handle_command: notebook 02 shows its source as
    it was written, so what it says is translated here (its constants are marked N_())."""
    found = re.fullmatch(r"\((\d+) messages\)", text)
    print(_("({n} messages)").format(n=found[1]) if found else _(text))


def make_agent(args: argparse.Namespace, memory: ShortTermMemory | StoredMemory,
               profile: UserProfile | None = None,
               longterm: LongTermMemory | None = None) -> Agent:
    """The agent the command line asks for (--loop, --max-turns), on `memory`. With a
    profile (a stored session), it knows the user and may remember lasting preferences;
    with long-term memory too (a stored session), it is Agent.with_longterm's: each request
    carries the profile as it is now and what long-term memory recalls for the message, and
    the model may save and search memories. A system prompt is written only into a memory
    that has none: a resumed session's stored log keeps its own."""
    kind = LoopAgent if args.loop else Agent
    extra = {"max_turns": args.max_turns} if args.loop else {}
    if longterm is not None:
        return kind.with_longterm(longterm, memory=memory, profile=profile, as_tools=True,
                                  on_tool=_print_tool, **extra)
    if profile is not None:
        return kind.with_profile(profile, memory=memory, on_tool=_print_tool, **extra)
    return kind(SYSTEM_PROMPT, memory=memory, on_tool=_print_tool, **extra)


@dataclass
class Chat:
    """The running chat: its agent, and, with --session, the store that keeps its session."""
    args: argparse.Namespace           # the command line
    agent: Agent
    store: SessionStore | None = None  # None: nothing is stored (no --session)
    topic: str | None = None           # what /forget about TOPIC waits to forget (/forget yes)
    longterm: LongTermMemory | None = None  # the user's long-term memory, in the store


# ----------------------------------------------------------------- when a turn fails

def memory_check(agent: Agent) -> str:
    """'[memory: 3 messages, valid]': checked, not assumed. The agent writes a tool round
    whole or not at all, so a failed turn should never break the list; if it ever does,
    say so (that is a bug) and how to carry on."""
    try:
        messages = agent.memory.to_api_format()
    except StoreError:  # a stored session's window took a unit whose commit then failed
        return _("[memory: reloaded from the store, which kept only whole units]")
    problems = find_problems(messages)
    if problems:
        return _("[memory NOT valid: {explanation}; /clear starts over]").format(
            explanation=problems[0].explanation)
    n = len(messages)
    return ngettext("[memory: {n} message, valid]", "[memory: {n} messages, valid]",
                    n).format(n=n)


def _where(error: BaseException) -> str:
    """' (raised in tools.py, line 12)': where an unexpected error came from."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    return _(" (raised in {file}, line {line})").format(file=Path(frames[-1].filename).name,
                                                        line=frames[-1].lineno)


def _needs_restart(error: Exception) -> bool:
    """A wrong key (401), access (403), model or path (404), or an address nothing answers
    at: the fix is in the environment, which the chat read when it started."""
    import openai  # already loaded by then: every call goes through the openai SDK

    if isinstance(error, openai.APIStatusError):
        return error.status_code in (401, 403, 404)
    return (isinstance(error, openai.APIConnectionError)
            and not isinstance(error, openai.APITimeoutError))  # a timeout: just send again


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def error_line(error: Exception, agent: Agent) -> str:
    """One line for a turn that failed: what happened and what to do."""
    import openai

    from lesson_lib.notices import describe_error, redact  # the chat app's notices, reused

    if isinstance(error, StoreError):  # its text already names the problem and the fix
        return redact(_("(!) The session store: {error}").format(error=one_line(error))
                      + f" {memory_check(agent)}")
    title, detail = describe_error(error, agent.memory.to_api_format())
    line = f"(!) {title}: {one_line(detail)}"  # the detail's lines, joined into one
    if not isinstance(error, openai.APIError):
        line += _where(error)  # not the API's doing: maybe a bug, so say where it happened
    if _needs_restart(error):
        line += f" {_(RESTART)}"
    return redact(f"{line} {memory_check(agent)}")  # never show the API key


def interrupted_line(agent: Agent) -> str:
    """Ctrl-C while the model was answering: that call is dropped, the chat goes on."""
    return _("(!) Ctrl-C: the model's answer was cancelled; your message stays in the memory, "
             "unanswered. Type your next message, or press Ctrl-C again to leave. "
             "{check}").format(check=memory_check(agent))


def reply_line(agent: Agent, text: str) -> str:
    """One turn: the agent's answer, or one line saying why there is none."""
    try:
        return _("agent> {answer}").format(answer=agent.chat(text))
    except KeyboardInterrupt:
        return interrupted_line(agent)
    except Exception as error:  # every failure becomes a line, never a traceback
        return error_line(error, agent)


# ----------------------------------------------------------------- stored sessions

def login_name() -> str:
    """The default --user: who is logged in (the store is theirs too), else 'learner'."""
    try:
        return getpass.getuser() or "learner"
    except (OSError, KeyError, ImportError):  # no LOGNAME/USER and no password entry
        return "learner"


def open_store(args: argparse.Namespace) -> SessionStore:
    """The store --store names; without it $LESSON_STORE_URL, else the SQLite file in your
    data folder (created if missing). StoreError, with the problem and the fix, if it
    cannot be used."""
    try:
        url = args.store or default_store_url()
    except OSError as error:  # the data folder cannot be created
        raise StoreUnavailableError(_("cannot create the folder for {path} ({error})").format(
            path=default_store_path(), error=error)) from error
    return SessionStore(url)


def use_session(chat: Chat, session: Session) -> StoredMemory:
    """Give the chat an agent whose memory is `session`: the whole log is stored, a window
    of --max-messages is sent (resuming fills it from the log's newest end). Each request
    carries the user's profile as it is then, and what long-term memory recalls."""
    memory = session.memory(ShortTermMemory(max_messages=chat.args.max_messages))
    if chat.longterm is None:  # made once: it loads the embedder
        chat.longterm = LongTermMemory(chat.store, chat.args.user, embedder=Embedder.offline())
    chat.agent = make_agent(chat.args, memory, chat.store.profile(chat.args.user),
                            chat.longterm)
    return memory


def profile_changed(memory: StoredMemory, note: str) -> bool:
    """Does the profile now say something the session's system prompt does not (or has it
    forgotten what the prompt still says)?"""
    prompt = " ".join(str(m["content"]) for m in memory.to_api_format()
                      if m["role"] == "system")
    return note not in prompt if note else (PROMPT_HEAD in prompt or _(PROMPT_HEAD) in prompt)


def start_session(chat: Chat) -> None:
    """Resume the session --session names, or create it, and say which."""
    args = chat.args
    note = chat.store.profile(args.user).as_prompt()
    found = find_session(chat.store, args.user, args.session)
    if found is None:
        use_session(chat, chat.store.create_session(args.user, title=args.session))
        print(_("New session {name}.").format(name=repr(args.session)))
        if note:
            print(_("Your profile is read into its system prompt: {note}").format(note=note))
    else:
        memory = use_session(chat, chat.store.session(found.session_id))
        print(_("Resumed session {name} ({stored} messages stored, {window} in the "
                "window).").format(name=repr(args.session), stored=memory.stored_count(),
                                   window=memory.message_count()))
        if memory.repairs:  # a log other code left broken: repaired on load, the old kept
            n = len(memory.repairs)
            print(ngettext("(Its log was broken and was repaired on load: {n} change; "
                           "store.repairs() keeps the log as it was.)",
                           "(Its log was broken and was repaired on load: {n} changes; "
                           "store.repairs() keeps the log as it was.)", n).format(n=n))
        if profile_changed(memory, note):
            print(_("(Your profile has changed since this session started: its stored system "
                    "prompt keeps the profile as it was then, and each request says what it "
                    "says now. /memory shows what is sent.)"))
    print(_("Kept for user {user} in {where}: run the chat again with "
            "--session {name} to come back to it.").format(
                user=repr(args.user), where=chat.store.where, name=shlex.quote(args.session)))


def keep_as_experience(chat: Chat) -> None:
    """On leaving a stored session: its conversation, summarised, goes into long-term memory
    as experience (agent.end_session(): it replaces this session's earlier summary), so a
    later session can recall what was done here. Said in one line; a failure is said too,
    and the session's log is kept whatever happens."""
    agent = chat.agent
    if chat.longterm is None or getattr(agent, "longterm", None) is None:
        return
    try:
        saved = agent.end_session()
    except KeyboardInterrupt:
        print(_("(Not kept as experience: interrupted. The session's log is kept.)"))
        return
    except Exception as error:  # noqa: BLE001  (the model or the store: said, not raised)
        print(_("(Not kept as experience: {error}. The session's log is kept.)").format(
            error=one_line(error)))
        return
    if saved is not None:
        summary = one_line(saved.text)
        summary = summary if len(summary) <= 100 else summary[:99] + "…"
        print(_("(Kept in long-term memory as experience: {summary})").format(
            summary=summary))


def reload_if_stale(chat: Chat) -> None:
    """After a turn: if the window holds a unit the store did not commit (a commit that
    failed, or Ctrl-C at that instant), rebuild it from the store, which holds the truth."""
    if chat.store is None:
        return
    try:
        chat.agent.memory.to_api_format()
    except StoreError:  # StoredMemory refuses to be read once its window and log disagree
        use_session(chat, chat.agent.memory.session)


def when(info: SessionInfo) -> str:
    """'2026-05-01 09:30 UTC': when a message was last added to the session."""
    return info.updated_at[:16].replace("T", " ") + " UTC"


def show_sessions(chat: Chat) -> None:
    """/sessions: the user's stored sessions, the most recently used first."""
    if chat.store is None:
        print(_(NOTHING_STORED))
        return
    current = chat.agent.memory.session.session_id
    print(_("Sessions of {user}, most recently used first (* is this one):").format(
        user=repr(chat.args.user)))
    for info in chat.store.list_sessions(chat.args.user):
        mark = "*" if info.session_id == current else " "
        n = info.message_count
        print(f"{mark} {info.title or info.session_id!r}: " + ngettext(
            "{n} message, last used {when} [id {id}]", "{n} messages, last used {when} [id {id}]",
            n).format(n=n, when=when(info), id=info.session_id))


def forget(chat: Chat, confirmed: bool) -> None:
    """/forget says what it would delete; /forget yes deletes the session for good, with
    what came of it (lesson_lib.forgetting.forget_session: its long-term memories, the
    profile's note of it), and goes on in a new, empty session of the same name. After
    /forget about TOPIC, /forget yes forgets that topic instead (forget_about)."""
    if chat.store is None:
        print(_(NOTHING_STORED))
        return
    if chat.topic is not None and confirmed:
        forget_about(chat, chat.topic, confirmed=True)
        return
    chat.topic = None
    name, memory = chat.args.session, chat.agent.memory
    if not confirmed:
        n = memory.stored_count()
        print(ngettext("/forget deletes session {name} for good: its {n} stored message go "
                       "from {where} (your profile stays). Type /forget yes to do it.",
                       "/forget deletes session {name} for good: its {n} stored messages go "
                       "from {where} (your profile stays). Type /forget yes to do it.",
                       n).format(name=repr(name), n=n, where=chat.store.where))
        return
    report = forget_session(chat.store, memory.session.session_id)
    use_session(chat, chat.store.create_session(chat.args.user, title=name))
    gone = report.removed["messages"]
    print(ngettext("Deleted session {name} for good ({n} message). "
                   "Going on in a new, empty session {name}.",
                   "Deleted session {name} for good ({n} messages). "
                   "Going on in a new, empty session {name}.", gone).format(name=repr(name),
                                                                             n=gone))
    derived = {k: v for k, v in report.removed.items() if k != "messages" and v}
    if derived:
        also = ForgetReport(report.user_id, None, derived, report.proof).removed_text()
        print(_("Also forgotten, as it came from that session: {what}.").format(what=also))
    say_proof(report.proof)


def forget_about(chat: Chat, topic: str, confirmed: bool) -> None:
    """/forget about TOPIC says what it would search; /forget yes then forgets the topic in
    every session of the user, the profile and long-term memory (forget_topic)."""
    if chat.store is None:
        print(_(NOTHING_STORED))
        return
    if not topic.strip():
        print(_("Forget what? Type /forget about TOPIC, e.g. /forget about Chengdu"))
        return
    if not confirmed:
        chat.topic = topic.strip()
        names = ", ".join(names_of(chat.topic))
        print(_("/forget about {topic} deletes, for user {user}, every turn of every session "
                "(a question and all that answers it), profile value and long-term memory that "
                "names it ({names}) or means it. Type /forget yes to do it.").format(topic=repr(chat.topic),
                                                         user=repr(chat.args.user), names=names))
        return
    chat.topic = None
    report = forget_topic(chat.store, chat.args.user, topic)
    use_session(chat, chat.agent.memory.session)  # its log may have lost units: reload it
    print(_("Forgot {topic}: {what}.").format(topic=repr(topic), what=report.removed_text()))
    say_proof(report.proof)


def say_proof(proof: Proof) -> None:
    """One line: the proof found nothing left; or what is left and what to do."""
    if proof.ok:
        print(_("(Checked afterwards: nothing of it is left in the store or its files.)"))
        return
    for action in proof.actions:
        print(f"(!) {action}")
    if proof.remaining:
        print("(!) " + ngettext("{n} place still holds it: {first}",
                                "{n} places still hold it: {first} …", len(proof.remaining)
                                ).format(n=len(proof.remaining), first=proof.remaining[0]))


def prompts_quoting(chat: Chat, lines: list[str]) -> int:
    """How many of the user's sessions have a system message that quotes one of `lines`
    (a profile fact, as as_prompt() wrote it into a new session's system prompt)."""
    found = 0
    for info in chat.store.list_sessions(chat.args.user):
        systems = [m for m in chat.store.load(info.session_id).messages
                   if m.get("role") == "system"]
        found += any(line in str(m.get("content")) for m in systems for line in lines)
    return found


def show_profile(chat: Chat, argument: str) -> None:
    """/profile: what the agent knows about the user, with where each value came from;
    /profile forget KEY: that key and its whole history go, and the files are checked."""
    if chat.store is None:
        print(_(NOTHING_STORED))
        return
    profile = chat.store.profile(chat.args.user)
    words = argument.split(maxsplit=1)
    if words and words[0].lower() == "forget":
        key = words[1].strip() if len(words) > 1 else ""
        if not key:
            print(_("Forget which key? Type /profile forget KEY (/profile lists them)"))
            return
        values = [entry.value for entry in profile.history(key)]
        if not values:
            print(_("Your profile has no key {key}: /profile lists them.").format(key=repr(key)))
            return
        gone = profile.forget(key)
        print(ngettext("Forgot {key} ({n} value, its history included).",
                       "Forgot {key} ({n} values, its history included).", gone).format(
                           key=repr(key), n=gone))
        shown = [", ".join(map(str, v)) if isinstance(v, list) else str(v) for v in values]
        say_proof(verify_files(chat.store, chat.args.user, shown))
        quoted = prompts_quoting(chat, [f"{key}: {v}" for v in shown])
        if quoted:
            print(ngettext("(The system prompt of {n} session still says it: it was written "
                           "with the profile when the session started. /forget about {value} "
                           "forgets it there too.)",
                           "(The system prompts of {n} sessions still say it: they were "
                           "written with the profile when the sessions started. /forget about "
                           "{value} forgets it there too.)", quoted).format(
                               n=quoted, value=shown[-1]))
        return
    if words:
        print(_("/profile shows your profile; /profile forget KEY forgets one key."))
        return
    facts = profile.as_dict()
    if not facts:
        print(_("Your profile is empty: nothing is known about {user} across sessions.").format(
            user=repr(chat.args.user)))
        return
    print(_("Your profile (what the agent knows about {user} across sessions):").format(
        user=repr(chat.args.user)))
    for key in facts:
        print(f"  {key}: {profile.history(key)[-1]}")
    print(_("(/profile forget KEY forgets one key, with its history.)"))


def show_memory(chat: Chat) -> None:
    """/memory in a stored session: what the next call sends (the window, its system prompt
    with the profile as it is now), then the memories long-term memory recalled for the
    last message and sent with it (never stored), then how much the store holds."""
    from lesson_lib.display import show_messages  # noqa: PLC0415

    agent = chat.agent
    sent = agent.window()
    print(show_messages(sent))
    print(_("({n} messages)").format(n=len(sent)))
    if agent.last_context is not None:
        n = len(agent.last_recalled)
        print(ngettext("Recalled from long-term memory for your last message ({n} memory), "
                       "sent with it just before it, not stored:",
                       "Recalled from long-term memory for your last message ({n} memories), "
                       "sent with it just before it, not stored:", n).format(n=n))
        for line in str(agent.last_context["content"]).splitlines():  # whole: what was sent
            print(f"  {line}")
    else:
        print(_("(Long-term memory recalled nothing for your last message: no memory was "
                "sent with it.)"))
    print(stored_note(chat, "/memory"))


def stored_note(chat: Chat, command: str) -> str:
    """What /clear and /memory add in a stored session."""
    memory = chat.agent.memory
    if command == "/clear":
        return _("(In the store too: session {name} keeps only its system prompt.)").format(
            name=repr(chat.args.session))
    n = memory.stored_count()
    return ngettext("({n} message stored in session {name}: the whole log. Above is the "
                    "window: what is sent.)",
                    "({n} messages stored in session {name}: the whole log. Above is the "
                    "window: what is sent.)", n).format(n=n, name=repr(chat.args.session))


# ----------------------------------------------------------------- the conversation

def _lines():
    """Lines typed at the prompt (or piped in), until /exit or end of input."""
    while True:
        try:
            line = input(_("you> "))
        except EOFError:
            print()
            return
        if not sys.stdin.isatty():
            print(line)  # echo piped input so a transcript reads like a conversation
        yield line


def run_command(chat: Chat, line: str) -> bool:
    """Run a /command; return False when the chat should end. /sessions and /forget are the
    store's; the others are handle_command's (notebook 02), plus what a stored session adds."""
    command = line.strip().lower()
    if command == "/sessions":
        show_sessions(chat)
    elif command.split()[0] == "/forget" and command.split()[1:2] == ["about"]:
        forget_about(chat, line.strip().split(maxsplit=2)[2] if len(command.split()) > 2
                     else "", confirmed=False)
    elif command.split()[0] == "/forget":
        forget(chat, confirmed=command == "/forget yes")
    elif command.split()[0] == "/profile":
        show_profile(chat, line.strip()[len("/profile"):].strip())
    elif command == "/memory" and chat.store is not None:
        show_memory(chat)
    elif command in ("/clear", "/memory", "/exit", "/quit"):
        if not handle_command(chat.agent, line, say):
            return False
        if chat.store is not None:
            print(stored_note(chat, command))
    else:
        print(_(HELP) if chat.store is None else _(HELP_STORED))
    return True


def converse(chat: Chat) -> None:
    """Read a line, answer it, again, until /exit or end of input."""
    for line in _lines():
        if not line.strip():
            continue
        if line.strip().startswith("/"):
            try:
                if not run_command(chat, line):
                    return
            except StoreError as error:  # e.g. the database is locked by another writer
                print(_("(!) The session store: {error}").format(error=one_line(error)))
            continue
        print(reply_line(chat.agent, line))
        reload_if_stale(chat)


def program_name() -> str | None:
    """The name the learner typed, for the usage line: `python -m lesson_lib`, or None
    to let argparse use the script's own name (`lesson-chat`, the console script)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name == "lesson_lib.__main__":
        return f"{Path(sys.executable).name.removesuffix('.exe')} -m lesson_lib"
    return None


def _at_least_1(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(_("must be 1 or more, got {value}").format(value=value))
    return value


def _name(text: str) -> str:
    if not text.strip() or len(text) > 200:
        raise argparse.ArgumentTypeError(_("must be 1 to 200 characters, got {text}").format(
            text=repr(text)))
    return text


def where_by_default() -> str:
    """The end of --help: where --session keeps sessions when --store is not given."""
    return _("Without --store, --session keeps sessions in ${env} if it is set, "
             "else in a file\nof your own, in $XDG_DATA_HOME/agent-memory (by default "
             "~/.local/share/agent-memory;\nthe folder is created), here:\n"
             "  sqlite:///{path}").format(env=STORE_URL_ENV, path=default_store_path())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=program_name(), description=_(DESCRIPTION),
                                     epilog=where_by_default(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loop", action="store_true", help=_("use the multi-step agent loop"))
    parser.add_argument("--max-turns", type=_at_least_1, default=5,
                        help=_("cap for --loop (default 5)"))
    parser.add_argument("--max-messages", type=_at_least_1, default=40,
                        help=_("memory size: the window sent (default 40)"))
    stored = parser.add_argument_group(
        _("stored sessions"), _("Without --session nothing is stored: the conversation ends "
                                "with the chat."))
    stored.add_argument("--session", metavar="NAME", type=_name,
                        help=_("resume your session called NAME, or start it: it is kept in the "
                               "store and survives a restart"))
    stored.add_argument("--user", metavar="NAME", type=_name,
                        help=_("whose sessions and profile (default: your login name, "
                               "{name})").format(name=repr(login_name())))
    stored.add_argument("--store", metavar="URL",
                        help=_("the database: sqlite:///path/to/file.db or "
                               "postgresql+psycopg://user@host:5432/db (default: below)"))
    return parser


def wrong_language(prog: str) -> bool:
    """A LESSON_LANG the series does not speak: one line on stderr, and the chat goes on in
    English (lesson_lib.i18n falls back to it)."""
    wanted = os.environ.get(LANG_ENV, "").strip()
    if not wanted:
        return False
    try:
        normalise(wanted)
    except ValueError as error:
        print(f"{prog}: {LANG_ENV}={wanted}: {error}; going on in English", file=sys.stderr)
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    """The chat speaks the language LESSON_LANG names (en or zh; lesson_lib.i18n).
    Exit code 0 after /exit, end of input or Ctrl-C at the prompt; 2 when the
    environment asks for a backend that cannot be used (no key, an unknown name), or the
    session store cannot be opened (a corrupt file, a read-only folder, no server)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    wrong_language(parser.prog)
    if args.session is None and (args.user or args.store):
        parser.error(_("--user and --store say where --session keeps a conversation: add "
                       "--session NAME (without it nothing is stored)"))
    args.user = args.user or login_name()
    chat = Chat(args, make_agent(args, ShortTermMemory(max_messages=args.max_messages)))
    try:
        backend = describe_backend()  # makes the client: checks LESSON_BACKEND and the key
        chat.store = open_store(args) if args.session else None
        print(_("Chatting with the {backend}.").format(backend=backend)
              + f" {_(HELP) if chat.store is None else _(HELP_STORED)}")
        if chat.store is None:
            print(_("Nothing is stored: this conversation ends with the chat "
                    "(--session NAME keeps one)."))
        else:
            start_session(chat)
        converse(chat)
    except BackendError as error:  # its text already says what is wrong and what to do
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 2
    except StoreError as error:  # so does the store's
        print(f"{parser.prog}: " + _("the session store cannot be used: {error} — or "
                                     "choose another store: --store URL, or {env}").format(
                                         error=one_line(error), env=STORE_URL_ENV),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C at the prompt: a way to leave, like /exit
        print("\n" + _("(Ctrl-C) Leaving the chat."))
    finally:
        if chat.store is not None:
            keep_as_experience(chat)
            chat.store.close()
    print(_("Bye."))
    return 0
