"""The common look of every chart: title, axes, a legend that never covers the axis, notes, and the palette.

Every figure module takes its colours from here (:data:`PALETTE` for lines in
order, :data:`BASELINE_COLOR` for the method every other must beat, the teaching
view's region and selection colours), and a series is a :class:`Line`.

No streamlit import: figure modules and tests use it without a browser.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

PALETTE = qualitative.Plotly + qualitative.D3
BASELINE_COLOR = "#7f7f7f"
REGION_COLORS = qualitative.Set2
SELECTED_COLOR = "#1f77b4"
UNSELECTED_COLOR = "#d0d4da"
CLIPPED_COLOR = "#d62728"

LEGEND_ROW_PX = 22


def chart_text(value) -> str:
    """Visitor text (a sweep setting, a column or value of an uploaded table) as a Plotly chart text.

    Plotly renders a subset of HTML in every text of a figure (titles, axis titles and ticks, legend names,
    point labels, hover text, annotations): ``<a href>``, ``<b>``, ``<br>``, ``<span style>``, ``<img>`` is
    dropped. '&', '<' and '>' are escaped as entities, which Plotly shows as the characters themselves, so
    the text shows exactly as written and the figure's own markup around it still works.
    """
    return html.escape(str(value), quote=False)


def rgba(color: str, alpha: float) -> str:
    """``#rrggbb`` or ``rgb(r, g, b)`` with an alpha channel."""
    if color.startswith("rgb"):
        r, g, b = (int(float(v)) for v in color[color.index("(") + 1:color.index(")")].split(",")[:3])
    else:
        color = color.lstrip("#")
        r, g, b = (int(color[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _legend_rows(fig: go.Figure) -> int:
    """Rows the horizontal legend may need; assumes two entries per row (the narrowest chart column)."""
    entries = sum(1 for trace in fig.data if trace.showlegend is not False and trace.name)
    return max(1, -(-entries // 2))


def style(fig: go.Figure, *, title: str, x: str, y: str, height: int = 360, legend: bool = True,
          hovermode: str = "closest") -> go.Figure:
    """Apply the common look. The legend sits at the bottom, below the x-axis title, and the figure
    grows by one row per two entries so a long legend never covers the axis."""
    rows = _legend_rows(fig) if legend else 0
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left"), height=height + LEGEND_ROW_PX * rows,
                      template="plotly_white", margin=dict(l=60, r=20, t=56, b=50 + LEGEND_ROW_PX * rows),
                      showlegend=legend, hovermode=hovermode,
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0))
    fig.update_xaxes(title_text=x)
    fig.update_yaxes(title_text=y)
    return fig


def note(fig: go.Figure, text: str) -> None:
    """A grey sentence in the middle of an empty chart (e.g. before the first run)."""
    fig.add_annotation(text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font=dict(size=14, color="#666"))


@dataclass
class Line:
    """One series of a chart: ``y`` against ``x``, optionally with a standard error ``err``.

    ``baseline`` draws it grey and dashed (TS, the method every other must beat).
    """

    label: str
    x: np.ndarray
    y: np.ndarray
    err: np.ndarray | None = None
    baseline: bool = False
    color: str | None = None


def assign_colors(lines: Sequence[Line]) -> list[Line]:
    """Give every non-baseline line a distinct palette colour (in order), baselines grey."""
    k = 0
    for line in lines:
        if line.color is None:
            if line.baseline:
                line.color = BASELINE_COLOR
            else:
                line.color = PALETTE[k % len(PALETTE)]
                k += 1
    return list(lines)


def line_style(line: Line) -> dict:
    return dict(color=line.color or BASELINE_COLOR, width=2.5 if not line.baseline else 2,
                dash="dash" if line.baseline else "solid")
