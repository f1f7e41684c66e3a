"""A notebook speaks its own language wherever it is opened: the first code cell of every
notebook states it (`use_language`), and so does its metadata (lesson_lib.i18n)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from lesson_lib import i18n
from lesson_lib.testing import apply_notebook_env

ROOT = Path(__file__).resolve().parent.parent
ENGLISH = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
CHINESE = sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]*_*.ipynb"))
NOT_YET = ("10_", "12_", "13_")  # edited elsewhere at the time: they state it when next changed


def label(path: Path) -> str:
    return f"zh/{path.stem}" if path.parent.name == "zh" else path.stem


def execute_in(path: Path, folder: Path) -> nbformat.NotebookNode:
    """`path` copied alone into `folder` and run there by nbclient (which tells the kernel
    nothing of its notebook), in the tests' environment with no LESSON_LANG."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / path.name
    shutil.copy(path, copy)
    nb = nbformat.read(copy, as_version=4)
    env = dict(os.environ)
    apply_notebook_env(env)
    env.pop(i18n.LANG_ENV, None)
    env.pop("JPY_SESSION_NAME", None)
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(folder)}}).execute(env=env, cwd=str(folder))
    return nb


def printed(nb, marker: str) -> str:
    """What the code cells that contain `marker` printed."""
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" and marker in c.source
                   for o in c.outputs)


@pytest.mark.parametrize("path", [*ENGLISH, *CHINESE], ids=label)
def test_each_notebook_states_its_language_in_its_first_code_cell_and_metadata(path):
    if path.name.startswith(NOT_YET):
        pytest.skip(f"{path.name} is edited elsewhere now; it states its language when merged")
    lang = "zh" if path.parent.name == "zh" else "en"
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert any(line.startswith(f'use_language("{lang}")') for line in first.source.splitlines()), (
        f"{path.name}: its first code cell must call use_language({lang!r}) before anything "
        "speaks, so that it speaks its language wherever it is opened")
    assert nb.metadata.get(i18n.NOTEBOOK_KEY, {}).get("language") == lang, (
        f"{path.name}: its metadata must say {{{i18n.NOTEBOOK_KEY!r}: {{'language': {lang!r}}}}}")


def test_a_chinese_notebook_copied_elsewhere_speaks_chinese(tmp_path):
    nb = execute_in(ROOT / "notebooks" / "zh" / "00_start_here.ipynb", tmp_path / "somewhere")
    said = printed(nb, "check_first_history")
    assert "练习 1" in said and "提示" in said, said
    stored = nbformat.read(ROOT / "notebooks" / "zh" / "00_start_here.ipynb", as_version=4)
    assert said == printed(stored, "check_first_history")


def test_an_english_notebook_copied_into_a_folder_named_zh_speaks_english(tmp_path):
    nb = execute_in(ROOT / "notebooks" / "00_start_here.ipynb", tmp_path / "notebooks" / "zh")
    said = printed(nb, "check_first_history")
    assert "Exercise 1" in said and "练习" not in said, said
    stored = nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4)
    assert said == printed(stored, "check_first_history")


def run_cells(sources: list[str], folder: Path, **env_vars: str) -> list[str]:
    """What each cell printed, run by a fresh kernel in `folder` with `env_vars` set."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    env = dict(os.environ)
    apply_notebook_env(env)
    for name in (i18n.LANG_ENV, "JPY_SESSION_NAME"):
        env.pop(name, None)
    env.update(env_vars)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute(env=env, cwd=str(folder))
    return ["".join(o.get("text", "") for o in c.outputs).strip() for c in nb.cells]


def test_a_kernel_that_knows_its_notebook_speaks_the_notebooks_language_from_the_first_cell(
        tmp_path):
    """jupyter_server (JupyterLab, Notebook) gives the kernel its notebook's path in
    JPY_SESSION_NAME, VS Code in __vsc_ipynb_file__: a cell run before the notebook's first
    one (after a restart) speaks the notebook's language too; the notebook's statement wins
    over LESSON_LANG, and LESSON_LANG still decides for a notebook that states nothing."""
    zh_copy = tmp_path / "copied" / "00_start_here.ipynb"
    zh_copy.parent.mkdir()
    shutil.copy(ROOT / "notebooks" / "zh" / "00_start_here.ipynb", zh_copy)
    plain = tmp_path / "mine.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), plain)
    ask = "from lesson_lib.i18n import language\nprint(language())"
    assert run_cells([ask], tmp_path, JPY_SESSION_NAME=str(zh_copy)) == ["zh"]
    assert run_cells([ask], tmp_path, JPY_SESSION_NAME=str(zh_copy), LESSON_LANG="en") == ["zh"]
    assert run_cells([ask], tmp_path, JPY_SESSION_NAME=str(plain), LESSON_LANG="zh") == ["zh"]
    assert run_cells([ask], tmp_path, JPY_SESSION_NAME=str(plain)) == ["en"]
    assert run_cells([f"__vsc_ipynb_file__ = {str(zh_copy)!r}", ask], tmp_path) == ["", "zh"]
    # a program the notebook starts inherits JPY_SESSION_NAME, and speaks by LESSON_LANG
    outside = "import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', " \
              "'from lesson_lib.i18n import language; print(language())'], " \
              "capture_output=True, text=True).stdout)"
    assert run_cells([outside], tmp_path, JPY_SESSION_NAME=str(zh_copy)) == ["en"]


def test_the_folder_rule_and_lesson_lang_still_hold_where_no_notebook_states_one(tmp_path):
    ask = "from lesson_lib.i18n import language\nprint(language())"
    zh_folder = tmp_path / "notebooks" / "zh"
    zh_folder.mkdir(parents=True)
    assert run_cells([ask], zh_folder) == ["zh"]
    assert run_cells([ask], zh_folder, LESSON_LANG="en") == ["en"]
    assert run_cells([ask], tmp_path, LESSON_LANG="zh-CN") == ["zh"]
    assert run_cells([ask], tmp_path) == ["en"]


def test_a_notebook_that_states_no_language_or_a_wrong_one_is_no_crash(tmp_path):
    i18n.notebook_language.cache_clear()
    wrong = tmp_path / "wrong.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.metadata[i18n.NOTEBOOK_KEY] = {"language": "klingon"}
    nbformat.write(nb, wrong)
    (tmp_path / "broken.ipynb").write_text("{not json", encoding="utf-8")
    for path in (None, str(wrong), str(tmp_path / "broken.ipynb"), str(tmp_path / "none.ipynb"),
                 str(tmp_path / "a.txt")):
        assert i18n.notebook_language(path) is None
