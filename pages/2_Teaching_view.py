"""Teaching view: one server iteration of DP-FTS-DE, step by step."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import numpy as np
import streamlit as st

from engine.fbo.teaching import MAX_ROUND, noise_schedule, round_weights, server_round, teaching_config
from engine.limits import LIGHT_SECONDS, check, fbo_cost
from engine.validation import ConfigError
from ui.kit.charts import show
from ui.kit.errors import ErrorSlots
from ui.fbo.teaching_figures import (
    functions_figure,
    noise_schedule_figure,
    norms_figure,
    signal_noise_figure,
    weights_bar_figure,
)
from ui.fbo import teaching_controls as controls
from ui.kit.compute import compute, pooled
from ui.kit.opening import open_page
from ui.kit.presenter import presenter_toggle, presenter_wanted, slide_nav
from ui.kit.routes import TEACHING

opening = open_page(TEACHING, controls.init, sidebar="collapsed" if presenter_wanted("teach_present") else "auto")
PREFIX, PARAMS = controls.PREFIX, controls.PARAMS
STEPS = ["The agents' vectors", "Subsampling", "Clipping", "Weighted sums per sub-region", "Noise",
         "Back to functions", "More noise than DP-FTS, early on"]


# A few rounds shared by every session ("Draw another round" makes a new one each time): each keeps its
# vectors (N x M) and candidate functions, so the entries are few.
@st.cache_data(show_spinner=False, max_entries=8)
def cached_round(config):
    return server_round(config)


def this_round(config, seconds: float):
    """The round of ``config``: kept in the session for its reruns, else computed: at once when its price
    (``seconds``) is light, like the accountant's light work, otherwise after waiting for a place in the run
    pool, so a classroom's first view does not queue behind the host's heavy runs."""
    kept = st.session_state.get(PREFIX + "round")
    if kept is not None and kept[0] == config:
        return kept[1]
    run = compute if seconds <= LIGHT_SECONDS else pooled
    rnd = run(cached_round, config, walled="agents")
    st.session_state[PREFIX + "round"] = (config, rnd)
    return rnd


slots = ErrorSlots()
with st.sidebar:
    st.header("The round to look at")
    st.caption("A short real DP-FTS-DE run on the paper's synthetic task; we stop at iteration t and open up the "
               "server's work.")
    st.number_input("agents N", key=PREFIX + "agents", step=10,
                    help="More agents: each one weighs less, so less noise is needed per agent.")
    slots.under("agents")
    st.number_input("sub-regions P", key=PREFIX + "P", step=1,
                    help="The domain [0, 1] is cut into P intervals, one vector per interval.")
    slots.under("P")
    st.number_input("iteration t", key=PREFIX + "t", step=1,
                    help="Which server round to open (weights are uniform from t = 10 on).")
    slots.under("t", "iterations")
    st.number_input("q (sampling)", key=PREFIX + "q", step=0.05, format="%.2f",
                    help="Probability that an agent is picked this round.")
    slots.under("q")
    st.number_input("z (noise)", key=PREFIX + "z", step=0.1, format="%.2f", help="Noise multiplier.")
    slots.under("z")
    st.number_input("S (clipping)", key=PREFIX + "S", step=1.0, format="%.1f",
                    help="Vectors are clipped to length S/√P; try a small S to see clipping.")
    slots.under("S")
    st.button("Draw another round", on_click=controls.redraw, icon=":material/casino:",
              help="Same settings, a new random seed.")
    st.caption(f"seed {st.session_state[PREFIX + 'seed']}")
    slots.fallback()

values = controls.current()

head = st.columns([4, 1.5], vertical_alignment="center")
head[0].title("Teaching view: one server round of DP-FTS-DE")
large = presenter_toggle(PREFIX + "present", where=head[1])
opening.note()

try:
    config = teaching_config(**{name: values[name] for name in PARAMS if name != "present"})
    price = check(fbo_cost(config, config.agents), what="This round")
    with st.spinner("Running a few iterations..."):
        rnd = this_round(config, price.seconds)
except ConfigError as err:
    slots.show(err)
    st.stop()

N = rnd.vectors.shape[0]
P = rnd.weights.shape[0]
norms = np.linalg.norm(rnd.vectors, axis=1)
clipped_norms = np.linalg.norm(rnd.clipped_vectors, axis=1)
n_selected = int(rnd.selected.sum())
n_clipped = int(rnd.clipped.sum())
signal_norm = np.linalg.norm(rnd.signal, axis=1)
noise_norm = np.linalg.norm(rnd.noise, axis=1)
q, z, S = values["q"], values["z"], values["S"]
phi_max = float(rnd.weights.max())

step = slide_nav("teach", STEPS, restart=controls.restart)

if not large:  # presenter mode: one idea per screen, so no running tally
    m = st.columns(5)
    m[0].metric("agents", N)
    m[1].metric("picked (q = %g)" % q, n_selected if step >= 1 else "–")
    m[2].metric("clipped", n_clipped if step >= 2 else "–")
    m[3].metric("noise std per coordinate", f"{rnd.noise_std:.3f}" if step >= 4 else "–")
    m[4].metric("noise / signal (length)", f"{np.mean(noise_norm / np.maximum(signal_norm, 1e-12)):.2f}"
                if step >= 4 else "–")

text = st.container()
if step == 0:
    text.markdown(
        f"After its own BO step, every agent samples a vector ωₙ of M = {rnd.vectors.shape[1]} random-feature "
        f"weights from its GP posterior and sends it to the server. Each bar is the length of one agent's vector; "
        f"the colour is the sub-region the agent explored at the start.")
    show(norms_figure(norms, threshold=rnd.threshold, assignment=rnd.assignment,
                      title="Step 1: length of each agent's vector ω<sub>n</sub>"), key="teach_fig_norms", large=large,
         about="One bar per agent, as tall as the vector it sends, coloured by the sub-region it explored first, "
               "with the red dashed line at the clipping bound.")
elif step == 1:
    text.markdown(
        f"The server keeps each agent independently with probability q = {q:g}: this round it picked "
        f"**{n_selected} of {N}**. An agent that may not even be used is harder to spot in the output, which is why "
        f"subsampling makes each release more private (amplification by subsampling).")
    show(norms_figure(norms, threshold=rnd.threshold, selected=rnd.selected,
                      title="Step 2: the agents picked this round"), key="teach_fig_selected", large=large,
         about="The same bars, blue for the agents the server picked at random this round and grey for the rest.")
elif step == 2:
    text.markdown(
        f"Every picked vector longer than S/√P = {S:g}/√{P} = **{rnd.threshold:.2f}** is shrunk to that length "
        f"(**{n_clipped}** clipped this round). This caps how far one agent can move the result, so the noise only "
        f"has to hide a known, bounded change.")
    show(norms_figure(norms, threshold=rnd.threshold, selected=rnd.selected, clipped_norms=clipped_norms,
                      title="Step 3: clipping the picked vectors"), key="teach_fig_clipped", large=large,
         about="Each picked vector's length before clipping (red outline) and after (blue), never above the dashed "
               "line at S/√P.")
elif step == 3:
    text.markdown(
        f"For each sub-region i the server adds up the picked vectors with weights φₙ⁽ⁱ⁾/q. Dividing by q makes the "
        f"sum an unbiased estimate of the weighted average over *all* agents, although only {n_selected} took part.")
    own, other = round_weights(rnd.weights, rnd.assignment)
    if not large:  # presenter mode: the two sentences above and the two charts; the detail is for reading
        text.markdown(
            f"The bars have only two heights because a weight depends only on where an agent **started**, not on "
            f"how well it did: in its own sub-region an agent counts φ/q = {own / q:.3g}, elsewhere {other / q:.2g}. "
            f"At t = {values['t']} a sub-region listens almost only to its own explorers; the weights even out until "
            "they are equal from t = 10 on (try the iteration t on the left).")
    c1, c2 = st.columns(2)
    show(weights_bar_figure(rnd.weights, rnd.selected, q), key="teach_fig_weights", where=c1, large=large,
         about="For every picked agent, how much its vector counts in each sub-region's sum (one colour per "
               "sub-region).")
    show(signal_noise_figure(rnd.signal, rnd.noise, show_noise=False), key="teach_fig_signal", where=c2,
         large=large, about="The weighted sum of each sub-region, coordinate by coordinate, before any noise.")
elif step == 4:
    text.markdown(
        f"Gaussian noise with standard deviation z·φ_max·S/q = {z:g} × {phi_max:.4f} × {S:g} / {q:g} = "
        f"**{rnd.noise_std:.3f}** is added to every coordinate: enough to hide the largest change one agent "
        f"could cause. Here the noise vector is {np.mean(noise_norm / np.maximum(signal_norm, 1e-12)):.1f} times as "
        f"long as the signal; more agents (smaller φ_max), a larger q or a smaller z shrink that ratio.")
    show(signal_noise_figure(rnd.signal, rnd.noise, show_noise=True), key="teach_fig_noise", large=large,
         about="Each sub-region's sum before the noise (line and dots) and after it (crosses): the crosses are what "
               "the agents receive.")
    if not large:
        st.caption(" · ".join(f"sub-region {i + 1}: ‖signal‖ = {signal_norm[i]:.2f}, ‖noise‖ = {noise_norm[i]:.2f}"
                              for i in range(P)))
elif step == 5:
    text.markdown(
        "Every agent receives the P noisy vectors and turns each back into a function f̃(x) = φ(x)ᵀω⁽ⁱ⁾, using "
        "sub-region i's vector inside sub-region i (thick lines; dotted: the same without noise). With probability "
        "1 − p_t an agent queries the maximiser of this piecewise function (the star) instead of the maximiser of its "
        "own GP sample.")
    show(functions_figure(rnd.x, rnd.clean_f, rnd.noisy_f, rnd.bounds, truth=rnd.truth), key="teach_fig_functions",
         large=large, about="The received vectors turned back into functions over x (thick inside their own "
                            "sub-region, dotted without noise), the objective in black on the right axis, and the "
                            "star where an agent that follows the server queries next.")
else:
    sched = noise_schedule(config, MAX_ROUND)
    first, even = sched.dp_fts_de[0], sched.even_from
    until = f" until the weights even out at t = {even}" if even else ""
    text.markdown(
        f"**DP-FTS-DE's first rounds are {sched.ratio[0]:.1f} times noisier than DP-FTS's** (P = {P}): noise std "
        f"**{first:.3f}** against **{sched.dp_fts:.3f}** per coordinate{until}. A property of the published "
        "mechanism, not a bug.")
    if not large:  # presenter mode: the one idea above and the chart; the reasons are for reading
        text.markdown(
            f"The noise must hide the largest change one agent can cause, so it grows with the largest weight "
            f"φ_max (Algorithm 1, line 11: the largest over every sub-region). DP-FTS (P = 1) weighs every agent "
            f"1/N = {1 / N:.4f}. DP-FTS-DE's weights first favour each sub-region's own explorers (about N/P = "
            f"{N / P:.0f} agents), so at t = 1 φ_max = {sched.phi_max[0]:.4f} ≈ P/N. This falls in the first "
            "rounds, when agents follow the broadcast most (1 − p_t is largest), so compare DP-FTS with DP-FTS-DE "
            "knowing it.")
    show(noise_schedule_figure(sched.iterations, sched.dp_fts_de, sched.dp_fts, P=P, current=values["t"]),
         key="teach_fig_noise_schedule", large=large,
         about="The noise the server adds to every coordinate in each round, DP-FTS-DE's against DP-FTS's at the same "
               "q, z and S, with this round circled.")

if not large:  # presenter mode keeps to the one idea on screen
    with st.expander("Where this is in the paper"):
        st.markdown(
            "DP-FTS-DE paper, Algorithm 1 (central server): line 6 picks the subset S_t, line 9 clips to S/√P, line 10 "
            "adds φₙ⁽ⁱ⁾/q · ω̂ₙ per sub-region, line 11 adds N(0, (z φ_max S/q)² I), line 12 broadcasts. "
            "Algorithm 2 (agent), line 8: with probability 1 − p_t the agent queries the x that maximises φ(x)ᵀω⁽ⁱ⁾, "
            "i being the sub-region of x. The privacy loss of the release is accounted on the "
            "Privacy accountant page.")
