"""What the Federated BO page shows around a run: the privacy preview, the panels after it, the downloads.

Plain functions of the run plans or of the finished :class:`~ui.kit.run_loop.LiveRun`;
the numbers come from the engine (plans, results), the figures from
:mod:`ui.fbo.figures`.
"""

from __future__ import annotations

import json
from typing import Sequence

import numpy as np
import pandas as pd
import streamlit as st

from engine.cli.fbo import command_line
from engine.fbo.config import FboConfig
from engine.fbo.plan import RunPlan
from engine.flower.settings import delta_note, run_config
from engine.validation import ConfigError
from ui.audit.panel import audit_panel, server_audit
from ui.kit.cached import cached_plan
from ui.kit.charts import show
from ui.kit.compute import flower_app
from ui.kit.downloads import csv_bytes
from ui.fbo.figures import (
    agent_heatmap,
    agent_metric,
    clipped_figure,
    clipped_lines,
    selected_figure,
    selected_lines,
    weight_shares,
    weights_figure,
)
from ui.kit.run_loop import LiveRun, RunStatus
from ui.kit.state import query_dict
from ui.kit.tables import MISSING

CONVERGENCE_ABOUT = ("How far each line's agents still are from the best value after every iteration (lower is "
                     "better), averaged over agents and runs, with a shaded band of one standard error over runs "
                     "(none for a single run) and TS dashed as the baseline.")
PRIVACY_ABOUT = ("The privacy loss ε each private line has spent after every iteration; it only grows, and a "
                 "budget line marks where the server stops releasing.")


def privacy_preview(variants: Sequence[tuple[str, FboConfig]], plans: Sequence[RunPlan]) -> pd.DataFrame | None:
    """Epsilon after T (or where the budget runs out) of each private line, from its plan."""
    rows = []
    for (label, cfg), plan in zip(variants, plans):
        if not cfg.is_private:
            continue
        row = {"line": label, "q": cfg.q, "z": round(plan.z, 4), "δ": f"{plan.delta:.3g}",
               f"ε after T = {cfg.iterations}": round(float(plan.epsilon_curve[-1]), 3)}
        if cfg.budget is not None and not cfg.calibrate_z:
            row["budget ε*"] = cfg.budget
            row["server releases"] = (f"all {cfg.iterations}" if plan.releases >= cfg.iterations
                                      else f"{plan.releases} (stops after t = {plan.releases})")
        rows.append(row)
    return pd.DataFrame(rows) if rows else None


def status_text(run: LiveRun) -> tuple[str, str]:
    """("success" | "warning", sentence) for a finished or stopped run."""
    runs = run.shown()
    T = runs[0][1].config.iterations if runs else 0
    if run.status is RunStatus.DONE:
        text = f"Finished {len(runs)} line(s) × {T} iterations × {runs[0][1].config.runs} runs"
        if run.seconds is not None:
            text += f" in {run.seconds:.1f} s (first chart after {run.first_chart:.2f} s)"
        return "success", text + "."
    done_t = min((len(res.records) - 1 for _, res in runs), default=-1)
    why = f"{run.message}: " if run.message else "Stopped "
    return "warning", (f"{why}at iteration {max(done_t, 0)} of {T}; the charts show the iterations that "
                       "finished.")


def audited(runs: list[tuple[str, object]]) -> None:
    """The audited-ε panel beside the privacy chart: the server of one private line, audited on demand."""
    private = [(label, res) for label, res in runs if res.config.is_private]
    if not private:
        return
    names = [label for label, _ in private]
    if st.session_state.get("fbo_opt_audit") not in names:
        st.session_state["fbo_opt_audit"] = names[-1]
    if len(names) > 1:
        st.selectbox("line to audit", names, key="fbo_opt_audit")
    label = st.session_state["fbo_opt_audit"]
    try:
        config = server_audit(cached_plan(dict(private)[label].config))
    except ConfigError as err:
        st.caption(f"Nothing to audit: {err}")
        return
    audit_panel("fbo_audit", config, f"{label}'s server, {config.steps} release(s)")


def after_run(runs: list[tuple[str, object]]) -> None:
    """Clipping and selection, sub-region weights, the per-agent heat map and a summary, in tabs."""
    st.subheader("After the run")
    tabs = st.tabs(["Clipping and selection", "Sub-region weights", "Per agent", "Summary"])
    with tabs[0]:
        _clipping(runs)
    with tabs[1]:
        _weights(runs)
    with tabs[2]:
        names = [label for label, _ in runs]
        if st.session_state.get("fbo_opt_heat") not in names:
            st.session_state["fbo_opt_heat"] = names[-1]
        hc = st.columns([2, 1, 3])
        choice = hc[0].selectbox("line", names, key="fbo_opt_heat")
        log_color = hc[1].toggle("log colours", value=True, key="fbo_opt_heat_log")
        res = dict(runs)[choice]
        iterations, metric = agent_metric(res)
        assignment = (np.arange(res.n_agents) % res.config.n_subregions) if res.config.n_subregions > 1 else None
        show(agent_heatmap(metric, iterations, metric_label=res.metric_label, assignment=assignment,
                           log_color=log_color), key="fbochart_heatmap",
             about="One row per agent and one column per iteration, coloured by how far that agent still is from "
                   "its best value (yellow: close), agents grouped by the sub-region they explored first.")
    with tabs[3]:
        st.dataframe(summary_table(runs), hide_index=True)


def _clipping(runs) -> None:
    clipped, selected = clipped_lines(runs), selected_lines(runs)
    if not selected:
        st.info("No line uses the central server (TS and FTS have none), so nothing is selected or clipped.")
        return
    c1, c2 = st.columns(2)
    with c1:
        if clipped:
            S_values = {res.config.S for _, res in runs if res.config.is_private}
            show(clipped_figure(clipped, S=S_values.pop() if len(S_values) == 1 else None), key="fbochart_clipped",
                 about="The share of the vectors the server picked that were longer than the bound and got shrunk, "
                       "iteration by iteration.")
        else:
            st.info("Only private algorithms clip (FTS-DE averages every vector as it is).")
    with c2:
        expected = [(label, res.n_agents * res.config.q) for label, res in runs if res.config.is_private]
        one = len({round(v, 6) for _, v in expected}) == 1
        show(selected_figure(selected, expected=expected[:1] if one else expected), key="fbochart_selected",
             about="How many agents the server picked in each round (mean over runs), next to the N q it expects.")


def _weights(runs) -> None:
    with_weights = [(label, res) for label, res in runs
                    if res.config.n_subregions > 1 and any(r.weights is not None for r in res.records)]
    if not with_weights:
        st.info("Sub-region weights exist only with distributed exploration: FTS-DE or DP-FTS-DE with P > 1.")
        return
    names = [label for label, _ in with_weights]
    if st.session_state.get("fbo_opt_weights") not in names:
        st.session_state["fbo_opt_weights"] = names[-1]
    choice = st.selectbox("line", names, key="fbo_opt_weights")
    res = dict(with_weights)[choice]
    iterations, weights = weight_shares(res)
    assignment = np.arange(res.n_agents) % res.config.n_subregions
    show(weights_figure(iterations, weights, assignment), key="fbochart_weights",
         about="The share of each sub-region's average that comes from the agents that explored it first: high "
               "early on, then falling to the uniform share as the temperature schedule evens the weights out.")


def summary_table(runs) -> pd.DataFrame:
    rows = []
    for label, res in runs:
        last = res.records[-1]
        private = res.config.is_private
        # The standard error is over runs (the mean over agents of each run is one replicate): none for one run.
        stderr = f"{last.stderr:.5f}" if np.isfinite(last.stderr) else MISSING
        rows.append({"line": label, f"final {res.metric_label}": f"{last.mean:.5f}", "± s.e. over runs": stderr,
                     "agents": res.n_agents, "z used": f"{res.z:.4g}" if private else MISSING,
                     "δ": f"{res.delta:.3g}" if private else MISSING,
                     "final ε": f"{last.epsilon:.3f}" if last.epsilon is not None else MISSING,
                     "budget reached at": (f"t = {res.budget_reached_at}" if res.budget_reached_at is not None
                                           else MISSING),
                     "engine seconds": f"{res.wall_seconds:.2f}"})
    return pd.DataFrame(rows)


def downloads(run: LiveRun, params) -> None:
    """The tidy CSV (built once per finished run), the configuration and the CLI's JSON per line."""
    runs = run.shown()
    st.subheader("Downloads")
    if run.cache.get("csv") is None or run.status is not RunStatus.DONE:
        frames = [res.to_frame().assign(line=label) for label, res in runs]
        run.cache["csv"] = csv_bytes(pd.concat(frames, ignore_index=True))
    config_json = json.dumps({
        "link_query": query_dict(run.values, params),
        "lines": [{"label": label, "config": res.to_json()["config"], "command_line": command_line(res.config)}
                  for label, res in runs],
    }, indent=2, default=float).encode()
    results_json = json.dumps([dict(res.to_json(), label=label) for label, res in runs], default=float).encode()
    dcols = st.columns([1, 1, 1, 2])
    dcols[0].download_button("Results (CSV)", run.cache["csv"], help="Tidy table: one row per line x run x agent x "
                             "query (the initial points as iteration 0): the point, its value, the metric and ε.",
                             file_name="fbo_results.csv", mime="text/csv",
                             icon=":material/download:", on_click="ignore", key="fbo_dl_csv")
    dcols[1].download_button("Configuration (JSON)", config_json, help="Every resolved setting of every line with "
                             "the command line that runs it, and the link parameters that reproduce this page.",
                             file_name="fbo_config.json",
                             mime="application/json", icon=":material/download:", on_click="ignore",
                             key="fbo_dl_config")
    dcols[2].download_button("Curves and ε (JSON)", results_json, help="Per line: the JSON object "
                             "`python -m engine fbo` prints (curve, standard error, ε, clipping).",
                             file_name="fbo_curves.json", mime="application/json", icon=":material/download:",
                             on_click="ignore", key="fbo_dl_json")
    try:  # the first line with a server as a Flower app (engine.flower.export needs no Flower), built once per run
        served = [res.config for _, res in runs if res.config.uses_server] or [runs[0][1].config]
        dcols[3].download_button("Export as a Flower app", flower_app("fbo", served[0], run.cache),
                                 key="fbo_dl_flower",
                                 help="A ready Flower app of the first line with a server (server, agents, run "
                                 "config, README with the commands); see docs/flower.md.",
                                 file_name="dpftsde_flower_app.zip",
                                 mime="application/zip", icon=":material/download:", on_click="ignore")
        # The app's delta can differ from this run's (small federations get an explicit one): say which it uses.
        dcols[3].caption(delta_note("fbo", served[0], run_config("fbo", served[0])))
    except ConfigError as err:
        dcols[3].caption(f"Flower export: {err}")
    st.caption("The address bar holds the current settings: copy the link to share or reproduce this "
               "configuration. Every chart has a camera button for a PNG.")
