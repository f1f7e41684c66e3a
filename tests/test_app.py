"""The chat app: every callback driven without a browser, through the widgets and the state.

Errors (a rate limit, a server error, a timeout, a 400 from a broken memory, a refused
setting, the max_turns cap) must end as readable notices in the chat with the memory still
valid; the inspector must draw what the next request sends."""

from __future__ import annotations

import inspect
import re
import sqlite3
import subprocess
import sys

import httpx2
import openai
import pytest
from messages import failing_weather_tools

import lesson_lib.app as app_module
from lesson_lib import llm
from lesson_lib.app import (
    STRATEGIES,
    ChatAppState,
    Strategy,
    add_strategy,
    available_backends,
    chat_app,
    describe_error,
)
from lesson_lib.memory import NaiveMemory, ShortTermMemory
from lesson_lib.offline import DEFAULT_CONTEXT_WINDOW, inject_fault, is_offline
from lesson_lib.protocol import ProtocolError, is_valid
from lesson_lib.stepper import StepperState
from lesson_lib.tokens import count_request

PITFALL = ["My name is Xiaoming.", "What's the weather in Chengdu?",
           "Which is warmer, Shanghai or Beijing?", "What time is it in New York?"]


def kinds(state):
    return [e.kind for e in state.entries]


def roles(state):
    return [m["role"] + ("(tool_calls)" if m.get("tool_calls") else "")
            for m in state.memory.to_api_format()]


def assert_valid(state):
    messages = state.memory.to_api_format()
    assert is_valid(messages), f"expected a memory the API accepts, got roles {roles(state)}"


def last(state):
    return state.entries[-1]


def everything_shown(state):
    """Every word the app shows: the inspector, the chat panel, each entry's text and detail."""
    lines = " ".join(f"{e.text} {e.detail}" for e in state.entries)
    return f"{state.memory_html()} {state.chat_html()} {lines} {state!r}"


def mock_client(answer, **options):
    """A real openai client whose every request gets `answer(request)`: a response, or an
    httpx2 exception. Nothing leaves the process (httpx2.MockTransport)."""
    return openai.OpenAI(api_key="sk-test-not-a-key", base_url="http://127.0.0.1:9/v1",
                         max_retries=0, **options, http_client=openai.DefaultHttpxClient(
                             transport=httpx2.MockTransport(answer)))


def error_body(status, message, code=None, type_="invalid_request_error"):
    return lambda request: httpx2.Response(status, json={"error": {
        "message": message, "type": type_, "param": None, "code": code}})


def raises(exception):
    def answer(request):
        raise exception("no answer", request=request)
    return answer


# ----------------------------------------------------------------- sending

@pytest.mark.parametrize("settings, expected", [
    ({"strategy": "LongTermMemory"}, "strategy must be one of ['ShortTermMemory', "),
    ({"backend": "openai"}, "backend must be one of ['offline'], got 'openai' (a real provider "
                            "needs LESSON_BACKEND=openai and OPENAI_API_KEY"),
])
def test_the_app_refuses_settings_it_cannot_honour(settings, expected, monkeypatch):
    monkeypatch.delenv("LESSON_BACKEND", raising=False)
    with pytest.raises(ValueError) as refused:
        ChatAppState(**settings)
    assert expected in str(refused.value), str(refused.value)
    assert ("backend" in str(refused.value)) == ("backend" in settings), \
        f"the message should speak only of the setting that is wrong: {refused.value}"


def test_enter_sends_the_text_and_shows_the_reply():
    view = chat_app()
    view.text.value = "My name is Xiaoming."  # what Enter does with continuous_update=False
    assert kinds(view.state) == ["user", "assistant"], f"got {kinds(view.state)}"
    assert last(view.state).text == "Nice to meet you, Xiaoming! How can I help?"
    assert view.text.value == "", f"the input should be emptied, got {view.text.value!r}"
    assert roles(view.state) == ["system", "user", "assistant"]
    assert "Nice to meet you" in view.chat.value and "Xiaoming" in view.memory.value


def test_send_button_sends_what_was_typed_once():
    view = chat_app()
    view.set_quietly(view.text, "value", "What is my name?")  # typed, not yet submitted
    view.send_button.click()
    assert kinds(view.state) == ["user", "assistant"], f"got {kinds(view.state)}"
    view.send_button.click()  # the input is empty now: nothing more is sent
    assert len(view.state.entries) == 2


@pytest.mark.parametrize("text", ["", "   ", None])
def test_empty_input_sends_nothing(text):
    state = ChatAppState()
    assert state.send(text) is None and state.entries == []
    assert roles(state) == ["system"]


def test_tool_calls_are_shown_while_the_turn_runs():
    state = ChatAppState()
    seen = []
    state.on_change = lambda: seen.append(kinds(state))
    state.send("What's the weather in Chengdu?")
    assert ["user", "tool"] in seen, f"expected the tool line before the answer, saw {seen}"
    tool = state.entries[1]
    assert "get_current_weather" in tool.text and "Chengdu" in tool.text
    assert '"temperature": 16' in tool.detail, f"the result should be shown, got {tool.detail}"
    assert kinds(state) == ["user", "tool", "assistant"]


def test_the_input_is_locked_while_a_turn_runs():
    view = chat_app()
    locked = []
    view.state.on_change = lambda: locked.append(view.text.disabled and view.send_button.disabled)
    view.text.value = "What's the weather in Chengdu?"
    assert locked and all(locked), f"expected the input locked during the turn, got {locked}"
    assert not view.text.disabled and not view.send_button.disabled


def test_a_failing_tool_result_is_shown_in_red_and_the_model_answers():
    tools = failing_weather_tools(ValueError("bad argument: no station for Chengdu"))
    state = ChatAppState(registry=tools)
    state.send("What's the weather in Chengdu?")
    tool = state.entries[1]
    assert tool.kind == "tool" and "error" in tool.detail, f"got {tool}"
    assert app_module.entry_html(tool).count(app_module.RED) == 1
    assert kinds(state)[-1] == "assistant"
    assert_valid(state)


SINGULAR_AS_PLURAL = re.compile(r"\b1 (?:message|model call|tool result|token)s\b|\(s\)")


def test_a_count_of_one_is_singular_in_the_inspector_and_the_notices():
    state = ChatAppState(budget=4)
    state.send("My name is Xiaoming.")
    state.send("What is my name?")  # a fifth message: the turn's trims drop the oldest one
    assert state.stats()["dropped"] == 1, f"expected 1 message dropped, got {state.stats()}"
    state.inject_fault("rate_limit")
    state.inject_fault("server_error", times=2)
    fresh = ChatAppState()
    fresh.set_strategy("NaiveMemory")  # rebuilt from the system prompt alone
    shown = everything_shown(state) + everything_shown(fresh)
    for wanted in ("The last turn or change of memory trimmed 1 message: struck through below.",
                   "The next model call will fail with 429 rate limit.",
                   "The next 2 model calls will fail with 500 server error.",
                   "Rebuilt from this conversation (1 message)", "<ChatAppState: 1 message,"):
        assert wanted in shown, f"expected {wanted!r} in what the app shows"
    wrong = SINGULAR_AS_PLURAL.findall(shown)
    assert not wrong, f"expected counts in the right number, got {wrong}"


def test_an_invalid_memory_is_described_as_what_the_api_would_do_with_the_list():
    state = ChatAppState(strategy="NaiveMemory", budget=4)
    for question in PITFALL[:3]:
        state.send(question)
    problems = state.stats()["problems"]
    assert problems, f"expected NaiveMemory(4) to split a round, got {roles(state)}"
    html = state.memory_html()
    assert "✗ Sent as it is, this list would be refused by the API (400):" in html
    assert "the next request gets a 400" not in html, (
        "the next add may trim the orphans away: only this list, as it is, is refused")
    for said in (problems[0].message, problems[0].explanation):  # the rule and the place
        assert app_module._esc(said) in html, f"expected {said!r} in the inspector"


# ----------------------------------------------------------------- /clear and commands

def test_clear_command_forgets_the_conversation_but_keeps_the_system_prompt():
    view = chat_app()
    view.text.value = "My name is Xiaoming."
    view.text.value = "/clear"
    assert roles(view.state) == ["system"]
    assert view.state.recording() == view.state.memory.to_api_format(), (
        "after /clear the recording restarts with the system prompt")
    assert last(view.state).kind == "info" and "cleared" in last(view.state).text
    view.text.value = "What is my name?"
    assert "Xiaoming" not in last(view.state).text, "the model should have forgotten the name"
    assert "My name is Xiaoming." in view.chat.value, "the old lines stay on screen"


def test_clear_button_does_the_same():
    view = chat_app()
    view.text.value = "My name is Xiaoming."
    view.clear_button.click()
    assert roles(view.state) == ["system"] and last(view.state).kind == "info"


def test_help_and_unknown_commands_are_answered_in_the_chat():
    state = ChatAppState()
    state.send("/help")
    assert last(state).kind == "info" and "/clear" in last(state).text
    state.send("/forget")
    assert last(state).kind == "notice" and "/forget" in last(state).text
    assert roles(state) == ["system"], "a command is not a message to the model"


# ----------------------------------------------------------------- strategies and budgets

def test_changing_the_strategy_rebuilds_the_memory_and_keeps_the_conversation():
    view = chat_app(budget=6)
    for question in PITFALL[:3]:
        view.text.value = question
    said = view.state.recording()
    view.strategy.value = "NaiveMemory"
    state = view.state
    assert isinstance(state.memory.inner, NaiveMemory) and state.budget == 6, (
        f"expected NaiveMemory(max_messages=6), got {state.memory!r}")
    assert state.recording() == said, "the conversation is kept"
    replayed = NaiveMemory(max_messages=6)
    for message in said:
        replayed.add(message)
    assert state.memory.to_api_format() == replayed.to_api_format(), (
        "the new memory is the conversation replayed into the new strategy")
    assert last(state).kind == "info" and "NaiveMemory(max_messages=6)" in last(state).text
    assert "NaiveMemory(max_messages=6)" in view.memory.value


def test_the_budget_slider_trims_at_once():
    view = chat_app()
    for question in PITFALL[:2]:
        view.text.value = question
    view.budget.value = 3
    state = view.state
    assert state.budget == 3 and state.memory.message_count() <= 3, f"got {roles(state)}"
    assert state.trimmed, "the inspector should have something struck through"
    assert "<del>" in view.memory.value and "The last turn or change of memory trimmed" in (
        view.memory.value)
    assert_valid(state)


INSPECTOR_SAYS = {"en": ("trimmed {n} messages: struck through below", "trimmed nothing"),
                  "zh": ("裁剪掉了 {n} 条消息：下面划了删除线", "什么也没裁剪掉")}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_inspector_shows_everything_a_budget_change_and_the_next_turn_trimmed(
        language, speak):
    speak(language)
    trimmed_n, nothing = INSPECTOR_SAYS[language]
    state = ChatAppState(strategy="TokenBudgetMemory")
    for question in PITFALL[:3]:
        state.send(question)
    before = state.memory.to_api_format()
    assert state.set_budget(400)
    after = state.memory.to_api_format()
    gone = [m for m in before if m not in after]
    assert len(gone) > 1, f"a tighter budget should drop several messages, kept {roles(state)}"
    assert state.trimmed == gone, "the inspector strikes through what the change dropped"
    assert state.stats()["dropped"] == len(gone)
    assert trimmed_n.format(n=len(gone)) in state.memory_html()
    assert state.memory.last_dropped != gone, (
        "the replay's last add alone trimmed less: the inspector must not show only that")
    before = state.memory.to_api_format()
    state.send("What time is it in Tokyo?")  # each add of the turn may trim: all of them count
    shown, kept = state.trimmed, state.memory.to_api_format()
    assert shown == [m for m in before if m not in kept], f"got {shown}"
    assert state.stats()["dropped"] == len(shown)
    state.send("/clear")
    assert state.trimmed == [] and nothing in state.memory_html()


def test_switching_strategy_keeps_a_budget_of_the_same_kind_and_moves_the_slider():
    view = chat_app(strategy="NaiveMemory")
    assert view.budget.value == STRATEGIES["NaiveMemory"].default
    view.budget.value = 7
    view.strategy.value = "ShortTermMemory"
    assert view.state.budget == 7 and view.budget.value == 7
    assert view.budget.description == "max_messages"


@pytest.mark.parametrize("budget", [0, -3, "ten"])
def test_an_impossible_budget_is_a_notice_and_changes_nothing(budget):
    state = ChatAppState()
    state.send("My name is Xiaoming.")
    before = state.memory
    assert state.set_budget(budget) is False
    assert state.memory is before and state.budget == STRATEGIES["ShortTermMemory"].default
    assert last(state).kind == "notice" and "max_messages" in last(state).text


def test_an_unknown_strategy_is_a_notice():
    state = ChatAppState()
    assert state.set_strategy("LongTermMemory") is False
    assert last(state).kind == "notice" and "ShortTermMemory" in last(state).detail


def test_naive_memory_breaks_as_a_readable_notice_not_a_crash():
    view = chat_app(strategy="NaiveMemory", budget=5)
    for question in PITFALL:
        view.text.value = question
    notice = last(view.state)
    assert notice.kind == "notice" and "400" in notice.text, f"got {notice}"
    assert "must be a response to a preceeding message with 'tool_calls'" in notice.detail
    assert "trim or move the whole group" in notice.detail, "the explanation should follow"
    assert "Sent as it is, this list would be refused by the API (400)" in view.memory.value
    assert "Traceback" not in view.chat.value + view.memory.value


def test_the_strategy_table_takes_a_new_strategy_in_one_line(monkeypatch):
    class KeepEverything(ShortTermMemory):
        """A memory that never trims (for this test)."""

        def _trim(self):
            pass

    monkeypatch.setattr(app_module, "STRATEGIES", dict(STRATEGIES))
    add_strategy(Strategy("KeepEverything", KeepEverything, "max_messages", 2, 1, 9, 1,
                          "drops nothing"))
    view = chat_app()
    assert "KeepEverything" in view.strategy.options
    view.strategy.value = "KeepEverything"
    assert isinstance(view.state.memory.inner, KeepEverything)


def test_token_budget_memory_is_offered_when_it_exists():
    budget = pytest.importorskip("lesson_lib.budget", reason="lesson_lib/budget.py is not there")
    assert {"TokenBudgetMemory", "MessageBudgetMemory"} <= set(STRATEGIES)
    state = ChatAppState(strategy="TokenBudgetMemory", budget=450)
    for question in PITFALL:
        state.send(question)
    assert isinstance(state.memory.inner, budget.TokenBudgetMemory)
    stats = state.stats()
    assert stats["token_limit"] == 450 and stats["token_limit_name"] == "token_budget"
    assert stats["tokens"] <= 450, f"the request must fit the budget, got {stats['tokens']}"
    assert stats["tokens"] == state.memory.inner.token_count(), "the gauge and the memory agree"
    assert "Tokens: <b>" in state.memory_html() and "(token_budget)" in state.memory_html()
    assert_valid(state)


def test_a_token_budget_covers_the_tools_so_ticking_one_rebuilds_the_memory():
    pytest.importorskip("lesson_lib.budget", reason="lesson_lib/budget.py is not there")
    view = chat_app(strategy="TokenBudgetMemory", budget=450)
    view.text.value = "What's the weather in Chengdu?"
    view.tools["get_current_time"].value = False
    inner = view.state.memory.inner
    assert [t["function"]["name"] for t in inner.tools] == ["get_current_weather"]
    assert view.state.stats()["tokens"] == inner.token_count()
    view.set_quietly(view.budget, "min", 100)
    view.budget.value = 150  # too small for this conversation: refused, nothing changes
    assert view.state.budget == 450 and last(view.state).kind == "notice"
    assert view.budget.value == 450, "the slider goes back to the state's budget"


# ----------------------------------------------------------------- tools and max_turns

def test_unticking_a_tool_stops_offering_it():
    view = chat_app()
    view.tools["get_current_weather"].value = False
    state = view.state
    assert state.tool_names == ["get_current_time"]
    assert [t["function"]["name"] for t in state.agent.tools] == ["get_current_time"]
    view.text.value = "What's the weather in Chengdu?"
    assert "tool" not in kinds(state), f"no weather tool was offered, got {kinds(state)}"
    view.tools["get_current_time"].value = False
    assert state.agent.tools is None, "with no tools ticked, no tools are sent (not [])"
    view.tools["get_current_weather"].value = True
    assert state.tool_names == ["get_current_weather"]


def test_an_unknown_tool_is_refused():
    state = ChatAppState()
    assert state.set_tools(["get_news"]) is False
    assert last(state).kind == "notice" and "get_news" in last(state).text
    assert state.tool_names == ["get_current_weather", "get_current_time"]


def test_the_max_turns_cap_is_a_notice_and_the_memory_stays_valid():
    view = chat_app()
    view.max_turns.value = 2
    assert view.state.max_turns == 2 and view.state.agent.max_turns == 2
    view.text.value = "Keep checking the weather in Chengdu until it is sunny."
    notice = last(view.state)
    assert notice.kind == "warning" and "max_turns=2" in notice.text, f"got {notice}"
    assert kinds(view.state).count("tool") == 2
    assert_valid(view.state)


@pytest.mark.parametrize("value", [0, -1, 2.5, True])
def test_an_impossible_max_turns_is_refused(value):
    state = ChatAppState()
    assert state.set_max_turns(value) is False
    assert state.max_turns == 5 and last(state).kind == "notice"


# ----------------------------------------------------------------- API errors

@pytest.mark.parametrize("kind, shown", [("rate_limit", "429"), ("server_error", "500"),
                                         ("timeout", "timed out")])
def test_an_api_error_on_the_first_call_is_a_notice(kind, shown):
    state = ChatAppState()
    assert state.inject_fault(kind) is True
    assert state.send("What's the weather in Chengdu?") is None
    notice = last(state)
    assert notice.kind == "notice" and shown in notice.text, f"got {notice}"
    assert roles(state) == ["system", "user"], "the question stays; nothing else was written"
    assert_valid(state)
    assert "Chengdu" in state.send("What's the weather in Chengdu?"), "the app goes on"


@pytest.mark.parametrize("kind", ["rate_limit", "server_error"])
def test_an_api_error_mid_turn_leaves_the_tool_round_whole(kind):
    state = ChatAppState()

    def after_the_tool_runs():
        if state.entries[-1].kind == "tool":
            inject_fault(state.client, kind)

    state.on_change = after_the_tool_runs
    state.send("What's the weather in Chengdu?")
    assert kinds(state) == ["user", "tool", "notice"], f"got {kinds(state)}"
    assert roles(state) == ["system", "user", "assistant(tool_calls)", "tool"]
    assert_valid(state)
    assert "Traceback" not in state.chat_html()


def test_the_fault_button_orders_a_fault_for_the_next_call():
    view = chat_app()
    view.fault.value = "server_error"
    view.fault_button.click()
    assert "500" in last(view.state).text
    view.text.value = "My name is Xiaoming."
    assert last(view.state).kind == "notice" and "500" in last(view.state).text


def test_an_unknown_fault_is_refused():
    state = ChatAppState()
    assert state.inject_fault("earthquake") is False and last(state).kind == "notice"


@pytest.mark.parametrize("error, title", [
    (RuntimeError("the cat sat on the keyboard"), "Something went wrong: RuntimeError"),
    (ProtocolError("Invalid parameter", explanation="add the tool replies"),
     "The memory refused a message")])
def test_any_other_error_is_a_notice_too(monkeypatch, error, title):
    view = chat_app()

    def broken_run(text):
        raise error

    monkeypatch.setattr(view.state.agent, "run", broken_run)
    view.text.value = "hello"
    assert last(view.state).kind == "notice" and last(view.state).text == title
    assert "Traceback" not in view.chat.value


def test_a_message_over_the_token_budget_is_refused_with_the_reason_and_the_fix():
    pytest.importorskip("lesson_lib.budget", reason="lesson_lib/budget.py is not there")
    state = ChatAppState(strategy="TokenBudgetMemory", budget=450)
    long = "Please remember this: " + "the quick brown fox jumps over the lazy dog " * 40
    assert state.send(long) is None
    notice = last(state)
    assert notice.kind == "notice", f"got {notice}"
    assert notice.text == "The memory refused your message: over its budget of 450 tokens", (
        f"the title should say what was refused and why, got {notice.text!r}")
    needed = re.search(r"over budget by [\d,]+ tokens.* needs ([\d,]+) tokens", notice.detail)
    assert needed, f"the detail should say how much is needed, got {notice.detail!r}"
    fix = (f"→ Raise the budget above {needed.group(1)} tokens, leaving room for the answer, "
           "or shorten your message")
    assert fix in notice.detail, f"expected the fix {fix!r}, got {notice.detail!r}"
    assert roles(state) == ["system"], "nothing was added to the memory"
    assert state.set_budget(int(needed.group(1).replace(",", "")) + 100) is True
    assert state.send(long) is not None, "with room above the budget named, the message fits"


@pytest.mark.parametrize("refused, what, fix", [
    ([{"role": "user", "content": "hi"}], "your message", "shorten your message"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"id": "call_a"}]},
      {"role": "tool", "tool_call_id": "call_a", "content": "{}"}],
     "the model's tool calls and their results", "ask for less at a time"),
    ([{"role": "assistant", "content": "a long answer"}], "the model's answer",
     "ask for less at a time")])
def test_a_budget_refusal_names_what_was_refused(refused, what, fix):
    budget = pytest.importorskip("lesson_lib.budget", reason="lesson_lib/budget.py is not there")
    title, detail = describe_error(budget.OverBudgetError(812, 600), [], refused)
    assert title == f"The memory refused {what}: over its budget of 600 tokens", f"got {title!r}"
    assert detail.startswith("OverBudgetError: over budget by 212 tokens."), f"got {detail!r}"
    assert "needs 812 tokens. Nothing was added to the memory." in detail, f"got {detail!r}"
    assert f"→ Raise the budget above 812 tokens, leaving room for the answer, or {fix}" in detail, (
        f"got {detail!r}")


def test_a_protocol_refusal_names_what_was_refused():
    error = ProtocolError("Invalid parameter", explanation="answer the open calls first")
    title, detail = describe_error(error, [], [{"role": "user", "content": "hi"}])
    assert title == "The memory refused your message", f"got {title!r}"
    assert detail == "Invalid parameter\n→ answer the open calls first", f"got {detail!r}"


NOT_MEMORY = "Invalid value for 'temperature': must be between 0 and 2."


@pytest.mark.parametrize("error, answer, title, hint, options", [
    (openai.RateLimitError, error_body(429, "Rate limit reached", "rate_limit_exceeded"),
     "The API answered 429 (rate_limit_exceeded)", "wait a moment and send again", {}),
    (openai.RateLimitError, error_body(429, "You exceeded your current quota",
                                       "insufficient_quota", "insufficient_quota"),
     "The API answered 429 (insufficient_quota)", "waiting will not help", {}),
    (openai.BadRequestError, error_body(400, NOT_MEMORY),
     "The API answered 400 (invalid_request_error)", "sending it again will not help", {}),
    (openai.AuthenticationError, error_body(401, "Incorrect API key provided", "invalid_api_key"),
     "The API answered 401 (invalid_api_key)", "Check OPENAI_API_KEY, and that OPENAI_BASE_URL is the provider", {}),
    (openai.PermissionDeniedError, error_body(403, "Project does not have access"),
     "The API answered 403 (invalid_request_error)", "check LESSON_MODEL", {}),
    (openai.NotFoundError, error_body(404, "The model does not exist", "model_not_found"),
     "The API answered 404 (model_not_found)", "Check the model name (LESSON_MODEL)", {}),
    (openai.InternalServerError, error_body(500, "The server had an error", None, "server_error"),
     "The API answered 500 (server_error)", "failed on its side: wait a moment", {}),
    (openai.InternalServerError, lambda request: httpx2.Response(503, text="Service Unavailable"),
     "The API answered 503 (Service Unavailable)", "failed on its side: wait a moment", {}),
    (openai.APITimeoutError, raises(httpx2.ReadTimeout), "No answer: the request timed out",
     "Send again", {}),
    (openai.APIConnectionError, raises(httpx2.ConnectError), "Could not reach the model",
     "Check the network or OPENAI_BASE_URL", {}),
    (openai.APIResponseValidationError, lambda request: httpx2.Response(200, json={"id": 7}),
     "The model's answer could not be read (APIResponseValidationError)",
     "does not answer in the OpenAI format", {"_strict_response_validation": True}),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_every_api_error_the_app_can_meet_is_a_readable_notice(monkeypatch, error, answer, title,
                                                                hint, options):
    client = mock_client(answer, **options)
    with pytest.raises(error):  # the SDK itself raises this class for this answer
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    monkeypatch.setattr(app_module, "make_client", lambda backend: client)
    state = ChatAppState()
    assert state.send("What's the weather in Chengdu?") is None
    notice = last(state)
    assert notice.kind == "notice" and notice.text == title, f"expected {title!r}, got {notice}"
    assert "→" in notice.detail and hint in notice.detail, (
        f"expected the hint {hint!r} after →, got {notice.detail!r}")
    assert roles(state) == ["system", "user"], "the question stays; nothing else was written"
    assert_valid(state)


# ----------------------------------------------------------------- backends

def test_only_the_offline_model_without_a_real_provider_in_the_environment():
    assert list(available_backends()) == ["offline"]
    state = ChatAppState()
    assert state.set_backend("openai") is False
    assert last(state).kind == "notice" and "LESSON_BACKEND=openai" in last(state).detail


def test_a_real_provider_is_offered_without_showing_its_key(monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("LESSON_BACKEND", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.deepseek.com/v1")
    monkeypatch.setenv("LESSON_MODEL", "deepseek-chat")
    monkeypatch.setattr(llm, "_client", None)  # the shared client is made afresh, then reset
    monkeypatch.setattr(llm, "_model", None)
    assert available_backends()["openai"] == "real model: deepseek-chat at api.deepseek.com"
    view = chat_app()
    view.backend.value = "openai"  # makes a client; nothing is sent
    state = view.state
    assert state.backend == "openai" and not is_offline(state.client)
    assert view.fault_button.disabled and state.inject_fault("rate_limit") is False
    state.post("notice", f"Incorrect API key provided: {secret}")
    shown = view.chat.value + view.memory.value + view.status.value + str(view.backend.options)
    assert secret not in shown, "the key must never appear in the app"
    view.backend.value = "offline"
    assert is_offline(view.state.client)


# ----------------------------------------------------------------- inspector and recording

def test_the_inspector_shows_counts_gauges_and_the_message_list():
    state = ChatAppState(budget=10)
    state.send("What's the weather in Chengdu?")
    stats = state.stats()
    assert stats["messages"] == 5 and stats["max_messages"] == 10
    assert stats["tokens"] == count_request(state.memory.to_api_format(), state.agent.tools)
    assert stats["token_limit"] == DEFAULT_CONTEXT_WINDOW and not stats["problems"]
    html = state.memory_html()
    assert "Messages: <b>5</b> / 10" in html
    assert f"Tokens: <b>{stats['tokens']}</b> / {DEFAULT_CONTEXT_WINDOW}" in html
    assert "ShortTermMemory(max_messages=10)" in html and "get_current_weather" in html
    again = ChatAppState(budget=10)
    again.send("What's the weather in Chengdu?")
    assert again.memory_html() == html and again.chat_html() == state.chat_html(), (
        "the HTML must be deterministic (nbval compares it)")


def test_the_recording_keeps_trimmed_messages_and_replays_to_the_same_memory():
    state = ChatAppState(budget=4)
    for question in PITFALL[:3]:
        state.send(question)
    said = state.recording()
    assert len(said) > state.memory.message_count()
    assert said[1] == {"role": "user", "content": PITFALL[0]}, "trimmed messages are recorded"
    replay = StepperState(state.to_recording())
    assert replay.last().request == state.memory.to_api_format(), (
        "replaying the recording shows exactly what the app's memory holds")
    assert replay.frame.message == said[-1]


def test_the_view_displays_as_a_widget_and_the_state_as_html():
    view = chat_app()
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert ChatAppState()._repr_html_().startswith("<table")


def test_scale_enlarges_the_chat_and_the_inspector_like_the_steppers():
    view = chat_app(scale=1.5)
    view.text.value = "My name is Xiaoming."
    assert view.chat.value.startswith('<div style="zoom:1.5"'), view.chat.value[:60]
    assert view.memory.value.startswith('<div style="zoom:1.5;'), view.memory.value[:60]
    assert view.state.scale == 1.5 and 'zoom:1.5' in view.state._repr_html_()
    for widget in (view.text, view.send_button, view.clear_button):
        assert widget.style.font_size == "20px", f"expected 20px type, got {widget.style.font_size}"
    plain = chat_app()
    assert plain.state.scale == 1 and plain.text.style.font_size is None
    assert '<div style="zoom:1.5;' in StepperState(view, scale=1.5).request_html(), (
        "the same scale zooms the stepper's picture by the same factor")
    stepper_scale = inspect.signature(StepperState).parameters["scale"]
    app_scale = inspect.signature(ChatAppState).parameters["scale"]
    assert app_scale.kind is stepper_scale.kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("scale", [0, -1, "big", True])
def test_an_impossible_scale_is_refused_by_the_app_and_the_stepper(scale):
    with pytest.raises(ValueError, match="scale"):
        ChatAppState(scale=scale)
    with pytest.raises(ValueError, match="scale"):
        StepperState([{"role": "user", "content": "hi"}], scale=scale)


def test_the_state_and_the_view_have_a_short_deterministic_repr():
    state = ChatAppState()
    tokens = state.stats()["tokens"]
    assert repr(state) == (f"<ChatAppState: 1 message, {tokens}/{DEFAULT_CONTEXT_WINDOW} tokens, "
                           "strategy=ShortTermMemory(max_messages=10), backend=offline>")
    budget = ChatAppState(strategy="TokenBudgetMemory", budget=450)
    budget.send("What's the weather in Chengdu?")
    again = ChatAppState(strategy="TokenBudgetMemory", budget=450)
    again.send("What's the weather in Chengdu?")
    text = repr(budget)
    assert text == repr(again), "the same conversation gives the same repr"
    assert text.startswith("<ChatAppState: 5 messages, ") and "/450 tokens" in text, text
    assert not re.search(r"0x[0-9a-f]{6,}|\d\d:\d\d", text), f"no address or time: {text}"
    broken = ChatAppState(strategy="NaiveMemory", budget=4)
    for question in PITFALL[:3]:
        broken.send(question)
    assert repr(broken).endswith(", ✗ the API would refuse this list>"), repr(broken)


def test_a_saved_notebook_shows_the_app_widget_as_its_short_repr():
    view = chat_app()
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == repr(view) == (
        f"<ChatAppView: {view.state.summary()}>"), bundle["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_importing_the_app_does_not_import_widgets_or_openai():
    code = ("import sys, lesson_lib.app, lesson_lib.stepper; "
            "print(sorted(m for m in ('ipywidgets', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"expected no heavy imports, got {out.stdout.strip()}"


# ----------------------------------------------------------------- sessions (with a store)

@pytest.fixture
def store_url(tmp_path):
    return f"sqlite:///{tmp_path / 'sessions.db'}"


def stored_rows(url):
    """session_id → how many message rows the database file holds, read with sqlite3."""
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        return dict(conn.execute("SELECT session_id, count(*) FROM messages "
                                 "GROUP BY session_id").fetchall())


def test_a_session_is_resumed_with_its_messages_and_the_profile_remembers(store_url):
    state = ChatAppState(store=store_url, session="trip")
    trip = state.session_id
    state.send("My name is Xiaoming")
    state.send("I'm vegetarian")
    said = state.memory.to_api_format()
    assert state.profile() == {"name": "Xiaoming", "diet": "vegetarian"}
    assert state.open_session("work") and state.session_id != trip
    work_prompt = state.memory.to_api_format()[0]["content"]
    assert "diet: vegetarian" in work_prompt, "a new session's system prompt reads the profile"
    state.send("What's the weather in Chengdu?")
    assert state.open_session("trip") and state.session_id == trip
    assert state.memory.to_api_format() == said, "the first session is resumed as it was"
    assert [e.text for e in state.entries if e.kind == "user"][-2:] == [
        "My name is Xiaoming", "I'm vegetarian"], "its conversation is shown again"
    assert [i.title for i in state.sessions()] == ["work", "trip"], (
        "the session a message was last added to first")
    history = state.profile_history()["diet"]
    assert len(history) == 1 and f"in session {trip}" in history[0], history
    assert "<b>diet</b>: vegetarian" in state.profile_html()
    assert "session='trip'" in repr(state)


def test_a_store_is_also_taken_as_a_session_store_and_opens_the_newest_session(store_url):
    from lesson_lib.sessions import SessionStore

    store = SessionStore(store_url)
    first = ChatAppState(store=store)
    assert first.session_title == app_module.DEFAULT_SESSION
    first.new_session("later")
    first.send("My name is Xiaoming")
    again = ChatAppState(store=store_url)
    assert again.session_title == "later" and len(again.memory.tape) == 5
    assert ChatAppState(store=store, user="someone else").sessions()[0].title == "chat"


def test_session_commands_in_the_chat(store_url):
    state = ChatAppState(store=store_url)
    state.send("/help")
    for command in ("/sessions", "/open NAME", "/new NAME", "/forget"):
        assert command in last(state).text
    state.send("/new Weekend Plans")
    assert state.session_title == "Weekend Plans" and last(state).text.startswith("New session")
    state.send("/sessions")
    assert "* Weekend Plans" in last(state).detail and "· chat" in last(state).detail
    state.send("/open chat")
    assert state.session_title == "chat"
    state.send("/open")
    state.send("/new   ")
    assert kinds(state)[-2:] == ["notice", "notice"]


def test_forget_asks_first_then_deletes_the_rows_for_good(store_url):
    state = ChatAppState(store=store_url, session="trip")
    state.send("I'm vegetarian")
    gone = state.session_id
    state.send("/forget")
    assert last(state).kind == "warning" and "/forget yes" in last(state).detail
    assert stored_rows(store_url)[gone] > 1, "nothing is deleted before the confirmation"
    state.send("What time is it in New York?")
    state.send("/forget yes")
    assert gone not in stored_rows(store_url), "its rows are gone from the database file"
    assert state.session_id != gone and state.session_title == "trip"
    assert last(state).kind == "notice" and last(state).text.startswith("Deleted session 'trip'")
    assert state.profile() == {"diet": "vegetarian"}, "the profile stays"
    assert "diet: vegetarian" in state.memory.to_api_format()[0]["content"]


def test_switching_strategy_in_a_stored_session_keeps_the_log(store_url):
    state = ChatAppState(store=store_url, strategy="ShortTermMemory", budget=4)
    for question in PITFALL:
        state.send(question)
    stored = state.memory.inner.stored_count()
    assert len(state.recording()) == stored > state.memory.message_count()
    assert state.set_strategy("TokenBudgetMemory", 2000)
    assert state.memory.inner.stored_count() == stored == len(state.recording())
    assert state.memory.message_count() > 4, "the larger window is filled from the stored log"
    assert "stored log" in last(state).detail
    assert_valid(state)
    assert not state.set_budget(300), "a window too small for the last turn is refused"
    assert state.budget == 2000 and last(state).kind == "notice"
    assert state.set_budget(1200) and state.memory.inner.stored_count() == stored
    state.send("What is my name?")
    assert state.memory.inner.stored_count() > stored
    state.send("/clear")
    assert state.memory.inner.stored_count() == 1, "the stored log keeps its system prompt"


def test_store_errors_and_a_missing_session_are_notices(store_url, monkeypatch):
    from lesson_lib.sessions import StoreError

    state = ChatAppState(store=store_url)
    state.store.delete_session(state.session_id)  # another program deletes it
    assert state.send("Hello") is None and last(state).kind == "notice"
    state.send("/forget yes")
    assert last(state).kind == "notice" and "Cannot delete" in last(state).text

    def broken(*args, **kwargs):
        raise StoreError("the database is locked")

    monkeypatch.setattr(state.store, "list_sessions", broken)
    state.send("/open other")
    assert last(state).text == "Cannot open session 'other'"
    assert "locked" in last(state).detail
    state.send("/sessions")
    assert last(state).kind == "notice" and state.sessions() == []


def test_without_a_store_the_session_commands_are_unknown():
    state = ChatAppState()
    assert state.sessions() == [] and state.profile() == {} and state.session_id is None
    state.send("/sessions")
    assert last(state).text == "Unknown command /sessions"
    assert "/forget" not in last(state).detail
    assert not state.open_session("trip") and last(state).text == "Sessions need a store"


def test_the_view_has_session_controls_only_with_a_store(store_url):
    plain = chat_app()
    assert not plain.stored and not hasattr(plain, "session_pick")
    assert "lesson-chat-sessions" not in str(plain.root.children[0].children[0]._dom_classes)
    view = chat_app(store=store_url, session="trip")
    view.text.value = "I'm vegetarian"
    assert "<b>diet</b>: vegetarian" in view.profile.value
    assert view.session_pick.value == view.state.session_id
    view.session_name.value = "work"
    assert view.state.session_title == "work" and view.session_name.value == ""
    assert [label for label, _ in view.session_pick.options][0].startswith("work")
    trip = [value for label, value in view.session_pick.options if label.startswith("trip")]
    view.session_pick.value = trip[0]
    assert view.state.session_title == "trip" and view.state.memory.message_count() > 1
    view.delete_button.click()
    assert view.delete_button.description == "Delete for good?"
    assert trip[0] in stored_rows(store_url)
    view.delete_button.click()
    assert trip[0] not in stored_rows(store_url) and view.delete_button.description == "Delete"
    view.session_name.value = "third"
    view.new_button.click()  # an empty name box: nothing happens
    assert len(view.state.sessions()) == 3


def test_a_commit_that_fails_is_a_notice_and_the_window_is_rebuilt_from_the_store(store_url,
                                                                                   monkeypatch):
    state = ChatAppState(store=store_url)
    state.send("My name is Xiaoming")
    before = state.memory.to_api_format()
    append, failures = state.store.append, []

    def commit_fails_once(session_id, messages, *, then=None):
        def then_fail(unit):
            then(unit)  # the window takes the unit, then the commit fails
            if not failures:
                failures.append(unit)
                raise RuntimeError("disk I/O error")
        return append(session_id, messages, then=then_fail)

    monkeypatch.setattr(state.store, "append", commit_fails_once)
    assert state.send("What's the weather in Chengdu?") is None
    assert failures and last(state).kind == "notice"
    assert state.memory.to_api_format() == before, "the window is what the store holds"
    assert state.send("What is my name?") and last(state).kind == "assistant"
    assert_valid(state)


# ----------------------------------------------------------------- long-term memory

@pytest.fixture
def longterm(store_url):
    from lesson_lib.embeddings import Embedder
    from lesson_lib.longterm import LongTermMemory

    memory = LongTermMemory(store_url, "xiaoming", embedder=Embedder.offline())
    memory.write("I am vegetarian.", source="user", ref="s-1", at="2026-02-11T12:00:00Z")
    memory.write("We chose the G89 train to Chengdu on 14 May.", source="session", ref="s-2",
                 at="2026-03-02T10:00:00Z")
    return memory


def test_without_longterm_nothing_of_it_shows():
    state = ChatAppState()
    state.send("What's the weather in Chengdu?")
    state.send("/clear")
    assert "recalled" not in kinds(state) and state.agent.longterm is None
    shown = everything_shown(state)
    for unwanted in ("long-term memory", "Long-term memory", "Recalled", "lesson-chat-sent"):
        assert unwanted not in shown, f"{unwanted!r} shows without longterm"
    assert last(state).text == "Memory cleared: a new conversation starts."


def test_each_message_shows_what_was_recalled_for_it(longterm):
    state = ChatAppState(longterm=longterm)
    state.send("When is our train to Chengdu?")
    state.send("What's the weather in Chengdu?")
    assert kinds(state) == ["user", "recalled", "assistant",
                            "user", "recalled", "tool", "assistant"], kinds(state)
    recalled = state.entries[4]
    assert recalled.text.startswith("Recalled from long-term memory (2 memories")
    hits = state.agent.last_recalled
    assert [(r.date, r.source, r.ref, r.text, r.score) for r in recalled.recalled] == [
        (h.created_at[:10], h.source, h.ref, h.text, h.score) for h in hits]
    html = state.chat_html()
    assert html.count("lesson-chat-recalled") == 2
    for r in recalled.recalled:
        for shown in (r.date, r.source, app_module._esc(r.text), f"{r.score:.3f}"):
            assert shown in html, f"expected {shown!r} in the chat"
    assert not any(m["content"] == state.agent.last_context["content"]
                   for m in state.memory.to_api_format()), "the context is never stored"


def test_nothing_recalled_is_said_in_one_line(store_url):
    from lesson_lib.embeddings import Embedder
    from lesson_lib.longterm import LongTermMemory

    state = ChatAppState(longterm=LongTermMemory(store_url, "nobody",
                                                 embedder=Embedder.offline()))
    state.send("Hello")
    assert state.entries[1].text == "Nothing recalled from long-term memory for this message."
    assert "nothing was recalled for the last message" in state.memory_html()


def test_the_inspector_shows_the_request_as_sent_with_the_context_not_stored(longterm):
    state = ChatAppState(longterm=longterm)
    assert "shown here once it is sent" in state.memory_html()
    state.send("When is our train to Chengdu?")
    html = state.memory_html()
    assert "Long-term memory: 2 memories of xiaoming" in html
    assert "sent, NOT stored" in html and "lesson-chat-sent" in html
    sent = state.agent.last_request
    assert sent.index(state.agent.last_context) == len(sent) - 2, "just before the question"
    stored = state.memory.to_api_format()
    assert is_valid(sent) and [m for m in sent if m != state.agent.last_context] == stored[:-1]


def test_clear_keeps_the_conversation_in_longterm_memory_and_says_so(longterm):
    state = ChatAppState(longterm=longterm)
    state.send("We will sit in carriage 7.")
    session = state.agent.session_id
    state.send("/clear")
    kept = [m for m in longterm.all() if m.ref == session]
    assert len(kept) == 1 and kept[0].source == "session"
    notice = state.entries[-2]
    assert notice.kind == "info" and notice.text == (
        f"This conversation is kept in long-term memory, as the experience of session "
        f"{session!r}:") and notice.detail == kept[0].text
    assert last(state).text == "Memory cleared: a new conversation starts."
    assert roles(state) == ["system"] and state.agent.session_id == f"{session}#2"
    state.set_max_turns(3)  # the agent is made again: its session goes on
    assert state.agent.session_id == f"{session}#2"
    state.send("/clear")  # nothing said since: nothing to keep, no notice
    assert last(state).text == "Memory cleared: a new conversation starts."
    assert len([m for m in longterm.all() if m.source == "session"]) == 2


def test_if_the_conversation_cannot_be_kept_nothing_is_cleared(longterm, monkeypatch):
    state = ChatAppState(longterm=longterm)
    state.send("We will sit in carriage 7.")

    def fails(**_):
        raise RuntimeError("database is locked")

    monkeypatch.setattr(longterm, "remember_session", fails)
    state.send("/clear")
    assert last(state).kind == "notice"
    assert last(state).text == "This conversation could not be kept in long-term memory"
    assert "database is locked" in last(state).detail and "Nothing was cleared" in \
        last(state).detail
    assert roles(state) == ["system", "user", "assistant"]


def test_new_and_open_keep_the_session_and_forget_deletes_its_memories(store_url, longterm):
    state = ChatAppState(store=store_url, longterm=longterm)
    state.send("We will sit in carriage 7.")
    monday = state.session_id
    assert state.agent.session_id == monday, "a stored session files under its own id"
    state.send("/new tuesday")
    kept = [m for m in longterm.all() if m.ref == monday]
    assert len(kept) == 1 and kept[0].source == "session"
    assert [e.kind for e in state.entries[-2:]] == ["info", "info"]
    assert state.entries[-2].text.startswith("This conversation is kept in long-term memory")
    assert state.entries[-1].text == "New session 'tuesday'."
    assert state.agent.session_id == state.session_id != monday
    before = len(state.entries)
    state.send("/open chat")  # tuesday is empty: nothing to keep
    assert state.session_id == monday
    assert state.entries[before].text.startswith("Resumed session 'chat'"), "no 'kept' notice"
    state.send("/forget yes")
    assert "and 1 long-term memory from it" in last(state).text, last(state).text
    assert not [m for m in longterm.all() if m.ref == monday]


def test_a_trim_keeps_what_it_dropped_as_experience_with_a_notice(longterm):
    state = ChatAppState(longterm=longterm, budget=2)
    state.send("We will sit in carriage 7.")
    state.send("Which carriage?")
    session = state.agent.session_id
    notices = [e for e in state.entries if e.text.startswith("What the trim dropped")]
    kept = [m for m in longterm.all() if m.ref == session]
    assert notices and len(kept) == 1 and notices[-1].detail == kept[0].text
    state.set_budget(3)  # rebuilt: what was dropped before is not summarised again
    assert state.agent.forgotten and state.agent.keep_experience() is None


def test_longterm_tools_are_offered_only_when_asked(longterm):
    names = [t["function"]["name"] for t in ChatAppState(longterm=longterm).agent.tools]
    assert "search_memory" not in names
    state = ChatAppState(longterm=longterm, longterm_tools=True)
    names = [t["function"]["name"] for t in state.agent.tools]
    assert {"search_memory", "save_memory"} <= set(names)
    assert state.tool_schemas() == state.agent.tools


@pytest.mark.parametrize("budget", [0, True, "300"])
def test_a_longterm_budget_that_makes_no_sense_is_refused(longterm, budget):
    with pytest.raises(ValueError, match="longterm_budget"):
        ChatAppState(longterm=longterm, longterm_budget=budget)


def test_recalled_text_is_escaped_and_chinese_is_kept(longterm):
    longterm.write('<img src=x onerror="alert(1)"> 我喜欢喝咖啡 & <b>bold</b>', source="document",
                   ref="<script>x</script>.md")
    state = ChatAppState(longterm=longterm)
    state.send("我喜欢喝什么咖啡？")
    html = state.chat_html()
    for raw in ("<img", "<script>", "<b>bold"):
        assert raw not in html, f"untrusted markup {raw!r} reached the page"
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; 我喜欢喝咖啡 &amp; &lt;b&gt;" in html
    assert "&lt;script&gt;x&lt;/script&gt;.md" in html
    assert "overflow-wrap:anywhere" in app_module.recalled_html("h", state.entries[1].recalled)
    assert "<img" not in state.memory_html()


def test_the_view_shows_the_recalled_block_and_the_request_as_sent(longterm):
    view = chat_app(longterm=longterm)
    seen = []
    refresh = view.state.on_change
    view.state.on_change = lambda: (refresh(), seen.append(view.memory.value))
    view.text.value = "What's the weather in Chengdu?"
    assert "lesson-chat-recalled" in view.chat.value and "G89" in view.chat.value
    assert "lesson-chat-sent" in view.memory.value and "NOT stored" in view.memory.value
    assert seen and all("message None" not in html for html in seen), (
        "mid-turn, the inspector never names a context it cannot place")


def test_delete_takes_what_came_of_the_session_and_says_when_the_disk_still_holds_it(
        store_url, longterm):
    """Delete goes through lesson_lib.forgetting.forget_session: the session's long-term
    memories go with its log, in one transaction; a reader holding the SQLite file is named
    in a warning instead of a claim that everything is gone."""
    state = ChatAppState(store=store_url, longterm=longterm)
    state.send("We will sit in carriage 7.")
    state.send("/new tuesday")  # keeps monday as experience, filed under its id
    state.send("/open chat")
    monday = state.session_id
    assert [m for m in longterm.all() if m.ref == monday]
    reader = sqlite3.connect(store_url.removeprefix("sqlite:///"), isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM messages").fetchone()
    try:
        state.send("/forget yes")
    finally:
        reader.execute("COMMIT")
        reader.close()
    assert state.entries[-2].text.startswith("Deleted session 'chat' for good")
    assert "and 1 long-term memory from it" in state.entries[-2].text
    assert last(state).kind == "warning"
    assert last(state).text == "Not everything of session 'chat' is gone from the disk yet"
    assert "another connection is reading" in last(state).detail
    assert "close that connection" in last(state).detail
    assert not [m for m in longterm.all() if m.ref == monday]
    assert monday not in stored_rows(store_url)


# ----------------------------------------------------------------- a stored session: three layers

@pytest.mark.parametrize("lang, monday, fact, tuesday, answers", [
    ("en", "I'm vegetarian", "Remember that my sister lives in Hangzhou.",
     ("Am I vegetarian?", "Where does my sister live?"),
     ("Your profile says you're vegetarian.", "“my sister lives in Hangzhou”")),
    ("zh", "我是素食者", "记住：我妹妹住在杭州。", ("我吃素吗？", "我妹妹住在哪里？"),
     ("你的资料里写着：你吃素。", "说过：“我妹妹住在杭州”")),
])
def test_a_stored_session_carries_the_profile_and_long_term_memory_to_tuesday(
        store_url, lang, monday, fact, tuesday, answers):
    state = ChatAppState(store=store_url, session="monday")
    assert state.longterm is not None and state.longterm_tools, "on by default with a store"
    state.send(monday)
    state.send(fact)
    assert len(state.longterm.user_facts()) == 1, "the fact is kept as the user's"
    state.store.close()
    later = ChatAppState(store=store_url, session="tuesday")  # a restart, a new session
    assert later.send(tuesday[0]) == answers[0]
    assert answers[1] in later.send(tuesday[1])
    assert any(e.kind == "recalled" and answers[1].split("“")[1].rstrip("”") in e.detail
               for e in later.entries), "the chat shows what was recalled"


def test_a_changed_preference_is_in_the_next_request_and_the_inspector(store_url):
    state = ChatAppState(store=store_url, session="monday")
    state.send("I'm vegetarian")
    state.store.close()
    later = ChatAppState(store=store_url, session="monday")  # resumed: its prompt predates it
    assert later.window()[0]["content"].endswith("What you know about this user: diet: "
                                                  "vegetarian")
    later.send("I'm vegan now")
    later.send("Am I vegetarian?")
    sent = later.agent.last_request[0]["content"]
    assert sent.endswith("diet: vegan") and "vegetarian" not in sent
    assert later.window()[0]["content"] == sent, "the inspector draws what is sent"
    drawn = later.memory_html().split("Long-term memory")[0]
    assert "about this user: diet: vegan" in drawn
    assert "about this user: diet: vegetarian" not in drawn
    stored = later.memory.tape[0]["content"]
    assert "What you know about this user" not in stored, "the stored log is not rewritten"


def test_long_term_memory_can_be_turned_off_with_a_store(store_url):
    state = ChatAppState(store=store_url, longterm=False)
    assert state.longterm is None and not hasattr(state.agent, "window")
    state.send("I'm vegetarian")
    assert state.profile() == {"diet": "vegetarian"}
