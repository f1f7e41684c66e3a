"""The chat app, the pictures, the stepper and the terminal chat speak the learner's
language (lesson_lib.i18n): Chinese when asked, and English exactly as before."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lesson_lib import i18n
from lesson_lib.app import ChatAppState, chat_app
from lesson_lib.cli import DESCRIPTION, build_parser, memory_check
from lesson_lib.display import show_messages, show_request
from lesson_lib.stepper import StepperState, stepper, trim_pitfall

CALL = {"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Chengdu"}'}}
ORPHANED = [{"role": "system", "content": "Be brief."},
            {"role": "tool", "tool_call_id": "call_1", "content": "22°C"},
            {"role": "user", "content": "Thanks"}]
PAIRED = [{"role": "user", "content": "Weather?"},
          {"role": "assistant", "content": None, "tool_calls": [CALL]},
          {"role": "tool", "tool_call_id": "call_1", "content": "22°C"}]


# ----------------------------------------------------------------- display

def test_show_messages_in_english_is_unchanged(speak):
    speak("en")
    fine = show_messages(PAIRED, dropped=[{"role": "user", "content": "Hi"}])
    text = str(fine)
    assert text.endswith("✓ 3 messages, 1 dropped by trim: the API would accept this list")
    assert "(dropped by trim)" in text and "✓ answered at [2]" in text
    assert "↳ answers #1 call_1" in text
    html = fine._repr_html_()
    assert ">dropped by trim</div>" in html and "✓ answered at [2]</span>" in html
    assert "answers <span title=\"call_1\"" in html
    broken = str(show_messages(ORPHANED))
    assert broken.endswith("✗ 3 messages: the API would refuse this list (1 problem)")
    assert str(show_messages([{"role": "user", "content": "x" * 301}])).count(
        "… (1 more character)") == 1
    assert "tools: (none sent) · tool_choice: (not sent) · " in str(show_request(PAIRED[:1]))


def test_show_messages_in_chinese(speak):
    speak("zh")
    fine = show_messages(PAIRED, dropped=[{"role": "user", "content": "Hi"}])
    text = str(fine)
    assert text.endswith("✓ 3 条消息，裁剪丢掉了 1 条：API 会接受这个消息列表")
    assert "（被裁剪丢掉）" in text and "✓ 已在 [2] 回复" in text
    assert "↳ 回复 #1 call_1" in text
    html = fine._repr_html_()
    assert ">被裁剪丢掉</div>" in html and "✓ 已在 [2] 回复</span>" in html
    broken = str(show_messages(ORPHANED))
    assert broken.endswith("✗ 3 条消息：API 会拒绝这个消息列表（1 个问题）")
    assert "…（还有 1 个字符）" in str(show_messages([{"role": "user", "content": "x" * 301}]))
    assert "tools：（未发送） · tool_choice：（未发送） · " in str(show_request(PAIRED[:1]))
    with pytest.raises(TypeError, match="请给出一个消息字典的列表"):
        show_messages("not a list")


# ----------------------------------------------------------------- stepper

def test_the_stepper_in_english_is_unchanged(speak):
    speak("en")
    state = StepperState(trim_pitfall())
    state.go(state.broken_at)
    assert state.recording.title == "The trim pitfall: NaiveMemory(max_messages=5)"
    assert state.position_text() == (f"Step {state.step} of {state.total} · ✗ the rules break "
                                     f"at step {state.broken_at}")
    assert "✗ The rules break here: the API would answer 400" in state.banner_html()
    assert "Newest message (" in state.caption_html()
    assert "The request now: " in state.request_html()


def test_the_stepper_in_chinese(speak):
    speak("zh")
    state = StepperState(trim_pitfall())
    assert state.recording.title == "裁剪的陷阱：NaiveMemory(max_messages=5)"
    assert state.frame.note == "NaiveMemory 保留 5 条消息，每次丢掉最旧的一条。"
    state.go(state.broken_at)
    assert state.position_text() == (f"第 {state.step} 步，共 {state.total} 步 · ✗ 规则在第 "
                                     f"{state.broken_at} 步被打破")
    assert "✗ 规则在这里被打破：API 会返回 400" in state.banner_html()
    assert "最新一条消息（第 " in state.caption_html()
    assert "现在的请求：" in state.request_html()
    assert "规则在第" in repr(state)
    view = stepper(trim_pitfall())
    assert [b.description for b in (view.first_button, view.back_button, view.next_button,
                                    view.last_button)] == ["◀◀ 开头", "◀ 上一步", "下一步 ▶",
                                                           "结尾 ▶▶"]
    with pytest.raises(ValueError, match="scale 是大于 0 的缩放倍数"):
        StepperState(trim_pitfall(), scale=0)


# ----------------------------------------------------------------- the chat app

def test_the_chat_app_in_english_is_unchanged(speak):
    speak("en")
    state = ChatAppState()
    state.send("/help")
    state.inject_fault("rate_limit")
    state.send("/clear")
    said = [(e.kind, e.text) for e in state.entries]
    assert said[0] == ("info", "Commands: /clear  forget the conversation (the system prompt "
                               "stays) · /help  list the commands")
    assert said[1] == ("info", "⚡ The next model call will fail with 429 rate limit.")
    assert said[2] == ("info", "Memory cleared: a new conversation starts.")
    html = state.memory_html()
    assert "Memory: ShortTermMemory(max_messages=10)" in html
    assert "✓ The API accepts this memory." in html and "The last turn or change of memory trimmed nothing." in html
    view = chat_app()
    assert (view.send_button.description, view.strategy.description) == ("Send", "Memory")


def test_the_chat_app_in_chinese(speak):
    speak("zh")
    state = ChatAppState()
    state.send("/help")
    state.inject_fault("rate_limit", times=2)
    state.send("/nope")
    state.set_strategy("NaiveMemory")
    state.send("/clear")
    said = [(e.kind, e.text) for e in state.entries]
    assert said[0] == ("info", "命令：/clear  忘掉这段对话（系统提示词保留） · /help  列出命令")
    assert said[1] == ("info", "⚡ 接下来的 2 次模型调用会失败：429 速率限制。")
    assert said[2] == ("notice", "未知命令 /nope")
    assert said[3][1].startswith("记忆现在是 NaiveMemory(max_messages=10)。陷阱：一次只丢一条消息")
    assert said[4] == ("info", "记忆已清除：开始新的对话。")
    html = state.memory_html()
    assert "记忆：NaiveMemory(max_messages=10)" in html
    assert "✓ API 接受这份记忆。" in html and "上一轮对话或上一次记忆设置的改动什么也没裁剪掉。" in html
    assert "说点什么吧" in ChatAppState().chat_html()
    assert "条消息" in repr(state)
    view = chat_app()
    assert (view.send_button.description, view.strategy.description) == ("发送", "记忆")
    assert "就绪 · 离线教学模型" in view.status.value


# ----------------------------------------------------------------- the terminal chat

def run_chat(lines: str, *args: str, lang: str) -> subprocess.CompletedProcess:
    env = {**os.environ, i18n.LANG_ENV: lang}
    env.pop("LESSON_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "lesson_lib", *args], input=lines,
                          capture_output=True, text=True, timeout=60, env=env)


def test_the_help_text_is_the_docstring():
    import lesson_lib.cli as cli

    assert DESCRIPTION == cli.__doc__


def test_the_terminal_chat_speaks_chinese_when_lesson_lang_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    done = run_chat("/help\n/clear\nWhat's the weather in Chengdu?\n", lang="zh-CN")
    assert done.returncode == 0, done.stderr
    assert "  [工具] get_current_weather(" in done.stdout and "\n智能体> " in done.stdout
    assert "命令：/clear  忘掉这段对话" in done.stdout
    assert "记忆已清除，开始新对话。\n" in done.stdout and "(Memory cleared" not in done.stdout
    assert done.stdout.rstrip().endswith("再见。")
    english = run_chat("/clear\n", lang="en")
    assert "记忆已清除，开始新对话。 (Memory cleared: starting a new conversation.)" in \
        english.stdout and english.stdout.rstrip().endswith("Bye.")
    helped = run_chat("", "--help", lang="zh")
    assert "终端聊天" in helped.stdout and "使用多步的智能体循环" in helped.stdout


def test_a_language_the_series_does_not_speak_is_said_and_the_chat_goes_on(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    done = run_chat("/exit\n", lang="klingon")
    assert done.returncode == 0
    assert "LESSON_LANG=klingon" in done.stderr and "going on in English" in done.stderr
    assert done.stdout.rstrip().endswith("Bye.")


def test_the_memory_line_and_the_options_in_chinese(speak):
    from lesson_lib.agent import Agent
    from lesson_lib.offline import offline_client

    speak("zh")
    agent = Agent(client=offline_client())
    assert memory_check(agent) == "[记忆：1 条消息，有效]"
    assert "使用多步的智能体循环" in build_parser().format_help()
    speak("en")
    assert memory_check(agent) == "[memory: 1 message, valid]"


def test_what_rebuild_says_in_english_is_kept_and_in_chinese_is_translated(speak):
    speak("zh")
    state = ChatAppState()
    state.send("Hello")
    state.set_budget(0)
    state.set_budget(7)
    said = [(e.kind, e.text, e.detail) for e in state.entries if e.kind in ("info", "notice")]
    assert said[-2][1] == "ShortTermMemory(max_messages=0) 不可行"
    assert said[-1][1] == "记忆现在是 ShortTermMemory(max_messages=7)。丢掉最旧的消息，连同它的工具结果一起丢。"
    assert said[-1][2].startswith("已根据这段对话（") and "条消息）重建" in said[-1][2]
    state.send("Memory is now X. typed by the learner")
    assert state.entries[-2].text == "Memory is now X. typed by the learner"  # never translated
    speak("en")
    state.set_budget(8)
    assert state.entries[-1].text == ("Memory is now ShortTermMemory(max_messages=8). Drops the "
                                      "oldest message together with its tool results.")
    assert state.entries[-1].detail.startswith("Rebuilt from this conversation (")


def test_the_inspector_numbers_stay_data_and_their_labels_speak_chinese(speak):
    speak("zh")
    state = ChatAppState()
    assert state.stats()["token_limit_name"] == "the context window"  # data, as code reads it
    assert "(上下文窗口)" in state.memory_html()


AGENT_LINES = {  # language -> what a LoopAgent that hit max_turns shows, and a gauge's label
    "en": ("turn 1: get_current_weather", "3 model calls; stopped by max_turns", "reply: ",
           "I stopped after 3 model calls, each asking for tools, without reaching an answer "
           "(max_turns=3; "
           "tools used: get_current_weather).", "Messages: <b>"),
    "zh": ("第 1 轮：get_current_weather", "3 次模型调用；因 max_turns 而停止", "回复：",
           "我进行了 3 次模型调用，每次模型都在请求工具，始终没有得到回答，所以停了下来（max_turns=3；用过的工具："
           "get_current_weather）。", "消息：<b>"),
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_agents_own_lines_and_the_gauges_in_each_language(speak, language):
    from lesson_lib.agent import LoopAgent
    from lesson_lib.offline import offline_client

    turn, ended, reply, notice, gauge = AGENT_LINES[language]
    speak(language)
    agent = LoopAgent(max_turns=3, client=offline_client())
    result = agent.run("Keep checking the weather in Chengdu until it is sunny.")
    lines = str(result).splitlines()
    assert result.hit_max_turns and lines[0].startswith(turn)
    assert lines[-2:] == [ended, reply + notice]
    assert agent.memory.to_api_format()[-1]["content"] == notice  # kept as the user saw it
    state = ChatAppState()
    state.send("Hello")
    assert gauge in state.memory_html()
