"""Plan a deployment: from a team's N, T, privacy budget and task to the setting to deploy, in one click."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)

import time

import streamlit as st

from engine.advise import planned_tasks, request_cost
from engine.advise.hype import HypeAdvice
from engine.cli.fbo import command_line as fbo_command_line
from engine.cli.hype import command_line as hype_command_line
from engine.limits import format_seconds
from engine.validation import ConfigError
from ui.advise import controls
from ui.advise.views import deploy_buttons, progress, show_advice
from ui.kit.charts import empty_state
from ui.kit.errors import ErrorSlots
from ui.kit.opening import open_page
from ui.kit.routes import PLAN
from ui.kit.run_loop import LiveLine, RunStatus, checked, current_run, run_buttons, run_live, show_failure

SCRIPT_START = time.perf_counter()
opening = open_page(PLAN, controls.init)

st.title("Plan a deployment")
st.write(
    "Tell the advisor your federation (**N** agents, **T** iterations), the privacy budget (**ε**, **δ**) and what "
    "your objective looks like. It searches every DP-FTS-DE setting that meets the budget **exactly** (z calibrated "
    "by the RDP accountant for each sampling rate q and T), compares them on common random numbers, and recommends "
    "the best with its predicted utility, the settings it cannot tell apart from it, what the budget costs against "
    "FTS-DE without privacy, what the federation gains against TS, and how the advice changes if your task is "
    "smoother, rougher or more heterogeneous than you said. For DP-HYPE it chooses the votes per client k and the "
    "noise. The recommendation downloads as a Flower app, a configuration file and a command line.")
opening.note()

slots = ErrorSlots()
with st.sidebar:
    controls.sidebar(slots)
values = controls.current()
request, price, executor = None, None, None
try:
    request = controls.request_of(values)
    executor = controls.executor_of(values)
    price = checked(request_cost(request, executor=executor), what="This search")
except ConfigError as err:
    slots.show(err)

if price is not None:
    st.caption(f"Estimated {format_seconds(price.cost.seconds)} of computing"
               + (f" on {executor.workers} worker processes" if executor.kind == "joblib" and executor.workers
                  and executor.workers > 1 else "") + ". Stop keeps what the search found so far.")
run_clicked, (message_col,) = run_buttons("adv", disabled=price is None)
with message_col:
    slots.fallback()
run_errors = ErrorSlots()
run_errors.fallback()
progress_slot = st.empty()
result_slot = st.empty()


def draw(run, suffix: str) -> None:
    if run.results and run.results[0] is not None:
        show_advice(run.results[0], suffix, where=result_slot.container())


if run_clicked and price is not None:
    line = LiveLine("advice", controls.start(request, executor), planned_tasks(request))
    run_live(controls.RUN_KEY, [line], values=values, draw=draw, progress_slot=progress_slot, errors=run_errors,
             price=price, snapshot=controls.snapshot, progress=progress, started=SCRIPT_START,
             slots=(executor.workers or 1) if executor.kind == "joblib" else 1,
             starting="Calibrating z for every q ...")

run = current_run(controls.RUN_KEY, run_clicked)
if run is not None and run.status is RunStatus.FAILED:
    show_failure(run, st)
if run is None or not run.shown():
    empty_state("**No advice yet.** Press **Run**: the leading setting appears within seconds and sharpens as the "
                "search narrows the settings down; the recommendation, the tied settings, the references and the "
                "sensitivity table follow, then the Flower app to download.", where=result_slot)
else:
    advice = run.shown()[0][1]
    draw(run, "final")
    if run.values != values:
        st.caption("This advice is for earlier settings; press Run to update it.")
    if run.status is RunStatus.STOPPED:
        st.warning((run.message or "Stopped") + ": the advice above is what the search found so far.",
                   icon=":material/pause_circle:")
    if isinstance(advice, HypeAdvice):
        deploy_buttons(advice, hype_command_line(advice.config), key="adv_deploy", cache=run.cache)
    elif advice.deployment is not None:
        deploy_buttons(advice, fbo_command_line(advice.deployment), key="adv_deploy", cache=run.cache)
