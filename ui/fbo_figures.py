"""Figures of the federated BO page and the teaching view (plain Plotly, no streamlit).

Every function takes arrays (or :class:`Line` objects) and returns a
``plotly.graph_objects.Figure``; the pages decide what to draw, tests can call
these directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from ui.figure_style import note, rgba, style

PALETTE = qualitative.Plotly + qualitative.D3
BASELINE_COLOR = "#7f7f7f"
REGION_COLORS = qualitative.Set2
SELECTED_COLOR = "#1f77b4"
UNSELECTED_COLOR = "#d0d4da"
CLIPPED_COLOR = "#d62728"


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


def _line_style(line: Line) -> dict:
    return dict(color=line.color or BASELINE_COLOR, width=2.5 if not line.baseline else 2,
                dash="dash" if line.baseline else "solid")


# ---------------------------------------------------------------- the run


def _empty_note(fig: go.Figure, text: str) -> None:
    note(fig, text)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)


def convergence_figure(lines: Sequence[Line], *, metric_label: str = "simple regret", log_y: bool = False,
                       band: bool = True, total_iterations: int | None = None,
                       empty_text: str = "No iterations yet.", title: str | None = None) -> go.Figure:
    """Mean metric per iteration with a band of one standard error over runs, one line per algorithm.

    ``total_iterations`` fixes the x range so a live chart does not rescale as it grows.
    ``empty_text`` is shown when there is no line yet. A line without a finite
    standard error (one run: nothing to estimate it from) gets no band.
    """
    fig = go.Figure()
    for line in assign_colors(lines):
        x, y = np.asarray(line.x), np.asarray(line.y, dtype=float)
        err = None if line.err is None else np.asarray(line.err, dtype=float)
        if band and err is not None and x.size > 1 and np.isfinite(err).all():
            low = np.maximum(y - err, 1e-12) if log_y else y - err
            fig.add_trace(go.Scatter(
                x=np.concatenate([x, x[::-1]]), y=np.concatenate([y + err, low[::-1]]), fill="toself",
                fillcolor=rgba(line.color, 0.15), line=dict(width=0), hoverinfo="skip", showlegend=False,
                legendgroup=line.label))
        # A single point (the first live update) has no line to draw, so show it as a marker.
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines" if x.size > 1 else "markers", name=line.label,
                                 line=_line_style(line), marker=dict(color=line.color, size=8),
                                 legendgroup=line.label, hovertemplate="%{y:.4f}"))
    style(fig, hovermode="x unified",
          title=title or f"Convergence: mean {metric_label} over agents and runs (± s.e. over runs)",
          x="iteration t", y=f"{metric_label} (lower is better)")
    if not lines:
        _empty_note(fig, empty_text)
    if log_y:
        fig.update_yaxes(type="log")
    if total_iterations is not None:
        fig.update_xaxes(range=[0, total_iterations])
    return fig


def privacy_figure(lines: Sequence[Line], *, budget: float | None = None, accountant_label: str = "",
                   stops: Sequence[tuple[str, int]] = (), total_iterations: int | None = None,
                   empty_text: str = "No private algorithm in this run:<br>TS, FTS and FTS-DE spend no privacy budget."
                   ) -> go.Figure:
    """Privacy loss epsilon after each iteration, one line per private algorithm.

    ``stops`` lists (label, iteration) where the budget ran out and the server
    stopped releasing (marked with an x).
    """
    fig = go.Figure()
    lines = assign_colors(lines)
    for line in lines:
        fig.add_trace(go.Scatter(x=line.x, y=line.y, mode="lines" if len(line.x) > 1 else "markers",
                                 name=line.label, line=_line_style(line), marker=dict(color=line.color, size=8),
                                 hovertemplate="ε = %{y:.3f}"))
    colors = {line.label: line.color for line in lines}
    for label, iteration in stops:
        match = next((line for line in lines if line.label == label), None)
        if match is None:
            continue
        idx = np.searchsorted(np.asarray(match.x), iteration)
        if idx < len(match.y):
            fig.add_trace(go.Scatter(x=[iteration], y=[match.y[idx]], mode="markers", showlegend=False,
                                     marker=dict(symbol="x", size=11, color=colors.get(label)),
                                     hovertemplate=f"{label}: budget reached, last release at t = {iteration}"
                                                   "<extra></extra>"))
    if budget is not None:
        fig.add_hline(y=budget, line=dict(color="#555", dash="dashdot", width=1.5),
                      annotation_text=f"budget ε* = {budget:g}", annotation_position="top left")
    title = "Privacy loss ε so far" + (f" · {accountant_label}" if accountant_label else "")
    style(fig, hovermode="x unified",
          title=title, x="iteration t", y="ε")
    fig.update_yaxes(rangemode="tozero")
    if not lines:
        _empty_note(fig, empty_text)
    if total_iterations is not None:
        fig.update_xaxes(range=[0, total_iterations])
    return fig


def clipped_figure(lines: Sequence[Line], *, S: float | None = None) -> go.Figure:
    """Share (%) of the selected vectors that were clipped, per iteration."""
    fig = go.Figure()
    for line in assign_colors(lines):
        fig.add_trace(go.Scatter(x=line.x, y=100 * np.asarray(line.y, dtype=float), mode="lines+markers",
                                 name=line.label, line=_line_style(line), marker=dict(size=4),
                                 hovertemplate="%{y:.1f}%"))
    style(fig, hovermode="x unified",
          title="Clipped vectors" + (f" (S = {S:g})" if S is not None else ""),
          x="iteration t", y="% of selected vectors clipped", height=320)
    fig.update_yaxes(rangemode="tozero")
    return fig


def selected_figure(lines: Sequence[Line], *, expected: Sequence[tuple[str, float]] = ()) -> go.Figure:
    """Mean number of agents the server selected per iteration; ``expected`` adds N q reference lines."""
    fig = go.Figure()
    lines = assign_colors(lines)
    for line in lines:
        fig.add_trace(go.Scatter(x=line.x, y=line.y, mode="lines+markers", name=line.label, line=_line_style(line),
                                 marker=dict(size=4), hovertemplate="%{y:.1f} agents"))
    for label, value in expected:
        color = next((line.color for line in lines if line.label == label), "#555")
        fig.add_hline(y=value, line=dict(color=color, dash="dot", width=1),
                      annotation_text=f"N q = {value:g}", annotation_position="bottom right")
    style(fig, hovermode="x unified",
          title="Agents selected by the server (mean over runs)", x="iteration t", y="agents", height=320)
    fig.update_yaxes(rangemode="tozero")
    return fig


def own_weight_share(weights: np.ndarray, assignment: np.ndarray) -> np.ndarray:
    """Share of each sub-region's weight that goes to the agents exploring it.

    ``weights`` (T, P, N), ``assignment`` (N,) sub-region per agent; returns (T, P).
    """
    weights = np.asarray(weights, dtype=float)
    P = weights.shape[1]
    own = np.asarray(assignment)[None, :] == np.arange(P)[:, None]  # (P, N)
    return (weights * own[None]).sum(axis=2)


def weights_figure(iterations: np.ndarray, weights: np.ndarray, assignment: np.ndarray) -> go.Figure:
    """How the sub-region weights move from the sub-region's own explorers to uniform.

    ``weights`` (T, P, N) are the phi_n^(i) of each iteration, ``assignment`` (N,).
    """
    share = own_weight_share(weights, assignment)
    P = share.shape[1]
    counts = np.bincount(np.asarray(assignment), minlength=P)
    fig = go.Figure()
    for i in range(P):
        color = REGION_COLORS[i % len(REGION_COLORS)]
        fig.add_trace(go.Scatter(x=iterations, y=100 * share[:, i], mode="lines+markers", name=f"sub-region {i + 1}",
                                 line=dict(color=color, width=2.5, dash=("solid", "dash", "dot", "dashdot")[i % 4]),
                                 marker=dict(size=4),
                                 hovertemplate="%{y:.1f}%"))
    uniform = 100 * counts.mean() / counts.sum()
    fig.add_hline(y=uniform, line=dict(color="#555", dash="dot", width=1),
                  annotation_text=f"uniform weights ({uniform:.0f}%)", annotation_position="bottom right")
    style(fig, hovermode="x unified",
          title="Sub-region weights: share given to the sub-region's own explorers",
          x="iteration t", y="% of the sub-region's weight", height=320)
    fig.update_yaxes(range=[0, 105])
    return fig


def agent_heatmap(metric: np.ndarray, iterations: np.ndarray, *, metric_label: str = "simple regret",
                  title: str = "", assignment: np.ndarray | None = None, log_color: bool = False) -> go.Figure:
    """Metric of every agent (rows) at every iteration (columns), mean over runs.

    ``metric`` is (N, T + 1). With ``assignment`` agents are grouped by the
    sub-region they explored first.
    """
    metric = np.asarray(metric, dtype=float)
    agents = np.arange(metric.shape[0])
    if assignment is not None:
        order = np.lexsort((agents, np.asarray(assignment)))
        metric, agents = metric[order], agents[order]
    z = np.log10(np.maximum(metric, 1e-6)) if log_color else metric
    fig = go.Figure(go.Heatmap(
        z=z, x=iterations, y=[f"agent {a}" for a in agents], colorscale="Viridis", reversescale=True,
        colorbar=dict(title=f"log10 {metric_label}" if log_color else metric_label, thickness=14),
        customdata=metric, hovertemplate="%{y}, t = %{x}: %{customdata:.4f}<extra></extra>"))
    style(fig, hovermode="x unified",
          title=title or f"{metric_label.capitalize()} by agent and iteration (mean over runs)",
          x="iteration t", y="agent", height=max(320, min(720, 12 * metric.shape[0] + 120)), legend=False)
    # Every agent labelled up to 30 rows, then every k-th (in the rows' grouped order), so a row can be named.
    labels = [f"agent {a}" for a in agents]
    step = max(1, -(-len(labels) // 30))
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=labels[::step], ticktext=labels[::step],
                     tickfont=dict(size=10))
    fig.update_layout(hovermode="closest")
    return fig


# ---------------------------------------------------------------- teaching view: one server round


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


def _iterations(records) -> np.ndarray:
    return np.array([r.iteration for r in records], dtype=int)


def convergence_lines(runs: Sequence[tuple[str, object]]) -> list[Line]:
    """(label, FboResult) pairs -> mean metric lines with standard errors; TS is the baseline."""
    lines = []
    for label, result in runs:
        records = result.records
        if not records:
            continue
        lines.append(Line(label, _iterations(records), np.array([r.mean for r in records]),
                          np.array([r.stderr for r in records]), baseline=result.config.algorithm == "ts"))
    return lines


def epsilon_lines(runs: Sequence[tuple[str, object]]) -> list[Line]:
    """Privacy loss after each iteration, for the private runs only."""
    lines = []
    for label, result in runs:
        if not result.config.is_private or not result.records:
            continue
        eps = np.array([np.nan if r.epsilon is None else r.epsilon for r in result.records], dtype=float)
        lines.append(Line(label, _iterations(result.records), eps))
    return lines


def clipped_lines(runs: Sequence[tuple[str, object]]) -> list[Line]:
    """Share of selected vectors clipped, per iteration with a release (private runs)."""
    lines = []
    for label, result in runs:
        records = [r for r in result.records if r.clipped_fraction is not None]
        if result.config.is_private and records:
            lines.append(Line(label, _iterations(records), np.array([r.clipped_fraction for r in records])))
    return lines


def selected_lines(runs: Sequence[tuple[str, object]]) -> list[Line]:
    """Mean number of selected agents per server round (algorithms with a server)."""
    lines = []
    for label, result in runs:
        records = [r for r in result.records if r.n_selected is not None]
        if result.config.uses_server and records:
            lines.append(Line(label, _iterations(records), np.array([float(np.mean(r.n_selected)) for r in records])))
    return lines


def weight_history(result) -> tuple[np.ndarray, np.ndarray] | None:
    """(iterations (T,), weights (T, P, N)) of the rounds that used sub-region weights, or None."""
    records = [r for r in result.records if r.weights is not None]
    if not records:
        return None
    return _iterations(records), np.stack([r.weights for r in records])


def agent_metric(result) -> tuple[np.ndarray, np.ndarray]:
    """(iterations (T + 1,), metric (N, T + 1) averaged over runs)."""
    return _iterations(result.records), np.stack([r.metric.mean(axis=0) for r in result.records], axis=1)
