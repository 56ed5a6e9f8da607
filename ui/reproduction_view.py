"""How the dashboard shows a reproduction of the DP-FTS-DE paper: curves, checkpoints, verdicts, and preset notes.

Everything here draws data the engine produced (:mod:`engine.reproduce`): the
stored 100-run reproduction (:mod:`engine.reproduce.stored`) or a small run
made on the Paper reproduction page, both in the command line's JSON shape
(``PartResult.to_json()``). A paper preset on another page calls
:func:`preset_note` to say, next to its chart, what the stored runs make of
the paper's claims about its figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from engine.reproduce.report import deciding_comparison
from engine.reproduce.investigations import investigation
from engine.reproduce.stored import figure_name, figure_verdicts
from ui.charts import show
from ui.fbo_figures import Line, convergence_figure
from ui.routes import REPRODUCTION, page_link
from ui.tables import MISSING

# Verdict cells are coloured (not marked with emoji: a browser without an emoji font draws boxes).
VERDICT_COLOURS = {"holds": "#d8f0dc", "not significant": "#eeeeee", "reversed": "#f8d7d5", "differs": "#f8e7c8"}
# Below this many runs a standard error rests on too few numbers for the 2-standard-error rule to be read as a
# test (with 2 runs it is one number's spread): the page says so above the verdicts.
FEW_RUNS = 20


def setting_lines(payload: dict, keys) -> list[Line]:
    """The mean curve of each setting in ``keys`` with its standard error over runs (TS as the baseline)."""
    lines = []
    for setting in payload["settings"]:
        if setting["key"] not in keys:
            continue
        err = np.array([np.nan if v is None else v for v in setting["curve_stderr"]], dtype=float)
        y = np.asarray(setting["curve"], dtype=float)
        lines.append(Line(setting["label"], np.arange(y.size), y, err, baseline=setting["key"] == "ts"))
    return lines


def curves_figure(payload: dict, keys, *, figure: str | None = None) -> go.Figure:
    what = f"{figure_name(figure)}'s lines" if figure else "every setting"
    return convergence_figure(setting_lines(payload, keys), metric_label=payload["metric"],
                              total_iterations=len(payload["settings"][0]["curve"]) - 1,
                              title=f"{what}: mean {payload['metric']} over agents and {payload['runs']} runs "
                                    "(± one s.e. over runs)")


def checkpoint_table(payload: dict) -> pd.DataFrame:
    """One row per setting: ε after T, and the mean (s.e. over runs) at each checkpoint."""
    rows = []
    for setting in payload["settings"]:
        clipped = setting.get("clipped_percent")
        row = {"setting": setting["label"],
               "ε after T": f"{setting['epsilon']:.2f}" if setting["epsilon"] is not None else MISSING,
               "clipped %": f"{clipped:.2f}" if clipped is not None else MISSING}
        for t in payload["checkpoints"]:
            point = setting["checkpoints"].get(str(t))
            row[f"t = {t}"] = (f"{point['mean']:.4f} ({point['stderr']:.4f})"
                               if point is not None and np.isfinite(point["stderr"] or np.nan) else MISSING)
        rows.append(row)
    return pd.DataFrame(rows)


def verdict_table(payload: dict) -> pd.DataFrame:
    """One row per claim: our verdict, the claim and where the paper makes it, and the paired numbers."""
    labels = {s["key"]: s["label"] for s in payload["settings"]}
    rows = []
    for claim in payload["claims"]:
        n = deciding_comparison(claim["numbers"])
        best = f" (best: {labels.get(n['better'], n['better'])})" if "comparisons" in claim["numbers"] else ""
        compared = ("mean over t = 1..T" if n["at"] == "curve" else f"at t = {n['at']}"
                    if isinstance(n["at"], int) else f"{n['at']}: ours {n['better_mean']:.2f}, against "
                    f"{n['worse_mean']:.2f}")
        rows.append({"verdict": claim["verdict"], "the paper claims": claim["claim"], "where": claim["source"],
                     "compared": compared, "difference ± s.e.": f"{n['difference']:+.4f} ± {n['stderr']:.4f}{best}",
                     "z": f"{n['z']:+.1f}" if n["z"] is not None else MISSING,
                     "investigation": investigation(claim["claim"], claim["verdict"])})
    return pd.DataFrame(rows)


def _coloured(table: pd.DataFrame):
    return table.style.map(lambda v: f"background-color: {VERDICT_COLOURS.get(v, 'white')}", subset=["verdict"])


def show_part(payload: dict, part, *, key: str, source: str) -> None:
    """A part's curves (chosen by the paper's figure), its checkpoint table and its verdicts."""
    figures = list(part.figures)
    labels = {f: f"{figure_name(f)}'s lines" for f in figures} | {"all": "every setting"}
    choice = st.segmented_control("lines to draw", figures + ["all"], default=figures[-1], format_func=labels.get,
                                  key=f"{key}_lines", help="The settings the paper's claims about each figure "
                                                           "compare.") or figures[-1]
    keys = part.settings_of(choice) if choice != "all" else [s.key for s in part.settings]
    show(curves_figure(payload, keys, figure=None if choice == "all" else choice), key=f"{key}_curves",
         about=f"{source}: each line is one setting's mean {payload['metric']} after every iteration (lower is "
               "better), averaged over agents and runs, with a band of one standard error over runs (TS dashed).")
    st.markdown(f"**What the paper claims, and what {payload['runs']} paired runs say.** A claim *holds* when the "
                "claimed winner is ahead by more than 2 standard errors of the run-by-run difference, is *reversed* "
                "when it is behind by as much, and is *not significant* otherwise; the difference is the claimed "
                f"loser's {payload['metric']} minus the claimed winner's (positive: as the paper says), at the "
                "iteration the claim is about or averaged over the whole run (\"compared\").")
    if payload["runs"] < FEW_RUNS:
        st.warning(f"Only {payload['runs']} runs per setting: each standard error rests on {payload['runs']} numbers, "
                   "so these verdicts can change from one seed to the next. Read them as a demonstration; the "
                   "stored 100-run verdicts are the result.", icon=":material/warning:")
    st.table(_coloured(verdict_table(payload)), hide_index=True)
    st.markdown(f"**Every setting at the checkpoints**: mean {payload['metric']} (standard error over runs).")
    checkpoints = checkpoint_table(payload)
    st.dataframe(checkpoints, hide_index=True, height=35 * (len(checkpoints) + 1) + 3)


def preset_note(figure: str, where=None) -> None:
    """What the stored 100-run reproduction says about ``figure``'s claims, in two lines with the numbers."""
    verdicts = figure_verdicts(figure.split("-")[0])   # "fig5-equal": one line of Fig. 5
    if verdicts is None:
        return
    box = (where if where is not None else st).container()
    text = f"**Against the paper: {verdicts.headline}** {verdicts.details}"
    if verdicts.all_hold:
        box.info(text, icon=":material/fact_check:")
    else:
        box.warning(text, icon=":material/fact_check:")
    with box:
        page_link(REPRODUCTION, "See the curves and every verdict on the Paper reproduction page",
                  icon=":material/arrow_forward:", query_params={"part": verdicts.part})
