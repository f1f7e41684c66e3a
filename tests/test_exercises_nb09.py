"""Notebook 09's exercise check: the library's reference and an independent solution pass;
each wrong version a learner really writes fails on the finding that names its mistake,
with a hint that comes in steps."""

from __future__ import annotations

import pytest

from lesson_lib import exercises
from lesson_lib.exercises.nb09 import check_assemble
from lesson_lib.streaming import assemble_message


def _messages(chunks, *, choice_filter=True, join=True, keep=True, key="index",
              name_each=False, add=True, tool_type=True, empty_calls=False):
    """One parametrised learner: each flag flips one decision to its typical mistake."""
    texts, calls = [], {}
    for chunk in chunks:
        for part in chunk.choices:
            if choice_filter and part.index != 0:
                continue
            delta = part.delta
            if delta.content:
                texts.append(delta.content)
            for piece in delta.tool_calls or []:
                k = getattr(piece, key) if key != "each" else len(calls)
                if k not in calls or key == "each":
                    calls[k] = {"id": piece.id, "function": {"name": piece.function.name,
                                                             "arguments": ""}}
                    if tool_type:
                        calls[k]["type"] = "function"
                    if not keep:
                        texts.clear()
                call = calls[k]
                if name_each:
                    call["function"]["name"] = piece.function.name
                fragment = piece.function.arguments or ""
                call["function"]["arguments"] = (call["function"]["arguments"] + fragment
                                                 if add else fragment)
    message = {"role": "assistant", "content": ("".join(texts) if join else texts) or None}
    if calls or empty_calls:
        message["tool_calls"] = list(calls.values())
    return message


def first_choice_only(chunks):  # chunk.choices[0]: the usage chunk has no choices
    message = {"role": "assistant", "content": None}
    for chunk in chunks:
        delta = chunk.choices[0].delta
        if delta.content:
            message["content"] = (message["content"] or "") + delta.content
    return message


def fragments_to_newest_call(chunks):  # ignores index after a call's first piece
    texts, calls = [], []
    for chunk in chunks:
        for part in chunk.choices:
            if part.index != 0:
                continue
            if part.delta.content:
                texts.append(part.delta.content)
            for piece in part.delta.tool_calls or []:
                if piece.id:
                    calls.append({"id": piece.id, "type": "function",
                                  "function": {"name": piece.function.name, "arguments": ""}})
                else:
                    calls[-1]["function"]["arguments"] += piece.function.arguments or ""
    message = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def empty_string_content(chunks):  # "" where no text came
    message = _messages(chunks)
    message["content"] = message["content"] or ""
    return message


def solution():
    namespace: dict = {}
    from pathlib import Path
    source = Path(__file__).resolve().parent.parent / "solutions" / "09_assemble.py"
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    return namespace["assemble"]


def fails_on(finding: str, out: str) -> None:
    """The check's report fails on one finding only (one thing at a time), the one whose
    words are `finding`, and gives a hint."""
    failed = [line for line in out.splitlines() if line.lstrip().startswith("❌")]
    assert len(failed) == 1, out
    assert finding in failed[0], out
    assert "hint:" in out


WRONG = {  # the mistake → words the failing finding must contain
    "indexes chunk.choices[0]": (first_choice_only, "without an IndexError"),
    "arguments overwritten, not joined": (
        lambda c: _messages(c, add=False), "one tool call"),
    "name overwritten by later pieces": (lambda c: _messages(c, name_each=True), "one tool call"),
    "calls keyed by id": (lambda c: _messages(c, key="id"), "one tool call"),
    "a new call for every piece": (lambda c: _messages(c, key="each"), "one tool call"),
    "type left out": (lambda c: _messages(c, tool_type=False), "one tool call"),
    "tool_calls: [] on a reply in words": (lambda c: _messages(c, empty_calls=True),
                                           "accepts back"),
    "content list, not joined": (lambda c: _messages(c, join=False), "a reply in words"),
    "content dropped when a call starts": (lambda c: _messages(c, keep=False),
                                           "words beside a call"),
    "every choice mixed together": (lambda c: _messages(c, choice_filter=False),
                                    "only choice 0"),
    "fragments added to the newest call": (fragments_to_newest_call, "take turns"),
    "content '' where no text came": (empty_string_content, "one tool call"),
}


@pytest.fixture(autouse=True)
def fresh_hints():
    exercises._ASKED.clear()
    yield
    exercises._ASKED.clear()


def test_the_hint_grows_when_the_check_fails_again(capsys):
    wrong = WRONG["arguments overwritten, not joined"][0]
    check_assemble(wrong)
    first = capsys.readouterr().out
    check_assemble(wrong)
    second = capsys.readouterr().out
    assert "run the check again for a further hint" in first
    assert len(second.splitlines()) > len(first.splitlines())
    assert "keep one call per `index`" in second and "keep one call per `index`" not in first


def test_the_learners_crash_is_reported_not_raised(capsys):
    def broken(chunks):
        raise KeyError("function")
    assert check_assemble(broken) is False
    assert "your code raised KeyError" in capsys.readouterr().out


# ----------------------------------------------------------------- exercise 2: make_strict

import copy  # noqa: E402

from lesson_lib.exercises.nb09 import check_make_strict  # noqa: E402
from lesson_lib.tools import strict_version  # noqa: E402


def _strict(tool, *, deep=True, flag=True, flag_in_parameters=False, nested=True, items=True,
            optional_nullable=True, enum_null=True, all_nullable=False, keep_enum=True):
    """One parametrised learner: each flag flips one decision to its typical mistake."""
    strict = copy.deepcopy(tool) if deep else dict(tool, function=dict(tool["function"]))

    def close(schema, depth):
        if schema.get("type") == "object":
            optional = set(schema["properties"]) - set(schema.get("required", []))
            for key, sub in schema["properties"].items():
                if nested:
                    sub = close(sub, depth + 1)
                if (key in optional and optional_nullable) or all_nullable:
                    sub = dict(sub, type=[sub["type"], "null"])
                    if "enum" in sub and not keep_enum:
                        del sub["enum"]
                    elif "enum" in sub and enum_null and key in optional:
                        sub["enum"] = sub["enum"] + [None]
                schema["properties"][key] = sub
            schema["required"] = list(schema["properties"])
            schema["additionalProperties"] = False
        if schema.get("type") == "array" and items:
            schema["items"] = close(schema["items"], depth + 1)
        return schema

    strict["function"]["parameters"] = close(strict["function"]["parameters"], 0)
    if flag:
        target = strict["function"]["parameters"] if flag_in_parameters else strict["function"]
        target["strict"] = True
    return strict


STRICT_WRONG = {  # the mistake → words the failing finding must contain
    "edits the caller's tool (no copy)": (lambda t: _strict(t, deep=False), "unchanged"),
    "strict flag forgotten": (lambda t: _strict(t, flag=False), '"strict": True'),
    "strict flag inside parameters": (lambda t: _strict(t, flag_in_parameters=True),
                                      '"strict": True'),
    "nested objects left open": (lambda t: _strict(t, nested=False), "accepts it as a strict"),
    "array items left open": (lambda t: _strict(t, items=False), "accepts it as a strict"),
    "optional made required, not nullable": (lambda t: _strict(t, optional_nullable=False),
                                             "sent as null is accepted"),
    "nullable type, null missing from the enum": (lambda t: _strict(t, enum_null=False),
                                                  "sent as null is accepted"),
    "every property nullable": (lambda t: _strict(t, all_nullable=True),
                                "required `location` sent as null is refused"),
    "enum dropped to allow null": (lambda t: _strict(t, keep_enum=False),
                                   "outside its enum is refused"),
}


# ----------------------------------------------------------------- exercise 3: call_with_retries

import random  # noqa: E402

import openai  # noqa: E402

from lesson_lib.exercises.nb09 import check_retries  # noqa: E402
from lesson_lib.patterns import retrying  # noqa: E402


def _retries(fn, attempts=4, base=0.5, sleep=None, *, catch=None, double=True, base_used=True,
             sleep_last=False, swallow=False, extra=0, jitter=0.1, wrap=False,
             rand=random.random, linear=False):
    """One parametrised learner: each option flips one decision to its typical mistake."""
    catch = catch or (openai.RateLimitError, openai.InternalServerError,
                      openai.APIConnectionError)
    last = None
    for k in range(attempts + extra):
        try:
            return fn()
        except catch as error:
            last = error
            if k == attempts + extra - 1 and not sleep_last:
                if swallow:
                    return None
                if wrap:
                    raise RuntimeError("gave up") from error
                raise
            grows = (k + 1) if linear else (2 ** k if double else 1)
            sleep((base if base_used else 0.5) * grows * (1 + jitter * rand()))
    if swallow:
        return None
    raise last


RETRY_WRONG = {  # the mistake → words the failing finding must contain
    "retries every error, 400 included": (
        lambda fn, **kw: _retries(fn, catch=Exception, **kw), "a 400 is raised at once"),
    "only status errors (timeouts not retried)": (
        lambda fn, **kw: _retries(fn, catch=(openai.RateLimitError, openai.InternalServerError),
                                  **kw), "a timeout is retried"),
    "the same wait every time": (lambda fn, **kw: _retries(fn, double=False, **kw),
                                 "waited 0.5 s, then 1 s"),
    "linear back-off (base added, not doubled)": (
        lambda fn, **kw: _retries(fn, linear=True, **kw), "it waits 0.5, 1, 2, then 4 s"),
    "base ignored": (lambda fn, **kw: _retries(fn, base_used=False, **kw),
                     "base=0.1 waits 0.1 s"),
    "too much jitter": (lambda fn, **kw: _retries(fn, jitter=0.5, rand=lambda: 1.0, **kw),
                        "waited 0.5 s"),
    "no jitter": (lambda fn, **kw: _retries(fn, rand=lambda: 0.0, **kw), "have jitter"),
    "waits after the last failure": (lambda fn, **kw: _retries(fn, sleep_last=True, **kw),
                                     "three calls, two waits"),
    "returns None when every attempt failed": (
        lambda fn, **kw: _retries(fn, swallow=True, **kw), "three calls, two waits"),
    "one attempt too many": (lambda fn, **kw: _retries(fn, extra=1, **kw),
                             "three calls, two waits"),
    "the last error wrapped in another": (lambda fn, **kw: _retries(fn, wrap=True, **kw),
                                          "three calls, two waits"),
}


def test_retrying_refuses_a_nonsense_attempt_count():
    with pytest.raises(ValueError, match="at least 1"):
        retrying(lambda: 1, attempts=0)


def test_the_librarys_version_is_revealed_only_after_a_pass(capsys):
    from lesson_lib.display import SOURCE_HEADER
    from lesson_lib.exercises import reveal

    assert reveal(False, assemble_message) is None
    assert "once your version passes" in capsys.readouterr().out
    assert repr(reveal(True, assemble_message)).startswith(SOURCE_HEADER)


def test_a_long_report_is_shortened_unless_details_are_asked_for():
    from lesson_lib.exercises import LINES, Report, show_details

    report = Report("long")
    for k in range(8):
        report.expect(k % 2 == 0, f"finding {k}", f"hint {k}")
    short = str(report).splitlines()
    assert len(short) <= LINES and "✅ 4 checks pass" in short[1]
    assert short[-2].startswith("  ❌ … and 2 more: for every line, run show_details()")
    show_details()
    try:
        assert len(str(report).splitlines()) == 1 + 8 + 4 + 1  # title, findings, hints, end
    finally:
        show_details(False)


# ----------------------------------------------------------------- every exercise alike

CHECKS = {  # exercise → (its check, right answers written apart from it, its bank of mistakes)
    "assemble": (check_assemble, [assemble_message, _messages, solution()], WRONG),
    "make_strict": (check_make_strict, [strict_version, _strict], STRICT_WRONG),
    "call_with_retries": (check_retries, [lambda fn, **kw: retrying(fn, **kw), _retries],
                          RETRY_WRONG),
}
RIGHT = [(name, k) for name, (_, rights, _) in CHECKS.items() for k in range(len(rights))]
MISTAKES = [(name, mistake) for name, (_, _, bank) in CHECKS.items() for mistake in bank]


@pytest.mark.parametrize(("exercise", "k"), RIGHT, ids=[f"{n}-{k}" for n, k in RIGHT])
def test_a_right_answer_passes(exercise, k, capsys):
    check, rights, _ = CHECKS[exercise]
    assert check(rights[k]) is True
    assert "All checks passed." in capsys.readouterr().out


@pytest.mark.parametrize(("exercise", "mistake"), MISTAKES,
                         ids=[f"{n}: {m}" for n, m in MISTAKES])
def test_each_typical_mistake_fails_on_its_own_finding(exercise, mistake, capsys):
    check, _, bank = CHECKS[exercise]
    wrong, finding = bank[mistake]
    assert check(wrong) is False
    fails_on(finding, capsys.readouterr().out)


@pytest.mark.parametrize("exercise", list(CHECKS))
def test_not_written_yet_is_a_gentle_line(exercise, capsys):
    check = CHECKS[exercise][0]
    assert check(...) is False and check(None) is False
    assert "not done yet" in capsys.readouterr().out
