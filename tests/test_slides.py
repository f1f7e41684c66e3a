"""Every notebook opens as slides (RISE in JupyterLab) showing its core path.

- each notebook of both editions carries the slide metadata scripts/slides.py writes (run it
  after editing a notebook), and writing it again changes nothing;
- the core path is on the slides: every cell scripts/reading_times.py counts in the core path
  is shown (a collapsed check excepted), every `##` section of it starts a slide, and a deep
  dive or an end exercise is never shown (reading_times is the other, independent reading of
  the same headings), except a section's check-yourself quiz that follows a deep-dive part of
  the section: the quiz is the room's pause, so it is shown;
- the Chinese edition skips exactly the cells its English twin skips, and starts its slides
  at the same sections;
- the rules on a small notebook made here: a deep dive and the exercises skipped, a "Build it"
  after "## Exercises" kept, a collapsed check skipped, a cell that fails on purpose a fragment,
  a long stretch split into subslides, a section's quiz shown after a deep-dive part of it;
  only metadata is written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from scripts_support import load_script

ROOT = Path(__file__).resolve().parent.parent
SLIDES = load_script("slides")
TIMES = load_script("reading_times")
NOTEBOOKS = SLIDES.notebooks()
ENGLISH = [p for p in NOTEBOOKS if p.parent.name == "notebooks"]
SHOWN = {"slide", "subslide", "fragment", "-"}


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}" if path.parent.name == "zh" else path.stem


def _kinds(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(c.get("metadata", {}).get("slideshow") or {}).get("slide_type") for c in cells]


def _first_line(source) -> str:
    text = "".join(source) if isinstance(source, list) else source
    return next((line for line in text.splitlines() if line.strip()), "")


def test_both_editions_are_there():
    assert len(ENGLISH) >= 17 and len(NOTEBOOKS) >= 2 * 17 - 1, [_id(p) for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_the_notebook_carries_the_slides_the_script_writes(path):
    nb = nbformat.read(path, as_version=4)
    assert not SLIDES.with_slides(nb), (
        f"{path.relative_to(ROOT)}: its slide metadata is not what scripts/slides.py writes: "
        "run .venv/bin/python scripts/slides.py")
    assert set(_kinds(path)) <= set(SLIDES.TYPES)
    assert nb.metadata["rise"] == {"scroll": True}


@pytest.mark.parametrize("path", ENGLISH, ids=_id)
def test_the_core_path_is_shown_and_the_deep_dives_are_not(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    kinds = _kinds(path)
    optional = [opt for _minutes, opt in TIMES.cell_minutes(path)]
    hidden = [bool(c.get("metadata", {}).get("jupyter", {}).get("source_hidden")) for c in cells]
    hidden_core = [n for n, c in enumerate(cells) if c["cell_type"] == "code" and not optional[n]
                   and not hidden[n] and kinds[n] not in SHOWN]
    assert not hidden_core, f"{path.name}: cells {hidden_core} are on the core path, not shown"
    sec, part, in_exercises, sections = None, None, False, 0
    for n, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("## "):
                    in_exercises = in_exercises or line.strip() == "## Exercises"
                    part, sec = None, "deep" if TIMES.DEEP.search(line) else (
                        "end" if in_exercises and "build it" not in line.lower() else "core")
                    if sec == "core" and _first_line(cell["source"]) == line:
                        sections += 1
                        assert kinds[n] == "slide", f"{path.name}: section {line!r} starts no slide"
                elif line.startswith("### "):
                    part = "deep" if TIMES.DEEP.search(line) else None
        section = part or sec
        quiz = cell["cell_type"] == "code" and TIMES.QUIZ_CALL.search("".join(cell["source"]))
        if section in ("deep", "end") and _first_line(cell["source"]).startswith("#"):
            assert kinds[n] == "skip", f"{path.name}, cell {n}: a {section} part is shown"
        elif quiz and sec == "core":  # a deep-dive part of the section may come before it
            assert kinds[n] in SHOWN, f"{path.name}, cell {n}: the section's quiz is skipped"
        elif section in ("deep", "end") and cell["cell_type"] == "code":
            assert kinds[n] == "skip", f"{path.name}, cell {n}: code of a {section} part is shown"
    assert sections >= 2, f"{path.name}: only {sections} core sections found"
    assert kinds[0] == "slide"


@pytest.mark.parametrize("path", [p for p in ENGLISH if (p.parent / "zh" / p.name).exists()],
                         ids=_id)
def test_the_chinese_twin_shows_the_same_path(path):
    en, zh = _kinds(path), _kinds(path.parent / "zh" / path.name)
    assert [k == "skip" for k in en] == [k == "skip" for k in zh], \
        f"zh/{path.name} skips other cells than {path.name}"
    assert [k == "slide" for k in en] == [k == "slide" for k in zh], \
        f"zh/{path.name} starts its slides at other cells than {path.name}"


def _small_notebook():
    long_output = new_output("stream", name="stdout", text="line\n" * 40)
    cells = [
        new_markdown_cell("# 99 · A small notebook\n\n**Time**: x"),
        new_markdown_cell("> **Using a real model?** Then outputs differ."),
        new_code_cell("%xmode Minimal"),
        new_markdown_cell("## 1 · Core\n\nText."),
        new_code_cell("print('line')", outputs=[long_output]),
        new_code_cell("assert True"),
        new_markdown_cell("More text, after a long output."),
        new_code_cell("raise ValueError('on purpose')"),
        new_markdown_cell("### Part of the core"),
        new_markdown_cell("### A closer look · deep dive"),
        new_code_cell("closer = 1"),
        new_code_cell('quiz("99.1")'),
        new_markdown_cell("## 2 · Inside · deep dive\n\nOptional."),
        new_code_cell('quiz("99.2")'),
        new_code_cell("deep = 1"),
        new_markdown_cell("## Key takeaways\n\n- one"),
        new_markdown_cell("## Exercises"),
        new_markdown_cell("### Exercise 1 · Try"),
        new_code_cell("answer = ..."),
        new_markdown_cell("### Build it · the last piece"),
        new_code_cell("piece = ..."),
    ]
    cells[5].metadata["jupyter"] = {"source_hidden": True}
    cells[7].metadata["tags"] = ["raises-exception"]
    return new_notebook(cells=cells)


def test_the_rules_on_a_small_notebook(tmp_path):
    nb = _small_notebook()
    before = copy.deepcopy(nb)
    assert SLIDES.with_slides(nb)
    kinds = [c.metadata["slideshow"]["slide_type"] for c in nb.cells]
    assert kinds == ["slide", "notes", "-", "slide", "-", "skip", "subslide", "fragment",
                     "subslide", "skip", "skip", "-", "skip", "skip", "skip", "slide", "skip",
                     "skip", "skip", "subslide", "-"], kinds
    for cell, old in zip(nb.cells, before.cells, strict=True):  # only metadata was written
        assert cell.source == old.source and cell.get("outputs") == old.get("outputs")
    assert not SLIDES.with_slides(nb), "writing the slides twice changed something"


def test_the_script_writes_then_checks(tmp_path, capsys):
    path = tmp_path / "99_small.ipynb"
    nbformat.write(_small_notebook(), path)
    assert SLIDES.main(["--check", str(path)]) == 1
    assert "out of date" in capsys.readouterr().out
    assert SLIDES.main([str(path)]) == 0
    written = path.read_bytes()
    assert SLIDES.main([str(path)]) == 0 and path.read_bytes() == written  # idempotent
    assert SLIDES.main(["--check", str(path)]) == 0
