"""The core track of notebook 06: the rules that judge a learner's `my_loop` guard the
library's own loop, `LoopAgent.run`.

- LoopAgent, run with my_loop's signature (`nb06.library_loop`), keeps every rule of
  LOOP_RULES (the same rules the notebook's check runs, with a scripted model);
- correct loops written here (a `for` and a `while`), independently of the library, keep
  every rule;
- each wrong loop in the bank (a mistake learners really make) is caught, first by the rule
  whose hint fits that mistake; one that never stops is stopped and reported as "no cap";
- the untouched skeleton gets "not written yet", not a wall of failures.
"""

from __future__ import annotations

import pytest

from lesson_lib.exercises import nb06
from lesson_lib.exercises.contract import failed_rules, judge
from lesson_lib.llm import chat
from lesson_lib.protocol import assistant_to_dict

RULES = {rule.name: rule for rule in nb06.LOOP_RULES}


def _rule(start: str) -> str:
    """The one rule of notebook 06's build whose name starts with `start`."""
    (name,) = [n for n in RULES if n.startswith(start)]
    return name


def _results(message, registry):
    return [{"role": "tool", "tool_call_id": call.id,
             "content": registry.execute(call.function.name, call.function.arguments)}
            for call in message.tool_calls]


def for_loop(messages, registry, max_turns=5):
    """A correct loop: a `for` over the model calls it may make."""
    tools = registry.schemas()
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=tools)
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        messages.extend(_results(message, registry))
    return f"I stopped after {max_turns} model calls without an answer.", max_turns


def while_loop(messages, registry, max_turns=5):
    """A correct loop: `while message.tool_calls`, with a counter; the notice is not kept."""
    tools = registry.schemas()
    message, turns = chat(messages, tools=tools), 1
    while message.tool_calls:
        messages.append({"role": "assistant", "content": message.content,
                         "tool_calls": [{"id": c.id, "type": "function",
                                         "function": {"name": c.function.name,
                                                      "arguments": c.function.arguments}}
                                        for c in message.tool_calls]})
        messages.extend(_results(message, registry))
        if turns == max_turns:
            return "Stopped: too many rounds of tools.", turns
        message, turns = chat(messages, tools=tools), turns + 1
    messages.append({"role": "assistant", "content": message.content})
    return message.content, turns


def skeleton(messages, registry, max_turns=5):
    """The notebook's starting point."""
    raise NotImplementedError


def no_cap(messages, registry, max_turns=5):
    turns = 0
    while True:
        message = chat(messages, tools=registry.schemas())
        turns += 1
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turns
        messages.extend(_results(message, registry))


def only_the_first_call(messages, registry, max_turns=5):
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        call = message.tool_calls[0]
        messages.append({"role": "tool", "tool_call_id": call.id,
                         "content": registry.execute(call.function.name,
                                                     call.function.arguments)})
    return "Stopped.", max_turns


def results_not_appended(messages, registry, max_turns=5):
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        _results(message, registry)  # run, and forgotten
    return "Stopped.", max_turns


def results_without_the_call(messages, registry, max_turns=5):
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        if not message.tool_calls:
            messages.append(assistant_to_dict(message))
            return message.content, turn
        messages.extend(_results(message, registry))
    return "Stopped.", max_turns


def appends_the_sdk_object(messages, registry, max_turns=5):
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        if not message.tool_calls:
            messages.append(assistant_to_dict(message))
            return message.content, turn
        messages.append(message)
        messages.extend(_results(message, registry))
    return "Stopped.", max_turns


def wrong_tool_call_id(messages, registry, max_turns=5):
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        for k, call in enumerate(message.tool_calls):
            messages.append({"role": "tool", "tool_call_id": f"call_{k}",
                             "content": registry.execute(call.function.name,
                                                         call.function.arguments)})
    return "Stopped.", max_turns


def one_call_too_many(messages, registry, max_turns=5):
    """`turn <= max_turns` after the call: one more model call than the cap allows."""
    turn = 0
    while turn <= max_turns:
        message = chat(messages, tools=registry.schemas())
        turn += 1
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        messages.extend(_results(message, registry))
    return "Stopped.", turn


def one_call_too_few(messages, registry, max_turns=5):
    return for_loop(messages, registry, max_turns - 1) if max_turns > 1 else \
        for_loop(messages, registry, 1)


def no_tools_inside_the_loop(messages, registry, max_turns=5):
    """Notebook 05's second call, kept: tools=None after the first round."""
    tools = registry.schemas()
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=tools if turn == 1 else None)
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        messages.extend(_results(message, registry))
    return "Stopped.", max_turns


def returns_after_the_round(messages, registry, max_turns=5):
    """`return` indented one level too far: back after the first round of tools."""
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        messages.append(assistant_to_dict(message))
        if message.tool_calls:
            messages.extend(_results(message, registry))
        return message.content, turn
    return "Stopped.", max_turns


def never_stops_for_words(messages, registry, max_turns=5):
    """Forgets to stop when the model answers in words: runs every turn it may."""
    for _ in range(max_turns):
        message = chat(messages, tools=registry.schemas())
        messages.append(assistant_to_dict(message))
        for call in message.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": registry.execute(call.function.name,
                                                         call.function.arguments)})
    return message.content, max_turns


def notebook_05s_if(messages, registry, max_turns=5):
    """The old first attempt: one round, then one more call."""
    tools = registry.schemas()
    message, turns = chat(messages, tools=tools), 1
    if message.tool_calls:
        messages.append(assistant_to_dict(message))
        messages.extend(_results(message, registry))
        message, turns = chat(messages, tools=tools), 2
    messages.append({"role": "assistant", "content": message.content})
    return message.content, turns


def returns_only_the_reply(messages, registry, max_turns=5):
    return for_loop(messages, registry, max_turns)[0]


def works_on_a_copy(messages, registry, max_turns=5):
    return for_loop(list(messages), registry, max_turns)


def counts_rounds_not_calls(messages, registry, max_turns=5):
    reply, turns = for_loop(messages, registry, max_turns)
    return reply, turns - 1


def says_nothing_at_the_cap(messages, registry, max_turns=5):
    reply, turns = for_loop(messages, registry, max_turns)
    return (None if turns == max_turns and messages[-1]["role"] == "tool" else reply), turns


def stops_before_the_results(messages, registry, max_turns=5):
    """At the cap, appends the last call and returns before running it."""
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        if turn == max_turns:
            return "I stopped: too many rounds.", turn
        messages.extend(_results(message, registry))
    return "Stopped.", max_turns


def answer_kept_only_without_tools(messages, registry, max_turns=5):
    """The `while` form that appends the answer only when no tool was needed."""
    tools = registry.schemas()
    message, turns = chat(messages, tools=tools), 1
    if not message.tool_calls:
        messages.append(assistant_to_dict(message))
        return message.content, turns
    while message.tool_calls and turns < max_turns:
        messages.append(assistant_to_dict(message))
        messages.extend(_results(message, registry))
        message, turns = chat(messages, tools=tools), turns + 1
    if message.tool_calls:
        messages.append(assistant_to_dict(message))
        messages.extend(_results(message, registry))
        return "Stopped.", turns
    return message.content, turns


WRONG = {
    no_cap: "it stops even when the model never does",
    only_the_first_call: "every call of a parallel reply is run",
    results_not_appended: "each call gets one tool message",
    results_without_the_call: "the assistant message with the tool_calls is appended",
    appends_the_sdk_object: "the call is appended as a plain dict",
    wrong_tool_call_id: "each call gets one tool message",
    one_call_too_many: "the cap is max_turns model calls",
    one_call_too_few: "the cap is max_turns model calls",
    no_tools_inside_the_loop: "every model call offers the tools",
    returns_after_the_round: "while the reply has tool_calls",
    never_stops_for_words: "a reply without tool_calls ends the loop",
    notebook_05s_if: "while the reply has tool_calls",
    returns_only_the_reply: "my_loop returns a pair",
    works_on_a_copy: "the answer is appended to messages",
    counts_rounds_not_calls: "a reply without tool_calls ends the loop",
    says_nothing_at_the_cap: "at the cap the history is still valid",
    stops_before_the_results: "at the cap the history is still valid",
    answer_kept_only_without_tools: "for any run",
}


def test_loop_agent_keeps_every_rule_of_notebook_06():
    assert failed_rules(nb06.library_loop, nb06.LOOP_RULES) == []


def test_library_loop_is_loop_agent_run_on_the_callers_list():
    from lesson_lib.exercises.scripted import Script, ScriptedClient, answering, weather_calls
    from lesson_lib.tools import default_registry

    script = Script()
    script.calls(*weather_calls(2))
    script.answer("done")
    messages = [{"role": "user", "content": "weather?"}]
    with answering(ScriptedClient(script)):
        assert nb06.library_loop(messages, default_registry, 3) == ("done", 2)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool",
                                             "assistant"]


@pytest.mark.parametrize("right", [for_loop, while_loop], ids=lambda f: f.__name__)
def test_a_correct_loop_written_here_keeps_every_rule(right):
    assert failed_rules(right, nb06.LOOP_RULES) == []


@pytest.mark.parametrize("wrong", list(WRONG), ids=lambda f: f.__name__)
def test_each_wrong_loop_is_caught_by_the_rule_that_fits(wrong):
    broken = failed_rules(wrong, nb06.LOOP_RULES)
    assert broken, f"{wrong.__name__} passed every rule"
    assert broken[0] == _rule(WRONG[wrong]), (wrong.__name__, broken)


def test_the_bank_of_wrong_loops_is_at_least_eight():
    assert len(WRONG) >= 8


def test_a_loop_without_a_cap_is_stopped_and_reported_as_no_cap():
    verdicts = dict((r.name, w) for r, w in judge(no_cap, nb06.LOOP_RULES))
    assert verdicts[_rule("it stops")] == (
        "the model asked for a tool on every call; my_loop made 50 model calls and the "
        "check stopped it: no cap")


def test_the_untouched_skeleton_is_not_written_yet(capsys):
    assert nb06.check_my_loop(skeleton) is False
    out = capsys.readouterr().out
    assert "not done yet" in out and len(out.splitlines()) <= 4, out


def test_a_wrong_loop_gets_what_happened_then_more_hints(capsys):
    assert nb06.check_my_loop(no_tools_inside_the_loop) is False
    first = capsys.readouterr().out
    assert "what happened: model call 2 offered tools=None" in first, first
    assert "notebook 05's second call" not in first
    nb06.check_my_loop(no_tools_inside_the_loop)
    second = capsys.readouterr().out
    assert "notebook 05's second call" in second and "tools=registry.schemas()" not in second
    nb06.check_my_loop(no_tools_inside_the_loop)
    assert "pass tools=registry.schemas() to every chat() call" in capsys.readouterr().out


def test_the_property_rule_shows_the_smallest_run_that_breaks_it():
    verdicts = dict((r.name, w) for r, w in judge(answer_kept_only_without_tools,
                                                  nb06.LOOP_RULES))
    assert verdicts[_rule("for any run")].startswith(
        "rounds [1 call] then an answer, max_turns=2: messages ends as [system, user"), \
        verdicts[_rule("for any run")]


def test_a_passing_loop_gets_every_rule_and_no_hint(capsys):
    assert nb06.check_my_loop(while_loop) is True
    out = capsys.readouterr().out
    assert "All checks passed." in out and "❌" not in out and len(out.splitlines()) <= 12


def test_a_loop_that_raises_is_reported_with_its_line(capsys):
    def typo(messages, registry, max_turns=5):
        message = chat(messages, tools=registry.schemas())
        return message.text, 1  # the field is called content

    assert nb06.check_my_loop(typo) is False
    out = capsys.readouterr().out
    assert "your code raised AttributeError" in out and "of typo()" in out, out


@pytest.mark.parametrize("answer", [None, ..., "my_loop"])
def test_something_that_is_not_a_function_is_not_done(answer, capsys):
    assert nb06.check_my_loop(answer) is False
    assert "define my_loop(messages, registry, max_turns=5)" in capsys.readouterr().out


def test_the_check_needs_no_model_and_restores_the_shared_client(monkeypatch, capsys):
    from lesson_lib import llm

    previous = llm.set_client(None)
    try:
        monkeypatch.setenv("LESSON_BACKEND", "openai")  # no key: a real client would fail
        assert nb06.check_my_loop(for_loop) is True
        assert llm._client is None, "the check must restore the shared client it replaced"
    finally:
        llm.set_client(*previous)
