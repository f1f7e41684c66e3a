"""The mistakes the checks used to let through (or blamed on another mistake) are caught in
both languages: each wrong version of the banks below is rejected, in English and in
Chinese, with what happened and the hint that names its own mistake. The English words of
each are tested where its bank lives; here both languages are read side by side, and the
hint after what happened (asking again) is read too."""

from __future__ import annotations

from collections import Counter

import pytest
from check_support import Twin
from test_core_track import CountsEveryAdd, NeverStopsWhenOnlySystemsAreLeft
from test_core_track_nb03 import keeps_none_for_a_refusal, the_sdk_dump
from test_core_track_nb05 import (
    BuildsTheCallWithoutItsText,
    ClearsAndApologisesWhenAToolFails,
    ForgetsItsClientTheSecondTime,
    SecondCallSendsToolChoice,
)
from test_core_track_nb06 import counts_rounds_not_calls, raises_at_the_cap
from test_core_track_nb07 import CutsWithoutSaying, DropsWholeTurns
from test_exercises_nb02 import forgets_the_reply
from test_exercises_nb03 import registry_with, results_for
from test_exercises_nb04 import drops_whole_turns, never_stops
from test_exercises_nb05 import replay_counts_first
from test_exercises_nb09 import RETRY_WRONG
from test_exercises_nb11 import believes_the_assistant, wraps_remember_user_fact
from test_exercises_nb12 import item_id_for_call

from lesson_lib import exercises
from lesson_lib.exercises import nb02, nb03, nb04, nb05, nb06, nb07, nb09, nb11, nb12


def _float_tool(celsius: float) -> str:
    """Use this when the user asks to convert Celsius to Fahrenheit."""
    return round(celsius * 9 / 5 + 32, 1)


_float_tool.__name__ = "convert_temperature"


def _units_only(celsius: float) -> str:
    """Converts Celsius to Fahrenheit."""
    return f'{{"fahrenheit": {round(celsius * 9 / 5 + 32, 1)}}}'


_units_only.__name__ = "convert_temperature"


def _with_the_call(message):
    return [nb03.assistant_to_dict(message), *results_for(message)]


def _appends(messages):
    earlier = messages[0]["content"] if messages[0]["role"] == "system" else "Summary:"
    return earlier + " " + " ".join(m["content"] for m in messages if m["role"] == "user")


# (check, answer, [English words], [Chinese words]): what the report must say in each
CASES = {
    "02 a trim that never stops": (
        nb02.check_my_memory, NeverStopsWhenOnlySystemsAreLeft,
        ["❌ when only system messages are left to drop, the trim stops",
         "your trim did not finish in 2 s on this history",
         "there is nothing the trim may drop"],
        ["❌ 只剩 system 消息可丢时，裁剪会停下", "你的裁剪在 2 秒内没有跑完，输入是这段历史",
         "裁剪已经没有可以丢的了"]),
    "02 a count kept apart from the list": (
        nb02.check_my_memory, CountsEveryAdd,
        ["message_count() says 6: the two must agree", "a count kept apart from the list"],
        ["message_count() 却说 6：两者必须一致", "在列表之外单独维护的计数"]),
    "02 a chat_turn that never stores the reply": (
        nb02.check_chat_turn, forgets_the_reply,
        ["❌ after each turn the memory ends with the model's reply"],
        ["❌ 每一轮之后，记忆的最后一条是模型的回复"]),
    "03 the SDK's dump": (
        nb03.check_assistant_to_dict, the_sdk_dump,
        ["❌ the dict holds role, content and tool_calls, nothing else",
         "message.model_dump() is every field"],
        ["❌ dict 只有 role、content 和 tool_calls，别的都没有",
         "message.model_dump() 包含这个版本的 SDK 知道的所有字段"]),
    "03 a refusal kept as None": (
        nb03.check_assistant_to_dict, keeps_none_for_a_refusal,
        ["❌ a refusal (content None, no calls) is stored with a string content",
         "a model that refuses sends content None"],
        ["❌ 一次拒绝（content 为 None，没有调用）存下时 content 是字符串",
         "拒绝回答的模型会发来 content 为 None"]),
    "03 a description without when": (
        nb03.check_my_tool, registry_with(_units_only),
        ["it names the units, but not when to use the tool"],
        ["它写了单位，却没写什么时候用这个工具"]),
    "03 a number for a JSON string": (
        nb03.check_my_tool, registry_with(_float_tool),
        ["❌ it returns a JSON string (got float 60.8)"],
        ["❌ 它返回 JSON 字符串（得到的是 float 60.8）"]),
    "03 results with the assistant message": (
        nb03.check_results_for, _with_the_call,
        ["return only the tool messages"], ["只返回 tool 消息"]),
    "04 a trim that never stops": (
        nb04.check_my_trim, never_stops,
        ["your trim did not finish in 2 s on this history"],
        ["你的裁剪在 2 秒内没有跑完，输入是这段历史"]),
    "04 whole turns dropped": (
        nb04.check_my_trim, drops_whole_turns,
        ["it dropped more than the budget needs", "drop one unit at a time"],
        ["丢掉的比预算需要的多", "一次丢一个单元"]),
    "05 tool_choice without tools": (
        nb05.check_my_agent_chat, SecondCallSendsToolChoice,
        ["❌ the second call sends no tool_choice either",
         "tool_choice says how to choose among the tools"],
        ["❌ 第二次调用也不发送 tool_choice", "tool_choice 说的是怎样在工具中选择"]),
    "05 a call that ignores the client": (
        nb05.check_my_agent_chat, ForgetsItsClientTheSecondTime,
        ["❌ every model call goes through the agent's own client",
         "the agent was given a client"],
        ["❌ 每次模型调用都经过智能体自己的客户端", "智能体拿到了一个客户端"]),
    "05 a crash that clears the memory": (
        nb05.check_my_agent_chat, ClearsAndApologisesWhenAToolFails,
        ["the earlier conversation is gone", "a tool that fails is no reason to forget"],
        ["之前的对话没了", "工具出错不是忘掉对话的理由"]),
    "05 the text beside the calls lost": (
        nb05.check_my_agent_chat, BuildsTheCallWithoutItsText,
        ["❌ text the model wrote beside its calls is stored with them",
         "a real model sometimes writes a sentence beside its calls"],
        ["❌ 模型写在调用旁边的文字和调用一起存下", "真实的模型有时会在调用旁边写一句话"]),
    "05 replay counting first": (
        nb05.check_replay, replay_counts_first,
        ["✅ the inputs went to the agent you were given"],
        ["✅ 输入都交给了传进来的那个智能体"]),
    "06 raising at the cap": (
        nb06.check_my_loop, raises_at_the_cap,
        ["at the cap (max_turns=3) my_loop raised RuntimeError",
         "reaching the cap is no failure of your code"],
        ["到了上限（max_turns=3）时 my_loop 抛出了 RuntimeError",
         "到达上限不是你的代码出错"]),
    "06 counting rounds": (
        nb06.check_my_loop, counts_rounds_not_calls,
        ["❌ turns counts the model calls, the answer's included",
         "turns is how many times the model was called"],
        ["❌ turns 数的是模型调用次数，带来回答的那次也算", "turns 是模型被调用的次数"]),
    "07 whole turns dropped": (
        nb07.check_my_budget_trim, DropsWholeTurns(),
        ["it dropped more than the budget needs"], ["丢掉的比预算需要的多"]),
    "07 a cut without its marker": (
        nb07.check_my_budget_trim, CutsWithoutSaying(),
        ["without saying so", "a result cut short must say so"],
        ["却没有说明", "截短的结果必须说明自己被截短了"]),
    "07 summaries that only grow": (
        nb07.check_my_summarizer, _appends,
        ["its summaries only grow", "a summary stands for the messages it replaces"],
        ["它的摘要只增不减", "摘要代表它所替换的消息"]),
    "09 linear back-off": (
        nb09.check_retries, RETRY_WRONG["linear back-off (base added, not doubled)"][0],
        ["it waits 0.5, 1, 2, then 4 s (each wait doubles)", "back-off doubles each wait"],
        ["它依次等待 0.5、1、2、4 秒（每次等待翻倍）", "退避每次把等待翻倍"]),
    "11 a wrapper of the library's gate": (
        nb11.check_save_fact, wraps_remember_user_fact,
        ["save_fact hands the decision to the library", "the library's gate"],
        ["save_fact 把判断交给了库", "库里的把关函数"]),
    "11 the assistant believed": (
        nb11.check_save_fact, believes_the_assistant,
        ["❌ what only the assistant said is refused too"],
        ["❌ 只有助手说过的话同样会被拒绝"]),
    "12 the item's own id": (
        nb12.check_items_to_messages, item_id_for_call,
        ["an item has two ids"], ["一个条目有两个 id"]),
    "a function with other parameters": (
        nb07.check_my_summarizer, lambda messages, name: "",
        ["cannot be called the way the check calls it, my_summarizer(messages)"],
        ["没法按检查的方式调用，检查是这样调用的：my_summarizer(messages)"]),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", list(CASES))
def test_each_mistake_is_named_in_both_languages(case, lang, speak, capsys, monkeypatch):
    check, answer, english, chinese = CASES[case]
    speak(lang)
    if isinstance(answer, Twin):  # an answer written with each edition's data
        answer = answer.make()
    monkeypatch.setattr(exercises, "_ASKED", Counter())
    assert check(answer) is False
    assert check(answer) is False  # asked again: the hint after what happened
    out = capsys.readouterr().out
    for words in english if lang == "en" else chinese:
        assert words in out, f"{case} ({lang}): {words!r} not in\n{out}"
