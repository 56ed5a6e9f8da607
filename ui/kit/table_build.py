"""Before a run on a real task: is its data here, and is its table of scores built?

The first run on a task with a table (landmine, digits, breast cancer) must
score every agent on the candidate grid once (landmine: about 20 s). The page
starts that build in the background (:func:`engine.objectives.builds.start_table_build`),
shows its progress and the time left in the main area while the page stays
usable, and starts the run the visitor asked for once the table is ready. A
second visitor asking for the same table joins the same build (the engine's
process-wide registry keys builds by the table's cache path).
"""

from __future__ import annotations

import streamlit as st

from engine.objectives.base import DatasetUnavailable, DataStatus
from engine.objectives.builds import Build, start_table_build, table_build
from engine.objectives.registry import TABLE_TASKS, default_agents, make_task
from engine.hosting import where
from engine.objectives.store import table_state
from engine.paths import data_dir
from engine.limits import format_seconds
from engine.walls import use_workers
from ui.kit.visitor import current as current_visitor

POLL_SECONDS = 0.5


@st.cache_resource(show_spinner=False, max_entries=16)
def _task(dataset: str, agents: int | None, alpha: float | None, seed: int, where: str):
    # ``where`` (the data folder, from the environment) is part of the key only.
    return make_task(dataset, n_agents=agents, alpha=alpha, seed=seed)


def table_task(config):
    """The task whose table ``config``'s objective reads (None: a synthetic or continuous objective)."""
    if config.domain != "table" or config.dataset not in TABLE_TASKS:
        return None
    return _task(config.dataset, config.agents, config.alpha, config.objective_seed, str(data_dir()))


def missing_data(status: DataStatus, dataset_name: str) -> None:
    """One or two lines in the main area: the data set is not here, where its file goes, where to get it."""
    where_it_goes = where(status.path, "")          # the server's folder only locally (engine.hosting.where)
    st.warning(f"**{dataset_name} needs its data file**, {status.problem}"
               + (f" at `{where_it_goes}`" if where_it_goes else " in this server's data folder")
               + f": download it from {status.url} (or run `python -m engine data fetch landmine`).",
               icon=":material/folder_off:")


def table_build_seconds(config) -> float | None:
    """The estimated computing of building ``config``'s table first (None when it is ready or there is none, or
    when its data file is not here: the page says that instead, :func:`missing_data`)."""
    from engine.limits.fbo import objective_cost

    try:
        task = table_task(config)
    except DatasetUnavailable:
        return None
    if task is None or table_state(task)["complete"]:
        return None
    return objective_cost(config.dataset, config.agents or task.n_agents, domain=config.domain).seconds


def build_note(config, run_seconds: float) -> tuple[str, str]:
    """Before Run: the whole estimate of runs of ``config``'s task taking ``run_seconds`` and, when the table is
    missing, the sentence saying that it includes the table's build first (a job of its own: the runs' limit does
    not count it); else an empty sentence."""
    build = table_build_seconds(config)
    if build is None:
        return f"about {format_seconds(run_seconds)} of computing", ""
    return (f"about {format_seconds(run_seconds + build)} of computing, which includes building the {config.dataset} "
            f"table of scores first, once", f" The table's build is about {format_seconds(build)} of that, longer on "
            "a busy machine: Run starts it and shows its progress, then Run again starts the runs; later runs read "
            "the table at once.")


def build_price(config):
    """The price of building ``config``'s table (a job of its own, before the runs; nothing when it is built),
    checked against the host's limits: the :class:`ui.kit.run_loop.Priced` :func:`build_under_way` needs. Raises
    ConfigError naming the knob."""
    from engine.limits.fbo import objective_cost
    from ui.kit.run_loop import checked

    return checked(objective_cost(config.dataset, config.agents or default_agents(config.dataset),
                                  alpha=config.alpha, domain=config.domain,
                                  table_ready=table_build_seconds(config) is None), what="Building this table")


def build_refusal(config) -> str | None:
    """The sentence saying that ``config``'s missing table is too large a build for this server (None: it is
    built, or its build fits the host's limits)."""
    from engine.limits import HostLimits
    from engine.validation import ConfigError

    try:
        build_price(config)
    except ConfigError:
        limit = HostLimits.from_env().max_seconds
        return (f"A run of this part needs the {config.dataset} table of scores built first: about "
                f"{format_seconds(table_build_seconds(config) or 0)} of computing, more than the "
                f"{format_seconds(limit or 0)} this server allows per request, so Run is off here; the stored "
                "results below are this part's. Run it on your own machine for a small run.")
    return None


def build_under_way(config, *, start: bool, price) -> Build | None:
    """The build of ``config``'s table under way (started now when ``start``); None when the table is ready.

    ``price``: a :class:`ui.kit.run_loop.Priced` whose cost counts the build (a Run's price that counts it, or
    :func:`build_price`): only a priced build starts, as only a priced run does.
    """
    from ui.kit.run_loop import Priced

    if not isinstance(price, Priced):
        raise TypeError("A table build starts only with a Priced cost that counts it (build_price or the run's).")
    task = table_task(config)
    if task is None or table_state(task)["complete"]:
        return None
    if not start:
        return table_build(task)
    walled = use_workers()
    # In the server's run pool like every heavy job, and behind the walls when runs are (one worker process:
    # the one place it holds).
    return start_table_build(task, n_jobs=1 if walled else None, runner=pooled_build(current_visitor(), walled))


def pooled_build(visitor, walled: bool):
    """How a page's table build runs in its background thread: it waits for a place in the server's run pool
    (:data:`ui.kit.run_pool.POOL`, the page says so), then computes in that thread or, when heavy work computes in
    workers, in a walled worker whose progress reaches the page as it comes."""
    from engine.cancel import CancelToken
    from engine.limits import HostLimits
    from ui.kit.run_pool import POOL
    from ui.kit.run_worker import call_walled

    def in_the_pool(build: Build, table_job):
        build.set_waiting(True)
        with POOL.held(visitor):
            build.set_waiting(False)
            if not walled:
                return table_job(build.report)
            token = CancelToken(HostLimits.from_env().run_seconds)
            return call_walled(table_job, (), {}, token, field="dataset", progress=build.report)
    return in_the_pool


def progress_text(build: Build) -> tuple[float, str]:
    snap = build.snapshot()
    if snap.waiting:
        return 0.0, (f"Waiting for a free place to build {snap.label}: this server computes a few jobs at a time "
                     "and serves waiting visitors in turn. The page stays usable.")
    left = ("estimating the time left" if snap.seconds_left is None
            else f"about {format_seconds(snap.seconds_left)} left")
    return snap.fraction, (f"Building {snap.label} once: {snap.done} of {snap.total} agents scored, {left}. "
                           "The page stays usable; later runs read the table at once.")


def show_build(build: Build, *, error_key: str, then: str) -> None:
    """Progress of ``build`` (redrawn every half second); the whole page reruns when it ends.

    ``then`` says what happens next ("the run starts by itself"); a failure's
    sentence is kept under ``error_key`` for the page to show.
    """

    @st.fragment(run_every=POLL_SECONDS)
    def poll() -> None:
        snap = build.snapshot()
        if snap.finished:
            if snap.error:
                st.session_state[error_key] = f"Building {snap.label} failed: {snap.error}"
            st.rerun(scope="app")
        fraction, text = progress_text(build)
        st.progress(min(max(fraction, 0.0), 1.0), text=f"{text} {then}")

    poll()
