"""The checks of notebooks 07 to 10 speak the learner's language: in Chinese, the titles,
rules, findings and hints come from the catalogue (lesson_lib/locale/zh_CN/exercises.nb07.po
… nb10.po); in English, they are the source text, unchanged."""

from __future__ import annotations

from lesson_lib import i18n
from lesson_lib.exercises import nb07, nb08, nb09, nb10
from lesson_lib.exercises.contract import failed_rules


def _keeps_everything(messages, budget):
    return list(messages)  # never trims: over the budget


def _out(capsys) -> str:
    return capsys.readouterr().out


# ----------------------------------------------------------------- nb07

def test_nb07_a_trim_that_never_trims_in_chinese_and_in_english(speak, capsys):
    speak("zh")
    assert nb07.check_my_budget_trim(_keeps_everything) is False
    out = _out(capsys)
    assert out.startswith("动手实现 · 你自己的 token 预算裁剪：")
    assert "❌ 用 count_messages() 计数，它不超出预算" in out  # the rule's name
    assert "提示：发生了什么：" in out and "个 token，预算" in out  # what happened, translated
    assert "还没完成：看 ❌ 的那几行。" in out
    assert "it fits the budget" not in out
    speak("en")
    assert nb07.check_my_budget_trim(_keeps_everything) is False
    out = _out(capsys)
    assert out.startswith("Build it · your token-budget trim:")
    assert "❌ it fits the budget, counted with count_messages()" in out
    assert "tokens, budget" in out and "用 count_messages()" not in out
    # the rules keep their English names: tests and `needs` refer to them
    assert nb07._FITS in failed_rules(_keeps_everything, nb07.TRIM_RULES)


def test_nb07_an_unwritten_trim_and_a_summarizer_that_returns_nothing(speak, capsys):
    speak("zh")
    assert nb07.check_my_budget_trim("not a function") is False
    out = _out(capsys)
    assert "❌ 还没有完成" in out and "传入函数本身（不加括号）" in out
    assert nb07.check_my_summarizer(lambda messages: "") is False
    out = _out(capsys)
    assert out.startswith("练习 1 · my_summarizer：")
    assert "它返回文本（给它最早的几轮，它返回了 ''）" in out
    assert "把摘要作为一个字符串返回" in out
    speak("en")
    assert nb07.check_my_summarizer(lambda messages: "") is False
    out = _out(capsys)
    assert "❌ it returns text (given the first turns, it returned '')" in out
    assert "hint: return the summary as one string" in out


def test_nb07_the_property_finding_reads_in_chinese_beside_the_apis_own_words(speak):
    speak("zh")
    seen = nb07._any_history(lambda m, b: [], ([{"role": "user", "content": "Question 1?"}], 50))
    assert seen.startswith("预算 50，历史 [user")
    assert "它返回了 []：API 会拒绝它：Invalid 'messages': empty array." in seen


# ----------------------------------------------------------------- nb08

def test_nb08_wrong_answers_in_chinese_and_in_english(speak, capsys):
    speak("zh")
    assert nb08.check_forget("five cities") is False
    out = _out(capsys)
    assert out.startswith("忘掉名字：")
    assert "my_messages 是一个 dict：策略名 → 消息列表" in out and "现在得到的是 str" in out
    assert nb08.check_forget({"ShortTermMemory": ["/clear"]}) is False
    out = _out(capsys)
    assert "ShortTermMemory：不能用命令" in out and "/clear 会一下子忘掉所有内容" in out
    assert "TokenBudgetMemory：还没有作答" in out
    assert nb08.check_breaking_point(42) is False
    out = _out(capsys)
    assert out.startswith("断点：") and "my_stepper 是一个步进器" in out
    speak("en")
    assert nb08.check_forget({"ShortTermMemory": ["/clear"]}) is False
    out = _out(capsys)
    assert "❌ ShortTermMemory: no commands" in out
    assert "hint: /clear forgets everything at once: make the memory's trim do it" in out


def test_nb08_the_hints_of_the_strategies_are_translated_where_they_are_shown(speak):
    speak("zh")
    assert i18n._(nb08.FORGET_HINTS["ShortTermMemory"]).startswith("max_messages 数的是消息条数")
    assert nb08.FORGET_HINTS["ShortTermMemory"].startswith("max_messages counts messages")


# ----------------------------------------------------------------- nb09

def _no_retry(fn, attempts=4, base=0.5, sleep=None):
    return fn()


def _unchanged(tool):
    import copy  # noqa: PLC0415

    return copy.deepcopy(tool)


def test_nb09_checks_in_chinese(speak, capsys):
    speak("zh")
    assert nb09.check_retries(_no_retry) is False
    out = _out(capsys)
    assert out.startswith("练习 3 · 带退避的重试：")
    assert "❌ 先 429，再 500，然后回答：第三次调用时得到回答" in out
    assert "调用 1 次后得到 None，而且 RateLimitError 漏了出来" in out
    assert nb09.check_make_strict(_unchanged) is False
    out = _out(capsys)
    assert out.startswith("练习 1 · 把工具变严格：")
    assert "✅ get_current_weather：传给你的工具没有被改动" in out
    assert "❌ get_current_weather：function 上设置了 `\"strict\": True`" in out
    assert nb09.check_assemble(lambda chunks: "text") is False
    out = _out(capsys)
    assert "❌ 文字回复：assemble 返回一个 dict（收到的是 str）" in out
    assert nb09.check_assemble(None) is False
    assert "在上面的单元格里写好 assemble(chunks)" in _out(capsys)


def test_nb09_checks_in_english_are_unchanged(speak, capsys):
    speak("en")
    assert nb09.check_retries(_no_retry) is False
    out = _out(capsys)
    assert out.startswith("Exercise 3 · retry with back-off:")
    assert "got None after 1 call(s), and RateLimitError escaped: 429 and 5xx pass" in out
    assert nb09.check_assemble(lambda chunks: "text") is False
    assert "❌ a reply in words: assemble returns a dict (got str)" in _out(capsys)


# ----------------------------------------------------------------- nb10

def test_nb10_checks_in_chinese_and_in_english(speak, capsys):
    speak("zh")
    assert nb10.check_forget_user(lambda store, user_id: 0) is False
    out = _out(capsys)
    assert out.startswith("练习 2 · forget_user：")
    assert "❌ 它按层返回删掉了什么" in out and "提示：forget_user 返回了 0" in out
    assert "❌ 会话日志：文件里不再有小明的任何会话" in out and "小明的 3 个会话里还有 3 个" in out
    assert "✅ 老张的会话、用户资料和记忆都没被动过" in out
    assert nb10.check_open_chat(lambda store, user_id, title: None) is False
    out = _out(capsys)
    assert "❌ open_chat 返回一个 StoredMemory，也就是 Agent 使用的记忆" in out
    assert "open_chat(store, 'xiaoming', 'trip') 返回的是 NoneType" in out
    assert nb10.check_open_chat(...) is False
    assert "写好 open_chat，再运行一次这个单元格" in _out(capsys)
    speak("en")
    assert nb10.check_forget_user(lambda store, user_id: 0) is False
    out = _out(capsys)
    assert "❌ it returns what went, per layer" in out and "hint: forget_user returned 0" in out
    assert "3 of Xiaoming's 3 sessions are still in the file" in out and "小明" not in out
