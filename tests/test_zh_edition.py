"""The Chinese edition (notebooks/zh/) stays in step with the English one and follows the
glossary (docs/glossary.md): scripts/zh_sync.py says what "in step" means."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from scripts_support import load_script

ROOT = Path(__file__).resolve().parent.parent


zh_sync = load_script("zh_sync")
CHINESE = sorted(zh_sync.ZH_DIR.glob("[0-9][0-9]*_*.ipynb"))


def glossary() -> list[dict]:
    """The glossary's rows: {"en", "zh", "rejected": [...]}."""
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    table = text.split("<!-- glossary -->")[1].split("<!-- /glossary -->")[0]
    rows = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append({"en": cells[0], "zh": cells[1],
                     "rejected": [w.strip() for w in cells[2].split(",") if w.strip()]})
    return rows


def chinese_text(nb) -> str:
    """What a Chinese notebook says: its markdown, and the Chinese its code cells put in."""
    said = [c.source for c in nb.cells if c.cell_type == "markdown"]
    for cell in nb.cells:
        said += [zh for _, zh in (cell.metadata.get("zh") or {}).get("strings") or []]
    return "\n".join(said)


def test_the_glossary_is_a_table_with_a_chinese_word_for_each_term():
    rows = glossary()
    assert len(rows) >= 30
    for row in rows:
        assert row["en"] and row["zh"], row
        assert row["zh"] not in row["rejected"], row


@pytest.mark.parametrize("path", CHINESE, ids=[p.stem for p in CHINESE])
def test_each_chinese_notebook_maps_cell_for_cell_onto_its_english_twin(path):
    problems = zh_sync.problems(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", CHINESE, ids=[p.stem for p in CHINESE])
def test_each_chinese_notebook_uses_the_glossary_words(path):
    text = chinese_text(nbformat.read(path, as_version=4))
    wrong = [f"{word!r} (the glossary says {row['zh']!r} for {row['en']!r})"
             for row in glossary() for word in row["rejected"] if word in text]
    assert not wrong, f"{path.name} uses rejected words: " + "; ".join(wrong)


def test_the_sync_check_catches_what_it_must(tmp_path, monkeypatch):
    """A changed English cell, code that differs beyond its strings, a replacement of code,
    an untranslated markdown cell: each is named."""
    en_dir, zh_dir = tmp_path / "notebooks", tmp_path / "notebooks" / "zh"
    zh_dir.mkdir(parents=True)
    monkeypatch.setattr(zh_sync, "EN_DIR", en_dir)
    monkeypatch.setattr(zh_sync, "ZH_DIR", zh_dir)
    en = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Hello", id="m1"),
        nbformat.v4.new_code_cell('%xmode Minimal\nprint("Hi, I am Xiaoming")  # greet', id="c1")])
    nbformat.write(en, en_dir / "01_x.ipynb")
    zh_path = zh_sync.init(en_dir / "01_x.ipynb")
    assert any("not translated" in p for p in zh_sync.problems(zh_path))
    zh = nbformat.read(zh_path, as_version=4)
    zh.cells[0].source = "# 你好"
    zh.cells[1].metadata["zh"]["strings"] = [["Hi, I am Xiaoming", "你好，我叫小明"], ["# greet", "# 打招呼"]]
    nbformat.write(zh, zh_path)
    assert zh_sync.apply(zh_path) == []
    assert zh_sync.problems(zh_path) == []
    assert nbformat.read(zh_path, as_version=4).cells[1].source == \
        '%xmode Minimal\nprint("你好，我叫小明")  # 打招呼'
    zh = nbformat.read(zh_path, as_version=4)
    zh.cells[1].source = zh.cells[1].source.replace("print", "len")
    nbformat.write(zh, zh_path)
    assert any("not the English code" in p for p in zh_sync.problems(zh_path))
    zh.cells[1].metadata["zh"]["strings"].append(["print", "len"])
    nbformat.write(zh, zh_path)
    assert any("'print' is code" in p for p in zh_sync.problems(zh_path))
    en.cells[0].source = "# Hello again"
    nbformat.write(en, en_dir / "01_x.ipynb")
    assert any("cell 0 (id m1, markdown): the English cell changed" in p
               for p in zh_sync.problems(zh_path))
    assert re.search(r"accept 01 m1", "\n".join(zh_sync.problems(zh_path)))


def test_a_notebook_and_its_second_part_are_found_apart(tmp_path, monkeypatch):
    """"03" names 03_…, not 03b_… too; "03b" names the second part, and a changed cell of
    it is accepted by "03b"."""
    en_dir, zh_dir = tmp_path / "notebooks", tmp_path / "notebooks" / "zh"
    zh_dir.mkdir(parents=True)
    monkeypatch.setattr(zh_sync, "EN_DIR", en_dir)
    monkeypatch.setattr(zh_sync, "ZH_DIR", zh_dir)
    for name in ("03_one.ipynb", "03b_two.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_markdown_cell("# Hello", id="m1")]), en_dir / name)
    assert zh_sync.find("03").name == "03_one.ipynb"
    assert zh_sync.find("03b").name == "03b_two.ipynb"
    zh_path = zh_sync.init(en_dir / "03b_two.ipynb")
    nbformat.write(nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# Hello again", id="m1")]), en_dir / "03b_two.ipynb")
    assert re.search(r"accept 03b m1", "\n".join(zh_sync.problems(zh_path)))


@pytest.mark.parametrize("en_path", sorted(zh_sync.EN_DIR.glob("[0-9][0-9]*_*.ipynb")),
                         ids=lambda p: p.name)
def test_the_number_an_accept_hint_names_finds_that_notebook_alone(en_path):
    """The number a hint prints (`accept 06 …`, `accept 06b …`) names exactly the notebook the
    hint is about, in the real series: 06 is 06_the_agent_loop, never 06b_when_tools_fail too."""
    assert zh_sync.find(zh_sync.number(en_path)) == en_path


def test_replacements_are_found_in_the_english_at_once_and_the_longer_wins():
    code = 'say("Chengdu is cloudy")  # Chengdu\nprint("cloudy")'
    out, problems = zh_sync.replaced(code, [["Chengdu", "成都"], ["Chengdu is cloudy", "成都多云"],
                                            ["cloudy", "多云"], ["成都", "never matched"]])
    assert out == 'say("成都多云")  # 成都\nprint("多云")'
    assert problems == ["'成都' is not in the English code"]




@pytest.mark.parametrize("path", CHINESE, ids=[p.stem for p in CHINESE])
def test_each_chinese_notebook_states_its_english_twins_time(path):
    times = load_script("reading_times")
    wanted = times.line_for(zh_sync.english_of(path), chinese=True)
    first = nbformat.read(path, as_version=4).cells[0].source
    assert wanted in first.splitlines(), (
        f"{path.name}: its first cell must say {wanted!r}; run "
        ".venv/bin/python scripts/reading_times.py --write")


def test_every_english_notebook_has_its_chinese_twin():
    english = {p.name for p in zh_sync.EN_DIR.glob("[0-9][0-9]*_*.ipynb")}
    assert english == {p.name for p in CHINESE}, (
        f"without a Chinese twin: {sorted(english - {p.name for p in CHINESE})}; "
        f"without an English original: {sorted({p.name for p in CHINESE} - english)}")


LINK = re.compile(r"\]\(((?:\.\./|[0-9][0-9][a-z]?_)[^)#\s]*)")


@pytest.mark.parametrize("path", CHINESE, ids=[p.stem for p in CHINESE])
def test_the_links_of_a_chinese_notebook_lead_somewhere(path):
    """A link to another notebook stays in notebooks/zh/; one to the repository goes two
    folders up (../../solutions/, ../../README.zh-CN.md)."""
    nb = nbformat.read(path, as_version=4)
    broken = [target for cell in nb.cells if cell.cell_type == "markdown"
              for target in LINK.findall(cell.source) if not (path.parent / target).exists()]
    assert not broken, f"{path.name} links to what does not exist: {broken}"
