"""lesson_lib.costs: the scripted conversation, the meter, running memories through it, the
table and the plots."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest

from lesson_lib.budget import TokenBudgetMemory, model_summarizer
from lesson_lib.costs import (
    SCRIPT,
    SMALL_WINDOW,
    TOKEN_BUDGET,
    ConversationRun,
    CostPlot,
    FunctionTrimMemory,
    Meter,
    TurnCost,
    cost_table,
    get_travel_guide,
    lesson_tools,
    plot_costs,
    run_conversation,
    run_turn,
)
from lesson_lib.memory import ShortTermMemory
from lesson_lib.offline import offline_client
from lesson_lib.protocol import validate_messages
from lesson_lib.tokens import count_request, count_text, count_tools

SHORT = ["Hi! My name is Xiaoming.", "What's the weather in Chengdu?",
         "Which is warmer, Beijing or Shanghai?", "Find me a travel guide for Chengdu.",
         "Thanks!", "What's my name?"]


@pytest.fixture(scope="module")
def model():
    return offline_client()


def test_script_has_fifty_turns_with_the_name_first_and_the_question_last():
    assert len(SCRIPT) == 50, f"expected 50 turns, got {len(SCRIPT)}"
    assert SCRIPT[0] == "Hi! My name is Xiaoming." and SCRIPT[-1] == "What's my name?"
    assert sum("travel guide" in q for q in SCRIPT) == 1, "exactly one huge tool result"
    assert TOKEN_BUDGET < SMALL_WINDOW, "the budget must leave room in the window for the reply"


def test_travel_guide_is_json_far_bigger_than_an_ordinary_turn():
    guide = get_travel_guide("Chengdu")
    data = json.loads(guide)
    assert data["city"] == "Chengdu" and data["days"] == 35
    assert count_text(guide) > 1000, f"expected a huge result, got {count_text(guide)} tokens"
    assert lesson_tools().names() == ["get_current_weather", "get_current_time",
                                      "get_travel_guide"]


def test_the_chinese_script_is_the_same_fifty_turns_in_chinese(speak, model):
    """The Chinese edition's script, turn for turn: the name first, the guide at 25, the
    question last; the guide is a Chinese page of about the English one's size in tokens;
    and the offline model does with each Chinese turn what it does with the English one
    (the same tools, called as often), answering in Chinese."""
    from lesson_lib import costs
    from lesson_lib.costs import SCRIPT_EN, SCRIPT_ZH

    speak("en")
    english = count_text(get_travel_guide("Chengdu"))
    speak("zh")
    assert costs.SCRIPT is SCRIPT_ZH and len(SCRIPT_ZH) == len(SCRIPT_EN) == 50
    assert SCRIPT_ZH[0] == "你好！我叫小明。" and SCRIPT_ZH[-1] == "我叫什么名字？"
    assert SCRIPT_ZH[24] == "帮我找一份成都旅游攻略。"
    guide = get_travel_guide("成都")
    assert "春熙路" in guide and "\\u" not in guide  # Chinese, not escaped
    assert abs(count_text(guide) - english) < 150
    zh = run_conversation(ShortTermMemory(max_messages=100_000), meter=Meter(model))
    speak("en")
    en = run_conversation(ShortTermMemory(max_messages=100_000), meter=Meter(model))
    assert zh.error is None and en.error is None

    def calls(run):  # per turn, the tools called after its question, in order
        found = []
        for t in run.turns:
            sent = t.requests[-1].messages
            asked = max(i for i, m in enumerate(sent) if m["role"] == "user")
            found.append([c["function"]["name"] for m in sent[asked:]
                          for c in m.get("tool_calls") or []])
        return found

    assert calls(zh) == calls(en)
    assert [len(t.requests) for t in zh.turns] == [len(t.requests) for t in en.turns]
    assert zh.turns[-1].reply == "你刚才说你叫小明。"
    assert zh.turns[40].reply.startswith("旧金山现在是 ")  # the city asked, not its zone's
    assert zh.turns[18].reply.startswith("你好小明")  # 又见面了！ is a greeting


def test_meter_records_the_prompt_tokens_the_model_reports(model):
    meter = Meter(model)
    messages = [{"role": "user", "content": "What's the weather in Chengdu?"}]
    tools = lesson_tools().schemas()
    meter.complete(messages, tools)
    [request] = meter.requests
    assert request.tokens == count_request(messages, tools), (
        f"expected usage.prompt_tokens == count_request(), got {request.tokens}")
    assert request.kind == "turn" and request.messages == messages


def test_meter_sends_the_same_bytes_as_a_plain_create():
    """Meter hands the SDK the messages in extra_body, to skip its walk of every message
    through its types: the request that goes out must be byte for byte the one create()
    with messages= sends, and the answer the same."""
    from lesson_lib.llm import complete
    from lesson_lib.offline.transport import OfflineTransport

    sent = []

    class Recording(OfflineTransport):
        def handle_request(self, request):
            sent.append((request.url.path, request.read()))
            return super().handle_request(request)

    import openai

    from lesson_lib.offline import BASE_URL, OFFLINE_API_KEY
    client = openai.OpenAI(api_key=OFFLINE_API_KEY, base_url=BASE_URL, max_retries=0,
                           http_client=openai.DefaultHttpxClient(transport=Recording()))
    tools = lesson_tools().schemas()
    first = complete([{"role": "user", "content": "Weather in Chengdu and Beijing?"}], tools,
                     client=client)
    messages = [{"role": "user", "content": "Weather in Chengdu and Beijing?"},
                first.choices[0].message.model_dump(exclude_none=True),
                *[{"role": "tool", "tool_call_id": c.id, "content": "多云 16°C"}
                  for c in first.choices[0].message.tool_calls],
                {"role": "user", "content": "谢谢！ And the time?", "name": "learner"}]
    plain = complete(messages, tools, client=client)
    metered = Meter(client).complete(messages, tools)
    assert sent[-1] == sent[-2], ("Meter's request differs from create(messages=...)'s:\n"
                                  f"{sent[-2][1][:300]!r}\n{sent[-1][1][:300]!r}")
    assert json.loads(sent[-1][1])["messages"] == messages
    assert metered.choices[0].message == plain.choices[0].message


def test_meter_counts_itself_when_the_reply_has_no_usage():
    message = SimpleNamespace(content="hi", tool_calls=None)
    reply = SimpleNamespace(usage=None, choices=[SimpleNamespace(message=message)])
    fake = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(
        create=lambda **kw: reply)))
    meter = Meter(fake)
    messages = [{"role": "user", "content": "hello"}]
    assert meter.chat(messages) is message
    assert meter.requests[0].tokens == count_request(messages)
    assert meter.requests[0].kind == "summary"


def test_run_turn_meters_each_request_and_leaves_a_valid_memory(model):
    memory = ShortTermMemory(100)
    meter = Meter(model)
    turn = run_turn(memory, "Which is warmer, Beijing or Shanghai?", lesson_tools(), meter, 3)
    assert isinstance(turn, TurnCost) and turn.turn == 3
    assert len(turn.requests) == 2, "one request asks for the tools, one answers"
    assert turn.sent == sum(r.tokens for r in turn.requests)
    assert turn.largest is turn.requests[1], "the answer's request carries the results"
    assert turn.reply == "Shanghai is warmer: 22°C, against 18°C in Beijing."
    assert turn.held == memory.message_count() == 5
    validate_messages(memory.to_api_format())


def test_run_conversation_adds_the_system_prompt_and_runs_every_turn(model):
    run = run_conversation(ShortTermMemory(100), SHORT, name="full", meter=Meter(model))
    assert isinstance(run, ConversationRun) and run.error is None
    assert [t.turn for t in run.turns] == [1, 2, 3, 4, 5, 6]
    assert run.memory.to_api_format()[0]["role"] == "system"
    assert run.turns[-1].reply == "You told me your name is Xiaoming."
    totals = run.cumulative()
    assert totals == sorted(totals) and totals[-1] == sum(t.sent for t in run.turns)
    assert run.first_over(10**6) is None
    guide_turn = run.first_over(1000)
    assert guide_turn is not None and guide_turn.turn == 4, "the guide pushes it over"


def test_a_trim_that_breaks_the_list_stops_the_run_with_the_apis_error(model):
    def drop_oldest(messages, budget):  # the naive trim: leaves orphan tool results
        trimmed = list(messages)
        while len(trimmed) > 4:
            del trimmed[1]
        return trimmed

    run = run_conversation(FunctionTrimMemory(drop_oldest, 10_000), SHORT, meter=Meter(model))
    assert run.error is not None and "BadRequestError" in run.error, run.error
    assert "must be a response to a preceeding message" in run.error
    assert len(run.turns) < len(SHORT)


def test_function_trim_memory_gives_the_trim_the_budget_minus_the_tools():
    seen = []

    def keep_all(messages, budget):
        seen.append(budget)
        return messages

    tools = lesson_tools().schemas()
    memory = FunctionTrimMemory(keep_all, 1000, tools=tools)
    memory.add({"role": "user", "content": "hi"})
    assert seen == [1000 - count_tools(tools)]
    assert "FunctionTrimMemory(keep_all" in repr(memory)


def test_function_trim_memory_records_what_the_trim_dropped_and_refuses_non_lists():
    memory = FunctionTrimMemory(lambda messages, budget: messages[-1:], 1000)
    memory.add({"role": "user", "content": "one"})
    memory.add({"role": "user", "content": "two"})
    assert memory.to_api_format() == [{"role": "user", "content": "two"}]
    assert memory.last_dropped == [{"role": "user", "content": "one"}]
    assert memory.dropped_count == 1
    broken = FunctionTrimMemory(lambda messages, budget: None, 1000)
    with pytest.raises(TypeError, match="returned NoneType, not a list of messages"):
        broken.add({"role": "user", "content": "hi"})


def test_a_summarizer_run_through_the_meter_is_counted_as_summary_requests(model):
    meter = Meter(model)
    tools = lesson_tools().schemas()
    memory = TokenBudgetMemory(550, tools=tools, drop="turn",
                               summarizer=model_summarizer(meter.chat))
    script = [q for q in SHORT if "guide" not in q]
    run = run_conversation(memory, script, meter=meter)
    assert run.error is None and run.summaries() >= 1
    assert run.turns[-1].reply == "You told me your name is Xiaoming.", (
        "the summary should keep the name the trim dropped")
    assert all(t.largest.tokens <= 550 for t in run.turns)
    assert sum(r.kind == "summary" for r in meter.requests) == run.summaries()


def test_cost_table_has_a_row_per_run_and_says_where_a_run_stopped(model):
    good = run_conversation(ShortTermMemory(100), SHORT[:2], name="good", meter=Meter(model))
    bad = ConversationRun("bad", None, [], error="turn 1: ValueError: nope")
    table = cost_table([good, bad], window=100)
    lines = table.splitlines()
    assert lines[0].startswith("memory") and "over 100 at" in lines[0]
    assert lines[2].startswith("good ") and "turn 1" in lines[2]
    assert lines[3].startswith("bad ") and "stopped at turn 1: ValueError: nope" in lines[4]


def test_plot_legends_name_the_limits_left_and_the_runs_right(model):
    run = run_conversation(ShortTermMemory(100), SHORT[:3], name="token budget",
                           meter=Meter(model))  # a run named like a limit line
    per_turn, total = plot_costs([run], window=500, budget=400).figure.axes
    left = [t.get_text() for t in per_turn.get_legend().get_texts()]
    right = [t.get_text() for t in total.get_legend().get_texts()]
    assert left == ["context window 500", "token budget 400"], left
    assert right == ["token budget"], right


def test_plot_is_a_deterministic_png_made_without_pyplot(model):
    run = run_conversation(ShortTermMemory(100), SHORT[:3], name="short", meter=Meter(model))
    plot = plot_costs([run], window=500, budget=400, marks={2: "weather"})
    assert isinstance(plot, CostPlot) and repr(plot) == "<CostPlot: short>"
    first, second = plot.png(), plot._repr_png_()
    assert first.startswith(b"\x89PNG") and first == second, "two renders must be identical"
    assert b"Matplotlib version" not in first, "no version string inside the PNG"
    assert "matplotlib.pyplot" not in sys.modules or not sys.modules["matplotlib.pyplot"].get_fignums()
