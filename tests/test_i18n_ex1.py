"""Notebooks 00–03's exercise checks speak the learner's language: in Chinese, the check's
title, its rules, hints and what-happened texts come from the catalogue; in English they are
the source text, unchanged."""

from __future__ import annotations

import copy

import pytest

from lesson_lib import i18n
from lesson_lib.exercises import nb00, nb01, nb02, nb03


def report(check, capsys, *args) -> tuple[bool, str]:
    passed = check(*args)
    return passed, capsys.readouterr().out


# ----------------------------------------------------------------- notebook 00

BOT_HISTORY = [{"role": "user", "content": "我叫小明。"},
               {"role": "assistant", "content": "你好！"}]


def test_nb00_a_first_history_in_chinese(speak, capsys):
    speak("zh")
    passed, out = report(nb00.check_first_history, capsys, BOT_HISTORY)
    assert passed is False
    assert out.startswith("练习 1 · 第一段历史：")
    assert "✅ 一个包含两条消息的列表" in out
    assert "✅ 用户说出了自己的名字（小明）" in out
    assert "❌ 助手用这个名字跟用户打招呼" in out
    assert "提示：用户已经把名字告诉了助手：回复里应该用上它（小明）" in out


def test_nb00_the_same_history_in_english_is_unchanged(speak, capsys):
    speak("en")
    _, out = report(nb00.check_first_history, capsys, BOT_HISTORY)
    assert out.startswith("Exercise 1 · a first history:")
    assert "✅ the user says their name (小明)" in out
    assert "hint: the user told the assistant their name: the reply should use it (小明)" in out


def test_nb00_a_reply_that_is_only_text(speak, capsys):
    speak("zh")
    _, out = report(nb00.check_chinese_reply, capsys, "你好")
    assert "练习 2 · 用中文回答：" in out
    assert "❌ 整条消息，而不只是它的文字" in out
    assert "传入 chat() 返回的东西（reply），而不是 reply.content" in out


# ----------------------------------------------------------------- notebook 01

def test_nb01_true_or_false_explains_in_chinese(speak, capsys):
    speak("zh")
    wrong = {key: truth for key, (_, truth, _) in nb01.STATEMENTS.items()}
    wrong["A"], wrong["F"] = True, "maybe"
    passed, out = report(nb01.check_answers, capsys, wrong)
    assert passed is False
    assert out.startswith("练习 2 · 对还是错？：")
    assert "❌ A：模型会在两次调用之间保存对话。 → True" in out
    assert "提示：两次调用之间什么也不会保留" in out
    assert "❌ F：请回答 True 或 False" in out


def test_nb01_true_or_false_in_english_is_the_source_text(speak, capsys):
    speak("en")
    _, out = report(nb01.check_answers, capsys, {"A": True})
    assert "❌ A: The model stores the conversation between calls. → True" in out
    assert f"hint: {nb01.STATEMENTS['A'][2]}" in out
    assert "❌ B: not answered yet" in out


def test_nb01_a_list_that_is_not_messages(speak, capsys):
    speak("zh")
    _, out = report(nb01.check_my_messages, capsys, lambda turns, question: "hello")
    assert "❌ 英文：my_messages 返回一个由消息 dict 组成的列表" in out
    assert "它返回的是 'hello'：要返回一个像 [{'role': 'user'," in out


# ----------------------------------------------------------------- notebook 02

class ListNotCopied:
    """A memory whose to_api_format() hands out its own list (rule 2 fails)."""

    def __init__(self, max_messages=40):
        self.max_messages = max_messages
        self._messages = []

    def add(self, message):
        self._messages.append(copy.deepcopy(message))
        self._trim()

    def _trim(self):
        while len(self._messages) > self.max_messages:
            oldest = next((i for i, m in enumerate(self._messages) if m["role"] != "system"),
                          None)
            if oldest is None:
                break
            del self._messages[oldest]

    def to_api_format(self):
        return self._messages

    def clear_non_system(self):
        self._messages = [m for m in self._messages if m["role"] == "system"]

    def message_count(self):
        return len(self._messages)


def test_nb02_a_rule_its_hint_and_what_happened_in_chinese(speak, capsys):
    speak("zh")
    passed, out = report(nb02.check_my_memory, capsys, ListNotCopied)
    assert passed is False
    assert out.startswith("动手实现 · 你的 ShortTermMemory：")
    assert "❌ to_api_format() 返回一个新列表，往里面追加不会影响记忆" in out
    assert ("提示：发生了什么：memory.to_api_format().append(...) 改动了记忆："
            "它现在存着 [system 1, user 2, user 99]") in out


def test_nb02_the_same_rule_in_english_is_unchanged(speak, capsys):
    speak("en")
    _, out = report(nb02.check_my_memory, capsys, ListNotCopied)
    assert "❌ to_api_format() returns a new list, so appending to it leaves the memory alone" in out
    assert ("hint: what happened: memory.to_api_format().append(...) changed the memory: "
            "it now holds [system 1, user 2, user 99]") in out


class CopiesOneLevelOut(ListNotCopied):
    """to_api_format() copies each message one level: a tool call inside is still shared."""

    def to_api_format(self):
        return [dict(m) for m in self._messages]


def test_nb02_a_one_level_copy_is_told_what_it_shares_in_chinese(speak, capsys, monkeypatch):
    from collections import Counter

    from lesson_lib import exercises

    monkeypatch.setattr(exercises, "_ASKED", Counter())
    speak("zh")
    _, out = report(nb02.check_my_memory, capsys, CopiesOneLevelOut)
    assert "❌ 副本要一直复制到最里层：改动消息里的工具调用不会影响记忆" in out, out
    assert ("提示：发生了什么：memory.to_api_format()[2]['tool_calls'][0]['function']"
            "['arguments'] = '{}' 把记忆里的消息也改了") in out, out
    _, out = report(nb02.check_my_memory, capsys, CopiesOneLevelOut)
    assert ("由 dict 组成的列表，复制之后仍然和原列表共用每个 dict 里面的东西："
            "[dict(m) for m in ...]") in out, out
    speak("en")
    _, out = report(nb02.check_my_memory, capsys, CopiesOneLevelOut)
    assert "❌ the copies go all the way down: editing a tool call inside a message" in out, out
    assert "hint: what happened: memory.to_api_format()[2]['tool_calls']" in out, out


def test_nb02_an_untouched_skeleton_names_its_methods_in_chinese(speak, capsys):
    class Skeleton:
        def __init__(self, max_messages=40):
            self._messages = []

        def add(self, message):
            raise NotImplementedError

        def _trim(self):
            raise NotImplementedError

        def to_api_format(self):
            raise NotImplementedError

        def clear_non_system(self):
            raise NotImplementedError

        def message_count(self):
            raise NotImplementedError

    speak("zh")
    _, out = report(nb02.check_my_memory, capsys, Skeleton)
    assert "写出 add(), _trim(), to_api_format(), clear_non_system() 和 message_count()" in out
    assert "NotImplementedError；写好后再运行一次这个检查" in out


def test_nb02_predictions_and_counts_in_chinese(speak, capsys):
    speak("zh")
    _, out = report(nb02.check_prediction, capsys, 6, 0)
    assert out.startswith("预测 message_count()：")
    assert "❌ 预测 1（系统提示词 + 五条消息）：你预测的是 6" in out
    assert "提示：clear_non_system() 会保留系统消息" in out
    _, out = report(nb02.check_count_user_turns, capsys, lambda memory: 0)
    assert "❌ 系统消息 + 3 个普通轮次：应该是 3，实际是 0" in out


@pytest.mark.parametrize("rules", [nb02.MEMORY_RULES, nb03.ASSISTANT_RULES],
                         ids=["nb02", "nb03"])
def test_every_rule_and_hint_has_its_chinese(speak, rules):
    speak("zh")
    for rule in rules:
        assert i18n._(rule.name) != rule.name, rule.name
        for step in rule.hints:
            assert i18n._(step) != step, step


# ----------------------------------------------------------------- notebook 03

def test_nb03_the_sdk_object_itself_in_chinese(speak, capsys):
    speak("zh")
    passed, out = report(nb03.check_assistant_to_dict, capsys, lambda message: message)
    assert passed is False
    assert out.startswith("动手实现 · 你的 assistant_to_dict：")
    assert "❌ 它返回一个新的 dict，而不是 SDK 的消息对象" in out
    assert "提示：发生了什么：对于一条文字回复，它返回的是SDK 的消息对象本身，而不是 dict" in out
    assert "条规则会接着检查" in out


def test_nb03_the_sdk_object_itself_in_english(speak, capsys):
    speak("en")
    _, out = report(nb03.check_assistant_to_dict, capsys, lambda message: message)
    assert "❌ it returns a new dict, not the SDK's message object" in out
    assert ("hint: what happened: for a text reply it returned the SDK's message object "
            "itself, not a dict") in out


def test_nb03_repair_and_results_in_chinese(speak, capsys):
    speak("zh")
    _, out = report(nb03.check_repair, capsys, lambda messages: messages[:2])
    assert out.startswith("练习 2 · 修复出错的历史记录：")
    assert "情形 1（上海呢？ 夹在一个调用和它的结果之间）" in out
    _, out = report(nb03.check_results_for, capsys, lambda message: [])
    assert out.startswith("练习 1 · 回应每一个调用：")
    assert "❌ 2 个调用：每个调用一条 tool 消息（2 个调用，0 条消息）" in out
    assert "提示：遍历 message.tool_calls" in out
