"""Every command the README shows still exists.

The README is read as a newcomer reads it: the shell lines of its code blocks and its
inline code spans. Each command found is checked against the project and the running
environment (the venv's bin is `Path(sys.executable).parent`, whatever it is called):

- `.venv/bin/python -m MODULE ...` (or `python`, `python3`): the module can be run with
  `-m`; for this project's modules, and whenever the README passes a subcommand or a
  flag, `python -m MODULE [SUBCOMMAND] --help` exits 0, each subcommand is one its help
  lists, and each `--flag` appears in that help;
- `.venv/bin/python PATH.py`: the script exists;
- `jupyter lab` / `jupyter notebook`: `jupyter-lab` / `jupyter-notebook` are in the bin,
  and each `--flag` is one the app defines (read from its source: starting JupyterLab
  just to print its help takes seconds);
- a console script of `[project.scripts]` (`lesson-chat`): declared in pyproject.toml,
  installed in the bin, `--help` exits 0 and lists each flag the README passes;
  any other `.venv/bin/NAME` must be in the bin;
- `pip install -e ".[EXTRA]"`: the extra is declared in pyproject.toml;
- `conda env create -f FILE`: the file exists; `conda activate NAME`: that file names NAME;
- a repository path (`scripts/regenerate_notebooks.py`, `benchmarks/memory.py`,
  `docs/protocol.md`, `notebooks/`, ...), in a command or on its own: it exists.

A Python code block must compile, and a code block that talks to the served offline
model (`127.0.0.1`) must name its model `lesson_lib.offline.MODEL_ID`.
Each problem names the README line and the command.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from lesson_lib.offline import MODEL_ID

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
VENV_PREFIX = ".venv/bin/"
SHELL_LANGUAGES = {"", "bash", "sh", "shell", "console", "zsh"}
SEPARATORS = {"&&", "||", ";", "|"}
PYTHONS = re.compile(r"python(3(\.\d+)?)?$")
VENV_TOOLS = {"pip", "pip3", "ruff", "pytest"}  # checked for presence when named bare
JUPYTER_APPS = {  # subcommand -> the source files that define its command-line flags
    "lab": [("jupyterlab", "labapp.py"), ("jupyter_server", "serverapp.py")],
    "notebook": [("notebook", "app.py"), ("jupyter_server", "serverapp.py")],
}
PATH_SUFFIXES = (".py", ".md", ".yml", ".yaml", ".toml", ".cfg", ".ipynb", ".txt")


# ----------------------------------------------------------------- reading the README

@dataclass(frozen=True)
class Command:
    line: int                # README line it starts on
    words: tuple[str, ...]   # shell words, environment assignments removed

    def __str__(self) -> str:
        return shlex.join(self.words)


@dataclass
class Snippets:
    commands: list[Command] = field(default_factory=list)
    paths: list[tuple[int, str]] = field(default_factory=list)     # spans that are paths
    blocks: list[tuple[int, str, str]] = field(default_factory=list)  # (line, language, text)
    problems: list[str] = field(default_factory=list)              # unreadable shell lines


def fenced_blocks(markdown: str) -> tuple[list[tuple[int, str, str]], str]:
    """The fenced code blocks as (line of their first content line, language, text), and
    the markdown with those blocks blanked out (line numbers kept) for the inline spans."""
    blocks, prose = [], []
    fence = None
    for number, line in enumerate(markdown.splitlines(), start=1):
        stripped = line.strip()
        if fence is None and stripped.startswith("```"):
            fence = (number + 1, stripped[3:].strip().split(" ")[0].lower(), [])
            prose.append("")
        elif fence is not None and stripped.startswith("```"):
            blocks.append((fence[0], fence[1], "\n".join(fence[2])))
            fence = None
            prose.append("")
        elif fence is not None:
            fence[2].append(line)
            prose.append("")
        else:
            prose.append(line)
    return blocks, "\n".join(prose)


def shell_lines(start: int, text: str) -> list[tuple[int, str]]:
    """(line, command line) of a shell block: `\\` continuations joined, `$ ` prompts cut."""
    out: list[tuple[int, str]] = []
    pending, first = "", start
    for offset, line in enumerate(text.splitlines()):
        if not pending:
            first = start + offset
            line = line.strip().removeprefix("$ ")
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        if whole and not whole.startswith("#"):
            out.append((first, whole))
    return out


def split_commands(line: int, text: str) -> list[Command]:
    """The commands of one shell line (split at &&, ||, ; and |)."""
    words = shlex.split(text, comments=True)  # raises ValueError on unbalanced quotes
    commands, current = [], []
    for word in [*words, "&&"]:
        if word in SEPARATORS:
            while current and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", current[0]):
                current.pop(0)  # VAR=value before a command
            if current:
                commands.append(Command(line, tuple(current)))
            current = []
        else:
            current.append(word)
    return commands


def looks_like_path(span: str) -> bool:
    """A repository path written on its own, e.g. `benchmarks/memory.py` or `notebooks/`."""
    if any(c in span for c in " ()=`…<>") or "://" in span or span.startswith(("/", "-", "~")):
        return False
    if span.startswith(VENV_PREFIX) or span.startswith(".venv"):
        return False
    return "/" in span or span.endswith(PATH_SUFFIXES)


def read_readme(markdown: str, scripts: set[str], name: str = "README.md") -> Snippets:
    """Every command, path and code block the README (the file `name`) shows."""
    found = Snippets()
    blocks, prose = fenced_blocks(markdown)
    for start, language, text in blocks:
        found.blocks.append((start, language, text))
        if language not in SHELL_LANGUAGES:
            continue
        for line, command_line in shell_lines(start, text):
            try:
                found.commands += [c for c in split_commands(line, command_line)
                                   if is_command(c, scripts)]
            except ValueError as error:
                found.problems.append(f"{name} line {line}: `{command_line}` is not a valid "
                                      f"shell line ({error})")
    for match in re.finditer(r"`([^`]+)`", prose):
        span = " ".join(match.group(1).split())
        line = prose.count("\n", 0, match.start()) + 1
        if looks_like_path(span):
            found.paths.append((line, span))
            continue
        try:
            commands = split_commands(line, span)
        except ValueError:
            continue  # an inline span with a lone quote is prose, not a command
        found.commands += [c for c in commands if is_command(c, scripts)]
    return found


def program(command: Command) -> tuple[str, bool]:
    """(name of the program, whether it is written as .venv/bin/NAME)."""
    first = command.words[0]
    if first.startswith(VENV_PREFIX):
        return first[len(VENV_PREFIX):], True
    return first, False


def is_command(command: Command, scripts: set[str]) -> bool:
    """Whether a span or shell line is a command this test knows how to check."""
    name, in_venv = program(command)
    return bool(name) and (in_venv or bool(PYTHONS.match(name)) or name in {"jupyter", "conda"}
            or name.startswith("jupyter-") or name in scripts or name in VENV_TOOLS)


# ----------------------------------------------------------------- the project

@dataclass
class Project:
    root: Path
    bin: Path

    @property
    def pyproject(self) -> dict:
        return tomllib.loads((self.root / "pyproject.toml").read_text(encoding="utf-8"))

    @property
    def scripts(self) -> set[str]:
        return set(self.pyproject["project"].get("scripts", {}))

    @property
    def extras(self) -> set[str]:
        return set(self.pyproject["project"].get("optional-dependencies", {}))

    def installed(self, name: str) -> Path | None:
        """The executable `name` in the environment's bin (NAME.exe on Windows), or None."""
        return next((p for p in (self.bin / name, self.bin / f"{name}.exe") if p.exists()), None)

    def exists(self, path: str) -> bool:
        path = path.rstrip("/") or "."
        return any(self.root.glob(path)) if any(c in path for c in "*?[") else (
            self.root / path).exists()

    def env_name(self, env_file: str) -> str | None:
        path = self.root / env_file
        if not path.is_file():
            return None
        found = re.search(r"^name:\s*(\S+)", path.read_text(encoding="utf-8"), re.MULTILINE)
        return found.group(1) if found else None


@cache
def run_help(argv: tuple[str, ...]) -> tuple[int, str]:
    """(exit status, stdout + stderr) of `argv --help`."""
    try:
        done = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60,
                              cwd=ROOT, stdin=subprocess.DEVNULL)
    except OSError as error:
        return 127, str(error)
    return done.returncode, done.stdout + done.stderr


@cache
def app_source(subcommand: str) -> str:
    """The source that defines a jupyter app's flags (found without importing it)."""
    texts = []
    for package, filename in JUPYTER_APPS.get(subcommand, []):
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            path = Path(location) / filename
            if path.is_file():
                texts.append(path.read_text(encoding="utf-8"))
    return "\n".join(texts)


def flags_of(words: tuple[str, ...]) -> list[str]:
    return [w.split("=", 1)[0] for w in words if re.match(r"^--?[A-Za-z]", w)
            and w.split("=", 1)[0] not in ("-h", "--help")]


def in_help(flag: str, help_text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", help_text) is not None


def subcommands_in(help_text: str) -> set[str] | None:
    """The subcommands an argparse help lists as {a,b,...}, or None if it has none."""
    groups = re.findall(r"\{([\w,-]+)\}", help_text.split("\n\n")[0])
    return set(",".join(groups).split(",")) if groups else None


# ----------------------------------------------------------------- the checks

class Checker:
    def __init__(self, project: Project, env_files: list[str]):
        self.project = project
        self.env_files = env_files or ["environment.yml"]

    def check(self, command: Command) -> list[str]:
        name, in_venv = program(command)
        args = command.words[1:]
        if PYTHONS.match(name):
            return self.python(args)
        if name == "jupyter" or name.startswith("jupyter-"):
            sub = name.removeprefix("jupyter-") if name != "jupyter" else next(
                (a for a in args if not a.startswith("-")), "")
            return self.jupyter(sub, [a for a in args if a != sub])
        if name == "conda":
            return self.conda(args)
        if name in self.project.scripts:
            return self.console_script(name, args)
        problems = [] if self.project.installed(name) else [
            f"there is no `{name}` in {self.project.bin}"
            + ("" if name in VENV_TOOLS else " (nor in pyproject.toml's [project.scripts])")]
        if name.startswith("pip"):
            problems += self.pip(args)
        return problems + self.paths(args)

    def python(self, args: tuple[str, ...]) -> list[str]:
        words = list(args)
        while words and words[0].startswith("-") and words[0] != "-m":
            words.pop(0)  # interpreter options such as -u
        if not words:
            return []
        if words[0] != "-m":
            script = words[0]
            if not self.project.exists(script):
                return [f"no script `{script}` in the repository"]
            return self.paths(words[1:])
        if len(words) < 2:
            return ["`-m` names no module"]
        return self.module(words[1], tuple(words[2:]))

    def module(self, module: str, args: tuple[str, ...]) -> list[str]:
        try:
            spec = importlib.util.find_spec(module)
            main = spec and (not spec.submodule_search_locations
                             or importlib.util.find_spec(module + ".__main__"))
        except (ImportError, ValueError):
            spec = main = None
        if spec is None:
            return [f"no module `{module}` in this environment"]
        if not main:
            return [f"module `{module}` cannot be run with -m (it has no __main__)"]
        ours = module.split(".")[0] in {p.name for p in self.project.root.iterdir()}
        if not ours and not flags_of(args):
            return self.paths(args)  # a third-party tool run plainly (pytest): runnable is enough
        return self.help_checks([sys.executable, "-m", module], f"python -m {module}", args)

    def help_checks(self, argv: list[str], shown: str, args: tuple[str, ...]) -> list[str]:
        """`argv --help` works; leading words are its subcommands; every flag is listed."""
        status, text = run_help(tuple(argv))
        if status != 0:
            return [f"`{shown} --help` exits {status}: {text.strip()[-300:]}"]
        rest = list(args)
        while rest and not rest[0].startswith("-"):
            choices = subcommands_in(text)
            if choices is None:
                break  # a positional argument, not a subcommand
            sub = rest.pop(0)
            if sub not in choices:
                return [f"`{shown}` has no subcommand `{sub}` (it has: "
                        f"{', '.join(sorted(choices))})"]
            argv, shown = [*argv, sub], f"{shown} {sub}"
            status, text = run_help(tuple(argv))
            if status != 0:
                return [f"`{shown} --help` exits {status}: {text.strip()[-300:]}"]
        return [f"`{flag}` is not an option of `{shown}` (see `{shown} --help`)"
                for flag in flags_of(tuple(rest)) if not in_help(flag, text)] + self.paths(rest)

    def jupyter(self, sub: str, args: list[str]) -> list[str]:
        if not sub:
            return [] if self.project.installed("jupyter") else [
                f"there is no `jupyter` in {self.project.bin}"]
        if not self.project.installed(f"jupyter-{sub}"):
            return [f"`jupyter {sub}` is not installed: no `jupyter-{sub}` in "
                    f"{self.project.bin}"]
        source = app_source(sub)
        problems = [f"`{flag}` is not an option of `jupyter {sub}`" for flag in flags_of(
            tuple(args)) if source and "." not in flag and not re.search(
                rf"""["']{re.escape(flag.lstrip('-'))}["']""", source)]
        return problems + self.paths(args)

    def console_script(self, name: str, args: tuple[str, ...]) -> list[str]:
        executable = self.project.installed(name)
        if executable is None:
            return [f"`{name}` is declared in pyproject.toml but not installed in "
                    f"{self.project.bin}: re-run the set-up command"]
        return self.help_checks([str(executable)], name, args)

    def pip(self, args: tuple[str, ...]) -> list[str]:
        problems = []
        for word in args:
            extras = re.fullmatch(r"\.\[([\w,-]+)\]", word)
            for extra in extras.group(1).split(",") if extras else []:
                if extra not in self.project.extras:
                    problems.append(f"pyproject.toml declares no extra `{extra}`")
        return problems

    def conda(self, args: tuple[str, ...]) -> list[str]:
        words = list(args)
        if words[:2] == ["env", "create"] and "-f" in words:
            env_file = words[words.index("-f") + 1] if words.index("-f") + 1 < len(words) else ""
            return [] if self.project.exists(env_file) else [f"no file `{env_file}` in the "
                                                             "repository"]
        if words[:1] == ["activate"] and len(words) > 1:
            names = {self.project.env_name(f) for f in self.env_files} - {None}
            if words[1] not in names:
                return [f"no environment file of the README creates `{words[1]}` "
                        f"({', '.join(self.env_files)} names: "
                        f"{', '.join(sorted(names)) or 'nothing'})"]
        return []

    def paths(self, args) -> list[str]:
        return [f"no `{word}` in the repository" for word in args
                if looks_like_path(word) and not self.project.exists(word)]


def env_files_of(commands: list[Command]) -> list[str]:
    files = []
    for command in commands:
        words = list(command.words)
        if words[:3] == ["conda", "env", "create"] and "-f" in words[:-1]:
            files.append(words[words.index("-f") + 1])
    return files


def readme_problems(markdown: str, project: Project, name: str = "README.md") -> list[str]:
    """Every problem with the commands, paths and code blocks of a README text (the file
    `name`: README.md or README.zh-CN.md, which tests/test_readme_zh.py checks)."""
    found = read_readme(markdown, project.scripts, name)
    checker = Checker(project, env_files_of(found.commands))
    problems = list(found.problems)
    for command in found.commands:
        problems += [f"{name} line {command.line}: `{command}`: {problem}"
                     for problem in checker.check(command)]
    problems += [f"{name} line {line}: `{path}`: no such file or directory in the "
                 "repository" for line, path in found.paths if not project.exists(path)]
    for start, language, text in found.blocks:
        if language == "python":
            try:
                compile(text, f"{name} line {start}", "exec")
            except SyntaxError as error:
                problems.append(f"{name} line {start}: the Python block does not "
                                f"compile: {error}")
        if "127.0.0.1" in text:
            for model in re.findall(r"""["']?model["']?\s*[:=]\s*["']([^"']+)["']""", text):
                if model != MODEL_ID:
                    problems.append(f"{name} line {start}: the block asks the served "
                                    f"offline model for `{model}`; its only model id is "
                                    f"`{MODEL_ID}`")
    return problems


PROJECT = Project(ROOT, BIN)


# ----------------------------------------------------------------- the README itself

def test_every_command_of_the_readme_exists():
    problems = readme_problems(README.read_text(encoding="utf-8"), PROJECT)
    assert not problems, "the README shows commands that do not work:\n" + "\n".join(problems)


def test_the_readme_shows_the_commands_it_promises():
    """Set up, start, test: the three commands a newcomer copies stay in the README."""
    found = read_readme(README.read_text(encoding="utf-8"), PROJECT.scripts)
    shown = {str(c) for c in found.commands}
    for command in ("python3 -m venv .venv", ".venv/bin/pip install -e '.[dev]'",
                    ".venv/bin/jupyter lab notebooks/", ".venv/bin/python -m pytest"):
        assert command in shown, f"the README no longer shows `{command}`"


def test_every_console_script_is_documented():
    readme = README.read_text(encoding="utf-8")
    missing = sorted(s for s in PROJECT.scripts if f"`{VENV_PREFIX}{s}" not in readme
                     and f"`{s}" not in readme)
    assert not missing, f"pyproject.toml installs {missing}, which the README never mentions"


def test_the_parser_finds_the_readme_commands():
    """The check above must not pass by finding nothing."""
    found = read_readme(README.read_text(encoding="utf-8"), PROJECT.scripts)
    programs = {program(c)[0] for c in found.commands}
    assert {"python", "jupyter", "conda"} <= programs, programs
    assert any(c.words[:3] == (".venv/bin/python", "-m", "lesson_lib.offline")
               for c in found.commands)
    assert "scripts/regenerate_notebooks.py" in {w for c in found.commands for w in c.words}


# ----------------------------------------------------------------- the checker can fail

FAKE = """# A README with mistakes

```bash
.venv/bin/python -m lesson_lib.nowhere
python -m lesson_lib.offline serve --colour blue
```

Run `.venv/bin/python -m lesson_lib.offline talk` or `.venv/bin/lesson-talk`,
or `.venv/bin/lesson-chat --shout`, then `.venv/bin/python scripts/nope.py`.
`conda env create -f environment.yml && conda activate other-env` and
`.venv/bin/jupyter lob notebooks/` or `.venv/bin/jupyter lab --allow-everything`.
See `benchmarks/nope.py` and `.venv/bin/pip install -e ".[nope]"`.

```python
client.chat.completions.create(base_url="http://127.0.0.1:8765/v1", model="gpt-4o-mini")
```
"""

EXPECTED = {  # (line, command shown, what the problem says)
    "nonexistent module": (4, "lesson_lib.nowhere", "no module `lesson_lib.nowhere`"),
    "nonexistent flag": (5, "serve --colour", "`--colour` is not an option of "
                                              "`python -m lesson_lib.offline serve`"),
    "nonexistent subcommand": (8, "offline talk", "has no subcommand `talk`"),
    "nonexistent console script": (8, ".venv/bin/lesson-talk", "there is no `lesson-talk`"),
    "console script flag": (9, "lesson-chat --shout", "`--shout` is not an option of "
                                                       "`lesson-chat`"),
    "nonexistent script": (9, "scripts/nope.py", "no script `scripts/nope.py`"),
    "conda environment": (10, "conda activate other-env", "creates `other-env`"),
    "jupyter app": (11, "jupyter lob", "no `jupyter-lob`"),
    "jupyter flag": (11, "--allow-everything", "`--allow-everything` is not an option"),
    "path": (12, "benchmarks/nope.py", "no such file or directory"),
    "pip extra": (12, "pip install", "declares no extra `nope`"),
    "served model": (15, "", "its only model id is"),
}


@pytest.fixture(scope="module")
def fake_problems() -> list[str]:
    return readme_problems(FAKE, PROJECT)


@pytest.mark.parametrize("case", list(EXPECTED))
def test_a_bad_command_is_reported_with_its_line(fake_problems, case):
    line, command, says = EXPECTED[case]
    hits = [p for p in fake_problems if p.startswith(f"README.md line {line}: ")
            and command in p and says in p]
    assert hits, f"{case}: expected a problem at line {line} naming {command!r} and saying " \
                 f"{says!r}; got:\n" + "\n".join(fake_problems)


def test_the_fake_readme_has_no_other_problems(fake_problems):
    assert len(fake_problems) == len(EXPECTED), "\n".join(fake_problems)


def test_good_commands_pass():
    good = """```bash
.venv/bin/python -m lesson_lib.offline serve --port 8765 --context-window 4096
conda env create -f environment.yml && conda activate agent-memory
```
`jupyter lab notebooks/ --allow-root` and `python -m pytest` and `lesson-chat --loop`;
`benchmarks/*.py`, `PATH=x .venv/bin/python scripts/regenerate_notebooks.py notebooks/03_*.ipynb`.
"""
    assert readme_problems(good, PROJECT) == []


def test_a_declared_but_uninstalled_console_script_is_reported(tmp_path):
    project = Project(ROOT, tmp_path)  # an empty bin
    problems = readme_problems("Run `lesson-chat`.", project)
    assert problems and "not installed" in problems[0] and "line 1" in problems[0], problems
