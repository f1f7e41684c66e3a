"""The terminal chat, driven through its standard input."""

import subprocess
import sys


def run_chat(lines: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lesson_lib", *args], input=lines,
                          capture_output=True, text=True, timeout=60)


def test_remember_show_clear_and_exit():
    done = run_chat("My name is Xiaoming\nWhat's the weather in Chengdu?\n/memory\n/clear\n"
                    "What's my name?\n/exit\nnever read\n")
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "offline teaching model" in out
    assert "agent> Nice to meet you, Xiaoming!" in out
    assert "[tool] get_current_weather" in out
    assert "(7 messages)" in out and "[1] user       My name is Xiaoming" in out
    assert "记忆已清除，开始新对话。" in out and "Memory cleared" in out
    assert "agent> You haven't told me your name." in out
    assert "never read" not in out


def test_end_of_input_exits_cleanly():
    done = run_chat("我叫小明\n")
    assert done.returncode == 0 and "你好小明" in done.stdout and "Bye." in done.stdout


def test_loop_mode_and_help():
    done = run_chat("/help\nKeep checking the weather in Chengdu until it is sunny.\n",
                    "--loop", "--max-turns", "2")
    assert done.returncode == 0, done.stderr
    assert "/clear" in done.stdout and "max_turns=2" in done.stdout
