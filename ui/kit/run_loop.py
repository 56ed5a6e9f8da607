"""The one place heavy work starts: priced first, queued fairly, computed in a worker thread, drawn live, stoppable.

A page describes what to run as :class:`LiveLine` objects (a label, how to
start the engine's iterator, how many items it yields) and calls
:func:`run_live`. It

1. starts only with a :class:`Priced` cost: the page prices the run once,
   with :func:`checked`, before it draws Run (a refusal turns Run off), and
   hands that price over;
2. waits for a place in the server-wide :class:`RunPool` (``DPBO_MAX_RUNS``
   heavy jobs at once; waiting visitors are served in turn and see their position; one visitor's jobs are
   capped, :mod:`ui.kit.run_pool`);
3. steps the lines in a worker thread under a cancel token
   (:mod:`engine.cancel`) or, when heavy runs compute in workers
   (``DPBO_RUN_WORKERS``, default in hosting mode; ``in_workers``), in a
   worker process behind the host's memory and CPU walls
   (:mod:`engine.walls`, :mod:`ui.kit.run_worker`), while the script thread draws at most every
   :data:`REDRAW_SECONDS` and wakes every :data:`POLL_SECONDS`;
4. keeps a :class:`LiveRun` in the session so plot options redraw without
   rerunning.

Stopping. Streamlit interrupts a script only where it sends something to the
browser, so the waiting script thread refreshes the progress bar every
:data:`POLL_SECONDS`: a click on Stop (or any other control) reruns the
script, and a closed tab ends the session, at that point; the script's
``finally`` then cancels the token and the engine stops at its next
checkpoint, within a fraction of a second. The token's deadline is the host's
time limit (twice ``DPBO_MAX_SECONDS`` of wall-clock time). The next run of
the page finds the interrupted run ``running`` and marks it ``stopped``
(:func:`current_run`), keeping what finished.

``start()``, ``snapshot()`` and ``progress()`` run in the worker thread, so they
must not call Streamlit; ``draw`` runs in the script thread. The worker waits
until each snapshot is drawn, so engines may keep updating one result object
in place.

:func:`compute` runs a light computation (a preview, a cached accounting) the
same stoppable way, without queueing: light work never waits for heavy runs.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterator, Mapping, Sequence

import streamlit as st

from engine.cancel import TIME_LIMIT, Cancelled, CancelToken, cancellable
from engine.hosting import HEAVY_NICENESS, lower_priority
from engine.limits import Cost, HostLimits, check, format_seconds
from engine.validation import ConfigError
from engine.walls import use_workers
from ui.kit.compute import POLL_SECONDS, queue_text
from ui.kit.errors import ErrorSlots
from ui.kit.run_pool import POOL, RunPool, Ticket
from ui.kit.run_worker import failure_message, step_lines, walled
from ui.kit.text import plain
from ui.kit.visitor import current as current_visitor

__all__ = ["failure_message"]   # re-exported: pages and tests import it from here
REDRAW_SECONDS = 0.3      # live charts redraw at most this often (and after the first item)


QUEUE_POLL_SECONDS = 0.25
WORKER_NICENESS = HEAVY_NICENESS   # heavy threads yield the CPU to pages and health checks (Linux: per-thread)
LOG = logging.getLogger("dpbo.live_run")


class RunStatus(str, Enum):
    IDLE = "idle"          # nothing has run in this session
    RUNNING = "running"    # the loop is stepping (or was interrupted before it could say so)
    STOPPED = "stopped"    # interrupted by Stop, another control or the time limit: the results are partial
    DONE = "done"
    FAILED = "failed"      # the engine raised; ``message`` says what


@dataclass
class LiveRun:
    """A page's run, kept in ``st.session_state`` (one per session and page)."""

    status: RunStatus
    labels: list[str]
    results: list                      # each line's latest snapshot, None until it starts
    values: dict                       # the control values that started it
    message: str = ""                  # why it failed, or why it stopped (the time limit)
    first_chart: float | None = None   # seconds from the script's start to the first drawn chart
    seconds: float | None = None       # seconds from the script's start to the end of the run
    cache: dict = field(default_factory=dict)   # what the page derives once from the finished run

    def shown(self) -> list[tuple[str, Any]]:
        """(label, result) of every line that has a result."""
        return [(label, res) for label, res in zip(self.labels, self.results) if res is not None]


@dataclass(frozen=True)
class Priced:
    """A run's cost that is within the host's limits: what :func:`run_live` needs (made by :func:`checked`)."""

    cost: Cost


def checked(cost: Cost, *, what: str = "This run", fewer: str | None = None) -> Priced:
    """Price a run once: ``cost`` against the host's limits (:func:`engine.limits.check`).

    Raises ConfigError naming the knob to lower; ``what`` and ``fewer`` word it
    ("These 3 lines", "lines").
    """
    return Priced(check(cost, what=what, fewer=fewer))


@dataclass(frozen=True)
class LiveLine:
    """One line of a run: ``start()`` builds the engine's iterator (lazily, in the worker thread)."""

    label: str
    start: Callable[[], Iterator[Any]]
    steps: int                         # how many items the iterator yields (for the progress bar)


# ---------------------------------------------------------------- controls
def run_buttons(key: str, *, disabled: bool, widths: Sequence[float] = (1, 1, 5)) -> tuple[bool, list]:
    """Run and Stop (keys ``<key>_run``, ``<key>_stop``); returns whether Run was pressed and the other columns."""
    cols = st.columns(list(widths), vertical_alignment="center")
    clicked = cols[0].button("Run", type="primary", icon=":material/play_arrow:", key=f"{key}_run",
                             disabled=disabled, width="stretch")
    cols[1].button("Stop", icon=":material/stop:", key=f"{key}_stop", disabled=not clicked, width="stretch",
                   help="Stop the run; what is computed so far stays on the charts.")
    return clicked, cols[2:]


def current_run(key: str, run_clicked: bool) -> LiveRun | None:
    """The session's last run of this page; a run this script did not start is no longer running."""
    run = st.session_state.get(key)
    if isinstance(run, LiveRun) and run.status is RunStatus.RUNNING and not run_clicked:
        run.status = RunStatus.STOPPED
    return run if isinstance(run, LiveRun) else None


# ---------------------------------------------------------------- running
class _Failed(Exception):
    """The engine raised something that is not a refusal; ``message`` is what the visitor may see."""


def run_live(key: str, lines: Sequence[LiveLine], *, values: Mapping, draw: Callable[[LiveRun, str], None],
             progress_slot, errors: ErrorSlots, price: Priced,
             snapshot: Callable[[Any], Any] = lambda item: item,
             progress: Callable[[list, list[int]], tuple[float, str]] | None = None, interleave: bool = True,
             started: float | None = None, slots: int = 1, starting: str = "Starting ...",
             pool: RunPool | None = None, in_workers: bool | None = None) -> LiveRun | None:
    """Run ``lines`` to the end, drawing as they grow; the run is stored under ``st.session_state[key]``.

    ``price`` is the run's cost as the page checked it (:func:`checked`): a
    run is priced once, before Run is drawn. ``slots``: places the run takes
    in the server's pool (worker processes of a sweep). ``snapshot(item)`` turns what an iterator yields
    into the stored result (taken only when drawing); ``draw(run, suffix)``
    draws the charts (keys must include ``suffix``); ``progress(latest,
    counts)`` gives the bar's fraction and text from each line's latest item
    and how many items it yielded (default: items so far against the lines'
    ``steps``); ``starting`` is the bar's text until the first item. A
    ConfigError (a missing data set, a run that crossed the host's memory or
    time wall) clears the stored run and appears under its control; the time limit leaves a STOPPED run with its
    ``message``; any other exception leaves a FAILED run whose message the
    page shows.
    ``in_workers``: compute in a walled worker process (default :func:`engine.walls.use_workers`).
    """
    started = time.perf_counter() if started is None else started
    in_workers = use_workers() if in_workers is None else in_workers
    pool = POOL if pool is None else pool
    run = LiveRun(status=RunStatus.RUNNING, labels=[line.label for line in lines], results=[None] * len(lines),
                  values=dict(values))
    if not isinstance(price, Priced):
        raise TypeError("run_live starts only a priced run: pass checked(cost)")
    token = None
    try:
        st.session_state[key] = run
        ticket = _queue(pool, slots, progress_slot)
        token = CancelToken(HostLimits.from_env().run_seconds)
        channel = _Channel()
        worker = threading.Thread(target=_produce, name=f"dpbo-run-{key}", daemon=True,
                                  args=(lines, snapshot, progress, interleave, channel, token, pool, ticket, price.cost,
                                        in_workers))
        try:
            worker.start()
        except BaseException:
            pool.leave(ticket)
            raise
        _consume(run, channel, draw, progress_slot, started, starting)
    except ConfigError as err:
        st.session_state[key] = None
        errors.show(err)
        run = None
    except _Failed as err:
        run.status, run.message = RunStatus.FAILED, str(err)
        run.labels, run.results = [], []
        st.session_state[key] = run
    finally:
        if token is not None:
            token.cancel()      # Stop, another click or a closed tab interrupted the script: stop the engine
        progress_slot.empty()
    return run


def _queue(pool: RunPool, slots: int, progress_slot) -> Ticket:
    """Wait for a place in the pool, showing the position; returns the started ticket."""
    ticket = pool.join(slots, current_visitor())      # PoolRefusal (a ConfigError) over the visitor's caps
    try:
        while not pool.try_start(ticket):
            progress_slot.progress(0.0, text=queue_text(pool, ticket, stop=True))
            pool.wait(QUEUE_POLL_SECONDS)
    except BaseException:
        pool.leave(ticket)
        raise
    return ticket


class _Channel:
    """Messages from the worker to the script thread, and the script's "drawn" acknowledgement."""

    def __init__(self):
        self.messages: queue.Queue = queue.Queue()
        self.drawn = threading.Event()

    def put(self, *message) -> None:
        self.messages.put(message)

    def wait_drawn(self, token: CancelToken) -> None:
        while not self.drawn.wait(POLL_SECONDS):
            token.check()
        self.drawn.clear()


def _lower_priority() -> None:
    lower_priority(WORKER_NICENESS)


def _produce(lines, snapshot, progress, interleave, channel: _Channel, token: CancelToken, pool: RunPool,
             ticket, cost: Cost, in_workers: bool) -> None:
    """The worker thread: step the lines under ``token`` (here or in a walled worker process), hand snapshots
    to the script thread."""
    if not in_workers:
        _lower_priority()
    try:
        if in_workers:
            walled(lines, snapshot, progress, interleave, channel, token, cost, REDRAW_SECONDS)
        else:
            with cancellable(token):
                step_lines(lines, snapshot, progress, interleave, channel, token, REDRAW_SECONDS)
    except Cancelled as err:
        channel.put("stopped", err.reason)
    except ConfigError as err:
        channel.put("refused", err)
    except Exception as err:  # noqa: BLE001 - a failing run must leave the page usable
        LOG.exception("A live run failed")
        channel.put("failed", failure_message(err))
    finally:
        pool.leave(ticket)


def _consume(run: LiveRun, channel: _Channel, draw, progress_slot, started: float, starting: str) -> None:
    """The script thread: draw what the worker hands over, keep the bar alive, end on the worker's last word."""
    bar = (0.0, starting)
    draws = 0
    while True:
        try:
            kind, *payload = channel.messages.get(timeout=POLL_SECONDS)
        except queue.Empty:
            progress_slot.progress(*_clip(bar))     # a point where Streamlit can interrupt the script
            continue
        if kind == "draw":
            run.results = payload[0]
            try:
                draw(run, f"live{draws}")
            finally:
                channel.drawn.set()
            if draws == 0:
                run.first_chart = time.perf_counter() - started
            draws += 1
        elif kind == "progress":
            bar = payload[0]
            progress_slot.progress(*_clip(bar))
        elif kind == "done":
            run.results, behind = payload
            run.status = RunStatus.DONE
            run.seconds = time.perf_counter() - started
            if behind:  # the last items came faster than the redraws: the charts end on the finished run
                draw(run, f"live{draws}")
            return
        elif kind == "stopped":
            run.status = RunStatus.STOPPED
            run.seconds = time.perf_counter() - started
            if payload[0] == TIME_LIMIT:
                limit = HostLimits.from_env().run_seconds
                run.message = (f"Stopped at this server's time limit ({format_seconds(limit)} of computing per run)"
                               if limit else "Stopped at this server's time limit")
            return
        elif kind == "refused":
            raise payload[0]
        elif kind == "failed":
            raise _Failed(payload[0])


def _clip(bar: tuple[float, str]) -> tuple[float, str]:
    fraction, text = bar
    return min(max(float(fraction), 0.0), 1.0), text


def show_failure(run: LiveRun, slot) -> None:
    """The sentence of a failed run (the page stays usable)."""
    slot.error(f"The run failed and was stopped: {plain(run.message)}. The page still works: change the settings and "
               "press Run again.", icon=":material/error:")
