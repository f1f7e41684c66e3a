"""A notebook speaks its own language wherever it is opened: the first code cell of every
notebook states it (`use_language`), and so does its metadata (lesson_lib.i18n)."""

from __future__ import annotations

import os
import re
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


COMMAND = re.compile(r"(?P<env>LESSON_LANG=(?P<lang>\S+)\s+)?(?:[\w./-]*/)?"
                     r"(?:python3?\s+-m\s+lesson_lib(?P<module>\.[\w.]+)?(?![\w.])|lesson-chat\b)")
JUPYTER = re.compile(r"jupyter[ -]lab\b(?P<rest>[^\n`]*)")
SILENT = (".offline",)  # the stand-in model speaks no language of the lesson's (it answers in
                        # the language it is asked in): its commands need no LESSON_LANG


def said_and_printed(nb) -> list[tuple[str, str]]:
    """(where, text): every cell's source, and every text its outputs show."""
    found = []
    for n, cell in enumerate(nb.cells):
        found.append((f"cell {n} ({cell.cell_type})", cell.source))
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")] + [v for k, v in output.get("data", {}).items()
                                                 if k.startswith("text/")]
            found += [(f"cell {n}'s output", "".join(t) if isinstance(t, list) else t)
                      for t in texts]
    return found


def wrong_commands(nb, lang: str) -> list[str]:
    """The commands `nb` tells the learner to type (or prints) that would not speak `lang`:
    the terminal chat or the benchmark's scoring without LESSON_LANG={lang}, JupyterLab not
    opened on this edition's folder."""
    folder = "notebooks/zh/" if lang == "zh" else "notebooks/"
    wrong = []
    for where, text in said_and_printed(nb):
        for m in COMMAND.finditer(text):
            if (m["module"] or "").startswith(SILENT):
                continue
            if lang == "zh" and not (m["lang"] and i18n.normalise(m["lang"]) == "zh"):
                wrong.append(f"{where}: {m[0]!r} speaks English: put LESSON_LANG=zh in front of "
                             "it (`LESSON_LANG=zh python -m lesson_lib`)")
            elif lang == "en" and m["lang"] and i18n.normalise(m["lang"]) != "en":
                wrong.append(f"{where}: {m[0]!r} speaks Chinese in the English edition")
        for m in JUPYTER.finditer(text):
            opened = m["rest"].strip()
            if not opened.startswith(folder) or (lang == "en" and opened.startswith("notebooks/zh")):
                wrong.append(f"{where}: {m[0]!r} opens another edition: write "
                             f"'jupyter lab {folder}'")
    return wrong


@pytest.mark.parametrize("path", [*ENGLISH, *CHINESE], ids=label)
def test_every_command_a_notebook_gives_speaks_its_language(path):
    lang = "zh" if path.parent.name == "zh" else "en"
    wrong = wrong_commands(nbformat.read(path, as_version=4), lang)
    assert not wrong, f"{path.name}:\n" + "\n".join(wrong)


def test_the_command_check_catches_what_it_must():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Run `python -m lesson_lib` or `.venv/bin/lesson-chat`, "
                                      "then `.venv/bin/jupyter lab notebooks/`."),
        nbformat.v4.new_markdown_cell("`LESSON_LANG=zh .venv/bin/python -m lesson_lib`, "
                                      "`LESSON_LANG=zh-CN python -m lesson_lib.membench score a.py`, "
                                      "`python -m lesson_lib.offline serve`, "
                                      "`jupyter lab notebooks/zh/`"),
        nbformat.v4.new_code_cell('print("LESSON_LANG=en python -m lesson_lib")')])
    wrong = wrong_commands(nb, "zh")
    assert len(wrong) == 4 and all("cell 0" in w or "cell 2" in w for w in wrong), wrong
    assert wrong_commands(nb, "en") == [
        "cell 1 (markdown): 'LESSON_LANG=zh .venv/bin/python -m lesson_lib' "
        "speaks Chinese in the English edition",
        "cell 1 (markdown): 'LESSON_LANG=zh-CN python -m lesson_lib.membench' "
        "speaks Chinese in the English edition",
        "cell 1 (markdown): 'jupyter lab notebooks/zh/' opens another edition: write "
        "'jupyter lab notebooks/'"]


def test_notebook_00_in_chinese_opens_jupyterlab_on_the_chinese_edition():
    nb = nbformat.read(ROOT / "notebooks" / "zh" / "00_start_here.ipynb", as_version=4)
    assert "jupyter lab notebooks/zh/" in "\n".join(c.source for c in nb.cells)


def test_a_chinese_notebooks_own_pyplot_code_draws_chinese_inline(tmp_path):
    """The inline backend, as in JupyterLab: after the first cell's use_language("zh"), a
    notebook's own matplotlib code draws Chinese labels, and its output has no "Glyph …
    missing from font" warning (which it has without: the check can fail)."""
    plot = ("import matplotlib.pyplot as plt\n"
            "fig, axes = plt.subplots()\naxes.plot([1, 2], [3, 4], label='完整历史')\n"
            "axes.set(title='模型读了什么（计费的）', xlabel='请求')\naxes.legend()\nplt.show()\n"
            "import matplotlib\nprint(matplotlib.rcParams['font.family'])")
    said = run_cells(["from lesson_lib.i18n import use_language\n_ = use_language('zh')", plot],
                     tmp_path)
    assert said == ["", "['sans-serif', 'Noto Sans SC']"]
    unset = run_cells(["x = 1", plot], tmp_path)
    assert "missing from font" in unset[1] and "Noto Sans SC" not in unset[1]
