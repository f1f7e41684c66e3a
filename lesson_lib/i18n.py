"""The series in two languages: English, and Chinese (中文版, the notebooks in notebooks/zh/).

What a learner reads from the library (exercise checks and hints, the chat app's notices
and labels, the stepper's captions, the terminal chat, the explanations beside an API
error) goes through `_()`, the standard library's gettext, with the catalogue in the repo:
lesson_lib/locale/zh_CN/LC_MESSAGES/lesson_lib.po (the text) and its compiled .mo (what
gettext reads; `python scripts/translations.py compile` writes it, and a test fails when
the two differ). English is the source text itself: no catalogue.

Which language, first match wins:
1. `use_language("zh")` in this process. The first code cell of every notebook of the
   series calls it with the notebook's own language, so a notebook speaks its language
   wherever it is opened: copied alone into another folder, run by JupyterLab, VS Code,
   nbval or nbclient (which tell the kernel nothing of its notebook). A test or a learner
   may call it too;
2. the notebook this kernel runs, when the kernel can find it (jupyter_server, so
   JupyterLab and Notebook, sets JPY_SESSION_NAME to its path; VS Code sets
   `__vsc_ipynb_file__`) and its metadata names a language (`"lesson_lib": {"language":
   "zh"}`, which every notebook of the series has): a cell run before the first one, after
   a restart, speaks it too;
3. the environment variable LESSON_LANG: `en`, or `zh` (zh-CN, zh_CN, zh-Hans also mean
   Chinese), what the CLI and a teacher's shell set; it decides wherever no notebook states
   a language (the terminal chat, scripts, a new notebook of the learner's own);
4. the notebook's folder: a kernel that starts in notebooks/zh/ (JupyterLab, nbval and
   Run All start it in the notebook's own folder) speaks Chinese, for a notebook there that
   states nothing;
5. English.

The API's own error texts stay verbatim in English in both languages, as the API sends
them; the Chinese explanation stands beside them (lesson_lib.notices).

Data speaks the learner's language too: a check's conversations (小明, 成都多云16°C) have
Chinese twins, picked with `by_language(en, zh)` or read from a `Twins` by name, so a Chinese
learner is judged on Chinese data by the same rules (tests/check_support.in_both_languages
holds every check to the same verdict and the same messages in both).
"""

from __future__ import annotations

import gettext
import json
import os
import sys
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
NOTEBOOK_KEY = "lesson_lib"  # a notebook's metadata: {"lesson_lib": {"language": "zh"}}
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
    if _chosen == "zh":
        _chinese_plots()
    return language()


def _chinese_plots() -> None:
    """Matplotlib draws Chinese from now on (lesson_lib.fonts): a Chinese notebook's own
    plots too, not only the library's."""
    from lesson_lib.fonts import ready  # noqa: PLC0415 (it imports matplotlib: only now)

    ready()


def language() -> str:
    """The language spoken now: "en" or "zh" (see the module's docstring)."""
    if _chosen is not None:
        return _chosen
    stated = notebook_language(kernel_notebook())
    if stated is not None:
        return stated
    wanted = os.environ.get(LANG_ENV, "").strip()
    if wanted:
        try:
            return normalise(wanted)
        except ValueError:
            return "en"  # a wrong setting is reported by the CLI, never a crash here
    return "zh" if Path.cwd().name == "zh" and Path.cwd().parent.name == "notebooks" else "en"


def kernel_notebook() -> str | None:
    """The path of the notebook this process is the kernel of, when the kernel can know it:
    VS Code's `__vsc_ipynb_file__`, or JPY_SESSION_NAME, which jupyter_server gives the
    kernels it starts (read only inside a kernel: a program a notebook starts inherits the
    variable, and speaks by LESSON_LANG as everywhere else). None under nbclient, a plain
    Python or a console."""
    if "ipykernel" not in sys.modules:
        return None
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    found = getattr(shell, "user_ns", {}).get("__vsc_ipynb_file__")
    return str(found) if found else (os.environ.get("JPY_SESSION_NAME") or None)


@cache
def notebook_language(path: str | None) -> str | None:
    """The language the notebook at `path` states in its metadata (`lesson_lib.language`),
    or None: no path, no such file, not a notebook, or a notebook that states none."""
    if not path or not path.endswith(".ipynb"):
        return None
    try:
        with open(path, encoding="utf-8") as file:
            stated = json.load(file).get("metadata", {}).get(NOTEBOOK_KEY, {}).get("language")
        return normalise(stated) if stated else None
    except (OSError, ValueError, AttributeError):
        return None


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
