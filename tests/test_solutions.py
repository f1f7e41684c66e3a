"""Every worked solution in solutions/ passes its notebook's check, and every solution is
known here (a new file without a check would be an untested answer)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
CHECKED_BY = re.compile(r"^# Checked by: ([\w.]+)\.(check_\w+)\((\w+)\)$", re.M)


def _checks() -> dict[str, tuple[str, str, str]]:
    """file → (check module, check function, the name the solution defines), read from
    each solution's second line, "# Checked by: lesson_lib.exercises.nb09.check_x(name)"."""
    found = {}
    for path in sorted(SOLUTIONS.glob("*.py")):
        match = CHECKED_BY.search(path.read_text(encoding="utf-8"))
        found[path.name] = match.groups() if match else None
    return found


CHECKS = _checks()


def test_every_solution_file_names_its_check():
    unnamed = [name for name, check in CHECKS.items() if check is None]
    assert not unnamed, (f"{unnamed}: say on the second line which check judges it, e.g. "
                         "'# Checked by: lesson_lib.exercises.nb09.check_assemble(assemble)'")


@pytest.mark.parametrize("name", sorted(n for n, c in CHECKS.items() if c))
def test_the_solution_passes_its_check(name, capsys):
    module, check, defined = CHECKS[name]
    namespace: dict = {}
    path = SOLUTIONS / name
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    assert getattr(importlib.import_module(module), check)(namespace[defined]) is True
    assert "All checks passed." in capsys.readouterr().out
