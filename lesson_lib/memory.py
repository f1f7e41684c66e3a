"""ShortTermMemory: the `messages` list an agent sends on every call, kept valid while it is trimmed.

The model remembers nothing between calls; the list is its whole memory. `add()` writes to
it, `to_api_format()` reads it before each call, `clear_non_system()` forgets (the CLI's
`/clear`), and `_trim()` keeps it under `max_messages`.

The trim rule (from the source article): while there are too many messages, drop the oldest
non-system message, and then also drop the `tool` messages right after it, so that no tool
reply is left without the assistant message that asked for it. System messages are never
dropped.

Two guards are added to that rule, each fixing a real flaw of it:

1. **A tool round that is still open is not trimmed.** Messages arrive one at a time: first
   `assistant(tool_calls)`, then one `tool` reply per call. Trimming in between can drop the
   assistant message while some of its parallel results have not arrived yet; the next
   result then arrives as an orphan (max_messages=1 with two parallel calls shows it).
   `add()` waits until the round's last result has arrived, then trims the round as a whole.
2. **The newest message is never dropped, nor the tool round it closes.** The model must
   see what was just said (the user's question, the results it asked for), and an empty
   list is refused by the API.

So `message_count() <= max_messages` always holds except (a) while a tool round is open, and
(b) when the system messages plus the newest message (or the newest tool round) are already
more than `max_messages`; the trim then keeps exactly those.

`NaiveMemory` is the tempting wrong way (notebook 04): it drops one message at a time and
leaves orphan `tool` messages behind, which the API refuses with a 400.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

from lesson_lib.i18n import _, ngettext
from lesson_lib.protocol import ProtocolError, json_type, with_sdk_hint
from lesson_lib.protocol import message_problem as shape_problem  # one message's shape rules


class ShortTermMemory:
    """The message list sent to the model on every call, trimmed without breaking tool pairs."""

    def __init__(self, max_messages: int = 40):  # most messages kept (system ones always are)
        if not isinstance(max_messages, int) or max_messages < 1:
            raise ValueError(_("max_messages must be a whole number of at least 1, got "
                               "{value}: a memory must keep the newest message").format(
                                   value=repr(max_messages)))
        self.max_messages = max_messages
        self._messages: list[dict] = []
        self.last_dropped: list[dict] = []  # what the most recent add's trim removed
        self.dropped_count = 0               # how many messages trims removed, in all

    def add(self, message: dict) -> None:  # a plain dict in the API's shape
        """Append one message, then trim (unless a tool round is still open).

        Refuses (ProtocolError, memory unchanged) a message of the wrong shape, a tool reply
        that answers no open call, and any other message while tool replies are still due."""
        self._check(message)
        self._messages.append(copy.deepcopy(dict(message)))
        self.last_dropped = []
        if not self.pending_calls():  # guard 1: never trim inside an open tool round
            self._trim()

    def add_many(self, messages: Iterable[dict]) -> None:  # e.g. assistant(tool_calls) + tools
        """Append several messages (e.g. a whole tool round), then trim once.
        All or nothing: if one message is refused, none is added."""
        before = list(self._messages)
        try:
            for message in messages:
                self._check(message)
                self._messages.append(copy.deepcopy(dict(message)))
        except BaseException:
            self._messages = before  # put the memory back as it was
            raise
        self.last_dropped = []
        if not self.pending_calls():
            self._trim()

    def add_system(self, text: str) -> None:
        """Append a system message (the agent's standing instructions)."""
        self.add({"role": "system", "content": text})

    def to_api_format(self) -> list[dict]:
        """The messages to send, as a copy: changing it never changes the memory."""
        return copy.deepcopy(self._messages)

    def clear_non_system(self) -> None:
        """Forget the conversation, keep the system messages (the CLI's /clear)."""
        self._messages = [m for m in self._messages if m.get("role") == "system"]
        self.last_dropped = []

    def message_count(self) -> int:
        """How many messages the memory holds now."""
        return len(self._messages)

    def pending_calls(self) -> list[str]:
        """Ids of the newest assistant message's tool calls that have no tool reply yet."""
        answered = []
        for m in reversed(self._messages):
            if m["role"] != "tool":
                calls = (m.get("tool_calls") or []) if m["role"] == "assistant" else []
                return [c["id"] for c in calls if c["id"] not in answered]
            answered.append(m["tool_call_id"])
        return []

    def _trim(self) -> None:
        """The source article's rule, plus guard 2: the newest message (or the tool round
        it closes) is never dropped, so the model always sees what was just said."""
        while self.message_count() > self.max_messages:
            # 1. the oldest message that is not a system message
            idx = next((i for i, m in enumerate(self._messages) if m["role"] != "system"), None)
            if idx is None:
                break  # only system messages are left, and they are never dropped
            # 2. it, plus the tool replies right after it (no orphan may stay behind)
            end = idx + 1
            while end < len(self._messages) and self._messages[end]["role"] == "tool":
                end += 1
            if end == len(self._messages):
                break  # guard 2: that would drop the newest message
            self._drop(idx, end)

    def _drop(self, start: int, end: int) -> None:
        """Remove messages[start:end], remembering them for pictures and counts."""
        self.last_dropped.extend(self._messages[start:end])
        self.dropped_count += end - start
        del self._messages[start:end]

    def _check(self, message: dict) -> None:
        """Raise ProtocolError (naming the rule, the place and the fix) if `message`
        cannot come next; an assistant(tool_calls) waiting for its replies is fine."""
        n, pending = len(self._messages), self.pending_calls()
        problem = shape_problem(n, message) or _calls_list_problem(n, message)
        if problem is None and message["role"] == "tool":
            problem = _reply_problem(n, message["tool_call_id"], pending, self._messages)
        elif problem is None and pending:
            problem = _interrupts_problem(n, message["role"], pending, self._messages)
        if problem is not None:
            raise nothing_added(with_sdk_hint(problem, message))

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        roles = ", ".join(_role_label(m) for m in self._messages) or _("empty")
        text = _("{name}(max_messages={most}): {n} messages [{roles}], {dropped} dropped so "
                 "far").format(name=type(self).__name__, most=self.max_messages,
                               n=len(self._messages), roles=roles, dropped=self.dropped_count)
        return text + waiting_for(self.pending_calls())


class NaiveMemory(ShortTermMemory):
    """THE WRONG WAY, kept for notebook 04: its trim drops only the oldest non-system
    message. When that message is an assistant(tool_calls), its tool replies stay behind
    as orphans, and the next request fails with the API's 400 ("messages with role 'tool'
    must be a response to a preceeding message with 'tool_calls'"). Everything else
    (the checks in add(), not trimming an open round) is ShortTermMemory's."""

    def _trim(self) -> None:
        while self.message_count() > self.max_messages:
            idx = next((i for i, m in enumerate(self._messages) if m["role"] != "system"), None)
            if idx is None:
                break
            self._drop(idx, idx + 1)  # the pitfall: the tool replies after it are kept


class SeedMemory(ShortTermMemory):
    """The source article's class as written: append, then trim by its rule, no guards.
    Right for whole rounds; but when a parallel round arrives one message at a time and
    max_messages is small, the trim can drop the assistant(tool_calls) before its last
    result arrives, and that result is then stored as an orphan (notebook 04)."""

    def add(self, message: dict) -> None:
        self._messages.append(copy.deepcopy(dict(message)))  # no checks, as in the article
        self.last_dropped = []
        self._trim()

    def _trim(self) -> None:
        while self.message_count() > self.max_messages:
            idx = next((i for i, m in enumerate(self._messages) if m["role"] != "system"), None)
            if idx is None:
                break
            end = idx + 1  # swallow the tool replies right after it
            while end < len(self._messages) and self._messages[end]["role"] == "tool":
                end += 1
            self._drop(idx, end)


# ----------------------------------------------------------------- helpers

def _role_label(m: Mapping) -> str:
    if m.get("role") == "assistant" and m.get("tool_calls"):
        n = len(m["tool_calls"])
        return ngettext("assistant→{n} call", "assistant→{n} calls", n).format(n=n)
    return str(m.get("role"))


def waiting_for(pending: list[str]) -> str:
    """The end of a memory's repr while tool replies are due ("" when none is)."""
    return _(", waiting for {ids}").format(ids=", ".join(pending)) if pending else ""


def nothing_added(problem: ProtocolError) -> ProtocolError:
    """`problem`, its explanation saying that the memory refused the message."""
    problem.explanation = _("{explanation} — nothing was added to the memory").format(
        explanation=problem.explanation)
    return problem


def _calls_list_problem(n: int, message: Mapping) -> ProtocolError | None:
    """tool_calls, when present, is a list of calls (the API refuses a single dict)."""
    calls = message.get("tool_calls")
    if message["role"] != "assistant" or calls is None or isinstance(calls, list):
        return None
    return ProtocolError(  # reconstructed, in the shape of the API's invalid_type texts
        f"Invalid type for 'messages[{n}].tool_calls': expected an array of objects, but got "
        f"{json_type(calls)} instead.", param=f"messages[{n}].tool_calls",
        code="invalid_type", index=n,
        explanation=_("message {n} (assistant): tool_calls must be a list, even for one "
                      "call: wrap it in [...]").format(n=n))


def _asking_index(messages: list[dict]) -> int | None:
    """Index of the assistant message whose tool round is open at the end of `messages`."""
    i = len(messages) - 1
    while i >= 0 and messages[i]["role"] == "tool":
        i -= 1
    return i if i >= 0 else None


def _reply_problem(n: int, call_id: str, pending: list[str],
                   messages: list[dict]) -> ProtocolError | None:
    """A tool message may only answer a call that is still waiting for its reply."""
    if call_id in pending:
        return None
    if not pending:
        return ProtocolError(  # the API's verbatim text for an orphan tool message
            "Invalid parameter: messages with role 'tool' must be a response to a "
            "preceeding message with 'tool_calls'.", param=f"messages.[{n}].role", index=n,
            explanation=_("message {n} (tool, {id}) answers no open call: add the "
                          "assistant message with its tool_calls first, then one tool message "
                          "per call id").format(n=n, id=call_id))
    ask = _asking_index(messages)
    return ProtocolError(  # the API's verbatim text for an unknown tool_call_id
        f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of "
        "previous message.", param=f"messages.[{n}].tool_call_id", index=n,
        explanation=_("message {n} (tool) answers {id}, but assistant message {ask} still "
                      "waits for {pending} (each call is answered once): copy tool_call.id "
                      "into tool_call_id").format(n=n, id=repr(call_id), ask=ask,
                                                  pending=", ".join(pending)))


def _interrupts_problem(n: int, role: str, pending: list[str],
                        messages: list[dict]) -> ProtocolError:
    """Nothing but tool replies may come between an assistant(tool_calls) and its replies."""
    ask = _asking_index(messages)
    return ProtocolError(  # the API's verbatim text for missing tool replies
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        f"{', '.join(pending)}", param=f"messages.[{n}].role", index=n,
        explanation=_("message {n} ({role}) cannot come yet: assistant message {ask} still "
                      "waits for {pending}; add one tool message per call first (an error "
                      "text is a fine content)").format(n=n, role=role, ask=ask,
                                                        pending=", ".join(pending)))
