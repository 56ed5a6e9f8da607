"""Federated BO: run TS, FTS, FTS-DE, DP-FTS and DP-FTS-DE side by side, live."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import streamlit as st

from engine.fbo import Simulation
from engine.fbo.config import (
    ALGORITHMS,
    FTS_VARIANTS,
    PT_SCHEDULE_LABELS,
    PT_SCHEDULES,
    WEIGHT_SCHEDULES,
    WEIGHTS,
    check_work_limit,
)
from engine.fbo.presets import PRESETS
from engine.objectives import DATASETS, DatasetUnavailable, build_objective, dataset_label
from engine.privacy import ACCOUNTANT_LABELS, ACCOUNTANTS, SAMPLING, default_delta, releases_within_budget
from engine.validation import ConfigError
from ui.common import (
    ALGORITHM_SHORT,
    BUDGET_MODES,
    FBO_PARAMS,
    FBO_PREFIX,
    FIXED_AGENT_DATASETS,
    VARY_OPTIONS,
    ErrorSlots,
    build_variants,
    cached_calibrate_z,
    cached_epsilon_curve,
    init_state,
    max_work,
    mirror_to_query,
    preset_values,
    query_dict,
    set_state,
    state_values,
)
from ui.fbo_figures import (
    agent_heatmap,
    clipped_figure,
    clipped_lines,
    convergence_figure,
    convergence_lines,
    epsilon_lines,
    privacy_figure,
    selected_figure,
    selected_lines,
    weight_history,
    weights_figure,
    agent_metric,
)

SCRIPT_START = time.perf_counter()
st.set_page_config(page_title="Federated BO · DP-BO Explorer", page_icon=":material/hub:", layout="wide")

P_ = FBO_PREFIX
RUN_KEY = "fbo_run_state"
PAGE_PRESETS = ("fig2a", "fig2c", "fig2d")
REDRAW_SECONDS = 0.3  # live charts redraw at most this often (and after the first iteration)


def key(name: str) -> str:
    return P_ + name


def short_dataset_label(name: str) -> str:
    """The registry label up to its first ':' or '(' (the sidebar is narrow; the help has the rest)."""
    return dataset_label(name).split(" (")[0].split(":")[0]


# ---------------------------------------------------------------- state: URL, presets
if st.query_params.get("preset") in PAGE_PRESETS:
    set_state(preset_values(st.query_params["preset"]), P_)
ignored = init_state(FBO_PARAMS, P_)


def load_preset():
    name = st.session_state.get("fbo_preset_choice")
    if name in PAGE_PRESETS:
        set_state(preset_values(name), P_)


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_objective(dataset: str, agents: int | None, alpha: float | None, seed: int, domain: str = "table"):
    """Objectives are immutable, so every variant and session can share one."""
    return build_objective(dataset, n_agents=agents, alpha=alpha, seed=seed, domain=domain)


# ---------------------------------------------------------------- sidebar: the controls
slots = ErrorSlots()
sb = st.sidebar
with sb:
    st.header("Settings")
    st.selectbox("paper preset", PAGE_PRESETS, index=None, key="fbo_preset_choice", on_change=load_preset,
                 placeholder="Load a preset from the paper...", format_func=lambda name: PRESETS[name]["label"],
                 help="Fills every control with a configuration of the DP-FTS-DE paper (3 runs instead of 5 to "
                      "stay fast); press Run to see it.")

    st.subheader("What to compare")
    st.multiselect("algorithms", ALGORITHMS, key=key("algorithms"), format_func=ALGORITHM_SHORT.get,
                   help="One line each. TS: agents alone (baseline). FTS: agents borrow each other's vectors. "
                        "FTS-DE: a server averages them per sub-region. DP-FTS, DP-FTS-DE: the same with "
                        "subsampling, clipping and noise; only these spend privacy.")
    slots.under("algorithms")
    st.selectbox("also vary", VARY_OPTIONS, key=key("vary"),
                 format_func=lambda v: "nothing" if v == "none" else v,
                 help="Run the algorithms it concerns once per value: q, z, S (private algorithms), P (FTS-DE, "
                      "DP-FTS-DE) or M (all).")
    if st.session_state[key("vary")] != "none":
        st.text_input("values to compare", key=key("values"), placeholder="e.g. 0.15, 0.25, 0.5",
                      help="Comma-separated; each value adds one line per algorithm it concerns.")
    slots.under("values")

    st.subheader("Task")
    st.selectbox("data set", list(DATASETS), key=key("dataset"), format_func=short_dataset_label,
                 help="What the agents optimise. Synthetic is instant; real tasks build a table of validation "
                      "scores once (cached). " + "; ".join(dataset_label(name) for name in DATASETS) + ".")
    slots.under("dataset")
    fixed_agents = st.session_state[key("dataset")] in FIXED_AGENT_DATASETS
    # Paired controls share one error slot under their row, so a sentence gets the sidebar's full width.
    c1, c2 = st.columns(2)
    c1.number_input("agents N", key=key("agents"), step=10, disabled=fixed_agents,
                    help="More agents: more information to share and a smaller δ = 1/N^1.1, but a slower run.")
    c2.number_input("iterations T", key=key("iterations"), step=5,
                    help="BO iterations after the initial points; each one is a server release, so privacy loss "
                         "grows with T.")
    slots.under("agents", "iterations")
    c1, c2 = st.columns(2)
    c1.number_input("runs", key=key("runs"), step=1,
                    help="Independent repetitions; more runs give narrower error bands and a slower run.")
    c2.number_input("seed", key=key("seed"), step=1, help="Same seed, same results.")
    slots.under("runs", "seed")
    if fixed_agents:
        st.caption("This task has its own agents (one per landmine field).")

    st.subheader("Privacy budget")
    st.radio("budget", BUDGET_MODES, key=key("budget_mode"),
             format_func={"none": "no budget: release every iteration",
                          "stop": "fixed z: stop releasing at ε*",
                          "calibrate": "calibrate z to reach ε* at T"}.get,
             help="Stop: once the next release would exceed ε*, the server goes quiet and agents continue alone. "
                  "Calibrate: pick the smallest z whose ε after T releases is ε*.")
    st.number_input("privacy budget ε*", key=key("budget"), step=0.5, format="%.2f",
                    disabled=st.session_state[key("budget_mode")] == "none",
                    help="The ε you are willing to spend in total; single digits are the usual guideline.")
    slots.under("budget")
    st.selectbox("accountant", ACCOUNTANTS, key=key("accountant"), format_func=ACCOUNTANT_LABELS.get,
                 help="How ε is computed; the mechanism is the same. The paper used the moments accountant; "
                      "RDP and PLD report smaller ε.")
    slots.under("accountant")
    st.number_input("δ", key=key("delta"), format="%.2e", step=1e-4, placeholder="empty: 1/N^1.1 (paper)",
                    help="Failure probability of the ε guarantee; empty means the paper's 1/N^1.1. Smaller δ: "
                         "larger ε.")
    slots.under("delta")

    st.subheader("Server mechanism")
    c1, c2 = st.columns(2)
    c1.number_input("q (sampling)", key=key("q"), step=0.05, format="%.3f",
                    help="Probability that an agent is used in a round. Larger q: better utility, more privacy loss.")
    c2.number_input("z (noise)", key=key("z"), step=0.1, format="%.2f",
                    help="Noise multiplier. Larger z: less privacy loss, noisier broadcasts (worse utility).")
    slots.under("q", "z")
    c1, c2 = st.columns(2)
    c1.number_input("S (clipping)", key=key("S"), step=1.0, format="%.2f",
                    help="Vectors are clipped to norm S/√P. Small S clips many vectors; large S means more noise. "
                         "No effect on ε.")
    c2.number_input("P (sub-regions)", key=key("P"), step=1,
                    help="Distributed exploration: agents start in one of P sub-regions. More sub-regions explore "
                         "faster but clip at S/√P. No effect on ε.")
    slots.under("S", "P")
    st.radio("subsampling", SAMPLING, key=key("sampling"), horizontal=True,
             format_func={"poisson": "Poisson (paper)", "fixed": "fixed size N·q"}.get,
             help="Poisson: each agent independently with probability q. Fixed: exactly round(Nq) agents (larger ε).")
    slots.under("sampling")

    with st.expander("Agents and weights"):
        st.number_input("random features M", key=key("features"), step=10,
                        help="Size of the vectors the agents send. Larger M: a better GP approximation but more "
                             "clipping and relatively more noise.")
        slots.under("features")
        st.selectbox("1 - p_t schedule", PT_SCHEDULES, key=key("pt_schedule"), format_func=PT_SCHEDULE_LABELS.get,
                     help="Probability of following the server's broadcast instead of the agent's own sample; "
                          "slower decay uses the others longer.")
        if st.session_state[key("pt_schedule")] == "constant":
            st.number_input("constant 1 - p_t", key=key("pt_constant"), step=0.1,
                            help="Share of iterations in which an agent follows the broadcast.")
        slots.under("pt_constant")
        st.number_input("initial points per agent", key=key("n_init"), step=1,
                        help="Random queries before BO starts (from the agent's sub-region under DE).")
        slots.under("n_init")
        st.selectbox("sub-region weights", WEIGHTS, key=key("weights"),
                     format_func={"adaptive": "adaptive softmax (paper)", "equal": "equal (ablation)",
                                  "fixed": "non-adaptive softmax (ablation)"}.get,
                     help="How much each agent counts in each sub-region's average. No effect on ε.")
        slots.under("weights")
        st.number_input("weight a", key=key("weight_a"), step=1.0,
                        help="How strongly a sub-region favours its own explorers early on (paper: 15).")
        slots.under("weight_a")
        st.selectbox("temperature schedule", WEIGHT_SCHEDULES, key=key("weight_schedule"),
                     format_func={"synthetic": "synthetic (App. B.1)", "real": "real-world (App. B.2)"}.get,
                     help="When the sub-region weights become uniform (paper App. B): after 10 iterations "
                          "(synthetic) or 40 (real-world).")
        slots.under("weight_schedule")
        st.checkbox("local exploration at initialisation", key=key("local_exploration"),
                    help="Off: initial points come from the whole domain (ablation of paper Fig. 5).")
        st.selectbox("FTS variant", FTS_VARIANTS, key=key("fts_variant"),
                     format_func={"target": "one target (FTS paper)", "concurrent": "all agents at once"}.get,
                     help="Only for the original FTS.")
        st.number_input("heterogeneity α", key=key("alpha"), step=0.1, placeholder="task default",
                        help="Synthetic: how different the agents' functions are (0 = the paper's homogeneous "
                             "setting). Real tasks: Dirichlet split. Empty: the task's default.")
        slots.under("alpha")
        st.number_input("objective seed", key=key("objective_seed"), step=1,
                        help="Fixes the task itself (the GP draw, the data split), not the runs.")
        slots.under("objective_seed")
        st.radio("domain", ("table", "continuous"), key=key("domain"), horizontal=True,
                 help="Table: the task's fixed candidate set (fast, cached). Continuous: any point of the box, "
                      "1000 fresh candidates per iteration (real tasks then train a model per query: slow).")
        slots.under("domain")
        st.number_input("lengthscale", key=key("lengthscale"), format="%.3f", step=0.01, placeholder="task default",
                        help="Of the shared random features. Too small: rough, hard-to-share functions; too large: "
                             "misses narrow peaks. Empty: the task's.")
        slots.under("lengthscale")
        st.number_input("noise variance λ", key=key("noise_var"), format="%.2e", step=1e-3, placeholder="task default",
                        help="Observation noise the agents' GP assumes; larger smooths more. Empty: the task's.")
        slots.under("noise_var")
    st.caption(f"Size limit of this server: {max_work():,} agent-iterations per press of Run "
               "(agents × iterations × runs, summed over the lines).")

values = state_values(FBO_PARAMS, P_)
mirror_to_query(values, FBO_PARAMS)

# ---------------------------------------------------------------- main area
st.title("Federated Bayesian optimisation")
st.write("Agents tune the same kind of model on their own data and share what they learn through a server. "
         "Choose the algorithms and the privacy knobs on the left, press **Run**, and watch utility (lower is "
         "better) and privacy loss ε grow together.")
if ignored:
    st.warning(f"Ignored link parameter(s) that did not fit: {', '.join(ignored)}.")

config_error = None
variants = []
try:
    variants = build_variants(values)
    total = sum(cfg.agents * cfg.iterations * cfg.runs for _, cfg in variants if cfg.agents is not None)
    for _, cfg in variants:
        if cfg.agents is not None:
            check_work_limit(cfg, cfg.agents, max_work())
    if total > max_work():
        raise ConfigError(f"These {len(variants)} lines ask for {total:,} agent-iterations (agents x iterations x "
                          f"runs, summed); the limit here is {max_work():,}. Compare fewer lines or lower the "
                          "agents, iterations or runs.", "runs")
except ConfigError as err:
    config_error = err
    slots.show(err)


def privacy_preview(variants) -> pd.DataFrame | None:
    """ε after T (or where the budget runs out) for each private line, before running."""
    rows = []
    for label, cfg in variants:
        if not cfg.is_private or cfg.agents is None:
            continue
        delta = cfg.delta if cfg.delta is not None else default_delta(cfg.agents)
        common = dict(sampling=cfg.sampling, n_agents=cfg.agents)
        z = cfg.z
        if cfg.calibrate_z:
            z = cached_calibrate_z(cfg.budget, cfg.q, cfg.iterations, delta, cfg.accountant, **common)
        curve = cached_epsilon_curve(cfg.q, z, cfg.iterations, delta, cfg.accountant, **common)
        row = {"line": label, "q": cfg.q, "z": round(z, 4), "δ": f"{delta:.3g}",
               f"ε after T = {cfg.iterations}": round(float(curve[-1]), 3)}
        if cfg.budget is not None and not cfg.calibrate_z:
            allowed = releases_within_budget(curve, cfg.budget)
            row["budget ε*"] = cfg.budget
            row["server releases"] = (f"all {cfg.iterations}" if allowed >= cfg.iterations
                                      else f"{allowed} (stops after t = {allowed})")
        rows.append(row)
    return pd.DataFrame(rows) if rows else None


if config_error is None and any(cfg.is_private for _, cfg in variants):
    try:
        with st.spinner("Accounting the privacy loss..."):
            preview = privacy_preview(variants)
        if preview is not None:
            with st.expander("Privacy before you run", expanded=True):
                st.dataframe(preview, hide_index=True)
    except ConfigError as err:
        config_error = err
        slots.show(err)

if config_error is None and variants and variants[0][1].dataset == "synthetic":
    # Cheap (a GP draw on 1000 points) and shared: build it now so pressing Run starts computing at once.
    first = variants[0][1]
    cached_objective(first.dataset, first.agents, first.alpha, first.objective_seed, first.domain)

bcols = st.columns([1, 1, 5], vertical_alignment="center")
run_clicked = bcols[0].button("Run", type="primary", icon=":material/play_arrow:", key="fbo_run",
                              disabled=config_error is not None, width="stretch")
bcols[1].button("Stop", icon=":material/stop:", key="fbo_stop", disabled=not run_clicked, width="stretch",
                help="Stop the run; the iterations computed so far stay on the charts.")
with bcols[2]:
    slots.fallback()
    if config_error is not None and slots.has(config_error.field):
        st.caption(":material/arrow_back: Run is off until the setting marked on the left is fixed.")
status_slot = st.empty()
progress_slot = st.empty()

ocols = st.columns([1, 1, 4])
log_y = ocols[0].toggle("log scale", key="fbo_opt_log", help="Plot the metric on a log axis.")
band = ocols[1].toggle("error band", value=True, key="fbo_opt_band", help="Shade ± one standard error.")
chart_cols = st.columns([3, 2])
conv_slot = chart_cols[0].empty()
priv_slot = chart_cols[1].empty()


def labelled(state) -> list[tuple[str, object]]:
    return [(label, res) for label, res in zip(state["labels"], state["results"]) if res is not None]


def draw_main(state, suffix: str) -> None:
    runs = labelled(state)
    if not runs:
        return
    first = runs[0][1]
    total = first.config.iterations
    conv_slot.plotly_chart(convergence_figure(convergence_lines(runs), metric_label=first.metric_label,
                                              log_y=log_y, band=band, total_iterations=total),
                           key=f"fbochart_conv_{suffix}")
    private = [res for _, res in runs if res.config.is_private]
    accountant = ACCOUNTANT_LABELS[private[0].config.accountant] if private else ""
    budget = next((res.config.budget for res in private if res.config.budget is not None), None)
    stops = [(label, res.budget_reached_at) for label, res in runs
             if res.config.is_private and res.budget_reached_at is not None and not res.config.calibrate_z]
    waiting = state.get("private_pending") and not private
    priv_slot.plotly_chart(privacy_figure(epsilon_lines(runs), budget=budget, accountant_label=accountant,
                                          stops=stops, total_iterations=total,
                                          **({"empty_text": "ε appears with the first<br>private line's iterations."}
                                             if waiting else {})),
                           key=f"fbochart_priv_{suffix}")


def build_simulation(cfg) -> Simulation:
    try:
        objective = cached_objective(cfg.dataset, cfg.agents, cfg.alpha, cfg.objective_seed, cfg.domain)
    except DatasetUnavailable as err:
        err.field = "dataset"  # its sentence says where to put the data; show it under the control
        raise
    sim = Simulation(cfg, objective)
    check_work_limit(cfg, sim.n_agents, max_work())
    return sim


def run_live(variants) -> None:
    """Step one Simulation per line in turn, so all lines grow together, redrawing every few iterations.

    A line's Simulation is built when it is first stepped, so the first chart
    appears after the first line's initial points, not after every line's set-up.
    """
    state = dict(status="running", labels=[label for label, _ in variants], results=[None] * len(variants),
                 values=dict(values), message="", first_chart=None, seconds=None, csv=None)
    state["private_pending"] = any(cfg.is_private for _, cfg in variants)
    st.session_state[RUN_KEY] = state
    sims, iterators = [], []
    steps_total = sum(cfg.iterations + 1 for _, cfg in variants)
    done, active, draws, last_draw = 0, list(range(len(variants))), 0, 0.0
    while active:
        for k in list(active):
            if k == len(sims):
                sims.append(build_simulation(variants[k][1]))
                iterators.append(iter(sims[k]))
                work = sum(sim.n_agents * sim.config.iterations * sim.config.runs for sim in sims)
                if work > max_work():
                    raise ConfigError(f"These lines ask for more than {max_work():,} agent-iterations, the limit "
                                      "here. Compare fewer lines or lower the agents, iterations or runs.", "runs")
            try:
                record = next(iterators[k])
            except StopIteration:
                active.remove(k)
                continue
            # The page never shows a past round's vectors (the teaching view has its own run); dropping them
            # keeps a stored result small (about 0.3 MB per iteration and line at N = 200).
            record.server_step = None
            done += 1
            now = time.perf_counter()
            if draws == 0 or now - last_draw >= REDRAW_SECONDS:
                state["results"] = [sim.result() for sim in sims] + [None] * (len(variants) - len(sims))
                draw_main(state, f"live{draws}")
                if draws == 0:
                    state["first_chart"] = time.perf_counter() - SCRIPT_START
                draws += 1
                last_draw = time.perf_counter()
        t = min(len(sim.records) - 1 for sim in sims)
        progress_slot.progress(min(done / steps_total, 1.0),
                               text=f"iteration {max(t, 0)} of {variants[0][1].iterations}")
    state["results"] = [sim.result() for sim in sims]
    state["status"] = "done"
    state["seconds"] = time.perf_counter() - SCRIPT_START
    progress_slot.empty()


if run_clicked and config_error is None:
    try:
        run_live(variants)
    except ConfigError as err:
        st.session_state[RUN_KEY] = None
        slots.show(err)
        progress_slot.empty()
    except Exception as err:  # noqa: BLE001 - a failing run must leave the page usable
        st.session_state[RUN_KEY] = dict(status="failed", labels=[], results=[], values=dict(values),
                                          message=f"{type(err).__name__}: {err}", first_chart=None, seconds=None,
                                          csv=None)
        progress_slot.empty()

# ---------------------------------------------------------------- results (stored; plot options do not rerun)
state = st.session_state.get(RUN_KEY)
if state and state["status"] == "running" and not run_clicked:
    state["status"] = "stopped"  # this rerun interrupted the loop (Stop, or a control changed)

if not state:
    # Empty frames before the first run: the browser loads Plotly now, not after Run is pressed.
    conv_slot.plotly_chart(convergence_figure([], empty_text="Press Run: the curves appear here<br>and grow "
                                                             "while the simulation runs."), key="fbochart_conv_empty")
    priv_slot.plotly_chart(privacy_figure([], empty_text="ε after each iteration<br>appears here."),
                           key="fbochart_priv_empty")
elif state["status"] == "failed":
    status_slot.error(f"The run failed and was stopped: {state['message']}. The page still works: change the "
                      "settings and press Run again.", icon=":material/error:")
else:
    runs = labelled(state)
    done_t = min((len(res.records) - 1 for _, res in runs), default=-1)
    T = runs[0][1].config.iterations if runs else 0
    if state["status"] == "done":
        text = f"Finished {len(runs)} line(s) × {T} iterations × {runs[0][1].config.runs} runs"
        if state["seconds"] is not None:
            text += f" in {state['seconds']:.1f} s (first chart after {state['first_chart']:.2f} s)"
        status_slot.success(text + ".", icon=":material/check_circle:")
    else:
        status_slot.warning(f"Stopped at iteration {max(done_t, 0)} of {T}; the charts show the iterations that "
                            "finished.", icon=":material/pause_circle:")
    if state["values"] != values:
        st.info("The settings changed since this run; press **Run** to see them.", icon=":material/info:")
    draw_main(state, "final")

    if runs and done_t >= 0:
        st.subheader("After the run")
        tabs = st.tabs(["Clipping and selection", "Sub-region weights", "Per agent", "Summary"])
        with tabs[0]:
            clipped, selected = clipped_lines(runs), selected_lines(runs)
            if not selected:
                st.info("No line uses the central server (TS and FTS have none), so nothing is selected or clipped.")
            else:
                c1, c2 = st.columns(2)
                with c1:
                    if clipped:
                        S_values = {res.config.S for _, res in runs if res.config.is_private}
                        st.plotly_chart(clipped_figure(clipped, S=S_values.pop() if len(S_values) == 1 else None),
                                        key="fbochart_clipped")
                    else:
                        st.info("Only private algorithms clip (FTS-DE averages every vector as it is).")
                with c2:
                    expected = [(label, res.n_agents * res.config.q) for label, res in runs
                                if res.config.is_private]
                    st.plotly_chart(selected_figure(selected, expected=expected[:1] if len(
                        {round(v, 6) for _, v in expected}) == 1 else expected), key="fbochart_selected")
        with tabs[1]:
            with_weights = [(label, res) for label, res in runs
                            if res.config.n_subregions > 1 and weight_history(res) is not None]
            if not with_weights:
                st.info("Sub-region weights exist only with distributed exploration: FTS-DE or DP-FTS-DE with P > 1.")
            else:
                names = [label for label, _ in with_weights]
                if st.session_state.get("fbo_opt_weights") not in names:
                    st.session_state["fbo_opt_weights"] = names[-1]
                choice = st.selectbox("line", names, key="fbo_opt_weights")
                res = dict(with_weights)[choice]
                iterations, weights = weight_history(res)
                assignment = np.arange(res.n_agents) % res.config.n_subregions
                st.plotly_chart(weights_figure(iterations, weights, assignment), key="fbochart_weights")
                st.caption("Early on each sub-region's average leans on the agents that explored it at "
                           "initialisation; the temperature schedule then makes the weights uniform.")
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
            st.plotly_chart(agent_heatmap(metric, iterations, metric_label=res.metric_label, assignment=assignment,
                                          log_color=log_color), key="fbochart_heatmap")
        with tabs[3]:
            summary = []
            for label, res in runs:
                last = res.records[-1]
                private = res.config.is_private
                summary.append({"line": label, f"final {res.metric_label}": f"{last.mean:.5f}",
                                "± s.e.": f"{last.stderr:.5f}", "agents": res.n_agents,
                                "z used": f"{res.z:.4g}" if private else "–",
                                "δ": f"{res.delta:.3g}" if private else "–",
                                "final ε": f"{last.epsilon:.3f}" if last.epsilon is not None else "–",
                                "budget reached at": (f"t = {res.budget_reached_at}"
                                                      if res.budget_reached_at is not None else "–"),
                                "engine seconds": f"{res.wall_seconds:.2f}"})
            st.dataframe(pd.DataFrame(summary), hide_index=True)

        st.subheader("Downloads")
        if state.get("csv") is None or state["status"] != "done":
            frames = [res.to_frame().assign(line=label) for label, res in runs]
            state["csv"] = pd.concat(frames, ignore_index=True).to_csv(index=False).encode()
        config_json = json.dumps({
            "link_query": query_dict(state["values"], FBO_PARAMS),
            "lines": [{"label": label, "config": res.to_json()["config"]} for label, res in runs],
        }, indent=2, default=float).encode()
        results_json = json.dumps([dict(res.to_json(), label=label) for label, res in runs], default=float).encode()
        dcols = st.columns([1, 1, 1, 2])
        dcols[0].download_button("Results (CSV)", state["csv"], help="Tidy table: one row per line x run x agent x "
                                 "iteration, with the metric and ε.",
                                 file_name="fbo_results.csv", mime="text/csv", icon=":material/download:",
                                 on_click="ignore", key="fbo_dl_csv")
        dcols[1].download_button("Configuration (JSON)", config_json, help="Every resolved setting of every line, "
                                 "and the link parameters that reproduce this page.", file_name="fbo_config.json",
                                 mime="application/json", icon=":material/download:", on_click="ignore",
                                 key="fbo_dl_config")
        dcols[2].download_button("Curves and ε (JSON)", results_json, help="Per line: the JSON object "
                                 "`python -m engine fbo` prints (curve, standard error, ε, clipping).",
                                 file_name="fbo_curves.json", mime="application/json", icon=":material/download:",
                                 on_click="ignore", key="fbo_dl_json")
        st.caption("The address bar holds the current settings: copy the link to share or reproduce this "
                   "configuration. Every chart has a camera button for a PNG.")
