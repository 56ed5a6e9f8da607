"""Figures of the teaching view: one DP-FTS-DE server round, step by step (plain Plotly, no streamlit)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.kit.figure_style import (
    BASELINE_COLOR,
    CLIPPED_COLOR,
    PALETTE,
    REGION_COLORS,
    SELECTED_COLOR,
    UNSELECTED_COLOR,
    rgba,
    style,
)

def norms_figure(norms: np.ndarray, *, threshold: float, assignment: np.ndarray | None = None,
                 selected: np.ndarray | None = None, clipped_norms: np.ndarray | None = None,
                 title: str = "") -> go.Figure:
    """Bar per agent of the L2 norm of the vector it sent.

    Without ``selected`` bars are coloured by sub-region; with it, selected
    agents are blue and the others grey; with ``clipped_norms`` the selected
    agents' norms after clipping are drawn over a red outline of the original.
    """
    norms = np.asarray(norms, dtype=float)
    agents = np.arange(norms.size)
    fig = go.Figure()
    if selected is None:
        regions = np.zeros(norms.size, dtype=int) if assignment is None else np.asarray(assignment)
        for i in np.unique(regions):
            mask = regions == i
            fig.add_trace(go.Bar(x=agents[mask], y=norms[mask], name=f"explores sub-region {i + 1}",
                                 marker_color=REGION_COLORS[i % len(REGION_COLORS)],
                                 hovertemplate="agent %{x}: ‖ω‖ = %{y:.2f}<extra></extra>"))
    else:
        selected = np.asarray(selected, dtype=bool)
        if clipped_norms is not None:
            fig.add_trace(go.Bar(x=agents[selected], y=norms[selected], name="before clipping",
                                 marker=dict(color="rgba(0,0,0,0)", line=dict(color=CLIPPED_COLOR, width=1.5)),
                                 hovertemplate="agent %{x}: ‖ω‖ = %{y:.2f} before<extra></extra>"))
            fig.add_trace(go.Bar(x=agents[selected], y=np.asarray(clipped_norms)[selected], name="after clipping",
                                 marker_color=SELECTED_COLOR,
                                 hovertemplate="agent %{x}: ‖ω̂‖ = %{y:.2f} after<extra></extra>"))
            fig.update_layout(barmode="overlay")
        else:
            fig.add_trace(go.Bar(x=agents[selected], y=norms[selected], name="picked", marker_color=SELECTED_COLOR,
                                 hovertemplate="agent %{x}: ‖ω‖ = %{y:.2f}<extra></extra>"))
        fig.add_trace(go.Bar(x=agents[~selected], y=norms[~selected], name="not picked",
                             marker_color=UNSELECTED_COLOR,
                             hovertemplate="agent %{x}: not picked<extra></extra>"))
    fig.add_hline(y=threshold, line=dict(color=CLIPPED_COLOR, dash="dash", width=1.5),
                  annotation_text=f"clipping bound S/√P = {threshold:.2f}", annotation_position="top right",
                  annotation_bgcolor="rgba(255,255,255,0.85)")
    style(fig, hovermode="x unified",
          title=title or "Length of each agent's vector ω<sub>n</sub>", x="agent n", y="L2 norm ‖ω<sub>n</sub>‖",
          height=360)
    fig.update_layout(hovermode="closest", bargap=0.15)
    top = max(float(norms.max(initial=0.0)), threshold)
    fig.update_yaxes(range=[0, 1.15 * top])
    return fig


def weights_bar_figure(weights: np.ndarray, selected: np.ndarray, q: float) -> go.Figure:
    """phi_n^(i) / q of each selected agent for each sub-region: how much its vector counts."""
    weights = np.asarray(weights, dtype=float)
    selected = np.asarray(selected, dtype=bool)
    agents = np.arange(weights.shape[1])[selected]
    fig = go.Figure()
    for i in range(weights.shape[0]):
        fig.add_trace(go.Bar(x=agents, y=weights[i, selected] / q, name=f"sub-region {i + 1}",
                             marker_color=REGION_COLORS[i % len(REGION_COLORS)],
                             hovertemplate=f"sub-region {i + 1}, agent %{{x}}: φ/q = %{{y:.4f}}<extra></extra>"))
    style(fig, hovermode="x unified",
          title="Weight φ<sub>n</sub><sup>(i)</sup>/q of each picked agent in each sub-region's sum",
          x="selected agent n", y="φ / q", height=340)
    fig.update_layout(barmode="group", hovermode="closest")
    fig.update_xaxes(type="category")
    return fig


def signal_noise_figure(signal: np.ndarray, noise: np.ndarray, *, show_noise: bool = True) -> go.Figure:
    """Coordinates of each sub-region's averaged vector, without and with the noise."""
    signal = np.asarray(signal, dtype=float)
    noise = np.asarray(noise, dtype=float)
    coords = np.arange(1, signal.shape[1] + 1)
    fig = go.Figure()
    for i in range(signal.shape[0]):
        color = REGION_COLORS[i % len(REGION_COLORS)]
        fig.add_trace(go.Scatter(x=coords, y=signal[i], mode="lines+markers",
                                 name=f"ω<sup>({i + 1})</sup> weighted sum", line=dict(color=color, width=2.5),
                                 marker=dict(size=5)))
        if show_noise:
            fig.add_trace(go.Scatter(x=coords, y=signal[i] + noise[i], mode="markers",
                                     name=f"ω<sup>({i + 1})</sup> + noise",
                                     marker=dict(color=color, symbol="x", size=7, opacity=0.8)))
    style(fig, hovermode="x unified",
          title="Each sub-region's vector ω<sup>(i)</sup>, coordinate by coordinate"
          + (" (×: after noise)" if show_noise else ""),
          x="random feature m", y="value", height=360)
    fig.update_layout(hovermode="closest")
    return fig


def functions_figure(x: np.ndarray, clean: np.ndarray, noisy: np.ndarray | None, bounds: Sequence[tuple[float, float]],
                     *, truth: np.ndarray | None = None) -> go.Figure:
    """The broadcast vectors turned back into functions phi(x)^T omega^(i) over a 1-D domain.

    ``clean`` / ``noisy`` are (P, C): the function of each sub-region's vector
    without / with noise; ``bounds`` the (low, high) of each sub-region, where
    an agent uses that sub-region's function. The star marks the maximiser of
    the piecewise function phi(x)^T omega^(i[x]) (paper Algorithm 2, line 8),
    the query of an agent that follows the broadcast. ``truth`` (C,)
    optionally draws the mean objective on a second axis.
    """
    x = np.asarray(x, dtype=float)
    fig = go.Figure()
    piecewise = np.full(x.shape, np.nan)
    for i, (lo, hi) in enumerate(bounds):
        color = REGION_COLORS[i % len(REGION_COLORS)]
        fig.add_vrect(x0=lo, x1=hi, fillcolor=rgba(color, 0.12), line_width=0, layer="below")
        inside = (x >= lo) & ((x < hi) if i < len(bounds) - 1 else (x <= hi))
        fig.add_trace(go.Scatter(x=x, y=clean[i], mode="lines", name=f"ω<sup>({i + 1})</sup> without noise",
                                 line=dict(color=color, width=1.5, dash="dot"), opacity=0.8))
        if noisy is not None:
            piecewise[inside] = noisy[i][inside]
            fig.add_trace(go.Scatter(x=x, y=np.where(inside, noisy[i], np.nan), mode="lines",
                                     name=f"ω<sup>({i + 1})</sup> as broadcast, used in sub-region {i + 1}",
                                     line=dict(color=color, width=3.5)))
    if noisy is not None and np.isfinite(piecewise).any():
        best = int(np.nanargmax(piecewise))
        fig.add_trace(go.Scatter(x=[x[best]], y=[piecewise[best]], mode="markers", name="next query (argmax)",
                                 marker=dict(symbol="star", size=16, color="gold", line=dict(color="black", width=1)),
                                 hovertemplate="next query of an agent that follows the broadcast: x = %{x:.3f}"
                                               "<extra></extra>"))
    style(fig, hovermode="x unified",
          title="What the agents receive: f̃(x) = φ(x)<sup>T</sup> ω<sup>(i[x])</sup> over the domain",
          x="x", y="f̃(x)", height=440)
    if truth is not None:
        fig.add_trace(go.Scatter(x=x, y=truth, mode="lines", name="objective, mean over agents (right axis)",
                                 line=dict(color="black", width=1), yaxis="y2", opacity=0.7))
        # Round, evenly spaced ticks of its own (not synchronised with the left axis's grid).
        fig.update_layout(yaxis2=dict(overlaying="y", side="right", title="objective", showgrid=False,
                                      tickmode="auto", nticks=6, tickformat=".1f", zeroline=False))
    return fig


def noise_schedule_figure(iterations: np.ndarray, dp_fts_de: np.ndarray, dp_fts: float, *, P: int,
                          current: int | None = None) -> go.Figure:
    """The server's noise std per coordinate over the iterations: DP-FTS-DE's against DP-FTS's (flat).

    ``current`` marks the round the teaching view opens.
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=iterations, y=dp_fts_de, mode="lines+markers", name=f"DP-FTS-DE (P = {P})",
                             line=dict(color=PALETTE[0], width=2.5), marker=dict(size=5),
                             hovertemplate="t = %{x}: %{y:.3f}<extra>DP-FTS-DE</extra>"))
    fig.add_trace(go.Scatter(x=iterations, y=np.full(len(iterations), dp_fts), mode="lines", name="DP-FTS (P = 1)",
                             line=dict(color=BASELINE_COLOR, width=2, dash="dash"),
                             hovertemplate="%{y:.3f}<extra>DP-FTS</extra>"))
    if current is not None and 1 <= current <= len(iterations):
        fig.add_trace(go.Scatter(x=[current], y=[dp_fts_de[current - 1]], mode="markers",
                                 name=f"this round (t = {current})", hoverinfo="skip",
                                 marker=dict(color=CLIPPED_COLOR, size=12, symbol="circle-open", line=dict(width=3))))
    style(fig, title="Noise std z·φ_max·S/q per coordinate, round by round", x="iteration t",
          y="noise std per coordinate")
    fig.update_yaxes(rangemode="tozero")
    return fig


# ---------------------------------------------------------------- from engine results to lines
