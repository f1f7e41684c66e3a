"""lesson_lib.streaming.assemble_message: a streamed reply, joined, is the unstreamed one."""

from __future__ import annotations

import pytest

from lesson_lib.offline import MODEL_ID, offline_client
from lesson_lib.streaming import assemble_message, delta_lines
from lesson_lib.tools import get_tools_schema

QUESTIONS = ["My name is Xiaoming", "What's the weather in Chengdu?",
             "What's the weather in Shanghai and Beijing?", "上海和北京的天气怎么样？",
             "What time is it in Tokyo, and the weather in Paris?"]


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("n", [1, 3])
def test_every_choice_joins_into_its_unstreamed_message(question, n):
    client = offline_client()
    request = {"model": MODEL_ID, "messages": [{"role": "user", "content": question}],
               "tools": get_tools_schema(), "n": n}
    chunks = list(client.chat.completions.create(**request, stream=True,
                                                 stream_options={"include_usage": True}))
    whole = client.chat.completions.create(**request)
    for choice in whole.choices:
        want = choice.message.model_dump(exclude_none=True)
        want.setdefault("content", None)
        assert assemble_message(chunks, choice=choice.index) == want


def test_plain_dict_chunks_are_read_too():
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
              {"choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]},
              {"choices": [], "usage": {"total_tokens": 3}}]
    assert assemble_message(chunks) == {"role": "assistant", "content": "Hi!"}
    lines = delta_lines(chunks, limit=1)
    assert lines == ["choice 0: {'role': 'assistant', 'content': 'Hi'}", "… 1 more delta"]
