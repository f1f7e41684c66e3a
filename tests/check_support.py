"""Helpers for the exercise-check tests: run a check, read what it printed."""

import copy
import json
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Twin:
    """An answer written twice, once with each edition's data: `make()` builds it from the
    data of the language spoken when it is called (English, then Chinese). A check given a
    Twin by expect_pass / expect_fail runs in both languages, on each one's own data, and
    must give the same verdict and the same report, message for message (translated)."""
    make: Callable[[], Any]
    many: bool = False  # make() returns the check's arguments, a tuple


def twin(make: Callable[[], Any], *, many: bool = False) -> Twin:
    return Twin(make, many)


@contextmanager
def recording_messages():
    """The messages the library translates inside (English msgids, in the order each is
    first used; a report passes some text through `_()` twice, and in English a text already
    translated is its msgid again): the same report in two languages is the same list."""
    from lesson_lib import i18n

    seen: list[str] = []
    real = i18n.catalogue
    known = real("zh")._catalog  # the marked messages (a formatted text passed again is not)

    class Recorder:
        def __init__(self, inner):
            self.inner = inner

        def gettext(self, message):
            if message in known and message not in seen:
                seen.append(message)
            return self.inner.gettext(message)

        def ngettext(self, singular, plural, n):
            form = singular if n == 1 else plural
            if form not in seen:
                seen.append(form)
            return self.inner.ngettext(singular, plural, n)

    i18n.catalogue = lambda lang: Recorder(real(lang))
    try:
        yield seen
    finally:
        i18n.catalogue = real


# How far each language's hints have gone in this test (a learner asking again gets the next
# step, in each edition alike); tests/conftest.py empties it before every test.
STEPS: dict[str, tuple[Counter, dict]] = {}


def in_both_languages(check, answer: Twin, capsys, *, in_order: bool = True,
                      **kw) -> dict[str, tuple[bool, str]]:
    """Run `check` on the answer's English and Chinese versions, each in its language; fail
    unless both give the same verdict and the same messages (in the same order, unless
    `in_order` is False: a check that puts the learner's language's case first).
    {lang: (passed, output)}."""
    from lesson_lib import exercises, i18n

    runs, said = {}, {}
    asked, first = copy.copy(exercises._ASKED), dict(exercises._FIRST)  # the hints' steps
    try:
        for lang in ("en", "zh"):
            i18n.use_language(lang)
            steps, firsts = STEPS.setdefault(lang, (Counter(), {}))
            exercises._ASKED.clear()  # each language's hints go on from its own last step
            exercises._ASKED.update(steps)
            exercises._FIRST.clear()
            exercises._FIRST.update(firsts)
            capsys.readouterr()
            given = answer.make()
            with recording_messages() as seen:
                passed = check(*given, **kw) if answer.many else check(given, **kw)
            runs[lang], said[lang] = (passed, capsys.readouterr().out), seen
            STEPS[lang] = (copy.copy(exercises._ASKED), dict(exercises._FIRST))
    finally:
        i18n.use_language(None)
        exercises._ASKED.clear()
        exercises._ASKED.update(asked)
        exercises._FIRST.clear()
        exercises._FIRST.update(first)
    (en_passed, en_out), (zh_passed, zh_out) = runs["en"], runs["zh"]
    assert en_passed == zh_passed, (f"the verdict depends on the language: English "
                                    f"{en_passed}, Chinese {zh_passed}:\n{en_out}\n{zh_out}")
    if not in_order:
        said = {lang: sorted(seen) for lang, seen in said.items()}
    assert said["en"] == said["zh"], (
        f"the report depends on the language (its messages differ):\n{en_out}\n{zh_out}\n"
        + "\n".join(f"  {a!r} | {b!r}"
                    for a, b in zip(said["en"], said["zh"], strict=False) if a != b))
    return runs


def run(check, answer, capsys, **kw) -> tuple[bool, str]:
    """(verdict, what it printed); for a Twin, the English run's, after both agreed."""
    if isinstance(answer, Twin):
        return in_both_languages(check, answer, capsys, **kw)["en"]
    passed = check(answer, **kw)
    return passed, capsys.readouterr().out


def expect_pass(check, answer, capsys, **kw) -> str:
    passed, out = run(check, answer, capsys, **kw)
    assert passed and "❌" not in out, f"expected the check to pass, got:\n{out}"
    return out


def expect_fail(check, answer, capsys, *hints: str, **kw) -> str:
    passed, out = run(check, answer, capsys, **kw)
    assert not passed and "❌" in out, f"expected the check to fail, got:\n{out}"
    for hint in hints:
        assert hint in out, f"expected the output to contain {hint!r}, got:\n{out}"
    return out


def line_of(out: str, name: str) -> str:
    """The report line of one trim-checker case, with its hint line if it has one."""
    lines = out.splitlines()
    for k, line in enumerate(lines):
        if f" {name} (" in line:
            more = lines[k + 1] if k + 1 < len(lines) and "hint:" in lines[k + 1] else ""
            return line + "\n" + more
    raise AssertionError(f"no line for case {name!r} in:\n{out}")


def stub_source(notebook: Path, name: str) -> str:
    """The source of the code cell in `notebook` that defines `name` (a learner's stub)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and f"def {name}(" in source:
            return source
    raise AssertionError(f"no cell defines {name} in {notebook.name}")
