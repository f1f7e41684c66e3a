"""Every worked solution in solutions/ passes its notebook's check, and every solution is
known here (a new file without a check would be an untested answer)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
CHECKS = {  # file → (check module, check function, the name the solution defines)
    "09_assemble.py": ("lesson_lib.exercises.nb09", "check_assemble", "assemble"),
    "09_make_strict.py": ("lesson_lib.exercises.nb09", "check_make_strict", "make_strict"),
    "09_call_with_retries.py": ("lesson_lib.exercises.nb09", "check_retries", "call_with_retries"),
}


def test_every_solution_file_has_a_check():
    assert sorted(p.name for p in SOLUTIONS.glob("*.py")) == sorted(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_solution_passes_its_check(name, capsys):
    module, check, defined = CHECKS[name]
    namespace: dict = {}
    path = SOLUTIONS / name
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    assert getattr(importlib.import_module(module), check)(namespace[defined]) is True
    assert "All checks passed." in capsys.readouterr().out
