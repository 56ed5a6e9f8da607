"""Figures of the federated BO page (plain Plotly, no streamlit); the teaching view's are in ``teaching_figures``.

Every function takes arrays (or :class:`Line` objects) and returns a
``plotly.graph_objects.Figure``; the pages decide what to draw, tests can call
these directly.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.kit.figure_style import (
    REGION_COLORS,
    Line,
    assign_colors,
    line_style,
    note,
    rgba,
    style,
)


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
                                 line=line_style(line), marker=dict(color=line.color, size=8),
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
                                 name=line.label, line=line_style(line), marker=dict(color=line.color, size=8),
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
                                 name=line.label, line=line_style(line), marker=dict(size=4),
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
        fig.add_trace(go.Scatter(x=line.x, y=line.y, mode="lines+markers", name=line.label, line=line_style(line),
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

    ``weights`` (T, P, N) are the phi_n^(i) of each iteration, or already their (T, P) own shares
    (:func:`weight_shares`); ``assignment`` (N,).
    """
    share = np.asarray(weights, dtype=float) if np.ndim(weights) == 2 else own_weight_share(weights, assignment)
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


def weight_shares(result) -> tuple[np.ndarray, np.ndarray] | None:
    """(iterations (T,), share of each sub-region's weight given to its own explorers (T, P)), or None.

    Read from the rounds' compact weights: O(T P), never the (T, P, N) stack of :func:`weight_history`.
    """
    records = [r for r in result.records if r.weights is not None]
    if not records:
        return None
    shares = [r.weights.own_share() if hasattr(r.weights, "own_share") else
              own_weight_share(np.asarray(r.weights)[None], np.arange(r.weights.shape[1]) % r.weights.shape[0])[0]
              for r in records]
    return _iterations(records), np.stack(shares)


def agent_metric(result) -> tuple[np.ndarray, np.ndarray]:
    """(iterations (T + 1,), metric (N, T + 1) averaged over runs)."""
    return _iterations(result.records), np.stack([r.metric.mean(axis=0) for r in result.records], axis=1)
