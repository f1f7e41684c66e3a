"""Token counts follow the cookbook's recipe with an encoding that needs no download."""

from lesson_lib.tokens import count_message, count_messages, count_request, count_text, count_tools

COOKBOOK_EXAMPLE = [  # the cookbook's example; it reports 129 prompt tokens for gpt-4-0613
    {"role": "system", "content": "You are a helpful, pattern-following assistant that "
     "translates corporate jargon into plain English."},
    {"role": "system", "name": "example_user",
     "content": "New synergies will help drive top-line growth."},
    {"role": "system", "name": "example_assistant",
     "content": "Things working well together will increase revenue."},
    {"role": "system", "name": "example_user", "content": "Let's circle back when we have more "
     "bandwidth to touch base on opportunities for increased leverage."},
    {"role": "system", "name": "example_assistant",
     "content": "Let's talk later when we're less busy about how to do better."},
    {"role": "user", "content": "This late pivot means we don't have time to boil the ocean "
     "for the client deliverable."},
]

TOOL = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a given location",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
        "unit": {"type": "string", "description": "The unit of temperature to return",
                 "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"]}}}


def test_cookbook_example_counts_129_tokens_as_the_api_reported():
    assert count_messages(COOKBOOK_EXAMPLE) == 129


def test_chinese_and_english_text_are_counted():
    assert count_text("") == 0
    assert count_text("My name is Xiaoming") == 5
    assert count_text("我叫小明") > 0


def test_message_overhead_is_three_plus_one_per_name():
    plain = {"role": "user", "content": "hi"}
    named = {"role": "user", "content": "hi", "name": "xm"}
    assert count_message(plain) == 3 + count_text("user") + count_text("hi")
    assert count_message(named) == count_message(plain) + count_text("xm") + 1


def test_tool_calls_count_their_names_and_arguments():
    bare = {"role": "assistant", "content": ""}
    calling = {**bare, "tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": "get_current_weather", "arguments": '{"location": "Chengdu"}'}}]}
    assert count_message(calling) > count_message(bare) + count_text('{"location": "Chengdu"}')


def test_tools_add_their_overhead_and_nothing_when_absent():
    assert count_tools(None) == 0 and count_tools([]) == 0
    assert count_tools([TOOL]) > 12 + 7
    two = count_tools([TOOL, TOOL])
    assert two == 2 * count_tools([TOOL]) - 12, "the 12-token end marker is counted once"
    messages = [{"role": "user", "content": "weather?"}]
    assert count_request(messages, [TOOL]) == count_messages(messages) + count_tools([TOOL])
