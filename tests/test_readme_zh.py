"""README.zh-CN.md stands on its own, and everything it tells a Chinese reader to run exists.

- every command and path it shows passes the English README's checks (tests/test_readme.py:
  modules, subcommands, flags, console scripts, extras, scripts and files);
- it sends the reader to README.md for nothing: the one link to README.md is the language
  switch at its top (`[English](README.md)`);
- every relative link (and image) resolves to a file or folder of the repository;
- every `LESSON_*` environment variable it names is read by the code: a string literal in
  lesson_lib/, or, for the classroom hub's `LESSON_HUB_*` settings, in
  deploy/jupyterhub/jupyterhub_config.py, the file that reads them;
- every shell command of its code blocks starts with a program the project's set-up
  installs (`.venv/bin/NAME`, NAME in the environment's bin), the one exception being the
  `python3 -m venv` that creates that environment; `export NAME=value` only sets variables;
- it covers what a Chinese reader needs (set-up, the Chinese series, tests, the terminal
  chat in Chinese, sessions, serving, the classroom, providers, troubleshooting), shows the
  Chinese providers first, and uses the glossary's words (docs/glossary.md).
Each problem names the README line.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from test_readme import (
    BIN,
    PROJECT,
    VENV_PREFIX,
    fenced_blocks,
    read_readme,
    readme_problems,
    shell_lines,
    split_commands,
)

ROOT = Path(__file__).resolve().parent.parent
README_ZH = ROOT / "README.zh-CN.md"
NAME = "README.zh-CN.md"
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)\)")
VARIABLE = re.compile(r"\bLESSON_[A-Z][A-Z0-9_]*\b")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
HUB_CONFIG = ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py"
LANGUAGE_SWITCH = "[English](README.md)"


def text() -> str:
    return README_ZH.read_text(encoding="utf-8")


# ----------------------------------------------------------------- what the checks read

def links(markdown: str) -> list[tuple[int, str, str]]:
    """(line, link text, target) of every markdown link and image outside code blocks."""
    _, prose = fenced_blocks(markdown)
    found = []
    for number, line in enumerate(prose.splitlines(), start=1):
        # inline code is not a link: `[x](y)` inside backticks is shown, not followed
        line = re.sub(r"`[^`]*`", "", line)
        found += [(number, m.group(1), m.group(2)) for m in LINK.finditer(line)]
    return found


def is_relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) \
        and not target.startswith("#")


def link_problems(markdown: str, base: Path = ROOT) -> list[str]:
    """Relative links that lead nowhere, and links to the English README for content."""
    problems = []
    header = markdown.split("\n## ", 1)[0]  # the title and the language switch
    for line, label, target in links(markdown):
        if not is_relative(target):
            continue
        path = target.split("#", 1)[0]
        if not path:
            continue
        resolved = (base / path).resolve()
        if not resolved.exists():
            problems.append(f"{NAME} line {line}: the link `{target}` leads to nothing in "
                            "the repository")
        elif resolved == (ROOT / "README.md").resolve() and not (
                f"[{label}]({target})" == LANGUAGE_SWITCH and LANGUAGE_SWITCH in header):
            problems.append(f"{NAME} line {line}: `[{label}]({target})` sends the reader to "
                            "the English README; say it here in Chinese (only the language "
                            f"switch {LANGUAGE_SWITCH} at the top may link there)")
    return problems


def known_variables() -> set[str]:
    """The LESSON_* variables the code reads: string literals of lesson_lib's modules, and
    the classroom hub's settings in the file that reads them."""
    sources = [*sorted((ROOT / "lesson_lib").rglob("*.py")), HUB_CONFIG]
    names = set()
    for source in sources:
        names |= set(re.findall(r"""["'](LESSON_[A-Z][A-Z0-9_]*)["']""",
                                source.read_text(encoding="utf-8")))
    return names


def variable_problems(markdown: str, known: set[str]) -> list[str]:
    problems = []
    for number, line in enumerate(markdown.splitlines(), start=1):
        for name in VARIABLE.findall(line):
            if name not in known:
                where = "deploy/jupyterhub/jupyterhub_config.py" \
                    if name.startswith("LESSON_HUB_") else "lesson_lib"
                problems.append(f"{NAME} line {number}: `{name}` is read nowhere in {where}: "
                                "name a variable the code reads, or add it to the code")
    return problems


def program_problems(markdown: str, bin_dir: Path = BIN) -> list[str]:
    """Shell commands of code blocks whose program the project does not install."""
    blocks, _ = fenced_blocks(markdown)
    problems = []
    for start, language, block in blocks:
        if language not in {"", "bash", "sh", "shell", "console", "zsh"}:
            continue
        for line, command_line in shell_lines(start, block):
            try:
                commands = split_commands(line, command_line)
            except ValueError as error:
                problems.append(f"{NAME} line {line}: `{command_line}` is not a valid shell "
                                f"line ({error})")
                continue
            for command in commands:
                words = command.words
                if words[0] == "export" and all(ASSIGNMENT.match(w) for w in words[1:]):
                    continue  # sets variables: no program runs
                if words[:3] == ("python3", "-m", "venv"):
                    continue  # the set-up's first step: it creates the environment
                name = words[0][len(VENV_PREFIX):] if words[0].startswith(VENV_PREFIX) else None
                if name and "/" not in name and (bin_dir / name).exists():
                    continue
                problems.append(
                    f"{NAME} line {line}: `{shlex.join(words)}` starts with `{words[0]}`, "
                    "which the set-up does not install: use a program of the environment "
                    f"(`{VENV_PREFIX}NAME`), or say it in the prose instead of a code block")
    return problems


# ----------------------------------------------------------------- the README itself

def test_every_command_of_the_chinese_readme_exists():
    problems = readme_problems(text(), PROJECT, NAME)
    assert not problems, f"{NAME} shows commands that do not work:\n" + "\n".join(problems)


def test_the_chinese_readme_sends_no_one_to_the_english_one_and_its_links_resolve():
    problems = link_problems(text())
    assert not problems, "\n".join(problems)
    assert len([t for _, _, t in links(text()) if is_relative(t)]) >= 8, \
        "the link check found almost no links: is the parser broken?"


def test_every_lesson_variable_it_names_is_read_by_the_code():
    named = set(VARIABLE.findall(text()))
    assert {"LESSON_LANG", "LESSON_BACKEND", "LESSON_MODEL", "LESSON_EMBEDDING_MODEL",
            "LESSON_STORE_URL", "LESSON_SERVE_API_KEY"} <= named, named
    problems = variable_problems(text(), known_variables())
    assert not problems, "\n".join(problems)


def test_every_command_in_its_code_blocks_is_a_program_the_project_installs():
    problems = program_problems(text())
    assert not problems, "\n".join(problems)


def test_it_shows_the_commands_a_chinese_reader_copies():
    found = read_readme(text(), PROJECT.scripts, NAME)
    shown = {str(c) for c in found.commands}
    for command in ("python3 -m venv .venv", ".venv/bin/pip install -e '.[dev]'",
                    ".venv/bin/jupyter lab notebooks/zh/", ".venv/bin/python -m pytest",
                    ".venv/bin/lesson-chat", ".venv/bin/python -m lesson_lib.offline serve",
                    ".venv/bin/python -m lesson_lib.membench score "
                    "docs/teachers/13_example_agent.py --part held-out"):
        assert command in shown, f"{NAME} no longer shows `{command}`"
    assert re.search(r"^LESSON_LANG=zh \.venv/bin/lesson-chat$", text(), re.MULTILINE), \
        "the terminal chat in Chinese (LESSON_LANG=zh) is not shown"
    assert re.search(r"pip install -i https://\S+ -e \"\.\[dev\]\"", text()), \
        "the pip mirror is not shown"


def test_it_has_every_section_a_chinese_reader_needs():
    headings = re.findall(r"^#{2,3} (.+)$", text(), re.MULTILINE)
    for wanted in ("安装", "开始学习", "终端", "会话", "服务", "课堂", "JupyterHub", "Kubernetes",
                   "教师指南", "nbgrader", "记忆基准", "测试", "真实模型", "问题排查"):
        assert any(wanted in h for h in headings), f"no section about {wanted}: {headings}"
    for needed in ("PostgreSQL", "postgresql+psycopg://", "sqlite:///", "docs/teachers/zh/",
                   "scripts/slides.py", "binder/", "benchmarks/memory_bench.py"):
        assert needed in text(), f"{NAME} does not mention {needed}"


def test_its_table_of_times_is_the_one_the_script_writes():
    """The block between <!-- times --> and <!-- /times --> is scripts/reading_times.py's,
    word for word: the script rewrites it, nobody edits it by hand."""
    from scripts_support import load_script  # noqa: PLC0415

    assert load_script("reading_times").zh_block() in text(), (
        f"{NAME}'s table of times is out of date: run "
        ".venv/bin/python scripts/reading_times.py --write")


def test_the_chinese_providers_come_first_with_chat_and_embedding_models():
    section = text().split("## 换用真实模型", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and "---" not in r][1:]
    providers = [r.split("|")[1].strip() for r in rows]
    first_three = " ".join(providers[:3])
    for name in ("DeepSeek", "通义千问", "GLM"):
        assert name in first_three, f"{name} is not among the first three providers: {providers}"
    for name in ("OpenAI", "Ollama", "vLLM"):
        assert any(name in p for p in providers[3:]), providers
    assert all(len(r.split("|")) >= 6 for r in rows), "each row gives a base URL, a chat " \
        "model and an embedding model"
    for url, chat, embedding in (("api.deepseek.com", "deepseek-v4-flash", "`offline`"),
                                 ("dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus",
                                  "text-embedding-v4"),
                                 ("open.bigmodel.cn/api/paas/v4/", "glm-4.6", "embedding-3")):
        row = next(r for r in rows if url in r)
        assert chat in row and embedding in row, row


def test_the_readme_uses_the_glossary_words():
    from test_zh_edition import glossary  # noqa: PLC0415

    wrong = [f"{word!r} (the glossary says {row['zh']!r} for {row['en']!r})"
             for row in glossary() for word in row["rejected"] if word in text()]
    assert not wrong, f"{NAME} uses rejected words: " + "; ".join(wrong)


# ----------------------------------------------------------------- the checks can fail

FAKE = """# 标题

[English](README.md) · 中文

## 一节

详见 [英文版 README](README.md)，另见 [不存在的文件](docs/nope.md) 和
[术语表](docs/glossary.md)、![图](docs/images/nope.png)、[外部](https://example.org/x)。
设置 `LESSON_NOPE=1`，或者 `LESSON_HUB_NOPE=2`；`LESSON_LANG=zh` 是真的。

```bash
curl http://127.0.0.1:8000/v1/models
export LESSON_LANG=zh
python3 -m venv .venv && .venv/bin/pip install -e ".[dev]"
conda activate agent-memory
.venv/bin/nope --help
LESSON_LANG=zh .venv/bin/lesson-chat
```
"""


def test_the_link_check_finds_a_content_link_and_a_broken_one():
    problems = link_problems(FAKE)
    assert len(problems) == 3, problems
    assert "line 7" in problems[0] and "English README" in problems[0]
    assert "line 7" in problems[1] and "docs/nope.md" in problems[1]
    assert "line 8" in problems[2] and "docs/images/nope.png" in problems[2]


def test_the_language_switch_below_the_first_section_is_a_content_link():
    problems = link_problems("# 标题\n\n## 一节\n\n[English](README.md)\n")
    assert len(problems) == 1 and "English README" in problems[0], problems


def test_the_variable_check_finds_a_variable_no_code_reads():
    problems = variable_problems(FAKE, known_variables())
    assert len(problems) == 2, problems
    assert "`LESSON_NOPE`" in problems[0] and "lesson_lib" in problems[0]
    assert "`LESSON_HUB_NOPE`" in problems[1] and "jupyterhub_config.py" in problems[1]


def test_the_program_check_finds_programs_the_project_does_not_install():
    problems = program_problems(FAKE)
    starts = [re.search(r"starts with `([^`]+)`", p).group(1) for p in problems]
    assert starts == ["curl", "conda", ".venv/bin/nope"], problems
    assert "line 12" in problems[0]


def test_the_program_check_uses_the_environment_it_is_given(tmp_path):
    """A program counts only if the environment's bin holds it."""
    assert program_problems("```bash\n.venv/bin/lesson-chat\n```\n", tmp_path)
    (tmp_path / "lesson-chat").write_text("")
    assert program_problems("```bash\n.venv/bin/lesson-chat\n```\n", tmp_path) == []


@pytest.mark.parametrize("bad, says", [
    ("代理", "智能体"), ("学员", "学习者"), ("修剪", "裁剪"), ("令牌", "token")])
def test_the_glossary_check_would_catch_a_rejected_word(bad, says):
    from test_zh_edition import glossary  # noqa: PLC0415

    rows = [row for row in glossary() if bad in row["rejected"]]
    assert rows and rows[0]["zh"] == says
