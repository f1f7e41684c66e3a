"""Load one of the repository's scripts (scripts/NAME.py, benchmarks/NAME.py) as a module,
for the tests that check what it computes (reading times, the Chinese edition's sync, the
catalogue, the tool banks' scores)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"


def load_script(name: str, folder: Path = SCRIPTS):
    """<folder>/<name>.py as the module `name` (registered, so dataclasses find it)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_benchmark(name: str):
    """benchmarks/<name>.py as the module `name`."""
    return load_script(name, ROOT / "benchmarks")
