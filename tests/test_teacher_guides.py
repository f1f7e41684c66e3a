"""Every notebook has a teacher's guide in each edition, in the shared format, true to its notebook.

docs/teachers/<stem>.md (English) and docs/teachers/zh/<stem>.md (Chinese): a title naming
the notebook's own title, the five sections in order, a class table whose section names
are the notebook's headings and whose minutes add up to 40-50, quiz ids the notebook uses,
and hints quoted as the exercises' checks print them in that language (the English source
strings and their Chinese translations in lesson_lib/locale). Pure text: no kernel, no model.
"""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "lesson_lib" / "locale" / "zh_CN"
EDITIONS = {"en": (ROOT / "notebooks", ROOT / "docs" / "teachers"),
            "zh": (ROOT / "notebooks" / "zh", ROOT / "docs" / "teachers" / "zh")}
SECTIONS = {"en": ["The class in 45 minutes", "Where to pause", "Questions to ask",
                   "Mistakes learners make", "What to project"],
            "zh": ["45 分钟的一堂课", "在哪里停下", "可以问的问题", "学员常犯的错误", "投影什么"]}
TITLE_END = {"en": ": a teacher's guide", "zh": "：教师指南"}
MINUTES = (40, 50)
SHORTEST_QUOTE = {"en": 12, "zh": 6}  # characters: a Chinese character says more
QUIZ = re.compile(r"""quiz\(\s*["']([^"']+)["']\s*\)""")


def _notebooks() -> list[tuple[str, str]]:
    return [(lang, path.stem) for lang, (folder, _) in EDITIONS.items()
            for path in sorted(folder.glob("*.ipynb"))]


# ------------------------------------------------------------------ reading the sources

@cache
def notebook_facts(lang: str, stem: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """A notebook's title (its first heading), its headings' texts, and its quiz ids."""
    cells = json.loads((EDITIONS[lang][0] / f"{stem}.ipynb").read_text("utf-8"))["cells"]
    title, headings, quizzes = "", set(), set()
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for line in source.splitlines():
                found = re.match(r"(#+)\s+(.*\S)", line)
                if found:
                    title = title or (found[2] if found[1] == "#" else "")
                    headings.add(found[2])
        quizzes.update(QUIZ.findall(source))
    return title, frozenset(headings), frozenset(quizzes)


def _po_entries(text: str) -> list[tuple[list[str], list[str]]]:
    """(msgid and msgid_plural, msgstr forms) of every entry of a .po file."""
    entries, ids, strs, current = [], [], [], None
    for line in text.splitlines() + [""]:
        line = line.strip()
        keyword = re.match(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(\".*\")$", line)
        if keyword:
            if keyword[1] == "msgid" and ids:
                entries.append((ids, strs))
                ids, strs = [], []
            current = None if keyword[1] == "msgctxt" else (ids if keyword[1].startswith("msgid")
                                                             else strs)
            if current is not None:
                current.append(ast.literal_eval(keyword[2]))
        elif line.startswith('"') and current is not None:
            current[-1] += ast.literal_eval(line)
    if ids:
        entries.append((ids, strs))
    return [(i, s) for i, s in entries if i != [""]]


@cache
def messages(lang: str) -> tuple[str, ...]:
    """Every text lesson_lib can print in `lang`: the catalogue's English source strings, or
    their Chinese translations."""
    found: list[str] = []
    for po in sorted(LOCALE.glob("*.po")):
        for ids, strs in _po_entries(po.read_text("utf-8")):
            found.extend(ids if lang == "en" else [s for s in strs if s])
    return tuple(_flat(m) for m in found)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@cache
def _pattern(message: str) -> re.Pattern[str]:
    """A message with its {placeholders} filled by anything."""
    parts = re.split(r"\{[^{}]*\}", message)
    return re.compile(".+?".join(re.escape(p) for p in parts), re.S)


def hint_is_printed(quote: str, lang: str) -> bool:
    """Whether `quote` is what a check prints: a whole message with its placeholders filled,
    or a stretch of one message's own words."""
    quote = _flat(quote).strip("…").strip()
    if len(quote) < SHORTEST_QUOTE[lang]:  # too short to tell one hint from another
        return False
    for message in messages(lang):
        if quote in message:
            return True
        words = "".join(re.split(r"\{[^{}]*\}", message))
        if ("{" in message and len(words) >= max(15, 0.4 * len(quote))
                and _pattern(message).fullmatch(quote)):
            return True  # a message of its own words, filled in (not a bare "{a}: {b}")
    return False


# ------------------------------------------------------------------ reading a guide

def sections(text: str) -> dict[str, str]:
    """The guide's second-level sections, in order: heading → body."""
    found: dict[str, str] = {}
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.M)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        found[heading] = body
    return found


def class_table(body: str) -> list[tuple[float, str]]:
    """(minutes, section) of each row of the first table in `body`."""
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) < 3 or set(cells[0]) <= set("-: ") or not re.fullmatch(r"\d+(\.\d+)?", cells[0]):
            continue
        rows.append((float(cells[0]), cells[1]))
    return rows


def quotes(body: str) -> list[str]:
    """The block quotes of `body`, consecutive `>` lines joined into one."""
    found, current = [], []
    for line in body.splitlines() + [""]:
        if line.startswith(">"):
            current.append(line[1:].strip())
        elif current:
            found.append(" ".join(current))
            current = []
    return found


def problems(guide: str, lang: str, stem: str) -> list[str]:
    """Everything wrong with `guide` as the guide of notebook `stem` in `lang`; [] if none."""
    title, headings, quizzes = notebook_facts(lang, stem)
    wrong = []
    first = guide.lstrip("\ufeff").splitlines()[0] if guide.strip() else ""
    if first != f"# {title}{TITLE_END[lang]}":
        wrong.append(f"the first line is {first!r}, not '# {title}{TITLE_END[lang]}'")
    found = sections(guide)
    if list(found) != SECTIONS[lang]:
        wrong.append(f"the sections are {list(found)}, not {SECTIONS[lang]} in that order")
    table = class_table(found.get(SECTIONS[lang][0], ""))
    if not table:
        wrong.append("the class has no table of minutes and sections")
    total = sum(minutes for minutes, _ in table)
    if table and not MINUTES[0] <= total <= MINUTES[1]:
        wrong.append(f"the class's minutes add up to {total:g}, not {MINUTES[0]}-{MINUTES[1]}")
    for _, section in table:
        name = section.strip("*").strip()
        if name not in headings:
            wrong.append(f"the class table names {name!r}, which is no heading of the notebook")
    for quiz in QUIZ.findall(guide):
        if quiz not in quizzes:
            wrong.append(f"quiz({quiz!r}) is not in the notebook (it has {sorted(quizzes)})")
    for quote in quotes(found.get(SECTIONS[lang][3], "")):
        if not hint_is_printed(quote, lang):
            wrong.append(f"the hint {quote[:80]!r}… is not a message the checks print in {lang}")
    return wrong


# ------------------------------------------------------------------ the tests

@pytest.mark.parametrize(("lang", "stem"), _notebooks(), ids=lambda v: v)
def test_every_notebook_has_a_true_guide(lang: str, stem: str) -> None:
    path = EDITIONS[lang][1] / f"{stem}.md"
    assert path.exists(), f"no teacher's guide {path.relative_to(ROOT)}: write it in the format " \
                          "of docs/teachers/README.md"
    assert problems(path.read_text("utf-8"), lang, stem) == []


@pytest.mark.parametrize("lang", list(EDITIONS))
def test_the_index_lists_every_guide(lang: str) -> None:
    index = (EDITIONS[lang][1] / "README.md").read_text("utf-8")
    missing = [stem for edition, stem in _notebooks() if edition == lang and f"({stem}.md)" not in index]
    assert missing == []


GOOD_EN = """# 04 · Trimming pitfalls: a teacher's guide

## The class in 45 minutes

| Minutes | Section | What the teacher does |
|---|---|---|
| 20 | 1 · Why a history must be cut | Run live; then `quiz("04.1")`. |
| 25 | 2 · The naive trim: drop the oldest message | Let learners run. |

## Where to pause

- Before the naive trim: `quiz("04.2")`.

## Questions to ask

1. Why cut? The window.

## Mistakes learners make

> {hint}

## What to project

- The 400 error.
"""


def _a_hint(lang: str) -> str:
    return next(m for m in messages(lang) if "{" not in m and len(m) > 40)


def test_a_good_guide_passes() -> None:
    assert problems(GOOD_EN.format(hint=_a_hint("en")), "en", "04_trimming_pitfalls") == []


@pytest.mark.parametrize(("broken", "complaint"), [
    (lambda g: g.replace("| 25 |", "| 5 |"), "add up to 25"),
    (lambda g: g.replace("| 25 |", "| 40 |"), "add up to 60"),
    (lambda g: g.replace("The naive trim: drop the oldest message", "The naive trim"),
     "no heading of the notebook"),
    (lambda g: g.replace('quiz("04.2")', 'quiz("04.9")'), "'04.9'"),
    (lambda g: g.replace("## Questions to ask", "## Questions"), "the sections are"),
    (lambda g: g.replace("## Where to pause\n\n- Before the naive trim: `quiz(\"04.2\")`.\n\n", "")
     .replace("## What to project", "## Where to pause\n\nx\n\n## What to project"),
     "the sections are"),
    (lambda g: g.replace("Trimming pitfalls:", "Trimming:"), "the first line"),
    (lambda g: g.replace("\n> ", "\n> you forgot the thing the check never says: "),
     "is not a message"),
])
def test_a_broken_guide_is_caught(broken, complaint: str) -> None:  # noqa: ANN001
    guide = broken(GOOD_EN.format(hint=_a_hint("en")))
    found = problems(guide, "en", "04_trimming_pitfalls")
    assert any(complaint in p for p in found), found


def test_a_hint_must_be_in_the_guides_language() -> None:
    english, chinese = _a_hint("en"), _a_hint("zh")
    assert hint_is_printed(english, "en") and not hint_is_printed(english, "zh")
    assert hint_is_printed(chinese, "zh") and not hint_is_printed(chinese, "en")


def test_a_bare_placeholder_message_accepts_nothing() -> None:
    assert "{what}: {why}" in messages("en")  # the catalogue's own: it would match any "a: b"
    assert not hint_is_printed("your memory: it forgot the thing nobody taught", "en")


def test_a_filled_placeholder_is_printed_text() -> None:
    message = next(m for m in messages("en")
                   if re.fullmatch(r"\w[^{}]* \{\w+\} [^{}]*\w", m) and len(m) > 40)
    filled = re.sub(r"\{[^{}]*\}", "Xiaoming", message)
    assert hint_is_printed(filled, "en")
    assert not hint_is_printed("so we say " + filled + " and more", "en")


def test_the_po_reader_joins_continued_lines() -> None:
    text = 'msgid ""\nmsgstr "header"\n\nmsgid "one "\n"two"\nmsgstr ""\n"一二"\n'
    assert _po_entries(text) == [(["one two"], ["一二"])]
