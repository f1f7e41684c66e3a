"""Self-checks for notebook 02, "Messages are memory".

- `check_chat_turn(chat_turn)`: the learner's one turn of a remembering chat
  (add the user's words, send the whole memory, add the reply, return its text).
- `check_prediction(first, second)`: two predicted `message_count()` values for
  `prediction_sequence()` (a trim, then a clear).
- `check_count_user_turns(count_user_turns)`: the learner's count of user messages,
  tried on memories with and without a system prompt, and with tool rounds.
- `check_my_memory(MyMemory)`: the core exercise, the learner's own memory class, judged
  by `MEMORY_RULES` (the rules that also guard `ShortTermMemory` in the tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from lesson_lib.exercises import (
    Report,
    _learner_frame,
    finishing,
    not_done,
    run_check,
    signature_problem,
    wrong_signature,
)
from lesson_lib.exercises.contract import Broken, Rule, check_rules, expect, property_rule
from lesson_lib.i18n import N_, Twins, _, is_chinese, ngettext
from lesson_lib.memory import ShortTermMemory

# The conversations of the checks, each with its Chinese twin: a Chinese learner is judged
# on Chinese data by the same rules (DATA.NAME, or the module's NAME, in the language spoken
# now; prediction_sequence too, so that the Chinese notebook shows its own).
DATA = Twins(
    SYSTEM=("You are a helpful assistant.", "你是一个乐于助人的助手。"),
    TURNS=(("My name is Xiaoming", "Thanks!", "What's my name?"),  # what check_chat_turn types
           ("我叫小明", "谢谢！", "我叫什么名字？")),
    NAME=("xiaoming", "小明"),  # what the last reply must remember
    ARGUMENTS=('{"location": "Chengdu"}', '{"location": "成都"}'),  # in the deep rule's call
    HELLO=("Hi", "你好"),
)


def __getattr__(name: str) -> Any:
    if name == "prediction_sequence":
        return _PREDICTION_SEQUENCE.prediction_sequence
    return DATA.get(name, f"module {__name__!r}")


# ----------------------------------------------------------------- exercise 1: chat_turn

def _roles(memory: ShortTermMemory) -> list[str]:
    return [m["role"] for m in memory.to_api_format()]


def _check_turns(report: Report, chat_turn: Callable) -> None:
    memory = ShortTermMemory()
    memory.add_system(DATA.SYSTEM)
    replies, growth = [], []
    for text in DATA.TURNS:
        before = memory.message_count()
        replies.append(chat_turn(memory, text))
        growth.append(memory.message_count() - before)
        if replies == [...] and growth == [0]:  # the stub, untouched
            report.expect(False, _("chat_turn is not written yet (it returned ...)"),
                          _("replace ... with the three steps: add, chat, add; then return"))
            return
    report.expect(growth == [2, 2, 2],
                  _("each turn adds 2 messages (yours added {growth})").format(growth=growth),
                  _("add the user's message before the call and the assistant's reply after it"))
    roles = _roles(memory)
    wanted = ["system"] + ["user", "assistant"] * len(DATA.TURNS)
    report.expect(roles == wanted, _("roles in memory: {roles}").format(roles=", ".join(roles)),
                  _("expected {roles}: user first, then the reply to it").format(
                      roles=", ".join(wanted)))
    said = [m["content"] for m in memory.to_api_format() if m["role"] == "user"]
    report.expect(said == list(DATA.TURNS), _("the user messages hold the three texts, in order"),
                  _("expected {expected}, got {got}").format(expected=list(DATA.TURNS), got=said))
    last = memory.to_api_format()[-1]
    stored = last.get("role") == "assistant"
    if not report.expect(stored,
                         _("after each turn the memory ends with the model's reply") if stored
                         else _("after each turn the memory ends with the model's reply (it "
                                "ends with a {role} message)").format(role=last.get("role")),
                         _("add the reply, {'role': 'assistant', 'content': reply.content}, to "
                           "the memory before you return: the next turn's call must see "
                           "it")):
        return  # whether it returns the reply's text cannot be told from the memory
    report.expect(isinstance(replies[-1], str) and replies[-1] == last.get("content"),
                  _("chat_turn returns the reply's text (got {type})").format(
                      type=type(replies[-1]).__name__),
                  _("return reply.content, the same text you added to the memory"))
    text = getattr(replies[-1], "content", replies[-1])  # a message object: quote its text
    report.expect(DATA.NAME in str(text).lower(),
                  _("the reply to {question!r} remembers the name: {text!r}").format(
                      question=DATA.TURNS[-1], text=text),
                  (N_("the model only knows what this one call sends: look at what your "
                      "chat_turn passes to chat()"),
                   N_("send the whole memory, chat(memory.to_api_format()), not just the "
                      "newest message")))


def check_chat_turn(chat_turn: Callable) -> bool:  # the learner's chat_turn(memory, text)
    """Run three turns through `chat_turn` on a fresh memory and report what it did."""
    if wrong_signature("chat_turn", signature_problem(
            chat_turn, "chat_turn(memory, text)", None, "")):
        return False
    return run_check("chat_turn", lambda report: _check_turns(report, chat_turn))


# ----------------------------------------------------------------- exercise 2: predict

def prediction_sequence() -> tuple[int, int]:
    """The sequence whose two message counts exercise 2 asks you to predict."""
    m = ShortTermMemory(max_messages=4)
    m.add_system("You are a helpful assistant.")
    m.add({"role": "user", "content": "My name is Xiaoming"})
    m.add({"role": "assistant", "content": "Nice to meet you, Xiaoming!"})
    m.add({"role": "user", "content": "Is it cloudy in Chengdu?"})
    m.add({"role": "assistant", "content": "Yes: cloudy, 16°C."})
    m.add({"role": "user", "content": "Thanks!"})
    first = m.message_count()   # prediction 1
    m.clear_non_system()
    m.add({"role": "user", "content": "What's my name?"})
    second = m.message_count()  # prediction 2
    return first, second


_prediction_sequence_en = prediction_sequence  # the Chinese edition's twin follows


def prediction_sequence() -> tuple[int, int]:
    """练习 2 要你预测的两个消息条数，出自这段操作。"""
    m = ShortTermMemory(max_messages=4)
    m.add_system("你是一个乐于助人的助手。")
    m.add({"role": "user", "content": "我叫小明"})
    m.add({"role": "assistant", "content": "你好，小明！"})
    m.add({"role": "user", "content": "成都是多云吗？"})
    m.add({"role": "assistant", "content": "是的：多云，16°C。"})
    m.add({"role": "user", "content": "谢谢！"})
    first = m.message_count()   # 预测 1
    m.clear_non_system()
    m.add({"role": "user", "content": "我叫什么名字？"})
    second = m.message_count()  # 预测 2
    return first, second


_PREDICTION_SEQUENCE = Twins(prediction_sequence=(_prediction_sequence_en, prediction_sequence))
del prediction_sequence  # the module's prediction_sequence is the one of the language spoken


FIRST_HINTS = {
    6: N_("six messages went in (the system prompt too), but max_messages=4 caps the memory: "
          "each add() trims"),
    5: N_("the system message counts toward max_messages too"),
    3: N_("the trim drops only as many as needed to get back to max_messages"),
}
WALK_THROUGH = N_("walk through the sequence one add at a time, counting the system message")
SECOND_HINTS = {
    0: N_("clear_non_system() keeps the system message"),
    1: N_("the user message added after the clear counts too"),
    5: N_("clear_non_system() forgets everything but the system message"),
    4: N_("clear_non_system() forgets everything but the system message"),
}


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_one(report: Report, label: str, guess: object, answer: int, hints: dict) -> None:
    if not _is_count(guess):
        report.expect(False, _("{label}: not answered yet (got {guess!r})").format(
                          label=label, guess=guess),
                      _("replace ... with a whole number"))
        return
    report.expect(guess == answer, _("{label}: you predicted {guess}").format(
                      label=label, guess=guess),
                  _(hints.get(guess, WALK_THROUGH)))


def check_prediction(first: object, second: object) -> bool:  # your two predicted counts
    """Compare the two predicted counts with what `prediction_sequence()` really gives."""
    real_first, real_second = _PREDICTION_SEQUENCE.prediction_sequence()

    def body(report: Report) -> None:
        _check_one(report, _("prediction 1 (system prompt + five messages)"), first, real_first,
                   FIRST_HINTS)
        _check_one(report, _("prediction 2 (after the clear and one more message)"), second,
                   real_second, SECOND_HINTS)

    return run_check(_("predict message_count()"), body)


# ----------------------------------------------------------------- exercise 3: count

def _call(call_id: str, city: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": "get_current_weather",
                         "arguments": json.dumps({"location": city}, ensure_ascii=False)}}


def _memory(messages: list[dict], system: bool = True) -> ShortTermMemory:
    memory = ShortTermMemory()
    if system:
        memory.add_system(DATA.SYSTEM)
    memory.add_many(messages)
    return memory


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


def count_cases() -> list[tuple[str, ShortTermMemory, int, str]]:
    """(what, memory, expected count, hint) for check_count_user_turns."""
    zh = is_chinese()
    plain = ([_user("我叫小明"), _assistant("你好！"), _user("谢谢！"),
              _assistant("不客气！"), _user("我叫什么名字？"), _assistant("小明。")] if zh else
             [_user("My name is Xiaoming"), _assistant("Nice to meet you!"), _user("Thanks!"),
              _assistant("You're welcome!"), _user("What's my name?"), _assistant("Xiaoming.")])
    chengdu, shanghai, beijing = ("成都", "上海", "北京") if zh else ("Chengdu", "Shanghai",
                                                                     "Beijing")
    one_call = [_user("成都天气？" if zh else "Weather in Chengdu?"),
                {"role": "assistant", "content": None, "tool_calls": [_call("call_1", chengdu)]},
                {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 16}'},
                _assistant("成都多云，16°C。" if zh else "Chengdu is cloudy, 16°C.")]
    two_calls = [_user("上海和北京的天气？" if zh else "Weather in Shanghai and Beijing?"),
                 {"role": "assistant", "content": None,
                  "tool_calls": [_call("call_a", shanghai), _call("call_b", beijing)]},
                 {"role": "tool", "tool_call_id": "call_a", "content": '{"temperature": 20}'},
                 {"role": "tool", "tool_call_id": "call_b", "content": '{"temperature": 12}'},
                 _assistant("上海20°C，北京12°C。" if zh else
                            "Shanghai 20°C, Beijing 12°C.")]
    cleared = _memory(plain)
    cleared.clear_non_system()
    by_role = _("count the messages whose role is 'user'")
    return [
        (_("an empty memory"), ShortTermMemory(), 0, by_role),
        (_("only a system prompt"), _memory([]), 0, _("the system message is not a user turn")),
        (_("system + 3 plain turns"), _memory(plain), 3, by_role),
        (_("a question still waiting for its reply"), _memory([_user(DATA.HELLO)]), 1,
         by_role),
        (_("no system prompt, 2 questions, 1 reply"),
         _memory(plain[:3], system=False), 2,
         _("not every memory has a system message, and the newest question may have no reply")),
        (_("one turn with a tool round (4 messages)"), _memory(one_call), 1,
         _("a tool round adds 4 messages for one question (notebook 03): "
           "count roles, not messages")),
        (_("one turn with two parallel calls (5 messages)"), _memory(two_calls), 1,
         _("tool and assistant messages are not user turns, however many there are")),
        (_("after clear_non_system()"), cleared, 0, _("a cleared memory holds no user message")),
    ]


def _check_counts(report: Report, count_user_turns: Callable) -> None:
    changed = []
    for what, memory, expected, hint in count_cases():
        before = memory.to_api_format()
        got = count_user_turns(memory)
        report.expect(_is_count(got) and got == expected,
                      _("{what}: expected {expected}, got {got!r}").format(
                          what=what, expected=expected, got=got), hint)
        if memory.to_api_format() != before:
            changed.append(what)
    report.expect(not changed,
                  _("it leaves every memory unchanged (it changed: {changed})").format(
                      changed="; ".join(changed)) if changed
                  else _("it leaves every memory unchanged"),
                  _("only read the memory: to_api_format() gives you a copy to look at"))


def check_count_user_turns(count_user_turns: Callable) -> bool:  # count_user_turns(memory)
    """Try `count_user_turns` on several memories and report each result."""
    if wrong_signature("count_user_turns", signature_problem(
            count_user_turns, "count_user_turns(memory)", None)):
        return False
    return run_check("count_user_turns", lambda report: _check_counts(report, count_user_turns))


# ----------------------------------------------------------------- core: build the memory
#
# The learner writes a class with the library's interface (MyMemory(max_messages), add,
# _trim, to_api_format, clear_non_system, message_count) and the simplest trim: while there
# are more than max_messages messages, drop the oldest one that is not a system message. No
# tool messages yet: notebook 04 adds what they change (swallow a dropped call's replies).
# MEMORY_RULES judge it; tests/test_core_track.py runs the same rules on ShortTermMemory.

MEMORY_TITLE = N_("Build it · your ShortTermMemory")


def _said(role: str, n: int) -> dict:
    return {"role": role, "content": f"{role} {n}"}


TRIM_HINTS = (
    N_("when every message left is a system message there is nothing the trim may drop: "
       "the loop must stop then (`break`, or `return`), though the memory is still over "
       "max_messages"),
    N_("a `for` that looks for the oldest non-system message needs `else: break` for when "
       "it finds none; next(...) needs a default, next((...), None), checked before "
       "deleting"))


def _filled(cls: type, max_messages: int, roles: list[str]) -> Any:
    """A new memory of `cls` with one message per role added, numbered in order; a trim
    that does not finish is stopped and reported (Stuck)."""
    memory = cls(max_messages=max_messages)
    for n, role in enumerate(roles, 1):
        with finishing(lambda n=n: _("this history: max_messages={max_messages}, adding "
                                     "{added}").format(
                                         max_messages=max_messages,
                                         added=_labels([_said(r, k) for k, r in
                                                        enumerate(roles[:n], 1)])),
                       who=N_("your trim"), hints=TRIM_HINTS):
            memory.add(_said(role, n))
    return memory


def _labels(messages: Any) -> str:
    """A history as short labels, e.g. [system 1, user 2, assistant 3]."""
    try:
        return "[" + ", ".join(str(m.get("content")) for m in messages) + "]"
    except (AttributeError, TypeError):
        return repr(messages)


def _keeps_order(cls: type) -> None:
    roles = ["system", "user", "assistant", "system", "user"]  # a system message added later
    memory = _filled(cls, 10, roles)
    want = [_said(r, n) for n, r in enumerate(roles, 1)]
    got = memory.to_api_format()
    expect(got == want, _("added {added}, to_api_format() gave {got}").format(
        added=_labels(want), got=_labels(got)))


def _list_is_a_copy(cls: type) -> None:
    memory = _filled(cls, 10, ["system", "user"])
    memory.to_api_format().append(_said("user", 99))
    got = memory.to_api_format()
    expect(len(got) == 2, _("memory.to_api_format().append(...) changed the memory: "
                            "it now holds {got}").format(got=_labels(got)))


def _messages_are_copies(cls: type) -> None:
    memory = _filled(cls, 10, ["system", "user"])
    memory.to_api_format()[1]["content"] = "edited"
    got = memory.to_api_format()
    expect(got[1]["content"] == "user 2",
           _("memory.to_api_format()[1]['content'] = 'edited' changed the memory's message "
             "too: {message}").format(message=got[1]))


def _add_stores_a_copy(cls: type) -> None:
    memory = cls(max_messages=10)
    message = {"role": "user", "content": "hello"}
    memory.add(message)
    message["content"] = "changed afterwards"
    got = memory.to_api_format()
    expect(got == [{"role": "user", "content": "hello"}],
           _("after add(message), message['content'] = 'changed afterwards' changed the "
             "memory too: {got}").format(got=got))


def _with_a_call() -> dict:
    """An assistant message whose tool call holds a value two levels down (notebook 03)."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_current_weather", "arguments": DATA.ARGUMENTS}}]}


def _arguments(message: Any) -> Any:
    try:
        return message["tool_calls"][0]["function"]["arguments"]
    except (KeyError, IndexError, TypeError):
        return None


def _copies_go_all_the_way_down(cls: type) -> None:
    memory = _filled(cls, 10, ["system", "user"])
    message = _with_a_call()
    memory.add(message)
    edit = "['tool_calls'][0]['function']['arguments']"

    def unchanged(said: str, value: str, hints: tuple[str, str]) -> None:
        """Broken(said, hints) unless the memory's call still holds DATA.ARGUMENTS."""
        got = _arguments(memory.to_api_format()[-1])
        if got != DATA.ARGUMENTS:
            raise Broken(said.format(edit=edit, value=value, got=got), hints)

    message["tool_calls"][0]["function"]["arguments"] = '{"location": "Beijing"}'
    unchanged(
        _("after add(message), message{edit} = {value!r} changed the memory too: it now "
          "holds {got!r}"), '{"location": "Beijing"}',
        (N_("a copy of the dict still shares the dict's insides: dict(message), "
            "message.copy() and {**message} copy one level, so the tool_calls list in "
            "the memory is still the caller's own list"),
         N_("append copy.deepcopy(message): it copies the dict and everything inside "
            "it (import copy first)")))
    memory.to_api_format()[-1]["tool_calls"][0]["function"]["arguments"] = "{}"
    unchanged(
        _("memory.to_api_format()[2]{edit} = {value!r} changed the memory's message too: "
          "it now holds {got!r}"), "{}",
        (N_("a copy of the list of dicts still shares the dicts' insides: "
            "[dict(m) for m in ...] copies each message one level down, so a message's "
            "tool_calls list is still the memory's own list"),
         N_("return copy.deepcopy(self._messages): it copies the list, every dict in "
            "it and everything inside them (import copy first)")))


def _counts(cls: type) -> None:
    for roles in ([], ["system"], ["system", "user", "assistant"]):
        got = _filled(cls, 10, roles).message_count()
        expect(got == len(roles), ngettext("after adding {n} message, message_count() said "
                                           "{got!r}", "after adding {n} messages, "
                                           "message_count() said {got!r}",
                                           len(roles)).format(n=len(roles), got=got))
    memory = _filled(cls, 10, ["system", "user", "assistant", "user", "assistant"])
    memory.clear_non_system()
    memory.add(_said("user", 6))
    held, count = len(memory.to_api_format()), memory.message_count()
    expect(count == held,
           _("after five add()s, clear_non_system() and one more add(), to_api_format() gives "
             "{held} messages but message_count() says {count!r}: the two must agree").format(
               held=held, count=count),
           (N_("a count kept apart from the list (a counter that add() raises) misses "
               "whatever else changes the list: clear_non_system() and the trim remove "
               "messages without telling it"),
            N_("count the list itself: return len(self._messages)")))


def _clear_keeps_system(cls: type) -> None:
    memory = _filled(cls, 10, ["system", "user", "assistant", "system", "user"])
    memory.clear_non_system()
    got = memory.to_api_format()
    want = [_said("system", 1), _said("system", 4)]
    expect(got == want, _("clear_non_system() on [system 1, user 2, assistant 3, system 4, "
                          "user 5] left {got}; expected {expected}").format(
                              got=_labels(got), expected=_labels(want)))
    memory.add(_said("user", 6))
    got, count = memory.to_api_format(), memory.message_count()
    expect(len(got) == count == 3,
           _("after the clear, one more add(): to_api_format() gave {got} and "
             "message_count() said {count!r}; expected the two system messages and user 6 "
             "(3 messages)").format(got=_labels(got), count=count))


def _within_max(cls: type) -> None:
    memory = _filled(cls, 3, ["system", "user", "assistant", "user", "assistant"])
    got, count = memory.to_api_format(), memory.message_count()
    expect(len(got) == 3, _("max_messages=3, five messages added: it keeps {n}, "
                            "{got}").format(n=len(got), got=_labels(got)))
    expect(count == 3, _("max_messages=3, five messages added: to_api_format() gives 3 "
                         "messages, but message_count() says {count!r}: the two must "
                         "agree").format(count=count))


def _drops_oldest(cls: type) -> None:
    memory = _filled(cls, 3, ["system", "user", "assistant", "user"])
    got = memory.to_api_format()
    want = [_said("system", 1), _said("assistant", 3), _said("user", 4)]
    expect(got == want, _("max_messages=3 after [system 1, user 2, assistant 3, user 4]: kept "
                          "{got}; expected {expected}").format(got=_labels(got),
                                                               expected=_labels(want)))


def _keeps_system(cls: type) -> None:
    memory = _filled(cls, 3, ["system", "user", "system", "assistant", "user"])
    got = memory.to_api_format()
    systems = [m for m in got if m.get("role") == "system"]
    expect(systems == [_said("system", 1), _said("system", 3)],
           _("max_messages=3 after [system 1, user 2, system 3, assistant 4, user 5]: kept "
             "{got}, without {missing}").format(
               got=_labels(got),
               missing=_labels([_said("system", n) for n in (1, 3)
                                if _said("system", n) not in systems])))


def _only_systems_left(cls: type) -> None:
    roles = ["system", "system", "system", "user"]
    memory = _filled(cls, 2, roles)
    got = memory.to_api_format()
    systems = [m for m in got if m.get("role") == "system"]
    expect(len(systems) == 3 and len(got) <= 4,
           _("max_messages=2 after [system 1, system 2, system 3, user 4]: kept {got}; the "
             "three system messages must stay (the newest message may too)").format(
               got=_labels(got)))


def _expected(roles: list[str], max_messages: int) -> list[dict]:
    """The seed's trim applied after each add: the reference the property compares with."""
    kept: list[dict] = []
    for n, role in enumerate(roles, 1):
        kept.append(_said(role, n))
        while len(kept) > max_messages:
            oldest = next((i for i, m in enumerate(kept) if m["role"] != "system"), None)
            if oldest is None:
                break
            del kept[oldest]
    return kept


def _any_conversation(cls: type, example: tuple[list[str], int]) -> str | None:
    roles, max_messages = example
    memory = _filled(cls, max_messages, roles)
    got, want = memory.to_api_format(), _expected(roles, max_messages)
    if got == want and memory.message_count() == len(want):
        return None
    return _("max_messages={max_messages}, adding {added} one at a time keeps {got}; "
             "expected {expected}").format(
        max_messages=max_messages, added=_labels([_said(r, n) for n, r in enumerate(roles, 1)]),
        got=_labels(got), expected=_labels(want))


def _conversations():
    from hypothesis import strategies as st  # noqa: PLC0415

    # max_messages leaves room for the system messages and one more: when they alone are
    # too many, the library keeps the newest message anyway (what it adds, shown after)
    roles = st.lists(st.sampled_from(["system", "user", "assistant"]), max_size=12)
    return roles.flatmap(lambda rs: st.tuples(
        st.just(rs), st.integers(rs.count("system") + 1, rs.count("system") + 6)))


MEMORY_RULES: list[Rule] = [
    Rule(N_("add() keeps messages in order, and to_api_format() returns them"), _keeps_order,
         (N_("add() appends to the list that __init__ made; to_api_format() returns that list's "
          "messages, oldest first"),
          N_("one list, in the order add() was called: a system message added later stays "
          "where it was added, it does not move to the front"))),
    Rule(N_("to_api_format() returns a new list, so appending to it leaves the memory alone"),
         _list_is_a_copy,
         (N_("returning self._messages hands the caller your own list: whatever they append "
          "is in the memory too"),
          N_("return a copy; the next rule says how deep the copy must go")),
         needs=("add() keeps messages in order, and to_api_format() returns them",)),
    Rule(N_("to_api_format() copies each message too, so editing one leaves the memory alone"),
         _messages_are_copies,
         (N_("list(...) or .copy() copies the list, but the dicts inside are still yours"),
          N_("copy.deepcopy copies the list and every dict in it")),
         needs=("add() keeps messages in order, and to_api_format() returns them",)),
    Rule(N_("add() stores a copy, so changing the dict afterwards leaves the memory alone"),
         _add_stores_a_copy,
         (N_("the caller still holds the dict they passed to add(): store a copy of it"),
          N_("append copy.deepcopy(message), not the message itself (import copy first)"))),
    Rule(N_("the copies go all the way down: editing a tool call inside a message leaves "
            "the memory alone"),
         _copies_go_all_the_way_down,
         (N_("a copy of the list of dicts still shares the dicts' insides: copy every "
             "level, in add() and in to_api_format()"),
          N_("copy.deepcopy copies a dict and everything inside it (import copy first)")),
         needs=("to_api_format() copies each message too, so editing one leaves the memory "
                "alone",
                "add() stores a copy, so changing the dict afterwards leaves the memory alone")),
    Rule(N_("message_count() says how many messages the memory holds"), _counts,
         (N_("count every message, system ones included"),
          N_("the memory is the list __init__ made: its length is the count"))),
    Rule(N_("clear_non_system() forgets the conversation and keeps every system message"),
         _clear_keeps_system,
         (N_("keep the messages whose role is 'system', wherever they are, and nothing else"),
          N_("build the kept list with a comprehension and store it as the memory's list"))),
    Rule(N_("the trim keeps max_messages messages: no more, and no fewer than it must"), _within_max,
         (N_("add() appends, then trims the memory's own list (call self._trim() at its end), "
          "so that to_api_format() and message_count() both see the trimmed list"),
          N_("_trim() drops while there are MORE than max_messages messages: a list of exactly "
          "max_messages is fine"),
          N_("in _trim(): while len(self._messages) > self.max_messages, drop one message"))),
    Rule(N_("the trim drops the oldest message that is not a system message"), _drops_oldest,
         (N_("the oldest message is at the front of the list (index 0 was added first), but a "
          "system message is never dropped: look for the first one whose role is not 'system'"),
          N_("find the first index whose role is not 'system' (a for loop over "
          "enumerate(self._messages) finds it), and delete that one")),
         needs=("the trim keeps max_messages messages: no more, and no fewer than it must",)),
    Rule(N_("the trim never drops a system message, even one in the middle"), _keeps_system,
         (N_("a system message can sit anywhere in the list, not only at index 0: skip every "
          "message whose role is 'system'"),),
         needs=("the trim keeps max_messages messages: no more, and no fewer than it must",)),
    Rule(N_("when only system messages are left to drop, the trim stops (it never runs for "
            "ever)"), _only_systems_left, TRIM_HINTS,
         needs=("the trim keeps max_messages messages: no more, and no fewer than it must",)),
    property_rule(
        N_("for any conversation and max_messages: it keeps the system messages and the newest "
        "others"),
        _conversations(), _any_conversation,
        (N_("the smallest conversation above is one your trim gets wrong: replay it by hand, "
         "one add() at a time"),
         N_("each drop removes the oldest message whose role is not 'system', whatever its "
         "role (user or assistant)")),
        needs=("the trim drops the oldest message that is not a system message",
               "the trim never drops a system message, even one in the middle")),
]


SKELETON = (("add", ({"role": "user", "content": "hi"},)), ("_trim", ()),
            ("to_api_format", ()), ("clear_non_system", ()), ("message_count", ()))


def still_to_write(cls: type) -> list[str]:
    """The skeleton's methods that still raise NotImplementedError, each tried on a new
    memory (add() calling an unwritten _trim() names _trim)."""
    names: list[str] = []
    for method, args in SKELETON:
        try:
            getattr(cls(), method)(*args)
        except NotImplementedError as error:
            names.append(_learner_frame(error).name)
        except Exception:  # written, maybe wrong: the rules will say what is wrong
            pass
    return [f"{name}()" for name in dict.fromkeys(names)]


def _to_write(cls: type) -> str:
    """What the one-line "not done yet" report asks for: the methods still to write."""
    todo = still_to_write(cls)
    if not todo:
        return _("write the bodies of the skeleton's methods, then run this check again")
    listed = todo[0] if len(todo) == 1 else _("{first} and {last}").format(
        first=", ".join(todo[:-1]), last=todo[-1])
    return ngettext("write {listed}: it still raises NotImplementedError; then run this check "
                    "again",
                    "write {listed}: each still raises NotImplementedError; then run this "
                    "check again", len(todo)).format(listed=listed)


METHODS = (("__init__", "MyMemory(max_messages=3)", (), {"max_messages": 3}),
           ("add", "memory.add(message)", (None,), {}),
           ("_trim", "self._trim()", (), {}),
           ("to_api_format", "memory.to_api_format()", (), {}),
           ("clear_non_system", "memory.clear_non_system()", (), {}),
           ("message_count", "memory.message_count()", (), {}))


def method_problem(cls: type, methods: Any = METHODS) -> str | None:
    """One sentence for the first method of `cls` whose parameters are not the ones the
    check calls it with (None: they all are)."""
    for name, shown, args, kwargs in methods:
        if name == "__init__":
            problem = signature_problem(cls, shown, *args, **kwargs)
        else:
            method = getattr(cls, name, None)
            problem = None if method is None else signature_problem(method, shown, None, *args,
                                                                    **kwargs)
        if problem:
            return problem
    return None


def check_my_memory(MyMemory: Any) -> bool:  # noqa: N803  your class, not an instance
    """The core exercise: judge the learner's memory class by MEMORY_RULES."""
    if not isinstance(MyMemory, type):
        return not_done(_(MEMORY_TITLE), _("pass the class itself: check_my_memory(MyMemory)"))
    if wrong_signature(_(MEMORY_TITLE), method_problem(MyMemory)):
        return False
    return check_rules(_(MEMORY_TITLE), MyMemory, MEMORY_RULES, start=_to_write(MyMemory))
