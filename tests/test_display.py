"""display draws message lists deterministically, escapes what it shows, ties each tool call
to its result, flags protocol problems and dropped messages, and works without IPython."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from lesson_lib import memory as memory_module
from lesson_lib.display import (
    CALL_COLOURS,
    ROLE_COLOURS,
    SOURCE_HEADER,
    show_messages,
    show_request,
    show_source,
    side_by_side,
    source_of,
)
from lesson_lib.memory import NaiveMemory, ShortTermMemory
from lesson_lib.protocol import find_problems
from lesson_lib.tokens import count_request

CALL_ID = "call_Y6qJ7ofLgOrBnMD5WbVAeiRV"
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "成都和上海的天气怎么样？"}


def call(cid, location):
    return {"id": cid, "type": "function", "function": {
        "name": "get_current_weather",
        "arguments": json.dumps({"location": location}, ensure_ascii=False)}}


ROUND = [
    SYSTEM, USER,
    {"role": "assistant", "content": None,
     "tool_calls": [call(CALL_ID, "成都"), call("call_b", "上海")]},
    {"role": "tool", "tool_call_id": CALL_ID,
     "content": '{"location": "Chengdu", "temperature": 16, "condition": "cloudy"}'},
    {"role": "tool", "tool_call_id": "call_b",
     "content": '{"location": "Shanghai", "temperature": 22, "condition": "sunny"}'},
    {"role": "assistant", "content": "Chengdu is cloudy, 16°C; Shanghai is sunny, 22°C."},
]
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a place",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                   "required": ["location"]}}}


def naive_orphan():
    """The notebook-04 history: NaiveMemory drops the assistant(tool_calls), keeps its reply."""
    memory = NaiveMemory(max_messages=4)
    for m in [SYSTEM, {"role": "user", "content": "成都天气？"},
              {"role": "assistant", "content": None, "tool_calls": [call("call_a", "成都")]},
              {"role": "tool", "tool_call_id": "call_a", "content": "cloudy, 16°C"},
              {"role": "assistant", "content": "Chengdu is cloudy."},
              {"role": "user", "content": "上海呢？"}]:
        memory.add(m)
    return memory


class TagBalance(HTMLParser):
    VOID = {"br"}

    def __init__(self):
        super().__init__()
        self.stack, self.tags = [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        opened = self.stack.pop()
        assert opened == tag, f"expected </{opened}>, got </{tag}>"


def parsed(html_text):
    parser = TagBalance()
    parser.feed(html_text)
    assert parser.stack == [], f"unclosed tags: {parser.stack}"
    return parser


# ----------------------------------------------------------------- HTML

def test_html_is_deterministic():
    first = show_messages(ROUND, title="one round", highlight=2)._repr_html_()
    second = show_messages([dict(m) for m in ROUND], title="one round", highlight=2)._repr_html_()
    assert first == second, "the same messages drew different HTML"


def test_html_uses_inline_styles_only_and_is_well_formed():
    html_text = side_by_side(show_messages(ROUND), show_request(ROUND[:2], [WEATHER_TOOL]),
                             titles=["a", "b"])._repr_html_()
    tags = parsed(html_text).tags
    assert not tags & {"style", "script", "link"}, f"GitHub strips these tags: {tags}"
    assert " id=" not in html_text and " class=" not in html_text, "no ids or classes expected"


def test_html_escapes_content():
    view = show_messages([{"role": "user", "content": "<script>alert('hi')</script> & more"}],
                         title="<b>title</b>")
    html_text = view._repr_html_()
    assert "<script>" not in html_text and "<b>title</b>" not in html_text, html_text
    assert "&lt;script&gt;alert(&#x27;hi&#x27;)&lt;/script&gt; &amp; more" in html_text


def test_role_chips_have_their_colours():
    html_text = show_messages(ROUND)._repr_html_()
    for role, colour in ROLE_COLOURS.items():
        assert f"background:{colour};color:#ffffff;border-radius:10px" in html_text, (
            f"expected a {colour} chip for {role}")


def test_each_call_and_its_result_share_a_badge():
    html_text = show_messages(ROUND)._repr_html_()
    for number, cid in ((1, CALL_ID), (2, "call_b")):
        badge = (f'<span title="{cid}" style="background:{CALL_COLOURS[number - 1]};'
                 f'color:#ffffff;border-radius:4px')
        assert html_text.count(badge) == 2, (
            f"expected the #{number} badge on the call and on its result, "
            f"got {html_text.count(badge)}")
    assert html_text.count("↳ answers") == 2 and "✓ answered at [3]" in html_text


def test_long_content_is_shortened_with_a_count():
    view = show_messages([{"role": "user", "content": "x" * 450}])
    assert "… (150 more characters)" in view._repr_html_() and "… (150 more" in str(view)


def test_a_truncation_marker_stays_visible_when_the_content_is_shortened():
    from lesson_lib.budget import truncate_text  # noqa: PLC0415

    cut = truncate_text("The weather report. " * 400, 150)
    assert cut.endswith(" characters]") and len(cut) > 300, "expected a long cut with a marker"
    marker = cut.rpartition("\n")[2]
    view = show_messages([{"role": "user", "content": "weather?"},
                          {"role": "assistant", "content": "look it up"},
                          {"role": "user", "content": cut}])
    assert marker in str(view) and marker in view._repr_html_(), \
        f"expected {marker!r} in the picture, got: {str(view)[-200:]!r}"
    assert "more characters)" in str(view), "expected the text itself to be shortened"


def test_orphan_tool_message_is_flagged_with_the_explanation():
    memory = naive_orphan()
    view = show_messages(memory, dropped=memory.last_dropped)
    problem = find_problems(memory.to_api_format())[0]
    html_text = view._repr_html_()
    assert "background:#fef2f2" in html_text, "expected the orphan's row in red"
    for text in (problem.message, problem.explanation):
        assert text.replace("'", "&#x27;") in html_text, f"missing {text!r}"
        assert text in str(view), f"missing {text!r} in the text form"
    assert "the API would refuse this list (1 problem)" in str(view)


def test_unanswered_call_is_flagged():
    view = show_messages(ROUND[:3])
    assert "✗ no reply" in view._repr_html_() and "✗ no reply" in str(view)
    assert "did not have response messages" in str(view)


def test_dropped_messages_are_marked():
    memory = naive_orphan()
    view = show_messages(memory, dropped=memory.last_dropped)
    html_text = view._repr_html_()
    assert "dropped by trim" in html_text and "opacity:0.55" in html_text
    assert "<del>get_current_weather" in html_text, "expected the dropped call struck through"
    assert "[×] assistant  (dropped by trim)" in str(view), str(view)
    # the orphan keeps the badge of the call that was dropped: the picture shows the lost tie
    badge = f'<span title="call_a" style="background:{CALL_COLOURS[0]};'
    assert html_text.count(badge) == 2


def test_highlighted_row_is_marked():
    view = show_messages(ROUND, highlight=[1])
    assert "background:#fef9c3" in view._repr_html_()
    assert str(view).splitlines()[1].endswith("◀"), str(view)


# ----------------------------------------------------------------- text

def test_text_fallback_shows_the_same_information():
    text = str(show_messages(ROUND, title="one round"))
    lines = text.splitlines()
    assert lines[0] == "one round"
    assert lines[1] == "[0] system     You are a helpful assistant.", lines[1]
    assert lines[3].startswith(
        '[2] assistant  → get_current_weather({"location": "成都"})  #1 call_Y6qJ…'), lines[3]
    assert lines[4].strip().startswith('→ get_current_weather({"location": "上海"})  #2 call_b')
    assert lines[5].startswith("[3] tool       ↳ answers #1 call_Y6qJ…  {"), lines[5]
    assert lines[-1] == "✓ 6 messages: the API would accept this list", lines[-1]


def test_repr_and_pretty_equal_the_text():
    view = show_messages(ROUND)

    class Printer:
        def text(self, value):
            self.value = value

    printer = Printer()
    view._repr_pretty_(printer, False)
    assert repr(view) == str(view) == printer.value


def test_empty_list_says_the_api_refuses_it():
    text = str(show_messages([]))
    assert "empty array" in text and text.endswith("the API would refuse this list (1 problem)")


def test_a_memory_can_be_shown_directly():
    memory = ShortTermMemory()
    memory.add_many(ROUND)
    assert str(show_messages(memory)) == str(show_messages(ROUND))


def test_display_works_without_ipython():
    code = ("import sys; sys.modules['IPython'] = None\n"
            "from lesson_lib.display import show_messages\n"
            "print(show_messages([{'role': 'user', 'content': 'hi'}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "[0] user       hi" in done.stdout, done.stdout


# ----------------------------------------------------------------- source

@pytest.mark.parametrize("obj", [ShortTermMemory._trim, NaiveMemory, memory_module._reply_problem])
def test_show_source_is_the_librarys_source(obj):
    view = show_source(obj)
    header, _, body = str(view).partition("\n")
    assert repr(view) == str(view) and body == source_of(obj) == inspect.getsource(obj)
    assert header == f"{SOURCE_HEADER}{obj.__module__}:{obj.__qualname__}"


def test_show_source_html_is_highlighted_inline_and_deterministic():
    html_text = show_source(ShortTermMemory._trim)._repr_html_()
    assert html_text == show_source(ShortTermMemory._trim)._repr_html_()
    assert "lesson_lib.memory:ShortTermMemory._trim" in html_text
    assert "<style" not in html_text and 'style="color:' in html_text, "expected inline colours"
    plain = re.sub(r"<[^>]+>", "", html_text).replace("&quot;", '"').replace("&gt;", ">")
    assert "while self.message_count() > self.max_messages:" in plain


# ----------------------------------------------------------------- request

def test_show_request_counts_tokens_and_names_tools():
    view = show_request(ROUND[:2], tools=[WEATHER_TOOL], tool_choice="auto")
    tokens = count_request(ROUND[:2], [WEATHER_TOOL])
    line = f"tools: get_current_weather · tool_choice: auto · {tokens} tokens"
    assert line in str(view) and line in view._repr_html_(), str(view)


def test_show_request_flags_tool_choice_without_tools():
    view = show_request(ROUND[:2], tool_choice="required")
    assert "tools: (none sent)" in str(view)
    assert "'tool_choice' is only allowed when 'tools' are specified" in str(view)


# ----------------------------------------------------------------- side by side

def test_side_by_side_places_views_in_one_row():
    forgets = [{"role": "user", "content": "What's my name?"}]
    remembers = [{"role": "user", "content": "My name is Xiaoming"},
                 {"role": "assistant", "content": "Nice to meet you, Xiaoming!"}, *forgets]
    view = side_by_side(forgets, show_messages(remembers), titles=["call 2 alone", "with history"])
    html_text = view._repr_html_()
    assert html_text.count("<td") == 2 + 3 * 4, "expected two cells around the two views"
    assert show_messages(remembers)._repr_html_() in html_text
    text = str(view)
    assert text.index("── call 2 alone ──") < text.index("── with history ──")
    assert "[2] user       What's my name?" in text


def test_side_by_side_needs_one_title_per_view():
    with pytest.raises(ValueError, match="one title per view"):
        side_by_side(ROUND, ROUND, titles=["only one"])


@pytest.mark.parametrize("value", [None, "What's my name?", {"role": "user", "content": "hi"}])
def test_something_that_is_not_a_message_list_is_refused_with_an_example(value):
    with pytest.raises(TypeError, match=r"show a list of message dicts or a memory, got .*"
                                        r"e\.g\. show_messages\(memory\)"):
        show_messages(value)
