"""scripts/reading_times.py's Chinese pace: measured, kept in step with the two editions, and
applied to each Chinese twin's own prose."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from scripts_support import load_script

ROOT = Path(__file__).resolve().parent.parent
TIMES = load_script("reading_times")
HAN = re.compile(r"[\u4e00-\u9fff]")


def _markdown(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.sub(r"<!-- times -->.*?<!-- /times -->", "", text, flags=re.S)


def test_the_characters_per_word_are_the_editions_own():
    """CHARS_PER_WORD is measured on the series: the Chinese characters of every Chinese
    notebook's prose over the English words their English twins have beyond the ones the
    Chinese keeps (code names). Prose changes move it a little; a stale figure fails."""
    english = chinese = kept = 0
    for path in TIMES.NOTEBOOKS:
        en, zh = _markdown(path), _markdown(TIMES.chinese_of(path))
        english += len(en.split())
        chinese += len(HAN.findall(zh))
        kept += len(HAN.sub(" ", zh).split())
    measured = chinese / (english - kept)
    assert abs(measured - TIMES.CHARS_PER_WORD) < 0.05 * measured, (
        f"the editions now have {measured:.2f} Chinese characters per English word; "
        f"set CHARS_PER_WORD in scripts/reading_times.py to {measured:.2f} and run "
        ".venv/bin/python scripts/reading_times.py --write")


def test_the_chinese_pace_is_derived_from_the_measurements():
    irest = TIMES.IREST_TEXTS_PER_MINUTE
    assert irest["zh"] > irest["en"]  # the same content, read faster in Chinese
    assert TIMES.HAN_PER_MINUTE == round(TIMES.WORDS_PER_MINUTE * TIMES.CHARS_PER_WORD
                                         * irest["zh"] / irest["en"]) == 336


def _pair(tmp_path: Path, english: str, chinese: str) -> Path:
    """A one-section notebook and its Chinese twin, cell for cell."""
    (tmp_path / "zh").mkdir()
    for path, prose in ((tmp_path / "99_t.ipynb", english),
                        (tmp_path / "zh" / "99_t.ipynb", chinese)):
        nbformat.write(new_notebook(cells=[new_markdown_cell("# T"),
                                           new_markdown_cell(f"## One\n\n{prose}"),
                                           new_code_cell("x = 1")]), path)
    return tmp_path / "99_t.ipynb"


def test_a_chinese_twin_is_read_at_the_chinese_pace(tmp_path):
    """336 Chinese characters take a minute; the English words inside Chinese prose are read
    at the English pace; the code costs the same in both editions."""
    path = _pair(tmp_path, " ".join(["word"] * 140), "字" * 336 + " " + " ".join(["code"] * 70))
    english, chinese = TIMES.times(path), TIMES.times(path, chinese=True)
    code = TIMES.CELL_SECONDS / 60 + TIMES.CODE_LINE_SECONDS / 60
    words = len("# T ## One".split())  # the headings
    assert abs(english.core - (140 + words) / 140 - code) < 1e-9
    assert abs(chinese.core - (1 + (70 + words) / 140) - code) < 1e-9


def test_a_read_through_of_the_english_notebook_times_the_twin_with_its_prose_swapped(
        tmp_path, monkeypatch):
    path = _pair(tmp_path, " ".join(["word"] * 280), "字" * 336)
    log = {"total_core_minutes": 30.0, "total_optional_minutes": 0.0}
    monkeypatch.setattr(TIMES, "read_throughs", lambda p: [log])
    english, readers = TIMES.timed(path)
    chinese, _ = TIMES.timed(path, chinese=True)
    assert readers == 1 and english.core == 30.0
    assert abs(chinese.core - (30.0 - 2 + 1)) < 1e-9  # two minutes of English out, one in
