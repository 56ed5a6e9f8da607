"""PO-GP-UCB: a curator releases a randomly projected private copy of its inputs, a modeler runs GP-UCB on it."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import streamlit as st

from engine.pogpucb import (
    FIG2A,
    HYPER_MODES,
    TABLE_PRESETS,
    TASK_DEFAULTS,
    TASKS,
    PoConfig,
    build_task,
    first_release,
    iter_pogpucb,
    max_admissible_r,
    omega,
)
from engine.pogpucb.config import HYPER_MODE_LABELS
from engine.pogpucb.distortion import pair_ratios, sample_pairs
from engine.pogpucb.presets import paper_regret
from engine.pogpucb.runner import summarise
from engine.validation import ConfigError, check_range
from ui.common import ErrorSlots, Param, init_state, max_work, mirror_to_query, parse_values, set_state, state_values
from ui.fbo_figures import Line
from ui.pogpucb_figures import distortion_figure, omega_figure, regret_figure, release_figure

st.set_page_config(page_title="PO-GP-UCB · DP-BO Explorer", page_icon=":material/visibility_off:", layout="wide")

P_ = "po_"
RUN_KEY = "po_run_state"
REDRAW_SECONDS = 0.3
EPS_MODES = ("log", "eps")
COMPARE = ("none", "epsilon", "r")
PARAMS = {
    "dataset": Param("synthetic", str, tuple(TASKS)),
    "eps_mode": Param("log", str, EPS_MODES),
    "log_epsilon": Param(1.1, float),
    "epsilon": Param(round(math.exp(1.1), 4), float),
    "delta": Param(1e-5, float),
    "r": Param(10, int),
    "iterations": Param(50, int),
    "runs": Param(10, int),
    "seed": Param(0, int),
    "compare": Param("none", str, COMPARE),
    "values": Param("", str),
    "hyperparameters": Param("shared", str, HYPER_MODES),
}
PRESETS = {name: p["label"] for name, p in TABLE_PRESETS.items()} | {"fig2a": FIG2A["label"]}


def key(name: str) -> str:
    return P_ + name


def preset_values(name: str) -> dict:
    """Control values for a paper preset (the paper averages 50 runs; 10 keep it quick here)."""
    common = dict(dataset="synthetic", eps_mode="log", delta=1e-5, iterations=50, runs=10, seed=0,
                  hyperparameters="shared")
    if name == "fig2a":
        logs = FIG2A["log_epsilons"]
        return dict(common, log_epsilon=logs[-1], r=FIG2A["r"], compare="epsilon",
                    values=", ".join(f"{v:g}" for v in logs))
    preset = TABLE_PRESETS[name]
    return dict(common, log_epsilon=preset["log_epsilon"], r=preset["best_r"], compare="r",
                values=", ".join(str(r) for r in preset["r_values"]))


def load_preset() -> None:
    name = st.session_state.get("po_preset_choice")
    if name in PRESETS:
        set_state(preset_values(name), P_)


def dataset_changed() -> None:
    """Take the new data set's paper defaults for r, delta and epsilon (delta must stay below 1/n)."""
    defaults = TASK_DEFAULTS[st.session_state[key("dataset")]]
    set_state(dict(r=defaults["r"], delta=defaults["delta"], log_epsilon=defaults["log_epsilon"],
                   epsilon=round(math.exp(defaults["log_epsilon"]), 4), compare="none", values=""), P_)


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_task(dataset: str, task_seed: int = 0):
    return build_task(dataset, task_seed)


if st.query_params.get("preset") in PRESETS:
    set_state(preset_values(st.query_params["preset"]), P_)
    del st.query_params["preset"]
ignored = init_state(PARAMS, P_)

st.title("PO-GP-UCB: private outsourced Bayesian optimisation")
st.write(
    "A **curator** (a hospital, a bank) holds n inputs and can evaluate an expensive f on any of them; a "
    "**modeler** runs the optimisation but may not see the inputs. The curator centres its data, multiplies it by "
    "a random d x r Gaussian matrix M and releases **Z = r^-1/2 X M**. If the smallest singular value σ_min of the "
    "centred data is below the threshold **ω(ε, δ, r)** it first lifts every singular value to √(s² + ω²), which "
    "is what makes the release (ε, δ)-differentially private but distorts distances. The modeler runs GP-UCB on Z "
    "and asks for f by row number. *Kharkovskii, Dai and Low, ICML 2020, Algorithms 1-2.*")
if ignored:
    st.warning(f"Ignored link parameter(s) that did not parse: {', '.join(ignored)}.")

# ---------------------------------------------------------------- controls
slots = ErrorSlots()
with st.sidebar:
    st.header("Settings")
    st.selectbox("paper preset", tuple(PRESETS), index=None, key="po_preset_choice", on_change=load_preset,
                 placeholder="Load a table of the paper...", format_func=PRESETS.get,
                 help="Tables 1-3: fixed ε, r varied on the synthetic GP; Fig. 2a: r = 10, ε varied. "
                      "10 runs instead of the paper's 50 to stay quick.")
    st.selectbox("data set", tuple(TASKS), key=key("dataset"), format_func=TASKS.get, on_change=dataset_changed,
                 help="Synthetic GP and Branin-Hoo: 100 x 100 grids (n = 10,000, d = 2). Diabetes: 442 patients, "
                      "10 features, f = log disease progression.")
    slots.under("dataset")
    st.radio("enter ε as", EPS_MODES, key=key("eps_mode"), horizontal=True,
             format_func={"log": "log ε (as the paper)", "eps": "ε"}.get)
    if st.session_state[key("eps_mode")] == "log":
        st.number_input("log ε", key=key("log_epsilon"), step=0.1, format="%.2f",
                        help="The paper reports ε as exp(1.1), exp(1.3), ... Larger ε: weaker privacy, smaller ω.")
        slots.under("log_epsilon")
    else:
        st.number_input("ε", key=key("epsilon"), step=0.5, format="%.4f",
                        help="Privacy loss ε > 0. Larger ε: weaker privacy, smaller ω.")
        slots.under("epsilon")
    eps_caption = st.empty()
    st.number_input("δ", key=key("delta"), format="%.1e", step=1e-5,
                    help="DP failure probability in (0, 1); the paper keeps δ below 1/n.")
    slots.under("delta")
    delta_caption = st.empty()
    st.number_input("projection dimension r", key=key("r"), step=1,
                    help="Columns of M. Larger r preserves distances better (Lemma 1) but raises ω.")
    slots.under("r")
    st.number_input("iterations T", key=key("iterations"), step=10)
    slots.under("iterations")
    st.number_input("runs", key=key("runs"), step=5,
                    help="Each run draws its own M and its own initial rows; curves show mean ± standard error.")
    slots.under("runs")
    st.number_input("seed", key=key("seed"), step=1)
    slots.under("seed")

    st.subheader("Compare")
    st.selectbox("also vary", COMPARE, key=key("compare"),
                 format_func={"none": "nothing", "epsilon": "ε (one curve per value)",
                              "r": "r (one curve per value)"}.get)
    if st.session_state[key("compare")] != "none":
        unit = ("log ε" if st.session_state[key("eps_mode")] == "log" else "ε") \
            if st.session_state[key("compare")] == "epsilon" else "r"
        st.text_input(f"values of {unit}", key=key("values"), placeholder="e.g. 3, 10, 20",
                      help="Separated by commas, at most 6. The non-private baseline runs once.")
        slots.under("values")
    with st.expander("Modeler"):
        st.radio("kernel hyperparameters", HYPER_MODES, key=key("hyperparameters"), format_func=HYPER_MODE_LABELS.get,
                 help="shared follows the paper's analysis (Sec. 3.1: the same hyperparameters for k(x, x') and "
                      "k(z, z')); refit lets the modeler learn them from its own observations, which undoes a "
                      "uniform lift of the singular values.")
    slots.under("hyperparameters")

values = state_values(PARAMS, P_)
mirror_to_query(values, PARAMS)


def epsilon_of(value: float, mode: str) -> float:
    if mode == "log":
        return math.exp(check_range("log_epsilon", value, -20, 20, name="log epsilon"))
    return value


def fmt_eps(eps: float) -> str:
    return f"ε = {eps:.4g} = exp({math.log(eps):.2f})" if eps > 0 else f"ε = {eps:g}"


def build_variants(v: dict) -> tuple[PoConfig, list[tuple[str, PoConfig]]]:
    """The controls' own config and the (label, PoConfig) of every curve; raises ConfigError naming the control."""
    mode = v["eps_mode"]
    base = PoConfig(dataset=v["dataset"], epsilon=epsilon_of(v["log_epsilon"] if mode == "log" else v["epsilon"],
                                                             mode),
                    delta=v["delta"], r=v["r"], iterations=v["iterations"], runs=v["runs"], seed=v["seed"],
                    hyperparameters=v["hyperparameters"])
    if v["compare"] == "none":
        return base, [(f"PO-GP-UCB (log ε = {base.log_epsilon:.2f}, r = {base.r})", base)]
    kind = int if v["compare"] == "r" else float
    name = "r" if v["compare"] == "r" else ("log ε" if mode == "log" else "ε")
    variants = []
    for value in parse_values(v["values"], kind, name):
        try:
            if v["compare"] == "r":
                cfg = base.replace(r=value, baseline=not variants)
            else:
                cfg = base.replace(epsilon=epsilon_of(value, mode), baseline=not variants)
        except ConfigError as err:
            raise ConfigError(f"Compared value {name} = {value:g}: {err}", "values") from None
        variants.append((f"PO-GP-UCB (log ε = {cfg.log_epsilon:.2f}, r = {cfg.r})", cfg))
    return base, variants


base, variants, config_error = None, [], None
try:
    base, variants = build_variants(values)
    work = sum(cfg.runs * cfg.iterations * (2 if cfg.baseline else 1) for _, cfg in variants)
    if work > max_work():
        raise ConfigError(f"These settings ask for {work:,} GP-UCB iterations in all; the limit here is "
                          f"{max_work():,}: fewer runs, iterations or compared values.", "runs")
except ConfigError as err:
    config_error = err
    slots.show(err)

# ---------------------------------------------------------------- the curator's decision (instant, no run)
if variants:
    main = base
    with st.spinner("Preparing the data set (ML fit of the kernel, once per session)..."):
        task = cached_task(main.dataset)
    eps_caption.caption(fmt_eps(main.epsilon))
    if main.delta >= 1.0 / task.n:
        delta_caption.warning(f"δ = {main.delta:g} is not below 1/n = {1 / task.n:.1e}, as the paper keeps it.",
                              icon=":material/warning:")
    summaries = [summarise(task.X, cfg.epsilon, cfg.delta, cfg.r) for _, cfg in variants]
    s0 = summarise(task.X, main.epsilon, main.delta, main.r)
    st.subheader("The curator's release")
    cols = st.columns([1, 1, 1, 1.3])
    cols[0].metric("σ_min of the centred inputs", f"{s0.sigma_min:,.1f}", help="Smallest singular value of X after "
                   "centring; inputs are scaled to a maximal norm of 25 (paper Sec. 4).")
    cols[1].metric(f"ω at r = {main.r}", f"{s0.omega:,.1f}", help="Algorithm 1, line 5: "
                   "16 √(r log(2/δ)) log(16 r/δ) / ε, here at the r and ε of the controls.")
    cols[2].metric("largest admissible r", s0.max_admissible_r or "none",
                   help="The largest r with σ_min ≥ ω at this ε and δ; the paper recommends exactly this r.")
    if values["compare"] == "r" and len(variants) > 1:
        best = max_admissible_r(s0.sigma_min, main.epsilon, main.delta, [cfg.r for _, cfg in variants])
        cols[2].caption(f"among the compared r: {best or 'none'}")
    with cols[3]:
        for (label, cfg), s in zip(variants, summaries):
            tag = f"log ε = {cfg.log_epsilon:.2f}, r = {cfg.r}"
            if s.preserves:
                st.success(f"**{tag}: σ_min ≥ ω**, distances preserved (line 7).", icon=":material/check_circle:")
            else:
                st.warning(f"**{tag}: σ_min < ω**, singular values lifted (line 9); distances may grow by up to "
                           f"C' = {s.distortion_bound:.3g}x.", icon=":material/warning:")

    r_top = max(50, 2 * max(cfg.r for _, cfg in variants), 2 * s0.max_admissible_r)
    r_grid = np.arange(1, min(r_top, 500) + 1)
    eps_values = sorted({cfg.epsilon for _, cfg in variants})
    curves = [(f"ω, log ε = {math.log(e):.2f}", omega(r_grid, e, main.delta)) for e in eps_values]
    marks = [(f"log ε = {cfg.log_epsilon:.2f}, r = {cfg.r}", cfg.r, s.omega)
             for (_, cfg), s in zip(variants, summaries)]
    samples, bounds = [], []
    pair_i, pair_j = sample_pairs(task.n, 2000, np.random.default_rng(1))
    releases = [first_release(cfg)[1] for _, cfg in variants]
    for (label, cfg), s, rel in zip(variants, summaries, releases):
        samples.append((f"log ε = {cfg.log_epsilon:.2f}, r = {cfg.r}",
                        pair_ratios(rel.X_centred, rel.Z, pair_i, pair_j)))
        if not s.preserves:
            bounds.append((f"C' = {s.distortion_bound:.3g}", s.distortion_bound))
    ccols = st.columns(2)
    ccols[0].plotly_chart(omega_figure(r_grid, curves, s0.sigma_min, selected=marks), key="po_omega")
    ccols[1].plotly_chart(distortion_figure(samples, bounds=bounds[:3]), key="po_distortion")

    shown = 0
    if len(variants) > 1:
        if st.session_state.get("po_release_choice", 0) >= len(variants):
            st.session_state["po_release_choice"] = 0
        shown = st.columns([1, 2])[0].selectbox(
            "release shown", range(len(variants)), key="po_release_choice",
            format_func=lambda i: f"log ε = {variants[i][1].log_epsilon:.2f}, r = {variants[i][1].r}")
    rel = releases[shown]
    rows = np.random.default_rng(0).choice(task.n, size=min(2500, task.n), replace=False)
    st.plotly_chart(release_figure(rel.X_centred[rows, :2], rel.Z[rows, :2], task.f[rows],
                                   input_names=task.input_names[:2],
                                   released_label=f"r = {rel.r}" + (", lifted" if rel.branch == "lift" else "")),
                    key="po_release")
    st.caption("Each run draws its own M; these panels show run 1's. Larger r concentrates the distance ratio "
               "|z − z'|² / |x − x'|² around 1 (Lemma 1); lifting the singular values stretches distances by up "
               "to C' (Theorem 2).")

# ---------------------------------------------------------------- runs
st.subheader("Simple regret: PO-GP-UCB against non-private GP-UCB")
bcols = st.columns([1, 1, 5], vertical_alignment="center")
run_clicked = bcols[0].button("Run", type="primary", icon=":material/play_arrow:", key="po_run",
                              disabled=config_error is not None, width="stretch")
log_y = bcols[1].toggle("log scale", key="po_log_y")
with bcols[2]:
    slots.fallback()
progress_slot = st.empty()
chart_slot = st.empty()


def regret_lines(state) -> list[Line]:
    lines = []
    for label, res in zip(state["labels"], state["results"]):
        if res is None:
            continue
        lines.append(Line(label, res.iterations, res.curve, res.curve_stderr))
        if res.baseline_regrets is not None:
            lines.append(Line("GP-UCB on X (non-private)", res.iterations, res.baseline_curve, res.baseline_stderr,
                              baseline=True))
    return lines


def draw(state, suffix: str) -> None:
    total = state["results"][0].config.iterations if state["results"][0] is not None else None
    chart_slot.plotly_chart(regret_figure(regret_lines(state), total_iterations=total, log_y=log_y),
                            key=f"po_regret_{suffix}")


def run_live(variants) -> None:
    state = dict(status="running", labels=[label for label, _ in variants], results=[None] * len(variants),
                 values=dict(values), seconds=None)
    st.session_state[RUN_KEY] = state
    start, draws, last = time.perf_counter(), 0, 0.0
    total_runs = sum(cfg.runs for _, cfg in variants)
    done = 0
    for k, (label, cfg) in enumerate(variants):
        for res in iter_pogpucb(cfg):
            state["results"][k] = res
            done += 1
            progress_slot.progress(done / total_runs, text=f"{label}: run {res.runs_done} of {cfg.runs}")
            now = time.perf_counter()
            if draws == 0 or now - last >= REDRAW_SECONDS:
                draw(state, f"live{draws}")
                draws += 1
                last = time.perf_counter()
    state["status"] = "done"
    state["seconds"] = time.perf_counter() - start
    progress_slot.empty()


if run_clicked and config_error is None:
    try:
        run_live(variants)
    except ConfigError as err:
        st.session_state[RUN_KEY] = None
        progress_slot.empty()
        slots.show(err)

state = st.session_state.get(RUN_KEY)
if state and state["status"] == "running" and not run_clicked:
    state["status"] = "stopped"
if not state or not any(res is not None for res in state["results"]):
    chart_slot.plotly_chart(regret_figure([]), key="po_regret_empty")
else:
    draw(state, "final")
    if state["values"] != values:
        st.caption("These curves are from earlier settings; press Run to update them.")
    if state["status"] == "stopped":
        st.caption("The run was interrupted; the curves show the runs that finished.")
    rows, baseline_rows = [], []
    T = next(res for res in state["results"] if res is not None).config.iterations
    for label, res in zip(state["labels"], state["results"]):
        if res is None:
            continue
        cfg = res.config
        paper = None
        if cfg.dataset == "synthetic" and cfg.iterations == 50:
            for name, preset in TABLE_PRESETS.items():
                if abs(preset["log_epsilon"] - cfg.log_epsilon) < 1e-6:
                    paper = paper_regret(name, cfg.r)
        rows.append({"setting": label, "branch": "σ_min ≥ ω" if res.summary.preserves else "σ_min < ω (lifted)",
                     "runs": res.runs_done, f"S_{T} mean": res.curve[-1], "± s.e.": res.curve_stderr[-1],
                     "paper S_50": paper})
        if res.baseline_regrets is not None:
            baseline_rows.append({"setting": "GP-UCB on X (non-private)", "branch": "", "runs": res.runs_done,
                         f"S_{T} mean": res.baseline_curve[-1], "± s.e.": res.baseline_stderr[-1], "paper S_50": None})
    table = pd.DataFrame(rows + baseline_rows).dropna(axis=1, how="all")
    st.dataframe(table, hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in table.columns if c not in ("setting", "branch", "runs")})
    if state["seconds"] is not None:
        st.caption(f"Finished in {state['seconds']:.1f} s. Regret is in units of the output's standard deviation "
                   "(σ_y = 1 for the synthetic GP). Kernel hyperparameters: "
                   f"{HYPER_MODE_LABELS[state['results'][0].config.hyperparameters]}.")
