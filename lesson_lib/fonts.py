"""Chinese in plots: a CJK font that installs with the project, registered with matplotlib.

The font is Noto Sans SC (Simplified Chinese, SIL Open Font License 1.1), shipped inside the
`pylopdf-fonts-zh-cn` package from PyPI (a dependency in pyproject.toml): nothing is
downloaded, and no font of the system is needed. `register()` adds it to matplotlib's font
manager and puts it after the default family in `font.family`: matplotlib (3.6 and later)
draws each glyph from the first family that has it, so Latin text keeps its usual font
(DejaVu Sans), pixel for pixel, and Chinese characters come from Noto Sans SC instead of
empty boxes and a "Glyph … missing from font" warning.

lesson_lib registers it before it draws a plot (lesson_lib.costs, longterm_eval, membench),
and `use_language("zh")`, which the first cell of every Chinese notebook calls, registers it
for the notebook's own matplotlib code too.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

FAMILY = "Noto Sans SC"


def font_file() -> Path:
    """The Noto Sans SC file the pylopdf-fonts-zh-cn package installs."""
    from pylopdf_fonts_zh_cn import sans_path  # noqa: PLC0415

    return Path(sans_path())


@cache
def register() -> str:
    """Make matplotlib draw Chinese with Noto Sans SC, after the default family for the
    glyphs it lacks; returns the family's name. Once per process (matplotlib's rcParams
    are the process's); `use()` puts the family back in font.family if it was reset.
    Matplotlib's first import in a new home builds a font cache and, if that takes over
    five seconds (a busy machine, a class of learners starting at once), says so on stderr:
    a notice a learner cannot act on, silenced here, before the import."""
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    from matplotlib import font_manager  # noqa: PLC0415 (matplotlib is slow to import)

    path = font_file()
    if not any(Path(f.fname) == path for f in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(path))
    name = font_manager.FontProperties(fname=str(path)).get_name()
    use(name)
    return name


def use(name: str = FAMILY) -> None:
    """`name` as the fallback family of matplotlib's text: after the default ones."""
    from matplotlib import rcParams  # noqa: PLC0415

    families = list(rcParams["font.family"])
    if name not in families:
        rcParams["font.family"] = [*families, name]


def ready() -> str:
    """Registered, and in font.family now (a learner's `plt.rcdefaults()` takes it out)."""
    name = register()
    use(name)
    return name
