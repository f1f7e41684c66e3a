"""Self-checks for notebook 04, trimming pitfalls: judged by the project's bank.

1. `check_my_trim(my_trim)`: the learner's `my_trim(messages, max_messages)` is judged by
   `lesson_lib.trimcheck.check_trim(my_trim, unit="messages")` on VALID_CASES: the bank's
   histories that the API accepts (20 of TRIM_CASES' 28). The other 8 are broken before any
   trim (an interrupted run, duplicate ids, a wrong order); notebook 07 repairs those, and
   then `check_trim(my_trim)` runs all 28.
2. `check_turn_trim(my_turn_trim)`: the same cases and rules, plus one: after the system
   messages, the kept history starts with a user message (no answer whose question is gone).

`show_trim(trim, name)` shows one case before and after a trim function.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lesson_lib.exercises import Report, not_done
from lesson_lib.trimcheck import TRIM_CASES, TrimCase, check_trim, judge_trim, trim_case

VALID_CASES: list[TrimCase] = [c for c in TRIM_CASES if not c.broken]  # what 04 can judge


def _unwritten(fn: Any, cases: Sequence[TrimCase]) -> str | None:
    """Why `fn` is not an attempt yet (not a function, or None for every case), or None."""
    if not callable(fn):
        return ("define it with def ...(messages, max_messages): and pass the function "
                "itself (no parentheses)")
    for case in cases:
        try:
            if fn(copy.deepcopy(case.messages), case.max_messages) is not None:
                return None
        except Exception:  # an attempt that raises is judged (and reported) by the bank
            return None
    return "it returns None for every history: write its body, ending with return and the list"


def check_my_trim(my_trim: Any,  # your function: my_trim(messages, max_messages) -> list
                  cases: Sequence[TrimCase] | None = None,
                  detail: bool = False) -> bool:  # True: a line for every case
    """Exercise 1: check_trim(my_trim, unit="messages") on the bank's valid histories."""
    cases = VALID_CASES if cases is None else list(cases)
    if (why := _unwritten(my_trim, cases)) is not None:
        return not_done("Exercise 1 · my_trim", why)
    return check_trim(my_trim, unit="messages", cases=cases, detail=detail)


def _starts_with_answer(result: Any) -> str | None:
    """The role a kept history starts with (after system messages) when it is not 'user'."""
    if not isinstance(result, list) or not all(isinstance(m, Mapping) for m in result):
        return None
    first = next((m for m in result if m.get("role") != "system"), None)
    return None if first is None or first.get("role") == "user" else str(first.get("role"))


def check_turn_trim(my_turn_trim: Any,  # my_turn_trim(messages, max_messages) -> list
                    cases: Sequence[TrimCase] | None = None) -> bool:
    """Exercise 2: exercise 1's cases and rules, and the kept history (after the system
    messages) must start with a user message."""
    title = "Exercise 2 · my_turn_trim"
    cases = VALID_CASES if cases is None else list(cases)
    if (why := _unwritten(my_turn_trim, cases)) is not None:
        return not_done(title, why)
    verdicts = judge_trim(my_turn_trim, "messages", cases)
    for v in verdicts:
        if (role := _starts_with_answer(v.result)) is not None:
            article = "an" if role[:1] in "aeiou" else "a"
            v.problems.append((f"after the system messages it starts with {article} {role} message "
                               "whose question is gone",
                               "after trimming, keep dropping the oldest group while the "
                               "first non-system message is not a user message"))
    report = Report(f"{title}: score {sum(v.passed for v in verdicts)}/{len(verdicts)}")
    for v in verdicts:
        size = f"{len(v.case.messages)} messages, budget {v.case.max_messages}"
        if v.passed:
            report.expect(True, f"{v.case.name} ({size}): kept {len(v.result)}")
        else:
            hint = v.problems[0][1]
            if not v.problems[0][0].startswith("after the system messages"):
                hint += f". This case protects against {v.case.protects}"
            report.expect(False, f"{v.case.name} ({size}): " + "; ".join(w for w, _ in v.problems),
                          hint)
    print(report)
    return report.passed


def _dropped(after: list, before: list[dict]) -> list[dict]:
    """The messages of `before` that `after` no longer has (matched from the end)."""
    kept, j = set(), len(before) - 1
    for m in reversed(after):
        while j >= 0 and before[j] != m:
            j -= 1
        if j < 0:
            return []
        kept.add(j)
        j -= 1
    return [m for i, m in enumerate(before) if i not in kept]


def show_trim(trim: Callable,  # a trim function: trim(messages, max_messages) -> list
              name: str,       # a case's name, e.g. "parallel group at the cut"
              cases: Sequence[TrimCase] | None = None):
    """One case before and after `trim`, side by side: what it dropped struck through,
    what the API would refuse in red."""
    from lesson_lib.display import show_messages, side_by_side  # noqa: PLC0415

    case = trim_case(name, VALID_CASES if cases is None else cases)
    after = trim(copy.deepcopy(case.messages), case.max_messages)
    after = after if isinstance(after, list) and all(isinstance(m, Mapping) for m in after) \
        else []
    return side_by_side(show_messages(case.messages),
                        show_messages(after, dropped=_dropped(after, case.messages)),
                        titles=[f"{case.name} (max_messages={case.max_messages})",
                                f"after {getattr(trim, '__name__', 'the trim')}"])
