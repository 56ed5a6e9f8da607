"""The PO-GP-UCB page's controls: their parameters, the paper presets, the sidebar, and the settings they describe."""

from __future__ import annotations

import math

import streamlit as st

from engine.pogpucb import HYPER_MODES, TASK_DEFAULTS, TASKS, PoConfig
from engine.pogpucb.config import HYPER_MODE_LABELS
from engine.pogpucb.presets import paper_presets
from engine.pogpucb.variants import COMPARE, build_variants, epsilon_from
from ui.kit.errors import ErrorSlots
from ui.kit.state import MAX_TEXT, Ignored, Param, current_values, params_of, seed_controls, set_state

PREFIX = "po_"
RUN_KEY = "po_run_state"           # the page's LiveRun
EPS_MODES = ("log", "eps")
# The page's starting values; a PoConfig field is typed and bounded for the URL by its declaration.
PARAMS = params_of(PoConfig, dict(
    dataset="synthetic", eps_mode="log", log_epsilon=1.1, epsilon=round(math.exp(1.1), 4), delta=1e-5, r=10,
    iterations=50, runs=10, seed=0, compare="none", values="", hyperparameters="shared"),
    eps_mode=Param("log", str, EPS_MODES),
    log_epsilon=Param(1.1, float, low=-20.0, high=20.0),
    compare=Param("none", str, COMPARE),
    values=Param("", str),
)
# Every reproduced figure and table (engine/pogpucb/presets.py), their verdicts quoted beside the chart.
PAPER_PRESETS = paper_presets()
PRESETS = {name: label for name, (label, _, _) in PAPER_PRESETS.items()}


def preset_values(name: str) -> dict:
    """Control values for a paper preset (the paper averages 50 runs; 10 keep it quick here)."""
    return dict(runs=10, seed=0, hyperparameters="shared", **PAPER_PRESETS[name][2])


def _load_preset() -> None:
    name = st.session_state.get("po_preset_choice")
    if name in PRESETS:
        set_state(preset_values(name), PREFIX)


def _dataset_changed() -> None:
    """Take the new data set's paper defaults for r, delta and epsilon (delta must stay below 1/n)."""
    defaults = TASK_DEFAULTS[st.session_state[_key("dataset")]]
    set_state(dict(r=defaults["r"], delta=defaults["delta"], log_epsilon=defaults["log_epsilon"],
                   epsilon=round(math.exp(defaults["log_epsilon"]), 4), compare="none", values=""), PREFIX)


def _key(name: str) -> str:
    return PREFIX + name


def init() -> list[Ignored]:
    """Seed the controls (a ``?preset=`` link first, then the URL's values); returns ignored parameters."""
    return seed_controls(PARAMS, PREFIX, presets=PRESETS, preset_values=preset_values,
                         choice_key="po_preset_choice")


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)


def configs(values: dict) -> tuple[PoConfig, list[tuple[str, PoConfig]]]:
    """The controls' own PoConfig and the (label, PoConfig) of every curve; raises ConfigError naming the field."""
    as_log = values["eps_mode"] == "log"
    base = PoConfig(dataset=values["dataset"],
                    epsilon=epsilon_from(values["log_epsilon"] if as_log else values["epsilon"], as_log),
                    delta=values["delta"], r=values["r"], iterations=values["iterations"], runs=values["runs"],
                    seed=values["seed"], hyperparameters=values["hyperparameters"])
    return base, build_variants(base, values["compare"], values["values"], as_log=as_log)


def sidebar(slots: ErrorSlots):
    """Every control of the page (call inside ``st.sidebar``); returns the places for the ε and δ notes."""
    st.header("Settings")
    st.selectbox("paper preset", tuple(PRESETS), index=None, key="po_preset_choice", on_change=_load_preset,
                 placeholder="Load a table of the paper...", format_func=PRESETS.get,
                 help="Tables 1-3: fixed ε, r varied on the synthetic GP; Fig. 2a: r = 10, ε varied. "
                      "10 runs instead of the paper's 50 to stay quick.")
    st.selectbox("data set", tuple(TASKS), key=_key("dataset"), format_func=TASKS.get, on_change=_dataset_changed,
                 help="Synthetic GP and Branin-Hoo: 100 x 100 grids (n = 10,000, d = 2). Diabetes: 442 patients, "
                      "10 features, f = log disease progression.")
    slots.under("dataset")
    st.radio("enter ε as", EPS_MODES, key=_key("eps_mode"), horizontal=True,
             format_func={"log": "log ε (as the paper)", "eps": "ε"}.get)
    if st.session_state[_key("eps_mode")] == "log":
        st.number_input("log ε", key=_key("log_epsilon"), step=0.1, format="%.2f",
                        help="The paper reports ε as exp(1.1), exp(1.3), ... Larger ε: weaker privacy, smaller ω.")
        slots.under("log_epsilon")
    else:
        st.number_input("ε", key=_key("epsilon"), step=0.5, format="%.4f",
                        help="Privacy loss ε > 0. Larger ε: weaker privacy, smaller ω.")
        slots.under("epsilon")
    eps_caption = st.empty()
    st.number_input("δ", key=_key("delta"), format="%.1e", step=1e-5,
                    help="DP failure probability in (0, 1); the paper keeps δ below 1/n.")
    slots.under("delta")
    delta_caption = st.empty()
    st.number_input("projection dimension r", key=_key("r"), step=1,
                    help="Columns of M. Larger r preserves distances better (Lemma 1) but raises ω.")
    slots.under("r")
    st.number_input("iterations T", key=_key("iterations"), step=10)
    slots.under("iterations")
    st.number_input("runs", key=_key("runs"), step=5,
                    help="Each run draws its own M and its own initial rows; curves show mean ± standard error.")
    slots.under("runs")
    st.number_input("seed", key=_key("seed"), step=1)
    slots.under("seed")

    st.subheader("Compare")
    st.selectbox("also vary", COMPARE, key=_key("compare"),
                 format_func={"none": "nothing", "epsilon": "ε (one curve per value)",
                              "r": "r (one curve per value)"}.get)
    if st.session_state[_key("compare")] != "none":
        unit = ("log ε" if st.session_state[_key("eps_mode")] == "log" else "ε") \
            if st.session_state[_key("compare")] == "epsilon" else "r"
        st.text_input(f"values of {unit}", key=_key("values"), placeholder="e.g. 3, 10, 20",
                      max_chars=MAX_TEXT,
                      help="Separated by commas, at most 6. The non-private baseline runs once.")
        slots.under("values")
    with st.expander("Modeler"):
        st.radio("kernel hyperparameters", HYPER_MODES, key=_key("hyperparameters"), format_func=HYPER_MODE_LABELS.get,
                 help="shared follows the paper's analysis (Sec. 3.1: the same hyperparameters for k(x, x') and "
                      "k(z, z')); refit lets the modeler learn them from its own observations, which undoes a "
                      "uniform lift of the singular values.")
    slots.under("hyperparameters")
    return eps_caption, delta_caption


# Query parameters of the page that a sweep row can fill (epsilon given directly, so eps_mode=eps).
LINK_FIELDS = ("dataset", "epsilon", "delta", "r", "iterations", "runs", "seed", "hyperparameters")
