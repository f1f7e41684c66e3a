"""Helpers for the exercise-check tests: run a check, read what it printed."""

import json
from pathlib import Path


def run(check, answer, capsys, **kw) -> tuple[bool, str]:
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
