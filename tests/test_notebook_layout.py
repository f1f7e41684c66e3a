"""What a learner sees when a notebook opens: short set-up, no asserts in view, honest times.

- the first code cell (the set-up) is short: imports go where they are first used;
- no visible cell carries an `assert`: claims keep their asserts in collapsed cells;
- no stretch between two check-yourself quizzes is longer than about 20 minutes on the core
  path (25 when it holds a "Build it", costed 20 by itself), by the pace of
  scripts/reading_times.py;
- the **Time** line of each notebook and the README's table of times are the ones
  scripts/reading_times.py computes from the notebooks as they are now (core path, and
  everything with the deep dives and exercises), so they cannot drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from scripts_support import load_script

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
SETUP_LINES = 9  # %xmode, the language the notebook speaks, its imports, the client


TIMES = load_script("reading_times")


def _cells(path: Path) -> list[dict]:
    import json

    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def _asserts(source: str) -> bool:
    try:
        tree = ast.parse(re.sub(r"^[%!].*$", "", source, flags=re.MULTILINE))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def _hidden(cell: dict) -> bool:
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_set_up_cell_is_short(path):
    first = next(c for c in _cells(path) if c["cell_type"] == "code")
    lines = [line for line in _text(first["source"]).splitlines() if line.strip()]
    assert len(lines) <= SETUP_LINES, (
        f"{path.name}: the first code cell has {len(lines)} lines (at most {SETUP_LINES}): "
        "import what a section needs in that section")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_visible_cell_carries_an_assert(path):
    visible = [i for i, c in enumerate(_cells(path))
               if c["cell_type"] == "code" and _asserts(_text(c["source"])) and not _hidden(c)]
    assert not visible, (f"{path.name}: cells {visible} show asserts: move them into a "
                         "collapsed cell of their own (metadata jupyter.source_hidden)")


def test_the_assert_rule_sees_asserts_anywhere():
    assert _asserts("x = 1\nif x:\n    assert x")
    assert not _asserts("print('assert')")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_time_line_is_the_one_computed_from_the_notebook(path):
    first = _text(_cells(path)[0]["source"])
    want = TIMES.line_for(path)
    assert want in first, (f"{path.name}: its **Time** line is not {want!r}: run "
                           ".venv/bin/python scripts/reading_times.py --write")


def test_the_readme_gives_the_same_times():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert TIMES.readme_block() in readme, (
        "README's table of times is out of date: run "
        ".venv/bin/python scripts/reading_times.py --write")


def test_a_deep_dive_counts_only_in_everything(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    words = " ".join(["word"] * 140)
    nb = new_notebook(cells=[new_markdown_cell("# T\n\n**Time**: x"),
                             new_markdown_cell(f"## Core\n\n{words}"),
                             new_markdown_cell(f"## Inside · deep dive\n\n{words}"),
                             new_code_cell("x = 1")])
    nb.cells[3].metadata["jupyter"] = {"source_hidden": False}
    path = tmp_path / "99_t.ipynb"
    nbformat.write(nb, path)
    t = TIMES.times(path)
    assert round(t.core) == 1 and 1.2 < t.extra < 1.4, t


def test_notebook_00_gives_the_same_times():
    start = ROOT / "notebooks" / "00_start_here.ipynb"
    markdown = "\n".join(_text(c["source"]) for c in _cells(start) if c["cell_type"] == "markdown")
    assert TIMES.readme_block() in markdown, (
        "notebook 00's table of times is out of date: run "
        ".venv/bin/python scripts/reading_times.py --write")


STRETCH_MINUTES, BUILD_STRETCH_MINUTES = 20.5, 25.5  # "about 20": what rounds to 20 (25)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_stretch_between_quizzes_is_longer_than_about_20_minutes(path):
    long = [f"{minutes:.1f} min up to {quiz or 'the end'}"
            for quiz, minutes, build in TIMES.stretches(path)
            if minutes > (BUILD_STRETCH_MINUTES if build else STRETCH_MINUTES)]
    assert not long, (f"{path.name}: {', '.join(long)} on the core path: end a section "
                      "with a check-yourself quiz sooner (scripts/reading_times.py --stretches)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_read_through_is_of_the_notebook_as_it_is(path):
    """A read-through's stretches end at the notebook's quizzes: when a quiz is added or
    moved away, the notebook has changed beyond its timing, and it is timed again."""
    quizzes = [quiz for quiz, _minutes, _build in TIMES.stretches(path)]
    for log in TIMES.read_throughs(path):
        ends = [s["ends_at"].replace("end", "") for s in log["stretches"]]
        assert ends == quizzes, (
            f"{path.name}: the read-through by {log['reader']} ends its stretches at {ends}, "
            f"the notebook's quizzes are {quizzes}: time it again (docs/read_throughs.md)")
        assert log["total_core_minutes"] > 0 and log["total_optional_minutes"] >= 0
