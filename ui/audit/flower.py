"""The Privacy audit page's third target: a built-in Flower strategy's own ``aggregate_train``.

A visitor chooses one of the engine's four built-in strategies by name
(:data:`engine.flower.audit_config.BUILTINS`; never a module path) and sets
q, z, the releases and the game's shared knobs. The audit is priced by
:func:`engine.limits.strategy_audit_cost` and runs as the other audits do.
:func:`participant_panel` adds a participant's attack on one of four built-in
apps (:data:`engine.flower.audit_config.PARTICIPANT_TARGETS`), priced by
:func:`engine.limits.participant_audit_cost` and computed behind the walls.
Nothing here imports Flower: without it the choice says so and Run is off.
"""

from __future__ import annotations

import streamlit as st

from engine.flower.audit_config import (
    BUILTIN_LABELS,
    BUILTINS,
    PARTICIPANT_LABELS,
    PARTICIPANT_TARGETS,
    ParticipantAudit,
    StrategyAudit,
    flower_installed,
    game_agents,
)
from engine.limits import participant_audit_cost, strategy_audit_cost
from engine.validation import ConfigError
from ui.kit.compute import compute
from ui.kit.errors import ErrorSlots
from ui.kit.run_loop import Priced, checked

MECHANISM = "flower"
LABEL = "A Flower strategy's aggregate_train (four built-ins)"
DEFAULT_STRATEGY = "dp-fts-de"
DEFAULT_PARTICIPANT = "dp-fts-de-public-seed"
PARTICIPANT_RESULT = "audit_participant_result"     # (config, record) of the last attack
PARTICIPANT_AGENTS, PARTICIPANT_P = 5, 2             # the apps' size: the issue's federation
NOT_INSTALLED = ("Flower is not installed on this server (pip install -r requirements-dev.txt), so its strategies "
                 "cannot be audited here; the other two mechanisms work without it.")
CLAIMS = {"flower-dp-fixed": "Flower's own RDP accountant (no amplification)",
          "dp-fts-de": "the run plan's accountant (below)",
          "broken-clip-after-mean": "the same claim as Flower's wrapper",
          "dp-fts-de-public-seed": "the run plan's accountant (its one-run audit's shadow replay catches it)"}


def config_of(values: dict, key) -> tuple[StrategyAudit, Priced]:
    """The audit of the chosen built-in strategy and its price; raises ConfigError naming the field."""
    if not flower_installed():
        raise ConfigError(NOT_INSTALLED, "strategy")
    strategy = values["strategy"]
    if strategy not in BUILTINS:          # the URL's Param already refuses it; a last guard, never a module path
        raise ConfigError(f"Choose one of the built-in strategies: {', '.join(BUILTINS)}.", "strategy")
    accountant = values["accountant"] if values["accountant"] in ("ma", "rdp", "pld") else "rdp"
    config = StrategyAudit(strategy=strategy, q=values["q"], z=values["z"], S=values["S"], steps=values["steps"],
                           agents=game_agents(strategy, values["q"]) if 0 < values["q"] <= 1 else 16,
                           features=2, trials=values["trials"], delta=values["delta"], seed=values["seed"],
                           accountant=accountant)
    cost = strategy_audit_cost(config.trials, config.steps, config.agents, config.features)
    return config, checked(cost, what="This audit")


def describe(config: StrategyAudit) -> str:
    return (f"Flower: {BUILTIN_LABELS[config.strategy]}: {config.steps} release(s), q = {config.q:g}, "
            f"z = {config.z:.4g}, S = {config.S:g}, {config.agents} agents")


def knobs(slots: ErrorSlots, key) -> None:
    """The strategy and its knobs (call inside ``st.sidebar``)."""
    st.subheader("Flower strategy")
    st.selectbox("strategy", BUILTINS, key=key("strategy"), format_func=BUILTIN_LABELS.get,
                 help="One of the engine's built-in Flower strategies; the audit calls its own aggregate_train "
                      "with Flower Messages. The broken ones are the negative controls: they must be caught.")
    if flower_installed():    # otherwise the error slot below says so (config_of raises NOT_INSTALLED)
        st.caption(f"Claim: {CLAIMS[st.session_state[key('strategy')]]}.")
    slots.under("strategy")
    c1, c2 = st.columns(2)
    c1.number_input("q (sampling)", key=key("q"), step=0.05, format="%.3f",
                    help="DP-FTS-DE: probability that a reply is used (Poisson, inside aggregate_train). Flower's "
                         "wrapper: round(q N) clients reply; its claim ignores q.")
    c2.number_input("z (noise)", key=key("z"), step=0.1, format="%.3f", help="Noise multiplier of the claim.")
    slots.under("q", "z")
    c1, c2 = st.columns(2)
    c1.number_input("S (clipping)", key=key("S"), step=1.0, format="%.2f", help="Each reply is clipped to S.")
    c2.number_input("releases T", key=key("steps"), step=1, help="Calls of aggregate_train composed in one game.")
    slots.under("S", "steps")


def participant_config(values: dict) -> tuple[ParticipantAudit, Priced]:
    """The participant's attack on the chosen app with the page's q, z, S, releases and seed; raises ConfigError."""
    if not flower_installed():
        raise ConfigError(NOT_INSTALLED, "participant")
    config = ParticipantAudit(strategy=values["participant"], agents=PARTICIPANT_AGENTS, P=PARTICIPANT_P,
                              steps=values["steps"], q=values["q"], z=values["z"], S=values["S"],
                              seed=values["seed"])
    cost = participant_audit_cost(config.app, config.agents, config.steps)
    return config, checked(cost, what="This attack")


def _attack(config: ParticipantAudit) -> dict:
    from engine.flower.participant_targets import participant_audit      # imports Flower on use

    return participant_audit(config)


def participant_panel(values: dict, key) -> None:
    """A participant's attack: a button, then what the attacker recovered (below the game's Run). Without Flower
    there is nothing to attack: the sentence under the strategy choice says so, once."""
    if not flower_installed():
        return
    with st.expander("A participant's attack: the run config, the app's code, its own replies, every broadcast",
                     icon=":material/person_search:"):
        st.caption("DP-FTS-DE: one agent of a 5-agent app (P = 2, the q, z, S, releases and seed on the left) "
                   "rebuilds the server from the public run config, replays every release, subtracts the noise it "
                   "would add and checks that what is left could be the other agents' clipped vectors. DP-HYPE: "
                   "one client of a 5-client vote (10 candidates, k = 2, epsilon = 1) regenerates every client's "
                   "noise with the client's code and checks that what is left is a vote count. Neither check "
                   "needs the truth; the truth kept aside only measures the error.")
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        left.selectbox("app", PARTICIPANT_TARGETS, key=key("participant"), format_func=PARTICIPANT_LABELS.get,
                       help="The exported apps, and copies as they were exported before (their noise from the "
                            "run config's public seed): the negative controls, which the attack must catch.")
        slots = ErrorSlots()
        slots.under("participant", "steps", "q", "z", "S", "seed", "agents")
        config = None
        try:
            config, _ = participant_config(values)
        except ConfigError as err:
            slots.show(err)
        if right.button("Attack", key="audit_participant_button", disabled=config is None, width="stretch",
                        icon=":material/policy:"):
            try:
                st.session_state[PARTICIPANT_RESULT] = (config, compute(_attack, config, walled="agents"))
            except ConfigError as err:
                slots.show(err)
        stored = st.session_state.get(PARTICIPANT_RESULT)
        if not stored or stored[0] != config:
            return
        record = stored[1]
        if record["regenerated"]:
            st.error(record["verdict"], icon=":material/gpp_bad:")
        elif record["inconclusive"]:          # every check passed, by a chance too large
            st.warning(record["verdict"], icon=":material/help:")
        else:
            st.success(record["verdict"], icon=":material/verified_user:")
        m = st.columns(3)
        m[0].metric("releases the attacker explained", f"{record['explained']} of {record['releases']}",
                    help="Its own check: the residual lies in the ball the other agents' vectors can reach. A wrong "
                         f"guess passes every release's check with probability {record['chance']:.1e}.")
        m[1].metric("error of its noiseless aggregate", f"{record['aggregate_error']:.2g}",
                    help=f"Largest error over the releases; the aggregate's entries reach "
                         f"{record['aggregate_scale']:.3g}.")
        m[2].metric("other agents' vectors recovered", f"{len(record['recovered'])}",
                    help="Releases where the regenerated subsample selected exactly one other agent.")
