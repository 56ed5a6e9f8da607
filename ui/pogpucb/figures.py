"""Figures of the PO-GP-UCB page (plain Plotly, no streamlit).

Data in, ``plotly.graph_objects.Figure`` out: the page decides what to draw,
tests call these directly.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.kit.figure_style import BASELINE_COLOR, PALETTE, Line, assign_colors, note, rgba, style

PRESERVE_COLOR = "#2ca02c"
LIFT_COLOR = "#d62728"
SIGMA_COLOR = "#1f1f1f"


def regret_figure(lines: Sequence[Line], *, total_iterations: int | None = None, log_y: bool = False,
                  empty_text: str = "Press Run: the simple-regret curves appear here.") -> go.Figure:
    """Mean simple regret per iteration (± one standard error), one line per setting.

    Lines with ``baseline=True`` (non-private GP-UCB) are drawn grey and dashed.
    ``total_iterations`` fixes the x range so live curves do not rescale.
    """
    fig = go.Figure()
    for line in assign_colors(list(lines)):
        x, y = np.asarray(line.x), np.asarray(line.y, dtype=float)
        color = line.color if line.color.startswith("#") else BASELINE_COLOR
        if line.err is not None and x.size > 1:
            err = np.asarray(line.err, dtype=float)
            low = np.maximum(y - err, 1e-6) if log_y else y - err
            fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([y + err, low[::-1]]),
                                     fill="toself", fillcolor=rgba(color, 0.14), line=dict(width=0),
                                     hoverinfo="skip", showlegend=False, legendgroup=line.label))
        fig.add_trace(go.Scatter(x=x, y=np.maximum(y, 1e-6) if log_y else y, mode="lines", name=line.label,
                                 legendgroup=line.label, hovertemplate="t = %{x}: %{y:.4f}<extra>%{fullData.name}"
                                                                       "</extra>",
                                 line=dict(color=color, width=2 if line.baseline else 2.5,
                                           dash="dash" if line.baseline else "solid")))
    style(fig, title="Simple regret S_t: mean ± standard error over runs", x="iteration t",
            y="simple regret (lower is better)", height=420)
    if log_y:
        fig.update_yaxes(type="log")
    else:
        fig.update_yaxes(rangemode="tozero")
    if total_iterations is not None:
        fig.update_xaxes(range=[1, total_iterations])
    if not lines:
        note(fig, empty_text)
    return fig


def omega_figure(r_grid: np.ndarray, omegas: Sequence[tuple[str, np.ndarray]], sigma_min: float, *,
                 selected: Sequence[tuple[str, int, float]] = ()) -> go.Figure:
    """omega(r) of Algorithm 1 (one curve per epsilon) against sigma_min of the centred inputs.

    Where a curve lies below the sigma_min line the release preserves
    distances (line 7); above it the singular values are lifted (line 9).
    ``selected`` marks (label, r, omega) points, e.g. the r values to run.
    """
    fig = go.Figure()
    r_grid = np.asarray(r_grid)
    for k, (label, values) in enumerate(omegas):
        fig.add_trace(go.Scatter(x=r_grid, y=values, mode="lines", name=label,
                                 line=dict(color=PALETTE[k % len(PALETTE)], width=2.5),
                                 hovertemplate="r = %{x}: ω = %{y:.0f}<extra>%{fullData.name}</extra>"))
    fig.add_trace(go.Scatter(x=[r_grid.min(), r_grid.max()], y=[sigma_min, sigma_min], mode="lines",
                             name=f"σ_min(X) = {sigma_min:.4g}", line=dict(color=SIGMA_COLOR, width=2, dash="dash"),
                             hovertemplate="σ_min = %{y:.4g}<extra></extra>"))
    if selected:
        labels, rs, ws = zip(*selected)
        colors = [PRESERVE_COLOR if w <= sigma_min else LIFT_COLOR for w in ws]
        fig.add_trace(go.Scatter(x=rs, y=ws, mode="markers", name="chosen r (green: σ_min ≥ ω)",
                                 marker=dict(size=11, color=colors, line=dict(color="white", width=1.5)),
                                 text=labels, hovertemplate="%{text}: ω = %{y:.0f}<extra></extra>"))
    style(fig, title="Threshold ω against r (Algorithm 1, line 5)", x="projection dimension r", y="ω",
            height=380)
    fig.update_yaxes(rangemode="tozero")
    return fig


def distortion_figure(samples: Sequence[tuple[str, np.ndarray]], *, bounds: Sequence[tuple[str, float]] = (),
                      bins: int = 60) -> go.Figure:
    """Histogram of ``|z - z'|^2 / |x - x'|^2`` over sampled pairs, one per setting.

    A value of 1 is a perfectly preserved distance; ``bounds`` adds vertical
    lines (e.g. Theorem 2's C').
    """
    fig = go.Figure()
    finite = [np.asarray(v, float) for _, v in samples if np.size(v)]
    if finite:
        hi = float(np.quantile(np.concatenate(finite), 0.995))
        edges = dict(start=0.0, end=max(hi, 1.5), size=max(hi, 1.5) / bins)
    else:
        edges = None
    for k, (label, values) in enumerate(samples):
        fig.add_trace(go.Histogram(x=np.asarray(values, float), name=label, xbins=edges,
                                   histnorm="probability density",
                                   opacity=0.55, marker_color=PALETTE[k % len(PALETTE)],
                                   hovertemplate="%{x}: %{y:.3f}<extra>%{fullData.name}</extra>"))
    fig.add_vline(x=1.0, line=dict(color=SIGMA_COLOR, width=1.5, dash="dash"), annotation_text="preserved",
                  annotation_position="top")
    for label, value in bounds:
        if np.isfinite(value) and value > 1:
            fig.add_vline(x=value, line=dict(color=LIFT_COLOR, width=1.2, dash="dot"), annotation_text=label,
                          annotation_position="top right")
    fig.update_layout(barmode="overlay")
    pairs = max((np.size(v) for _, v in samples), default=0)
    style(fig, title=f"Distance distortion over {pairs:,} random pairs",
            x="|z − z'|² / |x − x'|²  (1 = distance preserved)", y="density", height=380)
    if not samples:
        note(fig, "Run to see the distortion.")
    return fig


def release_figure(x: np.ndarray, z: np.ndarray, f: np.ndarray, *, input_names: Sequence[str] = ("x1", "x2"),
                   released_label: str = "") -> go.Figure:
    """Original inputs (first two coordinates) beside the released ones, coloured by f.

    This is all the modeler gets: the right panel, with no access to the left.
    """
    x, z = np.atleast_2d(x), np.atleast_2d(z)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("X: the curator's inputs, centred (never released)",
                                        "Z = r^-½ X M: the release"
                                        + (f" ({released_label})" if released_label else "")))
    marker = dict(size=4, color=f, colorscale="Viridis", showscale=True,
                  colorbar=dict(title=dict(text="f"), len=0.9, x=1.02))
    xs = x[:, 1] if x.shape[1] > 1 else np.zeros(len(x))
    zs = z[:, 1] if z.shape[1] > 1 else np.zeros(len(z))
    fig.add_trace(go.Scattergl(x=x[:, 0], y=xs, mode="markers", marker=marker, showlegend=False,
                               hovertemplate="(%{x:.2f}, %{y:.2f})<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scattergl(x=z[:, 0], y=zs, mode="markers", marker=dict(marker, showscale=False),
                               showlegend=False, hovertemplate="(%{x:.2f}, %{y:.2f})<extra></extra>"), row=1, col=2)
    names = list(input_names) + ["", ""]
    fig.update_xaxes(title_text=names[0] or "coordinate 1", row=1, col=1)
    fig.update_yaxes(title_text=names[1] or "coordinate 2", row=1, col=1)
    fig.update_xaxes(title_text="z1", row=1, col=2)
    fig.update_yaxes(title_text="z2", row=1, col=2)
    fig.update_layout(height=420, template="plotly_white", margin=dict(l=60, r=40, t=60, b=50),
                      title=dict(text="What the modeler sees: first two coordinates", x=0.0, xanchor="left"))
    return fig
