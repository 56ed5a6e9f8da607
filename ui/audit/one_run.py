"""The Privacy audit page's one-run audit: a whole T-release run with m canaries, audited once.

The server's (:class:`engine.audit.OneRunAudit`, priced by :func:`engine.limits.one_run_cost`) or a built-in
Flower strategy's (:class:`engine.flower.one_run.StrategyOneRun`, :func:`engine.limits.flower_one_run_cost`),
from the same knobs as the many-trial game plus the number of canaries; it runs through the page's one heavy-work
entry like every audit (:func:`ui.audit.panel.audit_line`). :func:`show` draws its result.
"""

from __future__ import annotations

import streamlit as st

from engine.audit import OneRunAudit, OneRunResult
from engine.audit.config import MAX_CANARIES, MIN_CANARIES
from engine.flower.audit_config import BUILTINS, flower_installed
from engine.flower.one_run import StrategyOneRun
from engine.limits import flower_one_run_cost, one_run_cost
from engine.validation import ConfigError
from ui.audit.figures import canaries_figure, canary_scores_figure
from ui.kit.charts import show as show_chart
from ui.kit.run_loop import Priced, checked

MODE, ONE_RUN = "trials", "one-run"
MODES = (MODE, ONE_RUN)
MODE_LABELS = {MODE: "many trials of the game", ONE_RUN: "one run with canaries"}
FLOWER_MAX_CANARIES = 1000        # engine.flower.one_run.MAX_CANARIES (the strategy holds m x m numbers)
ONE_RUN_FIELDS = ("q", "z", "S", "P", "steps", "weights", "weight_a", "weight_schedule", "canary_norm",
                  "delta", "seed", "accountant", "canaries")


def config_of(values: dict, controls: tuple) -> tuple[object, Priced]:
    """The one-run audit the controls describe and its price; raises ConfigError naming the field.

    ``controls``: the page's (CONTROLS of the engine, HALF_NOISE, CONTROL_SCALE)."""
    engine_controls, half_noise, scale = controls
    mechanism = values["mechanism"]
    if mechanism == "hype-votes":
        raise ConfigError("A DP-HYPE vote is one release: its audit plays many trials of the game (choose many "
                          "trials), and the one-run audit is for the server or a Flower strategy.", "mode")
    if mechanism == "flower":
        if not flower_installed():
            raise ConfigError("Flower is not installed on this server, so its strategies cannot be audited here.",
                              "strategy")
        if values["strategy"] not in BUILTINS:
            raise ConfigError(f"Choose one of the built-in strategies: {', '.join(BUILTINS)}.", "strategy")
        if values["canaries"] > FLOWER_MAX_CANARIES:
            raise ConfigError(f"A Flower strategy's one-run audit holds m x m numbers a round: at most "
                              f"{FLOWER_MAX_CANARIES:,} canaries, got {values['canaries']:,}.", "canaries")
        accountant = values["accountant"] if values["accountant"] in ("ma", "rdp", "pld") else "rdp"
        config = StrategyOneRun(strategy=values["strategy"], q=values["q"], z=values["z"], S=values["S"],
                                steps=values["steps"], canaries=values["canaries"], delta=values["delta"],
                                seed=values["seed"], accountant=accountant)
        return config, checked(flower_one_run_cost(config.canaries, config.steps), what="This audit")
    if values["sampling"] != "poisson":
        raise ConfigError("The one-run audit includes each canary or not (add/remove): choose Poisson "
                          "subsampling.", "sampling")
    control = values["control"]
    config = OneRunAudit(**{name: values[name] for name in ONE_RUN_FIELDS},
                         noise_scale=scale if control == half_noise else 1.0,
                         control=control if control in engine_controls else "none")
    return config, checked(one_run_cost(config), what="This audit")


def describe(config) -> str:
    if isinstance(config, OneRunAudit):
        return (f"One run of the DP-FTS-DE server: {config.steps} release(s), {config.canaries:,} canaries, "
                f"q = {config.q:g}, z = {config.z:.4g}, S = {config.S:g}, P = {config.P}")
    return (f"One run of the Flower strategy {config.strategy}: {config.steps} round(s), {config.canaries:,} "
            f"canary replies, q = {config.q:g}, z = {config.z:.4g}")


def knobs(key) -> None:
    """The number of canaries (call inside ``st.sidebar``, in place of the trials)."""
    st.number_input("canaries m", key=key("canaries"), min_value=None, step=1000, format="%d",
                    help=f"Canary agents, each in the run with probability 1/2 ({MIN_CANARIES:,} to "
                         f"{MAX_CANARIES:,}; a Flower strategy at most {FLOWER_MAX_CANARIES:,}). More canaries, "
                         "more guesses: the bound grows about like the logarithm of m.")


def show(result: OneRunResult, status_slot) -> None:
    """The verdict, the numbers and the two figures of a one-run audit."""
    (status_slot.error if result.violation else status_slot.success)(
        result.verdict, icon=":material/gpp_bad:" if result.violation else ":material/verified_user:")
    bound = result.bound
    m = st.columns(5)
    m[0].metric("claimed ε", f"{result.epsilon_claimed:.3g}", help=f"δ = {result.delta:.3g}, {result.accountant}.")
    m[1].metric("one-run lower bound", f"{bound.epsilon_lower:.3g}",
                help="Steinke, Nasr and Jagielski (2023): the ε the guesses' correct count rejects, with "
                     f"{bound.confidence:.0%} confidence (every candidate guess set paid for).")
    m[2].metric("f-DP (if Gaussian)", f"{bound.epsilon_fdp:.3g}",
                help="Mahloujifar, Melis and Chaudhuri (2024): the Gaussian trade-off curve the guesses reject; a "
                     "lower bound when the run's trade-off is Gaussian (many composed releases are close to it).")
    m[3].metric("canaries", f"{bound.canaries:,}", help=f"{bound.included:,} of them were in the run.")
    if bound.best is not None:
        m[4].metric("guesses right", f"{bound.best.correct:,}/{bound.best.guesses:,}",
                    help=f"Statistic {bound.best.statistic}: the top {bound.best.k_in:,} scores guessed in, the "
                         f"bottom {bound.best.k_out:,} out, the rest abstained.")
    left, right = st.columns(2)
    with left:
        show_chart(canary_scores_figure(result), key="auditchart_canaries",
                   about="How many canaries got each score from the one run's broadcasts, those that were in "
                         "(orange) against those that were out (blue), with where the auditor guessed.")
    with right:
        show_chart(canaries_figure(result), key="auditchart_by_canaries",
                   about="The one-run lower bound on the first 100, 300, 1000, ... canaries (each its own "
                         "audit of the same run) beside the claimed ε.")
    st.caption("**What to notice:** one run cannot prove much: even all r guesses right reject at most "
               "ε = log(p / (1 - p)) with p^r at the test's level, and δ's term grows with the canaries, so the "
               "bound grows slowly with m and stays far below the claim of a correct mechanism; it is the "
               "mechanisms that leak (their noise reused, or regenerated from the public seed) that it catches.")
