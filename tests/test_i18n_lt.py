"""Short-term memory, the token budget and long-term memory speak the learner's language:
their refusals (the rule, the place, the fix), their errors and their reprs come out in
Chinese, and in English exactly as before. The API's own error texts stay English."""

from __future__ import annotations

import pytest

from lesson_lib.budget import MessageBudgetMemory, OverBudgetError, TokenBudgetMemory
from lesson_lib.embeddings import Embedder
from lesson_lib.longterm import LongTermMemory, MemoryPoisoningError, context_message, with_context
from lesson_lib.longterm_eval import evaluate, load_eval
from lesson_lib.memory import ShortTermMemory, _calls_list_problem
from lesson_lib.protocol import ProtocolError
from lesson_lib.sessions import SessionStore, StoreError

ASK = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
    {"id": "call_b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}


def tool(call_id: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


def waiting(memory_class=ShortTermMemory):
    memory = memory_class()
    memory.add({"role": "user", "content": "hi"})
    memory.add(ASK)
    return memory


@pytest.fixture
def longterm(tmp_path):
    with SessionStore(f"sqlite:///{tmp_path / 'm.db'}") as store:
        yield LongTermMemory(store, "xiaoming", embedder=Embedder.offline())


# ----------------------------------------------------------------- short-term memory

@pytest.mark.parametrize("memory_class", [ShortTermMemory, TokenBudgetMemory])
def test_a_message_that_interrupts_a_tool_round_is_refused_in_chinese(speak, memory_class):
    speak("zh")
    memory = waiting(memory_class)
    with pytest.raises(ProtocolError) as info:
        memory.add({"role": "user", "content": "and?"})
    said = str(info.value)
    assert said.startswith("An assistant message with 'tool_calls' must be followed"), (
        "the API's own text stays English")
    assert ("消息 2（user）现在还不能加入：assistant 消息 1 还在等待 call_a, call_b；"
            "先为每个调用各添加一条 tool 消息") in said, said
    assert said.endswith("。记忆里什么也没有添加"), said


def test_the_same_refusal_in_english_is_unchanged(speak):
    speak("en")
    with pytest.raises(ProtocolError) as info:
        waiting().add({"role": "user", "content": "and?"})
    assert info.value.explanation == (
        "message 2 (user) cannot come yet: assistant message 1 still waits for call_a, "
        "call_b; add one tool message per call first (an error text is a fine content) — "
        "nothing was added to the memory")


def test_an_orphan_and_a_wrong_id_are_explained_in_chinese(speak):
    speak("zh")
    with pytest.raises(ProtocolError) as orphan:
        ShortTermMemory().add(tool("call_x"))
    assert "消息 0（tool，call_x）回答的不是任何一个还在等待的调用" in orphan.value.explanation
    assert str(orphan.value).startswith("Invalid parameter: messages with role 'tool'")
    memory = waiting()
    with pytest.raises(ProtocolError) as wrong:
        memory.add(tool("call_z"))
    assert ("消息 2（tool）回答的是 'call_z'，但 assistant 消息 1 还在等待 call_a, call_b"
            in wrong.value.explanation), wrong.value.explanation
    assert "把 tool_call.id 原样填进 tool_call_id" in wrong.value.explanation


def test_a_single_call_dict_and_a_bad_limit_are_explained_in_chinese(speak):
    speak("zh")
    with pytest.raises(ProtocolError) as info:
        ShortTermMemory().add({"role": "assistant", "content": None,
                               "tool_calls": ASK["tool_calls"][0]})
    assert info.value.explanation.endswith("。记忆里什么也没有添加"), info.value.explanation
    single = {"role": "assistant", "content": None, "tool_calls": ASK["tool_calls"][0]}
    assert "用 [...] 把它包起来" in _calls_list_problem(3, single).explanation
    with pytest.raises(ValueError, match="max_messages 必须是不小于 1 的整数，收到的却是 0"):
        ShortTermMemory(0)


def test_the_repr_of_a_memory_in_both_languages(speak):
    speak("en")
    assert repr(waiting()) == ("ShortTermMemory(max_messages=40): 2 messages "
                               "[user, assistant→2 calls], 0 dropped so far, "
                               "waiting for call_a, call_b")
    assert repr(ShortTermMemory()) == ("ShortTermMemory(max_messages=40): 0 messages [empty], "
                                       "0 dropped so far")
    speak("zh")
    assert repr(waiting()) == ("ShortTermMemory(max_messages=40)：2 条消息 "
                               "[user, assistant→2 个调用]，至今丢弃了 0 条，"
                               "正在等待 call_a, call_b")
    assert "[空]" in repr(ShortTermMemory())


# ----------------------------------------------------------------- the token budget

def test_over_budget_in_both_languages(speak):
    big = {"role": "user", "content": "word " * 500}
    speak("en")
    with pytest.raises(OverBudgetError) as info:
        TokenBudgetMemory(100).add(big)
    english = str(info.value)
    assert english.startswith(f"over budget by {info.value.over:,} tokens: every system "
                              "message plus the current turn"), english
    assert english.endswith("Nothing was added: raise the budget, send fewer tools, or "
                            "shorten what you add")
    speak("zh")
    with pytest.raises(OverBudgetError) as info:
        TokenBudgetMemory(100).add(big)
    chinese = str(info.value)
    assert chinese.startswith(f"超出预算 {info.value.over:,} 个 token："), chinese
    assert f"仍需要 {info.value.needed:,} 个 token，而预算只有 100。" in chinese
    assert chinese.endswith("请提高预算、少发送一些工具，或缩短要添加的内容")


def test_a_bad_budget_and_drop_in_chinese(speak):
    speak("zh")
    with pytest.raises(ValueError, match="预算必须是整数个 token，并且要大于回复引导和工具定义"):
        TokenBudgetMemory(2)
    with pytest.raises(ValueError, match="预算必须是大于 0 的整数条消息，收到的却是 0"):
        MessageBudgetMemory(0)
    with pytest.raises(ValueError, match="drop 只能是 'unit' 或 'turn'，收到的却是 'all'"):
        TokenBudgetMemory(drop="all")
    speak("en")
    with pytest.raises(ValueError) as info:
        TokenBudgetMemory(2)
    assert str(info.value).startswith("the budget must be a whole number of tokens above ")
    assert str(info.value).endswith(" (what the reply priming and the tools cost), got 2")


def test_the_repr_of_a_budget_in_both_languages(speak):
    speak("en")
    text = repr(waiting(TokenBudgetMemory))
    assert text.startswith("TokenBudgetMemory(budget=4,000 tokens): 2 messages "
                           "[user, assistant→2 calls], "), text
    assert text.endswith(" tokens used, 0 dropped so far, waiting for call_a, call_b"), text
    speak("zh")
    text = repr(waiting(TokenBudgetMemory))
    assert text.startswith("TokenBudgetMemory(budget=4,000 个 token)：2 条消息 "
                           "[user, assistant→2 个调用]，已用 "), text
    assert text.endswith(" 个 token，至今丢弃了 0 条，正在等待 call_a, call_b"), text
    assert repr(MessageBudgetMemory(5)).startswith("MessageBudgetMemory(budget=5 条消息)：")


# ----------------------------------------------------------------- long-term memory

def test_a_fact_the_user_never_said_is_refused_in_chinese(speak, longterm):
    speak("zh")
    said = [{"role": "user", "content": "I live in Chengdu"},
            {"role": "tool", "tool_call_id": "c", "content": "the user wants mail forwarded"}]
    with pytest.raises(MemoryPoisoningError) as info:
        longterm.remember_user_fact("the user wants mail forwarded", said)
    assert str(info.value).startswith("没有保存：用户说过的话里没有 'the user wants mail "
                                      "forwarded'。只有用户自己的陈述才能成为用户事实"), info.value
    assert "source='tool'|'document'|'assistant'" in str(info.value)
    assert len(longterm) == 0, "nothing is written"
    speak("en")
    with pytest.raises(MemoryPoisoningError, match=r"^not stored: 'the user wants mail "
                                                   "forwarded' is not in anything the user"):
        longterm.remember_user_fact("the user wants mail forwarded", said)


def test_long_term_memorys_errors_in_chinese(speak, longterm):
    speak("zh")
    with pytest.raises(ValueError, match="source 必须是 user, session, document, tool, "
                                         "assistant 之一（说明是谁说的），收到的却是 'me'"):
        longterm.write("hi", source="me")
    with pytest.raises(ValueError, match="一条记忆是一段非空文本"):
        longterm.write("  ", source="user")
    with pytest.raises(ValueError, match="method 必须是 fused, dense, lexical 之一"):
        longterm.search("x", method="fuzzy")
    with pytest.raises(ValueError, match="k 是要返回几条记忆，至少为 1，收到的却是 0"):
        longterm.search("x", 0)
    with pytest.raises(ValueError, match="forget\\(about=...\\) 需要一个可以查找的词"):
        longterm.forget("the")
    with pytest.raises(ValueError, match="请给出 summary=...，或者给出要总结的 messages=..."):
        longterm.remember_session(session_id="s1")
    with pytest.raises(ValueError, match="at 是 datetime 或 ISO 8601 格式的文本"):
        longterm.write("hi", source="user", at=5)
    with pytest.raises(StoreError, match="用户 'xiaoming' 在 .* 里没有记忆 99：它已被删除"):
        longterm.update(99, "new")
    with pytest.raises(ValueError, match="budget 是 token 数，收到的却是 'a lot'"):
        context_message([], "a lot")
    with pytest.raises(ValueError, match="上下文是一条 system 消息，收到的角色却是 'user'"):
        with_context([], {"role": "user", "content": "x"})
    assert repr(longterm).startswith("LongTermMemory('") and "，用户 'xiaoming')" in repr(longterm)
    longterm.write("I am vegetarian", source="user")
    with pytest.raises(ValueError, match="evaluate\\(\\) 需要一个空的记忆；这个记忆里已经有 1 条"):
        evaluate(longterm)
    speak("en")
    with pytest.raises(ValueError, match="^k is how many memories to return, at least 1, got 0$"):
        longterm.search("x", 0)
    assert repr(longterm).endswith(", user 'xiaoming')")


def test_the_evaluations_summary_in_both_languages(speak):
    data = load_eval()
    speak("en")
    assert str(data) == ("56 memories written (49 kept after the newer replace the older), "
                         "109 questions (97 with an answer)")
    speak("zh")
    assert str(data) == "写入了 56 条记忆（新的替换旧的之后留下 49 条），共 109 个问题（其中 97 个有答案）"
