"""The DP-HYPE page's controls: their parameters, presets, the sidebar, and the configuration they describe."""

from __future__ import annotations

import streamlit as st

from engine.hype import HYPE_DATASETS, MODES, HypeConfig
from engine.hype.config import MODE_LABELS
from engine.hype.presets import paper_presets
from engine.hype.sweeps import FIG2A_EPSILONS, FIG2A_KS
from engine.limits import check, hype_cost
from ui.kit.errors import ErrorSlots
from ui.kit.run_loop import LiveRun
from ui.kit.state import Ignored, Param, current_values, params_of, seed_controls, set_state

PREFIX = "hype_"
RUN_KEY = "hype_run_state"         # the page's LiveRun
SPLITS = ("iid", "dirichlet")
NOT_LINKED = ()                   # HypeConfig fields a link never carries
# The page's starting values; a HypeConfig field is typed and bounded for the URL by its declaration.
PARAMS = params_of(HypeConfig, dict(
    mode="simulation", noise="epsilon", epsilon=0.25, sigma=20.0, delta=1e-5, k=5, clients=250, candidates=100,
    good=5, sigma_loss=0.5, dataset="digits", split="iid", alpha=5.0, runs=1, xi=0.0, dropout=0.0,
    repetitions=1000, seed=0, curve="epsilon", fig2a=False),
    noise=Param("epsilon", str, ("epsilon", "sigma")),
    split=Param("iid", str, SPLITS),
    curve=Param("epsilon", str, ("epsilon", "k")),
    fig2a=Param(False, bool),
)
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
    # The reproduced figures (engine/hype/presets.py), their verdicts quoted beside the chart.
    **{name: (label, values) for name, (label, _, values) in paper_presets().items()},
}


def _key(name: str) -> str:
    return PREFIX + name


def _load_preset() -> None:
    name = st.session_state.get("hype_preset_choice")
    if name in PRESETS:
        set_state(PRESETS[name][1], PREFIX)


def init() -> list[Ignored]:
    """Seed the controls (a ``?preset=`` link first, then the URL's values); returns ignored parameters."""
    return seed_controls(PARAMS, PREFIX, presets=PRESETS, preset_values=lambda name: PRESETS[name][1],
                         choice_key="hype_preset_choice")


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)


def settings() -> dict:
    """The DP-HYPE settings another page should use: its last run's, else its controls, else the defaults."""
    run = st.session_state.get(RUN_KEY)
    if isinstance(run, LiveRun) and isinstance(run.values, dict):
        values = run.values
    else:
        values = {name: st.session_state[_key(name)] for name in PARAMS if _key(name) in st.session_state}
    return {name: values.get(name, param.default) for name, param in PARAMS.items()}


def config_of(values: dict, *, priced: bool = True) -> HypeConfig:
    """The HypeConfig of the controls, priced against the host's limit (unless ``priced`` is False);
    raises ConfigError naming the field."""
    noise_eps = values["noise"] == "epsilon"
    config = HypeConfig(
        mode=values["mode"], clients=values["clients"], candidates=values["candidates"], good=values["good"],
        sigma_loss=values["sigma_loss"], k=values["k"], epsilon=values["epsilon"] if noise_eps else None,
        sigma=None if noise_eps else values["sigma"], delta=values["delta"], xi=values["xi"],
        dropout=values["dropout"], repetitions=values["repetitions"], seed=values["seed"],
        dataset=values["dataset"], alpha=values["alpha"] if values["split"] == "dirichlet" else None,
        runs=values["runs"])
    if priced:
        check(hype_cost(config))
    return config


def sidebar(slots: ErrorSlots) -> None:
    """Every control of the page, with an error slot under each (call inside ``st.sidebar``)."""
    st.header("Settings")
    st.selectbox("preset", list(PRESETS), index=None, key="hype_preset_choice", on_change=_load_preset,
                 placeholder="Load a preset from the paper...", format_func=lambda name: PRESETS[name][0],
                 help="Fills the controls with a setting of the DP-HYPE paper; press Run to see it.")
    st.radio("clients' scores", MODES, key=_key("mode"), format_func=MODE_LABELS.get,
             help="Simulated: every client's local loss is N(0, σ_loss²) for good candidates and N(1, σ_loss²) for "
                  "bad ones. Real: clients train a softmax classifier for each of the paper's 100 hyperparameter "
                  "settings on their share of a data set and vote by validation accuracy.")
    slots.under("mode")

    st.subheader("Privacy")
    st.radio("noise given as", ("epsilon", "sigma"), key=_key("noise"), horizontal=True,
             format_func={"epsilon": "budget ε", "sigma": "noise σ directly"}.get,
             help="With ε the noise is calibrated (RDP accountant, sensitivity √(2k)); with σ you set the standard "
                  "deviation of the noise on the summed votes (0: no privacy).")
    c1, c2 = st.columns(2)
    with c1:
        if st.session_state[_key("noise")] == "epsilon":
            st.number_input("ε", key=_key("epsilon"), step=0.25, format="%.3f",
                            help="Privacy budget of the one vote. Smaller ε: more noise, more wrong winners.")
            slots.under("epsilon")
        else:
            st.number_input("σ (on the sum)", key=_key("sigma"), step=1.0, format="%.3f",
                            help="Standard deviation of the total noise on every candidate's summed votes.")
            slots.under("sigma", "epsilon")
    with c2:
        st.number_input("δ", key=_key("delta"), format="%.1e", step=1e-6,
                        help="Failure probability of the ε guarantee; the paper uses 1e-5.")
        slots.under("delta")
    st.number_input("votes per client k", key=_key("k"), step=1,
                    help="Each client votes for its k best candidates. Larger k: more compromise candidates get "
                         "votes, but the sensitivity √(2k) and so the noise grow.")
    slots.under("k")

    st.subheader("Clients and candidates")
    st.number_input("clients n", key=_key("clients"), step=50,
                    help="More clients: larger vote gaps between good and bad candidates, while the noise on the "
                         "sum stays the same.")
    slots.under("clients")
    if st.session_state[_key("mode")] == "simulation":
        c1, c2 = st.columns(2)
        with c1:
            st.number_input("candidates p", key=_key("candidates"), step=10, help="Hyperparameter candidates.")
            slots.under("candidates")
        with c2:
            st.number_input("good |H_good|", key=_key("good"), step=1,
                            help="How many candidates are good (local loss around 0 instead of 1).")
            slots.under("good")
        st.number_input("σ_loss", key=_key("sigma_loss"), step=0.05, format="%.2f",
                        help="Spread of the local losses. Large σ_loss: good and bad overlap, so clients disagree.")
        slots.under("sigma_loss")
    else:
        st.selectbox("data set", list(HYPE_DATASETS), key=_key("dataset"),
                     format_func=lambda name: HYPE_DATASETS[name][1],
                     help="Bundled with scikit-learn (no download). 80 % of it is split among the clients, 20 % "
                          "is the test set of OPT, RANDGUESS and DP-HYPE's choice.")
        slots.under("dataset")
        st.radio("split", SPLITS, key=_key("split"), horizontal=True,
                 format_func={"iid": "iid (equal shares)", "dirichlet": "non-iid (Dirichlet)"}.get,
                 help="Non-iid: each class is divided among the clients in Dirichlet(α) proportions.")
        if st.session_state[_key("split")] == "dirichlet":
            st.number_input("Dirichlet α", key=_key("alpha"), step=0.5, format="%.2f",
                            help="Smaller α: more skewed label mixes and client sizes (paper: 30, 5, 0.5).")
            slots.under("alpha")
        st.number_input("runs (independent splits)", key=_key("runs"), step=1,
                        help="Each run splits and trains anew (seed, seed + 1, ...); confidence intervals are over "
                             "runs. The first time, each run trains 100 candidates on every client (seconds).")
        slots.under("runs")

    st.subheader("Dropouts")
    c1, c2 = st.columns(2)
    with c1:
        st.number_input("tolerance ξ", key=_key("xi"), step=0.05, format="%.2f",
                        help="Clients scale their noise so that up to ξ·n of them may drop out and the sum still has "
                             "the calibrated noise (paper App. A).")
        slots.under("xi")
    with c2:
        st.number_input("actual dropouts", key=_key("dropout"), step=0.05, format="%.2f",
                        help="Fraction of clients that really drop out of every vote. Above ξ the sum has less "
                             "noise than calibrated: ε grows.")
        slots.under("dropout")

    st.subheader("Repetitions")
    c1, c2 = st.columns(2)
    with c1:
        st.number_input("repetitions", key=_key("repetitions"), step=500,
                        help="Independent votes (fresh noise; in simulation also fresh losses). The histograms "
                             "update while they run.")
        slots.under("repetitions")
    with c2:
        st.number_input("seed", key=_key("seed"), step=1, help="Same seed, same results.")
        slots.under("seed")
    if st.session_state[_key("mode")] == "simulation":
        st.checkbox("also compute the paper's Fig. 2a grid", key=_key("fig2a"),
                    help=f"Success against σ_loss for k in {list(FIG2A_KS)} and ε in {list(FIG2A_EPSILONS)} "
                         "(a few seconds).")
