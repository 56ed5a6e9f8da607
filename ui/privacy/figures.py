"""Figures of the privacy accountant page (plain Plotly, no streamlit)."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go

from engine.privacy import ACCOUNTANT_LABELS
from ui.kit.figure_style import style

ACCOUNTANT_COLORS = {"ma": "#d62728", "rdp": "#1f77b4", "pld": "#2ca02c"}
ACCOUNTANT_DASH = {"ma": "solid", "rdp": "dash", "pld": "dot"}


def epsilon_vs_steps_figure(curves: Mapping[str, np.ndarray], *, delta: float, target: float | None = None,
                            marks: Mapping[str, float] | None = None) -> go.Figure:
    """epsilon after t = 1..T releases, one line per accountant.

    Parameters
    ----------
    curves
        accountant name (``ma``, ``rdp``, ``pld``) -> epsilon after each release.
    delta
        the delta the curves are computed for (shown in the title).
    target
        an optional target epsilon, drawn as a horizontal line.
    marks
        accountant -> epsilon at T, annotated at the end of each line.
    """
    fig = go.Figure()
    for name, curve in curves.items():
        curve = np.asarray(curve, dtype=float)
        steps = np.arange(1, curve.size + 1)
        fig.add_trace(go.Scatter(
            x=steps, y=curve, mode="lines", name=ACCOUNTANT_LABELS.get(name, name),
            line=dict(color=ACCOUNTANT_COLORS.get(name), dash=ACCOUNTANT_DASH.get(name, "solid"), width=2.5),
            hovertemplate="%{y:.3f}"))
        if marks and name in marks and curve.size:
            fig.add_trace(go.Scatter(x=[steps[-1]], y=[marks[name]], mode="markers+text",
                                     text=[f"{marks[name]:.2f}"], textposition="middle right",
                                     marker=dict(color=ACCOUNTANT_COLORS.get(name), size=8),
                                     showlegend=False, hoverinfo="skip"))
    if target is not None:
        fig.add_hline(y=target, line=dict(color="#555", dash="dashdot", width=1.5),
                      annotation_text=f"target ε = {target:g}", annotation_position="top left")
    style(fig, hovermode="x unified", title=f"Privacy loss ε against the number of releases T (δ = {delta:.3g})",
          x="releases T (server iterations)", y="ε")
    fig.update_yaxes(rangemode="tozero")
    return fig
