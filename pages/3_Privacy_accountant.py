"""Privacy accountant: epsilon of the subsampled Gaussian mechanism under three accountants."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.privacy import ACCOUNTANT_LABELS, ACCOUNTANTS, SAMPLING, default_delta, fixed_sample_size, supports
from engine.privacy.accountants import PLD_STEPWISE, Q_MIN, Z_MAX, Z_MIN, curve_counts
from engine.limits import accountant_cost, check
from engine.validation import ConfigError, check_int, check_positive, check_probability_open, check_range
from ui.cached import (
    cached_calibrate_q,
    cached_calibrate_steps,
    cached_calibrate_z,
    cached_epsilon,
    cached_epsilon_curve,
)
from ui.errors import ErrorSlots
from ui.live_run import LiveLine, RunStatus, compute, run_live
from ui.privacy_figures import epsilon_vs_steps_figure
from ui.routes import ACCOUNTANT
from ui.state import Param, current_values, seed_controls, set_state

ACCOUNTANT.configure()

PREFIX = "acc_"
MAX_STEPS = 100_000
PARAMS = {
    "q": Param(0.25, float, low=Q_MIN, high=1.0),
    "z": Param(1.0, float, low=Z_MIN, high=Z_MAX),
    "steps": Param(40, int, low=1, high=MAX_STEPS),
    "agents": Param(200, int, low=1, high=10**9),
    "delta_mode": Param("paper", str, ("paper", "manual")),
    "delta": Param(1e-5, float, low=1e-300, high=1 - 1e-9),
    "sampling": Param("poisson", str, SAMPLING),
}
# DP-FTS-DE paper, Fig. 2 (c, d): N = 200, delta = 200^-1.1, T = 40, moments accountant.
PAPER_FIG2 = [
    dict(q=0.15, z=1.0, paper=5.93), dict(q=0.25, z=1.0, paper=9.91), dict(q=0.5, z=1.0, paper=20.12),
    dict(q=0.25, z=1.2, paper=7.39), dict(q=0.25, z=1.5, paper=5.22),
]
FIG2_SETTINGS = dict(q=0.25, z=1.0, steps=40, agents=200, delta_mode="paper", sampling="poisson")
SOLVE_LABELS = {"z": "noise multiplier z", "q": "sampling probability q", "steps": "number of releases T"}


def load_fig2():
    set_state(FIG2_SETTINGS, PREFIX)


ignored = seed_controls(PARAMS, PREFIX, presets=("fig2",), preset_values=lambda name: FIG2_SETTINGS)

st.title("Privacy accountant")
st.write(
    "Every private federated BO run releases, at each iteration, a noisy average of a random subset of the "
    "agents' vectors: the **subsampled Gaussian mechanism**. Each agent takes part with probability **q**, the "
    "noise has standard deviation **z** times the largest contribution one agent can make, and the server "
    "releases **T** times. Here you see what privacy loss ε (at a failure probability δ) that costs, "
    "according to three accountants.")
if ignored:
    st.warning(f"Ignored link parameter(s) that did not parse: {', '.join(ignored)}.")

slots = ErrorSlots()
cols = st.columns([1, 1, 1, 1.4, 1.1])
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
    st.radio("failure probability δ", ("paper", "manual"), key=PREFIX + "delta_mode", horizontal=True,
             format_func={"paper": "δ = 1/N^1.1 (paper)", "manual": "enter δ"}.get,
             help="δ is the probability that the ε guarantee fails; the paper uses 1/N^1.1 for N agents. "
                  "Smaller δ: larger ε.")
    if st.session_state[PREFIX + "delta_mode"] == "paper":
        st.number_input("number of agents N", key=PREFIX + "agents", step=10,
                        help="Only sets δ = 1/N^1.1 (and the subset size for fixed-size sampling).")
        slots.under("agents")
        agents_now = st.session_state[PREFIX + "agents"]
        if isinstance(agents_now, int) and agents_now >= 1:
            st.caption(f"δ = {default_delta(agents_now):.3g}")
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
st.button("Load the paper's Fig. 2 setting (q = 0.25, z = 1, T = 40, N = 200)", on_click=load_fig2,
          icon=":material/article:")
slots.fallback()

values = current_values(PARAMS, PREFIX)


def resolve(values: dict) -> dict:
    """Validate the controls; raises ConfigError naming the control."""
    q = check_range("q", values["q"], 0, 1, low_open=True)
    z = check_positive("z", values["z"])
    steps = check_int("steps", values["steps"], 1, MAX_STEPS, name="number of iterations")
    agents = None
    if values["delta_mode"] == "paper" or values["sampling"] == "fixed":
        agents = check_int("agents", values["agents"], 1, name="number of agents")
    delta = default_delta(agents) if values["delta_mode"] == "paper" else values["delta"]
    delta = check_probability_open("delta", delta)
    return dict(q=q, z=z, steps=steps, delta=delta, sampling=values["sampling"],
                n_agents=agents if values["sampling"] == "fixed" else None)


try:
    setting = resolve(values)
except ConfigError as err:
    slots.show(err)
    st.stop()

common = dict(sampling=setting["sampling"], n_agents=setting["n_agents"])
if setting["sampling"] == "fixed":
    st.caption(f"Fixed-size sampling: {fixed_sample_size(setting['q'], setting['n_agents'])} agents per release.")

# ---------------------------------------------------------------- epsilon, three ways
def account(acc: str):
    curve = cached_epsilon_curve(setting["q"], setting["z"], setting["steps"], setting["delta"], acc, **common)
    # RDP composes exactly along the curve; PLD's curve uses a coarser grid, so its end point is redone.
    return curve, (cached_epsilon(setting["q"], setting["z"], setting["steps"], setting["delta"], acc, **common)
                   if acc == "pld" else float(curve[-1]))


usable = [acc for acc in ACCOUNTANTS if supports(acc, setting["sampling"])]
try:
    check(accountant_cost(setting["steps"], usable, z=setting["z"]), what="This accounting")
except ConfigError as err:
    slots.show(err)
    st.stop()
eps, curves, refused = {}, {}, {}
with st.spinner("Accounting (PLD takes a second the first time)..."):
    for acc in usable:
        try:
            curves[acc], eps[acc] = compute(account, acc)
        except ConfigError as err:    # e.g. PLD with very little noise
            refused[acc] = str(err)

metric_cols = st.columns(3)
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

left, right = st.columns([3, 2])
with left:
    st.plotly_chart(epsilon_vs_steps_figure(curves, delta=setting["delta"], marks=eps), key="acc_curve")
    if "pld" in curves and setting["steps"] > PLD_STEPWISE:
        st.caption(f"Beyond {PLD_STEPWISE} releases PLD is computed exactly at "
                   f"{len(curve_counts(setting['steps'], 'pld'))} release counts (the steps of its curve); in between "
                   "the curve shows the next computed value, an upper bound. The end point is exact.")
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

def solve_rows(solve: str, target: float, chosen: list[str]):
    """One more answer row per accountant (a generator: the calibration runs as a live run, stoppable)."""
    rows, p = [], setting
    for acc in chosen:
        if not supports(acc, p["sampling"]):
            rows.append({"accountant": ACCOUNTANT_LABELS[acc], "answer": "n/a (no fixed-size sampling)"})
            yield list(rows)
            continue
        try:
            if solve == "z":
                answer = cached_calibrate_z(target, p["q"], p["steps"], p["delta"], acc, **common)
                reached = cached_epsilon(p["q"], answer, p["steps"], p["delta"], acc, **common)
                text = f"z = {answer:.4f}"
            elif solve == "q":
                answer = cached_calibrate_q(target, p["z"], p["steps"], p["delta"], acc, **common)
                reached = cached_epsilon(answer, p["z"], p["steps"], p["delta"], acc, **common)
                text = f"q = {answer:.4f}"
            else:
                answer = cached_calibrate_steps(target, p["q"], p["z"], p["delta"], acc, **common)
                reached = cached_epsilon(p["q"], p["z"], answer, p["delta"], acc, **common) if answer else 0.0
                text = f"T = {answer}" if answer else "not even one release fits"
            rows.append({"accountant": ACCOUNTANT_LABELS[acc], "answer": text, "ε reached": round(float(reached), 4)})
        except ConfigError as err:
            rows.append({"accountant": ACCOUNTANT_LABELS[acc], "answer": str(err)})
        yield list(rows)


if submitted:
    solve_errors = ErrorSlots()
    try:
        target = check_positive("target_epsilon", target, name="target epsilon")
    except ConfigError as err:
        target_slot.error(str(err), icon=":material/error:")
    else:
        solve_errors.fallback()
        largest = MAX_STEPS if solve == "steps" else setting["steps"]
        run = run_live("acc_inverse_run", [LiveLine("solve", lambda: solve_rows(solve, target, chosen), len(chosen))],
                       values={}, draw=lambda run, suffix: None, progress_slot=st.empty(), errors=solve_errors,
                       cost=accountant_cost(largest, chosen, curve=False, calibrations=1, z=setting["z"]),
                       what="This calibration",
                       starting="Calibrating (a few seconds for RDP and PLD the first time) ...",
                       progress=lambda latest, counts: (counts[0] / max(len(chosen), 1),
                                                        f"{counts[0]} of {len(chosen)} accountants"))
        if run is not None and run.results and run.results[0] is not None:
            st.session_state["acc_inverse_result"] = dict(
                rows=run.results[0], question=f"{SOLVE_LABELS[solve]} for ε = {target:g} (δ = {setting['delta']:.3g})"
                + ("" if run.status is RunStatus.DONE else f" ({run.message or 'stopped'}; the rows that finished)"))

result = st.session_state.get("acc_inverse_result")
if result:
    st.write(f"**{result['question']}**")
    st.dataframe(pd.DataFrame(result["rows"]), hide_index=True)

# ---------------------------------------------------------------- the paper's Fig. 2
st.header("The paper's Fig. 2 numbers, recomputed")
st.write("DP-FTS-DE paper, Fig. 2c-d: N = 200 agents, δ = 200^-1.1, T = 40 releases, Poisson sampling. "
         "The paper used the moments accountant; our moments accountant should match it to two decimals, and "
         "the tighter accountants give smaller ε for the same runs.")
paper_delta = default_delta(200)


def fig2_table() -> list[dict]:
    return [dict({"q": row["q"], "z": row["z"], "paper (moments accountant)": row["paper"]},
                 **{f"ours: {ACCOUNTANT_LABELS[acc]}": cached_epsilon(row["q"], row["z"], 40, paper_delta, acc)
                    for acc in ACCOUNTANTS}) for row in PAPER_FIG2]


with st.spinner("Accounting the paper's settings..."):
    table = compute(fig2_table)
st.table(pd.DataFrame(table).style.format(precision=2).hide(axis="index"))
