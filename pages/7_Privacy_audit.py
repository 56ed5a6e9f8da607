"""Privacy audit: attack a mechanism's own code and check its claimed ε against the lower bound the attack proves."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import time

import streamlit as st

from engine.audit import AuditResult, OneRunResult
from engine.cli import to_json
from engine.limits import format_seconds
from engine.privacy import ACCOUNTANT_LABELS
from engine.validation import ConfigError
from ui.audit import controls, flower, one_run
from ui.audit.figures import epsilon_figure, roc_figure, scores_figure, trials_figure
from ui.audit.panel import audit_line, canary_note, progress_of
from ui.kit.charts import show
from ui.kit.errors import ErrorSlots
from ui.kit.run_loop import RunStatus, current_run, run_buttons, run_live, show_failure
from ui.kit.opening import open_page
from ui.kit.routes import AUDIT

SCRIPT_START = time.perf_counter()
opening = open_page(AUDIT, controls.init)

slots = ErrorSlots()
with st.sidebar:
    controls.sidebar(slots)
values = controls.current()

# ---------------------------------------------------------------- main area
st.title("Privacy audit: does the claimed ε hold?")
st.write(
    "Differential privacy promises that nobody who sees a mechanism's output can tell well whether one participant, "
    "the **canary**, took part: any test that says “in” with true-positive rate TPR must also say it to a "
    "world without the canary at a false-positive rate FPR with TPR ≤ e^ε·FPR + δ. The accountant's ε describes "
    "the mechanism on paper; a bug in the code (too little noise, a forgotten clip) would leave it unchanged. "
    "This page plays the game against the engine's own mechanism code (or a built-in Flower strategy's) many "
    "times and turns its error rates, at every threshold at once, into a lower bound on ε that holds with 95 % "
    "confidence; or it audits one whole run of T releases with many canaries, each in with probability 1/2, from "
    "the auditor's guesses (Steinke, Nasr and Jagielski 2023).")
opening.note()

if values["mechanism"] != "flower":   # a Flower strategy's negative controls are its broken built-in strategies
    choices = controls.PAGE_CONTROLS if values["mechanism"] == "fbo-server" else controls.VOTE_CONTROLS
    st.selectbox("Negative control: break the mechanism this way, keep its claim", choices, key="audit_control",
                 format_func=controls.PAGE_CONTROL_LABELS.get,
                 help="A deliberately broken mechanism. A working audit must catch it (the lower bound rises above "
                      "the claimed ε): half the noise and no subsampling by many trials, noise reused across "
                      "releases by both audits, noise from the public seed by the one-run audit's shadow replay.")
config, price, config_error = None, None, None
try:
    config, price = controls.config_of(values)
except ConfigError as err:
    config_error = err
    slots.show(err)

run_clicked, (message_col,) = run_buttons("audit", disabled=config is None)
with message_col:
    slots.fallback()
    if config is not None:
        size = f" {config.trials:,} trials," if hasattr(config, "trials") else ""      # a one-run says its canaries
        st.caption(f"{controls.describe(config)}.{size} about {format_seconds(price.cost.seconds)}.")
    else:
        slots.run_is_off(config_error)
status_slot = st.empty()
progress_slot = st.empty()
if values["mechanism"] == "flower":
    flower.participant_panel(values, controls.widget_key)

if run_clicked and config is not None:
    run_live(controls.RUN_KEY, [audit_line(config)], values=values, draw=lambda live, suffix: None,
             progress_slot=progress_slot, errors=slots, price=price, progress=progress_of,
             started=SCRIPT_START)

run = current_run(controls.RUN_KEY, run_clicked)
if run is None and config is None:
    st.info(f"Run is off: {config_error} Once it is fixed, **Run** shows the attack's scores, its ROC curve and "
            "the audited ε here.", icon=":material/block:")
    st.stop()
if run is None:
    shown = ("the canaries' scores and the one-run bound against the number of canaries"
             if values["mode"] == one_run.ONE_RUN else "the attack's scores, its ROC curve and the audited ε")
    st.info(f"Press **Run**: {shown} appear here. Try a negative control to see a broken mechanism caught.",
            icon=":material/info:")
    st.stop()
if run.status is RunStatus.FAILED:
    show_failure(run, status_slot)
    st.stop()
result = run.results[0]
if run.values != values:
    st.info("The settings changed since this audit; press **Run** to audit them.", icon=":material/info:")
if isinstance(result, OneRunResult):
    one_run.show(result, status_slot)
    st.stop()
if not isinstance(result, AuditResult):
    status_slot.warning("Stopped before the attack finished; an audit bounds ε only from all of its trials. Press "
                        "Run to start again.", icon=":material/pause_circle:")
    st.stop()
if result.violation or result.fdp_violation:
    status_slot.error(result.verdict, icon=":material/gpp_bad:")
else:
    status_slot.success(result.verdict, icon=":material/verified_user:")

m = st.columns(5)
m[0].metric("claimed ε", f"{result.epsilon_claimed:.3g}",
            help=f"{ACCOUNTANT_LABELS[result.accountant]} accountant, δ = {result.delta:.3g}.")
m[1].metric("audited lower bound", f"{result.epsilon_lower:.3g}", delta=f"point estimate {result.epsilon_point:.3g}",
            delta_color="off", delta_arrow="off",
            help=f"The true ε is at least this, with {result.confidence:.0%} confidence; the point estimate uses "
                 "the raw rates of the same test without the confidence margin.")
if result.mechanism != "flower":   # a Flower strategy's game knows only the strategy's claim
    m[2].metric("most this game can prove", f"{result.epsilon_canary:.3g}",
                help="The accountant's ε for the canary's actual effect on the output: no attack on this canary "
                     "can prove more.")
if result.mu_claimed is not None:
    m[3].metric("Gaussian DP μ (audited)", f"{result.mu_lower:.3g}", delta=f"claimed {result.mu_claimed:.3g}",
                delta_color="off", delta_arrow="off",
                help=f"Lower confidence bound on μ from the whole ROC (every threshold, the same 95 % event as ε): "
                     f"valid for any mechanism; as ε at δ, {result.epsilon_gdp:.3g}, exact for one Gaussian release.")
else:
    m[3].metric("Gaussian DP μ (summary)", f"{result.mu_lower:.3g}",
                help="Subsampled releases are not exactly Gaussian: μ summarises the attack, the verdict uses ε.")
m[4].metric("trials", f"{result.trials:,}", help=f"Half with the canary in, half without, all of them counted at "
            f"{result.tests:,} thresholds at once. {result.wall_seconds:.1f} s.")

left, right = st.columns(2)
with left:
    log_y = st.toggle("log counts", value=True, key="audit_opt_log", help="The strongest tests sit in a tail.")
    show(scores_figure(result, log_y=log_y), key="auditchart_scores",
         about="How many trials gave each attack score (how much likelier the output is with the canary than "
               "without), with the canary in (orange) and out (blue), each trial one run of the real mechanism.")
    st.caption("**What to notice:** the attacker says “in” right of the dashed threshold; the more orange than "
               "blue lands there, the more the output gives the canary away.")
with right:
    show(roc_figure(result), key="auditchart_roc",
         about="Every threshold gives one point: how often the attack says “in” when the canary is in (TPR) "
               "against when it is out (FPR), on all trials, at the grid's thresholds.")
    st.caption("**What to notice:** if the claimed ε holds, no attack rises above the grey dashed curve; a broken "
               "mechanism crosses it, usually at small FPR, which is why both axes are logarithmic.")

left, right = st.columns([3, 2])
with left:
    show(trials_figure(result), key="auditchart_trials",
         about="The lower bound the trials prove after each chunk (10,000 per world first, then doubling), each a "
               "95 % bound on its own, beside the claimed ε: more trials, a tighter bound.")
    show(epsilon_figure(result), key="auditchart_epsilon",
         about="The ε the accountant claims (grey) beside the smallest ε the attack's error rates prove with 95 % "
               "confidence (its whisker reaches the point estimate).")
with right:
    st.markdown("**Reading the bars**")
    st.caption("The grey bar is the ε the accountant claims; the audited bar is the smallest ε that the attack's "
               "error rates prove with 95 % confidence, and its whisker reaches the point estimate. A bar short "
               "of the dashed claim means the audit found no leak (it does not show the claim is tight); a bar "
               "past it means the code leaks more than it claims.")
    note = canary_note(result)
    if note:
        st.caption(note)

with st.expander("What was attacked, and the numbers"):
    st.markdown(f"- **Mechanism**: {controls.describe(result.config)}\n"
                f"- **Neighbouring inputs**: {result.neighbours}\n"
                f"- **Attack statistic**: {result.statistic}\n"
                f"- **Strongest test**: {result.statistic_used} ≥ {result.threshold:.4g} (one of {result.tests:,} "
                f"thresholds, all bounded at once), TPR {result.tpr:.4g} (at least {result.tpr_lower:.4g}), FPR "
                f"{result.fpr:.3g} (at most {result.fpr_upper:.3g})\n"
                f"- **Noise actually added**: {result.noise_scale:g} × the claimed noise")
    st.download_button("Audit (JSON)", to_json(result.to_json()).encode(), file_name="audit.json",
                       mime="application/json", icon=":material/download:", on_click="ignore", key="audit_dl_json",
                       help="The JSON object `python -m engine audit` prints for these settings.")
