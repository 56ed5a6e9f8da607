"""Every chart of the dashboard has a one-sentence "what am I looking at" caption (issue 13, classroom).

Charts reach a page only through :func:`ui.kit.charts.show`, which refuses a
caption that is not one sentence and draws it under the figure; this test
holds every page and ui module to that, so a new chart cannot arrive without one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from ui.kit.charts import PRESENTER_HEIGHT, enlarge, one_sentence
from ui.kit.figure_style import style

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]


def _plotly_chart_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "plotly_chart"]


def _show_calls_without_caption(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "show"
            and not any(k.arg == "about" for k in node.keywords)]


@pytest.mark.parametrize("path", DASHBOARD, ids=lambda p: str(p.relative_to(ROOT)))
def test_charts_go_through_show_with_a_caption(path):
    if path.name == "charts.py":
        return
    calls = _plotly_chart_calls(path)
    assert not calls, (f"{path.relative_to(ROOT)} calls st.plotly_chart on line(s) {calls}: draw it with "
                       "ui.kit.charts.show(fig, key=..., about='One sentence saying what the chart shows.')")
    assert not _show_calls_without_caption(path)


def test_a_caption_is_one_sentence():
    assert one_sentence("The paper's Fig. 2a recomputed, one line per k.") == \
        "The paper's Fig. 2a recomputed, one line per k."
    for bad in ("", "No full stop", "Two sentences. Here is the second.", "."):
        with pytest.raises(ValueError, match="one sentence"):
            one_sentence(bad)


def test_presenter_mode_enlarges_fonts_and_fits_the_chart_to_one_screen():
    fig = style(go.Figure([go.Scatter(x=[0, 1], y=[0, 1], name=f"line {i}") for i in range(4)]),
                title="A chart", x="x", y="y")
    fig.add_annotation(text="a note", x=0.5, y=0.5, font=dict(size=12))
    small_bottom = fig.layout.margin.b
    fig = enlarge(fig)
    # Every text sized explicitly: a size set only on the layout's font is replaced by the chart theme's.
    assert fig.layout.font.size >= 18 and fig.layout.legend.font.size >= 16
    assert fig.layout.xaxis.tickfont.size >= 16 and fig.layout.yaxis.title.font.size >= 18
    assert fig.layout.annotations[0].font.size >= 16
    # The whole chart, legend included, in the height a 1280x720 step leaves for it; larger legend rows.
    assert fig.layout.height == PRESENTER_HEIGHT and fig.layout.margin.b > small_bottom


def test_a_page_shows_the_caption_under_its_chart():
    at = AppTest.from_file(str(ROOT / "pages" / "3_Privacy_accountant.py"), default_timeout=90).run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1
    assert any(c.value.startswith("**What you see:** Privacy loss ε after each release") for c in at.caption)
