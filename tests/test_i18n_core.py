"""The explanations of API errors (lesson_lib.notices, lesson_lib.protocol), the trim checker
(lesson_lib.trimcheck) and the checks of notebooks 11 and 12 speak the learner's language;
the API's own error texts stay verbatim English in both, and English is unchanged."""

from __future__ import annotations

import httpx
import openai
import pytest

from lesson_lib.budget import OverBudgetError
from lesson_lib.exercises import nb11, nb12
from lesson_lib.notices import describe_error
from lesson_lib.protocol import ProtocolError, find_problems, validate_request
from lesson_lib.trimcheck import check_trim, naive_trim, trim_case

ORPHAN = [{"role": "user", "content": "hi"},
          {"role": "tool", "tool_call_id": "call_1", "content": "{}"}]
ORPHAN_TEXT = ("Invalid parameter: messages with role 'tool' must be a response to a "
               "preceeding message with 'tool_calls'.")
UNANSWERED = [{"role": "user", "content": "Weather?"},
              {"role": "assistant", "content": None, "tool_calls": [
                  {"id": "call_a", "type": "function",
                   "function": {"name": "get_current_weather", "arguments": "{}"}}]},
              {"role": "user", "content": "Well?"}]


# ----------------------------------------------------------------- protocol

def test_a_protocol_error_explains_in_chinese_and_quotes_the_api_verbatim(speak):
    speak("zh")
    problem = find_problems(ORPHAN)[0]
    assert problem.message == ORPHAN_TEXT
    assert problem.explanation == ("消息 1（tool，call_1）前面紧挨着的不是带 tool_calls 的 assistant "
                                   "消息：裁剪或移动时要整组处理，不能只动其中一条")
    assert problem.body()["error"]["message"] == ORPHAN_TEXT  # what the offline model sends
    assert str(problem).startswith(ORPHAN_TEXT + "\n  → 消息 1")


def test_a_protocol_error_in_english_is_unchanged(speak):
    speak("en")
    problem = find_problems(ORPHAN)[0]
    assert problem.explanation == ("message 1 (tool, call_1) has no assistant tool_calls right "
                                   "before it: trim or move the whole group, never one message "
                                   "of it")
    missing = find_problems(UNANSWERED)[0]
    assert missing.explanation.startswith("assistant message 1 asked for 1 tool call; call_a "
                                          "got no tool reply right after it")


def test_the_plural_explanation_and_a_request_error_in_chinese(speak):
    speak("zh")
    missing = find_problems(UNANSWERED)[0]
    assert missing.message.startswith("An assistant message with 'tool_calls' must be followed")
    assert missing.explanation.startswith("assistant 消息 1 发起了 1 个工具调用；call_a 后面")
    with pytest.raises(ProtocolError) as caught:
        validate_request({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                          "tools": []})
    assert caught.value.message.startswith("Invalid 'tools': empty array.")
    assert caught.value.explanation == "没有工具时发送 tools=None（不写这个键）"
    schema = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}
    with pytest.raises(ProtocolError) as caught:
        validate_request(schema)
    assert "（没有属性就用 {}）" in caught.value.explanation  # the literal braces survive


# ----------------------------------------------------------------- notices

def test_a_budget_notice_in_chinese(speak):
    speak("zh")
    title, detail = describe_error(OverBudgetError(812, 600), [],
                                   [{"role": "user", "content": "hi"}])
    assert title == "记忆拒绝了你的消息：超出了 600 个 token 的预算"
    assert detail.startswith("OverBudgetError：超出预算 212 个 token。")
    assert detail.endswith("→ 把预算调到 812 个 token 以上，并给回答留出空间；或者把你的消息写短一些；"
                           "取消勾选某个工具也能腾出空间。")


def test_a_protocol_notice_keeps_the_api_text_and_explains_in_chinese(speak):
    speak("zh")
    title, detail = describe_error(find_problems(ORPHAN)[0], ORPHAN,
                                   [{"role": "tool", "tool_call_id": "call_1", "content": "{}"}])
    assert title == "记忆拒绝了一条工具结果"
    assert detail.startswith(ORPHAN_TEXT + "\n→ 消息 1（tool，call_1）")


def test_an_api_error_notice_in_chinese(speak):
    request = httpx.Request("POST", "https://api.example/v1/chat/completions")
    body = {"message": "Rate limit reached for gpt-4o-mini", "type": "requests",
            "code": "rate_limit_exceeded"}
    error = openai.RateLimitError("Rate limit reached", response=httpx.Response(
        429, request=request), body=body)
    speak("zh")
    title, detail = describe_error(error, [])
    assert title == "API 返回了 429（rate_limit_exceeded）"
    assert detail == ("Rate limit reached for gpt-4o-mini\n"
                      "→ 触发了速率限制：稍等片刻再发送；你的消息已在记忆里。")
    title, detail = describe_error(openai.APIConnectionError(request=request), [])
    assert (title, detail.splitlines()[0]) == ("连不上模型", "无法连接到 api.example。")
    speak("en")
    assert describe_error(error, [])[0] == "The API answered 429 (rate_limit_exceeded)"
    assert describe_error(OverBudgetError(812, 600), [], [{"role": "user", "content": "hi"}])[0] \
        == "The memory refused your message: over its budget of 600 tokens"


# ----------------------------------------------------------------- trimcheck

def test_check_trim_reports_in_chinese(speak, capsys):
    speak("zh")
    assert check_trim(naive_trim, "messages", detail=True) is False
    out = capsys.readouterr().out
    assert out.startswith("check_trim(naive_trim, 'messages')：得分 ")
    assert "❌ 裁剪点落在并行工具调用组上（9 条消息，预算 6）：API 会拒绝它：消息 1" in out
    assert "条消息，预算 " in out
    assert "这个用例防的是：删掉 assistant 消息时只删了紧跟其后的一条 tool 消息" in out
    assert "API 会拒绝它：消息 " in out and ORPHAN_TEXT in out  # the API's text, verbatim
    assert "  还没完成：看 ❌ 的那几行。" in out
    assert trim_case("parallel group at the cut").name == "parallel group at the cut"  # a key
    assert trim_case("裁剪点落在并行工具调用组上").name == "parallel group at the cut", \
        "the name the Chinese report shows finds its case too"
    with pytest.raises(KeyError, match="没有叫 '不存在' 的裁剪用例；用例有：'无需裁剪'"):
        trim_case("不存在")


def test_check_trim_in_english_is_unchanged(speak, capsys):
    speak("en")
    check_trim(naive_trim, "messages", detail=True)
    out = capsys.readouterr().out
    assert out.startswith("check_trim(naive_trim, 'messages'): score ")
    assert ("❌ parallel group at the cut (9 messages, budget 6): the API would refuse it: "
            f"message 1 (tool, call_bj5): {ORPHAN_TEXT}") in out
    assert ("hint: message 1 (tool, call_bj5) has no assistant tool_calls right before it: "
            "trim or move the whole group, never one message of it. This case protects "
            "against dropping an assistant message and only") in out


# ----------------------------------------------------------------- notebooks 11 and 12

def test_check_my_recall_in_chinese(speak, capsys):
    speak("zh")
    assert nb11.check_my_recall(lambda question, memory, budget: "just text") is False
    out = capsys.readouterr().out
    assert out.startswith("动手实现 · my_recall：")
    assert "❌ 它返回一条 system 消息：{'role': 'system', 'content': text}" in out
    assert "提示：发生了什么：my_recall('我去成都的高铁几点开？', memory, 1000) " \
           "返回了 str，不是消息 dict" in out
    assert "（再运行一次检查，可以看到下一步提示）" in out
    nb11.check_my_recall(lambda question, memory, budget: "just text")  # asking again
    assert "请求接收的是消息：返回一个带 role 和 content 的 dict" in capsys.readouterr().out
    assert nb11.check_my_recall(42) is False
    assert "在上面定义 my_recall(question, memory, budget)" in capsys.readouterr().out


def test_check_save_fact_in_chinese_and_english(speak, capsys):
    def careless(memory, text, messages, subject=None):  # writes whatever it is told
        memory.write(text, source="user")
        return True

    speak("zh")
    assert nb11.check_save_fact(careless) is False
    out = capsys.readouterr().out
    assert out.startswith("练习 1 · save_fact：")
    assert "❌ 只有工具结果说过的内容会被拒绝：什么也不写入，返回 False" in out
    speak("en")
    nb11.check_save_fact(careless)
    out = capsys.readouterr().out
    assert out.startswith("Exercise 1 · save_fact:")
    assert "❌ what only a tool result said is refused: nothing written, it returns False" in out


def test_check_items_to_messages_in_chinese(speak, capsys):
    speak("zh")
    assert nb12.check_items_to_messages(lambda items, instructions=None: None) is False
    out = capsys.readouterr().out
    assert out.startswith("练习 1 · items_to_messages：")
    assert "❌ 它返回由消息 dict 组成的列表" in out
    assert "提示：发生了什么：items_to_messages(...) 返回了 NoneType" in out
    assert "还有 " in out  # the rules that build on it wait
    speak("en")
    nb12.check_items_to_messages(lambda items, instructions=None: None)
    out = capsys.readouterr().out
    assert "❌ it returns a list of message dicts" in out
    assert "hint: what happened: items_to_messages(...) returned NoneType" in out
