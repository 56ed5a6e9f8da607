"""Figures of a privacy audit (plain Plotly, no streamlit): an :class:`engine.audit.AuditResult` in, a figure out.

The attack's score in both worlds with the chosen threshold, the attack's ROC
curve beside the best curve the claimed epsilon allows, the lower bound against
the number of trials, and the claimed epsilon against the audited lower bound
(also the small figure the Federated BO and DP-HYPE pages show after a run).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from engine.audit import AuditResult, max_tpr
from ui.kit.figure_style import rgba, style

IN_COLOR = "#ff7f0e"          # the world with the canary (D)
OUT_COLOR = "#1f77b4"         # the world without it (D')
CLAIM_COLOR = "#7f7f7f"
CANARY_COLOR = "#9467bd"
CONSISTENT_COLOR = "#2ca02c"
VIOLATION_COLOR = "#d62728"
THRESHOLD_COLOR = "#222222"
ACCOUNTANT_NAMES = {"ma": "moments", "rdp": "RDP", "pld": "PLD"}
HISTOGRAM_BINS = 50
CURVE_POINTS = 200
SPARSE_COUNT = 10             # ROC points left of this many false positives rest on too few trials to read


def audit_color(result: AuditResult) -> str:
    """Green when the audit is consistent with the claim, red when it proves more."""
    return VIOLATION_COLOR if result.violation else CONSISTENT_COLOR


def scores_figure(result: AuditResult, *, log_y: bool = True, bins: int = HISTOGRAM_BINS) -> go.Figure:
    """Histograms of the attack's score with the canary in (D) and out (D'), and the threshold it tests.

    The bins (grid thresholds, :meth:`AuditResult.histogram`) cover the central 99.9 % of all scores and the
    threshold; the few scores beyond them are not drawn (piled into the end bins they would draw false spikes).
    """
    histogram = result.histogram(bins, pile=False)
    edges = np.asarray(histogram["edges"], dtype=float)
    fig = go.Figure()
    for counts, name, color in ((histogram["counts_out"], "canary out (D′)", OUT_COLOR),
                                (histogram["counts_in"], "canary in (D)", IN_COLOR)):
        # Outlined steps over a light fill: both worlds stay visible where they overlap.
        counts = np.asarray(counts, dtype=float)
        steps = np.append(counts, counts[-1])
        fig.add_trace(go.Scatter(x=edges, y=np.where(steps > 0, steps, np.nan) if log_y else steps, name=name,
                                 mode="lines", line=dict(color=color, width=2, shape="hv"), fill="tozeroy",
                                 fillcolor=rgba(color, 0.18), connectgaps=False,
                                 hovertemplate="score %{x:.3g}<br>%{y:,.0f} trials<extra>" + name + "</extra>"))
    fig.add_vrect(x0=result.threshold, x1=float(edges[-1]), fillcolor=rgba(VIOLATION_COLOR, 0.06), line_width=0,
                  layer="below")
    fig.add_vline(x=result.threshold, line=dict(color=THRESHOLD_COLOR, dash="dash", width=1.5))
    fig.add_annotation(x=result.threshold, y=1.0, yref="paper", xanchor="left", yanchor="top", showarrow=False,
                       text=f" threshold {result.threshold:.3g}:<br> right of it, guess “in”",
                       font=dict(size=12, color=THRESHOLD_COLOR), align="left")
    style(fig, title="The attack's score in both worlds", x=f"attack score ({result.statistic_used}, nats)",
          y="trials (log scale)" if log_y else "trials")
    if log_y:
        fig.update_yaxes(type="log", dtick=1)
    return fig


def trials_figure(result: AuditResult, *, height: int = 320) -> go.Figure:
    """The audited lower bound after each chunk of trials (log axis) beside the claim and the most provable."""
    trials = np.array([n for n, _ in result.curve], dtype=float)
    bounds = np.array([e for _, e in result.curve], dtype=float)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=trials, y=bounds, mode="lines+markers", name=f"audited ({result.confidence:.0%})",
                             line=dict(color=audit_color(result), width=2.5), marker=dict(size=6),
                             hovertemplate="%{x:,.0f} trials<br>lower bound %{y:.3g}<extra></extra>"))
    fig.add_hline(y=result.epsilon_claimed, line=dict(color=CLAIM_COLOR, dash="dash", width=2),
                  annotation_text=f"claimed ε {result.epsilon_claimed:.3g}", annotation_position="top left")
    if abs(result.epsilon_canary - result.epsilon_claimed) > 1e-3 * max(result.epsilon_claimed, 1e-12):
        fig.add_hline(y=result.epsilon_canary, line=dict(color=CANARY_COLOR, dash="dot", width=1.5),
                      annotation_text=f"most provable {result.epsilon_canary:.3g}",
                      annotation_position="bottom right")
    style(fig, title="The lower bound against the number of trials", x="trials (log scale)", y="ε",
          height=height, legend=False)
    fig.update_xaxes(type="log", exponentformat="power")
    fig.update_yaxes(rangemode="tozero")
    return fig


def _positive(*arrays: np.ndarray) -> np.ndarray:
    return np.all([np.asarray(a) > 0 for a in arrays], axis=0)


def roc_figure(result: AuditResult) -> go.Figure:
    """The attack's ROC (all trials, grid thresholds) on log axes beside the highest curve the claim allows."""
    fpr, tpr = np.asarray(result.roc_fpr, dtype=float), np.asarray(result.roc_tpr, dtype=float)
    keep = _positive(fpr, tpr)
    floor = 1.0 / max(result.evaluation_trials, 1)
    grid = np.logspace(np.log10(floor), 0.0, CURVE_POINTS)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=grid, y=grid, mode="lines", name="guessing (TPR = FPR)",
                             line=dict(color="#bbbbbb", dash="dot", width=1.5), hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=grid, y=max_tpr(result.epsilon_claimed, result.delta, grid), mode="lines",
                             name=f"best any attack may do if ε = {result.epsilon_claimed:.3g} holds",
                             line=dict(color=CLAIM_COLOR, dash="dash", width=2.5),
                             hovertemplate="FPR %{x:.2e}<br>TPR at most %{y:.3g}<extra>claim</extra>"))
    fig.add_trace(go.Scatter(x=fpr[keep], y=tpr[keep], mode="lines", name="the attack (all trials)",
                             line=dict(color=audit_color(result), width=2.5),
                             hovertemplate="FPR %{x:.2e}<br>TPR %{y:.3g}<extra>attack</extra>"))
    if result.fpr > 0 and result.tpr > 0:
        fig.add_trace(go.Scatter(
            x=[result.fpr], y=[result.tpr], mode="markers", name="strongest threshold (95 % interval)",
            marker=dict(color=THRESHOLD_COLOR, size=9, symbol="diamond"),
            error_x=dict(type="data", symmetric=False, array=[max(result.fpr_upper - result.fpr, 0.0)],
                         arrayminus=[0.0], color=THRESHOLD_COLOR),
            error_y=dict(type="data", symmetric=False, array=[0.0],
                         arrayminus=[max(result.tpr - result.tpr_lower, 0.0)], color=THRESHOLD_COLOR),
            hovertemplate=(f"FPR {result.fpr:.2e} (at most {result.fpr_upper:.2e})<br>TPR {result.tpr:.3g} "
                           f"(at least {result.tpr_lower:.3g})<extra>threshold</extra>")))
    sparse = SPARSE_COUNT / max(result.evaluation_trials, 1)
    # Shapes and annotations on log axes take log10 positions.
    fig.add_vrect(x0=np.log10(floor) - 0.1, x1=np.log10(sparse), fillcolor="rgba(0,0,0,0.07)", line_width=0,
                  layer="below")
    fig.add_annotation(x=np.log10(sparse), y=1.0, yref="paper", xanchor="right", yanchor="top", showarrow=False,
                       text=f"< {SPARSE_COUNT} false<br>positives: noisy ", font=dict(size=11, color="#777"),
                       align="right")
    style(fig, title="ROC of the attack against the claim's limit", x="false-positive rate (log scale)",
          y="true-positive rate (log scale)")
    fig.update_xaxes(type="log", range=[np.log10(floor) - 0.1, 0.02], exponentformat="power")
    low = np.log10(max(min(float(tpr[keep].min()) if keep.any() else floor, floor), 1e-12))
    fig.update_yaxes(type="log", range=[low - 0.1, 0.02], exponentformat="power")
    return fig


def epsilon_figure(result: AuditResult, *, title: str | None = None, height: int = 300) -> go.Figure:
    """Claimed epsilon, the most this game can prove (when less), and the audited lower bound with its interval.

    The audited bar ends at the one-sided lower confidence bound; its whisker
    reaches the point estimate of the same trials.
    """
    accountant = ACCOUNTANT_NAMES.get(result.accountant, result.accountant)
    rows = [("claimed ε", result.epsilon_claimed, CLAIM_COLOR, f"claimed by the {accountant} accountant")]
    if abs(result.epsilon_canary - result.epsilon_claimed) > 1e-3 * max(result.epsilon_claimed, 1e-12):
        rows.append(("most provable", result.epsilon_canary, CANARY_COLOR,
                     "the most this game can prove: the same accountant for the canary's actual shift"))
    rows.append((f"audited ({result.confidence:.0%})", result.epsilon_lower, audit_color(result),
                 f"lower bound proved with {result.confidence:.0%} confidence from {result.trials:,} trials"))
    fig = go.Figure()
    for name, value, color, hover in reversed(rows):
        audited = name.startswith("audited")
        whisker = max(result.epsilon_point - result.epsilon_lower, 0.0) if audited else 0.0
        # The value sits in the axis label, where neither the whisker nor the claim's line can cover it.
        fig.add_trace(go.Bar(
            y=[f"{name}<br><b>{value:.3g}</b>"], x=[value], orientation="h", marker_color=color, showlegend=False,
            error_x=dict(type="data", symmetric=False, array=[whisker], arrayminus=[0.0], color="#444",
                         thickness=1.5, width=6, visible=audited),
            hovertemplate=(f"{value:.4g}: {hover}"
                           + (f"<br>point estimate {result.epsilon_point:.4g}" if audited else "")
                           + "<extra></extra>")))
    fig.add_vline(x=result.epsilon_claimed, line=dict(color=CLAIM_COLOR, dash="dash", width=1.5))
    top = max(result.epsilon_claimed, result.epsilon_canary, result.epsilon_lower, result.epsilon_point)
    style(fig, title=title or f"Claimed ε against what the attack proves (δ = {result.delta:.3g})", x="ε",
          y="", height=height, legend=False)
    fig.update_xaxes(range=[0, 1.12 * top if top > 0 else 1], rangemode="tozero")
    fig.update_yaxes(automargin=True)
    fig.update_layout(bargap=0.35)
    return fig


# ---------------------------------------------------------------- the one-run audit


def canary_scores_figure(result) -> go.Figure:
    """The canaries' scores (the statistic whose guesses prove the bound), those that were in against those out,
    with the score above which the auditor guessed "in" and below which "out"."""
    histogram = result.histogram()
    edges = np.asarray(histogram["edges"], dtype=float)
    fig = go.Figure()
    for counts, name, color in ((histogram["counts_out"], "canaries out", OUT_COLOR),
                                (histogram["counts_in"], "canaries in", IN_COLOR)):
        steps = np.append(np.asarray(counts, dtype=float), counts[-1])
        fig.add_trace(go.Scatter(x=edges, y=steps, name=name, mode="lines", fill="tozeroy",
                                 line=dict(color=color, width=2, shape="hv"), fillcolor=rgba(color, 0.18),
                                 hovertemplate="score %{x:.3g}<br>%{y:,.0f} canaries<extra>" + name + "</extra>"))
    best = result.bound.best
    if best is not None:
        order = np.sort(np.asarray(result.scores[best.statistic], dtype=float))[::-1]
        if best.k_in:
            fig.add_vline(x=float(order[best.k_in - 1]), line=dict(color=THRESHOLD_COLOR, dash="dash", width=1.5),
                          annotation_text=f" top {best.k_in}: “in”", annotation_position="top right")
        if best.k_out:
            fig.add_vline(x=float(order[len(order) - best.k_out]),
                          line=dict(color=THRESHOLD_COLOR, dash="dot", width=1.5),
                          annotation_text=f"bottom {best.k_out}: “out” ", annotation_position="top left")
    style(fig, title=f"The canaries' scores ({histogram['statistic']})", x="score", y="canaries")
    return fig


def canaries_figure(result, *, height: int = 320) -> go.Figure:
    """The one-run lower bound on the first 100, 300, 1000, ... canaries, beside the claim."""
    sizes = [n for n, _ in result.bound.nested]
    bounds = [e for _, e in result.bound.nested]
    color = VIOLATION_COLOR if result.violation else CONSISTENT_COLOR
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=sizes, y=bounds, mode="lines+markers", name="one-run lower bound",
                             line=dict(color=color, width=2.5), marker=dict(size=7),
                             hovertemplate="%{x:,} canaries<br>lower bound %{y:.3g}<extra></extra>"))
    fig.add_hline(y=result.epsilon_claimed, line=dict(color=CLAIM_COLOR, dash="dash", width=2),
                  annotation_text=f"claimed ε {result.epsilon_claimed:.3g}", annotation_position="top left")
    style(fig, title="The one-run bound against the number of canaries", x="canaries (log scale)", y="ε",
          height=height, legend=False)
    fig.update_xaxes(type="log")
    fig.update_yaxes(rangemode="tozero")
    return fig
