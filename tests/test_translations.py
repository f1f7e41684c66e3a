"""The library speaks the learner's language (lesson_lib.i18n): the Chinese catalogue is
complete and in step with the code (scripts/translations.py), the language is chosen as
documented, and what a learner reads comes out in either language."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts_support import load_script

from lesson_lib import i18n
from lesson_lib.exercises import Report, not_done

ROOT = Path(__file__).resolve().parent.parent


translations = load_script("translations")


def test_every_marked_string_has_its_chinese_and_the_compiled_catalogue_is_current():
    problems = translations.problems()
    assert not problems, "\n".join(problems)


def test_placeholders_are_compared_by_name():
    assert translations.placeholders("{n} more: {how}") == ["{how}", "{n}"]
    assert translations.placeholders("{{literal}} {x!r:>3}") == ["{x!r:>3}"]


def test_the_language_comes_from_the_call_then_the_environment_then_the_folder(
        speak, monkeypatch, tmp_path):
    assert i18n.language() == "en" or Path.cwd().name == "zh"
    monkeypatch.setenv(i18n.LANG_ENV, "zh-CN")
    assert i18n.language() == "zh"
    monkeypatch.setenv(i18n.LANG_ENV, "klingon")
    assert i18n.language() == "en"  # a wrong setting never crashes a lesson
    monkeypatch.delenv(i18n.LANG_ENV)
    folder = tmp_path / "notebooks" / "zh"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)  # a kernel started for a Chinese notebook
    assert i18n.language() == "zh"
    assert speak("en") == "en" and i18n.language() == "en"
    with pytest.raises(ValueError, match="use 'en' or 'zh'"):
        i18n.normalise("fr")


def test_a_report_in_english_and_in_chinese(speak):
    def report():
        r = Report("Exercise 1")
        r.expect(True, "one")
        r.expect(False, "two", "look again")
        return str(r)

    speak("en")
    assert report().splitlines()[-2:] == ["     hint: look again", "  Not yet: see the ❌ lines."]
    speak("zh")
    assert report().splitlines()[-2:] == ["     提示：look again", "  还没完成：看 ❌ 的那几行。"]


def test_an_unwritten_exercise_says_so_in_chinese(speak, capsys):
    speak("zh")
    assert not_done("Exercise 1", "先写 f()") is False
    assert "❌ 还没有完成" in capsys.readouterr().out


def test_the_catalogue_follows_the_glossary():
    from test_zh_edition import glossary  # noqa: PLC0415

    said = "\n".join(s for m in translations.merged() if m.id
                     for s in (m.string if isinstance(m.string, tuple) else (m.string,)))
    wrong = [f"{word!r} (the glossary says {row['zh']!r})"
             for row in glossary() for word in row["rejected"] if word in said]
    assert not wrong, "the catalogue uses rejected words: " + "; ".join(wrong)
