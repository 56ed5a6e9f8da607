"""DP-HYPE: private distributed hyperparameter voting, with live vote histograms."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from engine.hype import HYPE_DATASETS, MODES, HypeConfig, iter_hype
from engine.hype.calibration import effective_noise, epsilon_for_sigma, resolve_noise
from engine.hype.config import MODE_LABELS
from engine.hype.scores import score_table
from engine.hype.sweeps import FIG2A_EPSILONS, FIG2A_KS, FIG2A_SIGMA_LOSSES, evaluate_grid
from engine.hype.utility import mean_interval
from engine.hype.voting import per_client_std, sensitivity
from engine.validation import ConfigError
from ui.common import ErrorSlots, Param, init_state, mirror_to_query, set_state, state_values
from ui.hype_figures import (
    accuracy_figure,
    clean_votes_figure,
    fig2a_figure,
    noisy_votes_figure,
    success_curve_figure,
    winners_figure,
)

st.set_page_config(page_title="DP-HYPE · DP-BO Explorer", page_icon=":material/how_to_vote:", layout="wide")

PREFIX = "hype_"
RESULT_KEY = "hype_result"
SPLITS = ("iid", "dirichlet")
# Largest repetitions x clients x candidates one press of Run may ask for (about a minute on a busy 2-core host).
MAX_WORK = 500_000_000
CURVE_EPSILONS = (0.1, 0.25, 0.5, 1.0, 3.0)
CURVE_KS = (1, 2, 3, 5, 10, 20, 50, 100)
CURVE_REPETITIONS = 1000  # per point of the curves (they share losses and noise, so they are cheap)

PARAMS = {
    "mode": Param("simulation", str, MODES),
    "noise": Param("epsilon", str, ("epsilon", "sigma")),
    "epsilon": Param(0.25, float),
    "sigma": Param(20.0, float),
    "delta": Param(1e-5, float),
    "k": Param(5, int),
    "clients": Param(250, int),
    "candidates": Param(100, int),
    "good": Param(5, int),
    "sigma_loss": Param(0.5, float),
    "dataset": Param("digits", str, tuple(HYPE_DATASETS)),
    "split": Param("iid", str, SPLITS),
    "alpha": Param(5.0, float),
    "runs": Param(1, int),
    "xi": Param(0.0, float),
    "dropout": Param(0.0, float),
    "repetitions": Param(1000, int),
    "seed": Param(0, int),
    "curve": Param("epsilon", str, ("epsilon", "k")),
    "fig2a": Param(False, bool),
}
PRESETS = {
    "fig2a": ("Paper Fig. 2a: simulated losses, n = 250, p = 100, |H_good| = 5",
              dict(mode="simulation", noise="epsilon", epsilon=0.25, delta=1e-5, k=5, clients=250, candidates=100,
                   good=5, sigma_loss=0.2, xi=0.0, dropout=0.0, repetitions=2000, seed=0, fig2a=True)),
    "digits-iid": ("Digits, iid clients (paper Fig. 5 setting, n = 100)",
                   dict(mode="data", noise="epsilon", epsilon=1.0, delta=1e-5, k=5, clients=100, dataset="digits",
                        split="iid", xi=0.0, dropout=0.0, repetitions=1000, seed=0, runs=1)),
    "digits-noniid": ("Digits, non-iid clients, Dirichlet α = 0.5 (paper Fig. 6 setting, n = 100)",
                      dict(mode="data", noise="epsilon", epsilon=1.0, delta=1e-5, k=5, clients=100,
                           dataset="digits", split="dirichlet", alpha=0.5, xi=0.0, dropout=0.0, repetitions=1000,
                           seed=0, runs=1)),
}


def key(name: str) -> str:
    return PREFIX + name


def load_preset() -> None:
    name = st.session_state.get("hype_preset_choice")
    if name in PRESETS:
        set_state(PRESETS[name][1], PREFIX)


if st.query_params.get("preset") in PRESETS:
    set_state(PRESETS[st.query_params["preset"]][1], PREFIX)
    del st.query_params["preset"]
ignored = init_state(PARAMS, PREFIX)


# ---------------------------------------------------------------- cached engine calls
@st.cache_data(show_spinner=False, max_entries=16)
def cached_table(dataset: str, clients: int, alpha, seed: int, cache_dir=None) -> dict:
    """Client x candidate score tables: trained once (disk cache), then kept in memory."""
    return score_table(dataset, clients, alpha, seed, cache_dir)


@st.cache_data(show_spinner=False, max_entries=256)
def cached_noise(epsilon, sigma, delta: float, k: int, clients: int, xi: float, dropped: int) -> dict:
    total, eps = resolve_noise(epsilon, sigma, delta, k)
    actual = effective_noise(total, clients, xi, dropped)
    return {"sigma": total, "epsilon": eps, "per_client": per_client_std(total, clients, xi), "actual": actual,
            "actual_epsilon": epsilon_for_sigma(actual, delta, k) if actual != total else eps}


@st.cache_data(show_spinner=False, max_entries=32)
def cached_grid(fields: dict, ks: tuple, epsilons: tuple, sigma_losses: tuple | None = None):
    return evaluate_grid(HypeConfig(**fields), ks, epsilons=epsilons, sigma_losses=sigma_losses,
                         load_table=cached_table)


def build_config(values: dict) -> HypeConfig:
    """The HypeConfig of the controls; raises ConfigError naming the control."""
    noise_eps = values["noise"] == "epsilon"
    config = HypeConfig(
        mode=values["mode"], clients=values["clients"], candidates=values["candidates"], good=values["good"],
        sigma_loss=values["sigma_loss"], k=values["k"], epsilon=values["epsilon"] if noise_eps else None,
        sigma=None if noise_eps else values["sigma"], delta=values["delta"], xi=values["xi"],
        dropout=values["dropout"], repetitions=values["repetitions"], seed=values["seed"],
        dataset=values["dataset"], alpha=values["alpha"] if values["split"] == "dirichlet" else None,
        runs=values["runs"])
    work = config.repetitions * config.clients * config.p
    if work > MAX_WORK:
        raise ConfigError(f"{config.repetitions:,} repetitions x {config.clients} clients x {config.p} candidates "
                          f"is more than this server runs at once ({MAX_WORK:,}); lower the repetitions.",
                          "repetitions")
    return config


# ---------------------------------------------------------------- sidebar: controls
slots = ErrorSlots()
with st.sidebar:
    st.header("Settings")
    st.selectbox("preset", list(PRESETS), index=None, key="hype_preset_choice", on_change=load_preset,
                 placeholder="Load a preset from the paper...", format_func=lambda name: PRESETS[name][0],
                 help="Fills the controls with a setting of the DP-HYPE paper; press Run to see it.")
    st.radio("clients' scores", MODES, key=key("mode"), format_func=MODE_LABELS.get,
             help="Simulated: every client's local loss is N(0, σ_loss²) for good candidates and N(1, σ_loss²) for "
                  "bad ones. Real: clients train a softmax classifier for each of the paper's 100 hyperparameter "
                  "settings on their share of a data set and vote by validation accuracy.")
    slots.under("mode")

    st.subheader("Privacy")
    st.radio("noise given as", ("epsilon", "sigma"), key=key("noise"), horizontal=True,
             format_func={"epsilon": "budget ε", "sigma": "noise σ directly"}.get,
             help="With ε the noise is calibrated (RDP accountant, sensitivity √(2k)); with σ you set the standard "
                  "deviation of the noise on the summed votes (0: no privacy).")
    c1, c2 = st.columns(2)
    with c1:
        if st.session_state[key("noise")] == "epsilon":
            st.number_input("ε", key=key("epsilon"), step=0.25, format="%.3f",
                            help="Privacy budget of the one vote. Smaller ε: more noise, more wrong winners.")
            slots.under("epsilon")
        else:
            st.number_input("σ (on the sum)", key=key("sigma"), step=1.0, format="%.3f",
                            help="Standard deviation of the total noise on every candidate's summed votes.")
            slots.under("sigma", "epsilon")
    with c2:
        st.number_input("δ", key=key("delta"), format="%.1e", step=1e-6,
                        help="Failure probability of the ε guarantee; the paper uses 1e-5.")
        slots.under("delta")
    st.number_input("votes per client k", key=key("k"), step=1,
                    help="Each client votes for its k best candidates. Larger k: more compromise candidates get "
                         "votes, but the sensitivity √(2k) and so the noise grow.")
    slots.under("k")

    st.subheader("Clients and candidates")
    st.number_input("clients n", key=key("clients"), step=50,
                    help="More clients: larger vote gaps between good and bad candidates, while the noise on the "
                         "sum stays the same.")
    slots.under("clients")
    if st.session_state[key("mode")] == "simulation":
        c1, c2 = st.columns(2)
        with c1:
            st.number_input("candidates p", key=key("candidates"), step=10, help="Hyperparameter candidates.")
            slots.under("candidates")
        with c2:
            st.number_input("good |H_good|", key=key("good"), step=1,
                            help="How many candidates are good (local loss around 0 instead of 1).")
            slots.under("good")
        st.number_input("σ_loss", key=key("sigma_loss"), step=0.05, format="%.2f",
                        help="Spread of the local losses. Large σ_loss: good and bad overlap, so clients disagree.")
        slots.under("sigma_loss")
    else:
        st.selectbox("data set", list(HYPE_DATASETS), key=key("dataset"),
                     format_func=lambda name: HYPE_DATASETS[name][1],
                     help="Bundled with scikit-learn (no download). 80 % of it is split among the clients, 20 % "
                          "is the test set of OPT, RANDGUESS and DP-HYPE's choice.")
        slots.under("dataset")
        st.radio("split", SPLITS, key=key("split"), horizontal=True,
                 format_func={"iid": "iid (equal shares)", "dirichlet": "non-iid (Dirichlet)"}.get,
                 help="Non-iid: each class is divided among the clients in Dirichlet(α) proportions.")
        if st.session_state[key("split")] == "dirichlet":
            st.number_input("Dirichlet α", key=key("alpha"), step=0.5, format="%.2f",
                            help="Smaller α: more skewed label mixes and client sizes (paper: 30, 5, 0.5).")
            slots.under("alpha")
        st.number_input("runs (independent splits)", key=key("runs"), step=1,
                        help="Each run splits and trains anew (seed, seed + 1, ...); confidence intervals are over "
                             "runs. The first time, each run trains 100 candidates on every client (seconds).")
        slots.under("runs")

    st.subheader("Dropouts")
    c1, c2 = st.columns(2)
    with c1:
        st.number_input("tolerance ξ", key=key("xi"), step=0.05, format="%.2f",
                        help="Clients scale their noise so that up to ξ·n of them may drop out and the sum still has "
                             "the calibrated noise (paper App. A).")
        slots.under("xi")
    with c2:
        st.number_input("actual dropouts", key=key("dropout"), step=0.05, format="%.2f",
                        help="Fraction of clients that really drop out of every vote. Above ξ the sum has less "
                             "noise than calibrated: ε grows.")
        slots.under("dropout")

    st.subheader("Repetitions")
    c1, c2 = st.columns(2)
    with c1:
        st.number_input("repetitions", key=key("repetitions"), step=500,
                        help="Independent votes (fresh noise; in simulation also fresh losses). The histograms "
                             "update while they run.")
        slots.under("repetitions")
    with c2:
        st.number_input("seed", key=key("seed"), step=1, help="Same seed, same results.")
        slots.under("seed")
    if st.session_state[key("mode")] == "simulation":
        st.checkbox("also compute the paper's Fig. 2a grid", key=key("fig2a"),
                    help=f"Success against σ_loss for k in {list(FIG2A_KS)} and ε in {list(FIG2A_EPSILONS)} "
                         "(a few seconds).")

values = state_values(PARAMS, PREFIX)
mirror_to_query(values, PARAMS)

# ---------------------------------------------------------------- main area
st.title("DP-HYPE: private hyperparameter voting")
st.write(
    "Every client scores each candidate hyperparameter on its own data and votes for its **k** best. Each adds "
    "Gaussian noise to its 0/1 vote vector; a **secure summation** reveals only the sum to the server, which picks "
    "the candidate with the most noisy votes. The noise on the sum is calibrated to (ε, δ) with sensitivity √(2k), "
    "whatever the number of candidates. Press **Run** and watch the votes and the winners accumulate.")
if ignored:
    st.warning(f"Ignored link parameter(s) that did not parse: {', '.join(ignored)}.")

config = None
try:
    config = build_config(values)
    noise = cached_noise(config.epsilon, config.sigma, config.delta, config.k, config.clients, config.xi,
                         config.dropped)
except ConfigError as err:
    slots.show(err)

if config is not None:
    m = st.columns(5)
    m[0].metric("ε of one vote", "∞ (no noise)" if math.isinf(noise["epsilon"]) else f"{noise['epsilon']:.3g}")
    m[1].metric("σ on the sum", f"{noise['sigma']:.3g}", help=f"Sensitivity √(2k) = {sensitivity(config.k):.3g}.")
    m[2].metric("σ per client", f"{noise['per_client']:.3g}",
                help="Each client adds N(0, σ² / ((1 - ξ) n)) to every entry of its vote vector.")
    actual_eps = "∞" if math.isinf(noise["actual_epsilon"]) else f"{noise['actual_epsilon']:.3g}"
    m[3].metric("σ actually on the sum", f"{noise['actual']:.3g}",
                delta=None if config.dropped == 0 else f"{config.dropped} of {config.clients} clients drop out",
                delta_color="off")
    m[4].metric("actual ε", actual_eps,
                delta=None if noise["actual"] >= noise["sigma"] - 1e-12 else "above the budget: too many dropouts",
                delta_color="inverse")

bcols = st.columns([1, 6], vertical_alignment="center")
run_clicked = bcols[0].button("Run", type="primary", icon=":material/play_arrow:", key="hype_run",
                              disabled=config is None, width="stretch")
with bcols[1]:
    slots.fallback()
status_slot = st.empty()
progress_slot = st.empty()
top = st.columns(2)
clean_slot, noisy_slot = top[0].empty(), top[1].empty()
winners_slot = st.empty()
summary_slot = st.empty()


def draw_empty() -> None:
    """Empty frames before the first run (the browser loads Plotly now, not after Run)."""
    clean_slot.plotly_chart(clean_votes_figure(None, None), key="hype_clean_empty")
    noisy_slot.plotly_chart(noisy_votes_figure(None, None, None), key="hype_noisy_empty")
    winners_slot.plotly_chart(winners_figure(None, None), key="hype_winners_empty")


def draw(result, suffix: str) -> None:
    labels = result.labels
    clean_slot.plotly_chart(clean_votes_figure(result.clean_votes, result.good, labels=labels,
                                               title="Clean votes per candidate (last repetition)"),
                            key=f"hype_clean_{suffix}")
    noisy_slot.plotly_chart(noisy_votes_figure(result.noisy_votes, result.good, result.winner, labels=labels,
                                               noise_std=result.noise_std), key=f"hype_noisy_{suffix}")
    winners_slot.plotly_chart(winners_figure(result.winner_counts, result.good, result.repetitions, labels=labels,
                                             total=result.config.repetitions), key=f"hype_winners_{suffix}")


def draw_summary(result) -> None:
    with summary_slot.container():
        cols = st.columns(4)
        low, high = result.success_ci
        cols[0].metric("good candidate chosen", f"{result.success_rate:.1%}",
                       help=f"95 % interval {low:.1%} to {high:.1%} over {result.repetitions:,} repetitions.")
        cols[1].metric("Theorem V.1 bound", f"{result.bound:.1%}",
                       help="Mean over repetitions of 1 - |H_bad| σ/(γ√π) exp(-γ²/4σ²) given the clean votes; "
                            "0 when a bad candidate has as many clean votes as a good one (γ ≤ 0).")
        cols[2].metric("vote gap γ (last)", f"{result.gamma:g}",
                       help="Fewest clean votes of a good candidate minus most clean votes of a bad one.")
        cols[3].metric("winner (last)", f"#{result.winner}",
                       help=result.labels[result.winner] if result.labels else None)
        if result.config.mode == "data":
            acc = result.accuracy_summary()
            cols = st.columns(3)
            for col, name, label in ((cols[0], "accuracy_dp_hype", "DP-HYPE accuracy"),
                                     (cols[1], "accuracy_opt", "OPT accuracy"),
                                     (cols[2], "accuracy_randguess", "RANDGUESS accuracy")):
                lo, hi = acc[name + "_ci"]
                col.metric(label, f"{acc[name]:.3f}",
                           help=f"95 % interval {lo:.3f} to {hi:.3f}" if hi > lo else "one run: a single value")
            good = np.flatnonzero(result.good)
            st.caption(f"Good candidates: test accuracy within {result.config.good_within:g} of OPT "
                       f"({len(good)} of {result.config.p}). Accuracies are of candidates trained by federated "
                       "averaging over all clients, scored on the held-out test split.")


def run_live(config: HypeConfig) -> None:
    if config.mode == "data":
        with status_slot.container(), st.spinner("Training every candidate on every client (once per split; "
                                                 "cached afterwards)..."):
            for run in range(config.runs):
                cached_table(config.dataset, config.clients, config.alpha, config.seed + run, config.cache_dir)
    every = max(100, config.repetitions // 10)
    result = None
    for count, result in enumerate(iter_hype(config, every=every, load_table=cached_table)):
        progress_slot.progress(result.repetitions / config.repetitions,
                               text=f"{result.repetitions:,} of {config.repetitions:,} repetitions")
        draw(result, f"live{count}")
    progress_slot.empty()
    st.session_state[RESULT_KEY] = result


if run_clicked and config is not None:
    try:
        run_live(config)
    except ConfigError as err:
        slots.show(err)

result = st.session_state.get(RESULT_KEY)
if result is None:
    draw_empty()
    st.stop()

if not run_clicked:
    draw(result, "stored")
if config is None:
    st.stop()  # an invalid control: its sentence is shown, nothing more is computed
stale = result.config != config
text = (f"{result.repetitions:,} votes of {result.config.clients} clients on {result.config.p} candidates "
        f"in {result.elapsed:.1f} s.")
if stale:
    status_slot.info("The settings changed since this run: press Run to update. " + text, icon=":material/info:")
else:
    status_slot.success(text, icon=":material/check_circle:")
draw_summary(result)

# ---------------------------------------------------------------- curves over epsilon or k
shown = result.config
st.subheader("Success probability and Theorem V.1's bound")
curve_kind = st.radio("against", ("epsilon", "k"), key=key("curve"), horizontal=True,
                      format_func={"epsilon": "privacy budget ε", "k": "votes per client k"}.get,
                      help="Each point repeats the vote with the other settings of the last run (at most "
                           f"{CURVE_REPETITIONS:,} repetitions per point, sharing losses and noise).")
fields = shown.replace(repetitions=min(shown.repetitions, CURVE_REPETITIONS)).to_dict()
with st.spinner("Repeating the vote for every point..."):
    if curve_kind == "epsilon":
        epsilons = tuple(sorted(set(CURVE_EPSILONS) | ({float(result.epsilon)} if math.isfinite(result.epsilon)
                                                      else set())))
        grid = cached_grid(fields, (shown.k,), epsilons)
        x, x_label, mark, log_x = epsilons, "privacy budget ε (log scale)", result.epsilon, True
        success, ci, bound = grid.success_rate[0, 0], grid.success_ci()[0, 0], grid.bound[0, 0]
    else:
        ks = tuple(k for k in CURVE_KS if k <= shown.p) + ((shown.k,) if shown.k not in CURVE_KS else ())
        ks = tuple(sorted(set(ks)))
        noise_eps = shown.epsilon if shown.epsilon is not None else result.epsilon
        if not math.isfinite(noise_eps):
            st.info("Without noise (σ = 0) there is no ε to hold fixed while k changes.")
            st.stop()
        grid = cached_grid(fields, ks, (float(noise_eps),))
        x, x_label, mark, log_x = ks, f"votes per client k (ε = {noise_eps:.3g} fixed)", shown.k, True
        success, ci, bound = grid.success_rate[0, :, 0], grid.success_ci()[0, :, 0], grid.bound[0, :, 0]
cols = st.columns(2) if shown.mode == "data" and curve_kind == "epsilon" else [st.container()]
cols[0].plotly_chart(success_curve_figure(x, success, ci, bound, x_label=x_label, log_x=log_x, mark=mark),
                     key="hype_success_chart")
if shown.mode == "data" and curve_kind == "epsilon":
    opt, rand = mean_interval(grid.opt), mean_interval(grid.randguess)
    cols[1].plotly_chart(accuracy_figure(epsilons, grid.accuracy_interval()[0], opt[0], rand[0], opt_ci=opt[1:],
                                         randguess_ci=rand[1:]), key="hype_accuracy")

if shown.mode == "simulation" and values["fig2a"]:
    st.subheader("Paper Fig. 2a")
    fig2a_fields = shown.replace(repetitions=min(shown.repetitions, 2000)).to_dict()
    ks_2a = tuple(k for k in FIG2A_KS if k <= shown.p)
    with st.spinner("Computing the Fig. 2a grid (a few seconds)..."):
        grid2a = cached_grid(fig2a_fields, ks_2a, FIG2A_EPSILONS, FIG2A_SIGMA_LOSSES)
    st.plotly_chart(fig2a_figure(FIG2A_SIGMA_LOSSES, ks_2a, FIG2A_EPSILONS, grid2a.success_rate, grid2a.bound),
                    key="hype_fig2a_chart")
    st.caption(f"n = {shown.clients}, p = {shown.p}, |H_good| = {shown.good}, δ = {shown.delta:g}, "
               f"{grid2a.repetitions:,} repetitions per point. Larger k helps once σ_loss makes clients disagree; "
               "k = p makes every candidate tie and the winner a random guess.")
