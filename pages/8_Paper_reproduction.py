"""Paper reproduction: every stored paper's claims judged over runs; the summary first, then one paper at a time
(DP-FTS-DE's parts with a small live run, FTS, DP-HYPE and PO-GP-UCB figure by figure)."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import functools
import time

import streamlit as st

from engine.fbo import Simulation
from engine.objectives import dataset_label
from engine.objectives.registry import data_status
from engine.reproduce import PART_SPECS, PARTS, part_from_results, small_run_configs
from engine.reproduce.report import RUNS_PER_BLOCK
from engine.reproduce.fts import stored as stored_fts
from engine.reproduce.stored import stored_part
from engine.reproduce.stored_papers import stored_payloads
from engine.reproduce.stored_papers import summary as reproduction_summary
from engine.reproduce.tallies import stored_tallies
from ui.reproduction.papers import PAPER_LABELS, names, page_title, show_beside, show_claims, show_summary
from engine.validation import ConfigError
from ui.kit.cached import cached_lines_cost, cached_objective
from ui.kit.charts import show
from ui.kit.errors import ErrorSlots
from ui.fbo.figures import convergence_figure, convergence_lines
from ui.kit.run_loop import LiveLine, RunStatus, checked, current_run, run_buttons, run_live, show_failure
from ui.reproduction.view import show_fts_paper, show_part
from ui.kit.opening import open_page
from ui.kit.routes import REPRODUCTION
from ui.reproduction import controls
from ui.kit.table_build import (build_note, build_price, build_refusal, build_under_way, missing_data,
                                 show_build)

SCRIPT_START = time.perf_counter()
opening = open_page(REPRODUCTION, controls.init)

PREFIX = controls.PREFIX
RUN_KEY = "repro_run_state"
BUILD_ERROR = "repro_build_error"
slots = ErrorSlots()
payloads = stored_payloads()
with st.sidebar:
    st.radio("paper", controls.PAPERS, key=PREFIX + "paper", format_func=PAPER_LABELS.get,
             help="The paper shown below the summary. DP-FTS-DE: its parts, with a small run here. FTS: one target "
                  "agent and its meta-learning rivals RGPE and TAF. DP-HYPE and PO-GP-UCB: their figures and "
                  "tables in the paper's order (stored results).")
paper = controls.current()["paper"]

# ---------------------------------------------------------------- every paper at a glance
st.title(page_title(set(payloads) | {"dp-fts-de"}))
st.write(f"The experiments of {names(set(payloads) | {'dp-fts-de'})} run with this engine as their authors ran "
         "them, each setting over many seeded runs. Every claim a paper makes about its figures is tested twice: it "
         "*holds* (or is *reversed*) only when the discovery runs are decisive after correcting for the paper's "
         "many claims (false discovery rate 5 %) and a replication on fresh runs confirms it in the same "
         "direction; on generated functions every seed set draws new functions and the test counts functions. "
         "*Not significant* says what the evidence does: it leans the paper's way, leans against it, or the runs "
         "could not tell (underpowered). Claims of sameness are equivalence tests within a margin taken from the "
         "paper before the runs (not tested where the paper gives none), and each claim says the difference the "
         "whole rule would confirm with 80 % chance.")
opening.note()
st.subheader("Every paper at a glance")
st.caption("The stored reproductions (data/reproduction/): per paper and kind of data (the paper's own, a labelled "
           "stand-in, generated, another real data set beside the paper's tally), every claim once, never added up "
           "across kinds; identities (exact computations such as a privacy loss: no data) and claims that hold by "
           "construction are counted apart. Below, per figure. Choose a paper in the sidebar (or follow a row's "
           "link) to read its figures, one paper at a time.")
show_summary(reproduction_summary(), stored_tallies())
st.divider()
if paper == "fts":
    st.header(PAPER_LABELS["fts"])
    st.write("Federated Thompson sampling as Dai, Low and Jaillet (NeurIPS 2020) ran it: the other agents finished "
             "their BO tasks before the target starts and send one message each; FTS against TS, RGPE and TAF.")
    show_fts_paper(stored_fts())
    st.stop()
if paper in ("dp-hype", "po-gp-ucb"):
    st.header(PAPER_LABELS[paper])
    if paper in payloads:
        show_claims(paper, payloads[paper])
        show_beside(paper)
    else:
        st.info(f"No stored reproduction of this paper is installed here (data/reproduction/{paper}.json); "
                f"`python -m engine reproduce {paper}` makes one.", icon=":material/info:")
    st.stop()
with st.sidebar:
    st.header("Experiment")
    st.radio("part of the paper", PARTS, key=PREFIX + "part", format_func=controls.TITLES.get,
             help="Landmine: 29 agents tune an SVM, 60 iterations (Sec. 5.2). Synthetic: 200 agents on a GP draw, "
                  "40 iterations (Sec. 5.1). The stand-ins replace data this machine cannot fetch (activity "
                  "recognition: generated; EMNIST: scikit-learn's digits); their numbers are not the paper's data.")
    st.subheader("A small run here")
    st.number_input("runs per setting", key=PREFIX + "runs", step=1,
                    help=f"2 to {RUNS_PER_BLOCK}. Every setting runs the same seeds, so the comparisons are paired "
                         "run by run; differences of 0.001 need about 100 runs to resolve.")
    slots.under("runs")
    st.number_input("seed", key=PREFIX + "seed", step=1, help="Seeds the runs; the same seed gives the same numbers "
                    "as `python -m engine reproduce dp-fts-de` with the same runs.")
    slots.under("seed")
    slots.fallback()
values = controls.current()
part = PART_SPECS[values["part"]]
stored = stored_part(values["part"])

st.header(PAPER_LABELS["dp-fts-de"])
st.write("Our curves, with standard errors over runs, beside what the paper says, part by part (choose the part in "
         "the sidebar), and where a claim does not hold, the numbers and what we checked.")

# ---------------------------------------------------------------- a small live run, priced first
configs, price, config_error = [], None, None
try:
    configs = small_run_configs(part, values["runs"], values["seed"])
    # The table of scores, when missing, is built first by a job of its own: the runs are priced without it.
    price = checked(cached_lines_cost(tuple(cfg for _, cfg in configs), True), what="This reproduction")
except ConfigError as err:
    config_error = err
    too_large = controls.small_run_refusal(part, values)    # at the default runs: a sentence, not an error
    if too_large is None:
        slots.show(err)
data = data_status(part.base["dataset"])
if config_error is None:
    too_large = build_refusal(configs[0][1]) if configs and data.available else None   # its table's build

run_clicked, (message_col,) = run_buttons("repro", disabled=config_error is not None or not data.available
                                          or too_large is not None)
with message_col:
    if too_large is not None:
        st.caption(too_large)
    elif price is not None:
        estimate, build_sentence = build_note(configs[0][1], price.cost.seconds)
        st.caption(f"Runs all {len(configs)} settings of this part for {values['runs']} runs each here ({estimate}); "
                   f"the results below are the stored {stored.runs if stored else 100}-run reproduction until it "
                   f"finishes.{build_sentence}")
if not data.available:
    missing_data(data, dataset_label(part.base["dataset"]).split(":")[0])
if BUILD_ERROR in st.session_state:
    st.error(st.session_state.pop(BUILD_ERROR), icon=":material/error:")
progress_slot = st.empty()
live_slot = st.empty()

build = None
if configs and data.available and too_large is None and config_error is None:
    # Landmine's first run builds its table of scores once (in the background, its progress shown here), a job
    # priced on its own (build_refusal said whether it fits; a refusal lands under its control all the same).
    try:
        build = build_under_way(configs[0][1], start=run_clicked, price=build_price(configs[0][1]))
    except ConfigError as err:
        slots.show(err)
        run_clicked = False
    if build is not None:
        with progress_slot:
            show_build(build, error_key=BUILD_ERROR, then="Press Run once it is ready.")
        run_clicked = False


def simulate(cfg):
    """One setting's runs, yielded after every iteration."""
    sim = Simulation(cfg, cached_objective(cfg.dataset, cfg.agents, cfg.alpha, cfg.objective_seed, cfg.domain))
    for record in sim:
        record.server_step = None   # only the curves are shown: keep the stored result small
        yield sim


def draw_live(run, suffix: str) -> None:
    runs = run.shown()
    if runs:
        show(convergence_figure(convergence_lines(runs), metric_label=runs[0][1].metric_label,
                                total_iterations=runs[0][1].config.iterations), key=f"repro_live_{suffix}",
             where=live_slot, about="The small run growing: each setting's mean over agents and runs after every "
                                    "iteration, with a band of one standard error over runs.")


if run_clicked and config_error is None:
    lines = [LiveLine(setting.label, functools.partial(simulate, cfg), cfg.iterations + 1)
             for setting, cfg in configs]
    run_live(RUN_KEY, lines, values=values, draw=draw_live, progress_slot=progress_slot, errors=slots, price=price,
             snapshot=lambda sim: sim.result(), started=SCRIPT_START)
    live_slot.empty()

# ---------------------------------------------------------------- the results: stored, or the small run's
run = current_run(RUN_KEY, run_clicked)
live = None
if run is not None and run.status is RunStatus.FAILED:
    show_failure(run, st)
elif run is not None and run.status is RunStatus.DONE and run.values.get("part") == values["part"]:
    if "payload" not in run.cache:
        by_label = {setting.label: setting.key for setting in part.settings}
        run.cache["payload"] = part_from_results(part, {by_label[label]: res for label, res in run.shown()},
                                                 run.seconds or 0.0).to_json()
    live = run.cache["payload"]
elif run is not None and run.status is RunStatus.STOPPED:
    st.info("The small run was stopped before every setting finished; the stored results are shown.",
            icon=":material/pause_circle:")


sources = (["stored"] if stored else []) + (["live"] if live else [])
if not sources:
    st.info("No stored reproduction is installed here (data/reproduction/); press Run for a small one.",
            icon=":material/info:")
    st.stop()
labels = {"stored": f"stored: {stored.runs} runs per setting" if stored else "",
          "live": f"your run: {live['runs']} runs per setting" if live else ""}
shown = sources[0]
if len(sources) > 1:   # after a small run: it first, the stored results one click away
    shown = st.segmented_control("results", sources, default="live", format_func=labels.get,
                                 key="repro_source") or "live"
if shown == "stored":
    generated = stored.provenance
    st.caption(f"Stored with `{generated.get('command', 'python -m engine reproduce dp-fts-de')}`"
               + (f" on {generated['date']}" if generated.get("date") else "")
               + (f" ({generated['note']})" if generated.get("note") else "") + ".")
    show_part(stored.payload, part, key="repro_stored", source=f"The stored reproduction ({stored.runs} runs)")
else:
    show_part(live, part, key="repro_live_result", source=f"Your small run ({live['runs']} runs, seed "
              f"{run.values['seed']})")
