"""Federated BO: run TS, FTS, FTS-DE, DP-FTS and DP-FTS-DE side by side, live."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import functools
import time

import streamlit as st

from engine.fbo import Simulation
from engine.fbo.variants import build_variants, preset_in_view
from engine.objectives import DatasetUnavailable, dataset_label
from engine.objectives.registry import data_status
from engine.privacy import ACCOUNTANT_LABELS
from engine.validation import ConfigError
from engine.walls import use_workers
from ui.fbo import controls
from ui.kit.cached import cached_lines_cost, cached_objective, cached_plan
from ui.kit.charts import show
from ui.kit.errors import ErrorSlots
from ui.fbo.figures import convergence_figure, convergence_lines, epsilon_lines, privacy_figure
from ui.fbo.results import CONVERGENCE_ABOUT, PRIVACY_ABOUT, after_run, audited, downloads, privacy_preview, status_text
from ui.kit.run_loop import LiveLine, RunStatus, checked, current_run, run_buttons, run_live, show_failure
from ui.kit.compute import compute
from ui.reproduction.view import preset_note
from ui.kit.opening import open_page
from ui.kit.routes import FBO
from ui.kit.table_build import build_under_way, missing_data, show_build
from ui.kit.tables import readable

AFTER_BUILD = "fbo_run_after_build"   # the settings whose Run waits for their table to be built
BUILD_ERROR = "fbo_build_error"

SCRIPT_START = time.perf_counter()
opening = open_page(FBO, controls.init)

slots = ErrorSlots()
with st.sidebar:
    controls.sidebar(slots)
values = controls.current()

# ---------------------------------------------------------------- main area
st.title("Federated Bayesian optimisation")
st.write("Agents tune the same kind of model on their own data and share what they learn through a server. "
         "Choose the algorithms and the privacy knobs on the left, press **Run**, and watch utility (lower is "
         "better) and privacy loss ε grow together.")
opening.note()

# Every line's plan (agents, delta, z, epsilon, budget, cost) before anything runs.
config_error, variants, plans, cost, price = None, [], [], None, None
try:
    variants = build_variants(values)
    cost = cached_lines_cost(tuple(cfg for _, cfg in variants))     # priced before anything is computed
except ConfigError as err:
    config_error = err
    slots.show(err)
else:
    try:
        price = checked(cost, what=f"These {len(variants)} lines" if len(variants) > 1 else "This run",
              fewer="lines" if len(variants) > 1 else None)
    except ConfigError as err:
        # Shown here in the main area: the knob it names may sit in a closed expander of the sidebar.
        config_error = err
        st.error(str(err), icon=":material/error:")
        slots.mark(err)
if config_error is None:
    try:
        with st.spinner("Accounting the privacy loss..."):
            plans = compute(lambda: [cached_plan(cfg) for _, cfg in variants])
    except ConfigError as err:
        config_error = err
        slots.show(err)

data = None
if config_error is None:
    preview = privacy_preview(variants, plans)
    if preview is not None:
        with st.expander("Privacy before you run", expanded=True):
            st.dataframe(readable(preview), hide_index=True)
    first = variants[0][1]
    data = data_status(first.dataset)   # before Run: a missing file turns Run off
    if first.dataset == "synthetic" and not use_workers():
        # Cheap (a GP draw on 1000 points) and shared: build it now so pressing Run starts computing at once.
        # (Not when runs compute in walled workers: the worker builds its own, and the server stays small.)
        cached_objective(first.dataset, first.agents, first.alpha, first.objective_seed, first.domain)
unavailable = data is not None and not data.available

run_clicked, (message_col,) = run_buttons("fbo", disabled=config_error is not None or unavailable)
with message_col:
    slots.fallback()
    if config_error is not None:
        slots.run_is_off(config_error)
if unavailable:
    missing_data(data, dataset_label(first.dataset).split(":")[0])
if BUILD_ERROR in st.session_state:
    st.error(st.session_state.pop(BUILD_ERROR), icon=":material/error:")
status_slot = st.empty()
progress_slot = st.empty()

# A real task's first run builds its table once, in the background, with its progress here; the run asked for
# starts when the table is ready (and a visitor who asks while another's build is under way joins it).
if config_error is None and not unavailable:
    build = build_under_way(first, start=run_clicked, price=price)    # the Run's price counts the build
    if build is not None:
        if run_clicked:
            st.session_state[AFTER_BUILD] = values
        with progress_slot:
            show_build(build, error_key=BUILD_ERROR, then="The run starts by itself when the table is ready."
                       if st.session_state.get(AFTER_BUILD) == values else "Press Run once it is ready.")
        run_clicked = False
    elif st.session_state.get(AFTER_BUILD) == values:
        del st.session_state[AFTER_BUILD]
        run_clicked = True

preset = preset_in_view(values, controls.PAGE_PRESETS)
if preset is not None:   # a paper figure: what our 100-run reproduction says about its claims
    size_note = controls.preset_size_note(preset, values)     # fewer runs, to fit this server's limits
    if size_note:
        st.caption(size_note)
    preset_note(preset)
ocols = st.columns([1, 1, 4])
log_y = ocols[0].toggle("log scale", key="fbo_opt_log", help="Plot the metric on a log axis.")
band = ocols[1].toggle("error band", value=True, key="fbo_opt_band",
                       help="Shade ± one standard error over runs (each run's mean over its agents is one "
                            "replicate); a single run has no band.")
chart_cols = st.columns([3, 2])
conv_slot = chart_cols[0].empty()
priv_slot = chart_cols[1].empty()


def draw_main(run, suffix: str) -> None:
    runs = run.shown()
    if not runs:
        return
    first = runs[0][1]
    total = first.config.iterations
    show(convergence_figure(convergence_lines(runs), metric_label=first.metric_label, log_y=log_y, band=band,
                            total_iterations=total), key=f"fbochart_conv_{suffix}", where=conv_slot,
         about=CONVERGENCE_ABOUT)
    private = [res for _, res in runs if res.config.is_private]
    accountant = ACCOUNTANT_LABELS[private[0].config.accountant] if private else ""
    budget = next((res.config.budget for res in private if res.config.budget is not None), None)
    stops = [(label, res.budget_reached_at) for label, res in runs
             if res.config.is_private and res.budget_reached_at is not None and not res.config.calibrate_z]
    waiting = run.status is RunStatus.RUNNING and not private and any(cfg.is_private for _, cfg in variants)
    empty = {"empty_text": "ε appears with the first<br>private line's iterations."} if waiting else {}
    show(privacy_figure(epsilon_lines(runs), budget=budget, accountant_label=accountant, stops=stops,
                        total_iterations=total, **empty), key=f"fbochart_priv_{suffix}", where=priv_slot,
         about=PRIVACY_ABOUT)


def simulate(cfg):
    """One line: its Simulation, yielded after every iteration (built when the line is first stepped)."""
    try:
        objective = cached_objective(cfg.dataset, cfg.agents, cfg.alpha, cfg.objective_seed, cfg.domain)
    except DatasetUnavailable as err:
        err.field = "dataset"  # its sentence says where to put the data; show it under the control
        raise
    sim = Simulation(cfg, objective)
    for record in sim:
        # The page never shows a past round's vectors (the teaching view has its own run); dropping them
        # keeps a stored result small (about 0.3 MB per iteration and line at N = 200).
        record.server_step = None
        yield sim


def progress(latest, counts: list[int]) -> tuple[float, str]:
    started = [c for c in counts if c]
    done = sum(counts) / sum(cfg.iterations + 1 for _, cfg in variants)
    return done, f"iteration {max(min(started) - 1, 0) if started else 0} of {variants[0][1].iterations}"


if run_clicked and config_error is None:
    lines = [LiveLine(label, functools.partial(simulate, cfg), cfg.iterations + 1) for label, cfg in variants]
    run_live(controls.RUN_KEY, lines, values=values, draw=draw_main, progress_slot=progress_slot, errors=slots,
             price=price, snapshot=lambda sim: sim.result(), progress=progress, started=SCRIPT_START)

# ---------------------------------------------------------------- results (stored; plot options do not rerun)
run = current_run(controls.RUN_KEY, run_clicked)
if run is None:
    # Empty frames before the first run: the browser loads Plotly now, not after Run is pressed.
    show(convergence_figure([], empty_text="Press Run: the curves appear here<br>and grow while the simulation runs."),
         key="fbochart_conv_empty", where=conv_slot, about=CONVERGENCE_ABOUT)
    show(privacy_figure([], empty_text="ε after each iteration<br>appears here."), key="fbochart_priv_empty",
         where=priv_slot, about=PRIVACY_ABOUT)
elif run.status is RunStatus.FAILED:
    show_failure(run, status_slot)
else:
    kind, text = status_text(run)
    if kind == "success":
        status_slot.success(text, icon=":material/check_circle:")
    else:
        status_slot.warning(text, icon=":material/pause_circle:")
    if run.values != values:
        st.info("The settings changed since this run; press **Run** to see them.", icon=":material/info:")
    draw_main(run, "final")
    runs = run.shown()
    if run.status is RunStatus.DONE:
        with chart_cols[1]:
            audited(runs)
    if runs and min(len(res.records) for _, res in runs) > 0:
        after_run(runs)
        downloads(run, controls.FBO_PARAMS)
