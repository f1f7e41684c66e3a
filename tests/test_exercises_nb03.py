"""The self-checks of notebook 03: each passes a correct answer, fails wrong ones with the
right hint, and never raises at the learner."""

from __future__ import annotations

import json
import re
import types

import pytest
from check_support import Twin, in_both_languages, twin

from lesson_lib.exercises import nb03
from lesson_lib.i18n import by_language
from lesson_lib.protocol import find_problems, is_valid
from lesson_lib.tools import ToolRegistry, execute_tool

PASSED = "All checks passed."


def report_of(check, answer, capsys) -> str:
    """What the check prints for `answer`, in English (it must return a bool that agrees
    with the report, and never raise), after the same answer, built with the Chinese
    edition's data when it is a Twin, got the same verdict and report in Chinese."""
    made = answer if isinstance(answer, Twin) else twin(lambda: answer)
    runs = in_both_languages(check, made, capsys)
    (returned, out), (zh_returned, zh_out) = runs["en"], runs["zh"]
    assert zh_returned == ("全部检查通过。" in zh_out), zh_out
    assert isinstance(returned, bool), f"checks return True or False, got {returned!r}"
    assert returned == (PASSED in out), (
        f"the check returned {returned} but its report says:\n{out}")
    return out


def failed_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.lstrip().startswith("❌")]


# ----------------------------------------------------------------- exercise 1: your own tool

def registry_with(fn, zh: str | None = None) -> Twin:
    """A registry with `fn`, built in each language: with `zh` as its docstring in Chinese
    (what a Chinese learner writes)."""
    def make() -> ToolRegistry:
        registry = ToolRegistry()
        doc = by_language(None, zh)
        if doc is None:
            registry.tool(fn)
        else:
            copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__,
                                      fn.__defaults__, fn.__closure__)
            copy.__annotations__, copy.__doc__ = fn.__annotations__, doc
            registry.tool(copy)
        return registry
    return twin(make)


WHEN_ZH = "当用户想把摄氏度换算成华氏度时使用。"


def good_tool(celsius: float) -> str:
    """Use this when the user asks for a Celsius temperature in Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius, e.g. 16.
    """
    return json.dumps({"celsius": celsius, "fahrenheit": round(celsius * 9 / 5 + 32, 1)})


good_tool.__name__ = "convert_temperature"
GOOD_ZH = """当用户想把摄氏温度换算成华氏温度时使用。

    Args:
        celsius: 摄氏温度，例如 16。
    """


def test_my_tool_check_passes_a_correct_tool(capsys):
    out = report_of(nb03.check_my_tool, registry_with(good_tool, GOOD_ZH), capsys)
    assert PASSED in out and not failed_lines(out), f"expected a pass, got:\n{out}"
    assert "✅ the model calls convert_temperature" in out, out


def test_my_tool_check_accepts_a_chinese_description_and_a_bare_number(capsys):
    def convert_temperature(celsius: float) -> str:
        """当用户想把摄氏温度换算成华氏温度时使用。"""
        return str(celsius * 9 / 5 + 32)

    out = report_of(nb03.check_my_tool, registry_with(convert_temperature), capsys)
    assert PASSED in out, f"expected a pass, got:\n{out}"


def test_my_tool_check_reports_the_notebook_stub(capsys):
    def convert_temperature(celsius: float) -> str:
        """Converts a temperature."""

    out = report_of(nb03.check_my_tool, registry_with(convert_temperature, "换算温度。"), capsys)
    failed = failed_lines(out)
    assert len(failed) == 3, f"expected description and two value failures, got:\n{out}"
    assert "description says when to use it" in failed[0], out
    assert "gives 60.8 °F (got None)" in failed[1], out
    assert "Use this when the user ..." in out and "celsius × 9 / 5 + 32" in out, "hints missing"
    assert "def " not in out and "round(" not in out, "a hint must not hand out the solution"


def test_my_tool_check_reports_a_wrong_formula(capsys):
    def convert_temperature(celsius: float) -> str:
        """Use this when the user asks to convert Celsius to Fahrenheit."""
        return json.dumps({"fahrenheit": celsius * 9 / 5})  # forgot + 32

    out = report_of(nb03.check_my_tool, registry_with(convert_temperature, WHEN_ZH), capsys)
    assert "100 °C gave 180.0, expected 212" in out, out
    assert PASSED not in out


def test_my_tool_check_reports_a_wrong_parameter(capsys):
    def convert_temperature(degrees: str) -> str:
        """Use this when the user asks to convert Celsius to Fahrenheit."""
        return "?"

    out = report_of(nb03.check_my_tool, registry_with(convert_temperature, WHEN_ZH), capsys)
    assert "❌ it takes one required number, celsius" in out, out
    assert "convert_temperature(celsius: float) -> str" in out, "the hint should show the signature"


def test_my_tool_check_survives_a_tool_that_raises(capsys):
    def convert_temperature(celsius: float) -> str:
        """Use this when the user asks to convert Celsius to Fahrenheit."""
        raise RuntimeError("boom")

    out = report_of(nb03.check_my_tool, registry_with(convert_temperature, WHEN_ZH), capsys)
    assert "RuntimeError: boom" in out and PASSED not in out, out


@pytest.mark.parametrize("answer", [None, ToolRegistry(), "convert_temperature", {}])
def test_my_tool_check_explains_a_missing_tool(answer, capsys):
    out = report_of(nb03.check_my_tool, answer, capsys)
    assert "❌ my_tools holds a tool named 'convert_temperature'" in out, out
    assert "@my_tools.tool" in out, "the hint should name the decorator"


def test_my_tool_check_reports_when_the_model_does_not_call_it(capsys):
    def make():
        registry = ToolRegistry()
        registry.tool(good_tool, name="play_song",
                      description=by_language("Plays a song on the radio.", "在收音机上放一首歌。"))
        return registry

    out = report_of(lambda r: nb03.check_my_tool(r, name="play_song"), twin(make), capsys)
    assert "❌ the model calls play_song for 'What is 16 °C in Fahrenheit?'" in out, out
    assert "the model answered \"I can't check the weather" in out, "the hint shows the reply"
    assert "✅ running the model's call {\"celsius\": 16} gives 60.8 °F" in out, (
        "without a call the check still runs the tool on a stand-in call")


# ----------------------------------------------------------------- exercise 2: answer every call

def results_for(message) -> list[dict]:
    return [{"role": "tool", "tool_call_id": c.id,
             "content": execute_tool(c.function.name, c.function.arguments)}
            for c in message.tool_calls]


def test_results_check_passes_a_correct_function(capsys):
    out = report_of(nb03.check_results_for, results_for, capsys)
    assert PASSED in out and not failed_lines(out), f"expected a pass, got:\n{out}"


def test_results_check_accepts_any_order_inside_the_group(capsys):
    out = report_of(nb03.check_results_for, lambda m: results_for(m)[::-1], capsys)
    assert PASSED in out, f"tool messages in reverse order are valid, got:\n{out}"


def test_results_check_reports_the_notebook_stub(capsys):
    def first_only(message):
        call = message.tool_calls[0]
        return [{"role": "tool", "tool_call_id": call.id,
                 "content": execute_tool(call.function.name, call.function.arguments)}]

    out = report_of(nb03.check_results_for, first_only, capsys)
    assert "❌ 2 calls: one tool message per call (1 for 2)" in out, out
    assert "did not have response messages: call_CYsmRMm2JzFbx7lC6yqGJo9U" in out, (
        "the hint should carry the API's own error text")


@pytest.mark.parametrize("answer", [lambda m: None, lambda m: ..., lambda m: "tool"])
def test_results_check_says_not_done_yet(answer, capsys):
    out = report_of(nb03.check_results_for, answer, capsys)
    assert "not done yet" in out and PASSED not in out, out


def test_results_check_explains_parsing_the_arguments_yourself(capsys):
    def parses(message):
        return [{"role": "tool", "tool_call_id": c.id,
                 "content": json.dumps(json.loads(c.function.arguments))}
                for c in message.tool_calls]

    out = report_of(nb03.check_results_for, parses, capsys)
    assert "❌ 3 calls: results_for raised JSONDecodeError" in out, out
    assert "execute_tool" in out, "the hint should point at execute_tool"


def test_results_check_reports_made_up_ids(capsys):
    def made_up(message):
        return [{"role": "tool", "tool_call_id": f"call_{k}", "content": "{}"}
                for k, _ in enumerate(message.tool_calls)]

    out = report_of(nb03.check_results_for, made_up, capsys)
    assert "❌ 2 calls: each is role 'tool'" in out, out
    assert "not found in 'tool_calls' of previous message" in out, out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_exercise_2_data_looks_like_real_replies(lang, speak):
    speak(lang)
    for data in (nb03.TWO_CALLS, nb03.THREE_CALLS):
        for call in data["tool_calls"]:
            assert re.fullmatch(r"call_[A-Za-z0-9]{24}", call["id"]), call["id"]
            assert isinstance(call["function"]["arguments"], str)
    broken = nb03.THREE_CALLS["tool_calls"][1]["function"]["arguments"]
    assert "error" in json.loads(execute_tool("get_current_weather", broken)), (
        "the second reply must carry a call with broken JSON")


# ----------------------------------------------------------------- exercise 3: repair a history

def repair(messages: list[dict]) -> list[dict]:
    replies = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
    fixed = []
    for m in messages:
        if m["role"] != "tool":
            fixed.append(m)
            fixed += [replies[c["id"]] for c in m.get("tool_calls") or [] if c["id"] in replies]
    return fixed


def test_repair_check_passes_a_correct_function(capsys):
    out = report_of(nb03.check_repair, repair, capsys)
    assert PASSED in out and not failed_lines(out), f"expected a pass, got:\n{out}"


def test_repair_check_reports_the_notebook_stub(capsys):
    def drop_intruder(messages):
        return [m for i, m in enumerate(messages)
                if not (m["role"] == "user" and i > 0 and "tool_calls" in messages[i - 1])]

    out = report_of(nb03.check_repair, drop_intruder, capsys)
    assert "user '上海呢？' was dropped: move it after the tool replies" in out, out
    assert "❌ case 2 (a system note between two parallel results): the API accepts" in out, out


def test_repair_check_reports_doing_nothing(capsys):
    out = report_of(nb03.check_repair, lambda messages: messages, capsys)
    assert "❌ case 1 (上海呢？ between a call and its result): the API accepts" in out, out
    assert "did not have response messages" in out, "the hint should carry the API's text"
    assert "nothing may be dropped: move each tool message up" in out, \
        f"the hint should give this exercise's fix (move, never drop), got:\n{out}"
    assert "or drop the group" not in out, f"the hint must not suggest dropping, got:\n{out}"


def test_repair_check_reports_editing_in_place(capsys):
    def in_place(messages):
        fixed = repair(messages)
        messages[:] = fixed
        return messages

    out = report_of(nb03.check_repair, in_place, capsys)
    assert "❌ the lists it was given are unchanged" in out, out
    assert "build a new list" in out


def test_repair_check_reports_reordered_messages(capsys):
    def system_first(messages):
        fixed = repair(messages)
        return sorted(fixed, key=lambda m: m["role"] != "system") if fixed[0]["role"] == "system" \
            and fixed[-1]["role"] == "system" else fixed

    out = report_of(nb03.check_repair, system_first, capsys)
    assert "only tool messages move" in out or "❌ case 2" in out, out
    assert PASSED not in out


@pytest.mark.parametrize("answer", [lambda m: None, lambda m: ...])
def test_repair_check_says_not_done_yet(answer, capsys):
    out = report_of(nb03.check_repair, answer, capsys)
    assert "not done yet" in out and PASSED not in out, out


def test_a_check_never_raises_at_the_learner(capsys):
    def boom(_):
        raise KeyError("role")

    for check in (nb03.check_results_for, nb03.check_repair):
        out = report_of(check, boom, capsys)
        assert "KeyError" in out and PASSED not in out, out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_repair_cases_are_broken_then_valid(lang, speak):
    speak(lang)
    cases = [case for _, case in nb03.REPAIR_CASES]
    first, second, third, *more = cases
    assert len(cases) == 7 and first is nb03.BROKEN_HISTORY
    assert [p.param for p in find_problems(first)] == ["messages.[2].role", "messages.[3].role"]
    assert not is_valid(second) and is_valid(third)
    assert not any(is_valid(case) for case in more)
    assert all(is_valid(repair(case)) for case in cases)
    ids = [c["id"] for case in cases for m in case for c in m.get("tool_calls") or []]
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", i) for i in ids), ids


def first_problem_only(messages):
    """Moves the first stray tool message and stops: the second broken round stays."""
    fixed = list(messages)
    for i, m in enumerate(fixed):
        if m["role"] == "tool":
            at = next(k for k, a in enumerate(fixed) if any(
                c["id"] == m["tool_call_id"] for c in a.get("tool_calls") or []))
            if i != at + 1:
                fixed.insert(at + 1, fixed.pop(i))
                return fixed
    return fixed


def moves_results_up_only(messages):
    """Moves each tool message up to the nearest assistant(tool_calls) before it: a result
    stored before its call has none."""
    fixed = []
    for m in messages:
        if m["role"] != "tool":
            fixed.append(m)
            continue
        at = max((k for k, a in enumerate(fixed) if a.get("tool_calls")), default=None)
        if at is None:
            fixed.append(m)
            continue
        end = at + 1
        while end < len(fixed) and fixed[end]["role"] == "tool":
            end += 1
        fixed.insert(end, m)
    return fixed


def only_calls_without_text(messages):
    """Treats an assistant message with text as an answer: the result of its call is left
    where it was."""
    placed = {c["id"] for m in messages if m["role"] == "assistant" and not m.get("content")
              for c in m.get("tool_calls") or []}
    replies = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
    fixed = []
    for m in messages:
        if m["role"] == "tool":
            if m["tool_call_id"] not in placed:
                fixed.append(m)
            continue
        fixed.append(m)
        if not m.get("content"):
            fixed += [replies[c["id"]] for c in m.get("tool_calls") or [] if c["id"] in replies]
    return fixed


@pytest.mark.parametrize("wrong, case", [
    (first_problem_only, "case 5 (two rounds, each broken): the API accepts"),
    (moves_results_up_only, "case 4 (a result stored before its call): the API accepts"),
    (only_calls_without_text, "case 7 (a call with a sentence beside it): the API accepts"),
])
def test_repairs_that_pass_the_first_three_cases_are_caught(wrong, case, capsys, speak):
    for lang in ("en", "zh"):
        speak(lang)
        assert all(is_valid(wrong(case)) for _, case in nb03.REPAIR_CASES[:3])  # the old three
    out = report_of(nb03.check_repair, wrong, capsys)
    assert f"❌ {case}" in out and PASSED not in out, out


def test_my_tool_description_must_say_when_to_use_it(capsys):
    def convert_temperature(celsius: float) -> str:
        """Converts Celsius to Fahrenheit."""
        return json.dumps({"fahrenheit": round(celsius * 9 / 5 + 32, 1)})

    out = report_of(nb03.check_my_tool,
                    registry_with(convert_temperature, "把摄氏度换算成华氏度。"), capsys)
    assert "❌ its description says when to use it: 'Converts Celsius to Fahrenheit.'" in out
    assert "it names the units, but not when to use the tool" in out, out


def test_my_tool_must_return_a_json_string(capsys):
    def convert_temperature(celsius: float) -> str:
        """Use this when the user asks to convert Celsius to Fahrenheit."""
        return round(celsius * 9 / 5 + 32, 1)

    out = report_of(nb03.check_my_tool, registry_with(convert_temperature, WHEN_ZH), capsys)
    assert "❌ it returns a JSON string (got float 60.8)" in out, out
    assert "return json.dumps({\"celsius\": ..., \"fahrenheit\": ...})" in out, out


def test_results_for_returning_the_assistant_message_is_told_so(capsys):
    def with_the_call(message):
        return [nb03.assistant_to_dict(message), *results_for(message)]

    out = report_of(nb03.check_results_for, with_the_call, capsys)
    assert "return only the tool messages: the assistant message with the calls is already" \
        in out, out
    assert "not only tool_calls[0]" not in out, out
