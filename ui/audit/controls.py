"""The Privacy audit page's controls: parameters (with the URL's limits), the sidebar, and the audit they describe.

The knobs are the fields of :class:`engine.audit.ServerAudit` and
:class:`engine.audit.VoteAudit` (their defaults are the page's), plus the
negative-control switch. "Use the ... settings" fills them from the Federated
BO or DP-HYPE page's configuration through the engine
(:meth:`ServerAudit.from_plan`, :meth:`VoteAudit.from_hype`), so the audit
claims what that run claims.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from engine.audit import MECHANISM_LABELS, MECHANISMS, OneRunAudit, ServerAudit, VoteAudit, audit_cost
from engine.audit.controls import CONTROL_LABELS, CONTROLS
from engine.flower.audit_config import BUILTINS, PARTICIPANT_TARGETS, StrategyAudit
from engine.fbo.config import WEIGHT_SCHEDULES, WEIGHTS
from engine.fbo.variants import COMPARISON_DEFAULTS, build_variants
from engine.hype.config import AGGREGATIONS
from engine.limits import HostLimits
from engine.privacy import ACCOUNTANT_LABELS, ACCOUNTANTS, SAMPLING
from engine.validation import ConfigError
from ui.audit import flower, one_run
from ui.fbo import controls as fbo_controls
from ui.hype import controls as hype_controls
from ui.kit.cached import cached_plan
from ui.kit.errors import ErrorSlots
from ui.kit.run_loop import Priced, checked
from ui.kit.state import Ignored, Param, current_values, init_state, params_of, query_dict, set_state

PREFIX = "audit_"
RUN_KEY = "audit_run_state"        # the page's LiveRun
SOURCE_KEY = "audit_source"        # what "Use the ... settings" last did: ("info" | "error", sentence)
CONTROL_SCALE = 0.5                # the "half-noise" control halves the noise actually added
HALF_NOISE = "half-noise"
PAGE_CONTROLS = ("none", HALF_NOISE) + CONTROLS[1:]
PAGE_CONTROL_LABELS = {**CONTROL_LABELS, HALF_NOISE: "half the noise"}
VOTE_CONTROLS = ("none", HALF_NOISE)     # one release, no subsampling: only the noise can be broken
PAGE_MECHANISMS = MECHANISMS + (flower.MECHANISM,)
PAGE_LABELS = {**MECHANISM_LABELS, flower.MECHANISM: flower.LABEL}

_S, _V = ServerAudit(), VoteAudit()
# Every knob of the two games (their defaults are the page's; typed and bounded for the URL by the fields'
# declarations), plus the page's own: which noise to give and the negative-control switch.
PARAMS: dict[str, Param] = params_of((ServerAudit, VoteAudit, OneRunAudit), {
    "mechanism": _S.mechanism,
    **{name: getattr(_S, name) for name in ("q", "z", "S", "P", "agents", "features", "steps", "sampling",
                                            "weights", "weight_a", "weight_schedule", "canary_norm")},
    "noise": "epsilon", "epsilon": _V.epsilon, "sigma": 12.8,
    **{name: getattr(_V, name) for name in ("k", "candidates", "clients", "aggregation")},
    **{name: getattr(_S, name) for name in ("accountant", "trials", "delta", "seed")},
    "control": "none", "strategy": flower.DEFAULT_STRATEGY, "participant": flower.DEFAULT_PARTICIPANT,
    "mode": one_run.MODE, "canaries": OneRunAudit().canaries,
}, mechanism=Param(_S.mechanism, str, PAGE_MECHANISMS), noise=Param("epsilon", str, ("epsilon", "sigma")),
    mode=Param(one_run.MODE, str, one_run.MODES),
    control=Param("none", str, PAGE_CONTROLS), strategy=Param(flower.DEFAULT_STRATEGY, str, BUILTINS),
    participant=Param(flower.DEFAULT_PARTICIPANT, str, PARTICIPANT_TARGETS))
SERVER_FIELDS = ("q", "z", "S", "P", "agents", "features", "steps", "sampling", "weights", "weight_a",
                 "weight_schedule", "canary_norm")
VOTE_FIELDS = ("k", "candidates", "clients", "aggregation")
COMMON_FIELDS = ("accountant", "trials", "delta", "seed")
# A Flower strategy's game calls its aggregate_train once per trial (about 1 ms): its own default number of
# trials (the command line's), which the page loads when the mechanism becomes a Flower strategy.
MECHANISM_TRIALS = {flower.MECHANISM: StrategyAudit().trials}
FEWER_TRIALS = (10_000, 5_000, 2_000, 1_000)    # a stricter host's default: the most of these its limits allow


def default_trials(mechanism: str) -> int:
    """The number of trials the page starts ``mechanism``'s audit with: its own default, or on a host whose
    limits that does not fit (with the page's other defaults) the most of :data:`FEWER_TRIALS` that does."""
    usual = MECHANISM_TRIALS.get(mechanism, PARAMS["trials"].default)
    values = dict({name: param.default for name, param in PARAMS.items()}, mechanism=mechanism)
    for trials in (usual, *[fewer for fewer in FEWER_TRIALS if fewer < usual]):
        try:
            config_of(dict(values, trials=trials))
        except ConfigError:
            continue
        return trials
    return usual


def _key(name: str) -> str:
    return PREFIX + name


def widget_key(name: str) -> str:
    """The session-state key of control ``name`` (for a control the page draws outside the sidebar)."""
    return _key(name)


def init() -> list[Ignored]:
    """Seed the controls from the URL (values outside their limits are ignored); returns ignored parameters.

    Trials the link does not give are the chosen mechanism's default (:func:`default_trials`); releases a
    one-run link does not give are the one-run audit's default (the paper's T = 40)."""
    seeding = _key("trials") not in st.session_state
    ignored = init_state(PARAMS, PREFIX)
    if seeding and "trials" not in st.query_params:
        st.session_state[_key("trials")] = default_trials(st.session_state[_key("mechanism")])
    if seeding and "steps" not in st.query_params and st.session_state[_key("mode")] == one_run.ONE_RUN:
        st.session_state[_key("steps")] = OneRunAudit().steps
    return ignored


def _mode_changed() -> None:
    """Many trials <-> one run: releases left at one audit's default become the other's."""
    steps = st.session_state.get(_key("steps"))
    defaults = {one_run.MODE: PARAMS["steps"].default, one_run.ONE_RUN: OneRunAudit().steps}
    if steps in defaults.values():
        st.session_state[_key("steps")] = defaults[st.session_state[_key("mode")]]


def _mechanism_changed() -> None:
    """Another mechanism: trials left at a mechanism's default become the new mechanism's (a number the visitor
    typed stays)."""
    trials = st.session_state.get(_key("trials"))
    if trials in {PARAMS["trials"].default, *MECHANISM_TRIALS.values(), *FEWER_TRIALS}:
        st.session_state[_key("trials")] = default_trials(st.session_state[_key("mechanism")])


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)


def config_of(values: dict) -> tuple[ServerAudit | VoteAudit | StrategyAudit, Priced]:
    """The audit the controls describe and its price; raises ConfigError naming the field (the knob to lower)."""
    if values["mode"] == one_run.ONE_RUN:
        return one_run.config_of(values, (CONTROLS, HALF_NOISE, CONTROL_SCALE))
    if values["mechanism"] == flower.MECHANISM:
        return flower.config_of(values, _key)
    common = {name: values[name] for name in COMMON_FIELDS}
    common["noise_scale"] = CONTROL_SCALE if values["control"] == HALF_NOISE else 1.0
    if values["mechanism"] == "fbo-server":
        control = values["control"] if values["control"] in CONTROLS else "none"
        config = ServerAudit(**{name: values[name] for name in SERVER_FIELDS}, **common, control=control)
    else:
        if values["control"] not in VOTE_CONTROLS:
            raise ConfigError("A DP-HYPE vote is one release without subsampling: its negative control is half the "
                              "noise.", "control")
        noise_eps = values["noise"] == "epsilon"
        config = VoteAudit(**{name: values[name] for name in VOTE_FIELDS}, **common,
                           epsilon=values["epsilon"] if noise_eps else None,
                           sigma=None if noise_eps else values["sigma"])
    return config, checked(audit_cost(config), what="This audit")


def describe(config: ServerAudit | VoteAudit | StrategyAudit) -> str:
    """One line: what the audit attacks."""
    if not isinstance(config, (StrategyAudit, ServerAudit, VoteAudit)):
        return one_run.describe(config)
    if isinstance(config, StrategyAudit):
        return flower.describe(config)
    if isinstance(config, ServerAudit):
        return (f"{MECHANISM_LABELS[config.mechanism]}: {config.steps} release(s), q = {config.q:g}, "
                f"z = {config.z:.4g}, S = {config.S:g}, P = {config.P}, {config.sampling} sampling")
    noise = f"ε = {config.epsilon:g}" if config.epsilon is not None else f"σ = {config.sigma:g}"
    return (f"{MECHANISM_LABELS[config.mechanism]}: {noise}, k = {config.k}, p = {config.candidates}, "
            f"n = {config.clients}")


# ---------------------------------------------------------------- settings of the other pages


def values_of(config: ServerAudit | VoteAudit) -> dict:
    """The control values that describe ``config`` (the inverse of :func:`config_of`)."""
    values = {name: value for name, value in dataclasses.asdict(config).items()
              if name in PARAMS and value is not None}
    if isinstance(config, VoteAudit):
        values["noise"] = "epsilon" if config.epsilon is not None else "sigma"
    control = HALF_NOISE if config.noise_scale != 1 else getattr(config, "control", "none")
    return dict(values, mechanism=config.mechanism, control=control)


def link_params(config: ServerAudit | VoteAudit) -> dict[str, str]:
    """Query parameters that open the Privacy audit page on ``config``."""
    return query_dict(values_of(config), PARAMS)


def _set_audit(config: ServerAudit | VoteAudit, source: str) -> None:
    set_state(values_of(config), PREFIX)
    st.session_state[SOURCE_KEY] = ("info", source)


def _take_fbo() -> None:
    """The server of the Federated BO page's first private line (its last run's settings, else its controls)."""
    try:
        values = {**COMPARISON_DEFAULTS, **fbo_controls.settings()}
        private = [(label, cfg) for label, cfg in build_variants(values) if cfg.is_private]
        if not private:
            raise ConfigError("The Federated BO page has no private line to audit; add DP-FTS or DP-FTS-DE there.",
                              "algorithms")
        label, cfg = private[-1]   # DP-FTS-DE when both private algorithms are compared
        plan = cached_plan(cfg)
        config = ServerAudit.from_plan(plan, trials=st.session_state[_key("trials")])
    except ConfigError as err:
        st.session_state[SOURCE_KEY] = ("error", f"The Federated BO settings give nothing to audit: {err}")
        return
    _set_audit(config, f"From the Federated BO page: the {label} line's server ({plan.n_agents} agents, "
                       f"{config.steps} releases; the audit uses {config.agents} agents, which changes only its cost).")


def _take_hype() -> None:
    """The vote of the DP-HYPE page (its last run's settings, else its controls)."""
    try:
        hype = hype_controls.config_of(hype_controls.settings(), priced=False)
        config = VoteAudit.from_hype(hype, trials=st.session_state[_key("trials")])
    except ConfigError as err:
        st.session_state[SOURCE_KEY] = ("error", f"The DP-HYPE settings give nothing to audit: {err}")
        return
    _set_audit(config, f"From the DP-HYPE page: one vote of {hype.clients} clients on {hype.p} candidates "
                       "(claim by RDP, as the run reports it; dropouts are not part of the game).")


# ---------------------------------------------------------------- sidebar


def sidebar(slots: ErrorSlots) -> None:
    """Every control of the page, with an error slot under each (call inside ``st.sidebar``)."""
    st.header("What to audit")
    st.radio("mechanism", PAGE_MECHANISMS, key=_key("mechanism"), format_func=PAGE_LABELS.get,
             on_change=_mechanism_changed,
             help="The server round of private federated BO, DP-HYPE's noisy vote sum, or a built-in Flower "
                  "strategy. The audit runs that code itself, as the simulations (or Flower) call it.")
    mechanism = st.session_state[_key("mechanism")]
    server = mechanism == "fbo-server"
    st.radio("audit", one_run.MODES, key=_key("mode"), format_func=one_run.MODE_LABELS.get, horizontal=True,
             on_change=_mode_changed,
             help="Many trials: the game played again and again, one release or T, and the bound from its error "
                  "rates. One run: the whole T-release run once with m canaries, each in with probability 1/2, "
                  "and the bound from the auditor's guesses (Steinke, Nasr and Jagielski 2023).")
    slots.under("mode")
    one_run_mode = st.session_state[_key("mode")] == one_run.ONE_RUN
    if mechanism == flower.MECHANISM:
        flower.knobs(slots, _key)
    elif server:
        st.button("Use the Federated BO settings", key="audit_take_fbo", on_click=_take_fbo,
                  icon=":material/input:", help="The server of the Federated BO page's private line (its last run, "
                  "else its controls): q, z (calibrated if it calibrates), S, P, releases, δ, accountant.")
    else:
        st.button("Use the DP-HYPE settings", key="audit_take_hype", on_click=_take_hype, icon=":material/input:",
                  help="The vote of the DP-HYPE page (its last run, else its controls): ε or σ, k, p, n, δ.")
    source = st.session_state.get(SOURCE_KEY)
    if source:
        (st.error if source[0] == "error" else st.caption)(source[1])

    if server:
        _server_knobs(slots)
    elif mechanism != flower.MECHANISM:
        _vote_knobs(slots)

    st.subheader("The game")
    st.selectbox("accountant of the claim", ACCOUNTANTS, key=_key("accountant"), format_func=ACCOUNTANT_LABELS.get,
                 help="Which accountant states the claimed ε. PLD is the tightest, so an audit against it is the "
                      "hardest test; the Federated BO paper used the moments accountant.")
    slots.under("accountant")
    c1, c2 = st.columns(2)
    with c1:
        if one_run_mode:
            one_run.knobs(_key)
        else:
            st.number_input("trials", key=_key("trials"), step=100_000, format="%d",
                            help="Games played, half with the canary in and half without. More trials: a tighter "
                                 "lower bound and a longer audit.")
    c2.number_input("δ", key=_key("delta"), format="%.1e", step=1e-6, help="The δ of the claimed (ε, δ).")
    slots.under("canaries" if one_run_mode else "trials", "delta")
    st.number_input("seed", key=_key("seed"), step=1, help="Same seed, same trials, same bound.")
    slots.under("seed")
    limit = HostLimits.from_env().max_seconds
    if limit is not None:
        st.caption(f"Size limit of this server: about {limit:g} s of computing per audit.")


def _server_knobs(slots: ErrorSlots) -> None:
    st.subheader("Server mechanism")
    c1, c2 = st.columns(2)
    c1.number_input("q (sampling)", key=_key("q"), step=0.05, format="%.3f",
                    help="Probability that an agent, the canary too, is used in a round.")
    c2.number_input("z (noise)", key=_key("z"), step=0.1, format="%.3f", help="Noise multiplier of the claim.")
    slots.under("q", "z")
    c1, c2 = st.columns(2)
    c1.number_input("S (clipping)", key=_key("S"), step=1.0, format="%.2f", help="Vectors are clipped to S/√P.")
    c2.number_input("P (sub-regions)", key=_key("P"), step=1,
                    help="With P > 1 the claim charges the largest weight in every sub-region, which one agent "
                         "never reaches: the audit's best possible bound drops below the claim.")
    slots.under("S", "P")
    st.number_input("releases T", key=_key("steps"), step=1,
                    help="Server rounds composed in one game; the claim grows with T and so does the audit's cost.")
    slots.under("steps")
    st.radio("subsampling", SAMPLING, key=_key("sampling"), horizontal=True,
             format_func={"poisson": "Poisson", "fixed": "fixed size N·q"}.get,
             help="Poisson: the canary present or absent (add/remove). Fixed: the canary's vector c or -c "
                  "(replace-one).")
    slots.under("sampling")
    with st.expander("Agents, weights and canary"):
        c1, c2 = st.columns(2)
        c1.number_input("agents N", key=_key("agents"), step=1,
                        help="Only the cost changes (and, with fixed-size sampling, the claim).")
        c2.number_input("features M", key=_key("features"), step=1, help="Vector length; only the cost changes.")
        slots.under("agents", "features")
        st.selectbox("weights", WEIGHTS, key=_key("weights"), help="How the server weights agents per sub-region.")
        slots.under("weights")
        c1, c2 = st.columns(2)
        c1.number_input("weight a", key=_key("weight_a"), step=1.0, format="%.1f",
                        help="How strongly a sub-region favours its own agents early on.")
        c2.selectbox("schedule", WEIGHT_SCHEDULES, key=_key("weight_schedule"),
                     help="When the weights become uniform (after 10 or 40 iterations).")
        slots.under("weight_a", "weight_schedule")
        st.number_input("canary norm (clip bounds)", key=_key("canary_norm"), step=1.0, format="%g",
                        help="1: at the clip bound, the worst case clipping allows. 1000: checks that clipping "
                             "happens (a forgotten clip is caught).")
        slots.under("canary_norm")


def _vote_knobs(slots: ErrorSlots) -> None:
    st.subheader("Vote mechanism")
    st.radio("noise given as", ("epsilon", "sigma"), key=_key("noise"), horizontal=True,
             format_func={"epsilon": "budget ε", "sigma": "noise σ"}.get,
             help="With ε the noise is calibrated as DP-HYPE does; with σ you set the noise on the summed votes.")
    if st.session_state[_key("noise")] == "epsilon":
        st.number_input("ε of one vote", key=_key("epsilon"), step=0.25, format="%.3f")
        slots.under("epsilon")
    else:
        st.number_input("σ (on the sum)", key=_key("sigma"), step=1.0, format="%.3f")
        slots.under("sigma", "epsilon")
    c1, c2 = st.columns(2)
    c1.number_input("votes k", key=_key("k"), step=1,
                    help="The canary moves its k votes to k other candidates: sensitivity √(2k).")
    c2.number_input("candidates p", key=_key("candidates"), step=10)
    slots.under("k", "candidates")
    st.number_input("clients n", key=_key("clients"), step=50, help="The other clients' votes are known to the "
                    "attacker; n changes only the cost.")
    slots.under("clients")
    st.radio("aggregation", AGGREGATIONS, key=_key("aggregation"), horizontal=True,
             help="exact: the summed noise drawn at once (the engine's default); secure-sum: every client adds its "
                  "share (n times the work).")
    slots.under("aggregation")
