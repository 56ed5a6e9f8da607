"""The one loop that runs a page's heavy work: priced first, drawn live, stoppable, with a typed state.

A page describes what to run as :class:`LiveLine` objects (a label, how to
start the engine's iterator, how many items it yields) and calls
:func:`run_live`. That is the single place where a heavy run starts: it
checks the cost against the host's limits (:func:`engine.limits.check`), steps
the lines (interleaved, so all curves grow together, or one after another),
redraws at most every :data:`REDRAW_SECONDS`, and keeps a :class:`LiveRun` in
the session so plot options redraw without rerunning.

Stop is Streamlit's own: any click reruns the script, which interrupts the
loop; the next run finds the state still ``running`` and marks it
``stopped`` (:func:`current_run`), keeping what finished.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterator, Mapping, Sequence

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx

from engine.limits import Cost, check
from engine.validation import ConfigError
from ui.errors import ErrorSlots

REDRAW_SECONDS = 0.3  # live charts redraw at most this often (and after the first item)


class RunStatus(str, Enum):
    IDLE = "idle"          # nothing has run in this session
    RUNNING = "running"    # the loop is stepping (or was interrupted before it could say so)
    STOPPED = "stopped"    # interrupted by Stop or another control: the results are partial
    DONE = "done"
    FAILED = "failed"      # the engine raised; ``message`` says what


@dataclass
class LiveRun:
    """A page's run, kept in ``st.session_state`` (one per session and page)."""

    status: RunStatus
    labels: list[str]
    results: list                      # each line's latest snapshot, None until it starts
    values: dict                       # the control values that started it
    message: str = ""                  # why it failed
    first_chart: float | None = None   # seconds from the script's start to the first drawn chart
    seconds: float | None = None       # seconds from the script's start to the end of the run
    cache: dict = field(default_factory=dict)   # what the page derives once from the finished run

    def shown(self) -> list[tuple[str, Any]]:
        """(label, result) of every line that has a result."""
        return [(label, res) for label, res in zip(self.labels, self.results) if res is not None]


@dataclass(frozen=True)
class LiveLine:
    """One line of a run: ``start()`` builds the engine's iterator (lazily, when first stepped)."""

    label: str
    start: Callable[[], Iterator[Any]]
    steps: int                         # how many items the iterator yields (for the progress bar)


@dataclass(frozen=True)
class Progress:
    """How far an engine call that reports progress has got (what :func:`in_background` yields meanwhile)."""

    done: int
    total: int


POLL_SECONDS = 0.2   # a background call's line yields at least this often, so Stop is seen promptly


def in_background(work: Callable[[Callable[[int, int], None], Callable[[], bool]], Any], *,
                  poll: float = POLL_SECONDS) -> Iterator[Any]:
    """A LiveLine's iterator for one engine call ``work(progress, cancel)`` that runs to the end in one go.

    The call runs in a thread and the line yields a :class:`Progress` after each
    report (and every ``poll`` seconds), then the call's result; an exception it
    raises is raised here. Closing the iterator (Stop or any control rerunning
    the script, the session ending) makes ``cancel()`` return True, so the
    engine stops at its next check instead of finishing unseen.
    """
    reports: queue.Queue = queue.Queue()
    cancelled = threading.Event()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = work(lambda done, total: reports.put(Progress(int(done), int(total))),
                                     cancelled.is_set)
        except BaseException as err:  # noqa: BLE001 - handed to the script thread, which raises it
            outcome["error"] = err
        finally:
            reports.put(None)

    # The thread sees the session's context, so cached engine calls (st.cache_data) work inside it.
    thread = add_script_run_ctx(threading.Thread(target=target, name="live-run-call", daemon=True))
    latest = Progress(0, 0)
    thread.start()
    try:
        while True:
            try:
                report = reports.get(timeout=poll)
            except queue.Empty:
                yield latest
                continue
            if report is None:
                break
            latest = report
            yield report
        if "error" in outcome:
            raise outcome["error"]
        yield outcome["result"]
    finally:
        cancelled.set()


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


def run_live(key: str, lines: Sequence[LiveLine], *, values: Mapping, draw: Callable[[LiveRun, str], None],
             progress_slot, errors: ErrorSlots, cost: Cost | None = None, what: str | None = None,
             fewer: str | None = None,
             snapshot: Callable[[Any], Any] = lambda item: item,
             progress: Callable[[list, list[int]], tuple[float, str]] | None = None, interleave: bool = True,
             started: float | None = None) -> LiveRun | None:
    """Run ``lines`` to the end, drawing as they grow; the run is stored under ``st.session_state[key]``.

    ``cost`` is checked against the host's limits before anything starts
    (``what`` and ``fewer`` word the refusal; by default "These N lines" and
    "lines").
    ``snapshot(item)`` turns what an iterator yields into the stored result
    (taken only when drawing); ``draw(run, suffix)`` draws the charts (keys
    must include ``suffix``); ``progress(latest, counts)`` gives the bar's
    fraction and text from each line's latest item and how many it yielded
    (default: items so far against the lines' ``steps``). A ConfigError (the limit, a missing
    data set) clears the stored run and appears under its control; any other
    exception leaves a FAILED run whose message the page shows.
    """
    started = time.perf_counter() if started is None else started
    run = LiveRun(status=RunStatus.RUNNING, labels=[line.label for line in lines], results=[None] * len(lines),
                  values=dict(values))
    try:
        if cost is not None:
            several = len(lines) > 1
            check(cost, what=what or (f"These {len(lines)} lines" if several else "This run"),
                  fewer=fewer or ("lines" if several else None))
        st.session_state[key] = run
        _loop(run, lines, draw, progress_slot, snapshot, progress, interleave, started)
    except ConfigError as err:
        st.session_state[key] = None
        errors.show(err)
        run = None
    except Exception as err:  # noqa: BLE001 - a failing run must leave the page usable
        run.status, run.message = RunStatus.FAILED, f"{type(err).__name__}: {err}"
        run.labels, run.results = [], []
        st.session_state[key] = run
    finally:
        progress_slot.empty()
    return run


def _loop(run: LiveRun, lines, draw, progress_slot, snapshot, progress, interleave, started) -> None:
    iterators: list[Iterator | None] = [None] * len(lines)
    latest: list = [None] * len(lines)
    counts = [0] * len(lines)
    total = sum(line.steps for line in lines)
    active = list(range(len(lines)))
    draws, last_draw, behind = 0, 0.0, False
    while active:
        for k in list(active) if interleave else active[:1]:
            if iterators[k] is None:
                iterators[k] = iter(lines[k].start())
            try:
                latest[k] = next(iterators[k])
            except StopIteration:
                active.remove(k)
                continue
            counts[k] += 1
            behind = True
            now = time.perf_counter()
            if draws == 0 or now - last_draw >= REDRAW_SECONDS:
                run.results = [snapshot(item) if item is not None else None for item in latest]
                draw(run, f"live{draws}")
                if draws == 0:
                    run.first_chart = time.perf_counter() - started
                draws, last_draw, behind = draws + 1, time.perf_counter(), False
            fraction, text = progress(latest, counts) if progress else (sum(counts) / max(total, 1),
                                                                           f"{sum(counts)} of {total}")
            progress_slot.progress(min(max(fraction, 0.0), 1.0), text=text)
    run.results = [snapshot(item) if item is not None else None for item in latest]
    run.status = RunStatus.DONE
    run.seconds = time.perf_counter() - started
    if behind:  # the last items came faster than the redraws: the charts end on the finished run
        draw(run, f"live{draws}")


def show_failure(run: LiveRun, slot) -> None:
    """The sentence of a failed run (the page stays usable)."""
    slot.error(f"The run failed and was stopped: {run.message}. The page still works: change the settings and "
               "press Run again.", icon=":material/error:")
