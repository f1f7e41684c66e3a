"""The core track of notebook 05: the rules that judge a learner's `Agent.chat` guard the
library's own `Agent`.

TestAgentChat gets the tests every core exercise gets (tests/core_track_support.py), on a
scripted model: the library's Agent keeps every rule of AGENT_RULES (the same rules the
notebook's check runs); a correct chat written here, independently of the library, keeps
every rule, the exercise's own (it writes the steps itself) included; each wrong chat in the
bank (a mistake learners really make) is caught, first by the rule whose hint fits that
mistake; the untouched skeleton gets "not written yet", not a wall of failures. Below it,
the tests only this exercise has.
"""

from __future__ import annotations

from core_track_support import ScriptedCoreTrack, what_happened

from lesson_lib.agent import Agent
from lesson_lib.exercises import nb05
from lesson_lib.exercises.contract import failed_rules
from lesson_lib.llm import chat
from lesson_lib.protocol import assistant_to_dict


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
        text = reply.content or ""
        self.memory.add({"role": "assistant", "content": text})
        return text


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


class StoresNoneAsTheAnswer(Chat):
    """The task's dict taken literally: {'role': 'assistant', 'content': message.content}."""

    def finish(self, reply):
        self.memory.add({"role": "assistant", "content": reply.content})
        return reply.content or ""


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


class SecondCallSendsToolChoice(Chat):
    """tools=None on the second call, but tool_choice="auto" still sent: the API's 400."""

    def second_call(self):
        return chat(self.memory.to_api_format(), tools=None, tool_choice="auto",
                    client=self.client)


class IgnoresItsClient(Chat):
    """Calls chat() without client=: the shared client answers, not the agent's own."""

    def first_call(self):
        return chat(self.memory.to_api_format(), tools=self.tools)

    def second_call(self):
        return chat(self.memory.to_api_format())


class ForgetsItsClientTheSecondTime(Chat):
    def second_call(self):
        return chat(self.memory.to_api_format(), tools=None)


class ClearsAndApologisesWhenAToolFails(Chat):
    """Catches a tool that fails, forgets the conversation and says sorry: the memory is
    valid, and holds nothing of what was said before."""

    def chat(self, user_input):
        try:
            return super().chat(user_input)
        except Exception:
            self.memory.clear_non_system()
            self.memory.add({"role": "assistant", "content": "Sorry, something went wrong."})
            return "Sorry, something went wrong."


class BuildsTheCallWithoutItsText(Chat):
    """Writes the stored call by hand with content None: a sentence the model wrote beside
    its calls is lost."""

    def write_round(self, reply, results):
        asked = {"role": "assistant", "content": None, "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in reply.tool_calls]}
        self.memory.add_many([asked, *results])


WRONG = {
    UsesTheLibrarysSteps: "chat() writes the steps itself",
    NeverStoresTheUser: "chat() stores the user's message first",
    SendsOnlyTheNewest: "each request sends the whole memory",
    OffersNoTools: "a plain answer takes one model call",
    ReturnsTheMessage: "chat() returns the answer as text",
    ForgetsTheAnswer: "the answer is stored",
    StoresTheAnswerObject: "the answer is stored",
    StoresNoneAsTheAnswer: "an answer with content None is stored as",
    NoSecondCall: "a reply with tool_calls takes two model calls",
    SecondCallKeepsTheTools: "the second call goes out with tools=None",
    ResultsWithoutTheCall: "the assistant message with the tool_calls is stored",
    StoresTheCallObject: "the stored call is a plain dict",
    RunsOnlyTheFirstCall: "every call of a parallel reply is run",
    CallWithoutResults: "each call gets one tool message",
    ToolCallIdIsTheName: "each call gets one tool message",
    WritesTheCallBeforeRunningTheTools: "the call and its results are written together",
    TurnsTheToolsOffForGood: "for any conversation",
    SecondCallSendsToolChoice: "the second call sends no tool_choice",
    IgnoresItsClient: "every model call goes through the agent's own client",
    ForgetsItsClientTheSecondTime: "every model call goes through the agent's own client",
    ClearsAndApologisesWhenAToolFails: "the call and its results are written together",
    BuildsTheCallWithoutItsText: "text the model wrote beside its calls",
}


class Typo(Chat):
    def finish(self, reply):
        return reply.text  # the field is called content


class TestAgentChat(ScriptedCoreTrack):
    rules = nb05.EXERCISE_RULES
    check = nb05.check_my_agent_chat
    library = [Agent]
    library_rules = nb05.AGENT_RULES
    right = [IndependentAgent, Chat]
    wrong = WRONG
    skeleton = Skeleton
    hinted = SecondCallKeepsTheTools
    hint_steps = [
        ("what happened: the second request offered tools=[get_current_weather]",
         "at most one tool round"),
        ("at most one tool round", "pass tools=None"),
        ("pass tools=None to the second call", None),
    ]
    typo = Typo
    typo_says = ("your code raised AttributeError", "of finish()")
    misgiven = [IndependentAgent()]
    misgiven_says = "pass the class itself"
    both_languages = True


# ----------------------------------------------------------------- what only notebook 05 has

def test_the_librarys_agent_is_made_of_the_steps_the_exercise_asks_the_learner_to_write():
    assert failed_rules(Agent, [nb05.OWN_STEPS]) == [nb05.OWN_STEPS.name]


def test_the_property_rule_shows_the_smallest_conversation_that_breaks_it():
    assert what_happened(TurnsTheToolsOffForGood, nb05.AGENT_RULES, "for any conversation") == (
        "replies [1 call, answer], at input 2 (answer): request 1 offered tools=None, the "
        "library's tools=[get_current_weather]")


def test_a_chat_that_never_stops_asking_is_stopped_and_reported():
    class Twice(Chat):
        def finish(self, reply):
            chat(self.memory.to_api_format(), client=self.client)  # one call too many
            return super().finish(reply)

    what = what_happened(Twice, nb05.AGENT_RULES, "chat() stores the user's message")
    assert "asked the model again" in what


def test_a_tool_choice_without_tools_is_refused_with_the_apis_400():
    what = what_happened(SecondCallSendsToolChoice, nb05.AGENT_RULES, "the second call sends")
    assert what == ("the second request sent tool_choice='auto' with no tools, and the API "
                    "answered 400: Invalid value for 'tool_choice': 'tool_choice' is only "
                    "allowed when 'tools' are specified.")


def test_an_agent_that_ignores_its_client_is_told_where_the_call_went(capsys):
    assert nb05.check_my_agent_chat(ForgetsItsClientTheSecondTime) is False
    out = capsys.readouterr().out
    assert "❌ every model call goes through the agent's own client" in out, out
    assert ("chat('What\'s the weather?') made 1 model call without client=self.client: it "
            "went to the shared client") in out or "made 1 model call without client" in out, out
    assert "more rules will be judged once the ones above hold" in out, out


def test_a_crash_after_earlier_turns_must_leave_them_in_memory():
    what = what_happened(ClearsAndApologisesWhenAToolFails, nb05.AGENT_RULES,
                         "the call and its results are written together")
    assert "the earlier conversation is gone" in what, what
    assert "user 'My name is Xiaoming'" in what, what


def test_text_beside_the_calls_is_kept():
    what = what_happened(BuildsTheCallWithoutItsText, nb05.AGENT_RULES, "text the model wrote")
    assert what == ("the model wrote 'Let me check the weather first.' beside its call; the "
                    "memory stores the call with content None")
