"""The core path of every notebook as slides: RISE's cell metadata, written from the notebook.

    .venv/bin/python scripts/slides.py            # write it into every notebook, both editions
    .venv/bin/python scripts/slides.py --check    # say which notebooks differ (exit 1), write nothing
    .venv/bin/python scripts/slides.py notebooks/07_*.ipynb   # only these

JupyterLab with `jupyterlab-rise` shows a notebook as slides (the RISE button, or Alt-R) from
each cell's `metadata.slideshow.slide_type`. This script sets it on every cell, from the
notebook's own headings, so the slides follow the notebook when it changes (run it again after
editing a notebook: it is deterministic, and running it twice changes nothing). Only metadata
is written: no cell's source or output changes.

The rules, for both editions (English headings, and the Chinese twin's):

- the title cell, and each `##` section heading, starts a **slide**; a `###` heading starts a
  **subslide** (below its section's slide);
- off the core path, every cell is **skip**: a section or part whose heading ends
  "· deep dive" ("· 深入"), and "## Exercises" ("## 练习") with everything after it except
  a "Build it" ("动手实现"), which is on the core path. An exercise set in place inside a
  lesson section (notebook 09) stays: it is not an end exercise;
- a check-yourself quiz (`quiz("…")`) is shown even when a deep-dive part of its section
  comes before it: it closes the section's stretch, the room's pause (one in a deep-dive
  `##` section, or in the exercises, stays skipped);
- collapsed check cells (`jupyter.source_hidden`) are **skip**: they pass silently;
- the "Using a real model?" note under the title is **notes** (the speaker view, key T):
  in a class on the offline model it is for the teacher;
- a stretch of text with the code cells after it is kept on one slide; when it would push its
  slide past about a screen (LINES rows of text, code and output, a picture counted as
  PICTURE rows), it starts a new **subslide** instead (one taller than a screen scrolls);
- a cell that fails on purpose (tagged `raises-exception`) is a **fragment**: the room
  predicts, the next key shows the error;
- every other cell is "-": it continues the slide above it.

The notebook's metadata gets `rise: {"scroll": true}`, so a slide taller than the screen
(a long output) scrolls instead of shrinking.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIRS = (ROOT / "notebooks", ROOT / "notebooks" / "zh")
RISE = {"scroll": True}

LINES = 24          # about what a 1440×900 screen shows at RISE's default size
PICTURE = 18        # a plot or an image
RICH = 12           # a widget or an HTML table, when its height is not known
WIDTH = 100         # columns before a line wraps (a Chinese character takes two)

DEEP = re.compile(r"·\s*(?:deep dive|深入)\s*$", re.I)
EXERCISES = re.compile(r"^##\s+(?:Exercises|练习)\s*$")
EXERCISE = re.compile(r"^###\s+(?:Exercise|练习)")
BUILD = re.compile(r"build it|动手实现", re.I)
REAL_MODEL_NOTE = re.compile(r"^>\s*\*\*(?:Using a real model\?|用的是真实模型？)\*\*")
QUIZ = re.compile(r"""\bquiz\(\s*["'][^"']+["']\s*\)""")
WIDE = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60\uffe0-\uffe6]")

TYPES = ("slide", "subslide", "fragment", "skip", "notes", "-")


def notebooks() -> list[Path]:
    """Every numbered notebook of both editions."""
    return [p for d in NOTEBOOK_DIRS for p in sorted(d.glob("[0-9][0-9]*_*.ipynb"))]


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _rows(text: str) -> int:
    """How many screen rows `text` takes, long lines wrapped."""
    rows = 0
    for line in text.splitlines():
        width = len(line) + len(WIDE.findall(line))
        rows += max(1, math.ceil(width / WIDTH))
    return rows


def height(cell) -> int:
    """About how many rows `cell` takes on a slide: its source (a markdown cell's blank lines
    count half), and a code cell's outputs."""
    source = _text(cell.source)
    if cell.cell_type == "markdown":
        blank = sum(1 for line in source.splitlines() if not line.strip())
        return _rows(source) - blank // 2
    rows = _rows(source)
    for output in cell.get("outputs", []):
        if "text" in output:
            rows += _rows(_text(output["text"]))
        elif output.get("output_type") == "error":
            rows += 2 + len(output.get("traceback", [])[-1:])
        else:
            data = output.get("data", {})
            if any(key.startswith("image/") for key in data):
                rows += PICTURE
            elif "text/html" in data or "application/vnd.jupyter.widget-view+json" in data:
                rows += RICH
            else:
                rows += _rows(_text(data.get("text/plain", "")))
    return rows


def core_flags(cells) -> list[bool | None]:
    """For each cell: True on the core path, False off it (a deep dive, an end exercise).
    A markdown cell counts as core when any of its text is; the heading that opens an
    optional part in the middle of a cell leaves the text above it on the core path."""
    flags: list[bool | None] = []
    section = part = None   # is the current ## section / ### part optional (None: not set)
    in_exercises = False
    for cell in cells:
        if cell.cell_type != "markdown":
            quiz_of_a_core_section = not section and bool(QUIZ.search(_text(cell.source)))
            flags.append(quiz_of_a_core_section or not (part if part is not None else bool(section)))
            continue
        core_text = False
        for line in _text(cell.source).splitlines():
            if line.startswith("## "):
                in_exercises = in_exercises or bool(EXERCISES.match(line.strip()))
                build = bool(BUILD.search(line))
                section, part = bool(DEEP.search(line)) or (in_exercises and not build), None
            elif line.startswith("### "):
                if BUILD.search(line):
                    part = False
                elif DEEP.search(line) or (EXERCISE.match(line) and in_exercises):
                    part = True
                else:
                    part = None  # as its section
            optional = part if part is not None else bool(section)
            if line.strip() and not optional:
                core_text = True
        flags.append(core_text)
    return flags


def _hidden(cell) -> bool:
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


def _first_line(cell) -> str:
    return next((line for line in _text(cell.source).splitlines() if line.strip()), "")


def _units(cells, kinds: list[str]) -> dict[int, int]:
    """Where each unit of the slides starts, and its rows: a shown markdown cell with the
    shown code cells after it (text and the code it introduces stay on one slide); a quiz
    that follows skipped cells starts a unit of its own."""
    units: dict[int, int] = {}
    start = None
    for n, (cell, kind) in enumerate(zip(cells, kinds, strict=True)):
        if kind in ("skip", "notes"):
            continue
        after_a_skip = n > 0 and kinds[n - 1] == "skip" and bool(QUIZ.search(_text(cell.source)))
        if cell.cell_type == "markdown" or start is None or after_a_skip:
            start = n
            units[start] = 0
        units[start] += height(cell)
    return units


def slide_types(nb) -> list[str]:
    """The slide type of every cell of `nb`, by the rules in this module's doc."""
    kinds: list[str] = []
    for n, (cell, core) in enumerate(zip(nb.cells, core_flags(nb.cells), strict=True)):
        first = _first_line(cell) if cell.cell_type == "markdown" else ""
        if not core or (cell.cell_type == "code" and _hidden(cell)):
            kind = "skip"
        elif cell.cell_type == "markdown" and REAL_MODEL_NOTE.match(first):
            kind = "notes"
        elif n == 0 or first.startswith("# ") or first.startswith("## "):
            kind = "slide"
        elif first.startswith("### "):
            kind = "subslide"
        elif "raises-exception" in cell.metadata.get("tags", []):
            kind = "fragment"
        else:
            kind = "-"
        kinds.append(kind)
    used = 0  # rows on the current (sub)slide
    for start, rows in _units(nb.cells, kinds).items():
        if kinds[start] in ("slide", "subslide"):
            used = rows
        elif used and used + rows > LINES:
            kinds[start], used = "subslide", rows
        else:
            used += rows
    return kinds


def with_slides(nb):
    """`nb` with every cell's slide type set (and RISE's notebook settings); True if changed."""
    changed = nb.metadata.get("rise") != RISE
    nb.metadata["rise"] = dict(RISE)
    for cell, kind in zip(nb.cells, slide_types(nb), strict=True):
        if cell.metadata.get("slideshow") != {"slide_type": kind}:
            cell.metadata["slideshow"] = {"slide_type": kind}
            changed = True
    return changed


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a).resolve() for a in argv if a != "--check"] or notebooks()
    stale = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if with_slides(nb):
            stale.append(path)
            if not check:
                nbformat.write(nb, path)
    for path in stale:
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{shown}: {'its slides are out of date' if check else 'slides written'}")
    if check and stale:
        print("run .venv/bin/python scripts/slides.py to write them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
