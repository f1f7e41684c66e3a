"""Plots draw Chinese with the font that installs with the project (lesson_lib.fonts): no
empty boxes, no "Glyph … missing" warning, and Latin text exactly as before."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib import metadata

from lesson_lib import fonts


def run(code: str) -> subprocess.CompletedProcess:
    """`code` in a fresh Python (matplotlib's settings are the process's), warnings as errors."""
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)


def test_the_font_comes_from_a_package_under_the_open_font_license():
    path = fonts.font_file()
    assert path.is_file() and path.suffix == ".otf" and path.stat().st_size > 1_000_000
    dist = metadata.distribution("pylopdf-fonts-zh-cn")
    assert any("OFL" in c for c in dist.metadata.get_all("Classifier")), dist.metadata["License"]
    assert str(path).startswith(str(dist.locate_file(""))), "the font is inside the package"


def test_registering_puts_the_chinese_font_after_the_default_family():
    from matplotlib import rcParams

    assert fonts.register() == fonts.FAMILY == "Noto Sans SC"
    families = list(rcParams["font.family"])
    assert families[-1] == "Noto Sans SC" and len(families) >= 2
    fonts.ready()
    assert list(rcParams["font.family"]) == families, "registering twice adds nothing"


PIXELS = """
    import io, warnings
    from matplotlib.figure import Figure

    def pixels(text):
        figure = Figure(figsize=(2, 1), dpi=50)
        figure.text(0.1, 0.3, text, fontsize=20)
        out = io.BytesIO()
        figure.savefig(out, format="rgba", dpi=50)
        return out.getvalue()
"""


def test_chinese_glyphs_are_drawn_and_latin_text_is_unchanged():
    done = run(PIXELS + """
    latin = pixels("Tokens sent so far (turn 25)")
    from lesson_lib import fonts
    fonts.register()
    assert pixels("Tokens sent so far (turn 25)") == latin, "Latin text must look the same"
    han, zi, blank = pixels("汉"), pixels("字"), pixels("")
    assert han != zi and han != blank and zi != blank, "two characters drawn alike: boxes"
    print("ok")
    """)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_without_the_font_matplotlib_draws_boxes_and_warns():
    """The check above can fail: unregistered, a Chinese character is a missing glyph."""
    done = run(PIXELS + """
    pixels("汉")
    """)
    assert done.returncode != 0 and "missing from font" in done.stderr, done.stderr


def test_use_language_zh_registers_it_for_a_notebooks_own_pyplot_code():
    done = run("""
    import io
    import matplotlib
    matplotlib.use("agg")
    from lesson_lib.i18n import use_language
    use_language("zh")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots()
    axes.plot([1, 2], [3, 4], label="完整历史")
    axes.set_title("每一轮最大那个请求的 token 数")
    axes.legend()
    figure.savefig(io.BytesIO(), format="png")
    print(matplotlib.rcParams["font.family"])
    """)
    assert done.returncode == 0 and "Noto Sans SC" in done.stdout, done.stderr


def test_the_librarys_plots_are_labelled_in_the_language_spoken(speak):
    from lesson_lib.costs import ConversationRun, plot_costs

    speak("zh")
    plot = plot_costs([ConversationRun(name="完整历史", memory=None)], window=2048, budget=1800,
                      marks={25: "旅行指南"})
    per_turn, total = plot.figure.axes
    assert per_turn.get_title() == "每一轮最大那个请求的 token 数"
    assert total.get_xlabel() == "轮次"
    assert [t.get_text() for t in per_turn.get_legend().get_texts()] == [
        "上下文窗口 2,048", "token 预算 1,800"]
    assert plot.png().startswith(b"\x89PNG")
    speak("en")
    english = plot_costs([ConversationRun(name="full history", memory=None)], window=2048)
    assert english.figure.axes[0].get_title() == "Tokens in each turn's largest request"


SLOW_FONT_CACHE = """
import threading
class AtOnce(threading.Timer):  # the font cache as if it took over five seconds to build
    def __init__(self, interval, function, *args, **kwargs):
        super().__init__(0, function, *args, **kwargs)
threading.Timer = AtOnce
"""


def font_cache_first_built(tmp_path, code: str) -> subprocess.CompletedProcess:
    """`code` in a fresh Python whose matplotlib has no font cache yet (a learner's new home
    on a class's hub) and is slow to build it."""
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl"), "MPLBACKEND": "agg"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(SLOW_FONT_CACHE + code)],
                          capture_output=True, text=True, timeout=180, env=env)


def test_a_slow_first_font_cache_is_not_announced_on_a_learners_stderr(tmp_path):
    """A class's eight learners starting at once each build matplotlib's font cache in their
    own home; past five seconds matplotlib says so on stderr, which a learner cannot act on.
    `use_language("zh")` and the library's plots keep it quiet."""
    for n, code in enumerate(["from lesson_lib.i18n import use_language\nuse_language('zh')\n",
                              "from lesson_lib.costs import _figure\n_figure()\n"]):
        done = font_cache_first_built(tmp_path / str(n), code)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    # and the check can fail: matplotlib's own import, unsilenced, announces it
    done = font_cache_first_built(tmp_path / "plain", "import matplotlib.font_manager\n")
    assert "building the font cache" in done.stderr, done.stderr
