"""Every worked solution in solutions/ passes its notebook's check, every solution is known
here (a new file without a check would be an untested answer), and every exercise check has
a worked solution (a new exercise without one fails)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "lesson_lib" / "exercises"
# "# Checked by: lesson_lib.exercises.nb09.check_x(name)", or with several names,
# "check_x(a, b)": the names the solution defines, passed to the check in that order
CHECKED_BY = re.compile(r"# Checked by: ([\w.]+)\.(check_\w+)\((\w+(?:, \w+)*)\)")


def _checks() -> dict[str, tuple[str, str, tuple[str, ...]] | None]:
    """file → (check module, check function, the names the solution defines), read from
    each solution's second line, "# Checked by: lesson_lib.exercises.nb09.check_x(a, b)"."""
    found = {}
    for path in sorted(SOLUTIONS.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        match = CHECKED_BY.fullmatch(lines[1]) if len(lines) > 1 else None
        found[path.name] = ((match[1], match[2], tuple(match[3].split(", ")))
                            if match else None)
    return found


CHECKS = _checks()


def _exercise_checks() -> list[tuple[str, str]]:
    """(module, function) for every public check_* defined in lesson_lib/exercises/nb*.py
    (not the ones a module imports, such as nb04's check_trim)."""
    found = []
    for path in sorted(EXERCISES.glob("nb*.py")):
        module = importlib.import_module(f"lesson_lib.exercises.{path.stem}")
        found += [(module.__name__, name)
                  for name, fn in inspect.getmembers(module, inspect.isfunction)
                  if name.startswith("check_") and fn.__module__ == module.__name__]
    return found


def test_every_solution_file_names_its_check():
    unnamed = [name for name, check in CHECKS.items() if check is None]
    assert not unnamed, (f"{unnamed}: say on the second line which check judges it, e.g. "
                         "'# Checked by: lesson_lib.exercises.nb09.check_assemble(assemble)', "
                         "or with several names, 'check_prediction(first, second)'")


def test_every_exercise_check_has_a_worked_solution():
    solved = {(module, check) for module, check, _ in filter(None, CHECKS.values())}
    exercises = _exercise_checks()
    without = sorted({p.stem for p in EXERCISES.glob("nb*.py")}
                     - {module.rsplit(".", 1)[1] for module, _ in exercises})
    assert not without, f"no check_* found in {without}: is the discovery still right?"
    missing = [f"{module}.{check}" for module, check in exercises
               if (module, check) not in solved]
    assert not missing, (f"no worked solution in solutions/ for {missing}: add one file per "
                         "exercise, its second line naming the check")


@pytest.mark.parametrize("name", sorted(n for n, c in CHECKS.items() if c))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_solution_passes_its_check(name, lang, speak, capsys):
    """In both editions: a Chinese learner who loads a solution is judged on Chinese data."""
    speak(lang)
    module, check, defined = CHECKS[name]
    namespace: dict = {}
    path = SOLUTIONS / name
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    missing = [n for n in defined if n not in namespace]
    assert not missing, f"{name} does not define {missing}, which its second line names"
    arguments = [namespace[n] for n in defined]
    assert getattr(importlib.import_module(module), check)(*arguments) is True
    assert {"en": "All checks passed.", "zh": "全部检查通过。"}[lang] in capsys.readouterr().out
