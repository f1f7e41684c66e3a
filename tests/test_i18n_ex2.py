"""The checks of notebooks 04, 05 and 06 and the scripted model they share speak the learner's
language: the same wrong answer gets the same report, in Chinese under `use_language("zh")`
and, word for word as before, in English."""

from __future__ import annotations

import pytest

from lesson_lib.agent import Agent
from lesson_lib.exercises import nb04, nb05, nb06, scripted
from lesson_lib.memory import NaiveMemory


class LeansOnTheLibrary(Agent):
    """An Agent.chat that is the library's own: every rule holds but the exercise's own."""


def test_the_seed_trim_check_in_chinese_and_in_english(speak, capsys):
    speak("zh")
    assert nb04.check_seed_trim(NaiveMemory) is False
    out = capsys.readouterr().out
    assert out.startswith("动手实现 · 种子文章的裁剪：")
    assert "❌ 删掉一条 assistant(tool_calls) 时，它的 tool 回复也一起删掉" in out
    assert "assistant 3（1 个调用）" in out
    assert "tool 4 成了孤儿：它回答的那个调用被删掉了，API 会返回 400" in out
    assert "上面几条成立之后，还有 4 条规则会接着检查" in out

    speak("en")
    assert nb04.check_seed_trim(NaiveMemory) is False
    out = capsys.readouterr().out
    assert out.startswith("Build it · the seed's trim:")
    assert "❌ dropping an assistant(tool_calls) drops its tool reply too" in out
    assert ("hint: what happened: max_messages=4, adding [system 1, user 2, assistant 3 (1 call), "
            "tool 4, assistant 5, user 6] one at a time keeps [system 1, tool 4, assistant 5, "
            "user 6]; expected [system 1, assistant 5, user 6]: tool 4 is an orphan: the call "
            "it answers was dropped, and the API answers 400") in out


def test_a_trim_exercise_not_written_yet(speak, capsys):
    speak("zh")
    assert nb04.check_turn_trim(lambda messages, max_messages: None) is False
    out = capsys.readouterr().out
    assert "练习 2 · my_turn_trim：" in out
    assert "它对每个历史都返回 None" in out
    speak("en")
    nb04.check_my_trim("not a function")
    assert ("hint: define it with def ...(messages, max_messages): and pass the function "
            "itself (no parentheses)") in capsys.readouterr().out


def test_the_agent_chat_check_says_the_steps_were_handed_to_the_library(speak, capsys):
    speak("zh")
    assert nb05.check_my_agent_chat(LeansOnTheLibrary) is False
    out = capsys.readouterr().out
    assert out.startswith("动手实现 · 你的 Agent.chat：")
    assert "❌ chat() 自己写出每一步（不用 super().chat()、run_tool_round 或 remember_answer）" in out
    assert "它调用了 self.remember_answer() 和 self.run_tool_round()（super().chat() 就会这样）" in out
    speak("en")
    assert nb05.check_my_agent_chat(LeansOnTheLibrary) is False
    assert ("chat() handed its steps to the library: it called self.remember_answer() and "
            "self.run_tool_round() (super().chat() does)") in capsys.readouterr().out


def test_predicted_roles_in_chinese_and_in_english(speak, capsys):
    speak("zh")
    nb05.check_predicted_roles(["system", "userx"])
    out = capsys.readouterr().out
    assert "练习 1 · 预测记忆：" in out
    assert "❌ 每一项都是角色名" in out
    assert "提示：['userx'] 不是角色名：请用 system, user, assistant, tool" in out
    speak("en")
    nb05.check_predicted_roles(...)
    assert ('hint: write a list such as ["system", "user", ...]; it is still ...'
            in capsys.readouterr().out)


def test_the_loop_checks_in_chinese_and_in_english(speak, capsys):
    speak("zh")
    nb06.check_my_loop(42)
    nb06.check_predictions({})
    out = capsys.readouterr().out
    assert "动手实现 · 你的智能体循环：" in out
    assert "在上面的单元格里定义 my_loop(messages, registry, max_turns=5)，再运行这个检查" in out
    assert "预测：" in out and "❌ (a) 你好！：还没有回答" in out
    assert "提示：把 ... 换成一个整数（max_turns=4）" in out
    speak("en")
    nb06.check_predictions({"a": "one"})
    out = capsys.readouterr().out
    assert "❌ (a) Hello!: 'one' is not a whole number" in out
    assert "hint: write how many times the model is called, e.g. 2" in out


def test_a_loop_without_a_cap_is_reported_in_chinese(speak, capsys):
    from lesson_lib.llm import chat
    from lesson_lib.protocol import assistant_to_dict

    def no_cap(messages, registry, max_turns=5):
        turns = 0
        while True:  # no cap: a model that never stops answering with tools keeps it going
            message, turns = chat(messages, tools=registry.schemas()), turns + 1
            messages.append(assistant_to_dict(message))
            if not message.tool_calls:
                return message.content, turns
            messages.extend({"role": "tool", "tool_call_id": c.id,
                             "content": registry.execute(c.function.name, c.function.arguments)}
                            for c in message.tool_calls)

    speak("zh")
    assert nb06.check_my_loop(no_cap) is False
    out = capsys.readouterr().out
    assert "❌ 即使模型永远不停，它也会停" in out
    assert "模型每次都请求工具；my_loop 调用了 50 次模型，被检查叫停了：没有上限" in out


def test_the_scripted_model_speaks_both_languages(speak):
    reply = scripted.Script().calls(*scripted.weather_calls(2))
    speak("zh")
    assert str(reply) == "2 个工具调用"
    assert scripted.label(object()) == "object 对象"
    with pytest.raises(scripted.ScriptEnded, match="第 1 次模型调用：检查用的模型一共只准备了 0 条回复"):
        scripted.ScriptedClient(scripted.Script()).chat.completions.create(messages=[])
    speak("en")
    assert str(reply) == "2 tool calls"
    assert scripted.label(object()) == "object object"
    with pytest.raises(scripted.ScriptEnded,
                       match="model call 1: the check's model had only 0 replies to give"):
        scripted.ScriptedClient(scripted.Script()).chat.completions.create(messages=[])


def test_what_the_scripted_rules_say_about_a_call_left_out(speak):
    asked = str(scripted.Script().calls(*scripted.weather_calls(2)))
    left = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_1",
                                                 "content": "{}"}]
    speak("zh")
    with pytest.raises(AssertionError, match="带 tool_calls 的 assistant 消息不在里面（只有它的结果在）"):
        scripted.expect_call_before_results(left, asked, "chat() 之后", "记忆")
    speak("en")
    with pytest.raises(AssertionError) as caught:
        scripted.expect_call_before_results(left, asked, "after chat()", "the memory")
    assert str(caught.value) == (
        "the model asked for 2 tool calls; after chat() the memory holds [user 'hi', "
        "tool(call_1)]: the assistant message with the tool_calls is not in it (its results "
        "are there alone)")
