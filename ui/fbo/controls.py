"""The Federated BO page's controls: their parameters, the sidebar that draws them, and how others read them.

This module owns the page's settings. Other pages read them through
:func:`settings` (the last run's, else the live controls) and link to a
configuration on the page with :func:`link_params`; nobody else spells the
page's session-state keys. What the values mean (lines to compare, presets)
is the engine's: :mod:`engine.fbo.variants`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import streamlit as st

from engine.fbo.config import (
    ALGORITHMS,
    FTS_VARIANTS,
    PT_SCHEDULE_LABELS,
    PT_SCHEDULES,
    WEIGHT_SCHEDULES,
    WEIGHTS,
    FboConfig,
)
from engine.fbo.presets import PRESETS
from engine.fbo.variants import (
    ALGORITHM_SHORT,
    BUDGET_MODES,
    COMPARISON_DEFAULTS,
    FIXED_AGENT_DATASETS,
    PRESET_RUNS,
    VARY_OPTIONS,
    comparison_values,
    preset_runs_within,
    preset_values,
)
from engine.limits import HostLimits, format_seconds
from engine.objectives import DATASETS, dataset_label
from engine.objectives.registry import default_agents
from engine.privacy import ACCOUNTANT_LABELS, ACCOUNTANTS, DELTA_RULE_LABELS, DELTA_RULES, SAMPLING
from ui.kit.errors import ErrorSlots
from ui.kit.run_loop import LiveRun
from ui.kit.state import (
    MAX_TEXT,
    Ignored,
    Param,
    decode_query,
    mirror_to_query,
    params_of,
    query_dict,
    seed_controls,
    set_state,
    state_values,
)

PREFIX = "fbo_"
RUN_KEY = "fbo_run_state"          # the page's LiveRun
PAGE_PRESETS = ("fig2a", "fig2b", "fig2c", "fig2d", "fig4", "fig5-equal", "fig5-global", "fig6", "fig7a", "fig7b",
                "fig7b-fast", "fig12a", "fts1a", "fts1b", "fts1c", "fts2a")

# Every control: the engine's default comparison; a configuration field is typed and bounded for the URL by its
# declaration in FboConfig, the comparison's own controls here.
FBO_PARAMS: dict[str, Param] = params_of(FboConfig, COMPARISON_DEFAULTS,
                                         algorithms=Param(COMPARISON_DEFAULTS["algorithms"], list, ALGORITHMS),
                                         vary=Param(COMPARISON_DEFAULTS["vary"], str, VARY_OPTIONS),
                                         values=Param(COMPARISON_DEFAULTS["values"], str),
                                         budget_mode=Param(COMPARISON_DEFAULTS["budget_mode"], str, BUDGET_MODES))


def _key(name: str) -> str:
    return PREFIX + name


def _short_dataset_label(name: str) -> str:
    """The registry label up to its first ':' or '(' (the sidebar is narrow; the help has the rest)."""
    return dataset_label(name).split(" (")[0].split(":")[0]


def offered_presets() -> tuple[str, ...]:
    """The paper presets this server runs: each within the host's limits, with fewer runs if need be
    (:func:`engine.fbo.variants.preset_runs_within`); a preset too large even with one run is not offered."""
    return tuple(name for name in PAGE_PRESETS if preset_runs_within(name) is not None)


def hosted_preset_values(name: str) -> dict:
    """The comparison a preset loads on this server: the preset's, with the runs per line that fit its limits."""
    return dict(preset_values(name), runs=preset_runs_within(name) or PRESET_RUNS)


def preset_size_note(preset: str | None, values: Mapping[str, Any]) -> str | None:
    """The sentence saying that this server runs ``preset`` with fewer runs than the page's presets (None when it
    runs them all, or the values show no preset at the size this server chose)."""
    runs = preset_runs_within(preset) if preset in PAGE_PRESETS else None
    if runs is None or runs >= PRESET_RUNS or values.get("runs") != runs:
        return None
    limit = HostLimits.from_env().max_seconds
    return (f"On this server the preset runs {runs} run{'s' if runs != 1 else ''} per line instead of "
            f"{PRESET_RUNS}, so that it fits the limit of {format_seconds(limit or 0)} of computing per Run"
            f"{' (one run draws no error band)' if runs == 1 else ''}; a dashboard without this limit (run on your "
            f"own machine) runs it with {PRESET_RUNS}.")


def _load_preset() -> None:
    name = st.session_state.get("fbo_preset_choice")
    if name in offered_presets():
        set_state(hosted_preset_values(name), PREFIX)


def init() -> list[Ignored]:
    """Seed the controls (a ``?preset=`` link first, then the URL's values); returns ignored parameters.

    A link to a preset this server does not offer (too large for its limits) is ignored with a sentence."""
    offered, linked = offered_presets(), st.query_params.get("preset")
    refused = []
    if linked in PAGE_PRESETS and linked not in offered:
        del st.query_params["preset"]
        refused = [Ignored("preset", linked, "that paper preset is too large for this server's limits even with "
                                             "one run per line; run it on your own machine")]
    return refused + seed_controls(FBO_PARAMS, PREFIX, presets=offered, preset_values=hosted_preset_values,
                                   choice_key="fbo_preset_choice")


def current() -> dict:
    """The controls' values now, mirrored into the URL.

    A task with its own agents (landmine: one per field) shows its number, as
    the run uses it, so the link and the exported configuration agree with the run.
    """
    values = state_values(FBO_PARAMS, PREFIX)
    if values["dataset"] in FIXED_AGENT_DATASETS:
        values["agents"] = default_agents(values["dataset"])
    mirror_to_query(values, FBO_PARAMS)
    return values


def settings() -> dict:
    """The Federated BO settings another page should use: its last run's, else its live controls."""
    run = st.session_state.get(RUN_KEY)
    if isinstance(run, LiveRun) and isinstance(run.values, dict):
        return {k: v for k, v in run.values.items() if k in FBO_PARAMS}
    return {name: st.session_state[_key(name)] for name in FBO_PARAMS if _key(name) in st.session_state}


def url_settings() -> dict:
    """The Federated BO settings a link carries (its query parameters that parse)."""
    return decode_query(FBO_PARAMS)


def link_params(config: Mapping[str, Any], algorithms: Iterable[str] | None = None) -> dict[str, str]:
    """Query parameters that open the page on ``config`` (FboConfig fields, e.g. a sweep row)."""
    return query_dict(comparison_values(config, algorithms), FBO_PARAMS)


def sidebar(slots: ErrorSlots) -> None:
    """Every control of the page, with an error slot under each (call inside ``st.sidebar``)."""
    st.header("Settings")
    offered = offered_presets()
    st.selectbox("paper preset", offered, index=None, key="fbo_preset_choice", on_change=_load_preset,
                 placeholder="Load a preset from the paper...", format_func=lambda name: PRESETS[name]["label"],
                 help="Fills every control with a configuration of the DP-FTS-DE paper (3 runs instead of 5 to "
                      "stay fast, fewer where this server's limit needs it); press Run to see it.")
    if len(offered) < len(PAGE_PRESETS):
        names = ", ".join(PRESETS[name]["label"].split(":")[0] for name in PAGE_PRESETS if name not in offered)
        st.caption(f"Not offered here, too large for this server's limits even with one run per line: {names}. "
                   "Run them on your own machine.")

    st.subheader("What to compare")
    st.multiselect("algorithms", ALGORITHMS, key=_key("algorithms"), format_func=ALGORITHM_SHORT.get,
                   help="One line each. TS: agents alone (baseline). FTS: agents borrow each other's vectors. "
                        "FTS-DE: a server averages them per sub-region. DP-FTS, DP-FTS-DE: the same with "
                        "subsampling, clipping and noise; only these spend privacy.")
    slots.under("algorithms")
    st.selectbox("also vary", VARY_OPTIONS, key=_key("vary"),
                 format_func=lambda v: "nothing" if v == "none" else v,
                 help="Run the algorithms it concerns once per value: q, z, S (private algorithms), P (FTS-DE, "
                      "DP-FTS-DE) or M (all).")
    if st.session_state[_key("vary")] != "none":
        st.text_input("values to compare", key=_key("values"), placeholder="e.g. 0.15, 0.25, 0.5",
                      max_chars=MAX_TEXT,
                      help="Comma-separated; each value adds one line per algorithm it concerns.")
    slots.under("values")

    st.subheader("Task")
    st.selectbox("data set", list(DATASETS), key=_key("dataset"), format_func=_short_dataset_label,
                 help="What the agents optimise. Synthetic is instant; real tasks build a table of validation "
                      "scores once (cached). " + "; ".join(dataset_label(name) for name in DATASETS) + ".")
    slots.under("dataset")
    dataset = st.session_state[_key("dataset")]
    fixed_agents = dataset in FIXED_AGENT_DATASETS
    # Paired controls share one error slot under their row, so a sentence gets the sidebar's full width.
    c1, c2 = st.columns(2)
    if fixed_agents:
        # Kept for the other tasks while this one shows its own (a control not drawn loses its value).
        st.session_state[_key("agents")] = st.session_state.get(_key("agents"), FBO_PARAMS["agents"].default)
        # The task's own number (29 landmine fields), not the value the control held for another task.
        c1.number_input("agents N", value=default_agents(dataset), disabled=True, key=_key("agents_fixed"),
                        help="This task has its own agents: one per landmine field.")
    else:
        c1.number_input("agents N", key=_key("agents"), step=10,
                        help="More agents: more information to share, but a slower run.")
    c2.number_input("iterations T", key=_key("iterations"), step=5,
                    help="BO iterations after the initial points; each one is a server release, so privacy loss "
                         "grows with T.")
    slots.under("agents", "iterations")
    c1, c2 = st.columns(2)
    c1.number_input("runs", key=_key("runs"), step=1,
                    help="Independent repetitions; more runs give narrower error bands and a slower run.")
    c2.number_input("seed", key=_key("seed"), step=1, help="Same seed, same results.")
    slots.under("runs", "seed")
    if fixed_agents:
        st.caption("This task has its own agents (one per landmine field).")

    st.subheader("Privacy budget")
    st.radio("budget", BUDGET_MODES, key=_key("budget_mode"),
             format_func={"none": "no budget: release every iteration",
                          "stop": "fixed z: stop releasing at ε*",
                          "calibrate": "calibrate z to reach ε* at T"}.get,
             help="Stop: once the next release would exceed ε*, the server goes quiet and agents continue alone. "
                  "Calibrate: pick the smallest z whose ε after T releases is ε*.")
    st.number_input("privacy budget ε*", key=_key("budget"), step=0.5, format="%.2f",
                    disabled=st.session_state[_key("budget_mode")] == "none",
                    help="The ε you are willing to spend in total; single digits are the usual guideline.")
    slots.under("budget")
    st.selectbox("accountant", ACCOUNTANTS, key=_key("accountant"), format_func=ACCOUNTANT_LABELS.get,
                 help="How ε is computed; the mechanism is the same. RDP is the product's default; the paper "
                      "used the moments accountant (larger ε for the same run); PLD is the tightest.")
    slots.under("accountant")
    st.selectbox("δ rule", DELTA_RULES, key=_key("delta_rule"), format_func=DELTA_RULE_LABELS.get,
                 help="The δ used when the box below is empty. The product's rule keeps δ far below 1/N; the "
                      "paper's 1/N^1.1 is close to 1/N (0.17 for 5 agents) and is used by the paper presets.")
    st.number_input("δ", key=_key("delta"), format="%.2e", step=1e-4, placeholder="empty: the δ rule's",
                    help="Failure probability of the ε guarantee; empty means the δ rule's value for N. Smaller δ: "
                         "larger ε.")
    slots.under("delta_rule", "delta")

    st.subheader("Server mechanism")
    c1, c2 = st.columns(2)
    c1.number_input("q (sampling)", key=_key("q"), step=0.05, format="%.3f",
                    help="Probability that an agent is used in a round. Larger q: better utility, more privacy loss.")
    c2.number_input("z (noise)", key=_key("z"), step=0.1, format="%.2f",
                    help="Noise multiplier. Larger z: less privacy loss, noisier broadcasts (worse utility).")
    slots.under("q", "z")
    c1, c2 = st.columns(2)
    c1.number_input("S (clipping)", key=_key("S"), step=1.0, format="%.2f",
                    help="Vectors are clipped to norm S/√P. Small S clips many vectors; large S means more noise. "
                         "No effect on ε.")
    c2.number_input("P (sub-regions)", key=_key("P"), step=1,
                    help="Distributed exploration: agents start in one of P sub-regions. More sub-regions explore "
                         "faster but clip at S/√P. No effect on ε.")
    slots.under("S", "P")
    st.radio("subsampling", SAMPLING, key=_key("sampling"), horizontal=True,
             format_func={"poisson": "Poisson (paper)", "fixed": "fixed size N·q"}.get,
             help="Poisson: each agent independently with probability q. Fixed: exactly round(Nq) agents (larger ε).")
    slots.under("sampling")

    with st.expander("Agents and weights"):
        st.number_input("random features M", key=_key("features"), step=10,
                        help="Size of the vectors the agents send. Larger M: a better GP approximation but more "
                             "clipping and relatively more noise.")
        slots.under("features")
        st.selectbox("1 - p_t schedule", PT_SCHEDULES, key=_key("pt_schedule"), format_func=PT_SCHEDULE_LABELS.get,
                     help="Probability of following the server's broadcast instead of the agent's own sample; "
                          "slower decay uses the others longer.")
        if st.session_state[_key("pt_schedule")] == "constant":
            st.number_input("constant 1 - p_t", key=_key("pt_constant"), step=0.1,
                            help="Share of iterations in which an agent follows the broadcast.")
        slots.under("pt_constant")
        st.number_input("initial points per agent", key=_key("n_init"), step=1,
                        help="Random queries before BO starts (from the agent's sub-region under DE).")
        slots.under("n_init")
        st.selectbox("sub-region weights", WEIGHTS, key=_key("weights"),
                     format_func={"adaptive": "adaptive softmax (paper)", "equal": "equal (ablation)",
                                  "fixed": "non-adaptive softmax (ablation)",
                                  "proportional": "own explorers a_t, others 1 (Fig. 9 weights 2)",
                                  "proportional-squared": "own explorers a_t², others 1 (Fig. 9 weights 3)"}.get,
                     help="How much each agent counts in each sub-region's average. No effect on ε.")
        slots.under("weights")
        st.number_input("weight a", key=_key("weight_a"), step=1.0,
                        help="How strongly a sub-region favours its own explorers early on (paper: 15).")
        slots.under("weight_a")
        st.selectbox("temperature schedule", WEIGHT_SCHEDULES, key=_key("weight_schedule"),
                     format_func={"synthetic": "synthetic (App. B.1)", "real": "real-world (App. B.2)"}.get,
                     help="When the sub-region weights become uniform (paper App. B): after 10 iterations "
                          "(synthetic) or 40 (real-world).")
        slots.under("weight_schedule")
        st.checkbox("local exploration at initialisation", key=_key("local_exploration"),
                    help="Off: initial points come from the whole domain (ablation of paper Fig. 5).")
        st.selectbox("FTS variant", FTS_VARIANTS, key=_key("fts_variant"),
                     format_func={"target": "one target (FTS paper)", "concurrent": "all agents at once"}.get,
                     help="Only for the original FTS (RGPE and TAF always use one target).")
        for name, label, helptext in (
                ("other_observations", "other agents' t_n", "BO iterations the other agents finished before the "
                                                            "target starts (FTS paper). Empty: T."),
                ("dissimilarity", "dissimilarity d_n", "Synthetic, target setting: one target and N others "
                                                       "whose functions differ by at most d_n. Empty: off."),
                ("targets", "target agents", "Target setting: the first this many agents are targets. Empty: all.")):
            st.number_input(label, key=_key(name), placeholder="off" if name == "dissimilarity" else "default",
                            help=helptext)
            slots.under(name)
        st.number_input("heterogeneity α", key=_key("alpha"), step=0.1, placeholder="task default",
                        help="Synthetic: how different the agents' functions are (0 = the paper's homogeneous "
                             "setting). Real tasks: Dirichlet split. Empty: the task's default.")
        slots.under("alpha")
        st.number_input("objective seed", key=_key("objective_seed"), step=1,
                        help="Fixes the task itself (the GP draw, the data split), not the runs.")
        slots.under("objective_seed")
        st.radio("domain", ("table", "continuous"), key=_key("domain"), horizontal=True,
                 help="Table: the task's fixed candidate set (fast, cached). Continuous: any point of the box, "
                      "1000 fresh candidates per iteration (real tasks then train a model per query: slow).")
        slots.under("domain")
        st.number_input("lengthscale", key=_key("lengthscale"), format="%.3f", step=0.01, placeholder="task default",
                        help="Of the shared random features. Too small: rough, hard-to-share functions; too large: "
                             "misses narrow peaks. Empty: the task's.")
        slots.under("lengthscale")
        st.number_input("noise variance λ", key=_key("noise_var"), format="%.2e", step=1e-3, placeholder="task default",
                        help="Observation noise the agents' GP assumes; larger smooths more. Empty: the task's.")
        slots.under("noise_var")
    limit = HostLimits.from_env().max_seconds
    if limit is not None:
        st.caption(f"Size limit of this server: about {limit:g} s of computing per press of Run "
                   "(estimated from every setting that drives the work, summed over the lines).")
