"""The classroom stepper: moves and bounds, the request at each step, the moment a broken
history breaks the rules, the recorded conversations, and replaying a chat from the app."""

from __future__ import annotations

import pytest

from lesson_lib import clock
from lesson_lib.app import chat_app
from lesson_lib.memory import NaiveMemory, ShortTermMemory
from lesson_lib.protocol import find_problems, is_valid
from lesson_lib.stepper import (
    RECORDINGS,
    Recording,
    StepperState,
    TapedMemory,
    agent_loop_chain,
    frames,
    open_round,
    seed_three_rounds,
    stepper,
    trim_pitfall,
)
from lesson_lib.text import plural

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "What's the weather in Chengdu?"}
ASKS = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "call_a", "type": "function",
     "function": {"name": "get_current_weather", "arguments": '{"location": "Chengdu"}'}}]}
RESULT = {"role": "tool", "tool_call_id": "call_a", "content": '{"temperature": 16}'}
ANSWER = {"role": "assistant", "content": "Chengdu is cloudy, 16°C."}
TWO = dict(ASKS, tool_calls=[dict(ASKS["tool_calls"][0], id=i) for i in ("call_b", "call_c")])
RESULT_B, RESULT_C = (dict(RESULT, tool_call_id=i) for i in ("call_b", "call_c"))


def roles(messages):
    return [m["role"] + ("(tool_calls)" if m.get("tool_calls") else "") for m in messages]


@pytest.fixture(scope="module")
def recorded():
    """Each recorded conversation, built once for the module."""
    return {name: build() for name, build in RECORDINGS.items()}


# ----------------------------------------------------------------- moving

def test_next_back_first_last_move_one_message_at_a_time():
    s = StepperState([SYSTEM, USER, ASKS, RESULT, ANSWER])
    assert (s.step, s.total, s.at_first) == (1, 5, True)
    assert s.next().message == USER and s.step == 2
    assert s.last().message == ANSWER and s.at_last
    assert s.back().message == RESULT and s.step == 4
    assert s.first().message == SYSTEM and s.step == 1


def test_moves_stop_at_the_ends():
    s = StepperState([SYSTEM, USER])
    s.back()
    assert s.step == 1, f"Back on the first step should stay at 1, got {s.step}"
    s.last()
    s.next()
    assert s.step == 2, f"Next on the last step should stay at 2, got {s.step}"
    assert s.go(99).step == 2 and s.go(-4).step == 1


def test_buttons_drive_the_state_and_are_disabled_at_the_ends():
    view = stepper([SYSTEM, USER, ANSWER])
    assert view.first_button.disabled and view.back_button.disabled
    assert not view.next_button.disabled
    view.next_button.click()
    assert view.state.step == 2 and "Step 2 of 3" in view.position.value
    view.last_button.click()
    assert view.state.step == 3 and view.next_button.disabled and view.last_button.disabled
    assert "Chengdu is cloudy" in view.caption.value
    view.back_button.click()
    view.first_button.click()
    assert view.state.step == 1 and view.first_button.disabled


def test_an_empty_recording_is_refused():
    with pytest.raises(ValueError, match="no messages"):
        StepperState([])


# ----------------------------------------------------------------- what each step shows

def test_each_step_shows_the_prefix_with_the_newest_message_large():
    s = StepperState([SYSTEM, USER, ANSWER])
    s.go(2)
    assert s.frame.request == [SYSTEM, USER]
    assert "font-size:30px" in s.caption_html() and "What&#x27;s the weather" in s.caption_html()
    assert "The request now: 2 messages" in s.request_html()
    assert "✓ The API would accept this request" in s.banner_html()


def test_an_open_tool_round_is_a_wait_not_a_broken_rule():
    s = StepperState([SYSTEM, USER, ASKS, RESULT, ANSWER])
    frame = s.go(3)
    assert frame.problems == [] and frame.waiting == ["call_a"], (
        f"expected a wait for call_a, got problems {frame.problems} waiting {frame.waiting}")
    assert "Not sendable yet: waiting for 1 tool result (call_a)" in s.banner_html()
    assert "(not a request yet)" in s.request_html()
    assert s.broken_at is None


def test_a_recording_that_ends_inside_a_tool_round_is_broken_at_its_end():
    s = StepperState([SYSTEM, USER, ASKS])
    assert s.broken_at == 3, f"no reply will ever come: expected step 3, got {s.broken_at}"


def test_a_broken_history_is_marked_at_the_first_bad_step():
    orphan = [SYSTEM, USER, RESULT, ANSWER]  # a tool reply with no call before it
    s = StepperState(Recording("A broken history", orphan))
    assert s.broken_at == 3 and not s.frames[1].problems
    s.go(3)
    banner = s.banner_html()
    assert "The rules break here" in banner
    assert "must be a response to a preceeding message with &#x27;tool_calls&#x27;" in banner
    assert "trim or move the whole group" in banner, "the explanation belongs in the banner"
    assert "the rules break at step 3" in s.position_text()
    s.next()
    assert "Still broken (since step 3)" in s.banner_html()


def banner_at(s, step):
    s.go(step)
    return s.banner_html()


def test_still_broken_counts_from_the_start_of_the_current_broken_run():
    said = [SYSTEM, USER, ASKS, RESULT, ANSWER, USER, ANSWER, USER, TWO, RESULT_B, RESULT_C,
            ANSWER, USER]
    s = StepperState(Recording("Breaks, mends, breaks again", said,
                               memory=lambda: NaiveMemory(max_messages=3)))
    broken = [f.step for f in s.frames if f.problems]
    assert broken == [5, 11, 12], f"expected two runs (5; 11-12), got broken steps {broken}"
    assert "The rules break here: the API would answer 400" in banner_at(s, 5)
    assert "✓ The API would accept this request" in banner_at(s, 6), "a trim mended the list"
    assert "The rules break here again: the API would answer 400" in banner_at(s, 11)
    banner = banner_at(s, 12)
    assert "Still broken (since step 11)" in banner, (
        f"expected the run that started at step 11, got {banner[:400]}")
    assert s.broken_since == 11 and s.broken_at == 5
    assert "the rules break at step 5" in s.position_text(), "the first break is still named"
    s.go(6)
    assert s.broken_since is None


def test_a_count_of_one_is_singular_in_the_stepper():
    assert [plural(1, "message"), plural(0, "message"), plural(2, "tool result"),
            plural(3, "child", "children")] == ["1 message", "0 messages", "2 tool results",
                                                 "3 children"]
    s = StepperState([SYSTEM, USER, ASKS, RESULT])
    request = s.request_html()
    assert "The request now: 1 message" in request and "1 messages" not in request, request
    assert "waiting for 1 tool result (call_a)" in banner_at(s, 3)
    assert "The message list now: 3 messages (not a request yet)" in s.request_html()
    taped = TapedMemory(ShortTermMemory(max_messages=5))
    taped.add(SYSTEM)
    assert repr(taped).endswith("; 1 message on tape)"), repr(taped)
    shown = [banner_at(s, k) + s.caption_html() for k in range(1, 5)]
    assert not any("(s)" in text for text in shown), "counts say 1 message, 2 messages"


def test_a_memory_that_refuses_a_message_is_shown_not_raised():
    rec = Recording("Refused", [SYSTEM, RESULT], memory=lambda: ShortTermMemory(max_messages=5))
    frame = StepperState(rec).last()
    assert len(frame.problems) == 1, f"one refusal, shown once; got {frame.problems}"
    assert "answers no open call" in frame.problems[0].explanation
    assert frame.request == [SYSTEM, RESULT]


def test_open_round_names_the_calls_still_waiting():
    two = dict(ASKS, tool_calls=ASKS["tool_calls"] + [dict(ASKS["tool_calls"][0], id="call_b")])
    assert open_round([USER, two]) == ["call_a", "call_b"]
    assert open_round([USER, two, RESULT]) == ["call_b"]
    assert open_round([USER, ASKS, RESULT]) == [] and open_round([USER]) == []


def test_the_html_is_deterministic_and_plain_text_exists():
    a, b = StepperState([SYSTEM, USER, ASKS, RESULT]), StepperState([SYSTEM, USER, ASKS, RESULT])
    a.go(3)
    b.go(3)
    assert a.html() == b.html() == a._repr_html_()
    assert "zoom:1.3" in a.html()
    assert "Step 3 of 4: newest is assistant" in str(a)


def test_the_view_displays_as_a_widget():
    assert "application/vnd.jupyter.widget-view+json" in stepper([SYSTEM])._repr_mimebundle_()


def test_the_state_and_the_view_have_a_short_deterministic_repr():
    s = StepperState(Recording("A broken history", [SYSTEM, USER, RESULT, ANSWER]))
    assert repr(s) == "<StepperState: 'A broken history', step 1 of 4, the rules break at step 3>"
    s.last()
    assert repr(s) == "<StepperState: 'A broken history', step 4 of 4, the rules break at step 3>"
    fine = StepperState([SYSTEM, USER, ANSWER])
    assert repr(fine) == ("<StepperState: 'A recorded conversation', step 1 of 3, the API would "
                          "accept every step>"), repr(fine)
    view = stepper([SYSTEM, USER, ANSWER])
    view.next_button.click()
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == repr(view) == (
        "<StepperView: 'A recorded conversation', step 2 of 3, the API would accept every "
        "step>"), f"a saved notebook shows this line where the widget cannot be drawn: {bundle}"


def test_taped_memory_says_what_its_memory_refused():
    taped = TapedMemory(ShortTermMemory(max_messages=5))
    taped.add(SYSTEM)
    with pytest.raises(ValueError):
        taped.add(RESULT)  # answers no call
    assert taped.last_refused == [RESULT] and taped.tape == [SYSTEM], (
        f"expected RESULT refused and kept off the tape, got {taped.last_refused}, {taped.tape}")
    taped.add_many([USER, ASKS, RESULT])
    assert taped.last_refused == [] and len(taped.tape) == 4


# ----------------------------------------------------------------- the recorded conversations

def test_seed_three_rounds_is_the_source_articles_conversation(recorded):
    rec = recorded["seed_three_rounds"]
    assert roles(rec.messages) == ["system", "user", "assistant", "user", "assistant(tool_calls)",
                                   "tool", "assistant", "user", "assistant"]
    assert "Xiaoming" in rec.messages[-1]["content"] and "16" in rec.messages[6]["content"]
    assert StepperState(rec).broken_at is None
    assert rec.notes[5].startswith("Round 2") and rec.notes[9].startswith("Round 3")


def test_trim_pitfall_breaks_at_the_fourth_question(recorded):
    rec = recorded["trim_pitfall"]
    s = StepperState(rec)
    frame = s.go(s.broken_at)
    assert frame.message == {"role": "user", "content": "What time is it in New York?"}
    assert frame.step == len(rec.messages) and s.at_last
    assert roles(frame.request) == ["system", "tool", "tool", "assistant", "user"]
    assert [m.get("tool_calls") is not None for m in frame.dropped] == [True]
    assert "<del>" in s.request_html(), "what the trim dropped is struck through"
    assert all(not f.problems for f in s.frames[:-1]), "every earlier request was valid"
    live_error = rec.notes[frame.step].split("The live run got: ")[1]
    assert live_error == find_problems(frame.request)[0].message, (
        "the banner must show the same text the API answered in the live run")
    assert "The rules break here" in s.banner_html()


def test_agent_loop_chain_is_three_model_calls(recorded):
    rec = recorded["agent_loop_chain"]
    asks = [m for m in rec.messages if m.get("tool_calls")]
    assert [len(m["tool_calls"]) for m in asks] == [2, 1], f"got {roles(rec.messages)}"
    assert asks[1]["tool_calls"][0]["function"]["name"] == "get_current_time"
    assert rec.messages[-1]["role"] == "assistant" and is_valid(rec.messages)
    assert sorted(rec.notes) == [3, 6, 8]


@pytest.mark.parametrize("name", list(RECORDINGS))
def test_recorded_conversations_are_the_same_on_every_run(recorded, name):
    assert RECORDINGS[name]().messages == recorded[name].messages


def test_recordings_do_not_depend_on_the_frozen_time_variable(monkeypatch, recorded):
    monkeypatch.delenv("LESSON_FROZEN_TIME", raising=False)
    assert agent_loop_chain().messages == recorded["agent_loop_chain"].messages
    assert seed_three_rounds().title == "The seed's three rounds"
    assert trim_pitfall().memory().max_messages == 5


# ----------------------------------------------------------------- recording the chat app

def test_taped_memory_keeps_every_message_and_restarts_on_clear():
    taped = TapedMemory(NaiveMemory(max_messages=2))
    for m in (SYSTEM, USER, ANSWER, USER):
        taped.add(m)
    assert taped.tape == [SYSTEM, USER, ANSWER, USER] and taped.message_count() == 2
    taped.clear_non_system()
    assert taped.tape == [SYSTEM] == taped.to_api_format()


def test_a_chat_from_the_app_replays_in_the_stepper():
    app = chat_app(budget=4)
    for question in ["My name is Xiaoming.", "What's the weather in Chengdu?", "What is my name?"]:
        app.text.value = question
    state = app.state
    view = stepper(app)  # the app, its state, or anything with to_recording()
    s = view.state
    assert [f.message for f in s.frames] == state.recording()
    view.last_button.click()
    assert s.frame.request == state.memory.to_api_format(), (
        "the last step shows exactly what the app's memory holds")
    assert s.broken_at is None and any(f.dropped for f in s.frames)
    assert "ShortTermMemory(max_messages=4)" in view.title.value


def test_frames_of_a_plain_list_use_prefixes():
    steps = frames(Recording("plain", [SYSTEM, USER, ANSWER]))
    assert [len(f.request) for f in steps] == [1, 2, 3] and not any(f.dropped for f in steps)


@pytest.mark.parametrize("source", [None, "What's my name?", 42, [{"role": "user"}, "oops"]])
def test_something_that_is_not_a_conversation_is_refused_with_what_to_pass(source):
    with pytest.raises(TypeError, match=r"the stepper replays a Recording, a list of message "
                                        r"dicts or a chat app, got .*: e\.g\. stepper\("):
        StepperState(source)


def test_a_memory_is_replayed_as_what_it_holds_now():
    memory = ShortTermMemory()
    memory.add_system("You are a helpful assistant.")
    memory.add({"role": "user", "content": "My name is Xiaoming."})
    assert StepperState(memory).recording.messages == memory.to_api_format()


@pytest.mark.parametrize("record", [trim_pitfall, agent_loop_chain])
def test_the_chinese_edition_records_the_same_conversation_in_chinese(record, speak):
    """Notebooks 04 and 06 replay their recordings in the learner's language: the Chinese
    one asks the same questions in Chinese, and breaks (or not) at the same steps."""
    from lesson_lib.stepper import StepperState

    shapes = {}
    for lang in ("en", "zh"):
        speak(lang)
        with clock.frozen(clock.EXAMPLE):
            recording = record()
        steps = StepperState(recording)
        asked = [m["content"] for m in recording.messages if m["role"] == "user"]
        assert all(("小明" in q or "天气" in q or "几点" in q or "暖和" in q) == (lang == "zh")
                   for q in asked), asked
        shapes[lang] = ([m["role"] for m in recording.messages], sorted(recording.notes),
                        steps.broken_at)
    assert shapes["en"] == shapes["zh"]
