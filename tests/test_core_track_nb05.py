"""The core track of notebook 05: the rules that judge a learner's `Agent.chat` guard the
library's own `Agent`.

- the library's Agent keeps every rule of AGENT_RULES (the same rules the notebook's check
  runs, with a scripted model);
- a correct chat written here, independently of the library, keeps every rule, the
  exercise's own (it writes the steps itself) included;
- each wrong chat in the bank (a mistake learners really make) is caught, first by the rule
  whose hint fits that mistake;
- the untouched skeleton gets "not written yet", not a wall of failures.
"""

from __future__ import annotations

import pytest

from lesson_lib.agent import Agent
from lesson_lib.exercises import nb05
from lesson_lib.exercises.contract import failed_rules, judge
from lesson_lib.llm import chat
from lesson_lib.protocol import assistant_to_dict

RULES = {rule.name: rule for rule in nb05.EXERCISE_RULES}


def _rule(start: str) -> str:
    """The one rule of notebook 05's build whose name starts with `start`."""
    (name,) = [n for n in RULES if n.startswith(start)]
    return name


class IndependentAgent(Agent):
    """A correct chat, written step by step without the library's helpers."""

    def chat(self, user_input):
        self.memory.add({"role": "user", "content": user_input})
        reply = chat(self.memory.to_api_format(), tools=self.tools, client=self.client)
        if reply.tool_calls:
            outputs = []
            for call in reply.tool_calls:
                outputs.append({"role": "tool", "tool_call_id": call.id,
                                "content": self.registry.execute(call.function.name,
                                                                 call.function.arguments)})
            asked = {"role": "assistant", "content": reply.content,
                     "tool_calls": [{"id": c.id, "type": "function",
                                     "function": {"name": c.function.name,
                                                  "arguments": c.function.arguments}}
                                    for c in reply.tool_calls]}
            self.memory.add_many([asked, *outputs])
            reply = chat(self.memory.to_api_format(), client=self.client)  # no tools at all
        text = reply.content or ""
        self.memory.add({"role": "assistant", "content": text})
        return text


class Skeleton(Agent):
    """The notebook's starting point."""

    def chat(self, user_input):
        raise NotImplementedError


def _run_round(agent, reply):
    """Every call of `reply` run; the tool messages (for the wrong versions to misuse)."""
    return [{"role": "tool", "tool_call_id": c.id,
             "content": agent.registry.execute(c.function.name, c.function.arguments)}
            for c in reply.tool_calls]


class Chat(Agent):
    """The right steps, each a method, so a wrong version changes just one."""

    def chat(self, user_input):
        self.store_user(user_input)
        reply = self.first_call()
        if reply.tool_calls:
            self.write_round(reply, _run_round(self, reply))
            reply = self.second_call()
        return self.finish(reply)

    def store_user(self, user_input):
        self.memory.add({"role": "user", "content": user_input})
        self.user_input = user_input

    def first_call(self):
        return chat(self.memory.to_api_format(), tools=self.tools, client=self.client)

    def write_round(self, reply, results):
        self.memory.add_many([assistant_to_dict(reply), *results])

    def second_call(self):
        return chat(self.memory.to_api_format(), tools=None, client=self.client)

    def finish(self, reply):
        self.memory.add({"role": "assistant", "content": reply.content})
        return reply.content


class UsesTheLibrarysSteps(Agent):
    def chat(self, user_input):
        self.memory.add({"role": "user", "content": user_input})
        reply = chat(self.memory.to_api_format(), tools=self.tools, client=self.client)
        if reply.tool_calls:
            self.run_tool_round(reply, turn=1)
            reply = chat(self.memory.to_api_format(), tools=None, client=self.client)
        return self.remember_answer(reply)


class NeverStoresTheUser(Chat):
    """Sends the input with the memory, but never writes it into the memory."""

    def store_user(self, user_input):
        self.user_input = user_input

    def first_call(self):
        messages = self.memory.to_api_format() + [{"role": "user", "content": self.user_input}]
        return chat(messages, tools=self.tools, client=self.client)


class SendsOnlyTheNewest(Chat):
    def first_call(self):
        return chat([{"role": "user", "content": self.user_input}], tools=self.tools,
                    client=self.client)


class OffersNoTools(Chat):
    def first_call(self):
        return chat(self.memory.to_api_format(), client=self.client)


class ReturnsTheMessage(Chat):
    def finish(self, reply):
        self.memory.add({"role": "assistant", "content": reply.content})
        return reply


class ForgetsTheAnswer(Chat):
    def finish(self, reply):
        return reply.content


class StoresTheAnswerObject(Chat):
    def finish(self, reply):
        self.memory.add(reply)
        return reply.content


class NoSecondCall(Chat):
    """Runs the round, then returns the tool reply's (empty) text as the answer."""

    def second_call(self):
        return self.last

    def write_round(self, reply, results):
        self.last = reply
        super().write_round(reply, results)


class SecondCallKeepsTheTools(Chat):
    def second_call(self):
        return chat(self.memory.to_api_format(), tools=self.tools, client=self.client)


class ResultsWithoutTheCall(Chat):
    def write_round(self, reply, results):
        self.memory.add_many(results)


class StoresTheCallObject(Chat):
    def write_round(self, reply, results):
        self.memory.add_many([reply, *results])


class RunsOnlyTheFirstCall(Chat):
    def chat(self, user_input):
        self.store_user(user_input)
        reply = self.first_call()
        if reply.tool_calls:
            call = reply.tool_calls[0]
            result = self.registry.execute(call.function.name, call.function.arguments)
            self.write_round(reply, [{"role": "tool", "tool_call_id": call.id,
                                      "content": result}])
            reply = self.second_call()
        return self.finish(reply)


class CallWithoutResults(Chat):
    """Runs every call, but writes only the call."""

    def write_round(self, reply, results):
        self.memory.add(assistant_to_dict(reply))


class ToolCallIdIsTheName(Chat):
    def write_round(self, reply, results):
        for message, call in zip(results, reply.tool_calls, strict=True):
            message["tool_call_id"] = call.function.name
        super().write_round(reply, results)


class WritesTheCallBeforeRunningTheTools(Chat):
    """The seed's order: the call, then each tool run and its result added one at a time."""

    def chat(self, user_input):
        self.store_user(user_input)
        reply = self.first_call()
        if reply.tool_calls:
            self.memory.add(assistant_to_dict(reply))
            for call in reply.tool_calls:
                result = self.registry.execute(call.function.name, call.function.arguments)
                self.memory.add({"role": "tool", "tool_call_id": call.id, "content": result})
            reply = self.second_call()
        return self.finish(reply)


class TurnsTheToolsOffForGood(Chat):
    """Gets tools=None on the second call by switching self.tools off, and never back."""

    def second_call(self):
        self.tools = None
        return chat(self.memory.to_api_format(), tools=self.tools, client=self.client)


WRONG = {
    UsesTheLibrarysSteps: "chat() writes the steps itself",
    NeverStoresTheUser: "chat() stores the user's message first",
    SendsOnlyTheNewest: "each request sends the whole memory",
    OffersNoTools: "a plain answer takes one model call",
    ReturnsTheMessage: "chat() returns the answer as text",
    ForgetsTheAnswer: "the answer is stored",
    StoresTheAnswerObject: "the answer is stored",
    NoSecondCall: "a reply with tool_calls takes two model calls",
    SecondCallKeepsTheTools: "the second call goes out with tools=None",
    ResultsWithoutTheCall: "the assistant message with the tool_calls is stored",
    StoresTheCallObject: "the stored call is a plain dict",
    RunsOnlyTheFirstCall: "every call of a parallel reply is run",
    CallWithoutResults: "each call gets one tool message",
    ToolCallIdIsTheName: "each call gets one tool message",
    WritesTheCallBeforeRunningTheTools: "the call and its results are written together",
    TurnsTheToolsOffForGood: "for any conversation",
}


def test_the_library_agent_keeps_every_rule_of_notebook_05():
    assert failed_rules(Agent, nb05.AGENT_RULES) == []


def test_the_librarys_agent_is_made_of_the_steps_the_exercise_asks_the_learner_to_write():
    assert failed_rules(Agent, [nb05.OWN_STEPS]) == [nb05.OWN_STEPS.name]


@pytest.mark.parametrize("right", [IndependentAgent, Chat], ids=lambda c: c.__name__)
def test_a_correct_chat_written_here_keeps_every_rule(right):
    assert failed_rules(right, nb05.EXERCISE_RULES) == []


@pytest.mark.parametrize("wrong", list(WRONG), ids=lambda c: c.__name__)
def test_each_wrong_chat_is_caught_by_the_rule_that_fits(wrong):
    broken = failed_rules(wrong, nb05.EXERCISE_RULES)
    assert broken, f"{wrong.__name__} passed every rule"
    assert broken[0] == _rule(WRONG[wrong]), (wrong.__name__, broken)


def test_the_bank_of_wrong_chats_is_at_least_eight():
    assert len(WRONG) >= 8


def test_the_untouched_skeleton_is_not_written_yet(capsys):
    assert nb05.check_my_agent_chat(Skeleton) is False
    out = capsys.readouterr().out
    assert "not done yet" in out and len(out.splitlines()) <= 4, out


def test_a_wrong_chat_gets_what_happened_then_more_hints(capsys):
    assert nb05.check_my_agent_chat(SecondCallKeepsTheTools) is False
    first = capsys.readouterr().out
    assert ("what happened: the second request offered tools=[get_current_weather]"
            in first), first
    assert "at most one tool round" not in first
    nb05.check_my_agent_chat(SecondCallKeepsTheTools)
    second = capsys.readouterr().out
    assert "at most one tool round" in second and "pass tools=None" not in second
    nb05.check_my_agent_chat(SecondCallKeepsTheTools)
    assert "pass tools=None to the second call" in capsys.readouterr().out


def test_the_property_rule_shows_the_smallest_conversation_that_breaks_it():
    verdicts = dict((r.name, w) for r, w in judge(TurnsTheToolsOffForGood, nb05.AGENT_RULES))
    assert verdicts[_rule("for any conversation")] == (
        "replies [1 call, answer], at input 2 (answer): request 1 offered tools=None, the "
        "library's tools=[get_current_weather]")


def test_a_passing_chat_gets_every_rule_and_no_hint(capsys):
    assert nb05.check_my_agent_chat(IndependentAgent) is True
    out = capsys.readouterr().out
    assert "All checks passed." in out and "❌" not in out and len(out.splitlines()) <= 12


def test_a_chat_that_raises_is_reported_with_its_line(capsys):
    class Typo(Chat):
        def finish(self, reply):
            return reply.text  # the field is called content

    assert nb05.check_my_agent_chat(Typo) is False
    out = capsys.readouterr().out
    assert "your code raised AttributeError" in out and "of finish()" in out, out


def test_passing_an_instance_says_to_pass_the_class(capsys):
    assert nb05.check_my_agent_chat(IndependentAgent()) is False
    assert "pass the class itself" in capsys.readouterr().out


def test_a_chat_that_never_stops_asking_is_stopped_and_reported():
    class Twice(Chat):
        def finish(self, reply):
            chat(self.memory.to_api_format(), client=self.client)  # one call too many
            return super().finish(reply)

    verdicts = dict((r.name, w) for r, w in judge(Twice, nb05.AGENT_RULES))
    assert "asked the model again" in verdicts[_rule("chat() stores the user's message")]


def test_the_check_needs_no_model_and_restores_the_shared_client(monkeypatch, capsys):
    from lesson_lib import llm

    previous = llm.set_client(None)
    try:
        monkeypatch.setenv("LESSON_BACKEND", "openai")  # no key: a real client would fail
        assert nb05.check_my_agent_chat(IndependentAgent) is True
        assert llm._client is None, "the check must restore the shared client it replaced"
    finally:
        llm.set_client(*previous)
