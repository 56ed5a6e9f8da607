"""DP-HYPE: private distributed hyperparameter voting, with live vote histograms."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import math
import time

import numpy as np
import streamlit as st

from engine.cli.hype import command_line as hype_command_line
from engine.hype import HypeConfig, iter_hype
from engine.hype.presets import preset_figure
from engine.hype.scores import training_label
from engine.reproduce.stored_papers import preset_in_view
from engine.hype.sweeps import CURVE_REPETITIONS, FIG2A_EPSILONS, FIG2A_KS, FIG2A_SIGMA_LOSSES, curve_axis
from engine.hype.utility import mean_interval
from engine.hype.voting import sensitivity
from engine.limits import LIGHT_SECONDS, check, hype_cost, hype_grid_cost
from engine.validation import ConfigError
from ui.hype import controls
from ui.audit.panel import vote_panel
from ui.kit.cached import cached_grid, cached_noise, cached_table
from ui.kit.charts import empty_state, show
from ui.kit.errors import ErrorSlots
from ui.kit.downloads import config_download
from ui.hype.figures import (
    accuracy_figure,
    clean_votes_figure,
    fig2a_figure,
    noisy_votes_figure,
    success_curve_figure,
    winners_figure,
)
from ui.kit.run_loop import LiveLine, RunStatus, checked, current_run, run_buttons, run_live, show_failure
from ui.kit.compute import compute, flower_app
from ui.kit.opening import open_page
from ui.kit.routes import HYPE
from ui.reproduction.view import paper_note, stored_data_figure

SCRIPT_START = time.perf_counter()
opening = open_page(HYPE, controls.init)

slots = ErrorSlots()
with st.sidebar:
    controls.sidebar(slots)
values = controls.current()

# ---------------------------------------------------------------- main area
st.title("DP-HYPE: private hyperparameter voting")
st.write(
    "Every client scores each candidate hyperparameter on its own data and votes for its **k** best. Each adds "
    "Gaussian noise to its 0/1 vote vector; a **secure summation** reveals only the sum to the server, which picks "
    "the candidate with the most noisy votes. The noise on the sum is calibrated to (ε, δ) with sensitivity √(2k), "
    "whatever the number of candidates. Press **Run** and watch the votes and the winners accumulate.")
opening.note()
preset = preset_in_view(values, {name: preset_values for name, (_, preset_values) in controls.PRESETS.items()})
paper_note("dp-hype", preset_figure(preset) if preset else None)   # a reproduced figure: its stored verdicts
stored_data_figure("dp-hype", preset_figure(preset) if preset else None, setting=values)   # the stored figure

config = None
try:
    config = controls.config_of(values, priced=False)
    price = checked(hype_cost(config))     # the run's one price
    noise = cached_noise(config)
except ConfigError as err:
    config = None
    slots.show(err)

if config is not None:
    m = st.columns(5)
    m[0].metric("ε of one vote", "∞ (no noise)" if math.isinf(noise.epsilon) else f"{noise.epsilon:.3g}")
    m[1].metric("σ on the sum", f"{noise.sigma:.3g}", help=f"Sensitivity √(2k) = {sensitivity(config.k):.3g}.")
    m[2].metric("σ per client", f"{noise.per_client:.3g}",
                help="Each client adds N(0, σ² / ((1 - ξ) n)) to every entry of its vote vector.")
    m[3].metric("σ actually on the sum", f"{noise.actual:.3g}",
                delta=None if config.dropped == 0 else f"{config.dropped} of {config.clients} clients drop out",
                delta_color="off")
    m[4].metric("actual ε", "∞" if math.isinf(noise.actual_epsilon) else f"{noise.actual_epsilon:.3g}",
                delta=None if noise.actual >= noise.sigma - 1e-12 else "above the budget: too many dropouts",
                delta_color="inverse")

run_clicked, (message_col,) = run_buttons("hype", disabled=config is None)
with message_col:
    slots.fallback()
status_slot = st.empty()
progress_slot = st.empty()
empty_slot = st.empty()
top = st.columns(2)
clean_slot, noisy_slot = top[0].empty(), top[1].empty()
winners_slot = st.empty()
summary_slot = st.empty()


def draw_empty() -> None:
    """Before the first run: what will appear, not charts with meaningless axes."""
    empty_state("**Nothing has been voted yet.** Press **Run**: the vote repeats with fresh noise and three charts "
                "grow here: how many clients put each candidate in their top k (good candidates green), the noisy "
                "sum the server sees with its winner starred, and how often each candidate has won so far.",
                where=empty_slot)


def draw(result, suffix: str) -> None:
    labels = result.labels
    show(clean_votes_figure(result.clean_votes, result.good, labels=labels,
                            title="Clean votes per candidate (last repetition)"), key=f"hype_clean_{suffix}",
         where=clean_slot, about="For each candidate hyperparameter, how many clients put it among their k best "
                                 "before any noise; green bars are the truly good candidates.")
    show(noisy_votes_figure(result.noisy_votes, result.good, result.winner, labels=labels,
                            noise_std=result.noise_std), key=f"hype_noisy_{suffix}", where=noisy_slot,
         about="The same vote counts after every client's noise is added, which is all the server sees, with a "
               "star on the candidate it picks.")
    show(winners_figure(result.winner_counts, result.good, result.repetitions, labels=labels,
                        total=result.config.repetitions), key=f"hype_winners_{suffix}", where=winners_slot,
         about="How many of the repetitions so far each candidate has won: mostly green bars mean the private "
               "vote usually finds a good candidate.")


def draw_summary(result) -> None:
    with summary_slot.container():
        cols = st.columns(4)
        low, high = result.success_ci
        cols[0].metric("good candidate chosen", f"{result.success_rate:.1%}",
                       help=f"95 % interval {low:.1%} to {high:.1%} over {result.repetitions:,} repetitions.")
        cols[1].metric("Theorem V.1 bound", f"{result.bound:.1%}",
                       help="Mean over repetitions of 1 - |H_bad| σ/(γ√π) exp(-γ²/4σ²) given the clean votes; "
                            "0 when a bad candidate has as many clean votes as a good one (γ ≤ 0).")
        cols[2].metric("vote gap γ (last)", f"{result.gamma:g}",
                       help="Fewest clean votes of a good candidate minus most clean votes of a bad one.")
        cols[3].metric("winner (last)", f"#{result.winner}",
                       help=result.labels[result.winner] if result.labels else None)
        if result.config.mode == "data":
            acc = result.accuracy_summary()
            cols = st.columns(3)
            for col, name, label in ((cols[0], "accuracy_dp_hype", "DP-HYPE accuracy"),
                                     (cols[1], "accuracy_opt", "OPT accuracy"),
                                     (cols[2], "accuracy_randguess", "RANDGUESS accuracy")):
                lo, hi = acc[name + "_ci"]
                col.metric(label, f"{acc[name]:.3f}",
                           help=f"95 % interval {lo:.3f} to {hi:.3f}" if hi > lo else "one run: a single value")
            good = np.flatnonzero(result.good)
            st.caption(f"Good candidates: test accuracy within {result.config.good_within:g} of OPT "
                       f"({len(good)} of {result.config.p}). Accuracies are of candidates trained by federated "
                       f"averaging over all clients ({training_label(result.config.dataset)}), scored on the "
                       "held-out test split.")


def votes(config):
    """The growing result of the repeated votes (data mode trains the score tables first, once per split)."""
    yield from iter_hype(config, every=max(100, config.repetitions // 10), load_table=cached_table)


def priced_grid(fields: dict, ks: tuple, epsilons: tuple, sigma_losses: tuple | None = None):
    """A grid of votes around the last run with as many repetitions as fit in the page's light budget."""
    points, spreads = len(ks) * len(epsilons), len(sigma_losses or (1,))
    one = hype_grid_cost(HypeConfig(**dict(fields, repetitions=1)), points, spreads)
    repetitions = min(int(fields["repetitions"]), int(LIGHT_SECONDS / max(one.seconds, 1e-12)))
    try:
        if repetitions < 1:
            raise ConfigError("These settings are too large to repeat for every point on this page.")
        fields = dict(fields, repetitions=repetitions)
        check(hype_grid_cost(HypeConfig(**fields), points, spreads), what="This curve")
        return compute(cached_grid, fields, ks, epsilons, sigma_losses)
    except ConfigError as err:
        st.info(str(err), icon=":material/info:")
        st.stop()


def progress(latest, counts) -> tuple[float, str]:
    done = latest[0].repetitions
    return done / config.repetitions, f"{done:,} of {config.repetitions:,} repetitions"


if run_clicked and config is not None:
    run_live(controls.RUN_KEY, [LiveLine("DP-HYPE", lambda: votes(config), 10)], values=values,
             draw=lambda live, suffix: draw(live.results[0], suffix), progress_slot=progress_slot, errors=slots,
             price=price, progress=progress, started=SCRIPT_START,
             starting="Training every candidate on every client (once per split; cached afterwards) ..."
             if config.mode == "data" else "Starting the votes ...")

run = current_run(controls.RUN_KEY, run_clicked)
if run is None:
    draw_empty()
    st.stop()
if run.status is RunStatus.FAILED:
    show_failure(run, status_slot)
    st.stop()
result = run.results[0]
if result is None:
    draw_empty()
    st.stop()
if not run_clicked:
    draw(result, "stored")
if config is None:
    st.stop()  # an invalid control: its sentence is shown, nothing more is computed
stale = result.config != config
text = (f"{result.repetitions:,} votes of {result.config.clients} clients on {result.config.p} candidates "
        f"in {result.elapsed:.1f} s.")
if stale:
    status_slot.info("The settings changed since this run: press Run to update. " + text, icon=":material/info:")
elif run.status is RunStatus.STOPPED:
    status_slot.warning("Stopped: the charts show the repetitions that finished. " + text,
                        icon=":material/pause_circle:")
else:
    status_slot.success(text, icon=":material/check_circle:")
draw_summary(result)
vote_panel(result.config)
config_download([("DP-HYPE", result.config)], hype_command_line, file_name="hype_config.json", key="hype_dl_config")
try:  # these settings as a Flower app whose clients vote through SecAgg+ (engine.flower.export needs no Flower)
    st.download_button("Export as a Flower app", flower_app("hype", result.config, run.cache),
                       file_name="dphype_flower_app.zip",
                       mime="application/zip", icon=":material/download:", on_click="ignore", key="hype_dl_flower",
                       help="A ready Flower app (server, clients, run config with these settings, README with the "
                            "commands); see docs/flower.md.")
except ConfigError as err:
    st.caption(f"Flower export: {err}")

# ---------------------------------------------------------------- curves over epsilon or k
shown = result.config
st.subheader("Success probability and Theorem V.1's bound")
curve_kind = st.radio("against", ("epsilon", "k"), key="hype_curve", horizontal=True,
                      format_func={"epsilon": "privacy budget ε", "k": "votes per client k"}.get,
                      help="Each point repeats the vote with the other settings of the last run (at most "
                           f"{CURVE_REPETITIONS:,} repetitions per point, sharing losses and noise).")
fields = shown.replace(repetitions=min(shown.repetitions, CURVE_REPETITIONS)).to_dict()
with st.spinner("Repeating the vote for every point..."):
    noise_eps = shown.epsilon if shown.epsilon is not None else result.epsilon
    if curve_kind == "k" and not math.isfinite(noise_eps):
        st.info("Without noise (σ = 0) there is no ε to hold fixed while k changes.")
        st.stop()
    ks, epsilons = curve_axis(shown, curve_kind, result.epsilon if curve_kind == "epsilon" else noise_eps)
    grid = priced_grid(fields, ks, epsilons)
    if curve_kind == "epsilon":
        x, x_label, mark = epsilons, "privacy budget ε (log scale)", result.epsilon
        success, ci, bound = grid.success_rate[0, 0], grid.success_ci()[0, 0], grid.bound[0, 0]
    else:
        x, x_label, mark = ks, f"votes per client k (ε = {noise_eps:.3g} fixed)", shown.k
        success, ci, bound = grid.success_rate[0, :, 0], grid.success_ci()[0, :, 0], grid.bound[0, :, 0]
cols = st.columns(2) if shown.mode == "data" and curve_kind == "epsilon" else [st.container()]
show(success_curve_figure(x, success, ci, bound, x_label=x_label, log_x=True, mark=mark), key="hype_success_chart",
     where=cols[0], about="How often the vote picks a good candidate (blue, with its 95 % interval) as the setting "
                          "changes, above the lower bound Theorem V.1 guarantees (orange).")
if shown.mode == "data" and curve_kind == "epsilon":
    opt, rand = mean_interval(grid.opt), mean_interval(grid.randguess)
    show(accuracy_figure(epsilons, grid.accuracy_interval()[0], opt[0], rand[0], opt_ci=opt[1:],
                         randguess_ci=rand[1:]), key="hype_accuracy", where=cols[1],
         about="Test accuracy of the candidate the private vote picks at each ε, between the best candidate (OPT) "
               "and a random pick (RANDGUESS).")

if shown.mode == "simulation" and values["fig2a"]:
    st.subheader("Paper Fig. 2a")
    fig2a_fields = shown.replace(repetitions=min(shown.repetitions, 2000)).to_dict()
    ks_2a = tuple(k for k in FIG2A_KS if k <= shown.p)
    with st.spinner("Computing the Fig. 2a grid (a few seconds)..."):
        grid2a = priced_grid(fig2a_fields, ks_2a, FIG2A_EPSILONS, FIG2A_SIGMA_LOSSES)
    show(fig2a_figure(FIG2A_SIGMA_LOSSES, ks_2a, FIG2A_EPSILONS, grid2a.success_rate, grid2a.bound),
         key="hype_fig2a_chart", about="The paper's Fig. 2a recomputed: success probability against how much the "
                                       "clients disagree (σ_loss), one line per k, for two privacy budgets.")
    st.caption(f"n = {shown.clients}, p = {shown.p}, |H_good| = {shown.good}, δ = {shown.delta:g}, "
               f"{grid2a.repetitions:,} repetitions per point. Larger k helps once σ_loss makes clients disagree; "
               "k = p makes every candidate tie and the winner a random guess.")
