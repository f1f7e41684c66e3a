"""TokenBudgetMemory: the message list kept under a token budget, trimmed without breaking it.

ShortTermMemory (memory.py) counts messages; the API counts tokens. One pasted web page in a
tool result costs more than fifty short turns, so a message limit can still end in the
API's `context_length_exceeded`. TokenBudgetMemory has ShortTermMemory's API (add, add_many,
add_system, to_api_format, clear_non_system, message_count, pending_calls) and these rules:

- **The budget is the whole request's.** Each message is counted once, when it is added,
  the way the offline model and the cookbook count it (lesson_lib.tokens: 3 tokens per
  message, every string, tool-call names and arguments), plus the reply priming and the
  tool definitions, if you pass them.
- **Whole units go, oldest first.** A unit is one message, or an assistant(tool_calls)
  with all its tool replies. With drop="turn", whole turns go: a user message and
  everything up to the next one.
- **Always kept:** every system message (unless keep_system=False), and the current turn:
  the latest user message and everything after it. A system message whose neighbours
  were dropped moves up to join the leading ones; the order never changes.
- **A current turn too big on its own** (one huge tool result): its largest tool results
  are cut, with a visible marker "[truncated 12,400 of 13,000 characters]", instead of
  dropping the pair or sending a request the API refuses.
- **Impossible:** OverBudgetError says by how much, and the add is refused: the memory
  stays exactly as it was.
- **Optional summary:** with summarizer=..., what is dropped is replaced by ONE system
  message written by the model itself (the previous summary folded into the next), right
  after the leading system messages. `model_summarizer()` builds one on llm.chat. When
  room runs out, the summary gives way (cut, then dropped) before the current turn does.

The two guards of ShortTermMemory stay: nothing is trimmed while a tool round is open,
and the newest messages (here: the whole current turn) are never dropped.

An add costs the same with ten messages held or ten thousand: the running total, the open
calls and where the current turn starts are kept up to date as messages come; trimming
works out a plan from the oldest units (nothing changes if it cannot fit), then pops them.

`MessageBudgetMemory` is the same trimming with the budget counted in messages (a soft
limit: when the system messages and the current turn alone are more, they are kept).
"""

from __future__ import annotations

import copy
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from lesson_lib.i18n import N_, _
from lesson_lib.memory import (
    _interrupts_problem,
    _reply_problem,
    _role_label,
    nothing_added,
    waiting_for,
)
from lesson_lib.protocol import ProtocolError, message_problem
from lesson_lib.tokens import REPLY_PRIMING, count_message, count_request, count_text, count_tools

SUMMARY_REQUEST = N_("Summarize the conversation so far.")
DROP_MODES = ("unit", "turn")
AMOUNTS = {"tokens": N_("{n} tokens"), "messages": N_("{n} messages")}  # a count, said
BAD_BUDGET = {  # (unit, has an overhead): the error of a budget that cannot be
    ("tokens", True): N_("the budget must be a whole number of tokens above {least} (what the "
                         "reply priming and the tools cost), got {value}"),
    ("tokens", False): N_("the budget must be a whole number of tokens above {least}, got "
                          "{value}"),
    ("messages", True): N_("the budget must be a whole number of messages above {least} (what "
                           "the reply priming and the tools cost), got {value}"),
    ("messages", False): N_("the budget must be a whole number of messages above {least}, got "
                            "{value}"),
}


def amount(n: int, unit: str) -> str:
    """"1,200 tokens", "12 messages", in the learner's language."""
    said = AMOUNTS.get(unit)
    return _(said).format(n=f"{n:,}") if said else f"{n:,} {unit}"


class OverBudgetError(ValueError):
    """Even the smallest list the memory may send is over its budget."""

    def __init__(self, needed: int, budget: int, unit: str = "tokens"):
        self.needed, self.budget, self.over, self.unit = needed, budget, needed - budget, unit
        super().__init__(_(
            "over budget by {over}: every system message plus the current turn (its tool "
            "results truncated) still needs {needed}, and the budget is {budget}. Nothing was "
            "added: raise the budget, send fewer tools, or shorten what you add").format(
                over=amount(self.over, unit), needed=amount(needed, unit), budget=f"{budget:,}"))


def truncate_text(text: str,        # the text to shorten (a tool result, a summary)
                  max_tokens: int,  # most tokens the result may have, its marker included
                  ) -> str:
    """`text` cut to at most `max_tokens` tokens, ending with a visible marker such as
    "[truncated 12,400 of 13,000 characters]" (the longest such prefix, by binary search).
    When not even the marker fits, the marker alone comes back."""
    if count_text(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_text(_cut(text, mid)) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return _cut(text, lo)


def _cut(text: str, keep: int) -> str:
    marker = f"[truncated {len(text) - keep:,} of {len(text):,} characters]"
    return f"{text[:keep]}\n{marker}" if keep else marker


def model_summarizer(chat: Callable | None = None,   # chat(messages) -> reply; default llm.chat
                     request: str | None = None,     # what the model is asked; None:
                     ) -> Callable[[list[dict]], str]:  # SUMMARY_REQUEST, in your language
    """A summarizer for TokenBudgetMemory: the model itself is asked to summarise the
    messages it is given (the previous summary first, then what is being dropped). The
    request is SUMMARY_REQUEST in the language spoken when it is made (a model answers in
    the language it is asked in), unless `request` says otherwise."""
    def summarize(messages: list[dict]) -> str:
        asked = _(SUMMARY_REQUEST) if request is None else request
        if chat is None:
            from lesson_lib.llm import chat as ask  # noqa: PLC0415 (memory must not need llm)
        else:
            ask = chat
        reply = ask([*messages, {"role": "user", "content": asked}])
        content = reply.get("content") if isinstance(reply, Mapping) else reply.content
        return content or ""
    return summarize


@dataclass
class _Unit:
    """Messages kept or dropped together, each with its cost counted once."""
    messages: list[dict]   # one message, or an assistant(tool_calls) and its tool replies
    costs: list[int]       # what each message costs (tokens, or 1 for MessageBudgetMemory)
    serial: int            # the how-many-th unit added (never reused; -1: a summary)

    @property
    def role(self) -> str:
        return self.messages[0]["role"]


@dataclass
class _Plan:
    """What a trim will do, worked out before anything changes."""
    over: int                      # how far over the budget the request still is
    summary: _Unit | None = None   # the summary after the trim
    take: int = 0                  # units leaving the front (dropped, or moved up if system)
    dropped: list[dict] = field(default_factory=list)
    cuts: list[tuple[_Unit, int, dict, int]] = field(default_factory=list)  # unit, k, new, cost


class TokenBudgetMemory:
    """The message list sent on every call, kept under a token budget without breaking it."""

    unit = "tokens"   # what the budget counts
    strict = True     # a list that cannot fit is refused (the API would refuse it too)

    def __init__(self, token_budget: int = 4000,  # most tokens a request may cost (not the
                                                  # API's max_tokens, which caps the reply)
                 *, tools: list[dict] | None = None,  # tool definitions sent with each request
                 drop: str = "unit",        # "unit": a message or a tool round; "turn": a turn
                 keep_system: bool = True,  # False: old system messages may be dropped too
                 summarizer: Callable[[list[dict]], str] | None = None):  # e.g. model_summarizer()
        self.overhead = self._overhead(tools)  # what a request costs before any message
        if not isinstance(token_budget, int) or token_budget <= self.overhead:
            said = BAD_BUDGET.get((self.unit, bool(self.overhead)))
            cost = " (what the reply priming and the tools cost)" if self.overhead else ""
            text = (_(said) if said else f"the budget must be a whole number of {self.unit} "
                    f"above {{least}}{cost}, got {{value}}")  # another unit: English only
            raise ValueError(text.format(least=self.overhead, value=repr(token_budget)))
        if drop not in DROP_MODES:
            raise ValueError(_("drop must be 'unit' or 'turn', got {value}").format(
                value=repr(drop)))
        self.budget, self.tools, self.drop = token_budget, tools, drop
        self.keep_system, self.summarizer = keep_system, summarizer
        self._pinned: list[_Unit] = []        # system messages moved up by trims
        self._summary: _Unit | None = None    # the summary of what was dropped, if any
        self._units: deque[_Unit] = deque()   # everything else, oldest first
        self._total = self._count = self._serial = 0  # cost and number of messages held
        self._pending: list[str] = []         # calls of the newest assistant still unanswered
        self._turn: int | None = None         # serial of the latest user message's unit
        self.last_dropped: list[dict] = []    # what the most recent add's trim removed
        self.last_truncated: list[str] = []   # tool_call_ids whose results it cut
        self.dropped_count = 0                # how many messages trims removed, in all

    @property
    def token_budget(self) -> int:
        return self.budget

    def cost(self, message: Mapping) -> int:
        """What one message costs: its tokens, counted as the offline model counts them."""
        return count_message(message)

    def _overhead(self, tools: list[dict] | None) -> int:
        return REPLY_PRIMING + count_tools(tools)

    # ------------------------------------------------------------- ShortTermMemory's API

    def add(self, message: dict) -> None:  # a plain dict in the API's shape
        """Append one message, then trim to the budget (unless a tool round is still open).
        Refused, with the memory unchanged: a message of the wrong shape or in the wrong
        place (ProtocolError), one that cannot fit even after trimming (OverBudgetError)."""
        self.add_many([message])

    def add_many(self, messages: Iterable[dict]) -> None:  # e.g. assistant(tool_calls) + tools
        """Append several messages (e.g. a whole tool round), then trim once. All or nothing."""
        new = [copy.deepcopy(dict(m)) if isinstance(m, Mapping) else m for m in messages]
        self._check_all(new)
        mark = self._mark()
        for message in new:
            self._append(message)
        self.last_dropped, self.last_truncated = [], []
        try:
            if not self._pending:  # guard 1: never trim inside an open tool round
                self._fit()
        except BaseException:
            self._undo(mark)  # the memory goes back to how it was before this add
            raise

    def add_system(self, text: str) -> None:
        """Append a system message (the agent's standing instructions)."""
        self.add({"role": "system", "content": text})

    def to_api_format(self) -> list[dict]:
        """The messages to send, as a copy: changing it never changes the memory."""
        return copy.deepcopy([m for unit in self._held() for m in unit.messages])

    def token_counts(self) -> list[int]:
        """What each message of to_api_format() costs, in the same order."""
        return [c for unit in self._held() for c in unit.costs]

    def token_count(self) -> int:
        """Tokens the next request costs: the messages, the reply priming and the tools."""
        return self._total + self.overhead

    def clear_non_system(self) -> None:
        """Forget the conversation and its summary, keep the system messages (/clear)."""
        self._pinned = [u for u in (*self._pinned, *self._units) if u.role == "system"]
        self._units, self._summary, self._pending, self._turn = deque(), None, [], None
        self._total = sum(sum(u.costs) for u in self._pinned)
        self._count, self.last_dropped = len(self._pinned), []

    def message_count(self) -> int:
        """How many messages the memory holds now (a summary counts as one)."""
        return self._count

    def pending_calls(self) -> list[str]:
        """Ids of the newest assistant message's tool calls that have no tool reply yet."""
        return list(self._pending)

    @property
    def summary(self) -> str | None:
        """The text of the summary of dropped messages, if there is one."""
        return self._summary.messages[0]["content"] if self._summary else None

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        roles = ", ".join(_role_label(m) for u in self._held() for m in u.messages) or _("empty")
        text = _("{name}(budget={budget}): {n} messages [{roles}], {used} used, {dropped} "
                 "dropped so far").format(
            name=type(self).__name__, budget=amount(self.budget, self.unit), n=self._count,
            roles=roles, used=amount(self._total + self.overhead, self.unit),
            dropped=self.dropped_count)
        return text + waiting_for(self._pending)

    # ------------------------------------------------------------- adding

    def _held(self) -> list[_Unit]:
        return [*self._pinned, *([self._summary] if self._summary else []), *self._units]

    def _check_all(self, messages: list) -> None:
        """Raise ProtocolError (memory unchanged) if one of `messages` cannot come next."""
        pending = list(self._pending)
        for k, message in enumerate(messages):
            def earlier(k=k) -> list:  # the list so far, built only to word an error
                return self.to_api_format() + messages[:k]
            problem = _order_problem(self._count + k, message, pending, earlier)
            if problem is not None:
                raise nothing_added(problem)
            pending = _still_pending(message, pending)

    def _append(self, message: dict) -> None:
        """Add one (checked) message to the tail, keeping every count up to date."""
        cost = self.cost(message)
        if message["role"] == "tool":  # it joins its assistant message's unit
            self._units[-1].messages.append(message)
            self._units[-1].costs.append(cost)
        else:
            self._units.append(_Unit([message], [cost], self._serial))
            if message["role"] == "user":
                self._turn = self._serial  # a new current turn starts here
            self._serial += 1
        self._pending = _still_pending(message, self._pending)
        self._total, self._count = self._total + cost, self._count + 1

    def _mark(self) -> tuple:
        """Where the tail stands now: enough to take back what an add appends."""
        tail = len(self._units[-1].messages) if self._units else 0
        return (len(self._units), tail, list(self._pending), self._turn, self._total,
                self._count, self._serial)

    def _undo(self, mark: tuple) -> None:
        units, tail, self._pending, self._turn, self._total, self._count, self._serial = mark
        while len(self._units) > units:
            self._units.pop()
        if self._units:
            del self._units[-1].messages[tail:], self._units[-1].costs[tail:]

    # ------------------------------------------------------------- trimming

    def _fit(self) -> None:
        """Trim until the request fits: plan it all first, refuse if it cannot fit, apply."""
        over = self._total + self.overhead - self.budget
        if over <= 0:
            return
        plan = _Plan(over, summary=self._summary)
        self._plan_drops(plan)
        if self.summarizer is not None and plan.dropped:
            self._plan_summary(plan)
        if plan.over > 0 and plan.summary is not None:
            self._plan_summary_room(plan)
        self._plan_cuts(plan)
        if plan.over > 0 and self.strict:
            raise OverBudgetError(self.budget + plan.over, self.budget, self.unit)
        self._apply(plan)

    def _protected_from(self) -> int:
        """Serial of the first unit never dropped: the latest user message's (the current
        turn), or the newest unit's when no user message is held."""
        if self._turn is not None:
            return self._turn
        return self._units[-1].serial if self._units else self._serial

    def _plan_drops(self, plan: _Plan) -> None:
        """Take units from the front, oldest first, while over budget (with drop="turn",
        on to the next user message); system units move up instead (keep_system)."""
        protected = self._protected_from()
        for unit in itertools.islice(self._units, plan.take, None):
            if unit.serial >= protected:
                break
            if plan.over <= 0 and (self.drop == "unit" or unit.role == "user"):
                break
            plan.take += 1
            if unit.role != "system" or not self.keep_system:
                plan.dropped += unit.messages
                plan.over -= sum(unit.costs)

    def _plan_summary(self, plan: _Plan) -> None:
        """Fold what is dropped into one summary; if the summary needs room, drop more
        and fold that in too."""
        done = 0
        while done < len(plan.dropped):
            before = [plan.summary.messages[0]] if plan.summary else []
            text = str(self.summarizer(before + plan.dropped[done:]))
            message = {"role": "system", "content": text}
            new = _Unit([message], [self.cost(message)], -1)
            plan.over += new.costs[0] - (plan.summary.costs[0] if plan.summary else 0)
            plan.summary, done = new, len(plan.dropped)
            self._plan_drops(plan)

    def _plan_summary_room(self, plan: _Plan) -> None:
        """Still over with nothing left to drop: the summary gives way before the current
        turn does. It is cut to fit, or dropped if even its marker would not fit."""
        message, cost = plan.summary.messages[0], plan.summary.costs[0]
        shorter = {**message, "content": truncate_text(message["content"],
                                                       count_text(message["content"]) - plan.over)}
        new = _Unit([shorter], [self.cost(shorter)], -1)
        if new.costs[0] > cost - plan.over:
            plan.summary, plan.over = None, plan.over - cost
        else:
            plan.summary, plan.over = new, plan.over - (cost - new.costs[0])

    def _plan_cuts(self, plan: _Plan) -> None:
        """Still over: cut the largest tool results of the current turn."""
        for unit, k in self._cut_candidates():
            if plan.over <= 0:
                break
            message, cost = unit.messages[k], unit.costs[k]
            text = truncate_text(message["content"], count_text(message["content"]) - plan.over)
            shorter = {**message, "content": text}
            if (new_cost := self.cost(shorter)) < cost:
                plan.cuts.append((unit, k, shorter, new_cost))
                plan.over -= cost - new_cost

    def _cut_candidates(self) -> list[tuple[_Unit, int]]:
        """(unit, index) of each tool result in the current turn, largest first."""
        found, protected = [], self._protected_from()
        for unit in reversed(self._units):
            if unit.serial < protected:
                break
            found += [(unit, k) for k, m in enumerate(unit.messages)
                      if m["role"] == "tool" and isinstance(m.get("content"), str)]
        return sorted(found, key=lambda uk: -uk[0].costs[uk[1]])

    def _apply(self, plan: _Plan) -> None:
        """Carry out a plan: pop the front units, set the summary, cut what it cuts."""
        for _step in range(plan.take):
            unit = self._units.popleft()
            if unit.role == "system" and self.keep_system:
                self._pinned.append(unit)  # it stays, now among the leading messages
            else:
                self._total -= sum(unit.costs)
                self._count -= len(unit.messages)
        if plan.summary is not self._summary:
            self._set_summary(plan.summary)
        for unit, k, shorter, cost in plan.cuts:
            self._total += cost - unit.costs[k]
            unit.messages[k], unit.costs[k] = shorter, cost
            self.last_truncated.append(shorter["tool_call_id"])
        self.last_dropped = plan.dropped
        self.dropped_count += len(plan.dropped)

    def _set_summary(self, new: _Unit | None) -> None:
        """Replace the summary (None: no summary any more), keeping the counts right."""
        for unit, sign in ((self._summary, -1), (new, 1)):
            if unit is not None:
                self._total += sign * unit.costs[0]
                self._count += sign
        self._summary = new


class MessageBudgetMemory(TokenBudgetMemory):
    """TokenBudgetMemory's trimming with the budget counted in messages, like
    ShortTermMemory's max_messages, but never splitting a turn's tool rounds or dropping
    the current question. A message limit is a choice, not an API rule: when the system
    messages and the current turn alone are more than max_messages, they are all kept."""

    unit, strict = "messages", False

    def __init__(self, max_messages: int = 40,  # most messages kept (see the class docstring)
                 *, drop: str = "unit", keep_system: bool = True,
                 summarizer: Callable[[list[dict]], str] | None = None):
        super().__init__(max_messages, drop=drop, keep_system=keep_system, summarizer=summarizer)
        self.max_messages = max_messages

    def cost(self, message: Mapping) -> int:
        return 1

    def _overhead(self, tools: list[dict] | None) -> int:
        return 0

    def _plan_cuts(self, plan: _Plan) -> None:
        pass  # a shorter message is still one message

    def token_count(self) -> int:
        """Tokens the next request costs (counted afresh: this memory counts messages)."""
        return count_request(self.to_api_format(), self.tools)


# ----------------------------------------------------------------- helpers

def _still_pending(message: Mapping, pending: list[str]) -> list[str]:
    """The calls still waiting for a reply once `message` is added."""
    if message["role"] == "tool":
        rest = list(pending)
        rest.remove(message["tool_call_id"])
        return rest
    if message["role"] == "assistant" and message.get("tool_calls"):
        return [call["id"] for call in message["tool_calls"]]
    return []


def _order_problem(n: int, message: Mapping, pending: list[str],
                   earlier: Callable[[], list]) -> ProtocolError | None:
    """The first rule `message` breaks as message n while `pending` calls wait for replies
    (ShortTermMemory's checks; `earlier()` builds the list only to word an error)."""
    problem = message_problem(n, message)
    if problem is not None:
        return problem
    if message["role"] == "tool" and message["tool_call_id"] not in pending:
        return _reply_problem(n, message["tool_call_id"], pending, earlier())
    if message["role"] != "tool" and pending:
        return _interrupts_problem(n, message["role"], pending, earlier())
    return None
