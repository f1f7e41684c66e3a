"""Checks on the notebooks beyond nbval's output comparison.

- the sanitise file's rules are all parsed by nbval (a malformed rule is silently dropped);
- the source a notebook displays is the library's current source;
- no notebook cell defines a function or class the library already has;
- the README's table lists exactly the notebooks that exist;
- every notebook opens with what it teaches and ends with takeaways and exercises,
  is committed executed, and carries no API key.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from nbval.plugin import get_sanitize_patterns

import lesson_lib
from lesson_lib.display import SOURCE_HEADER, source_of

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = [*sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")),
             *sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]*_*.ipynb"))]  # 中文版 too


def label(path: Path) -> str:
    return f"zh/{path.stem}" if path.parent.name == "zh" else path.stem
SANITIZE = ROOT / "notebooks" / "sanitize.cfg"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def test_every_sanitize_rule_is_parsed_by_nbval():
    raw = SANITIZE.read_bytes()
    assert b"\r" not in raw, "sanitize.cfg has CRLF line endings: nbval would drop every rule"
    content = raw.decode("utf-8")
    written = len(re.findall(r"^regex:", content, flags=re.MULTILINE))
    parsed = get_sanitize_patterns(content)
    assert written == len(parsed) > 0, (
        f"{written} regex lines but nbval parsed {len(parsed)}: each 'regex: ' line must be "
        "followed immediately by a non-empty 'replace: ' line")
    for regex, replace in parsed:
        re.compile(regex)
        assert replace.strip(), f"rule {regex!r} has an empty replacement"


def library_names() -> set[str]:
    names = set()
    for info in pkgutil.walk_packages(lesson_lib.__path__, "lesson_lib."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if getattr(value, "__module__", "").startswith("lesson_lib") and callable(value):
                names.add(name)
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=label)
def test_no_notebook_redefines_library_code(path):
    taken = library_names()
    for cell in code_cells(load(path)):
        source = text(cell["source"])
        try:
            tree = ast.parse(re.sub(r"^[%!].*$", "", source, flags=re.MULTILINE))
        except SyntaxError:
            continue
        # a method is the learner's own (a core-track skeleton, `class MyAgent(Agent)`,
        # overrides the library's chat on purpose): only functions and classes are compared
        methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                   for item in node.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and id(node) not in methods:
                assert node.name not in taken, (
                    f"{path.name} defines {node.name}, which lesson_lib already has: import "
                    "it and show its source with show_source() instead of keeping a copy")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=label)
def test_displayed_source_is_the_librarys(path, speak):
    speak("zh" if path.parent.name == "zh" else "en")  # a name may be the edition's twin
    for cell in code_cells(load(path)):
        for output in cell.get("outputs", []):
            plain = text(output.get("data", {}).get("text/plain", ""))
            if not plain.startswith(SOURCE_HEADER):
                continue
            qualname = plain.splitlines()[0][len(SOURCE_HEADER):].strip()
            module_name, _, attr = qualname.partition(":")
            obj = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
            assert plain == repr_of_source(obj), (
                f"{path.name} shows an old copy of {qualname}: regenerate the notebook "
                "(scripts/regenerate_notebooks.py)")


def repr_of_source(obj) -> str:
    from lesson_lib.display import show_source

    return repr(show_source(obj))


def test_source_header_round_trips():
    from lesson_lib.memory import ShortTermMemory

    shown = repr_of_source(ShortTermMemory)
    assert shown.startswith(SOURCE_HEADER) and source_of(ShortTermMemory) in shown


def test_readme_lists_exactly_the_notebooks_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| \d\d[a-z]? \| `(\d\d[a-z]?_[a-z0-9_]+)` \|", readme,
                            flags=re.MULTILINE))
    present = {p.stem for p in NOTEBOOKS}
    assert listed == present, (f"README table lists {sorted(listed - present)} which do not exist "
                               f"and misses {sorted(present - listed)}")


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name.startswith("00_")], ids=label)
def test_notebook_00s_series_table_lists_every_notebook_in_order(path):
    """"How the series works" in notebook 00 (each edition): one row a notebook, in the order
    of their names (03, 03b, 04 …), each row's number its notebook's."""
    rows = [row for cell in load(path)["cells"] if cell["cell_type"] == "markdown"
            for row in re.findall(r"^\| (\d\d[a-z]?) \| `(\d\d[a-z]?_[a-z0-9_]+)` \|",
                                  text(cell["source"]), flags=re.MULTILINE)]
    names = sorted(p.stem for p in path.parent.glob("[0-9][0-9]*_*.ipynb"))
    assert [name for _, name in rows] == names, (
        f"{label(path)}: the series table lists {[n for _, n in rows]}, not {names}")
    wrong = [(number, name) for number, name in rows if not name.startswith(f"{number}_")]
    assert not wrong, f"{label(path)}: rows whose number is not their notebook's: {wrong}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=label)
def test_notebook_shape(path):
    nb = load(path)
    first = text(nb["cells"][0]["source"])
    chinese = path.parent.name == "zh"
    learn = "你将学到" if chinese else "you will learn"
    assert nb["cells"][0]["cell_type"] == "markdown" and learn in first.lower(), (
        f"{path.name} must open with a markdown cell saying what you will learn ({learn})")
    markdown = "\n".join(text(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for heading in (("要点", "练习") if chinese else ("Key takeaways", "Exercises")):
        assert heading in markdown, f"{path.name} has no '{heading}' section"
    cells = code_cells(nb)
    unrun = [i for i, c in enumerate(cells) if c.get("outputs") and not c.get("execution_count")]
    assert not unrun, f"{path.name}: code cells {unrun} have outputs but were never run"
    assert all(c.get("execution_count") for c in cells), f"{path.name} is not fully executed"
    raw = path.read_text(encoding="utf-8")
    assert not re.search(r"sk-[A-Za-z0-9_-]{16,}", raw), f"{path.name} contains an API key"
    assert "/root/" not in raw and "/home/" not in raw, f"{path.name} contains a home path"


def only_checks(source: str) -> bool:
    """A cell that only checks claims: asserts, possibly under `if` / `for`."""
    try:
        tree = ast.parse(re.sub(r"^[%!].*$", "", source, flags=re.MULTILINE))
    except SyntaxError:
        return False

    def checks(statements) -> bool:
        return all(isinstance(s, ast.Assert)
                   or (isinstance(s, ast.If) and checks(s.body) and checks(s.orelse))
                   or (isinstance(s, ast.For) and checks(s.body) and not s.orelse)
                   for s in statements)

    return bool(tree.body) and checks(tree.body)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=label)
def test_cells_that_only_check_are_collapsed(path):
    """A learner need not read the notebook's checks: a cell of nothing but asserts opens
    collapsed in JupyterLab and Notebook 7 (metadata jupyter.source_hidden)."""
    visible = [i for i, cell in enumerate(load(path)["cells"])
               if cell["cell_type"] == "code" and only_checks(text(cell["source"]))
               and not cell.get("metadata", {}).get("jupyter", {}).get("source_hidden")]
    assert not visible, (f"{path.name}: cells {visible} only check claims but open expanded: "
                         "set metadata jupyter.source_hidden = true")


def test_the_collapsed_check_rule_sees_asserts_only():
    assert only_checks("assert x\nif OFFLINE:\n    assert y == 1\n")
    assert not only_checks("x = 1\nassert x")
    assert not only_checks("print(x)")


CHECK_CALL = re.compile(r"\bcheck_\w+\(")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=label)
def test_a_check_prints_about_a_dozen_lines_at_most(path):
    """A check's saved output stays short (a long report names its first failures and counts
    the rest) unless the cell asks for every line (detail=True)."""
    from lesson_lib.exercises import LINES

    long = []
    for i, cell in enumerate(load(path)["cells"]):
        source = text(cell["source"]) if cell["cell_type"] == "code" else ""
        if not CHECK_CALL.search(source) or "detail=True" in source:
            continue
        printed = sum(len(text(o.get("text", "")).splitlines()) for o in cell.get("outputs", []))
        if printed > LINES:
            long.append((i, printed))
    assert not long, f"{path.name}: check cells (index, lines) print too much: {long}"
