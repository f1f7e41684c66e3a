"""The series in two languages: English, and Chinese (中文版, the notebooks in notebooks/zh/).

What a learner reads from the library (exercise checks and hints, the chat app's notices
and labels, the stepper's captions, the terminal chat, the explanations beside an API
error) goes through `_()`, the standard library's gettext, with the catalogue in the repo:
lesson_lib/locale/zh_CN/LC_MESSAGES/lesson_lib.po (the text) and its compiled .mo (what
gettext reads; `python scripts/translations.py compile` writes it, and a test fails when
the two differ). English is the source text itself: no catalogue.

Which language, first match wins:
1. `use_language("zh")` in this process (a notebook, a test);
2. the environment variable LESSON_LANG: `en`, or `zh` (zh-CN, zh_CN, zh-Hans also mean
   Chinese), what the CLI and a teacher's shell set;
3. the notebook's folder: a kernel that starts in notebooks/zh/ (JupyterLab, nbval and
   Run All start it in the notebook's own folder) speaks Chinese, so a Chinese notebook
   needs no set-up line of its own;
4. English.

The API's own error texts stay verbatim in English in both languages, as the API sends
them; the Chinese explanation stands beside them (lesson_lib.notices).

Data speaks the learner's language too: a check's conversations (小明, 成都多云16°C) have
Chinese twins, picked with `by_language(en, zh)` or read from a `Twins` by name, so a Chinese
learner is judged on Chinese data by the same rules (tests/check_support.in_both_languages
holds every check to the same verdict and the same messages in both).
"""

from __future__ import annotations

import gettext
import os
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

LANGUAGES = ("en", "zh")
LANG_ENV = "LESSON_LANG"
DOMAIN = "lesson_lib"
LOCALE_DIR = Path(__file__).parent / "locale"
CATALOGUES = {"zh": "zh_CN"}  # a language → its folder under locale/
_ALIASES = {"en": "en", "en-us": "en", "en_us": "en", "en-gb": "en", "english": "en",
            "zh": "zh", "zh-cn": "zh", "zh_cn": "zh", "zh-hans": "zh", "zh_hans": "zh",
            "chinese": "zh", "中文": "zh"}
_chosen: str | None = None


def normalise(lang: str) -> str:
    """"zh-CN" → "zh"; ValueError naming the languages for anything else."""
    found = _ALIASES.get(str(lang).strip().lower())
    if found is None:
        raise ValueError(f"the series speaks {' and '.join(LANGUAGES)}, not {lang!r}: "
                         f"use 'en' or 'zh' (set {LANG_ENV} or call use_language)")
    return found


def use_language(lang: str | None) -> str:
    """Speak `lang` ("en" or "zh") in this process from now on; None goes back to the
    environment's choice. Returns the language now spoken."""
    global _chosen
    _chosen = None if lang is None else normalise(lang)
    return language()


def language() -> str:
    """The language spoken now: "en" or "zh" (see the module's docstring)."""
    if _chosen is not None:
        return _chosen
    wanted = os.environ.get(LANG_ENV, "").strip()
    if wanted:
        try:
            return normalise(wanted)
        except ValueError:
            return "en"  # a wrong setting is reported by the CLI, never a crash here
    return "zh" if Path.cwd().name == "zh" and Path.cwd().parent.name == "notebooks" else "en"


@cache
def catalogue(lang: str) -> gettext.NullTranslations:
    """The compiled catalogue of `lang` (a NullTranslations for English or a missing one)."""
    if lang not in CATALOGUES:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[CATALOGUES[lang]], fallback=True)


def _(message: str) -> str:
    """`message` in the language spoken now (itself when the catalogue lacks it, and ""
    for "": gettext would give the catalogue's header)."""
    return catalogue(language()).gettext(message) if message else message


def N_(message: str) -> str:
    """Mark `message` for the catalogue without translating it now: for text defined when a
    module is imported (a rule's name, a hint) and translated when it is shown, with `_()`,
    in the language spoken then."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for `n`, in the language spoken now."""
    return catalogue(language()).ngettext(singular, plural, n)


def is_chinese() -> bool:
    return language() == "zh"


T = TypeVar("T")


def by_language(en: T, zh: T) -> T:
    """`zh` while the series speaks Chinese, else `en`: the data a check or a notebook uses
    (a conversation, a question, a city and its dish) in the learner's language, so a
    Chinese learner is judged on Chinese data by the same rules as an English one."""
    return zh if is_chinese() else en


class Twins:
    """Data with a Chinese twin, read by name in the language spoken now: given
    `DATA = Twins(QUESTION=("What's the weather?", "天气怎么样？"))`, `DATA.QUESTION` is the
    English text, or the Chinese while the series speaks Chinese. A module that exports its
    data by name passes names on with `def __getattr__(name): return DATA.get(name)`."""

    def __init__(self, **twins: tuple[Any, Any]):
        self._twins = twins

    def __getattr__(self, name: str) -> Any:
        try:
            en, zh = self.__dict__["_twins"][name]
        except KeyError:
            raise AttributeError(name) from None
        return by_language(en, zh)

    def get(self, name: str, module: str = "the module") -> Any:
        """For a module's __getattr__: the data `name`, or the AttributeError Python expects."""
        if name not in self._twins:
            raise AttributeError(f"{module} has no attribute {name!r}")
        return getattr(self, name)

    def both(self, name: str) -> tuple[Any, Any]:
        """(English, Chinese) of `name`."""
        return self._twins[name]
