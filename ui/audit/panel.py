"""The small "audited ε" panel beside a run's claimed ε (Federated BO and DP-HYPE pages): on demand, cached.

Nothing is audited when a run finishes. A button attacks what the run
released, through the page's one heavy-work entry (:func:`ui.kit.run_loop.run_live`,
priced first); the result is kept per audit configuration
(:func:`ui.kit.cached.cached_audit`), so the same configuration, in any session,
is audited once. The embedded audit is small on purpose: the number of agents
and the vector length change only its cost, so it uses as few as the game
allows, and it plays 200,000 trials of one release (fewer when the run made
many releases: 2 million trial-releases, at least 20,000 trials) so that it
takes about a second.
"""

from __future__ import annotations

import streamlit as st

from engine.audit import AuditResult, OneRunAudit, ServerAudit, VoteAudit, audit_cost, run_audit, run_one_run
from engine.flower.audit_config import StrategyAudit
from engine.flower.one_run import StrategyOneRun
from engine.limits import format_seconds
from engine.validation import ConfigError
from ui.audit.controls import describe, link_params
from ui.audit.figures import epsilon_figure
from ui.kit.cached import cached_audit
from ui.kit.charts import show
from ui.kit.errors import ErrorSlots
from ui.kit.run_loop import LiveLine, LiveRun, RunStatus, checked, run_live, show_failure
from ui.kit.background import Progress, in_background
from ui.kit.routes import AUDIT, page_link

EMBEDDED_TRIALS = 200_000              # one release in about a second on the 2-core machine
EMBEDDED_TRIAL_RELEASES = 2_000_000    # trials x releases: a run of many releases takes a second or two too
EMBEDDED_MIN_TRIALS = 20_000           # fewer and the bound says little
EMBEDDED_AGENTS = 2                    # N changes only the cost (not the claim) under Poisson sampling ...
EMBEDDED_FEATURES = 2                  # ... and M never: the smallest the game allows


def embedded_trials(releases: int) -> int:
    """Trials of the embedded audit of ``releases`` composed releases."""
    return int(min(EMBEDDED_TRIALS, max(EMBEDDED_MIN_TRIALS, EMBEDDED_TRIAL_RELEASES // max(int(releases), 1))))


def server_audit(plan) -> ServerAudit:
    """The embedded audit of a federated BO run's server (:meth:`ServerAudit.from_plan`); raises ConfigError.

    Fixed-size sampling keeps the run's N (its claim depends on N); otherwise
    one agent per sub-region (at least two) stands in for the run's agents.
    """
    small = {} if plan.config.sampling == "fixed" else {"agents": max(EMBEDDED_AGENTS, plan.n_subregions)}
    return ServerAudit.from_plan(plan, trials=embedded_trials(plan.releases), features=EMBEDDED_FEATURES, **small)


def vote_audit(config) -> VoteAudit:
    """The embedded audit of a DP-HYPE run's vote (:meth:`VoteAudit.from_hype`); raises ConfigError."""
    return VoteAudit.from_hype(config, trials=EMBEDDED_TRIALS)


def canary_note(result: AuditResult) -> str | None:
    """Why the game cannot reach the claim, when it cannot (P > 1 sub-regions)."""
    if result.epsilon_canary >= result.epsilon_claimed * (1 - 1e-3):
        return None
    return (f"The claim (the paper's) charges every release the largest weight φ_max in every sub-region, which "
            f"one agent reaches only in its own, so no attack on one agent can prove more than "
            f"ε = {result.epsilon_canary:.3g} here: the claim is loose, not the audit.")


def audit_line(config) -> LiveLine:
    """The one line of an audit for :func:`ui.kit.run_loop.run_live`: the engine's audit in the background,
    stoppable between chunks of trials, cached per configuration up to :data:`EMBEDDED_TRIALS` trials."""
    def work(progress, cancel):
        if isinstance(config, OneRunAudit):        # one run with canaries: no trials to count
            return run_one_run(config, cancel=cancel)
        if isinstance(config, StrategyOneRun):     # one run of a built-in Flower strategy (imports Flower on use)
            from engine.flower.one_run import strategy_one_run

            return strategy_one_run(config)
        if isinstance(config, StrategyAudit):    # a built-in Flower strategy (imports Flower on use)
            from engine.flower.audit import audit_strategy

            return audit_strategy(config, progress=progress, cancel=cancel)
        # A cached audit is kept for every session: only the small, often repeated ones are worth it.
        if config.trials <= EMBEDDED_TRIALS:
            return cached_audit(config, progress, cancel)
        return run_audit(config, progress=progress, cancel=cancel)

    return LiveLine("audit", lambda: in_background(work), steps=int(getattr(config, "trials", 1)))


def progress_of(latest, counts) -> tuple[float, str]:
    """The progress bar of an audit line (fraction, text), for :func:`ui.kit.run_loop.run_live`."""
    item = latest[0]
    if isinstance(item, Progress):
        if not item.total:
            return 0.0, "starting the attack"
        return item.done / item.total, f"attacking: {item.done:,} of {item.total:,} trials"
    return 1.0, "bounding ε"


def audit_panel(key: str, config: ServerAudit | VoteAudit, what: str) -> None:
    """A button that audits ``config`` and then the small claimed-against-audited figure.

    ``what`` names the audited mechanism in the figure's title (e.g. "DP-FTS-DE's server, 30 releases").
    """
    run = st.session_state.get(key)
    done = (isinstance(run, LiveRun) and run.status is RunStatus.DONE and run.values.get("config") == config
            and isinstance(run.results[0], AuditResult))
    with st.container(border=True):
        head, button = st.columns([3, 2], vertical_alignment="center")
        head.markdown("**Audited ε**", help="An attack on the engine's own mechanism code proves a lower bound on "
                      "the ε it really has; above the claimed ε would mean the implementation leaks more than "
                      "it says.")
        button_slot = button.empty()
        clicked = not done and button_slot.button("Audit this ε", key=f"{key}_button", icon=":material/policy:",
                                                  width="stretch", help="Runs the audit once per configuration "
                                                                        "(cached).")
        progress_slot = st.empty()
        slots = ErrorSlots()
        slots.fallback()
        if clicked and not done:
            try:
                price = checked(audit_cost(config), what="This audit")
            except ConfigError as err:
                slots.show(err)
            else:
                run = run_live(key, [audit_line(config)], values={"config": config}, draw=lambda live, suffix: None,
                               progress_slot=progress_slot, errors=slots, price=price, progress=progress_of)
                done = run is not None and run.status is RunStatus.DONE
        if done:
            button_slot.caption(":material/check: audited")
            result = run.results[0]
            title = (f"Audited: {what}<br><sup>{result.trials:,} trials in {result.wall_seconds:.1f} s; "
                     f"δ = {result.delta:.3g}</sup>")
            show(epsilon_figure(result, title=title, height=230), key=f"{key}_figure",
                 about="The ε this run claims (grey) beside the lower bound an attack on the same mechanism code "
                       "proves with 95 % confidence.")
            st.caption(" ".join(filter(None, [result.verdict, canary_note(result)])))
            page_link(AUDIT, "See the attack on the Privacy audit page", icon=AUDIT.icon,
                      query_params=link_params(config))
        elif isinstance(run, LiveRun) and run.status is RunStatus.FAILED and run.values.get("config") == config:
            show_failure(run, st)
        else:
            st.caption(f"Attacks {describe(config)} with {config.trials:,} trials (about "
                       f"{format_seconds(audit_cost(config).seconds)}), and shows the lower bound on ε it proves "
                       "beside the claim.")


def vote_panel(config) -> None:
    """The audited-ε panel of a DP-HYPE run (``config``: its HypeConfig), half the page wide."""
    with st.columns(2)[0]:
        try:
            audit = vote_audit(config)
        except ConfigError as err:
            st.caption(f"Nothing to audit: {err}")
            return
        audit_panel("hype_audit", audit, f"one DP-HYPE vote, k = {config.k}, p = {config.p}, n = {config.clients}")
