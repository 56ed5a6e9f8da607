"""Running table builds: one build per table at a time in this process, its progress readable by anyone.

Building an objective table takes seconds to tens of seconds (landmine: about
20 s on two cores): every agent is evaluated once on the task's candidate
grid (in parallel, one job per agent, with a ``(done, total)`` progress
callback) and runs read scores from the table. :func:`build_table` reads a
finished table or computes the missing rows and stores them
(:mod:`engine.objectives.store`); :func:`start_table_build` does the same in
the background.

When a second caller (another visitor of the dashboard, a sweep preparing its
cells) asks for a table that is already being built, it must wait for that
build instead of starting its own: two builds of the same table would double
the work and race on the same files. :class:`BuildRegistry` keys builds by
the table's cache path. ``start`` launches a build in a background thread (so
a page that asked for it stays usable and can poll :meth:`Build.snapshot`),
``run`` builds in the calling thread unless the same build is already under
way, in which case it waits for that one. The process-wide registry is
:data:`BUILDS`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from engine.blas import single_threaded_blas
from engine.cancel import checkpoint
from engine.executor import current
from engine.hosting import lower_priority
from engine.objectives.store import grid_size, load_row, load_table, save_row, save_table, table_path
from engine.objectives.tasks import Task, grid_candidates
from engine.validation import check_int

SMALL_BUILD = 20_000  # agent x candidate scores below which a build runs in this process

Progress = Callable[[int, int], None]
Runner = Callable[["Build", Callable[[Progress], Any]], Any]
_PROGRESS: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("table_progress", default=None)


@dataclass(frozen=True)
class BuildSnapshot:
    """What a build has done so far (a copy: safe to read from any thread)."""

    label: str
    done: int                      # rows (agents) finished, including rows kept from an interrupted build
    total: int
    elapsed: float                 # seconds since the build started
    seconds_left: float | None     # from the pace since this build's first finished row; None until a second
    finished: bool
    error: str | None              # the failure's sentence when the build failed
    waiting: bool = False          # queued for a place to compute (the dashboard's run pool), nothing done yet

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class Build:
    """One table build: its progress, and its result or error once finished."""

    def __init__(self, key: str, label: str):
        self.key = key
        self.label = label
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._started = time.perf_counter()
        # (time, rows) when this build first finished a row: the pace is measured from there, not from the start,
        # which includes starting the worker processes (seconds, or tens of seconds on a busy machine).
        self._first: tuple[float, int] | None = None
        self._initial: int | None = None
        self._done, self._total = 0, 0
        self._result: Any = None
        self._error: BaseException | None = None
        self._listeners: list[Progress] = []
        self._waiting = False

    def set_waiting(self, waiting: bool) -> None:
        """Whether the build waits for a place to compute (its runner says so; see :meth:`BuildRegistry.start`)."""
        with self._lock:
            self._waiting = bool(waiting)

    # -- reported by the builder --------------------------------------------
    def report(self, done: int, total: int) -> None:
        with self._lock:
            if self._initial is None:
                self._initial = int(done)
            elif self._first is None and done > self._initial:
                self._first = (time.perf_counter(), int(done))
            self._done, self._total = int(done), int(total)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(done, total)
            except Exception:  # noqa: BLE001 - one caller's broken display must not stop everyone's build
                with self._lock:
                    if listener in self._listeners:
                        self._listeners.remove(listener)

    def _finish(self, result: Any = None, error: BaseException | None = None) -> None:
        with self._lock:
            self._result, self._error = result, error
        self._finished.set()

    # -- read by anyone -----------------------------------------------------
    def listen(self, callback: Progress | None) -> None:
        """Call ``callback(done, total)`` on every further report (and now, with the current state)."""
        if callback is None:
            return
        with self._lock:
            self._listeners.append(callback)
            done, total = self._done, self._total
        if total:
            callback(done, total)

    def snapshot(self) -> BuildSnapshot:
        with self._lock:
            now = time.perf_counter()
            left = None
            if self._first is not None and self._done > self._first[1]:
                rate = (self._done - self._first[1]) / max(now - self._first[0], 1e-9)
                left = (self._total - self._done) / rate
            error = None if self._error is None else (str(self._error) or type(self._error).__name__)
            return BuildSnapshot(self.label, self._done, self._total, now - self._started, left,
                                 self._finished.is_set(), error, self._waiting and not self._finished.is_set())

    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> Any:
        """The build's result (waiting up to ``timeout`` seconds); re-raises its error."""
        if not self._finished.wait(timeout):
            raise TimeoutError(f"{self.label} is still being built")
        if self._error is not None:
            raise self._error
        return self._result


class BuildRegistry:
    """Builds under way in this process, keyed by what they build (thread-safe)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._builds: dict[str, Build] = {}

    def get(self, key: str) -> Build | None:
        """The build of ``key`` under way, or None."""
        with self._lock:
            return self._builds.get(key)

    def _claim(self, key: str, label: str) -> tuple[Build, bool]:
        with self._lock:
            build = self._builds.get(key)
            if build is not None:
                return build, False
            build = self._builds[key] = Build(key, label)
            return build, True

    def _execute_in_background(self, build: Build, work: Callable[[Progress], Any], runner: Runner | None) -> None:
        lower_priority()        # this build thread and its worker processes yield the CPU to the pages
        self._execute(build, work if runner is None else (lambda report: runner(build, work)))

    def _execute(self, build: Build, work: Callable[[Progress], Any]) -> None:
        """``work`` in this thread, at the caller's priority (a build in the caller's own thread must not leave
        that thread, e.g. the CLI's or a test's main thread, niced for the rest of its life)."""
        try:
            result = work(build.report)
        except BaseException as err:  # noqa: BLE001 - handed to every waiter, who re-raises it
            build._finish(error=err)  # noqa: SLF001 - the registry owns its builds
        else:
            build._finish(result=result)  # noqa: SLF001
        finally:
            with self._lock:
                if self._builds.get(build.key) is build:
                    del self._builds[build.key]

    def start(self, key: str, work: Callable[[Progress], Any], *, label: str = "table",
              runner: Runner | None = None) -> Build:
        """Start ``work(report)`` in a background thread unless ``key`` is already being built; return the build.

        The thread outlives the caller (a page's script run may stop at any
        click): the build always finishes, and whoever asks next reads the
        finished table from the cache. ``runner(build, work)``, when given, runs the work in that thread
        instead of calling it (the dashboard waits for a place in its run pool, saying so with
        :meth:`Build.set_waiting`, and computes it behind a wall); it returns the work's result.
        """
        build, mine = self._claim(key, label)
        if mine:
            threading.Thread(target=self._execute_in_background, args=(build, work, runner), name=f"build {label}",
                             daemon=True).start()
        return build

    def run(self, key: str, work: Callable[[Progress], Any], *, label: str = "table",
            progress: Progress | None = None) -> tuple[Any, bool]:
        """``work(report)`` in this thread, or wait for the same build under way elsewhere.

        Returns ``(result, waited)``; ``waited`` is True when another caller's
        build was joined. ``progress`` hears every report of whichever build runs.
        """
        build, mine = self._claim(key, label)
        build.listen(progress)
        if mine:
            self._execute(build, work)
        return build.wait(), not mine


# Every build of this process goes through this registry, so two callers never build the same table twice.
BUILDS = BuildRegistry()


# --------------------------------------------------------------------------- objective tables

@dataclass(frozen=True)
class TableBuild:
    """A finished table and how it was obtained."""

    values: np.ndarray        # N x C scores
    candidates: np.ndarray    # C x D points in [0, 1]^D
    path: Path
    seconds: float            # wall time of this call
    from_cache: bool          # True: computed nothing (read a finished table, or joined another caller's build)
    resumed: int              # agent rows taken from an interrupted earlier build


def _score_agent(task: Task, agent: int, candidates: np.ndarray) -> tuple[int, np.ndarray]:
    # One BLAS thread: a row is one process's work (a build's workers share the cores), and OpenBLAS's waiting
    # threads spun on a busy 2-core machine: one EMNIST agent took 255 s of CPU on two threads, 30 s on one.
    with single_threaded_blas():
        return agent, np.asarray(task.score(agent, candidates), dtype=float)


@contextlib.contextmanager
def report_progress(callback: Progress | None) -> Iterator[None]:
    """Within this block, table builds that get no explicit callback report to ``callback``.

    Lets a page show a progress bar for a table built deep inside
    ``build_objective`` or a simulation, without threading the callback through.
    """
    token = _PROGRESS.set(callback)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def build_table(task: Task, grid: int | None = None, *, n_jobs: int | None = None,
                progress: Progress | None = None, directory=None) -> TableBuild:
    """Every agent's score on the candidate grid: read from the cache, or computed and stored.

    A build of the same table already under way in this process (another
    visitor, a background build started by :func:`start_table_build`) is
    joined, not repeated: this call then waits for it and reports its progress.

    Parameters
    ----------
    task : Task
    grid : int, optional
        Points per axis (``grid**dim`` candidates); default ``task.default_grid``.
    n_jobs : int, optional
        Worker processes (at most one per missing agent) of the executor in use
        (:func:`engine.executor.current`); default: all cores, or this process
        alone for builds under ``SMALL_BUILD`` scores (on Dask: the cluster's).
    progress : callable, optional
        Called as ``progress(done, total)`` in agent rows, first with the rows
        already available, then after each finished row. Default: the callback
        set by :func:`report_progress`, if any.
    directory : path, optional
        Cache directory; default :func:`engine.paths.cache_dir` (``DPBO_CACHE_DIR``).
    """
    started = time.perf_counter()
    size = grid_size(task, grid)
    progress = progress or _PROGRESS.get()
    path = table_path(task, size, directory)
    candidates = grid_candidates(task.dim, size)
    values = load_table(task, size, directory)
    if values is not None:
        if progress:
            progress(task.n_agents, task.n_agents)
        return TableBuild(values, candidates, path, time.perf_counter() - started, True, 0)
    (values, resumed), joined = BUILDS.run(
        str(path), lambda report: _compute_table(task, size, path, n_jobs, report), label=_build_label(task),
        progress=progress)
    return TableBuild(values, candidates, path, time.perf_counter() - started, joined, 0 if joined else resumed)


def _build_label(task: Task) -> str:
    return f"the {task.name} objective table ({task.n_agents} agents)"


def start_table_build(task: Task, grid: int | None = None, *, n_jobs: int | None = None,
                      directory=None, runner: Runner | None = None) -> Build | None:
    """Build ``task``'s table in the background (joining a build under way); None when it is ready.

    The returned :class:`Build` reports progress
    (``snapshot()``: rows done, seconds left) to anyone polling it, e.g. a page
    that stays usable while the table is built. ``runner``: how the background thread runs the build
    (:meth:`BuildRegistry.start`).
    """
    size = grid_size(task, grid)
    if load_table(task, size, directory) is not None:
        return None
    path = table_path(task, size, directory)
    return BUILDS.start(str(path), functools.partial(_compute_table, task, size, path, n_jobs),
                        label=_build_label(task), runner=runner)


def table_build(task: Task, grid: int | None = None, directory=None) -> Build | None:
    """The build of ``task``'s table under way in this process, if any (nothing is started)."""
    return BUILDS.get(str(table_path(task, grid_size(task, grid), directory)))


def _compute_table(task: Task, size: int, path: Path, n_jobs: int | None,
                   progress: Progress) -> tuple[np.ndarray, int]:
    """Score every missing agent row, store rows and table atomically; returns (values, rows resumed)."""
    candidates = grid_candidates(task.dim, size)
    total = task.n_agents
    rows: dict[int, np.ndarray] = {}
    for agent in range(total):
        row = load_row(path, agent, len(candidates))
        if row is not None:
            rows[agent] = row
    resumed = len(rows)
    progress(len(rows), total)
    missing = [agent for agent in range(total) if agent not in rows]
    if missing:
        executor = current()
        if n_jobs is None and executor.kind != "dask":
            # Starting worker processes costs seconds (each imports scikit-learn): not worth it for small tables.
            n_jobs = 1 if len(missing) * len(candidates) < SMALL_BUILD else None
        if n_jobs is not None:
            executor = executor.with_workers(check_int("jobs", n_jobs, 1, name="number of jobs"))
        results = executor.results(_score_agent, [(agent, (task, agent, candidates)) for agent in missing],
                                   label="table")
        try:
            for _, (agent, row) in results:
                if row.shape != (len(candidates),) or not np.all(np.isfinite(row)):
                    raise RuntimeError(f"{task.name}: agent {agent} produced {row.shape} scores with non-finite "
                                       f"values; expected {len(candidates)} finite scores.")
                save_row(path, agent, row)
                rows[agent] = row
                if progress:
                    progress(len(rows), total)
                checkpoint()    # a stopped build keeps its finished rows for the next one
        finally:
            results.close()
    values = np.stack([rows[agent] for agent in range(total)])
    save_table(task, size, path, values, candidates)
    return values, resumed
