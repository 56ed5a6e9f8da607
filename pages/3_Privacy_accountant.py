"""Privacy accountant: epsilon of the subsampled Gaussian mechanism under three accountants."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import pandas as pd
import streamlit as st

from engine.privacy.paper import fig11_note
from engine.privacy import (ACCOUNTANT_LABELS, ACCOUNTANTS, DELTA_RULES, SAMPLING, default_delta, fixed_sample_size,
                            supports)
from engine.privacy.accountants import PLD_STEPWISE, check_noise, curve_counts
from engine.limits import LIGHT_SECONDS, accountant_cost, check
from engine.validation import ConfigError, check_int, check_positive, check_probability_open, check_range
from ui.privacy.questions import MAX_STEPS, SOLVE_LABELS, fig2_table, solve_live
from ui.privacy import controls
from ui.kit.cached import cached_epsilon, cached_epsilon_curve
from ui.kit.charts import show
from ui.kit.errors import ErrorSlots
from ui.kit.opening import open_page
from ui.kit.presenter import presenter_toggle, presenter_wanted, slide_nav
from ui.kit.compute import compute, pooled
from ui.privacy.figures import epsilon_vs_steps_figure
from ui.kit.routes import ACCOUNTANT
from ui.kit.tables import readable

opening = open_page(ACCOUNTANT, controls.init, sidebar="collapsed" if presenter_wanted("acc_present") else "auto")

PREFIX = controls.PREFIX
# Presenter mode shows one of these at a time; the page without it shows them all, in this order.
SLIDES = ["What is released", "ε under three accountants", "ε grows with every release", "Why three numbers?",
          "Inverse questions", "The paper's numbers, recomputed"]

head = st.columns([4, 1.5], vertical_alignment="center")
head[0].title("Privacy accountant")
large = presenter_toggle(PREFIX + "present", where=head[1])
# The lesson starts from the paper's Fig. 2 setting on its first screen.
slide = slide_nav("acc", SLIDES, restart=controls.load_fig2) if large else None


def shown(index: int) -> bool:
    """Whether screen ``index`` is on the page: always, or in presenter mode when it is the current one."""
    return slide is None or slide == index


if shown(0):
    st.write(
        "Every private federated BO run releases, at each iteration, a noisy average of a random subset of the "
        "agents' vectors: the **subsampled Gaussian mechanism**. Each agent takes part with probability **q**, the "
        "noise has standard deviation **z** times the largest contribution one agent can make, and the server "
        "releases **T** times. Here you see what privacy loss ε (at a failure probability δ) that costs, "
        "according to three accountants.")
opening.note()

slots = ErrorSlots()
# In presenter mode the knobs wait in the sidebar, so the screen keeps to one idea.
knobs = st.sidebar if large else st.container()
if large:
    knobs.header("The knobs")
cols = [knobs] * 5 if large else knobs.columns([1, 1, 1, 1.4, 1.1])
with cols[0]:
    st.number_input("sampling probability q", key=PREFIX + "q", step=0.05, format="%.3f",
                    help="Share of agents the server picks per iteration. Larger q: more privacy loss, "
                         "better utility.")
    slots.under("q")
with cols[1]:
    st.number_input("noise multiplier z", key=PREFIX + "z", step=0.1, format="%.2f",
                    help="Noise standard deviation in units of one agent's largest contribution. Larger z: "
                         "less privacy loss, noisier updates.")
    slots.under("z")
with cols[2]:
    st.number_input("releases T", key=PREFIX + "steps", step=5,
                    help="Number of server iterations that release a vector. Privacy loss grows with T.")
    slots.under("steps")
with cols[3]:
    st.radio("failure probability δ", controls.DELTA_MODES, key=PREFIX + "delta_mode", horizontal=True,
             format_func={"product": "δ for N (product)", "paper": "δ = 1/N^1.1 (paper)", "manual": "enter δ"}.get,
             help="δ is the probability that the ε guarantee fails. The product's rule: 1e-5, or 1 % of 1/N when "
                  "smaller; the paper uses 1/N^1.1 for N agents (close to 1/N). Smaller δ: larger ε.")
    if st.session_state[PREFIX + "delta_mode"] in DELTA_RULES:
        st.number_input("number of agents N", key=PREFIX + "agents", step=10,
                        help="Only sets δ (and the subset size for fixed-size sampling).")
        slots.under("agents")
        agents_now = st.session_state[PREFIX + "agents"]
        rule = st.session_state[PREFIX + "delta_mode"]
        if isinstance(agents_now, int) and agents_now >= (2 if rule == "paper" else 1):
            st.caption(f"δ = {default_delta(agents_now, rule):.3g}")
    else:
        st.number_input("δ", key=PREFIX + "delta", format="%.2e", step=1e-6,
                        help="Must be in (0, 1); usually well below 1/N.")
    slots.under("delta")
with cols[4]:
    st.radio("sampling", SAMPLING, key=PREFIX + "sampling",
             format_func={"poisson": "Poisson (each agent with prob. q)",
                          "fixed": "fixed size (round(Nq) agents)"}.get,
             help="Poisson sampling is the paper's Algorithm 1; fixed-size sampling (paper footnote 14) "
                  "is analysed under replace-one neighbours, so its ε is larger.")
    slots.under("sampling")
knobs.button("Load the paper's Fig. 2 setting (q = 0.25, z = 1, T = 40, N = 200)", on_click=controls.load_fig2,
             icon=":material/article:")
with knobs:
    slots.fallback()

values = controls.current()


def resolve(values: dict) -> dict:
    """Validate the controls; raises ConfigError naming the control."""
    q = check_range("q", values["q"], 0, 1, low_open=True)
    z = check_positive("z", values["z"])
    steps = check_int("steps", values["steps"], 1, MAX_STEPS, name="number of releases T")
    agents = None
    if values["delta_mode"] in DELTA_RULES or values["sampling"] == "fixed":
        agents = check_int("agents", values["agents"], 1, name="number of agents")
    delta = default_delta(agents, values["delta_mode"]) if values["delta_mode"] in DELTA_RULES else values["delta"]
    delta = check_probability_open("delta", delta)
    return dict(q=q, z=z, steps=steps, delta=delta, sampling=values["sampling"],
                n_agents=agents if values["sampling"] == "fixed" else None)


try:
    setting = resolve(values)
except ConfigError as err:
    slots.show(err)
    st.stop()

common = dict(sampling=setting["sampling"], n_agents=setting["n_agents"])
if setting["sampling"] == "fixed" and shown(0):
    st.caption(f"Fixed-size sampling: {fixed_sample_size(setting['q'], setting['n_agents'])} agents per release.")
    with st.expander("Fixed-size sampling: which ε protects an agent (the paper's Fig. 11)"):
        st.markdown(fig11_note())
if large:
    st.caption(f"q = {setting['q']:g}, z = {setting['z']:g}, T = {setting['steps']} releases, "
               f"δ = {setting['delta']:.3g} ({setting['sampling']} sampling); to change them, open the sidebar "
               "(» at the top left).")

# ---------------------------------------------------------------- epsilon, three ways
def account(acc: str):
    curve = cached_epsilon_curve(setting["q"], setting["z"], setting["steps"], setting["delta"], acc, **common)
    # RDP composes exactly along the curve; PLD's curve uses a coarser grid, so its end point is redone.
    return curve, (cached_epsilon(setting["q"], setting["z"], setting["steps"], setting["delta"], acc, **common)
                   if acc == "pld" else float(curve[-1]))


eps, curves, refused = {}, {}, {}
usable = []
for acc in (acc for acc in ACCOUNTANTS if supports(acc, setting["sampling"])):
    try:
        check_noise(setting["z"], acc)      # e.g. PLD with very little noise: that one accountant says why
        usable.append(acc)
    except ConfigError as err:
        refused[acc] = str(err)
try:
    price = check(accountant_cost(setting["steps"], usable, z=setting["z"]), what="This accounting")
except ConfigError as err:
    slots.show(err)
    st.stop()
# Light accounting is computed at once; more than the light budget waits for a place among the heavy runs.
run = compute if price.seconds <= LIGHT_SECONDS else pooled
with st.spinner("Accounting (PLD takes a second the first time)..."):
    for acc in usable:
        try:
            curves[acc], eps[acc] = run(account, acc)
        except ConfigError as err:    # e.g. PLD with very little noise
            refused[acc] = str(err)

metric_cols = st.columns(3) if shown(1) else []
for col, acc in zip(metric_cols, ACCOUNTANTS):
    with col:
        if acc in eps:
            delta_text = None
            if acc != "ma" and "ma" in eps:
                delta_text = f"{eps[acc] - eps['ma']:+.2f} vs moments accountant"
            st.metric(f"ε · {ACCOUNTANT_LABELS[acc]}", f"{eps[acc]:.3f}", delta=delta_text, delta_color="off")
        else:
            st.metric(f"ε · {ACCOUNTANT_LABELS[acc]}", "n/a", help=refused.get(
                acc, "dp_accounting's PLD accountant does not support fixed-size sampling."))
            if acc in refused:
                st.caption(refused[acc])

left, right = st.columns([3, 2]) if slide is None else (st.container(), st.container())
if shown(2):
    show(epsilon_vs_steps_figure(curves, delta=setting["delta"], marks=eps), key="acc_curve", where=left, large=large,
         about="Privacy loss ε after each release, one line per accountant, with the value after the last release "
               "marked at the right end.")
    if "pld" in curves and setting["steps"] > PLD_STEPWISE:
        left.caption(f"Beyond {PLD_STEPWISE} releases PLD is computed exactly at "
                     f"{len(curve_counts(setting['steps'], 'pld'))} release counts (the steps of its curve); in "
                     "between the curve shows the next computed value, an upper bound. The end point is exact.")
if shown(3):
    with right:
        st.subheader("Why three numbers for one mechanism?")
        st.markdown(
            "All three bound the privacy loss of *the same* noisy releases; they differ only in how tightly they "
            "add up T releases and turn the total into (ε, δ).\n\n"
            "- **Moments accountant (paper).** Tracks the Rényi divergence at whole-number orders 2..63 and "
            "converts with the classic formula ε = RDP(α) + log(1/δ)/(α − 1). This is what the DP-FTS-DE paper "
            "reports, and it is the loosest.\n"
            "- **RDP.** The same Rényi bound at more orders, with a sharper conversion to (ε, δ): a smaller ε for "
            "the same run.\n"
            "- **PLD.** Follows the whole distribution of the privacy loss and composes it numerically. It is "
            "nearly exact (rounded up, never down), so it gives the smallest ε.\n\n"
            "So compare ε values only when they come from the same accountant, and quote the accountant with "
            "the number.")


# ---------------------------------------------------------------- inverse questions
if shown(4):
    st.header("Inverse questions")
    st.write("Fix a target ε and solve for the one knob you want to choose; the other knobs keep the values above.")
    with st.form("acc_inverse"):
        fcols = st.columns([1.3, 1, 2])
        with fcols[0]:
            solve = st.radio("solve for", list(SOLVE_LABELS), format_func=SOLVE_LABELS.get, key="acc_solve",
                             help="z: the least noise; q: the largest sampling probability; T: the most releases "
                                  "that keep ε at or below the target.")
        with fcols[1]:
            target = st.number_input("target ε", value=5.0, step=0.5, format="%.2f", key="acc_target",
                                     help="The privacy budget ε* you want to end the run at.")
            target_slot = st.empty()
        with fcols[2]:
            chosen = st.multiselect("accountants", ACCOUNTANTS, default=list(ACCOUNTANTS), key="acc_solve_with",
                                    format_func={"ma": "moments (paper)", "rdp": "RDP", "pld": "PLD"}.get,
                                    help="Calibration with RDP and PLD takes a few seconds; results are cached.")
        submitted = st.form_submit_button("Solve", type="primary", icon=":material/calculate:", key="acc_solve_go")

    if submitted:
        solve_errors = ErrorSlots()
        try:
            target = check_positive("target_epsilon", target, name="target epsilon")
        except ConfigError as err:
            target_slot.error(str(err), icon=":material/error:")
        else:
            solve_errors.fallback()
            answer = solve_live(setting, solve, target, chosen, solve_errors)
            if answer is not None:
                st.session_state["acc_inverse_result"] = answer

    result = st.session_state.get("acc_inverse_result")
    if result:
        st.write(f"**{result['question']}**")
        st.dataframe(readable(pd.DataFrame(result["rows"])), hide_index=True)

# ---------------------------------------------------------------- the paper's Fig. 2
if shown(5):
    st.header("The paper's Fig. 2 numbers, recomputed")
    st.write("DP-FTS-DE paper, Fig. 2c-d: N = 200 agents, δ = 200^-1.1, T = 40 releases, Poisson sampling. "
             "The paper used the moments accountant; our moments accountant should match it to two decimals, and "
             "the tighter accountants give smaller ε for the same runs.")
    with st.spinner("Accounting the paper's settings..."):
        table = fig2_table()
    st.table(pd.DataFrame(table).style.format(precision=2).hide(axis="index"))
