"""The house's import rules: no circles between lesson_lib's modules, and the stand-in
model (lesson_lib.offline) built on nothing of the lesson but the protocol's rules and a
few neutral helpers.

Every import counts, those inside functions too (a lazy import is still a dependency). The
graph is of modules; a module's import of its own package (`from lesson_lib.offline import
MODEL_ID` inside offline/) is the package's inside and not an edge. The offline model's rule
is about the package offline/ as a whole."""

from __future__ import annotations

import ast
from pathlib import Path

import lesson_lib

PACKAGE = Path(lesson_lib.__file__).parent
# What the offline model may use of lesson_lib: the protocol's rules, token counting, the
# language of its answers, its embedder, and helpers that know nothing of memory or agents.
NEUTRAL = {"protocol", "tokens", "i18n", "places", "text", "terms", "clock", "vectors",
           "cache", "fonts"}  # fonts: i18n's Chinese registers the CJK font for plots


def module_of(path: Path) -> str:
    """lesson_lib/offline/api.py → "lesson_lib.offline.api"; a package's __init__ → its name."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_of(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path) -> set[str]:
    """The lesson_lib modules `path` imports (a name imported from a package that is a
    module of its own counts as that module), but the packages it is in."""
    here = module_of(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    named = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            named.add(base)
            named |= {f"{base}.{alias.name}" for alias in node.names}
    found = set()
    for name in named:
        while name and name not in MODULES:  # "lesson_lib.offline.MODEL_ID" → the package
            name = name.rpartition(".")[0]
        if name and not (here + ".").startswith(name + "."):  # not a package it is in
            found.add(name)
    return found


def graph() -> dict[str, set[str]]:
    """Each lesson_lib module (but the package's own __init__) → those it imports."""
    return {name: imports_of(path) - {"lesson_lib"} for name, path in MODULES.items()
            if name != "lesson_lib"}


def top(module: str) -> str:
    """"lesson_lib.offline.api" → "offline"."""
    return module.split(".")[1]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each circle once, as the list of modules on it (depth-first search)."""
    found, seen = [], set()
    for start in sorted(edges):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start:
                    key = frozenset(path)
                    if key not in seen:
                        seen.add(key)
                        found.append(path + [start])
                elif nxt not in path and nxt > start:
                    stack.append((nxt, path + [nxt]))
    return found


def test_no_import_circles_between_modules():
    circles = cycles(graph())
    assert not circles, "import circles: " + "; ".join(" → ".join(c) for c in circles)


def test_the_offline_model_uses_nothing_of_the_lesson_but_the_protocol_and_helpers():
    uses: dict[str, set[str]] = {}
    for module, targets in graph().items():
        uses.setdefault(top(module), set()).update(top(t) for t in targets)
    offline = uses["offline"] - {"offline"}
    assert offline <= NEUTRAL, (
        f"lesson_lib.offline imports {sorted(offline - NEUTRAL)}: the stand-in model may depend "
        "only on " + ", ".join(sorted(NEUTRAL)))
    for helper in NEUTRAL:
        assert uses.get(helper, set()) - {helper} <= NEUTRAL, (helper, uses.get(helper))


def test_the_circle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
