"""The terminal chat: `python -m lesson_lib` (or `lesson-chat`) talks to the memory agent.

Commands: /clear forgets everything but the system prompt, /memory prints the
message list the next call would send, /help lists the commands, /exit quits
(so does end of input, Ctrl-D, and Ctrl-C at the prompt). The offline model
answers unless the environment chooses a real provider (see lesson_lib.llm).

When something goes wrong you get one line saying what happened and what to do,
never a traceback: a provider that cannot be reached, a 401, a 429 or any other
API error, or Ctrl-C while the model is answering. The chat then goes on, and
the memory is still a valid message list (it is checked after every failure).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from lesson_lib.agent import Agent, LoopAgent, ToolEvent
from lesson_lib.llm import BackendError, describe_backend
from lesson_lib.memory import ShortTermMemory
from lesson_lib.protocol import find_problems
from lesson_lib.text import plural

CLEARED = "记忆已清除，开始新对话。 (Memory cleared: starting a new conversation.)"
HELP = "Commands: /clear  forget the conversation · /memory  show the messages · /exit  quit"
RESTART = "(The chat reads these settings at start: fix them in your shell, then run it again.)"


def _print_tool(event: ToolEvent) -> None:
    print(f"  [tool] {event.name}({event.arguments}) → {event.result}")


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


def make_agent(loop: bool, max_turns: int, max_messages: int) -> Agent:
    memory = ShortTermMemory(max_messages=max_messages)
    if loop:
        return LoopAgent(memory=memory, max_turns=max_turns, on_tool=_print_tool)
    return Agent(memory=memory, on_tool=_print_tool)


# ----------------------------------------------------------------- when a turn fails

def memory_check(agent: Agent) -> str:
    """'[memory: 3 messages, valid]': checked, not assumed. The agent writes a tool round
    whole or not at all, so a failed turn should never break the list; if it ever does,
    say so (that is a bug) and how to carry on."""
    messages = agent.memory.to_api_format()
    problems = find_problems(messages)
    if problems:
        return f"[memory NOT valid: {problems[0].explanation}; /clear starts over]"
    return f"[memory: {plural(len(messages), 'message')}, valid]"


def _where(error: BaseException) -> str:
    """' (raised in tools.py, line 12)': where an unexpected error came from."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    return f" (raised in {Path(frames[-1].filename).name}, line {frames[-1].lineno})"


def _needs_restart(error: Exception) -> bool:
    """A wrong key (401), access (403), model or path (404), or an address nothing answers
    at: the fix is in the environment, which the chat read when it started."""
    import openai  # already loaded by then: every call goes through the openai SDK

    if isinstance(error, openai.APIStatusError):
        return error.status_code in (401, 403, 404)
    return (isinstance(error, openai.APIConnectionError)
            and not isinstance(error, openai.APITimeoutError))  # a timeout: just send again


def error_line(error: Exception, agent: Agent) -> str:
    """One line for a turn that failed: what happened and what to do."""
    import openai

    from lesson_lib.notices import describe_error, redact  # the chat app's notices, reused

    title, detail = describe_error(error, agent.memory.to_api_format())
    line = f"(!) {title}: {' '.join(detail.split())}"  # the detail's lines, joined into one
    if not isinstance(error, openai.APIError):
        line += _where(error)  # not the API's doing: maybe a bug, so say where it happened
    if _needs_restart(error):
        line += f" {RESTART}"
    return redact(f"{line} {memory_check(agent)}")  # never show the API key


def interrupted_line(agent: Agent) -> str:
    """Ctrl-C while the model was answering: that call is dropped, the chat goes on."""
    return ("(!) Ctrl-C: the model's answer was cancelled; your message stays in the memory, "
            "unanswered. Type your next message, or press Ctrl-C again to leave. "
            f"{memory_check(agent)}")


def reply_line(agent: Agent, text: str) -> str:
    """One turn: the agent's answer, or one line saying why there is none."""
    try:
        return f"agent> {agent.chat(text)}"
    except KeyboardInterrupt:
        return interrupted_line(agent)
    except Exception as error:  # every failure becomes a line, never a traceback
        return error_line(error, agent)


# ----------------------------------------------------------------- the conversation

def _lines():
    """Lines typed at the prompt (or piped in), until /exit or end of input."""
    while True:
        try:
            line = input("you> ")
        except EOFError:
            print()
            return
        if not sys.stdin.isatty():
            print(line)  # echo piped input so a transcript reads like a conversation
        yield line


def converse(agent: Agent) -> None:
    """Read a line, answer it, again, until /exit or end of input."""
    for line in _lines():
        if not line.strip():
            continue
        if line.strip().startswith("/"):
            if not handle_command(agent, line):
                return
            continue
        print(reply_line(agent, line))


def program_name() -> str | None:
    """The name the learner typed, for the usage line: `python -m lesson_lib`, or None
    to let argparse use the script's own name (`lesson-chat`, the console script)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name == "lesson_lib.__main__":
        return f"{Path(sys.executable).name.removesuffix('.exe')} -m lesson_lib"
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=program_name(), description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loop", action="store_true", help="use the multi-step agent loop")
    parser.add_argument("--max-turns", type=int, default=5, help="cap for --loop (default 5)")
    parser.add_argument("--max-messages", type=int, default=40, help="memory size (default 40)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Exit code 0 after /exit, end of input or Ctrl-C at the prompt; 2 when the
    environment asks for a backend that cannot be used (no key, an unknown name)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        backend = describe_backend()  # makes the client: checks LESSON_BACKEND and the key
        print(f"Chatting with the {backend}. {HELP}")
        converse(make_agent(args.loop, args.max_turns, args.max_messages))
    except BackendError as error:  # its text already says what is wrong and what to do
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C at the prompt: a way to leave, like /exit
        print("\n(Ctrl-C) Leaving the chat.")
    print("Bye.")
    return 0
