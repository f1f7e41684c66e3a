"""validate_messages / validate_request reproduce the API's rules and its exact error texts."""

from types import SimpleNamespace

import pytest

from lesson_lib.protocol import (
    ProtocolError,
    assistant_to_dict,
    context_length_error,
    find_problems,
    is_valid,
    validate_messages,
    validate_request,
)


def call(cid, name="get_current_weather", args='{"location": "Chengdu"}'):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def asks(*ids):
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]}


def result(cid, content="cloudy, 16°C"):
    return {"role": "tool", "tool_call_id": cid, "content": content}


USER = {"role": "user", "content": "What's the weather in Chengdu?"}
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_current_weather", "description": "weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                   "required": ["location"]}}}


def raised(messages) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        validate_messages(messages)
    return info.value


def test_a_complete_tool_round_is_valid():
    messages = [SYSTEM, USER, asks("call_a"), result("call_a"),
                {"role": "assistant", "content": "Chengdu is cloudy, 16°C."}]
    validate_messages(messages)
    assert is_valid(messages) and find_problems(messages) == []


def test_parallel_results_may_come_in_any_order():
    validate_messages([USER, asks("call_a", "call_b"), result("call_b"), result("call_a")])


def test_a_user_message_between_call_and_result_gives_the_pairing_error():
    e = raised([USER, asks("call_a"), {"role": "user", "content": "And Shanghai?"},
                result("call_a")])
    assert e.message == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_a")
    assert (e.param, e.code, e.status, e.index) == ("messages.[2].role", None, 400, 2)
    assert "call_a" in e.explanation


def test_missing_ids_are_joined_with_comma_space():
    e = raised([USER, asks("call_a", "call_b", "call_c"), result("call_b"),
                {"role": "user", "content": "hi"}])
    assert e.message.endswith("did not have response messages: call_a, call_c")
    assert e.param == "messages.[3].role"


def test_a_call_at_the_very_end_without_results_is_refused():
    e = raised([USER, asks("call_a")])
    assert "call_a" in e.message and e.param == "messages.[1].role"


def test_orphan_tool_message_text_keeps_the_apis_misspelling():
    e = raised([SYSTEM, result("call_a"), USER])
    assert e.message == ("Invalid parameter: messages with role 'tool' must be a response to a "
                         "preceeding message with 'tool_calls'.")
    assert e.param == "messages.[1].role" and e.code is None


def test_a_tool_message_after_a_text_answer_is_an_orphan():
    e = raised([USER, asks("call_a"), result("call_a"),
                {"role": "assistant", "content": "done"}, result("call_a")])
    assert "preceeding" in e.message and e.index == 4


def test_unknown_tool_call_id():
    e = raised([USER, asks("call_a"), result("call_x")])
    assert e.message == ("Invalid parameter: 'tool_call_id' of 'call_x' not found in "
                         "'tool_calls' of previous message.")
    assert e.param == "messages.[2].tool_call_id"


def test_null_content_on_a_user_message():
    e = raised([{"role": "user", "content": None}])
    assert e.message == "Invalid value for 'content': expected a string, got null."
    assert e.param == "messages.[0].content"


def test_null_content_is_fine_only_with_tool_calls():
    validate_messages([USER, asks("call_a"), result("call_a")])
    e = raised([USER, {"role": "assistant", "content": None}])
    assert e.param == "messages.[1].content"


def test_unknown_role_tool_without_id_and_empty_tool_calls_are_named():
    assert raised([{"role": "robot", "content": "x"}]).code == "invalid_value"
    assert raised([USER, {"role": "tool", "content": "x"}]).param == "messages.[1].tool_call_id"
    e = raised([USER, {"role": "assistant", "content": "", "tool_calls": []}])
    assert e.code == "empty_array" and e.param == "messages[1].tool_calls"


def test_arguments_must_be_a_json_string_not_a_dict():
    bad = {"role": "assistant", "content": None,
           "tool_calls": [{"id": "call_a", "type": "function",
                           "function": {"name": "f", "arguments": {"x": 1}}}]}
    e = raised([USER, bad, result("call_a")])
    assert e.code == "invalid_type" and "arguments" in e.param and "json.dumps" in e.explanation


def test_empty_and_non_list_messages():
    assert raised([]).code == "empty_array"
    assert raised("hello").code == "invalid_type"
    assert raised([USER, "oops"]).param == "messages[1]"


def test_find_problems_lists_every_problem_in_order():
    problems = find_problems([result("call_z"), USER, asks("call_a"), USER, result("call_a")])
    assert [p.index for p in problems] == [0, 3, 4]


def test_error_body_has_the_api_shape():
    body = raised([USER, asks("call_a")]).body()
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == "invalid_request_error"


def test_str_of_the_error_adds_the_explanation_for_learners():
    e = raised([result("call_a")])
    assert str(e).startswith(e.message) and "→" in str(e)


# ------------------------------------------------------------------ requests

def request(**fields):
    return {"model": "m", "messages": [USER], **fields}


def refused(body) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        validate_request(body)
    return info.value


def test_a_good_request_passes():
    validate_request(request(tools=[WEATHER_TOOL], tool_choice="auto"))
    validate_request(request(tools=[WEATHER_TOOL], tool_choice={
        "type": "function", "function": {"name": "get_current_weather"}}))


def test_missing_model():
    e = refused({"messages": [USER]})
    assert e.message == "you must provide a model parameter" and e.param is None


def test_unknown_tool_choice_string():
    e = refused(request(tools=[WEATHER_TOOL], tool_choice="any"))
    assert e.message == "Invalid value: 'any'. Supported values are: 'none', 'auto', and 'required'."
    assert (e.param, e.code) == ("tool_choice", "invalid_value")


def test_tool_choice_without_tools():
    e = refused(request(tool_choice="auto"))
    assert e.message == ("Invalid value for 'tool_choice': 'tool_choice' is only allowed when "
                         "'tools' are specified.")
    assert e.param == "tool_choice" and e.code is None


def test_tool_choice_naming_a_missing_function():
    e = refused(request(tools=[WEATHER_TOOL], tool_choice={
        "type": "function", "function": {"name": "get_news"}}))
    assert e.message == "Tool choice 'get_news' not found in 'tools' parameter."


def test_empty_tools():
    e = refused(request(tools=[]))
    assert e.message == ("Invalid 'tools': empty array. Expected an array with minimum length 1, "
                         "but got an empty array instead.")
    assert (e.param, e.code) == ("tools", "empty_array")


def test_object_schema_without_properties():
    broken = {"type": "function", "function": {"name": "get_news",
                                               "parameters": {"type": "object"}}}
    e = refused(request(tools=[WEATHER_TOOL, broken]))
    assert e.message == ("Invalid schema for function 'get_news': In context=(), object schema "
                         "missing properties.")
    assert (e.param, e.code) == ("tools[1].function.parameters", "invalid_function_parameters")


def test_schema_that_is_not_json_schema():
    broken = {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"x": {"type": "strnig"}}}}}
    assert refused(request(tools=[broken])).code == "invalid_function_parameters"


def test_request_messages_are_validated_too():
    assert "preceeding" in refused({"model": "m", "messages": [result("call_a")]}).message


def test_context_length_error_texts():
    e = context_length_error(4097, 4294)
    assert e.message == ("This model's maximum context length is 4097 tokens. However, your "
                         "messages resulted in 4294 tokens. Please reduce the length of the "
                         "messages.")
    e = context_length_error(4097, 4143, 95)
    assert e.message.endswith("resulted in 4238 tokens (4143 in the messages, 95 in the "
                              "functions). Please reduce the length of the messages or functions.")
    assert (e.param, e.code) == ("messages", "context_length_exceeded")


# ------------------------------------------------------------------ conversion

def test_assistant_to_dict_from_a_plain_object_with_tool_calls():
    message = SimpleNamespace(content=None, tool_calls=[SimpleNamespace(
        id="call_a", type="function",
        function=SimpleNamespace(name="get_current_weather", arguments='{"location":"成都"}'))])
    assert assistant_to_dict(message) == {
        "role": "assistant", "content": "",
        "tool_calls": [{"id": "call_a", "type": "function", "function": {
            "name": "get_current_weather", "arguments": '{"location":"成都"}'}}]}


def test_assistant_to_dict_from_a_dict_without_tool_calls():
    assert assistant_to_dict({"role": "assistant", "content": "hi", "tool_calls": None}) == {
        "role": "assistant", "content": "hi"}


def test_assistant_to_dict_from_a_real_sdk_message():
    from openai.types.chat import ChatCompletionMessage

    message = ChatCompletionMessage.model_validate({
        "role": "assistant", "content": None,
        "tool_calls": [call("call_a")]})
    converted = assistant_to_dict(message)
    assert converted["content"] == "" and converted["tool_calls"] == [call("call_a")]
    validate_messages([USER, converted, result("call_a")])


def test_tool_calls_must_be_a_list_even_for_one_call():
    e = raised([USER, {"role": "assistant", "content": None, "tool_calls": call("call_a")},
                result("call_a")])
    assert (e.code, e.param) == ("invalid_type", "messages[1].tool_calls")


def test_two_results_for_one_call_are_refused():
    e = raised([USER, asks("call_a"), result("call_a"), result("call_a")])
    assert e.message == ("Invalid parameter: Duplicate value for 'tool_call_id' of 'call_a', in "
                         "messages[2] and messages[3].")
    assert e.param == "messages.[3].tool_call_id"
