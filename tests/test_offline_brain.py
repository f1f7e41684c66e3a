"""The offline teaching model's reply logic, called directly: reply(body) -> dict.

Every body here is built by hand. The seed tools' schemas are written out below
(as lesson_lib.tools writes them, plus the seed article's Chinese wording), and
the learner tools exist only in this file: the model must read any tool it is
offered, not just the two it was written with.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.offline import brain
from lesson_lib.offline import understand as u
from lesson_lib.offline.brain import reply

# ------------------------------------------------------------------ tools, written out here

WEATHER = {"type": "function", "function": {
    "name": "get_current_weather",
    "description": ("Use this when the user asks about the weather, temperature, rain, wind or "
                    "humidity somewhere, what to wear, or whether a trip or outing is a good "
                    "idea. Give a city name; the unit is optional."),
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string",
                     "description": ("City name in English or Chinese, e.g. Chengdu, 成都, "
                                     "San Francisco.")},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius",
                 "description": "Temperature unit: celsius unless the user asks for Fahrenheit."}},
        "required": ["location"]}}}
TIME = {"type": "function", "function": {
    "name": "get_current_time",
    "description": ("Use this when the user asks what time or date it is somewhere, about time "
                    "zones or time differences, or needs the current time to plan something."),
    "parameters": {"type": "object", "properties": {
        "timezone": {"type": "string", "default": "Asia/Shanghai",
                     "description": ("IANA time zone name, e.g. Asia/Shanghai, America/New_York "
                                     "or UTC.")}},
        "required": []}}}
SEED_TOOLS = [WEATHER, TIME]

# The seed article's own wording: Chinese descriptions only.
WEATHER_ZH = {"type": "function", "function": {
    "name": "get_current_weather",
    "description": "当用户询问天气、气候、温度、穿衣建议或出行计划时使用此工具。提供城市名称和可选单位（摄氏度/华氏度）。",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "城市或地区的名称，例如北京、Tokyo、New York。"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius",
                 "description": "温度单位，默认为摄氏度celsius。"}},
        "required": ["location"]}}}
TIME_ZH = {"type": "function", "function": {
    "name": "get_current_time",
    "description": "当用户询问时间、日期、时区或需要时间信息进行规划时使用此工具。可以指定时区。",
    "parameters": {"type": "object", "properties": {
        "timezone": {"type": "string", "default": "Asia/Shanghai",
                     "description": "IANA时区名称，例如Asia/Shanghai, America/New_York, UTC。"}},
        "required": []}}}

# A learner's own tools.
CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Evaluate an arithmetic expression",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                   "required": ["expression"]}}}
SEARCH_NEWS = {"type": "function", "function": {
    "name": "search_news", "description": "Search recent news articles",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "description": "What to search for"},
        "limit": {"type": "integer", "description": "How many articles to return"}},
        "required": ["query"]}}}
CONVERT_UNITS = {"type": "function", "function": {
    "name": "convert_units", "description": "Convert a value from one unit to another",
    "parameters": {"type": "object", "properties": {
        "value": {"type": "number"}, "from_unit": {"type": "string"},
        "to_unit": {"type": "string"}},
        "required": ["value", "from_unit", "to_unit"]}}}
STOCK_PRICE = {"type": "function", "function": {
    "name": "getStockPrice", "description": "Look up the latest stock price of a company",
    "parameters": {"type": "object", "properties": {
        "symbol": {"type": "string", "description": "Ticker symbol, e.g. AAPL"}},
        "required": ["symbol"]}}}
PING = {"type": "function",
        "function": {"name": "ping", "description": "Check the server is alive"}}
EMPTY = {"type": "function", "function": {"name": "do_nothing",
                                          "parameters": {"type": "object", "properties": {}}}}
LEARNER_TOOLS = [CALCULATOR, SEARCH_NEWS, CONVERT_UNITS]

# Simulated results, like lesson_lib.tools' data (written out: the brain must not need tools.py).
WEATHER_DATA = {"Beijing": (18, "cloudy"), "Shanghai": (22, "sunny"), "Chengdu": (16, "cloudy"),
                "New York": (12, "windy")}
CITY_OF = {"北京": "Beijing", "上海": "Shanghai", "成都": "Chengdu", "纽约": "New York"}
NOW = "2026-05-01 17:30:00 CST+0800"


def run_tool(name: str, arguments: str) -> str:
    """A stand-in tool runner for the multi-turn tests."""
    args = json.loads(arguments)
    if name == "get_current_weather":
        city = CITY_OF.get(args["location"], args["location"])
        if city not in WEATHER_DATA:
            return json.dumps({"error": f"no weather data for {args['location']!r}"})
        temperature, condition = WEATHER_DATA[city]
        return json.dumps({"location": city, "temperature": temperature, "unit": "celsius",
                           "condition": condition, "wind": "light breeze"})
    if name == "get_current_time":
        zone = args.get("timezone", "Asia/Shanghai")
        if "/" not in zone or zone.startswith("Mars"):
            return json.dumps({"error": f"unknown time zone '{zone}'"})
        return json.dumps({"timezone": zone, "current_time": NOW})
    return json.dumps({"error": f"unknown tool {name}"})


# ------------------------------------------------------------------ helpers

def user(text, *earlier):
    return [*earlier, {"role": "user", "content": text}]


def body_for(messages, tools=None, **extra):
    body = {"model": "offline-rule-based-teacher", "messages": messages, **extra}
    if tools is not None:
        body["tools"] = tools
    return body


def ask(text_or_messages, tools=None, **extra):
    """reply() to one user text (or a whole message list)."""
    messages = user(text_or_messages) if isinstance(text_or_messages, str) else text_or_messages
    return reply(body_for(messages, tools, **extra))


def calls_of(answer):
    """[(name, arguments dict)] of a tool_calls reply; fails with the text if it is not one."""
    message = answer["message"]
    assert answer["finish_reason"] == "tool_calls", \
        f"expected a tool_calls reply, got text: {message.get('content')!r}"
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message["tool_calls"]]


def text_of(answer):
    message = answer["message"]
    assert answer["finish_reason"] == "stop", \
        f"expected a text reply, got tool calls: {message.get('tool_calls')!r}"
    assert "tool_calls" not in message, f"a text reply carries tool_calls: {message!r}"
    return message["content"]


def expect(got, expected, what="reply"):
    assert got == expected, f"{what}: expected {expected!r}, got {got!r}"


def assistant_calls(*calls):
    """An assistant message with tool_calls [(id, name, arguments dict)]."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
        for cid, name, args in calls]}


def tool_result(call_id, content):
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def agent_loop(text, tools=SEED_TOOLS, max_turns=6, **extra):
    """Run the agent loop against reply(): returns (rounds of calls, final text or None)."""
    messages, rounds = [{"role": "system", "content": "You are a helpful assistant."},
                        {"role": "user", "content": text}], []
    for _ in range(max_turns):
        answer = reply(body_for(messages, tools, **extra))
        message = answer["message"]
        if answer["finish_reason"] == "stop":
            return rounds, message["content"]
        rounds.append(calls_of(answer))
        messages.append(message)
        for call in message["tool_calls"]:
            fn = call["function"]
            messages.append(tool_result(call["id"], run_tool(fn["name"], fn["arguments"])))
    return rounds, None


WEATHER_RESULT = {"location": "Chengdu", "temperature": 16, "unit": "celsius",
                  "condition": "cloudy", "wind": "light breeze"}


# ------------------------------------------------------------------ the contract

def test_text_reply_has_the_contract_shape():
    answer = ask("Hello")
    expect(set(answer), {"message", "finish_reason"}, "keys")
    expect(answer["message"]["role"], "assistant", "role")
    assert isinstance(answer["message"]["content"], str) and answer["message"]["content"]
    expect("tool_calls" in answer["message"], False, "tool_calls key on a text reply")


def test_tool_call_reply_has_the_real_api_shape():
    answer = ask("What's the weather in Chengdu?", SEED_TOOLS)
    message = answer["message"]
    expect(answer["finish_reason"], "tool_calls", "finish_reason")
    expect(message["content"], None, "content of a tool-call reply")
    for call in message["tool_calls"]:
        assert re.fullmatch(r"call_[A-Za-z0-9]{24}", call["id"]), f"bad call id {call['id']!r}"
        expect(call["type"], "function", "call type")
        assert isinstance(call["function"]["arguments"], str), "arguments must be a JSON string"
        json.loads(call["function"]["arguments"])


def test_same_body_gives_identical_reply_ids_included():
    body = body_for(user("Shanghai and Beijing weather?"), SEED_TOOLS)
    expect(reply(copy.deepcopy(body)), reply(copy.deepcopy(body)), "second reply")


def test_different_bodies_get_different_call_ids():
    def first_id(text):
        return ask(text, SEED_TOOLS)["message"]["tool_calls"][0]["id"]

    one, two = first_id("What's the weather in Chengdu?"), first_id("Weather in Chengdu, please?")
    assert one != two, f"two different requests share the call id {one}"


def test_parallel_calls_in_one_reply_have_distinct_ids():
    calls = ask("Shanghai and Beijing weather?", SEED_TOOLS)["message"]["tool_calls"]
    ids = [c["id"] for c in calls]
    expect(len(set(ids)), len(ids), f"distinct ids among {ids}")


def test_replies_do_not_depend_on_the_process_hash_seed():
    script = ("import json; from lesson_lib.offline.brain import reply; print(json.dumps(["
              "reply({'model': 'm', 'messages': [{'role': 'user', 'content': t}], 'tools': %r})"
              " for t in ('搜一下电动车新闻', 'Find news about electric cars', 'Tell me a joke',"
              " 'Shanghai and Beijing weather?')]))" % (SEED_TOOLS + LEARNER_TOOLS))
    root = Path(brain.__file__).parents[2]
    outputs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True, cwd=root, env={**os.environ, "PYTHONHASHSEED": seed},
                              ).stdout for seed in ("1", "2")}
    expect(len(outputs), 1, "number of different outputs under two hash seeds")


def test_reply_does_not_change_the_body():
    body = body_for(user("weather in Chengdu and the time in New York"), SEED_TOOLS)
    before = copy.deepcopy(body)
    reply(body)
    expect(body, before, "body after reply()")


def test_offline_reply_logic_imports_only_what_the_module_rule_allows():
    allowed = ("lesson_lib.protocol", "lesson_lib.tokens", "lesson_lib.places", "lesson_lib.clock",
               "lesson_lib.text", "lesson_lib.offline",  # leaves below protocol, and itself
               "lesson_lib.terms", "lesson_lib.vectors")  # reading memories (recall.py)
    folder = Path(brain.__file__).parent
    for name in ("brain.py", "understand.py", "answer.py", "recall.py"):
        tree = ast.parse((folder / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for module in modules:
                if module.startswith(("lesson_lib", "openai", "httpx")):
                    assert module.startswith(allowed), f"{name} imports {module}: not allowed"


def test_module_docstring_says_it_is_rule_based():
    doc = brain.__doc__ or ""
    assert "rule-based" in doc and "not a language model" in doc, \
        f"brain's docstring must say honestly what it is; got {doc[:120]!r}"


# ------------------------------------------------------------------ names and small talk

def test_introductions_get_a_greeting_with_the_name():
    for text, expected in [
            ("My name is Xiaoming", "Nice to meet you, Xiaoming! How can I help?"),
            ("I'm Xiaoming", "Nice to meet you, Xiaoming! How can I help?"),
            ("Hi, call me Xiaoming.", "Nice to meet you, Xiaoming! How can I help?"),
            ("我叫小明", "你好小明！有什么可以帮你的？"),
            ("我是小明", "你好小明！有什么可以帮你的？"),
            ("我的名字是小明", "你好小明！有什么可以帮你的？")]:
        expect(text_of(ask(text, SEED_TOOLS)), expected, f"reply to {text!r}")


def test_name_is_remembered_only_when_a_message_in_the_list_says_it():
    told = user("Nice to meet you", {"role": "user", "content": "My name is Xiaoming"},
                {"role": "assistant", "content": "Nice to meet you, Xiaoming!"})[:-1]
    for question in ("What's my name?", "Do you remember my name?"):
        expect(text_of(ask(user(question, *told), SEED_TOOLS)),
               "You told me your name is Xiaoming.", f"{question!r} with the name in history")
        expect(text_of(ask(question, SEED_TOOLS)), "You haven't told me your name.",
               f"{question!r} in a fresh request (the model is stateless)")


def test_chinese_name_questions_are_answered_in_chinese():
    told = [{"role": "user", "content": "我叫小明"}, {"role": "assistant", "content": "你好小明！"}]
    for question in ("我刚才说我叫什么名字？", "我叫什么名字"):
        expect(text_of(ask(user(question, *told))), "你刚才说你叫小明。", f"{question!r}")
        expect(text_of(ask(question)), "你没有告诉我你的名字。", f"{question!r} without history")


def test_the_latest_name_given_wins_and_small_words_are_not_names():
    messages = user("What's my name?", {"role": "user", "content": "My name is Xiaoming"},
                    {"role": "assistant", "content": "Hi"},
                    {"role": "user", "content": "I'm fine. Call me Lao Zhang"},
                    {"role": "assistant", "content": "OK"})
    expect(text_of(ask(messages)), "You told me your name is Lao Zhang.", "latest name")
    expect(text_of(ask(user("What's my name?", {"role": "user", "content": "I'm fine"}))),
           "You haven't told me your name.", "'I'm fine' is not a name")


def test_a_system_prompt_naming_the_assistant_is_not_the_users_name():
    messages = [{"role": "system", "content": "Your name is Lao Zhang, a helpful assistant."},
                {"role": "user", "content": "What's my name?"}]
    expect(text_of(ask(messages)), "You haven't told me your name.", "name from a system prompt")


def test_a_summary_note_in_a_system_message_carries_the_name():
    messages = [{"role": "system", "content": "Summary so far: the user's name is Xiaoming."},
                {"role": "user", "content": "What's my name?"}]
    expect(text_of(ask(messages)), "You told me your name is Xiaoming.", "name from a summary")


def test_greetings_and_thanks_get_short_replies():
    assert text_of(ask("Hello")).startswith("Hello!"), "English greeting"
    assert text_of(ask("你好")).startswith("你好"), "Chinese greeting"
    expect(text_of(ask("Thanks!")), "You're welcome!", "thanks")
    expect(text_of(ask("谢谢")), "不客气！", "Chinese thanks")


def test_unknown_requests_get_an_honest_rule_based_answer():
    english = text_of(ask("Tell me a joke", SEED_TOOLS))
    assert "offline rule-based teaching model" in english, f"got {english!r}"
    assert "get_current_weather" in english, f"it should list the tools it has; got {english!r}"
    chinese = text_of(ask("讲个笑话"))
    assert "离线的规则教学模型" in chinese, f"got {chinese!r}"


# ------------------------------------------------------------------ current request and language

def test_the_current_request_is_the_latest_user_message():
    messages = user("My name is Xiaoming",
                    {"role": "user", "content": "What's the weather in Chengdu?"},
                    {"role": "assistant", "content": "Chengdu is cloudy."})
    expect(text_of(ask(messages, SEED_TOOLS)), "Nice to meet you, Xiaoming! How can I help?",
           "reply to the latest user message, not the earlier weather question")


def test_reply_language_follows_the_latest_user_message():
    messages = user("谢谢", {"role": "user", "content": "Hello"},
                    {"role": "assistant", "content": "Hello!"})
    expect(text_of(ask(messages)), "不客气！", "Chinese after English")


# ------------------------------------------------------------------ choosing tools

def test_weather_and_time_requests_pick_the_matching_seed_tool():
    for text, name in [("What's the weather in Chengdu?", "get_current_weather"),
                       ("Is it raining in Tokyo?", "get_current_weather"),
                       ("What should I wear in Shanghai tomorrow?", "get_current_weather"),
                       ("What time is it in New York?", "get_current_time"),
                       ("成都天气？", "get_current_weather"),
                       ("纽约现在几点？", "get_current_time")]:
        expect([n for n, _ in calls_of(ask(text, SEED_TOOLS))], [name], f"tools for {text!r}")


def test_chinese_tool_descriptions_are_read_too():
    for text, name in [("成都天气？", "get_current_weather"), ("What time is it in Tokyo?",
                                                              "get_current_time"),
                       ("明天去东京穿什么好？", "get_current_weather")]:
        expect([n for n, _ in calls_of(ask(text, [WEATHER_ZH, TIME_ZH]))], [name], text)


def test_a_learners_calculator_gets_the_expression():
    expect(calls_of(ask("What is 23 * 7 + 1?", SEED_TOOLS + LEARNER_TOOLS)),
           [("calculator", {"expression": "23 * 7 + 1"})], "calculator call")
    expect(calls_of(ask("23乘7加1等于多少？", [CALCULATOR])),
           [("calculator", {"expression": "23 * 7 + 1"})], "Chinese arithmetic")


def test_a_learners_news_search_gets_query_and_limit():
    expect(calls_of(ask("Find 3 news articles about electric cars", SEED_TOOLS + LEARNER_TOOLS)),
           [("search_news", {"query": "electric cars", "limit": 3})], "news search")
    expect(calls_of(ask("搜索关于电动车的新闻", SEED_TOOLS + LEARNER_TOOLS)),
           [("search_news", {"query": "电动车"})], "Chinese news search (limit is optional)")


def test_a_learners_unit_converter_gets_value_and_units():
    expect(calls_of(ask("convert 5 km to miles", SEED_TOOLS + LEARNER_TOOLS)),
           [("convert_units", {"value": 5, "from_unit": "km", "to_unit": "miles"})], "convert")
    expect(calls_of(ask("把5公里换算成英里", LEARNER_TOOLS)),
           [("convert_units", {"value": 5, "from_unit": "公里", "to_unit": "英里"})], "换算")


def test_camel_case_tool_names_are_split_into_words():
    expect(calls_of(ask("What's the stock price of 'AAPL'?", [STOCK_PRICE] + SEED_TOOLS)),
           [("getStockPrice", {"symbol": "AAPL"})], "getStockPrice call")


def test_no_tool_is_called_when_none_fits():
    for text in ("Tell me about Chengdu", "My name is Xiaoming", "Hello"):
        assert ask(text, SEED_TOOLS + LEARNER_TOOLS)["finish_reason"] == "stop", \
            f"{text!r} should get text, got {ask(text, SEED_TOOLS)['message']}"


# ------------------------------------------------------------------ filling arguments

def test_place_values_use_the_users_script():
    expect(calls_of(ask("What's the weather in chengdu?", SEED_TOOLS)),
           [("get_current_weather", {"location": "Chengdu", "unit": "celsius"})],
           "English, canonical")
    expect(calls_of(ask("NYC weather?", SEED_TOOLS)),
           [("get_current_weather", {"location": "New York", "unit": "celsius"})], "alias")
    expect(calls_of(ask("成都天气怎么样？", SEED_TOOLS)),
           [("get_current_weather", {"location": "成都", "unit": "celsius"})], "Chinese as typed")


def test_unknown_places_are_passed_on_for_the_tool_to_judge():
    expect(calls_of(ask("What's the weather in Lhasa?", SEED_TOOLS)),
           [("get_current_weather", {"location": "Lhasa", "unit": "celsius"})], "Lhasa")
    expect(calls_of(ask("帮我查一下拉萨的天气", SEED_TOOLS)),
           [("get_current_weather", {"location": "拉萨", "unit": "celsius"})], "拉萨")


def test_timezone_comes_from_a_city_an_iana_name_or_the_default():
    for text, zone in [("What time is it in Tokyo?", "Asia/Tokyo"),
                       ("What time is it in Europe/Paris?", "Europe/Paris"),
                       ("伦敦现在几点？", "Europe/London"),
                       ("What time is it?", "Asia/Shanghai")]:
        expect(calls_of(ask(text, SEED_TOOLS)), [("get_current_time", {"timezone": zone})], text)


def test_enum_values_come_from_the_text_or_the_default():
    for text, unit in [("Weather in Chengdu in Fahrenheit?", "fahrenheit"),
                       ("成都现在多少华氏度？", "fahrenheit"),
                       ("Chengdu weather in °F", "fahrenheit"),
                       ("成都天气，用摄氏度", "celsius"),
                       ("Weather in Chengdu?", "celsius")]:
        expect(calls_of(ask(text, SEED_TOOLS))[0][1]["unit"], unit, f"unit for {text!r}")


def test_optional_parameters_without_value_or_default_are_left_out():
    expect(calls_of(ask("Any news on AI?", [SEARCH_NEWS])), [("search_news", {"query": "AI"})],
           "no limit in the text")


def test_a_missing_required_argument_gets_a_clarifying_question():
    expect(text_of(ask("What's the weather like?", SEED_TOOLS)),
           "Which city would you like the weather for?", "English")
    expect(text_of(ask("帮我查天气", SEED_TOOLS)), "请告诉我要查哪个城市？", "Chinese")
    expect(text_of(ask("Use the calculator", [CALCULATOR])),
           "What expression should I use for calculator?", "a learner's tool")


def test_a_required_enum_without_default_is_asked_for():
    mode = {"type": "function", "function": {
        "name": "set_speed_mode", "description": "Set the speed mode of the fan",
        "parameters": {"type": "object", "properties": {
            "mode": {"type": "string", "enum": ["slow", "fast"]}}, "required": ["mode"]}}}
    expect(text_of(ask("Change the fan speed mode", [mode])),
           "Which mode would you like: slow or fast?", "enum question")
    expect(calls_of(ask("Set the fan speed mode to fast", [mode])),
           [("set_speed_mode", {"mode": "fast"})], "enum named in the text")


# ------------------------------------------------------------------ parallel calls

def test_several_places_give_parallel_calls():
    expect(calls_of(ask("Shanghai and Beijing weather?", SEED_TOOLS)),
           [("get_current_weather", {"location": "Shanghai", "unit": "celsius"}),
            ("get_current_weather", {"location": "Beijing", "unit": "celsius"})], "two cities")
    expect(calls_of(ask("上海和北京的天气分别怎么样？", SEED_TOOLS)),
           [("get_current_weather", {"location": "上海", "unit": "celsius"}),
            ("get_current_weather", {"location": "北京", "unit": "celsius"})], "两个城市")


def test_several_requests_give_calls_to_several_tools():
    expect(calls_of(ask("weather in Chengdu and the time in New York", SEED_TOOLS)),
           [("get_current_weather", {"location": "Chengdu", "unit": "celsius"}),
            ("get_current_time", {"timezone": "America/New_York"})], "weather + time")
    expect(calls_of(ask("我明天要去上海出差，那边天气怎么样？另外纽约现在是几点？", SEED_TOOLS)),
           [("get_current_weather", {"location": "上海", "unit": "celsius"}),
            ("get_current_time", {"timezone": "America/New_York"})], "the seed's question")


def test_same_call_twice_is_sent_once():
    expect(calls_of(ask("What time is it in Beijing and Shanghai?", SEED_TOOLS)),
           [("get_current_time", {"timezone": "Asia/Shanghai"})], "one zone, one call")


def test_parallel_tool_calls_false_sends_one_call_per_reply():
    rounds, final = agent_loop("Shanghai and Beijing weather?", parallel_tool_calls=False)
    expect([len(r) for r in rounds], [1, 1], "calls per round")
    expect([r[0][1]["location"] for r in rounds], ["Shanghai", "Beijing"], "order of calls")
    assert final and "Shanghai" in final and "Beijing" in final, f"final answer: {final!r}"


# ------------------------------------------------------------------ tool_choice

def test_tool_choice_none_never_calls_and_says_why():
    english = text_of(ask("What's the weather in Chengdu?", SEED_TOOLS, tool_choice="none"))
    assert "get_current_weather" in english and '"none"' in english, f"got {english!r}"
    chinese = text_of(ask("成都天气？", SEED_TOOLS, tool_choice="none"))
    assert "get_current_weather" in chinese and "none" in chinese, f"got {chinese!r}"


def test_tool_choice_none_still_answers_from_results():
    messages = user("What's the weather in Chengdu?") + [
        assistant_calls(("call_1", "get_current_weather", {"location": "Chengdu"})),
        tool_result("call_1", WEATHER_RESULT)]
    expect(text_of(ask(messages, SEED_TOOLS, tool_choice="none")),
           "Chengdu is cloudy, 16°C, with a light breeze.", "answer with tool_choice none")


def test_tool_choice_auto_is_the_default():
    body = user("What's the weather in Chengdu?")
    expect(calls_of(ask(body, SEED_TOOLS, tool_choice="auto")), calls_of(ask(body, SEED_TOOLS)),
           "auto vs no tool_choice")


def test_tool_choice_required_always_calls():
    expect([n for n, _ in calls_of(ask("Hello", SEED_TOOLS, tool_choice="required"))],
           ["get_current_time"], "no match: the first tool whose required args can be filled")
    expect(calls_of(ask("Is it cold in Chengdu?", SEED_TOOLS, tool_choice="required")),
           [("get_current_weather", {"location": "Chengdu", "unit": "celsius"})], "best match")
    expect(calls_of(ask("hi", [PING, EMPTY], tool_choice="required")), [("ping", {})],
           "a tool with no parameters at all")


def test_tool_choice_required_keeps_calling_even_after_results():
    rounds, final = agent_loop("What's the weather in Chengdu?", max_turns=3,
                               tool_choice="required")
    expect((len(rounds), final), (3, None), "rounds and final answer under 'required'")


def test_tool_choice_forces_the_named_function_with_arguments_from_the_text():
    forced = {"type": "function", "function": {"name": "get_current_weather"}}
    expect(calls_of(ask("What time is it in Tokyo?", SEED_TOOLS, tool_choice=forced)),
           [("get_current_weather", {"location": "Tokyo", "unit": "celsius"})], "forced weather")
    forced_time = {"type": "function", "function": {"name": "get_current_time"}}
    expect(calls_of(ask("Hello", SEED_TOOLS, tool_choice=forced_time)),
           [("get_current_time", {"timezone": "Asia/Shanghai"})], "forced time, default zone")


# ------------------------------------------------------------------ answers from results

def test_weather_results_become_a_sentence_in_the_users_language():
    for question, expected in [("What's the weather in Chengdu?",
                                "Chengdu is cloudy, 16°C, with a light breeze."),
                               ("成都天气？", "成都多云，16°C，微风。")]:
        messages = user(question) + [
            assistant_calls(("call_1", "get_current_weather", {"location": "Chengdu"})),
            tool_result("call_1", WEATHER_RESULT)]
        expect(text_of(ask(messages)), expected, f"answer to {question!r} (tools=None)")
        expect(text_of(ask(messages, SEED_TOOLS)), expected, f"answer to {question!r} (tools)")


def test_time_results_become_a_sentence():
    messages = user("What time is it?") + [
        assistant_calls(("call_1", "get_current_time", {})),
        tool_result("call_1", {"timezone": "Asia/Shanghai", "current_time": NOW})]
    expect(text_of(ask(messages)), f"It is {NOW} in Asia/Shanghai.", "time answer")


def test_results_are_matched_to_calls_by_tool_call_id():
    messages = user("Weather in Beijing and Chengdu?") + [
        assistant_calls(("call_b", "get_weather", {"city": "Beijing"}),
                        ("call_c", "get_weather", {"city": "Chengdu"})),
        tool_result("call_b", "cloudy 18°C"), tool_result("call_c", "cloudy 16°C")]
    messages[-1], messages[-2] = messages[-2], messages[-1]  # results in the other order
    expect(text_of(ask(messages)), "Beijing: cloudy 18°C. Chengdu: cloudy 16°C.",
           "plain-text results, each with its own call's city")


def test_unknown_tool_json_is_summarised_field_by_field():
    messages = user("Search news about AI") + [
        assistant_calls(("call_1", "search_news", {"query": "AI"})),
        tool_result("call_1", {"count": 2, "titles": ["A", "B"]})]
    expect(text_of(ask(messages)), 'search_news returned count: 2; titles: ["A", "B"].', "summary")


def test_error_results_are_acknowledged_honestly():
    messages = user("What time is it on Mars/Base?") + [
        assistant_calls(("call_1", "get_current_time", {"timezone": "Mars/Base"})),
        tool_result("call_1", {"error": "unknown time zone 'Mars/Base'"})]
    expect(text_of(ask(messages, SEED_TOOLS)),
           "I couldn't get the time: unknown time zone 'Mars/Base'.", "error answer")
    messages[0]["content"] = "火星现在几点？"
    expect(text_of(ask(messages)), "我没能查到时间：工具报错，原文是“unknown time zone 'Mars/Base'”。", "中文")


def test_no_tools_and_no_results_means_an_honest_no_for_live_data():
    text = text_of(ask("What's the weather in Chengdu?"))
    assert text.startswith("I can't check the weather") and "no tools" in text, f"got {text!r}"
    assert text_of(ask("现在几点？")).startswith("我没法查时间"), "Chinese, time"


def test_a_tool_that_does_not_fit_live_data_is_named_honestly():
    text = text_of(ask("What's the weather in Chengdu?", [CALCULATOR]))
    assert "calculator" in text and "can't check the weather" in text, f"got {text!r}"


def test_results_from_an_earlier_turn_are_not_the_current_answer():
    messages = user("Thanks!", {"role": "user", "content": "Weather in Chengdu?"},
                    assistant_calls(("call_1", "get_current_weather", {"location": "Chengdu"})),
                    tool_result("call_1", WEATHER_RESULT),
                    {"role": "assistant", "content": "Chengdu is cloudy."})
    expect(text_of(ask(messages, SEED_TOOLS)), "You're welcome!", "reply to the new turn")


# ------------------------------------------------------------------ multi-step chain

def test_warmer_city_chain_takes_three_turns():
    rounds, final = agent_loop(
        "Which is warmer right now, Beijing or Shanghai, and what time is it there?")
    expect(rounds, [[("get_current_weather", {"location": "Beijing", "unit": "celsius"}),
                     ("get_current_weather", {"location": "Shanghai", "unit": "celsius"})],
                    [("get_current_time", {"timezone": "Asia/Shanghai"})]], "rounds of calls")
    expect(final, f"Shanghai is warmer: 22°C, against 18°C in Beijing. It is {NOW} in "
                  "Asia/Shanghai.", "final answer")


def test_warmer_city_chain_in_chinese():
    rounds, final = agent_loop("北京和上海现在哪个更暖和？那里现在几点？")
    expect([[n for n, _ in r] for r in rounds],
           [["get_current_weather", "get_current_weather"], ["get_current_time"]], "rounds")
    expect(final, "上海更暖和：22°C，北京18°C。北京时间现在是 2026 年 5 月 1 日 17:30。", "final answer")


def test_the_chain_rule_is_general_colder_and_another_follow_up():
    rounds, final = agent_loop("Which city is colder, New York or Chengdu? What time is it there?")
    expect(rounds[1], [("get_current_time", {"timezone": "America/New_York"})], "second round")
    assert final.startswith("New York is colder: 12°C, against 16°C in Chengdu."), f"{final!r}"


def test_there_without_a_comparison_refers_to_the_city_before():
    expect(calls_of(ask("What's the weather in Tokyo and what time is it there?", SEED_TOOLS)),
           [("get_current_weather", {"location": "Tokyo", "unit": "celsius"}),
            ("get_current_time", {"timezone": "Asia/Tokyo"})], "both calls at once")


# ------------------------------------------------------------------ the never-ending model

def test_keep_checking_until_sunny_never_ends_while_chengdu_stays_cloudy():
    for text in ("Keep checking the weather in Chengdu until it is sunny.",
                 "一直查成都的天气，直到晴天为止"):
        rounds, final = agent_loop(text, max_turns=5)
        expect(final, None, f"final answer for {text!r}")
        expect(len(rounds), 5, "model calls")
        assert all(len(r) == 1 and r[0][0] == "get_current_weather" for r in rounds), rounds


def test_keep_checking_uses_a_new_call_id_each_turn():
    messages = user("Keep checking the weather in Chengdu until it is sunny.")
    ids = []
    for _ in range(5):
        message = reply(body_for(messages, SEED_TOOLS))["message"]
        ids.append(message["tool_calls"][0]["id"])
        messages = messages + [message, tool_result(ids[-1], WEATHER_RESULT)]
    expect(len(set(ids)), 5, f"distinct ids in {ids}")


def test_keep_checking_stops_when_the_wanted_weather_comes():
    messages = user("Keep checking the weather in Chengdu until it is sunny.") + [
        assistant_calls(("call_1", "get_current_weather", {"location": "Chengdu"})),
        tool_result("call_1", WEATHER_RESULT),
        assistant_calls(("call_2", "get_current_weather", {"location": "Chengdu"})),
        tool_result("call_2", dict(WEATHER_RESULT, condition="sunny", temperature=21))]
    expect(text_of(ask(messages, SEED_TOOLS)),
           "After 2 checks: Chengdu is sunny, 21°C, with a light breeze.", "final answer")


# ------------------------------------------------------------------ summaries

HISTORY = [{"role": "system", "content": "You are a helpful assistant."},
           {"role": "user", "content": "My name is Xiaoming"},
           {"role": "assistant", "content": "Nice to meet you, Xiaoming!"},
           {"role": "user", "content": "What's the weather in Chengdu?"},
           assistant_calls(("call_1", "get_current_weather", {"location": "Chengdu"})),
           tool_result("call_1", WEATHER_RESULT),
           {"role": "assistant", "content": "Chengdu is cloudy, 16°C."},
           {"role": "user", "content": "What time is it?"},
           assistant_calls(("call_2", "get_current_time", {})),
           tool_result("call_2", {"timezone": "Asia/Shanghai", "current_time": NOW}),
           {"role": "assistant", "content": "It is 17:30."}]


def test_summary_in_english_names_user_questions_and_results():
    expect(text_of(ask(user("Summarize the conversation so far", *HISTORY), SEED_TOOLS)),
           "Summary so far: the user's name is Xiaoming. The user asked: “What's the weather "
           "in Chengdu?”; “What time is it?”. Tool results: Chengdu is cloudy, 16°C, with a "
           f"light breeze. It is {NOW} in Asia/Shanghai.", "summary")


def test_summary_in_chinese():
    history = [{"role": "user", "content": "我叫小明"}, {"role": "assistant", "content": "你好"},
               {"role": "user", "content": "成都天气？"},
               assistant_calls(("call_1", "get_current_weather", {"location": "成都"})),
               tool_result("call_1", WEATHER_RESULT),
               {"role": "assistant", "content": "成都多云。"}]
    expect(text_of(ask(user("总结一下我们的对话", *history))),
           "对话摘要：用户叫小明。用户问了：「成都天气？」。工具结果：成都多云，16°C，微风。", "摘要")


def test_summary_asked_by_a_system_message_at_the_end():
    messages = [*HISTORY, {"role": "system", "content": "Summarize the conversation so far."}]
    assert text_of(ask(messages)).startswith("Summary so far: the user's name is Xiaoming."), \
        "a system request for a summary"


def test_summary_of_nothing_says_so():
    expect(text_of(ask("Summarize our conversation")),
           "Summary so far: The user has not asked anything yet.", "empty summary")


PASTED = ("User: Hi, I'm Xiaoming. What's the weather in Paris?\n"
          "Assistant: It's sunny in Paris, 20°C.\n"
          "User: Should I bring an umbrella?\n"
          "Assistant: No need, no rain is expected.")
PASTED_ZH = "用户：你好，我叫小明。巴黎天气怎么样？\n助手：巴黎晴，20°C。\n用户：要带伞吗？\n助手：不用，没有雨。"
PASTED_SUMMARY = ("Summary so far: the user's name is Xiaoming. The user asked: “Hi, I'm "
                  "Xiaoming. What's the weather in Paris?”; “Should I bring an umbrella?”. The "
                  "assistant answered: “It's sunny in Paris, 20°C”; “No need, no rain is "
                  "expected”.")  # a quoted sentence's own full stop is dropped: one, after it


def test_a_transcript_pasted_under_a_summary_instruction_is_summarised():
    """A system message asks for a summary and the user pastes a chat log: the log is
    summarised (it is no weather question), tools or not; the same in Chinese."""
    for tools in (None, SEED_TOOLS):
        messages = [{"role": "system", "content": "Summarize the following conversation."},
                    {"role": "user", "content": PASTED}]
        expect(text_of(ask(messages, tools)), PASTED_SUMMARY, "a pasted transcript")
    messages = [{"role": "system", "content": "请总结下面的对话。"},
                {"role": "user", "content": PASTED_ZH}]
    expect(text_of(ask(messages)), "对话摘要：用户叫小明。用户问了：「你好，我叫小明。巴黎天气怎么样？」；"
           "「要带伞吗？」。助手回答：「巴黎晴，20°C」；「不用，没有雨」。", "粘贴的对话")


def test_a_transcript_in_the_message_that_asks_is_what_is_summarised():
    """LangChain's buffer string ("Human: …\nAI: …") inside the request for a summary."""
    pasted = PASTED.replace("User:", "Human:").replace("Assistant:", "AI:")
    expect(text_of(ask(f"Summarize this conversation:\n\n{pasted}")), PASTED_SUMMARY,
           "a transcript in the request")


def test_a_transcript_without_a_summary_instruction_is_an_ordinary_message():
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": PASTED}]
    assert calls_of(ask(messages, SEED_TOOLS)), "no summary asked: the weather is looked up"


def test_a_result_that_ends_a_sentence_gets_no_second_full_stop():
    messages = user("Search the web for Chengdu") + [
        assistant_calls(("call_1", "search_web", {"query": "Chengdu"})),
        tool_result("call_1", "Chengdu is the capital of Sichuan.")]
    expect(text_of(ask(messages)), "Chengdu: Chengdu is the capital of Sichuan.",
           "one full stop")


def test_an_agent_asked_as_a_tool_is_quoted_as_it_answered():
    """An agent used as a tool (its one argument `input`, the Agents SDK's as_tool) answers
    in sentences: they are passed on, in either language."""
    for text, said in (("What's the weather in Chengdu?", "Chengdu is cloudy, 16°C."),
                       ("成都天气怎么样？", "成都多云，16°C。")):
        messages = user(text) + [assistant_calls(("call_1", "ask_weather_agent", {"input": text})),
                                 tool_result("call_1", said)]
        expect(text_of(ask(messages)), said, "the agent's answer")


# ------------------------------------------------------------------ handoffs

def handed(text, agent="weather_agent", system="You answer weather questions."):
    """The messages an agent gets after a triage agent handed `text` to it (the Agents
    SDK's shape: its own instructions first, the transfer call and its output)."""
    return [{"role": "system", "content": system}, {"role": "user", "content": text},
            assistant_calls(("call_h", f"transfer_to_{agent}", {})),
            tool_result("call_h", {"assistant": agent})]


def transfer_tool(agent):
    return {"type": "function", "function": {
        "name": f"transfer_to_{agent}", "description": f"Handoff to the {agent} agent to "
        "handle the request.", "parameters": {"type": "object", "properties": {}}}}


def test_the_agent_handed_to_answers_the_request_itself():
    """After a handoff the weather agent looks the weather up: the transfer's output is
    no result to report, and it does not hand the turn back."""
    tools = [WEATHER, transfer_tool("triage_agent")]
    for text, city in (("What's the weather in Chengdu?", "Chengdu"), ("成都天气怎么样？", "成都")):
        answer = ask(handed(text), tools)
        expect([(name, arguments["location"]) for name, arguments in calls_of(answer)],
               [("get_current_weather", city)], "after a handoff")
        done = ask(handed(text) + [answer["message"], tool_result(
            answer["message"]["tool_calls"][0]["id"], WEATHER_RESULT)], tools)
        assert "transfer" not in text_of(done) and "16" in text_of(done), done


def test_an_agent_handed_a_request_it_has_nothing_for_says_who_it_is():
    text = "I want to speak to the French agent"
    said = text_of(ask(handed(text, "french_agent", "You only speak French."),
                       [transfer_tool("triage_agent")]))
    expect(said, "Hello, I'm french_agent, and I'm taking over this conversation. How can I "
                 "help?", "after a handoff")
    expect(text_of(ask(handed("我想找客服", "support_agent"))),
           "你好，我是 support_agent，这段对话由我接手。有什么可以帮你的？", "交接之后")


# ------------------------------------------------------------------ odd input never crashes

def test_content_as_a_list_of_parts_is_read():
    parts = [{"type": "text", "text": "What's the weather"},
             {"type": "text", "text": "in Chengdu?"},
             {"type": "image_url", "image_url": {"url": "data:,"}}]
    expect(calls_of(ask([{"role": "user", "content": parts}], SEED_TOOLS)),
           [("get_current_weather", {"location": "Chengdu", "unit": "celsius"})], "parts")


def test_odd_requests_get_a_sensible_reply():
    odd = [body_for([{"role": "user", "content": ""}]),
           body_for([{"role": "user", "content": "   "}], [PING, EMPTY]),
           body_for([{"role": "system", "content": "Only a system prompt."}]),
           body_for(user("do something", {"role": "user", "content": "x"},
                         {"role": "assistant", "content": ""}), [EMPTY]),
           body_for([{"role": "user", "content": "run it"}, assistant_calls(("c1", "mystery", {})),
                     {"role": "tool", "tool_call_id": "c1",
                      "content": [{"type": "text", "text": "plain words"}]}]),
           body_for([{"role": "user", "content": "run it"},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "c1", "type": "function",
                          "function": {"name": "mystery", "arguments": "not json"}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": "{broken json"}])]
    for body in odd:
        answer = reply(body)
        message = answer["message"]
        assert answer["finish_reason"] in ("stop", "tool_calls"), f"{body}: {answer}"
        assert message.get("content") or message.get("tool_calls"), f"empty reply to {body}"


def test_a_long_plain_text_result_is_quoted_in_part():
    page = "Chengdu news. " + "The city opened a new metro line today. " * 100
    messages = [{"role": "user", "content": "Any news today?"},
                assistant_calls(("c1", "search_news", {"query": "news"})), tool_result("c1", page)]
    text = text_of(ask(messages))
    assert len(text) < 400, f"expected a quote of at most ~300 characters, got {len(text)}: {text}"
    assert text.startswith("search_news returned: Chengdu news. The city opened"), text
    assert text.endswith("…."), f"expected the quote to end in '…', got {text[-20:]!r}"


def test_plain_text_and_empty_results_are_reported_as_they_came():
    messages = [{"role": "user", "content": "run it"},
                assistant_calls(("c1", "mystery", {}), ("c2", "other_tool", {})),
                tool_result("c1", "plain words"), tool_result("c2", "")]
    expect(text_of(ask(messages)), "mystery returned: plain words. other_tool returned nothing.",
           "plain and empty results")


_TEXTS = st.text(alphabet=st.sampled_from(list("abc XYZ 123+*?,.和的天气成都北京几点 'My name is")),
                 max_size=60)


@settings(max_examples=150, deadline=None)
@given(text=_TEXTS, tools=st.sampled_from([None, SEED_TOOLS, LEARNER_TOOLS, [PING, EMPTY]]),
       choice=st.sampled_from([None, "auto", "none", "required"]))
def test_any_user_text_gets_a_well_formed_reply(text, tools, choice):
    extra = {"tool_choice": choice} if choice and tools else {}
    answer = reply(body_for([{"role": "user", "content": text}], tools, **extra))
    message = answer["message"]
    if answer["finish_reason"] == "tool_calls":
        assert message["content"] is None and message["tool_calls"], answer
        for call in message["tool_calls"]:
            assert isinstance(json.loads(call["function"]["arguments"]), dict), call
    else:
        assert answer["finish_reason"] == "stop" and isinstance(message["content"], str), answer
        assert message["content"], f"empty text for {text!r}"
        assert extra.get("tool_choice") != "required", f"'required' must call; got {answer}"


# ------------------------------------------------------------------ answering a clarifying question

def test_an_answer_to_a_clarifying_question_completes_the_earlier_request():
    for first, question, answer_, location in [
            ("帮我查天气", "请告诉我要查哪个城市？", "成都", "成都"),
            ("What's the weather like?", "Which city would you like the weather for?",
             "Chengdu, please", "Chengdu")]:
        messages = user(answer_, {"role": "user", "content": first},
                        {"role": "assistant", "content": question})
        expect(calls_of(ask(messages, SEED_TOOLS)),
               [("get_current_weather", {"location": location, "unit": "celsius"})], answer_)


def test_an_unrelated_reply_to_a_clarifying_question_is_not_forced_into_a_call():
    messages = user("Thanks", {"role": "user", "content": "What's the weather like?"},
                    {"role": "assistant", "content": "Which city would you like the weather for?"})
    expect(text_of(ask(messages, SEED_TOOLS)), "You're welcome!", "reply to 'Thanks'")


def test_required_tool_choice_wins_over_a_summary_request():
    answer = ask(user("Summarize the conversation so far", *HISTORY), SEED_TOOLS,
                 tool_choice="required")
    expect(answer["finish_reason"], "tool_calls", "finish_reason under 'required'")


def test_a_learner_tool_error_names_the_tool_and_its_hint():
    messages = user("What is 1 / 0?") + [
        assistant_calls(("call_1", "calculator", {"expression": "1 / 0"})),
        tool_result("call_1", {"error": "division by zero", "hint": "use a divisor other than 0"})]
    expect(text_of(ask(messages, [CALCULATOR])),
           "calculator reported an error: division by zero. Hint: use a divisor other than 0.",
           "error from a learner's tool")


# ------------------------------------------------------------------ follow-ups that name only a place

def weather_turn(question, location, result=WEATHER_RESULT, answer_text="Chengdu is cloudy."):
    """One finished weather turn: the question, the call, its result and the answer."""
    return [{"role": "user", "content": question},
            assistant_calls(("call_w", "get_current_weather", {"location": location})),
            tool_result("call_w", result), {"role": "assistant", "content": answer_text}]


TIME_TURN = [{"role": "user", "content": "What time is it in Tokyo?"},
             assistant_calls(("call_t", "get_current_time", {"timezone": "Asia/Tokyo"})),
             tool_result("call_t", {"timezone": "Asia/Tokyo", "current_time": NOW}),
             {"role": "assistant", "content": f"It is {NOW} in Asia/Tokyo."}]


def test_a_follow_up_naming_only_a_place_asks_the_last_tool_again():
    chinese = weather_turn("帮我查一下成都天气", "成都", answer_text="成都多云，16°C。")
    english = weather_turn("What's the weather in Chengdu?", "Chengdu")
    for earlier, follow_up, expected in [
            (chinese, "上海呢？", ("get_current_weather", {"location": "上海", "unit": "celsius"})),
            (chinese, "那北京呢？", ("get_current_weather", {"location": "北京", "unit": "celsius"})),
            (english, "And Shanghai?",
             ("get_current_weather", {"location": "Shanghai", "unit": "celsius"})),
            (english, "What about Tokyo?",
             ("get_current_weather", {"location": "Tokyo", "unit": "celsius"})),
            (TIME_TURN, "And London?", ("get_current_time", {"timezone": "Europe/London"})),
            (TIME_TURN, "What about UTC?", ("get_current_time", {"timezone": "UTC"})),
            (TIME_TURN, "纽约呢？", ("get_current_time", {"timezone": "America/New_York"}))]:
        expect(calls_of(ask(user(follow_up, *earlier), SEED_TOOLS)), [expected],
               f"call for {follow_up!r} after {earlier[0]['content']!r}")


def test_a_follow_up_is_answered_from_its_own_result():
    shanghai = {"location": "Shanghai", "temperature": 22, "unit": "celsius",
                "condition": "sunny", "wind": "light breeze"}
    for question, follow_up, location, expected in [
            ("帮我查一下成都天气", "上海呢？", "上海", "上海晴，22°C，微风。"),
            ("What's the weather in Chengdu?", "And Shanghai?", "Shanghai",
             "Shanghai is sunny, 22°C, with a light breeze.")]:
        messages = user(follow_up, *weather_turn(question, location)) + [
            assistant_calls(("call_s", "get_current_weather", {"location": location})),
            tool_result("call_s", shanghai)]
        expect(text_of(ask(messages, SEED_TOOLS)), expected, f"answer to {follow_up!r}")


def test_the_last_call_before_the_follow_up_decides_the_tool():
    earlier = [{"role": "user", "content": "weather in Chengdu and the time in New York"},
               assistant_calls(("c1", "get_current_weather", {"location": "Chengdu"}),
                               ("c2", "get_current_time", {"timezone": "America/New_York"})),
               tool_result("c1", WEATHER_RESULT),
               tool_result("c2", {"timezone": "America/New_York", "current_time": NOW}),
               {"role": "assistant", "content": "Chengdu is cloudy. It is 05:30 in New York."}]
    expect(calls_of(ask(user("And Tokyo?", *earlier), SEED_TOOLS)),
           [("get_current_time", {"timezone": "Asia/Tokyo"})], "the last call was the time")


def test_a_follow_up_with_a_tool_of_its_own_uses_that_tool():
    earlier = weather_turn("What's the weather in Chengdu?", "Chengdu")
    for text in ("And what time is it in Tokyo?", "东京现在几点？"):
        expect([n for n, _ in calls_of(ask(user(text, *earlier), SEED_TOOLS))],
               ["get_current_time"], f"tools for {text!r}")


def test_a_place_alone_is_not_a_follow_up_without_a_fitting_earlier_call():
    earlier = weather_turn("What's the weather in Chengdu?", "Chengdu")
    calc = [{"role": "user", "content": "What is 2 + 3?"},
            assistant_calls(("c1", "calculator", {"expression": "2 + 3"})),
            tool_result("c1", "5"), {"role": "assistant", "content": "5"}]
    for messages, tools, what in [
            (user("上海呢？"), SEED_TOOLS, "no earlier call at all"),
            (user("And Shanghai?", *earlier), [CALCULATOR, TIME], "weather tool not offered now"),
            (user("And Shanghai?", *calc), [CALCULATOR, WEATHER], "calculator takes no place"),
            (user("Tell me about Shanghai", *earlier), SEED_TOOLS, "more than a place"),
            (user("What about tomorrow?", *earlier), SEED_TOOLS, "no place named")]:
        expect(ask(messages, tools)["finish_reason"], "stop", what)
    expect(text_of(ask(user("Thanks", *earlier), SEED_TOOLS)), "You're welcome!", "thanks")


# ------------------------------------------------------------------ a time zone written out

def test_an_explicit_time_zone_in_a_clause_wins_over_the_requests_places():
    for text, places in [("Weather in Tokyo and London, and the time in UTC?", ["Tokyo", "London"]),
                         ("东京和伦敦的天气，还有UTC时间？", ["东京", "伦敦"])]:
        expect(calls_of(ask(text, SEED_TOOLS)),
               [("get_current_weather", {"location": p, "unit": "celsius"}) for p in places]
               + [("get_current_time", {"timezone": "UTC"})], f"calls for {text!r}")


def test_a_time_zone_clause_of_its_own_still_gets_the_places_without_one():
    expect(calls_of(ask("Weather in Tokyo, and the time there?", SEED_TOOLS)),
           [("get_current_weather", {"location": "Tokyo", "unit": "celsius"}),
            ("get_current_time", {"timezone": "Asia/Tokyo"})], "no zone written: the place")


# ------------------------------------------------------------------ comparisons rank their own clause

POPULATION = {"type": "function", "function": {
    "name": "get_population", "description": "How many people live in a city, in millions",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"}}, "required": ["city"]}}}


def population_or_tool(name, arguments):
    if name == "get_population":
        city = CITY_OF.get(json.loads(arguments)["city"], json.loads(arguments)["city"])
        return json.dumps({"city": city, "population": {"Beijing": 21.9, "Shanghai": 24.9}[city]})
    return run_tool(name, arguments)


def test_a_comparison_ranks_only_the_results_of_its_own_clause():
    messages = [{"role": "user", "content":
                 "Which is warmer, Beijing or Shanghai, and how many people live there?"}]
    for _ in range(4):
        message = reply(body_for(messages, SEED_TOOLS + [POPULATION]))["message"]
        if not message.get("tool_calls"):
            break
        messages.append(message)
        messages += [tool_result(c["id"], population_or_tool(c["function"]["name"],
                                                             c["function"]["arguments"]))
                     for c in message["tool_calls"]]
    expect([(m["tool_calls"][0]["function"]["name"], len(m["tool_calls"]))
            for m in messages if m.get("tool_calls")],
           [("get_current_weather", 2), ("get_population", 1)], "rounds of calls")
    expect(message["content"], "Shanghai is warmer: 22°C, against 18°C in Beijing. "
           "get_population returned city: Shanghai; population: 24.9.", "final answer")


def test_a_comparison_without_tools_offered_ranks_only_the_fitting_tools_results():
    for question, expected in [
            ("Which is warmer, Beijing or Shanghai, and how many people live there?",
             "Shanghai is warmer: 22°C, against 18°C in Beijing."),
            ("北京和上海哪个更暖和？那里有多少人？", "上海更暖和：22°C，北京18°C。")]:
        messages = user(question) + [
            assistant_calls(("a", "get_current_weather", {"location": "Beijing"}),
                            ("b", "get_current_weather", {"location": "Shanghai"}),
                            ("c", "get_population", {"city": "Shanghai"})),
            tool_result("a", run_tool("get_current_weather", '{"location": "Beijing"}')),
            tool_result("b", run_tool("get_current_weather", '{"location": "Shanghai"}')),
            tool_result("c", {"city": "Shanghai", "population": 24.9})]
        for tools in (None, SEED_TOOLS + [POPULATION]):
            text = text_of(ask(messages, tools))
            assert text.startswith(expected), \
                f"{question!r}, tools={tools and len(tools)}: expected {expected!r} first, got {text!r}"


def test_warmer_never_ranks_a_result_without_a_temperature():
    for question in ("Which is warmer, Beijing or Shanghai?", "北京和上海哪个更暖和？"):
        messages = user(question) + [
            assistant_calls(("a", "get_current_weather", {"location": "Beijing"}),
                            ("b", "get_current_weather", {"location": "Shanghai"})),
            tool_result("a", {"location": "Beijing", "condition": "cloudy", "humidity_pct": 40}),
            tool_result("b", {"location": "Shanghai", "condition": "sunny", "humidity_pct": 60})]
        text = text_of(ask(messages, SEED_TOOLS))
        assert "warmer" not in text and "更暖和" not in text, \
            f"{question!r}: expected no ranking of humidity as a temperature, got {text!r}"


# ------------------------------------------------------------------ converters and enum sides

CONVERT_TEMPERATURE = {"type": "function", "function": {
    "name": "convert_temperature",
    "description": "Convert a temperature between Celsius and Fahrenheit",
    "parameters": {"type": "object", "properties": {
        "value": {"type": "number"},
        "from_unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "to_unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["value", "from_unit", "to_unit"]}}}


def converted(value, source, target):
    return [("convert_temperature", {"value": value, "from_unit": source, "to_unit": target})]


def test_enum_units_go_to_the_side_of_the_conversion_they_are_said_on():
    for text, expected in [("Convert 100 °F to Celsius", converted(100, "fahrenheit", "celsius")),
                           ("What is 16 °C in Fahrenheit?", converted(16, "celsius", "fahrenheit")),
                           ("Convert 100 degrees Fahrenheit into Celsius",
                            converted(100, "fahrenheit", "celsius")),
                           ("Convert from Celsius to Fahrenheit: 37",
                            converted(37, "celsius", "fahrenheit")),
                           ("把100华氏度换算成摄氏度", converted(100, "fahrenheit", "celsius")),
                           ("16摄氏度是多少华氏度？", converted(16, "celsius", "fahrenheit")),
                           ("华氏100度转换为摄氏度", converted(100, "fahrenheit", "celsius"))]:
        expect(calls_of(ask(text, [CONVERT_TEMPERATURE])), expected, f"call for {text!r}")


def test_enum_sides_can_come_from_parameter_descriptions():
    scales = {"type": "function", "function": {
        "name": "change_scale", "description": "Change a temperature reading to another scale",
        "parameters": {"type": "object", "properties": {
            "reading": {"type": "number"},
            "input_scale": {"type": "string", "enum": ["celsius", "fahrenheit"],
                            "description": "The scale to convert from"},
            "output_scale": {"type": "string", "enum": ["celsius", "fahrenheit"],
                             "description": "The scale to convert to"}},
            "required": ["reading", "input_scale", "output_scale"]}}}
    expect(calls_of(ask("Change 100 °F to Celsius", [scales])),
           [("change_scale", {"reading": 100, "input_scale": "fahrenheit",
                              "output_scale": "celsius"})], "sides from descriptions")


def test_a_unit_said_for_one_side_is_not_used_for_the_other():
    expect(text_of(ask("Convert 100 °F", [CONVERT_TEMPERATURE])),
           "Which to unit would you like: celsius or fahrenheit?", "the target is asked for")


def test_a_converter_beats_the_weather_tool_for_a_quantity_without_a_place():
    weather_then_converter = SEED_TOOLS + [CONVERT_TEMPERATURE]
    for tools in (weather_then_converter, weather_then_converter[::-1]):
        for text, expected in [
                ("What is 16 °C in Fahrenheit?", converted(16, "celsius", "fahrenheit")),
                ("How much is 30 °C in °F?", converted(30, "celsius", "fahrenheit")),
                ("Convert 100 °F to Celsius", converted(100, "fahrenheit", "celsius")),
                ("16摄氏度是多少华氏度？", converted(16, "celsius", "fahrenheit")),
                ("What's the weather in Chengdu in Fahrenheit?",
                 [("get_current_weather", {"location": "Chengdu", "unit": "fahrenheit"})]),
                ("What's the temperature in Chengdu in Fahrenheit?",
                 [("get_current_weather", {"location": "Chengdu", "unit": "fahrenheit"})]),
                ("成都现在多少华氏度？",
                 [("get_current_weather", {"location": "成都", "unit": "fahrenheit"})])]:
            expect(calls_of(ask(text, tools)), expected,
                   f"call for {text!r} (tools {[t['function']['name'] for t in tools]})")


def test_numbers_in_ordinary_text_do_not_call_a_converter():
    for text in ("I sent 7 messages", "1 change(s) so far", "Tell me a joke about 3 cats"):
        expect(ask(text, SEED_TOOLS + [CONVERT_TEMPERATURE, CONVERT_UNITS])["finish_reason"],
               "stop", f"reply to {text!r}")


# ----------------------------------------------------------------- questions the profile answers

PROFILE_PROMPT = {"role": "system", "content": "You are a helpful assistant.\nWhat you know "
                  "about this user: diet: vegetarian; units: fahrenheit; project: a trip planner"}


@pytest.mark.parametrize("question, said", [
    ("Am I vegetarian?", "Your profile says you're vegetarian."),
    ("What's my diet?", "Your profile says you're vegetarian."),
    ("Which units do I use?", "Your profile says you prefer Fahrenheit."),
    ("What am I working on?", "Your profile says you're working on a trip planner."),
    ("我吃素吗？", "你的资料里写着：你吃素。"),
    ("我是素食者吗？", "你的资料里写着：你吃素。"),
    ("我在做什么项目？", "你的资料里写着：你在做旅行规划项目。"),
])
def test_a_question_about_the_user_is_answered_from_the_profile_in_the_prompt(question, said):
    prompt = dict(PROFILE_PROMPT, content=PROFILE_PROMPT["content"].replace(
        "a trip planner", "旅行规划项目")) if "项目" in question else PROFILE_PROMPT
    body = {"messages": [prompt, {"role": "user", "content": question}]}
    assert reply(body)["message"]["content"] == said


def test_what_the_user_said_in_the_conversation_wins_over_the_profile():
    messages = [PROFILE_PROMPT, {"role": "user", "content": "I'm vegan now"},
                {"role": "assistant", "content": "OK."},
                {"role": "user", "content": "Am I vegetarian?"}]
    assert reply({"messages": messages})["message"]["content"] == "You told me you're vegan."


@pytest.mark.parametrize("question", ["Am I vegetarian?", "我吃素吗？"])
def test_without_a_profile_the_question_is_not_answered_by_a_guess(question):
    content = reply({"messages": [{"role": "user", "content": question}]})["message"]["content"]
    assert "profile" not in content and "资料" not in content and "vegetarian" not in content


@pytest.mark.parametrize("question", ["我吃素吗？", "我是素食者吗？", "我在做什么项目？", "Am I vegan?"])
def test_a_question_about_a_preference_states_none(question):
    assert u.preferences_in(question) == ()


@pytest.mark.parametrize("text", ["What should I eat in Chengdu?", "我在哪能吃素？",
                                  "Where can I find vegan food in Shanghai?", "I'm vegetarian"])
def test_questions_about_something_else_do_not_ask_the_profile(text):
    assert u.asked_preferences(text) == []


@pytest.mark.parametrize("text, is_time_now", [
    ("东京现在几点？", True), ("What time is it in Tokyo?", True),
    ("我去成都的高铁几点开？", False), ("我的航班几点起飞？", False),
    ("What time does my train leave?", False), ("明天几点集合？", False)])
def test_a_schedule_question_is_not_about_the_time_now(text, is_time_now):
    """"高铁几点开" asks about a timetable (the user's own, found in memory), not the clock:
    the time tool is not chosen for it, in either language."""
    from lesson_lib.offline import understand

    assert ("time" in understand.concepts(text)) is is_time_now
