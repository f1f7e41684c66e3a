"""The core track of notebook 06: the rules that judge a learner's `my_loop` guard the
library's own loop, `LoopAgent.run`.

TestLoop gets the tests every core exercise gets (tests/core_track_support.py), on a
scripted model: LoopAgent, run with my_loop's signature (`nb06.library_loop`), keeps every
rule of LOOP_RULES (the same rules the notebook's check runs); correct loops written here
(a `for` and a `while`), independently of the library, keep every rule; each wrong loop in
the bank (a mistake learners really make) is caught, first by the rule whose hint fits that
mistake; the untouched skeleton gets "not written yet", not a wall of failures. Below it,
the tests only this exercise has: a loop that never stops is stopped and reported as
"no cap".
"""

from __future__ import annotations

from core_track_support import ScriptedCoreTrack, what_happened

from lesson_lib.exercises import nb06
from lesson_lib.llm import chat
from lesson_lib.protocol import assistant_to_dict


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


def raises_at_the_cap(messages, registry, max_turns=5):
    """Has a cap, but raises when it is reached: the user gets an error, not a notice."""
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:
            return message.content, turn
        messages.extend(_results(message, registry))
    raise RuntimeError(f"too many tool rounds (max_turns={max_turns})")


def builds_the_call_without_its_text(messages, registry, max_turns=5):
    """Appends the call as a dict built by hand, content None: text beside it is lost."""
    for turn in range(1, max_turns + 1):
        message = chat(messages, tools=registry.schemas())
        if not message.tool_calls:
            messages.append({"role": "assistant", "content": message.content})
            return message.content, turn
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls]})
        messages.extend(_results(message, registry))
    return "Stopped.", max_turns


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
    counts_rounds_not_calls: "turns counts the model calls",
    says_nothing_at_the_cap: "at the cap the history is still valid",
    stops_before_the_results: "at the cap the history is still valid",
    answer_kept_only_without_tools: "for any run",
    raises_at_the_cap: "at the cap the history is still valid",
    builds_the_call_without_its_text: "text the model wrote beside its calls",
}


def typo(messages, registry, max_turns=5):
    message = chat(messages, tools=registry.schemas())
    return message.text, 1  # the field is called content


class TestLoop(ScriptedCoreTrack):
    rules = nb06.LOOP_RULES
    check = nb06.check_my_loop
    library = [nb06.library_loop]
    right = [for_loop, while_loop]
    wrong = WRONG
    skeleton = skeleton
    hinted = no_tools_inside_the_loop
    hint_steps = [
        ("what happened: model call 2 offered tools=None", "notebook 05's second call"),
        ("notebook 05's second call", "tools=registry.schemas()"),
        ("pass tools=registry.schemas() to every chat() call", None),
    ]
    typo = typo
    typo_says = ("your code raised AttributeError", "of typo()")
    misgiven = [None, ..., "my_loop"]
    misgiven_says = "define my_loop(messages, registry, max_turns=5)"
    both_languages = True


# ----------------------------------------------------------------- what only notebook 06 has

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


def test_a_loop_without_a_cap_is_stopped_and_reported_as_no_cap():
    assert what_happened(no_cap, nb06.LOOP_RULES, "it stops") == (
        "the model asked for a tool on every call; my_loop made 50 model calls and the "
        "check stopped it: no cap")


def test_the_property_rule_shows_the_smallest_run_that_breaks_it():
    what = what_happened(answer_kept_only_without_tools, nb06.LOOP_RULES, "for any run")
    assert what.startswith(
        "rounds [1 call] then an answer, max_turns=2: messages ends as [system, user"), what


def test_a_loop_that_raises_at_the_cap_is_told_to_return_a_notice(capsys):
    what = what_happened(raises_at_the_cap, nb06.LOOP_RULES, "at the cap")
    assert what == ("at the cap (max_turns=3) my_loop raised RuntimeError: too many tool rounds "
                    "(max_turns=3); the user is shown an error instead of an answer"), what
    assert nb06.check_my_loop(raises_at_the_cap) is False
    out = capsys.readouterr().out
    assert "✅ 13 checks pass" in out and "❌ at the cap the history is still valid" in out, out
    assert "needs a cap" not in out, out


def test_a_loop_counting_rounds_is_told_to_count_model_calls(capsys):
    assert nb06.check_my_loop(counts_rounds_not_calls) is False
    out = capsys.readouterr().out
    assert "❌ turns counts the model calls, the answer's included" in out, out
    assert "my_loop made 1 model call, and returned turns=0" in out, out
    assert "return its text" not in out, out
