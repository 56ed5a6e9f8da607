"""What the "Plan a deployment" page shows of an advice: the recommendation, its references, the tied settings,
the sensitivity table, the curves and the three ways to deploy it (no computing here: the search made it all)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from engine.advise import Advice, HypeAdvice
from engine.advise.deploy import config_text, flower_config
from engine.fbo.config import PT_SCHEDULE_LABELS
from ui.fbo.figures import convergence_figure
from ui.kit.charts import show
from ui.kit.compute import flower_app
from ui.kit.figure_style import Line
from ui.kit.tables import readable

STAGE_WORDS = {"calibration": "calibrating z for every q", "screen": "screening every setting",
               "narrow": "narrowing to the 9 best-fitting", "final": "the 3 finalists", "validation":
               "validating the pick on fresh seeds", "done": "done"}
CURVE_NAMES = {"recommended": "recommended setting", "fts-de": "FTS-DE (no privacy)", "ts": "TS (no collaboration)"}


def _pm(value: float, stderr: float | None) -> str:
    if stderr is None or not math.isfinite(stderr):
        return f"{value:.4g}"
    return f"{value:.4g} ± {stderr:.2g}"


def schedule(name: str) -> str:
    return PT_SCHEDULE_LABELS[name].replace("1 - p_t = ", "")


def progress(latest, counts) -> tuple[float, str]:
    """The bar's fraction and text from the search's latest state (DP-HYPE: its one answer)."""
    search = latest[0]
    if search is None or not hasattr(search, "plan"):
        return 1.0, "Voting done"
    planned = max(1, search.plan.tasks())
    return search.tasks_done / planned, (f"{STAGE_WORDS.get(search.stage, search.stage)}: {search.tasks_done} of "
                                         f"{planned} tasks")


def show_advice(advice, suffix: str, where=None) -> None:
    """Draw ``advice`` (an :class:`Advice` growing live, or a :class:`HypeAdvice`) in ``where``."""
    where = where or st.container()
    with where:
        if isinstance(advice, HypeAdvice):
            _show_hype(advice)
        else:
            _show_fbo(advice, suffix)


def _show_fbo(advice: Advice, suffix: str) -> None:
    rec = advice.recommended
    if rec is None:
        st.info("Calibrating the noise of every sampling rate...", icon=":material/hourglass_top:")
        return
    k = rec.knobs
    title = "Recommended setting" if advice.complete else "Leading setting so far"
    st.subheader(title)
    cols = st.columns(6)
    cols[0].metric("q (sampling)", f"{k.q:g}")
    cols[1].metric("z (noise)", f"{rec.z:.4g}", help="Calibrated by the RDP accountant so that the run spends "
                                                     "exactly the budget.")
    cols[2].metric("S (clipping)", f"{k.S:g}")
    cols[3].metric("P (sub-regions)", f"{k.P}")
    cols[4].metric("1 - p_t", schedule(k.pt_schedule), help="How often an agent follows the federation's "
                                                            "broadcast instead of its own sample.")
    cols[5].metric("ε spent", f"{advice.epsilon_spent:.4g}", help=f"at δ = {advice.delta:g} after "
                                                                  f"T = {advice.iterations} releases")
    where = (f"on {rec.runs} fresh runs the search never used" if advice.predicted_from == "validation"
             else "on the search's own runs (optimistic until the validation runs finish)")
    low, high = rec.interval
    interval = f"; 95 % interval {low:.4g} to {high:.4g}" if math.isfinite(low) else ""
    st.markdown(f"**Predicted {advice.metric_label}** after T = {advice.iterations}: "
                f"**{_pm(rec.utility, rec.stderr)}** (mean ± standard error, {where}{interval}).")
    if advice.references:
        ref_cols = st.columns(2)
        for col, name, words in ((ref_cols[0], "fts-de", "The budget's cost: FTS-DE without privacy"),
                                 (ref_cols[1], "ts", "The federation's value: TS, every agent alone")):
            row = advice.references.get(name)
            if row is not None:
                col.metric(words, _pm(row.utility, row.stderr),
                           delta=f"the pick minus this: {-row.difference:+.3g} ± {row.difference_stderr:.2g}",
                           delta_color="inverse" if advice.scale > 0 else "normal",
                           help="Paired over the same fresh runs; red: the pick does worse than this reference "
                                "by that much (mean ± standard error), green: better.")
    for sentence in advice.summary():
        st.info(sentence, icon=":material/insights:")
    if advice.curves:
        lines = [Line(CURVE_NAMES[name], np.arange(len(mean)), mean, se, baseline=name == "ts")
                 for name, (mean, se) in advice.curves.items()]
        show(convergence_figure(lines, metric_label=advice.metric_label, total_iterations=advice.iterations,
                                title="The recommendation against its references (± s.e. over runs)"),
             key=f"adv_curves_{suffix}",
             about="The pick, FTS-DE without privacy and TS without collaboration on the same fresh runs, mean "
                   "over agents after every iteration.")
    _tied(advice)
    _sensitivity(advice)
    s = advice.search
    st.caption(f"{s['candidates']} settings meet ε = {advice.epsilon:g} (z calibrated for each q: "
               + ", ".join(f"q {q} → z {z:.3g}" for q, z in s["noise"].items())
               + f"); {s['runs_done']} of {s['runs_planned']} runs done. Task: {advice.task}.")


def _tied(advice: Advice) -> None:
    st.markdown("**Settings the search cannot tell apart from the pick** (paired test over common random "
                "numbers, two-sided 5 %)")
    if not advice.tied:
        st.caption("None: every other finalist is significantly worse on the runs they share." if advice.complete
                   else "Not known yet.")
        return
    table = pd.DataFrame([{"q": r.knobs.q, "z": r.z, "S": r.knobs.S, "P": r.knobs.P,
                           "1 - p_t": schedule(r.knobs.pt_schedule), advice.metric_label: r.utility,
                           "± s.e.": r.stderr, "minus the pick": r.difference, "± s.e. (paired)": r.difference_stderr,
                           "runs": r.runs} for r in advice.tied])
    st.dataframe(readable(table, digits=3), hide_index=True)


def _sensitivity(advice: Advice) -> None:
    if not advice.sensitivity:
        if advice.sensitivity_note and advice.complete:
            st.caption(advice.sensitivity_note)
        return
    st.markdown("**If your task differs from what you described**: the finalists and TS rerun on a changed proxy")
    rows = []
    for row in advice.sensitivity:
        best = row["best"]
        rows.append({"if the task is": row["change"],
                     "best finalist there": f"q {best['q']:g}, S {best['S']:g}, P {best['P']}, "
                                            f"{schedule(best['pt_schedule'])}",
                     "the pick there": row["pick_utility"], "keeping the pick costs": row["cost_of_keeping_pick"],
                     "± s.e.": row["cost_stderr"], "recommendation changes": "yes" if row["changes"] else "no",
                     "TS there": row.get("ts_utility"),
                     "federation helps": "yes" if row.get("federation_helps") else "no"})
    st.dataframe(readable(pd.DataFrame(rows), digits=3), hide_index=True)
    st.caption("A change is called only when another finalist beats the pick significantly on the changed task "
               "(paired, 3 runs per setting at effort 1: only large differences show).")


def _show_hype(advice: HypeAdvice) -> None:
    st.subheader("Recommended vote")
    cols = st.columns(4)
    cols[0].metric("votes per client k", advice.k)
    cols[1].metric("noise σ on the sum", f"{advice.sigma:.4g}")
    cols[2].metric("noise each client adds", f"{advice.per_client:.4g}")
    cols[3].metric("success rate", _pm(advice.success, advice.stderr),
                   help=f"Share of {advice.repetitions:,} fresh votes whose winner is a good candidate.")
    refs = pd.DataFrame([{"reference": name, "success rate": r["success_rate"], "± s.e.": r["stderr"]}
                         for name, r in advice.references.items()])
    st.dataframe(readable(refs, digits=3), hide_index=True)
    table = pd.DataFrame(advice.table)
    table["tied with the pick"] = [k in advice.tied or k == advice.k for k in table["k"]]
    st.dataframe(readable(table, digits=3), hide_index=True)


def deploy_buttons(advice, command_line: str, *, key: str, cache: dict) -> None:
    """The recommendation as a Flower app (built through the gate, kept in the run's ``cache``), a configuration
    file and a command line."""
    if isinstance(advice, HypeAdvice):
        st.markdown("**Deploy**: the DP-HYPE vote with these settings")
        st.code(command_line, language="bash", wrap_lines=True)
        return
    st.subheader("Deploy it")
    cols = st.columns(2)
    app = flower_app("fbo", flower_config(advice.deployment), cache, advice.dim)
    cols[0].download_button("Flower app (zip)", app, file_name="dpftsde_app.zip",
                            mime="application/zip", icon=":material/download:", on_click="ignore",
                            key=f"{key}_flower", help="Secured by default: TLS, SuperNode authentication, the "
                            "gateway; put your objective in client_app.py's evaluate(x).")
    cols[1].download_button("Configuration (JSON)", config_text(advice.deployment).encode(),
                            file_name="advice_config.json", mime="application/json", icon=":material/download:",
                            on_click="ignore", key=f"{key}_config",
                            help="python -m engine fbo --config FILE runs it.")
    st.code(command_line, language="bash", wrap_lines=True)
