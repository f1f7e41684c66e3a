"""The terminal chat: `python -m lesson_lib` talks to the memory agent.

Commands: /clear forgets everything but the system prompt, /memory prints the
message list the next call would send, /help lists the commands, /exit quits
(so does end of input, Ctrl-D). The offline model answers unless the
environment chooses a real provider (see lesson_lib.llm).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from lesson_lib.agent import Agent, LoopAgent, ToolEvent
from lesson_lib.memory import ShortTermMemory

CLEARED = "记忆已清除，开始新对话。 (Memory cleared: starting a new conversation.)"
HELP = "Commands: /clear  forget the conversation · /memory  show the messages · /exit  quit"


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lesson_lib", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loop", action="store_true", help="use the multi-step agent loop")
    parser.add_argument("--max-turns", type=int, default=5, help="cap for --loop (default 5)")
    parser.add_argument("--max-messages", type=int, default=40, help="memory size (default 40)")
    args = parser.parse_args(argv)
    agent = make_agent(args.loop, args.max_turns, args.max_messages)
    from lesson_lib.llm import describe_backend

    print(f"Chatting with the {describe_backend()}. {HELP}")
    for line in _lines():
        if not line.strip():
            continue
        if line.strip().startswith("/"):
            if not handle_command(agent, line):
                break
            continue
        print(f"agent> {agent.chat(line)}")
    print("Bye.")
    return 0
