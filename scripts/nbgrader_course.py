"""The exercises as an nbgrader course: one source assignment per notebook, graded by the project's own checks.

    python scripts/nbgrader_course.py COURSE_DIR [--lang zh] [--only 02 05]

writes COURSE_DIR/nbgrader_config.py and COURSE_DIR/source/<notebook>/<notebook>.ipynb for
every notebook with a worked solution in solutions/ (English from notebooks/, Chinese from
notebooks/zh/). Each exercise becomes three cells: its task text (the markdown before the
notebook's exercise cell, read-only), an autograded answer cell holding the worked solution
between ### BEGIN SOLUTION / ### END SOLUTION (nbgrader releases it as a stub), and a hidden
test cell that runs the notebook's own check in the learner's language and raises
AssertionError when it does not pass; the check's printed hints are the feedback. A Build it
is worth BUILD_POINTS, any other exercise POINTS. Then, in COURSE_DIR, the usual nbgrader
steps: `nbgrader generate_assignment 02_messages_are_memory`, collect, `nbgrader autograde`,
`nbgrader generate_feedback`. nbgrader is a dev dependency (pip install -e ".[dev]").
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
POINTS, BUILD_POINTS = 1, 3
TIMEOUT = 60  # seconds a cell may run before nbgrader stops it (the checks stop sooner)
CHECKED_BY = re.compile(r"# Checked by: ([\w.]+)\.(check_\w+)\((\w+(?:, \w+)*)\)")
SETUP_COMMENT = {"en": "the language this notebook speaks, wherever it is opened",
                 "zh": "这个 notebook 说的语言，在哪里打开都一样"}
# what the learner's cell says before the answer, in their language
STUB = {"en": "# YOUR CODE HERE: write the answer the task above asks for",
        "zh": "# 在这里写你的代码：按上面的任务写出答案"}
FAILED = {"en": "the check did not pass: read its hints above",
          "zh": "检查没有通过：请看上面的提示"}


def notebook_for(prefix: str, lang: str) -> Path:
    """The notebook a solution file's prefix ("02", "03b") belongs to, in `lang`'s folder."""
    folder = ROOT / "notebooks" / ("zh" if lang == "zh" else "")
    found = sorted(p for p in folder.glob(f"{prefix}_*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"solutions/{prefix}_*.py: expected one notebook {prefix}_*.ipynb in "
                         f"{folder}, found {len(found)}; name the solution after its notebook")
    return found[0]


def exercises(prefix: str) -> list[dict]:
    """The worked solutions of one notebook: file, check module, check, names it defines."""
    found = []
    for path in sorted(SOLUTIONS.glob(f"{prefix}_*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        match = CHECKED_BY.fullmatch(lines[1]) if len(lines) > 1 else None
        if match:
            found.append({"file": path, "module": match[1], "check": match[2],
                          "names": match[3].split(", "), "title": lines[0].lstrip("# "),
                          "code": "\n".join(lines[2:]).strip("\n")})
    return found


def _defines(source: str, name: str) -> bool:
    return bool(re.search(rf"^(class|def)\s+{name}\b|^{name}\s*(:[^=]*)?=", source, re.M))


def locate(cells: list, exercise: dict) -> tuple[list[str], int, bool] | None:
    """(task markdown, position, in a Build it?) of an exercise in a notebook: the code cell that calls its
    check, the stub cell before it that defines the names, the markdown just before that."""
    call = f"{exercise['check']}("
    for at, cell in enumerate(cells):
        if cell.cell_type == "code" and call in cell.source.replace("import ", "#"):
            stub = next((i for i in range(at, -1, -1) if cells[i].cell_type == "code"
                         and all(_defines(cells[i].source, n) for n in exercise["names"])),
                        None)
            if stub is None:
                return None
            start = stub
            while start > 0 and cells[start - 1].cell_type == "markdown":
                start -= 1
            task = "\n\n".join(c.source for c in cells[start:stub])
            heads = list(re.finditer(r"^#{2,4} ", task, re.M))
            # a Build it is a section (## Build it) or a part of one (### Build it · ...)
            titles = [h for c in cells[:stub + 1] if c.cell_type == "markdown"
                     for h in re.findall(r"^#{2,3} .*", c.source, re.M)]
            section = next((h for h in reversed(titles) if h.startswith("## ")), "")
            part = titles[-1] if titles else ""
            build = any("Build it" in h or "动手实现" in h for h in (section, part))
            return ([task[heads[-1].start():]] if heads else [task] if task else []), at, build
    return None


def assignment(prefix: str, lang: str, keep: list[str] | None = None
               ) -> tuple[str, nbformat.NotebookNode, int] | None:
    """The source notebook of one assignment, its name and its total points (`keep`: only
    these exercises, named as their solution files, e.g. ["02_memory"])."""
    source = notebook_for(prefix, lang)
    cells = nbformat.read(source, as_version=4).cells
    placed = []
    for exercise in exercises(prefix):
        if keep and exercise["file"].stem not in keep:
            continue
        where = locate(cells, exercise)
        if where is not None:
            placed.append((where[1], exercise, where[0], where[2]))
    if not placed:
        return None
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                  "language": "python"},
                   "language_info": {"name": "python"},
                   # the language travels with the notebook (lesson_lib.i18n), and its first
                   # cell says it too: a Chinese assignment speaks Chinese wherever it is opened
                   "lesson_lib": {"language": lang}}
    nb.cells.append(nbformat.v4.new_code_cell(
        f"from lesson_lib.i18n import use_language\n\nuse_language({lang!r})  "
        f"# {SETUP_COMMENT[lang]}",
        metadata={"nbgrader": _meta("setup-language", locked=True)}))
    total = 0
    for _, exercise, task, build in sorted(placed, key=lambda p: p[0]):
        name = exercise["file"].stem
        points = BUILD_POINTS if build else POINTS
        total += points
        nb.cells.append(nbformat.v4.new_markdown_cell(
            "\n\n".join(task) or exercise["title"],
            metadata={"nbgrader": _meta(f"{name}-task", locked=True)}))
        nb.cells.append(nbformat.v4.new_code_cell(
            f"### BEGIN SOLUTION\n{exercise['code']}\n### END SOLUTION",
            metadata={"nbgrader": _meta(f"{name}-answer", solution=True)}))
        args = ", ".join(exercise["names"])
        nb.cells.append(nbformat.v4.new_code_cell(
            "### BEGIN HIDDEN TESTS\n"
            f"from lesson_lib.i18n import use_language\nuse_language({lang!r})\n"
            f"from {exercise['module']} import {exercise['check']}\n"
            f"assert {exercise['check']}({args}) is True, {FAILED[lang]!r}\n"
            "### END HIDDEN TESTS",
            metadata={"nbgrader": _meta(f"{name}-check", grade=True, locked=True,
                                        points=points)}))
    return source.stem, nb, total


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": locked,
            "schema_version": 3}
    if points is not None:
        meta["points"] = points
    return meta


def prefixes() -> list[str]:
    """Every notebook prefix with a worked solution, Build its' notebooks first (02-06)."""
    found = sorted({p.name.split("_", 1)[0] for p in SOLUTIONS.glob("*_*.py")
                    if CHECKED_BY.fullmatch((p.read_text(encoding="utf-8").splitlines()
                                             + ["", ""])[1])})
    return found


def write_course(course: Path, lang: str = "en", only: list[str] | None = None,
                 keep: list[str] | None = None) -> dict:
    """Write the course (`only`: these notebooks; `keep`: these exercises); return
    {assignment: points}."""
    course.mkdir(parents=True, exist_ok=True)
    made = {}
    for prefix in only or prefixes():
        built = assignment(prefix, lang, keep)
        if built is None:
            print(f"{prefix}: no exercise found in the notebook; skipped", file=sys.stderr)
            continue
        name, nb, total = built
        folder = course / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{name}.ipynb")
        made[name] = total
    (course / "nbgrader_config.py").write_text(
        "# Written by scripts/nbgrader_course.py: the agent-memory exercises, graded offline.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course.resolve())!r}\n"
        f"c.ClearSolutions.code_stub = {{'python': {STUB[lang] + chr(10) + 'raise NotImplementedError()'!r}}}\n"
        f"c.ExecutePreprocessor.timeout = {TIMEOUT}\n"
        f"c.Execute.timeout = {TIMEOUT}\n",
        encoding="utf-8")
    (course / "assignments.json").write_text(json.dumps(made, indent=1) + "\n", encoding="utf-8")
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("course", type=Path, help="the nbgrader course directory to write")
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    parser.add_argument("--only", nargs="*", help="notebook prefixes, e.g. 02 05 (default: all)")
    parser.add_argument("--exercises", nargs="*",
                        help="only these exercises, named as in solutions/, e.g. 02_memory")
    args = parser.parse_args(argv)
    for name, points in write_course(args.course, args.lang, args.only, args.exercises).items():
        print(f"{name}: {points} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
