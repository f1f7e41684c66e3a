"""repair_messages(): make a broken history valid again, and say what was changed.

Histories break outside the trim, too: a run stops between a tool call and its result,
a store reloads rows in the wrong order, other code cuts the list, a retry writes a
result twice, a provider numbers its calls call_0, call_1 … again in every turn. The API
then refuses every request built on that history (docs/protocol.md), and the conversation is
stuck until someone repairs it.

The repair pairs calls and results **by position**, as the API does: the tool messages
right after an assistant(tool_calls) are its replies. An id is only compared with the
calls of that one assistant message, never looked up in the whole history (ids can come
back in a later turn). Step by step:

1. An empty `tool_calls` list is removed. Calls of one assistant message that share an id
   are renamed apart ("call_0", "call_0~2"); their results follow in the same order.
2. Each tool message right after an assistant(tool_calls) answers the first of its calls
   with that id still unanswered; a second result for the same call is dropped (the
   first one counts, as each call is answered once).
3. Any other tool message is a stray. It moves into the nearest group before it that
   still misses its id (a result stored late), else into the nearest group after it (a
   result stored before its call), else it is dropped as an orphan.
4. A call still without a result is answered with an explicit "interrupted" tool message
   (or, with interrupted="drop", removed from its assistant message; an assistant message
   left with no calls and no text is dropped).

Everything else keeps its order. The input is never changed; a valid history comes back
equal, with no changes. `find_duplicate_ids()` checks both duplicate-id rules the real API
enforces: two results for one call (which `protocol.find_problems()` checks too) and two
calls of one assistant message with the same id (which it does not check).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from lesson_lib.i18n import _, ngettext
from lesson_lib.protocol import ProtocolError, message_problem

INTERRUPTED = json.dumps({"error": "interrupted: the run stopped before this tool call "
                                   "returned a result; call the tool again if you still need it"})

# the kinds of change, as Change.kind says them
EMPTY_CALLS, RENAMED, DUPLICATE = "empty tool_calls removed", "call id renamed", "duplicate dropped"
MOVED, ORPHAN = "result moved", "orphan dropped"
ANSWERED, CALL_DROPPED, EMPTY_DROPPED = "interrupted call answered", "interrupted call dropped", \
    "empty message dropped"


@dataclass
class Change:
    """One thing repair_messages() changed."""
    kind: str     # e.g. "orphan dropped", "result moved", "interrupted call answered"
    index: int    # where the message concerned stood in the input
    detail: str   # what happened, in words (in the language spoken when it was made)

    def __str__(self) -> str:
        return _("message {index}: {detail}").format(index=self.index, detail=self.detail)


class Repaired(NamedTuple):
    """What repair_messages() returns: `fixed, changes = repair_messages(history)`."""
    messages: list[dict]    # the repaired history (new dicts; the input is left alone)
    changes: list[Change]   # one entry per change, in the order they were made

    def __str__(self) -> str:
        if not self.changes:
            return _("repair_messages: nothing to repair")
        n = len(self.changes)
        lines = [ngettext("repair_messages: {n} change", "repair_messages: {n} changes",
                          n).format(n=n)]
        return "\n".join(lines + [f"  {change}" for change in self.changes])


@dataclass
class _Group:
    """An assistant(tool_calls) and the results found for its calls."""
    at: int                     # its index in the input
    message: dict               # the assistant message (a copy; ids renamed apart)
    raw: list[str]              # each call's id as it was stored
    ids: list[str]              # each call's id after renaming (all different)
    replies: dict = field(default_factory=dict)   # call id -> its tool message

    def missing(self, raw_id: str) -> str | None:
        """The first call stored as `raw_id` that has no result yet."""
        return next((cid for r, cid in zip(self.raw, self.ids, strict=True)
                     if r == raw_id and cid not in self.replies), None)


@dataclass
class _Stray:
    """A tool message that is not a reply of the group right before it."""
    at: int
    message: dict


# ----------------------------------------------------------------- the repair

def repair_messages(messages: Sequence[Mapping],  # a history, possibly broken (not changed)
                    *, interrupted: str = "answer",  # "answer": add an "interrupted" result;
                    ) -> Repaired:                   # "drop": remove the call instead
    """The history made valid for the API, and a list of every change made to it."""
    if interrupted not in ("answer", "drop"):
        raise ValueError(_("interrupted must be 'answer' or 'drop', got {value}").format(
            value=repr(interrupted)))
    _check_shapes(messages)
    changes: list[Change] = []
    items = _read(copy.deepcopy(list(messages)), changes)
    _place_strays(items, changes)
    fixed: list[dict] = []
    for item in items:
        if isinstance(item, _Group):
            fixed += _close(item, interrupted, changes)
        elif not isinstance(item, _Stray):
            fixed.append(item)
    return Repaired(fixed, changes)


def _check_shapes(messages: Sequence) -> None:
    """Refuse what no reordering can fix: a message of the wrong shape."""
    for i, m in enumerate(messages):
        if isinstance(m, Mapping) and m.get("role") == "assistant" and m.get("tool_calls") == []:
            continue  # an empty tool_calls list is repaired, not refused
        if (problem := message_problem(i, m)) is not None:
            problem.explanation = _("{explanation}: repair_messages() fixes where tool results "
                                    "stand, not the shape of a message; fix this one first"
                                    ).format(explanation=problem.explanation)
            raise problem


def _read(messages: list[dict], changes: list[Change]) -> list:
    """The history as plain messages, groups and strays, by position (steps 1 and 2)."""
    items: list = []
    group: _Group | None = None
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            if group is None or not _answer(group, i, m, changes):
                items.append(_Stray(i, m))
            continue
        group = None
        if m["role"] == "assistant" and m.get("tool_calls") == []:
            m = _without_calls(i, m, changes, EMPTY_CALLS,
                               _("its empty tool_calls list was removed"))
        elif m["role"] == "assistant" and m.get("tool_calls"):
            m = group = _group(i, m, changes)
        if m is not None:
            items.append(m)
    return items


def _group(i: int, m: dict, changes: list[Change]) -> _Group:
    """Open a group for an assistant(tool_calls), renaming calls that share an id."""
    raw = [call["id"] for call in m["tool_calls"]]
    ids: list[str] = []
    for call, cid in zip(m["tool_calls"], raw, strict=True):
        new, k = cid, 1
        while new in ids or (new != cid and new in raw):
            k += 1
            new = f"{cid}~{k}"
        if new != cid:
            call["id"] = new
            changes.append(Change(RENAMED, i, _("a second call with id {id} was renamed {new} "
                                                "(ids must differ; its result follows it)"
                                                ).format(id=cid, new=new)))
        ids.append(new)
    return _Group(i, m, raw, ids)


def _answer(group: _Group, i: int, m: dict, changes: list[Change]) -> bool:
    """Record tool message `m` as a reply of `group`; False if it answers none of its calls."""
    raw_id = m["tool_call_id"]
    if raw_id not in group.raw:
        return False
    cid = group.missing(raw_id)
    if cid is None:
        changes.append(Change(DUPLICATE, i, _("a second result for {id} (assistant message "
                                              "{at}) was dropped: the first one counts").format(
                                                  id=raw_id, at=group.at)))
        return True
    group.replies[cid] = m if cid == raw_id else {**m, "tool_call_id": cid}
    return True


def _place_strays(items: list, changes: list[Change]) -> None:
    """Step 3: each stray joins the nearest group before it that misses its id, else the
    nearest group after it, else it is dropped as an orphan."""
    for k, item in enumerate(items):
        if not isinstance(item, _Stray):
            continue
        before = next((g for g in reversed(items[:k]) if isinstance(g, _Group)), None)
        after = next((g for g in items[k + 1:] if isinstance(g, _Group)), None)
        raw_id = item.message["tool_call_id"]
        home = next((g for g in (before, after) if g is not None and g.missing(raw_id)), None)
        if home is None:
            changes.append(Change(ORPHAN, item.at, _("tool result for {id} was dropped: no call "
                                                     "next to it asked for it (an orphan)").format(
                                                         id=raw_id)))
            continue
        cid = home.missing(raw_id)
        home.replies[cid] = {**item.message, "tool_call_id": cid}
        text = (_("tool result for {id} (stored late) was moved back after assistant message "
                  "{at}") if home is before else
                _("tool result for {id} (stored before its call) was moved back after assistant "
                  "message {at}"))
        changes.append(Change(MOVED, item.at, text.format(id=raw_id, at=home.at)))


def _close(group: _Group, interrupted: str, changes: list[Change]) -> list[dict]:
    """Step 4: the group as messages, every call answered (or, "drop", removed)."""
    missing = [cid for cid in group.ids if cid not in group.replies]
    if interrupted == "answer":
        for cid in missing:
            group.replies[cid] = {"role": "tool", "tool_call_id": cid, "content": INTERRUPTED}
            changes.append(Change(ANSWERED, group.at, _("call {id} never got a result: answered "
                                                        "it with an 'interrupted' error").format(
                                                            id=cid)))
        return [group.message, *group.replies.values()]
    m = group.message
    for cid in missing:
        changes.append(Change(CALL_DROPPED, group.at, _("call {id} never got a result: removed "
                                                        "it from the assistant message").format(
                                                            id=cid)))
    m["tool_calls"] = [c for c in m["tool_calls"] if c["id"] not in missing]
    if not m["tool_calls"]:
        m = _without_calls(group.at, m, changes, None, "")
    return ([m] if m is not None else []) + list(group.replies.values())


def _without_calls(i: int, m: dict, changes: list[Change], kind: str | None,
                   detail: str) -> dict | None:
    """`m` without its tool_calls key; None (dropped) if it has no text left either."""
    if kind:
        changes.append(Change(kind, i, detail))
    m = {key: value for key, value in m.items() if key != "tool_calls"}
    if m.get("content"):
        return m
    changes.append(Change(EMPTY_DROPPED, i, _("assistant message with no text and no calls "
                                              "left was dropped")))
    return None


# ----------------------------------------------------------------- the duplicate-id rule

def find_duplicate_ids(messages: Sequence[Mapping]) -> list[ProtocolError]:
    """Tool results that answer the same call twice, and calls of one assistant message
    that share an id: the real API refuses both (protocol.find_problems() checks only the
    first). Empty list: no duplicates."""
    problems, seen = [], {}   # seen: call id -> index of its first result, in this group
    for i, m in enumerate(messages):
        if m.get("role") != "tool":
            seen = {}
            ids = [c.get("id") for c in m.get("tool_calls") or [] if isinstance(c, Mapping)]
            twice = sorted({cid for cid in ids if ids.count(cid) > 1}, key=ids.index)
            problems += [ProtocolError(  # reconstructed
                f"Invalid parameter: Duplicate value for 'tool_calls.id' of '{cid}' in "
                f"messages[{i}].", param=f"messages.[{i}].tool_calls", index=i,
                explanation=_("assistant message {i} has two calls with id {id}: give each "
                              "call its own id (repair_messages() renames them apart)").format(
                                  i=i, id=cid))
                for cid in twice]
        elif (cid := m.get("tool_call_id")) in seen:
            problems.append(ProtocolError(  # verbatim (captured from the real API)
                f"Invalid parameter: Duplicate value for 'tool_call_id' of '{cid}', in "
                f"messages[{seen[cid]}] and messages[{i}].",
                param=f"messages.[{i}].tool_call_id", index=i,
                explanation=_("messages {first} and {second} both answer {id}: keep one "
                              "result per call (repair_messages() keeps the first)").format(
                                  first=seen[cid], second=i, id=cid)))
        else:
            seen[cid] = i
    return problems
