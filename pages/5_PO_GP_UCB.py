"""PO-GP-UCB: a curator releases a randomly projected private copy of its inputs, a modeler runs GP-UCB on it."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import math
import time

import numpy as np
import pandas as pd
import streamlit as st

from engine.cli.pogpucb import command_line as po_command_line
from engine.limits import pogpucb_cost
from engine.pogpucb import iter_pogpucb
from engine.pogpucb.config import HYPER_MODE_LABELS
from engine.pogpucb.preview import release_preview
from engine.pogpucb.variants import label, paper_value
from engine.reproduce.stored_papers import preset_in_view
from engine.validation import ConfigError
from ui.pogpucb import controls
from ui.kit.cached import cached_task
from ui.kit.charts import empty_state, show
from ui.kit.errors import ErrorSlots
from ui.fbo.figures import Line
from ui.kit.run_loop import LiveLine, RunStatus, checked, current_run, run_buttons, run_live, show_failure
from ui.pogpucb.figures import distortion_figure, omega_figure, regret_figure, release_figure
from ui.kit.opening import open_page
from ui.kit.routes import POGPUCB
from ui.kit.downloads import config_download
from ui.reproduction.view import paper_note

SCRIPT_START = time.perf_counter()
opening = open_page(POGPUCB, controls.init)

st.title("PO-GP-UCB: private outsourced Bayesian optimisation")
st.write(
    "A **curator** (a hospital, a bank) holds n inputs and can evaluate an expensive f on any of them; a "
    "**modeler** runs the optimisation but may not see the inputs. The curator centres its data, multiplies it by "
    "a random d x r Gaussian matrix M and releases **Z = r^-1/2 X M**. If the smallest singular value σ_min of the "
    "centred data is below the threshold **ω(ε, δ, r)** it first lifts every singular value to √(s² + ω²), which "
    "is what makes the release (ε, δ)-differentially private but distorts distances. The modeler runs GP-UCB on Z "
    "and asks for f by row number. *Kharkovskii, Dai and Low, ICML 2020, Algorithms 1-2.*")
opening.note()

slots = ErrorSlots()
with st.sidebar:
    eps_caption, delta_caption = controls.sidebar(slots)
values = controls.current()
preset = preset_in_view(values, {name: spec[2] for name, spec in controls.PAPER_PRESETS.items()})
paper_note("po-gp-ucb", controls.PAPER_PRESETS[preset][1] if preset else None)   # its stored verdicts


def fmt_eps(eps: float) -> str:
    return f"ε = {eps:.4g} = exp({math.log(eps):.2f})" if eps > 0 else f"ε = {eps:g}"


base, variants, config_error, price = None, [], None, None
try:
    base, variants = controls.configs(values)
    costs = [pogpucb_cost(cfg) for _, cfg in variants]
    cost = sum(costs[1:], costs[0])
    price = checked(cost, what=f"These {len(variants)} settings" if len(variants) > 1 else "This run",
          fewer="compared values" if len(variants) > 1 else None)
except ConfigError as err:
    config_error = err
    slots.show(err)

# ---------------------------------------------------------------- the curator's decision (instant, no run)
if variants:
    with st.spinner("Preparing the data set (ML fit of the kernel, once per session)..."):
        task = cached_task(base.dataset)
    eps_caption.caption(fmt_eps(base.epsilon))
    if base.delta >= 1.0 / task.n:
        delta_caption.warning(f"δ = {base.delta:g} is not below 1/n = {1 / task.n:.1e}, as the paper keeps it.",
                              icon=":material/warning:")
    preview = release_preview(task, base, [cfg for _, cfg in variants])
    s0 = preview.summary
    st.subheader("The curator's release")
    cols = st.columns([1, 1, 1, 1.3])
    cols[0].metric("σ_min of the centred inputs", f"{s0.sigma_min:,.1f}", help="Smallest singular value of X after "
                   "centring; inputs are scaled to a maximal norm of 25 (paper Sec. 4).")
    cols[1].metric(f"ω at r = {base.r}", f"{s0.omega:,.1f}", help="Algorithm 1, line 5: "
                   "16 √(r log(2/δ)) log(16 r/δ) / ε, here at the r and ε of the controls.")
    cols[2].metric("largest admissible r", s0.max_admissible_r or "none",
                   help="The largest r with σ_min ≥ ω at this ε and δ; the paper recommends exactly this r.")
    if values["compare"] == "r" and len(variants) > 1:
        cols[2].caption(f"among the compared r: {preview.best_compared_r or 'none'}")
    with cols[3]:
        for (_, cfg), s in zip(variants, preview.summaries):
            if s.preserves:
                st.success(f"**{label(cfg)}: σ_min ≥ ω**, distances preserved (line 7).",
                           icon=":material/check_circle:")
            else:
                st.warning(f"**{label(cfg)}: σ_min < ω**, singular values lifted (line 9); distances may grow by up to "
                           f"C' = {s.distortion_bound:.3g}x.", icon=":material/warning:")

    curves = [(f"ω, log ε = {math.log(e):.2f}", w) for e, w in preview.omegas.items()]
    marks = [(label(cfg), cfg.r, s.omega) for (_, cfg), s in zip(variants, preview.summaries)]
    samples = [(label(cfg), ratios) for (_, cfg), ratios in zip(variants, preview.ratios)]
    bounds = [(f"C' = {s.distortion_bound:.3g}", s.distortion_bound) for s in preview.summaries if not s.preserves]
    ccols = st.columns(2)
    show(omega_figure(preview.r_grid, curves, s0.sigma_min, selected=marks), key="po_omega", where=ccols[0],
         about="The noise threshold ω for each projection size r, against the data's smallest singular value (dashed): "
               "below the dashed line the data are released as they are, above it they are first lifted.")
    show(distortion_figure(samples, bounds=bounds[:3]), key="po_distortion", where=ccols[1],
         about="How much the release stretches or shrinks squared distances between random pairs of points "
               "(1 means unchanged), one histogram per setting.")

    shown = 0
    if len(variants) > 1:
        if st.session_state.get("po_release_choice", 0) >= len(variants):
            st.session_state["po_release_choice"] = 0
        shown = st.columns([1, 2])[0].selectbox("release shown", range(len(variants)), key="po_release_choice",
                                                format_func=lambda i: label(variants[i][1]))
    rel = preview.releases[shown]
    rows = np.random.default_rng(0).choice(task.n, size=min(2500, task.n), replace=False)
    show(release_figure(rel.X_centred[rows, :2], rel.Z[rows, :2], task.f[rows], input_names=task.input_names[:2],
                        released_label=f"r = {rel.r}" + (", lifted" if rel.branch == "lift" else "")),
         key="po_release", about="The curator's own inputs (left) beside the projected copy the modeler receives "
                                 "(right), each point coloured by its value of f.")
    st.caption("Each run draws its own M; these panels show run 1's. Larger r concentrates the distance ratio "
               "|z − z'|² / |x − x'|² around 1 (Lemma 1); lifting the singular values stretches distances by up "
               "to C' (Theorem 2).")

# ---------------------------------------------------------------- runs
st.subheader("Simple regret: PO-GP-UCB against non-private GP-UCB")
run_clicked, (log_col, message_col) = run_buttons("po", disabled=config_error is not None, widths=(1, 1, 1, 4))
log_y = log_col.toggle("log scale", key="po_log_y")
with message_col:
    slots.fallback()
progress_slot = st.empty()
chart_slot = st.empty()


def regret_lines(run) -> list[Line]:
    lines = []
    for label_, res in run.shown():
        lines.append(Line(label_, res.iterations, res.curve, res.curve_stderr))
        if res.baseline_regrets is not None:
            lines.append(Line("GP-UCB on X (non-private)", res.iterations, res.baseline_curve, res.baseline_stderr,
                              baseline=True))
    return lines


def draw(run, suffix: str) -> None:
    runs = run.shown()
    total = runs[0][1].config.iterations if runs else None
    show(regret_figure(regret_lines(run), total_iterations=total, log_y=log_y), key=f"po_regret_{suffix}",
         where=chart_slot, about="How far the best point found so far is from the true best (lower is better), "
                                 "averaged over runs with a band of one standard error, the non-private GP-UCB "
                                 "dashed.")


FOUND = "found the best at t (median)"


def regret_summary(regrets: np.ndarray) -> dict:
    """Beside S_T: the mean of S_t over t = 1..T (lower: the best point found sooner) and the median first t at
    which a run's regret is 0 ("—" when half the runs never got there)."""
    first = [int(np.argmax(r == 0)) + 1 if (r == 0).any() else np.inf for r in regrets]
    median = float(np.median(first))
    return {"mean S_t over t": float(regrets.mean()), FOUND: "—" if not np.isfinite(median) else f"{median:g}"}


def progress(latest, counts) -> tuple[float, str]:
    k = max(i for i, item in enumerate(latest) if item is not None)
    return sum(counts) / sum(cfg.runs for _, cfg in variants), \
        f"{variants[k][0]}: run {latest[k].runs_done} of {variants[k][1].runs}"


if run_clicked and config_error is None:
    lines = [LiveLine(name, lambda cfg=cfg: iter_pogpucb(cfg), cfg.runs) for name, cfg in variants]
    run_live(controls.RUN_KEY, lines, values=values, draw=draw, progress_slot=progress_slot, errors=slots,
             price=price, interleave=False,
             progress=progress, started=time.perf_counter())

run = current_run(controls.RUN_KEY, run_clicked)
if run is not None and run.status is RunStatus.FAILED:
    show_failure(run, st)
if run is None or not run.shown():
    empty_state("**No run yet.** Press **Run**: the simple-regret curves of PO-GP-UCB on the released copy grow "
                "here run by run, next to non-private GP-UCB on the original inputs, and a table compares the final "
                "regret with the paper's.", where=chart_slot)
else:
    draw(run, "final")
    if run.values != values:
        st.caption("These curves are from earlier settings; press Run to update them.")
    if run.status is RunStatus.STOPPED:
        st.caption("The run was interrupted; the curves show the runs that finished.")
    T = run.shown()[0][1].config.iterations
    rows, baseline_rows = [], []
    for name, res in run.shown():
        paper = paper_value(res.config)
        rows.append({"setting": name, "branch": "σ_min ≥ ω" if res.summary.preserves else "σ_min < ω (lifted)",
                     "runs": res.runs_done, f"S_{T} mean": res.curve[-1], "± s.e.": res.curve_stderr[-1],
                     **regret_summary(res.regrets), "paper S_50": "—" if paper is None else f"{paper:.3f}"})
        if res.baseline_regrets is not None:
            baseline_rows.append({"setting": "GP-UCB on X (non-private)", "branch": "—", "runs": res.runs_done,
                                  f"S_{T} mean": res.baseline_curve[-1], "± s.e.": res.baseline_stderr[-1],
                                  **regret_summary(res.baseline_regrets), "paper S_50": "—"})
    table = pd.DataFrame(rows + baseline_rows)
    if (table["paper S_50"] == "—").all():   # no setting the paper reports: no column of dashes
        table = table.drop(columns="paper S_50")
    numbers = [c for c in table.columns if c not in ("setting", "branch", "runs", "paper S_50", FOUND)]
    st.dataframe(table, hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in numbers})
    if (table[f"S_{T} mean"] == 0).all():
        st.caption(f"Every run found the best point by t = {T} (S_{T} = 0 exactly): the mean of S_t over the "
                   "iterations and the first t at S_t = 0 say which line got there sooner.")
    if run.seconds is not None:
        st.caption(f"Finished in {run.seconds:.1f} s. Regret is in units of the output's standard deviation "
                   "(σ_y = 1 for the synthetic GP). Kernel hyperparameters: "
                   f"{HYPER_MODE_LABELS[run.shown()[0][1].config.hyperparameters]}.")
    config_download([(name, res.config) for name, res in run.shown()], po_command_line, file_name="po_config.json",
                    key="po_dl_config")
