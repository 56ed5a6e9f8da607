"""The "Plan a deployment" page's controls: their parameters, the sidebar, and the request they describe."""

from __future__ import annotations

import functools

import streamlit as st

from engine.advise import AdviceRequest, advice_of_search, hype_advice, iter_search
from engine.advise.request import ALGORITHMS, PROXY, TASKS
from engine.executor import EXECUTOR_LABELS, EXECUTORS, Executor
from engine.hosting import dask_scheduler
from engine.limits import HostLimits
from engine.objectives import dataset_label
from ui.kit.errors import ErrorSlots
from ui.kit.state import Ignored, Param, current_values, params_of, seed_controls
from ui.sweep.controls import executors

PREFIX = "adv_"
RUN_KEY = "adv_run_state"           # the page's LiveRun
PROXY_FIELDS = ("dimension", "lengthscale", "noise", "heterogeneity")
HYPE_FIELDS = ("candidates", "good", "sigma_loss")
# The page's starting values (the command line's default request); an AdviceRequest field is typed and bounded
# for the URL by its declaration.
PARAMS = params_of(AdviceRequest, dict(
    algorithm="dp-fts-de", dataset="synthetic", agents=50, iterations=40, epsilon=4.0, delta=1e-5, dimension=1,
    lengthscale=0.03, noise=0.1, heterogeneity=0.0, candidates=100, good=5, sigma_loss=0.2, effort=1,
    sensitivity=True, seed=0, executor="joblib", workers=2),
    executor=Param("joblib", str, EXECUTORS),
    workers=Param(2, int, low=1, high=256),     # and at most the host's DPBO_MAX_WORKERS (see init())
)
ALGORITHM_LABELS = {"dp-fts-de": "DP-FTS-DE (federated BO)", "dp-hype": "DP-HYPE (a private vote)"}


def _key(name: str) -> str:
    return PREFIX + name


def task_label(name: str) -> str:
    return "A proxy of my objective (4 numbers)" if name == PROXY else dataset_label(name)


def init() -> list[Ignored]:
    """Seed the controls from the URL; returns the ignored parameters."""
    ignored = seed_controls(PARAMS, PREFIX)
    if st.session_state.get(_key("executor")) not in executors():
        st.session_state[_key("executor")] = "joblib"
    cap = HostLimits.from_env().workers_cap
    if int(st.session_state.get(_key("workers"), 1)) > cap:
        st.session_state[_key("workers")] = cap
    return ignored


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)


def request_of(values: dict) -> AdviceRequest:
    """The request the controls describe (proxy fields only for a proxy, DP-HYPE's only for DP-HYPE); raises
    ConfigError naming the field."""
    fields = {name: values[name] for name in ("algorithm", "agents", "epsilon", "delta", "effort", "sensitivity",
                                              "seed")}
    if values["algorithm"] == "dp-hype":
        fields.update({name: values[name] for name in HYPE_FIELDS})
    else:
        fields.update(dataset=values["dataset"], iterations=values["iterations"])
        if values["dataset"] == PROXY:
            fields.update({name: values[name] for name in PROXY_FIELDS})
    return AdviceRequest(**fields)


def executor_of(values: dict) -> Executor:
    """Where the search runs: this process, local workers, or the host's Dask scheduler (never a visitor's)."""
    kind = values["executor"] if values["executor"] in executors() else "joblib"
    return Executor(kind, None if kind == "local" else int(values["workers"]),
                    dask_scheduler() if kind == "dask" else None)


def searched(request: AdviceRequest, executor: Executor):
    """The search's states as it grows (DP-HYPE: its one answer)."""
    if request.algorithm == "dp-hype":
        yield hype_advice(request)
        return
    yield from iter_search(request, executor=executor)


def snapshot(item):
    """What the page keeps of a state: the advice (DP-HYPE's is one already)."""
    return item if not hasattr(item, "plan") else advice_of_search(item)


def start(request: AdviceRequest, executor: Executor):
    """The live line's start (importable, so a walled worker can run it)."""
    return functools.partial(searched, request, executor)


def sidebar(slots: ErrorSlots) -> None:
    """Every control of the page (call inside ``st.sidebar``)."""
    st.header("Your federation")
    st.radio("algorithm", ALGORITHMS, key=_key("algorithm"), format_func=ALGORITHM_LABELS.get)
    hype = st.session_state[_key("algorithm")] == "dp-hype"
    st.number_input("clients n" if hype else "agents N", key=_key("agents"), min_value=2, step=1,
                    help="How many parties take part.")
    slots.under("agents")
    if not hype:
        st.number_input("iterations T", key=_key("iterations"), min_value=1, step=5,
                        help="How many rounds (server releases) you can afford.")
        slots.under("iterations")
    st.number_input("privacy budget ε", key=_key("epsilon"), min_value=0.01, step=0.5, format="%.2f",
                    help="What the whole run may spend; every setting searched spends exactly this.")
    slots.under("epsilon")
    st.number_input("δ", key=_key("delta"), format="%.1e", step=1e-6,
                    help="Keep δ well below 1/N (the product's default is 1e-5).")
    slots.under("delta")
    st.header("Your task")
    if hype:
        st.number_input("candidates p", key=_key("candidates"), min_value=2, step=10)
        slots.under("candidates")
        st.number_input("good candidates", key=_key("good"), min_value=1, step=1)
        slots.under("good")
        st.number_input("σ_loss (how much the clients' losses differ)", key=_key("sigma_loss"), min_value=0.01,
                        step=0.05)
        slots.under("sigma_loss")
    else:
        st.selectbox("task", TASKS, key=_key("dataset"), format_func=task_label,
                     help="A built-in task, or a proxy: a GP draw with your objective's dimension, smoothness, "
                          "noise and how different the agents are.")
        slots.under("dataset")
        if st.session_state[_key("dataset")] == PROXY:
            st.number_input("dimension D", key=_key("dimension"), min_value=1, max_value=6, step=1)
            st.number_input("lengthscale (on the unit box)", key=_key("lengthscale"), step=0.01, format="%.3f",
                            help="Smaller: rougher, more local optima.")
            st.number_input("noise (std, in units of the range)", key=_key("noise"), step=0.05, format="%.2f")
            st.slider("heterogeneity", 0.0, 1.0, key=_key("heterogeneity"), step=0.05,
                      help="0: every agent has the same objective; 1: unrelated objectives.")
            slots.under(*PROXY_FIELDS)
    st.header("The search")
    st.number_input("search effort", key=_key("effort"), min_value=1, max_value=20, step=1,
                    help="1: every setting once, the 9 best-fitting 4 times, the 3 best 12 times, then 24 fresh "
                         "runs of the pick; 2 doubles every count.")
    slots.under("effort")
    if not hype:
        st.toggle("sensitivity table", key=_key("sensitivity"),
                  help="Also run the finalists on a smoother, a rougher and a more heterogeneous task.")
    st.number_input("seed", key=_key("seed"), min_value=0, step=1)
    slots.under("seed")
    st.radio("run on", executors(), key=_key("executor"), format_func=EXECUTOR_LABELS.get)
    if st.session_state[_key("executor")] != "local" and not (
            st.session_state[_key("executor")] == "dask" and dask_scheduler()):
        cap = HostLimits.from_env().workers_cap
        st.number_input("workers", key=_key("workers"), min_value=1, max_value=cap, step=1,
                        help=f"Worker processes on this machine (at most {cap} here).")
    slots.under("executor", "workers")
