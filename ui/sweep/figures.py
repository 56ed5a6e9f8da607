"""Figures of a parameter sweep: the privacy-utility frontier and a heatmap over two parameters.

Plain functions: a summary table in (``engine.sweep.summarise``), a Plotly
figure out. No streamlit here, so tests can call them directly.

Every text that comes from the table (setting labels, parameter names and
values, the metric's name: an uploaded file or a link decides them) enters a
figure through :func:`ui.kit.figure_style.chart_text`, escaped, since Plotly
renders HTML in chart text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from engine.sweep.analysis import grid, series
from ui.kit.figure_style import chart_text as esc
from ui.kit.tables import MISSING

ALGORITHM_SHORT = {"ts": "TS", "fts": "FTS", "fts-de": "FTS-DE", "dp-fts": "DP-FTS", "dp-fts-de": "DP-FTS-DE"}
SERIES_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
REFERENCE_COLOURS = ("#555555", "#e67e22", "#16a085", "#8e44ad", "#2c3e50")
FRONT_COLOUR = "#f1c40f"
TIE_COLOUR = "#9aa3ad"


def _fmt(value) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)


def _cells(points: pd.DataFrame) -> list[list[int]]:
    # Plain lists: Plotly would send a numpy array as a binary blob, not as per-point values.
    return [[int(c)] for c in points["cell"]]


def reference_label(row: pd.Series) -> str:
    """``TS``, ``FTS``, ``FTS-DE`` for the federated BO references, else the setting's own label."""
    algorithm = row.get("algorithm") if hasattr(row, "get") else None
    if isinstance(algorithm, str) and algorithm in ALGORITHM_SHORT and "algorithm=" in str(row.get("setting", "")):
        extra = [part for part in str(row["setting"]).split(", ") if not part.startswith("algorithm=")
                 and not part.startswith("fts_variant=")]
        return ALGORITHM_SHORT[algorithm] + (f" ({', '.join(extra)})" if extra else "")
    return str(row.get("setting", "reference"))


def metric_axis_title(metric_label: str, lower_is_better: bool) -> str:
    return f"{metric_label} ({'lower' if lower_is_better else 'higher'} is better)"


def privacy_axis_title(summary: pd.DataFrame) -> str:
    deltas = summary.loc[~summary["reference"], "privacy_delta"].dropna().unique() if len(summary) else []
    if len(deltas) == 1:
        return f"privacy loss ε (δ = {deltas[0]:.3g}; lower is more private)"
    return "privacy loss ε (lower is more private)"


def _hover(points: pd.DataFrame, metric_label: str) -> list[str]:
    texts = []
    for _, row in points.iterrows():
        text = (f"<b>{esc(row['setting'])}</b><br>{esc(metric_label)}: {row['utility']:.4g} ± {row['utility_se']:.2g}"
                f"<br>ε = {row['privacy_loss']:.3g}<br>{int(row['runs'])} runs")
        if row.get("failed", 0):
            text += f", {int(row['failed'])} failed"
        if row.get("pareto"):
            text += "<br><i>Pareto-optimal</i>"
        texts.append(text)
    return texts


def frontier_figure(summary: pd.DataFrame, varied: list[str], *, metric_label: str = "utility",
                    lower_is_better: bool = True, title: str | None = None,
                    tied: set[frozenset] | None = None) -> go.Figure:
    """Privacy loss (x) against utility (y): one point per setting with standard-error bars.

    Settings are joined into lines along the varied parameter (one line per
    series, see :func:`engine.sweep.analysis.series`); the Pareto-optimal
    settings are ringed and joined by a thick band; non-private references
    are horizontal lines with a band of one standard error. Neighbours on a
    line whose utilities differ by less than one standard error (``tied``:
    pairs of setting labels, from :func:`engine.sweep.analysis.pair_differences`)
    are joined by a thick grey segment: the runs cannot order them. Every point
    carries its ``cell`` index as ``customdata`` so a page can react to a click.
    """
    fig = go.Figure()
    if summary is None or not len(summary):
        fig.update_layout(title=title or "No results yet", template="plotly_white")
        return fig
    private = summary[~summary["reference"] & summary["utility"].notna()]
    front = private[private["pareto"]].sort_values("privacy_loss")
    if len(front):
        fig.add_trace(go.Scatter(
            x=front["privacy_loss"], y=front["utility"], mode="lines+markers", name="Pareto-optimal settings",
            line=dict(color=FRONT_COLOUR, width=10), opacity=0.55,
            marker=dict(size=22, color=FRONT_COLOUR, symbol="circle"),
            customdata=_cells(front), hovertext=_hover(front, metric_label),
            hoverinfo="text"))
    show_x_error = bool((private["privacy_loss_se"] > 0).any()) if len(private) else False
    lines = [(name, points[points["utility"].notna()]) for name, points in series(summary, varied)]
    for _, points in lines:       # under the points, so a click on a point never lands on a segment
        _tie_segments(fig, points, tied or set())
    for i, (name, points) in enumerate(lines):
        if not len(points):
            continue
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        along = name.split()[1] if name.startswith("vary ") else (varied[0] if varied else None)
        labels = [esc(f"{along}={_fmt(v)}") for v in points[along]] if along in points else \
            [esc(v) for v in points["setting"]]
        fig.add_trace(go.Scatter(
            x=points["privacy_loss"], y=points["utility"], mode="lines+markers+text", name=esc(name),
            line=dict(color=colour, width=1.5, dash="dot"),
            marker=dict(size=11, color=colour, line=dict(color="white", width=1)),
            error_y=dict(type="data", array=points["utility_se"], visible=True, color=colour, thickness=1.2),
            error_x=dict(type="data", array=points["privacy_loss_se"], visible=show_x_error, color=colour),
            text=labels, textposition="top center" if i % 2 == 0 else "bottom center",
            textfont=dict(size=11, color=colour),
            customdata=_cells(points), hovertext=_hover(points, metric_label),
            hoverinfo="text"))
    references = summary[summary["reference"] & summary["utility"].notna()]
    for j, (_, row) in enumerate(references.iterrows()):
        colour = REFERENCE_COLOURS[j % len(REFERENCE_COLOURS)]
        label = esc(reference_label(row))
        fig.add_hline(y=row["utility"], line=dict(color=colour, dash="dash", width=1.5))
        # Named in the right margin, clear of the points.
        fig.add_annotation(x=1.0, xref="paper", xanchor="left", y=row["utility"], yref="y", showarrow=False,
                           text=f"{label}<br>{row['utility']:.4g} ± {row['utility_se']:.1g}",
                           font=dict(color=colour, size=11), align="left", xshift=6)
        # An invisible trace so the legend names the reference too.
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"{label} (no DP)",
                                 line=dict(color=colour, dash="dash")))
    fig.update_layout(
        title=title, template="plotly_white", height=520, hovermode="closest", clickmode="event+select",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
        margin=dict(l=70, r=110 if len(references) else 30, t=90 if title else 60, b=60))
    fig.update_xaxes(title=privacy_axis_title(summary), rangemode="tozero", zeroline=False)
    fig.update_yaxes(title=esc(metric_axis_title(metric_label, lower_is_better)))
    return fig


def _tie_segments(fig: go.Figure, points: pd.DataFrame, tied: set[frozenset]) -> None:
    """Grey segments between neighbours of a line that are within one standard error of each other."""
    rows = list(points.itertuples(index=False))
    for a, b in zip(rows, rows[1:]):
        if frozenset((a.setting, b.setting)) not in tied:
            continue
        shown = any(trace.name == "within one standard error" for trace in fig.data)
        fig.add_trace(go.Scatter(
            x=[a.privacy_loss, b.privacy_loss], y=[a.utility, b.utility], mode="lines",
            line=dict(color=TIE_COLOUR, width=7), opacity=0.55, name="within one standard error",
            legendgroup="ties", showlegend=not shown, hoverinfo="skip"))


def heatmap_figure(summary: pd.DataFrame, x: str, y: str, *, metric_label: str = "utility",
                   lower_is_better: bool = True) -> go.Figure:
    """Mean utility over two varied parameters, each cell annotated with its privacy loss."""
    values = grid(summary, x, y, "utility")
    eps = grid(summary, x, y, "privacy_loss").reindex(index=values.index, columns=values.columns)
    xs = [esc(_fmt(v)) for v in values.columns]
    ys = [esc(_fmt(v)) for v in values.index]
    x_text, y_text, metric_text = esc(x), esc(y), esc(metric_label)
    text = [[("" if not np.isfinite(u) else f"{u:.3g}") + ("" if not np.isfinite(e) else f"<br>ε={e:.3g}")
             for u, e in zip(urow, erow)] for urow, erow in zip(values.to_numpy(float), eps.to_numpy(float))]
    fig = go.Figure(go.Heatmap(
        z=values.to_numpy(float), x=xs, y=ys, text=text, texttemplate="%{text}", textfont=dict(size=13),
        colorscale="Viridis", reversescale=lower_is_better, colorbar=dict(title=dict(text=metric_text, side="right")),
        hovertemplate=f"{x_text}=%{{x}}<br>{y_text}=%{{y}}<br>{metric_text}: %{{z:.4g}}<extra></extra>",
        xgap=2, ygap=2))
    fig.update_layout(template="plotly_white", height=420, margin=dict(l=70, r=30, t=40, b=60),
                      title=esc(f"{metric_axis_title(metric_label, lower_is_better)} over {x} and {y}"))
    fig.update_xaxes(title=x_text, type="category")
    fig.update_yaxes(title=y_text, type="category")
    return fig


def settings_table(summary: pd.DataFrame, varied: list[str], ties: dict[str, list[str]] | None = None
                   ) -> pd.DataFrame:
    """The summary as a readable table: setting, parameters, utility ± se, privacy loss, runs, front.

    ``ties`` (setting -> settings within one standard error, from
    :func:`engine.sweep.analysis.ties`) adds a column naming them.
    """
    if summary is None or not len(summary):
        return pd.DataFrame()
    out = pd.DataFrame({"setting": [reference_label(r) if r["reference"] else r["setting"]
                                    for _, r in summary.iterrows()]})
    for name in varied:
        if name in summary:
            # A reference (e.g. TS) does not use the swept parameters: a dash, not "None".
            out[name] = [MISSING if r["reference"] or pd.isna(r[name]) else _fmt(r[name])
                         for _, r in summary.iterrows()]
    out["utility"] = summary["utility"].to_numpy()
    out["± se"] = summary["utility_se"].to_numpy()
    out["privacy loss ε"] = summary["privacy_loss"].to_numpy()
    out["runs"] = summary["runs"].to_numpy()
    out["failed"] = summary["failed"].to_numpy()
    out["Pareto-optimal"] = summary["pareto"].to_numpy()
    out["reference"] = summary["reference"].to_numpy()
    if ties is not None:
        # Setting labels hold commas ("q=0.25, z=1"): separate them with semicolons.
        out["within 1 s.e. of"] = ["; ".join(ties.get(r["setting"], [])) or MISSING for _, r in summary.iterrows()]
    return out
