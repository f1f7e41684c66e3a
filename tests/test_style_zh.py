"""The Chinese edition's prose follows its style sheet (docs/style_zh.md): none of the sheet's
rejected variants appears, and every interface label it names is one the Chinese interface
shows."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po

from lesson_lib import i18n

ROOT = Path(__file__).resolve().parent.parent
STYLE = ROOT / "docs" / "style_zh.md"
PO_DIR = ROOT / "lesson_lib" / "locale" / "zh_CN"
UI_CATALOGUES = ("app", "stepper", "display")  # the modules that draw the app, the stepper, the marks

# 原文 is the right word for the original text of something ("API 的原文", "报错原文",
# "英文原文"): the sheet allows it right after what it is the original of, and nowhere else.
ORIGINAL_TEXT = re.compile(r"(?:API|报错|英文|提示|打印出来的|输出|引文) ?的?原文")

SYMBOLS = "◀▶↳✓✗"  # a quoted span with one of these is an interface mark
UI_WORDS = "按钮|面板|下拉框|下拉菜单|菜单|仪表条|复选框|滑块|标签页"
NAMED = re.compile(r"(?:\*\*([^*\n]{1,60})\*\*|`([^`\n]{1,60})`|“([^”\n]{1,60})”|「([^」\n]{1,60})」)"
                   rf"( ?(?:{UI_WORDS}))?")
# Labels that are the same in both interfaces (code names, keys) and bare marks.
SAME_IN_BOTH = {"budget", "max_turns", "/clear", "Enter", "✓", "✗", "✓/✗", "✗/✓"}



def sheet_rows(name: str, text: str | None = None) -> list[list[str]]:
    """The cells of each row of the style sheet's table between <!-- name --> markers."""
    text = STYLE.read_text(encoding="utf-8") if text is None else text
    table = text.split(f"<!-- {name} -->")[1].split(f"<!-- /{name} -->")[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in table.strip().splitlines()[2:]]


def variant(written: str) -> re.Pattern:
    """A rejected variant as the sheet writes it: `/regex/` or a literal."""
    if len(written) > 2 and written.startswith("/") and written.endswith("/"):
        return re.compile(written[1:-1])
    return re.compile(re.escape(written))


def style_terms(text: str | None = None) -> list[dict]:
    """The sheet's terms: {"concept", "chosen", "rejected": [pattern, ...]}."""
    return [{"concept": cells[0], "chosen": cells[1],
             "rejected": [variant(v) for v in re.findall(r"`([^`]+)`", cells[2])]}
            for cells in sheet_rows("style-terms", text)]


def ui_labels(text: str | None = None) -> list[tuple[str, str]]:
    """The sheet's interface labels: (English msgid, the Chinese interface's text)."""
    return [(re.fullmatch(r"`(.+)`", cells[0]).group(1), re.fullmatch(r"`(.+)`", cells[1]).group(1))
            for cells in sheet_rows("style-ui", text)]


def label_pattern(label: str) -> str:
    """A label with its {placeholders} as wildcards."""
    return ".+?".join(re.escape(part) for part in re.split(r"\{[a-z_]+\}", label))


def chinese_interface() -> list[re.Pattern]:
    """Every text the Chinese interface can show (app, stepper, marks), as patterns."""
    shown = []
    for name in UI_CATALOGUES:
        with open(PO_DIR / f"{name}.po", "rb") as f:
            for message in read_po(f):
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                shown += [re.compile(label_pattern(s)) for s in strings if message.id and s]
    return shown


@cache
def catalogue_messages() -> tuple[str, ...]:
    """The words of every Chinese message of the library's catalogue (split at their
    {placeholders}). A guide quotes a check's hint verbatim, on a `> ` line
    (tests/test_teacher_guides.py): that is the catalogue's wording, not the prose's."""
    said = set()
    for po in PO_DIR.glob("*.po"):
        with open(po, "rb") as f:
            for message in read_po(f):
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                said.update(re.sub(r"\s+", " ", part) for s in strings if message.id
                            for part in re.split(r"\{[^{}]*\}", s))
    return tuple(said)


def rejected_in(text: str, terms: list[dict], quoted: tuple[str, ...] = ()) -> list[str]:
    """Each rejected variant the text uses, with the form the sheet chose instead; a `> `
    line that quotes one of the `quoted` messages is left out."""
    def quoting(line: re.Match) -> str:
        quote = re.sub(r"\s+", " ", line.group(1)).strip().strip("…").strip()
        return "□" if len(quote) >= 12 and any(quote in message for message in quoted) else line.group(0)
    text = re.sub(r"^> ?(.+)$", quoting, text, flags=re.M)
    text = ORIGINAL_TEXT.sub("□", text)
    return [f"{m.group(0)!r} → {term['chosen']!r}" for term in terms
            for pattern in term["rejected"] for m in pattern.finditer(text)]


def interface_problems(text: str, labels: list[tuple[str, str]], shown: list[re.Pattern]) -> list[str]:
    """English labels of the app named in Chinese prose, and named labels the Chinese
    interface does not show."""
    problems = []
    for english, chinese in labels:
        if english == chinese:
            continue
        pattern = label_pattern(english.rstrip(":")) + (":?" if english.endswith(":") else "")
        if not any(s in english for s in SYMBOLS):  # a plain word: where it is named as a label
            pattern = rf"(?:\*\*|“|「)(?:{pattern})(?:\*\*|”|」)"  # `Session` is the class
        problems += [f"English label {m.group(0)!r}: the Chinese interface shows {chinese!r}"
                     for m in re.finditer(pattern, text)]
    for m in NAMED.finditer(text):
        label = next(g for g in m.groups()[:4] if g is not None)
        if not (m.group(5) or any(s in label for s in SYMBOLS)) or label in SAME_IN_BOTH:
            continue
        if re.fullmatch(r"[\x00-\x7f◀▶↳✓✗… ]+", label) and any(
                re.fullmatch(label_pattern(e.rstrip(":")), label.rstrip(":")) for e, _ in labels):
            continue  # already named above as an English label
        if not any(p.fullmatch(label) for p in shown):
            problems.append(f"{label!r} is named as a label but the Chinese interface has no such text")
    return problems


def documents() -> dict[str, list[tuple[str, str]]]:
    """The Chinese prose: each document's (place, text) parts."""
    docs = {}
    for path in sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]*_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        docs[path.relative_to(ROOT).as_posix()] = [
            (f"cell {c.get('id')}", c.source) for c in nb.cells if c.cell_type == "markdown"]
    for path in [*sorted((ROOT / "docs" / "teachers" / "zh").glob("*.md")), ROOT / "README.zh-CN.md"]:
        docs[path.relative_to(ROOT).as_posix()] = [("", path.read_text(encoding="utf-8"))]
    return docs


DOCUMENTS = documents()


def cases() -> list:
    return [pytest.param(name, id=name.rsplit("/", 1)[-1]) for name in DOCUMENTS]


def test_the_style_sheet_has_both_tables():
    terms = style_terms()
    assert len(terms) >= 8
    for term in terms:
        assert term["rejected"], term
        assert not any(p.search(term["chosen"]) for p in term["rejected"]), term
    assert len(ui_labels()) >= 20


def test_each_label_of_the_sheet_is_what_the_chinese_interface_shows():
    zh = i18n.catalogue("zh")
    wrong = [f"{english!r}: the sheet says {chinese!r}, the interface shows {zh.gettext(english)!r}"
             for english, chinese in ui_labels() if zh.gettext(english) != chinese]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", cases())
def test_the_chinese_prose_uses_no_rejected_variant(name):
    terms, quoted = style_terms(), catalogue_messages()
    found = [f"{place}: {what}" for place, text in DOCUMENTS[name]
             for what in rejected_in(text, terms, quoted)]
    assert not found, f"{name} (docs/style_zh.md):\n" + "\n".join(found)


@pytest.mark.parametrize("name", cases())
def test_the_chinese_prose_names_the_chinese_interface(name):
    labels, shown = ui_labels(), chinese_interface()
    found = [f"{place}: {what}" for place, text in DOCUMENTS[name]
             for what in interface_problems(text, labels, shown)]
    assert not found, f"{name} (docs/style_zh.md § 3):\n" + "\n".join(found)


def test_the_checks_catch_what_they_must():
    """Each check fails on a small fake text, and passes the same text written to the sheet."""
    terms = style_terms()
    assert rejected_in("详见 notebook 03 的第 2 节。", terms)
    assert rejected_in("上一本（第 03 本笔记本）里", terms)
    assert rejected_in("源文章里的规则", terms)
    assert rejected_in("两篇原文都这样写", terms)
    assert rejected_in("课堂单步播放器", terms)
    assert rejected_in("静默检查会跳过", terms)
    assert rejected_in("留下一条孤立的结果", terms)
    assert rejected_in("右侧的记忆检查器", terms)
    hint = "模型只凭名字和描述挑选工具（notebook 03），所以要用用户会说的话说明什么时候用它"
    printed = (f"它写的是 ：{hint}（当地菜）",)  # a check's message, as the catalogue has it
    assert rejected_in(f"> {hint}", terms) and not rejected_in(f"> {hint}", terms, printed)
    assert rejected_in(f"> {hint}（notebook 04）", terms, printed)
    assert rejected_in(f"{hint}", terms, printed)  # not quoted: the prose's own words
    assert rejected_in("两轮调用接连出错", terms)
    assert not rejected_in("详见第 03 课第 2 节。种子文章里的规则；报错原文、API 的原文、英文原文。"
                           "课堂步进器；安静的检查；孤儿结果；记忆查看器；裁剪检查器；第 2 次调用。"
                           "保存下来的 notebook 里；notebooks/zh/03_x.ipynb", terms)
    labels, shown = ui_labels(), chinese_interface()
    assert interface_problems("点击 **Next ▶**，看列表变长", labels, shown)
    assert interface_problems("它的按钮：◀◀ First、◀ Back", labels, shown)
    assert interface_problems("调用上显示 `✓ answered at [5]`", labels, shown)
    assert interface_problems("结果旁边是 `↳ answers call_1`", labels, shown)
    assert interface_problems("下面的控件（**Memory** 和它的 **budget**）", labels, shown)
    assert interface_problems("点 **发射** 按钮", labels, shown)
    assert interface_problems("调用上显示 `✓ 已经回复`", labels, shown)
    assert not interface_problems(
        "点击 **下一步 ▶**；按钮：◀◀ 开头、◀ 上一步；`✓ 已在 [5] 回复`；`↳ 回复 call_1`；"
        "控件（**记忆** 和它的 **budget**、**max_turns**）；点 **发送** 按钮；结论是 `✓`；"
        "**Token** 仪表条；`Session` 类", labels, shown)
