"""How long each notebook takes a learner: the core path, and everything.

    .venv/bin/python scripts/reading_times.py           # the table, per notebook
    .venv/bin/python scripts/reading_times.py --write   # put it in the notebooks and README
    .venv/bin/python scripts/reading_times.py --stretches  # core minutes between quizzes

A notebook's sections are its `##` headings. A section whose heading ends with
"· deep dive" is optional; so is every exercise after "## Exercises" except a
"Build it" one (those are the core track and sit in the lesson). The core path is
everything else.

The minutes come from a pace, stated here so anyone can argue with it, not from a stopwatch:

- prose is read at 140 words a minute (technical English with code words); the Chinese
  edition's prose at 336 Chinese characters a minute (its English words, code names mostly,
  at 140 a minute): a measured pace, derived below at HAN_PER_MINUTE;
- a code cell costs 15 seconds to run and look at, plus 3 seconds a line of code and
  1 second a line of output (at most 30 output lines are read);
- an exercise costs 10 minutes of work, a "Build it" exercise 20 (its reading is counted
  as above, its skeleton's lines too).

That pace is an estimate. Where a notebook has been timed in a read-through, the time
given is the read-through's instead: a fresh reader worked the notebook in a live kernel,
every exercise included, and logged per stretch what they read, ran, re-read and how many
attempts each exercise took (docs/read_throughs/<reader>/<notebook>.json; the method is in
docs/read_throughs.md). Each notebook's **Time** line and the tables say which it is. The
pace above still sets the stretches between quizzes (`stretches()`), which a test keeps
to about 20 minutes each.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))

WORDS_PER_MINUTE = 140
# The Chinese pace is measured, not assumed. Native readers given the same text in their own
# language (IReST: ten paragraphs matched for content, length and difficulty across 17
# languages; Trauzettel-Klosinski, Dietz et al., Investigative Ophthalmology & Visual Science
# 53(9), 2012, Table 2) read Chinese at 1.67 texts a minute and English at 1.49: a Chinese
# reader needs 1.49/1.67 of an English reader's time for the same content. The two editions
# of this series are the same content, and their prose has 2.14 Chinese characters for each
# English word the Chinese translates (measured over every notebook: CHARS_PER_WORD, kept in
# step by tests/test_reading_times.py). At the English pace of 140 words a minute, that is
# 140 × 2.14 × 1.67 / 1.49 ≈ 336 characters a minute.
IREST_TEXTS_PER_MINUTE = {"zh": 1.67, "en": 1.49}
CHARS_PER_WORD = 2.14
HAN_PER_MINUTE = round(WORDS_PER_MINUTE * CHARS_PER_WORD
                       * IREST_TEXTS_PER_MINUTE["zh"] / IREST_TEXTS_PER_MINUTE["en"])
CELL_SECONDS, CODE_LINE_SECONDS, OUTPUT_LINE_SECONDS, OUTPUT_LINES_READ = 15, 3, 1, 30
EXERCISE_MINUTES, BUILD_MINUTES = 10, 20

DEEP = re.compile(r"·\s*(?:deep dive|深入)\s*$", re.I)
TIME_LINE = re.compile(r"^\*\*Time\*\*:.*$", re.M)
ZH_TIME_LINE = re.compile(r"^\*\*时间\*\*：.*$", re.M)  # the Chinese twin's (notebooks/zh/)
HAN = re.compile(r"[\u4e00-\u9fff]")


def _text(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else source


def _prose(markdown: str) -> tuple[int, int]:
    """(words, Chinese characters) a reader reads in `markdown`: the words outside Chinese
    text (English prose, or code names inside Chinese), and the Chinese characters."""
    markdown = re.sub(r"<!-- times -->.*<!-- /times -->", "", markdown, flags=re.S)  # not read
    return len(HAN.sub(" ", markdown).split()), len(HAN.findall(markdown))


def _prose_minutes(markdown: str) -> float:
    words, han = _prose(markdown)
    return words / WORDS_PER_MINUTE + han / HAN_PER_MINUTE


def _output_lines(cell: dict) -> int:
    lines = 0
    for output in cell.get("outputs", []):
        if "text" in output:
            lines += len(_text(output["text"]).splitlines())
        elif "data" in output:
            data = output["data"]
            plain = _text(data.get("text/plain", ""))
            lines += max(len(plain.splitlines()), 8 if "text/html" in data else 0)
    return min(lines, OUTPUT_LINES_READ)


@dataclass
class Times:
    core: float = 0.0  # minutes
    extra: float = 0.0

    @property
    def everything(self) -> float:
        return self.core + self.extra


def cell_minutes(path: Path, chinese: bool = False) -> list[tuple[float, bool]]:
    """Each cell's minutes, and whether it is optional (a deep dive, an exercise), for the
    English notebook at `path` or (`chinese`) its Chinese twin: the twin's cells are the
    English ones cell for cell (scripts/zh_sync.py), so the sections and exercises are read
    from the English headings, the prose and the outputs from the twin's own cells."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    read = json.loads(chinese_of(path).read_text(encoding="utf-8"))["cells"] if chinese \
        else cells
    result: list[tuple[float, bool]] = []
    section = in_exercises = False  # is the current ## section optional
    sub: bool | None = None          # is the current ### part optional (None: as its section)
    optional = False
    for cell, twin in zip(cells, read, strict=True):
        source = _text(cell["source"])
        minutes = 0.0
        if cell["cell_type"] == "markdown":
            for line in source.splitlines():
                build = "build it" in line.lower()
                if line.startswith("## "):
                    in_exercises = in_exercises or line.strip() == "## Exercises"
                    section, sub = bool(DEEP.search(line)) or (in_exercises and not build), None
                    minutes += BUILD_MINUTES if build else 0
                elif line.startswith("### "):
                    if line.startswith("### Exercise") or build:
                        sub = not build
                        minutes += BUILD_MINUTES if build else EXERCISE_MINUTES
                    else:
                        sub = True if DEEP.search(line) else None
                optional = section if sub is None else sub
            minutes += _prose_minutes(_text(twin["source"]))
        elif cell["cell_type"] == "code":
            code = [line for line in source.splitlines() if line.strip()]
            minutes += (CELL_SECONDS + CODE_LINE_SECONDS * len(code)
                        + OUTPUT_LINE_SECONDS * _output_lines(twin)) / 60
            if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
                minutes -= CODE_LINE_SECONDS * len(code) / 60  # a collapsed check is not read
        result.append((minutes, optional))
    return result


def times(path: Path, chinese: bool = False) -> Times:
    """Minutes for the core path and for the rest of one notebook (or its Chinese twin)."""
    result = Times()
    for minutes, optional in cell_minutes(path, chinese):
        if optional:
            result.extra += minutes
        else:
            result.core += minutes
    return result


QUIZ_CALL = re.compile(r"""\bquiz\(\s*["']([^"']+)["']\s*\)""")


def stretches(path: Path) -> list[tuple[str, float, bool]]:
    """The notebook cut at its check-yourself quizzes: for each stretch, the quiz that ends
    it ("" for what follows the last one), its minutes on the core path, and whether it
    holds a "Build it" (costed BUILD_MINUTES by itself)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    result, core, build = [], 0.0, False
    for cell, (minutes, optional) in zip(cells, cell_minutes(path), strict=True):
        core += 0.0 if optional else minutes
        source = _text(cell["source"])
        if cell["cell_type"] == "markdown":
            build = build or any(line.startswith("#") and "build it" in line.lower()
                                 for line in source.splitlines())
        found = QUIZ_CALL.search(source) if cell["cell_type"] == "code" else None
        if found:
            result.append((found[1], core, build))
            core, build = 0.0, False
    result.append(("", core, build))
    return result


READ_THROUGHS = ROOT / "docs" / "read_throughs"


def read_throughs(path: Path) -> list[dict]:
    """The read-through logs of the notebook at `path` (its English stem), one per reader."""
    return [json.loads(log.read_text(encoding="utf-8"))
            for log in sorted(READ_THROUGHS.glob(f"*/{path.stem}.json"))]


def chinese_of(path: Path) -> Path:
    """The Chinese twin of the English notebook at `path`."""
    return path.parent / "zh" / path.name


def timed(path: Path, chinese: bool = False) -> tuple[Times, int]:
    """(minutes, how many read-throughs they come from) of the English notebook at `path`,
    or of its Chinese twin: the mean of the read-throughs where there are any, else the
    pace's estimate (and 0). The read-throughs are of the English notebook; the Chinese
    twin's time is theirs, with the English prose's minutes swapped for the Chinese prose's
    at the Chinese pace (the code, the outputs and the exercises are the same)."""
    logs = read_throughs(path)
    own = times(path, chinese)
    if not logs:
        return own, 0
    core = sum(log["total_core_minutes"] for log in logs) / len(logs)
    extra = sum(log["total_optional_minutes"] for log in logs) / len(logs)
    if chinese:
        english = times(path)
        core, extra = core + own.core - english.core, extra + own.extra - english.extra
    return Times(core, extra), len(logs)


def rounded(minutes: float) -> int:
    """To the next 5 minutes: a learner plans in fives."""
    return max(5, 5 * math.ceil(minutes / 5))


def how(readers: int, chinese: bool = False) -> str:
    if chinese:
        # the read-throughs are of the English notebook: its prose swapped for the Chinese
        return f"{readers} 次计时通读，正文按中文速度换算" if readers else "按设定速度估算"
    if readers:
        return f"timed in {readers} read-through{'s' if readers > 1 else ''}"
    return "estimated from a stated pace"


def has_deep_dive(path: Path) -> bool:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return any(line.startswith("#") and DEEP.search(line) for cell in cells
               if cell["cell_type"] == "markdown" for line in _text(cell["source"]).splitlines())


def time_line(t: Times, readers: int = 0, deep: bool = True) -> str:
    extra = "the deep dives and every exercise" if deep else "every exercise"
    return (f"**Time**: about {rounded(t.core)} minutes on the core path, "
            f"{rounded(t.everything)} with {extra} ({how(readers)})")


def zh_time_line(t: Times, readers: int = 0, deep: bool = True) -> str:
    extra = "加上深入部分和全部练习" if deep else "加上全部练习"
    return (f"**时间**：核心路径约 {rounded(t.core)} 分钟，"
            f"{extra}约 {rounded(t.everything)} 分钟（{how(readers, True)}）")


def line_for(path: Path, chinese: bool = False) -> str:
    """The **Time** line of the notebook at `path` (its English file), in either language."""
    return (zh_time_line if chinese else time_line)(*timed(path, chinese),
                                                     deep=has_deep_dive(path))


def table(chinese: bool = False) -> list[tuple[str, int, int, int]]:
    """(notebook, core minutes, everything, read-throughs) per notebook, in either edition."""
    rows = []
    for p in NOTEBOOKS:
        t, readers = timed(p, chinese)
        rows.append((p.stem, rounded(t.core), rounded(t.everything), readers))
    return rows


def write() -> None:
    """Put each notebook's time line in its first cell, and the table in the README."""
    import nbformat  # noqa: PLC0415

    lines = {path: line_for(path) for path in NOTEBOOKS}
    block = readme_block()  # computed before any notebook changes
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        changed = False
        for n, cell in enumerate(nb.cells):
            new = TIME_LINE.sub(lines[path], cell.source, count=1) if n == 0 else cell.source
            new = with_block(new, block) if cell.cell_type == "markdown" else new
            if new != cell.source:
                cell.source, changed = new, True
        if changed:
            nbformat.write(nb, path)
    readme = ROOT / "README.md"
    readme.write_text(with_block(readme.read_text(encoding="utf-8"), block), encoding="utf-8")
    write_chinese({path.name: line_for(path, chinese=True) for path in NOTEBOOKS}, zh_block())


def write_chinese(lines: dict[str, str], block: str) -> None:
    """The same numbers in the Chinese edition: each twin's time line, the table in the
    Chinese start notebook and README.zh-CN.md: each twin's own prose at the Chinese pace
    (`timed`)."""
    import nbformat  # noqa: PLC0415

    for path in sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]*_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        changed = False
        for n, cell in enumerate(nb.cells):
            new = ZH_TIME_LINE.sub(lines.get(path.name, ""), cell.source, count=1) \
                if n == 0 and path.name in lines else cell.source
            new = with_block(new, block) if cell.cell_type == "markdown" else new
            if new != cell.source:
                cell.source, changed = new, True
        if changed:
            nbformat.write(nb, path)
    readme = ROOT / "README.zh-CN.md"
    if readme.exists():
        readme.write_text(with_block(readme.read_text(encoding="utf-8"), block),
                          encoding="utf-8")


def with_block(text: str, block: str) -> str:
    """`text` with its table of times (between <!-- times --> and <!-- /times -->) replaced."""
    if "<!-- times -->" not in text:
        return text
    start = text.index("<!-- times -->")
    end = text.index("<!-- /times -->") + len("<!-- /times -->")
    return text[:start] + block + text[end:]


def readme_block(chinese: bool = False) -> str:
    """The table of times, in English or (for the Chinese edition) in Chinese."""
    head, minutes, total, h, m = (("核心路径 | 全部 | 怎么得来", "分钟", "合计", " 小时 ", " 分")
                                  if chinese else ("core path | everything | from", "min", "all",
                                                   " h ", ""))
    rows = table(chinese)
    lines = ["<!-- times -->", f"| notebook | {head} |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {core} {minutes} | {everything} {minutes} | {how(n, chinese)} |"
              for name, core, everything, n in rows]
    core = sum(r[1] for r in rows)
    everything = sum(r[2] for r in rows)
    lines.append(f"| **{total}** | **{core // 60}{h}{core % 60:02d}{m}** "
                 f"| **{everything // 60}{h}{everything % 60:02d}{m}** | |")
    lines.append("<!-- /times -->")
    return "\n".join(lines)


def zh_block() -> str:
    return readme_block(chinese=True)


if __name__ == "__main__":
    if "--stretches" in sys.argv:
        for path in NOTEBOOKS:
            parts = ", ".join(f"{minutes:.0f} min{' (Build it)' if build else ''} → "
                              f"{quiz or 'end'}" for quiz, minutes, build in stretches(path))
            print(f"{path.stem}: {parts}")
        sys.exit()
    if "--write" in sys.argv:
        write()
    print(readme_block())
