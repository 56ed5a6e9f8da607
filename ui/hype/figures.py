"""Figures of the DP-HYPE page (plain Plotly, no streamlit).

Data in, ``plotly.graph_objects.Figure`` out: vote histograms (clean votes,
noisy summed votes with the winner, winners over repetitions), the success
probability against epsilon or k beside Theorem V.1's bound, accuracy of
DP-HYPE against OPT and RANDGUESS (paper Fig. 5/6), and the paper's Fig. 2a.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots
from ui.kit.figure_style import note, style

GOOD_COLOR = "#2ca02c"
BAD_COLOR = "#9aa3ad"
WINNER_COLOR = "#d62728"
EMPIRICAL_COLOR = "#1f77b4"
BOUND_COLOR = "#ff7f0e"
OPT_COLOR = "#2ca02c"
RANDGUESS_COLOR = "#7f7f7f"
K_PALETTE = qualitative.Plotly


def _hover_names(p: int, labels: Sequence[str] | None) -> list[str]:
    return [f"#{j}" + (f": {labels[j]}" if labels is not None else "") for j in range(p)]


def _split_bars(fig: go.Figure, values: np.ndarray, good: np.ndarray, labels, unit: str, *,
                row=None, col=None) -> None:
    """Two bar traces over the candidate axis: good candidates green, bad ones grey."""
    values = np.asarray(values, dtype=float)
    good = np.asarray(good, dtype=bool)
    names = np.array(_hover_names(values.size, labels))
    index = np.arange(values.size)
    for mask, name, color in ((good, "good candidates", GOOD_COLOR), (~good, "bad candidates", BAD_COLOR)):
        kwargs = dict(row=row, col=col) if row is not None else {}
        fig.add_trace(go.Bar(x=index[mask], y=values[mask], name=name, marker_color=color,
                             customdata=names[mask], hovertemplate=f"%{{customdata}}<br>%{{y:.4g}} {unit}"
                                                                   "<extra></extra>"), **kwargs)


def clean_votes_figure(clean_votes: np.ndarray | None, good: np.ndarray | None, *, labels=None,
                       title: str = "Clean votes per candidate (before noise)") -> go.Figure:
    """How many clients put each candidate in their top k; good and bad candidates coloured apart."""
    fig = go.Figure()
    if clean_votes is None:
        note(fig, "Press Run: each client's top-k votes<br>are counted here.")
        return style(fig, title=title, x="candidate", y="votes", legend=False)
    _split_bars(fig, clean_votes, good, labels, "votes")
    return style(fig, title=title, x="candidate", y="votes")


def noisy_votes_figure(noisy_votes: np.ndarray | None, good: np.ndarray | None, winner: int | None, *,
                       labels=None, noise_std: float | None = None,
                       title: str = "Noisy summed votes (the server's view)") -> go.Figure:
    """The secure sum of the noisy vote vectors, the argmax marked as the winner."""
    fig = go.Figure()
    if noisy_votes is None:
        note(fig, "The noisy sum the server receives<br>and its argmax appear here.")
        return style(fig, title=title, x="candidate", y="noisy votes", legend=False)
    noisy = np.asarray(noisy_votes, dtype=float)
    _split_bars(fig, noisy, good, labels, "noisy votes")
    if winner is not None and 0 <= winner < noisy.size:
        fig.add_trace(go.Scatter(x=[winner], y=[noisy[winner]], mode="markers+text", name="winner (argmax)",
                                 marker=dict(symbol="star", size=16, color=WINNER_COLOR,
                                             line=dict(color="white", width=1)),
                                 text=[f" winner #{winner}"], textposition="middle right",
                                 textfont=dict(color=WINNER_COLOR), hoverinfo="skip"))
        low, high = min(0.0, float(noisy.min())), max(1.0, float(noisy.max()))
        fig.update_yaxes(range=[low - 0.05 * (high - low), high + 0.12 * (high - low)])
    if noise_std is not None:
        title += f", σ = {noise_std:.3g}"
    return style(fig, title=title, x="candidate", y="noisy votes")


def winners_figure(winner_counts: np.ndarray | None, good: np.ndarray | None, repetitions: int = 0, *,
                   labels=None, total: int | None = None) -> go.Figure:
    """Which candidate won, counted over the repetitions so far."""
    fig = go.Figure()
    title = "Winners over repeated votes"
    if winner_counts is None or repetitions == 0:
        note(fig, "Over repeated noisy votes, the winners<br>are counted here.")
        return style(fig, title=title, x="candidate", y="times chosen", legend=False)
    _split_bars(fig, winner_counts, good, labels, "wins")
    done = f"{repetitions:,}" + (f" of {total:,}" if total is not None and total != repetitions else "")
    return style(fig, title=f"{title} ({done} repetitions)", x="candidate", y="times chosen")


def success_curve_figure(x: Sequence[float], success: Sequence[float], ci: np.ndarray | None,
                         bound: Sequence[float], *, x_label: str, log_x: bool = False, mark: float | None = None,
                         title: str = "Probability of returning a good candidate") -> go.Figure:
    """Empirical success rate (95 % interval) with Theorem V.1's lower bound beside it.

    ``ci`` is (len(x), 2) or None; ``mark`` draws a vertical line at the page's current setting.
    """
    x = np.asarray(x, dtype=float)
    success = np.asarray(success, dtype=float)
    fig = go.Figure()
    error = None
    if ci is not None:
        ci = np.asarray(ci, dtype=float)
        error = dict(type="data", symmetric=False, array=np.clip(ci[:, 1] - success, 0, None),
                     arrayminus=np.clip(success - ci[:, 0], 0, None), color=EMPIRICAL_COLOR, thickness=1.2)
    fig.add_trace(go.Scatter(x=x, y=success, mode="lines+markers", name="empirical success rate",
                             line=dict(color=EMPIRICAL_COLOR, width=2.5), error_y=error,
                             hovertemplate="%{y:.3f}<extra>empirical</extra>"))
    fig.add_trace(go.Scatter(x=x, y=np.asarray(bound, dtype=float), mode="lines+markers",
                             name="Theorem V.1 lower bound", line=dict(color=BOUND_COLOR, width=2, dash="dash"),
                             marker=dict(symbol="diamond"), hovertemplate="%{y:.3f}<extra>bound</extra>"))
    if mark is not None:
        fig.add_vline(x=mark, line=dict(color="#555", dash="dot", width=1))
    fig = style(fig, title=title, x=x_label, y="P[good candidate]")
    fig.update_yaxes(range=[-0.03, 1.03])
    if log_x:
        fig.update_xaxes(type="log", tickvals=x, ticktext=[f"{v:g}" for v in x])
    return fig


def accuracy_figure(epsilons: Sequence[float], hype: np.ndarray, opt: float, randguess: float, *,
                    opt_ci: Sequence[float] | None = None, randguess_ci: Sequence[float] | None = None,
                    title: str = "Test accuracy of the chosen candidate (paper Fig. 5/6)") -> go.Figure:
    """DP-HYPE's accuracy against epsilon with OPT and RANDGUESS as reference lines.

    ``hype`` is (len(epsilons), 3): mean, low, high (95 % interval).
    """
    eps = np.asarray(epsilons, dtype=float)
    hype = np.asarray(hype, dtype=float)
    labels = [f"{e:g}" for e in eps]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=labels, y=hype[:, 0], mode="lines+markers", name="DP-HYPE",
                             line=dict(color=EMPIRICAL_COLOR, width=2.5),
                             error_y=dict(type="data", symmetric=False, array=hype[:, 2] - hype[:, 0],
                                          arrayminus=hype[:, 0] - hype[:, 1], color=EMPIRICAL_COLOR),
                             hovertemplate="%{y:.3f}<extra>DP-HYPE</extra>"))
    for value, band, name, color in ((opt, opt_ci, "OPT (best candidate, FedAvg)", OPT_COLOR),
                                     (randguess, randguess_ci, "RANDGUESS (mean over candidates)",
                                      RANDGUESS_COLOR)):
        fig.add_trace(go.Scatter(x=labels, y=[value] * len(labels), mode="lines", name=name,
                                 line=dict(color=color, width=2, dash="dash"),
                                 hovertemplate="%{y:.3f}<extra>" + name.split(" ")[0] + "</extra>"))
        if band is not None and band[1] > band[0]:
            fig.add_trace(go.Scatter(x=labels + labels[::-1], y=[band[1]] * len(labels) + [band[0]] * len(labels),
                                     fill="toself", fillcolor=color, opacity=0.12, line=dict(width=0),
                                     hoverinfo="skip", showlegend=False))
    fig = style(fig, title=title, x="privacy budget ε", y="test accuracy")
    fig.update_yaxes(range=[0, 1.02])
    return fig


def fig2a_figure(sigma_losses: Sequence[float], ks: Sequence[int], epsilons: Sequence[float],
                 success: np.ndarray, bound: np.ndarray | None = None) -> go.Figure:
    """The paper's Fig. 2a: success rate against sigma_loss, one line per k, one panel per epsilon.

    ``success`` (and ``bound``, drawn dotted) have shape (len(sigma_losses), len(ks), len(epsilons)).
    """
    success = np.asarray(success, dtype=float)
    fig = make_subplots(rows=1, cols=len(epsilons), shared_yaxes=True,
                        subplot_titles=[f"ε = {e:g}" for e in epsilons], horizontal_spacing=0.06)
    for ei in range(len(epsilons)):
        for ki, k in enumerate(ks):
            color = K_PALETTE[ki % len(K_PALETTE)]
            fig.add_trace(go.Scatter(x=list(sigma_losses), y=success[:, ki, ei], mode="lines+markers",
                                     name=f"k = {k}", legendgroup=f"k{k}", showlegend=ei == 0,
                                     line=dict(color=color, width=2.2),
                                     hovertemplate=f"k = {k}: %{{y:.3f}}<extra></extra>"), row=1, col=ei + 1)
            if bound is not None:
                fig.add_trace(go.Scatter(x=list(sigma_losses), y=np.asarray(bound)[:, ki, ei], mode="lines",
                                         name=f"bound, k = {k}", legendgroup=f"k{k}", showlegend=False,
                                         line=dict(color=color, width=1.2, dash="dot"),
                                         hovertemplate=f"bound k = {k}: %{{y:.3f}}<extra></extra>"),
                              row=1, col=ei + 1)
        fig.update_xaxes(title_text="σ_loss (spread of local losses)", row=1, col=ei + 1)
    fig.update_yaxes(title_text="P[good candidate]", range=[-0.03, 1.03], row=1, col=1)
    fig.update_layout(title=dict(text="Success against σ_loss, one line per k (dotted: Theorem V.1 bound)",
                                 x=0.0, xanchor="left"), height=380, template="plotly_white",
                      margin=dict(l=60, r=20, t=70, b=50),
                      legend=dict(orientation="h", yanchor="top", y=-0.2, x=0.0))
    return fig


def label_distribution_figure(cells: Sequence[dict], title: str) -> go.Figure:
    """The paper's Figs. 7-8: the label mix and size of the first clients' local data sets, one panel per
    Dirichlet alpha (increasing left to right). ``cells`` are the stored ``labels`` part's cells of one data set
    (each ``{"alpha", "counts": (clients, classes)}``); the iid split is left out, as in the paper."""
    cells = sorted((c for c in cells if c["alpha"] is not None), key=lambda c: c["alpha"])
    fig = make_subplots(rows=1, cols=len(cells), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[f"α = {c['alpha']:g}" for c in cells])
    classes = len(cells[0]["counts"][0]) if cells else 0
    for col, cell in enumerate(cells, start=1):
        counts = np.asarray(cell["counts"], dtype=float)
        clients = [f"{i + 1}" for i in range(counts.shape[0])]
        for label in range(classes):
            fig.add_trace(go.Bar(x=clients, y=counts[:, label], name=f"label {label}", legendgroup=f"l{label}",
                                 showlegend=col == 1, marker_color=K_PALETTE[label % len(K_PALETTE)],
                                 hovertemplate=f"client %{{x}}, label {label}: %{{y:.0f}} examples<extra></extra>"),
                          row=1, col=col)
        fig.update_xaxes(title_text="client", row=1, col=col)
    fig.update_yaxes(title_text="local examples", row=1, col=1)
    fig.update_layout(barmode="stack", title=dict(text=title, x=0.0, xanchor="left"), height=360,
                      template="plotly_white", margin=dict(l=60, r=20, t=70, b=50),
                      legend=dict(orientation="h", yanchor="top", y=-0.22, x=0.0))
    return fig


def candidate_histogram_figure(histograms: Sequence[dict], title: str) -> go.Figure:
    """The paper's Figs. 4 and 9: how many candidates reach each test accuracy, one panel per shown cell
    (``{"name", "edges", "counts"}``, mean counts over runs; engine.reproduce.dp_hype_figures)."""
    fig = make_subplots(rows=1, cols=max(1, len(histograms)), shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=[hist["name"] for hist in histograms])
    for col, hist in enumerate(histograms, start=1):
        edges = np.asarray(hist["edges"], dtype=float)
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=hist["counts"], width=(edges[1] - edges[0]) * 0.9,
                             name=hist["name"], showlegend=False, marker_color=K_PALETTE[(col - 1) % len(K_PALETTE)],
                             hovertemplate=f"{hist['name']}: %{{y:.1f}} candidates near accuracy %{{x:.2f}}"
                                           "<extra></extra>"), row=1, col=col)
        fig.update_xaxes(range=[0, 1], tickvals=[0, 0.5, 1], title_text="test accuracy", row=1, col=col)
    fig.update_yaxes(title_text="candidates (mean over runs)", row=1, col=1)
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left"), height=340, template="plotly_white",
                      margin=dict(l=60, r=20, t=80, b=50))
    return fig
