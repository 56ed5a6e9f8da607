"""Objective tables: every agent's score on a discrete candidate grid, computed once.

Training a model per query is what makes hyperparameter-tuning experiments
slow, so each task is evaluated once on a grid of candidates in [0, 1]^D (in
parallel, one job per agent, with a ``(done, total)`` progress callback) and
runs read scores from the table.

Tables are cached under a key that hashes the task's full definition (task
name, data checksum, split seed, hyperparameter ranges, scorer version,
number of agents, heterogeneity, grid), so a changed task never reads a stale
table. A build stores every finished agent row atomically in a ``.parts``
folder next to the table and writes the table itself atomically at the end:
an interrupted build leaves no table a later run would trust, and the next
build resumes from the finished rows.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import re
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from engine.cache import cache_key, load_arrays, save_arrays_atomic
from engine.cancel import checkpoint
from engine.objectives.base import FunctionObjective, Objective, TableObjective
from engine.objectives.builds import BUILDS, Build
from engine.objectives.registry import DATASETS
from engine.paths import cache_dir as default_cache_dir
from engine.validation import ConfigError, check_choice, check_int

# Bump when the layout of stored tables changes (not the scores: tasks version those).
TABLE_FORMAT = 1
TABLE_KIND = "table"
SMALL_BUILD = 20_000  # agent x candidate scores below which a build runs in this process

Progress = Callable[[int, int], None]
_PROGRESS: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("table_progress", default=None)


class Task(ABC):
    """A hyperparameter-tuning task: ``n_agents`` agents each scoring points of [0, 1]^dim.

    Subclasses set the attributes below and implement :meth:`definition` and
    :meth:`score`. Scores are deterministic and higher is better; the metric
    reported by the engine is ``1 - best score so far``.
    """

    name: str
    dim: int
    n_agents: int
    default_grid: int
    metric_label: str
    lengthscale: float
    noise_var: float
    noise_std: float = 0.0
    summary: str = ""
    own_gp_prior: tuple = (1.0, 0.1, 1e-6)   # see engine.objectives.base.Objective
    own_refit_every: int = 5

    @abstractmethod
    def definition(self) -> dict:
        """Everything that fixes the scores, as JSON-able values (the table's cache key)."""

    @abstractmethod
    def score(self, agent: int, points: np.ndarray) -> np.ndarray:
        """Scores of ``agent`` at ``points`` (K, dim) in [0, 1]^dim, shape (K,).

        Must not depend on which other points are scored in the same call, so a
        table row equals training at each point on its own.
        """


def grid_candidates(dim: int, size: int) -> np.ndarray:
    """The ``size**dim`` points of a regular grid on [0, 1]^dim, last axis varying fastest."""
    axis = np.linspace(0.0, 1.0, size)
    mesh = np.meshgrid(*([axis] * dim), indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def _grid(task: Task, grid: int | None) -> int:
    return task.default_grid if grid is None else check_int("grid", grid, 2, 500, name="grid size")


def table_definition(task: Task, grid: int | None = None) -> dict:
    """The description whose hash names the cached table."""
    return {"kind": "objective-table", "format": TABLE_FORMAT, "grid": _grid(task, grid),
            "task": task.definition()}


def table_path(task: Task, grid: int | None = None, directory=None) -> Path:
    """Where the finished table for ``task`` on this grid lives (it may not exist yet)."""
    return default_cache_dir(directory) / f"{TABLE_KIND}-{task.name}-{cache_key(table_definition(task, grid))}.npz"


def _parts_dir(path: Path) -> Path:
    return path.with_suffix(".parts")


def _chunk_path(parts: Path, agent: int) -> Path:
    return parts / f"agent-{agent:04d}.npy"


def _save_chunk_atomic(path: Path, row: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.save(handle, row, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _load_chunk(path: Path, size: int) -> np.ndarray | None:
    """A finished agent row, or None if absent, unreadable or of the wrong shape."""
    try:
        row = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if row.shape != (size,) or not np.all(np.isfinite(row)):
        return None
    return row


def load_table(task: Task, grid: int | None = None, directory=None) -> np.ndarray | None:
    """The cached values (N x C) for ``task``, or None unless a complete, consistent table exists."""
    size = _grid(task, grid)
    arrays = load_arrays(table_path(task, size, directory))
    if arrays is None or "values" not in arrays or "candidates" not in arrays:
        return None
    candidates = grid_candidates(task.dim, size)
    values = arrays["values"]
    if (values.shape != (task.n_agents, len(candidates)) or arrays["candidates"].shape != candidates.shape
            or not np.array_equal(arrays["candidates"], candidates) or not np.all(np.isfinite(values))):
        return None
    return values


def table_state(task: Task, grid: int | None = None, directory=None) -> dict:
    """Whether ``task``'s table is ready, without computing anything.

    Returns ``{"complete": bool, "agents_done": int, "total": int, "path": str}``
    (``agents_done`` counts rows kept from an interrupted build), so a page can
    say "building the table once" before starting a long build.
    """
    size = _grid(task, grid)
    path = table_path(task, size, directory)
    if load_table(task, size, directory) is not None:
        return {"complete": True, "agents_done": task.n_agents, "total": task.n_agents, "path": str(path)}
    count = len(grid_candidates(task.dim, size))
    done = sum(_load_chunk(_chunk_path(_parts_dir(path), a), count) is not None for a in range(task.n_agents))
    return {"complete": False, "agents_done": done, "total": task.n_agents, "path": str(path)}


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
        Worker processes (joblib, at most one per missing agent); default: all
        cores, or this process alone for builds under ``SMALL_BUILD`` scores.
    progress : callable, optional
        Called as ``progress(done, total)`` in agent rows, first with the rows
        already available, then after each finished row. Default: the callback
        set by :func:`report_progress`, if any.
    directory : path, optional
        Cache directory; default :func:`engine.paths.cache_dir` (``DPBO_CACHE_DIR``).
    """
    started = time.perf_counter()
    size = _grid(task, grid)
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
                      directory=None) -> Build | None:
    """Build ``task``'s table in the background (joining a build under way); None when it is ready.

    The returned :class:`~engine.objectives.builds.Build` reports progress
    (``snapshot()``: rows done, seconds left) to anyone polling it, e.g. a page
    that stays usable while the table is built.
    """
    size = _grid(task, grid)
    if load_table(task, size, directory) is not None:
        return None
    path = table_path(task, size, directory)
    return BUILDS.start(str(path), lambda report: _compute_table(task, size, path, n_jobs, report),
                        label=_build_label(task))


def table_build(task: Task, grid: int | None = None, directory=None) -> Build | None:
    """The build of ``task``'s table under way in this process, if any (nothing is started)."""
    return BUILDS.get(str(table_path(task, _grid(task, grid), directory)))


def _compute_table(task: Task, size: int, path: Path, n_jobs: int | None,
                   progress: Progress) -> tuple[np.ndarray, int]:
    """Score every missing agent row, store rows and table atomically; returns (values, rows resumed)."""
    candidates = grid_candidates(task.dim, size)
    total = task.n_agents
    parts = _parts_dir(path)
    rows: dict[int, np.ndarray] = {}
    for agent in range(total):
        row = _load_chunk(_chunk_path(parts, agent), len(candidates))
        if row is not None:
            rows[agent] = row
    resumed = len(rows)
    progress(len(rows), total)
    missing = [agent for agent in range(total) if agent not in rows]
    if missing:
        if n_jobs is None:
            # Starting worker processes costs seconds (each imports scikit-learn): not worth it for small tables.
            small = len(missing) * len(candidates) < SMALL_BUILD
            n_jobs = 1 if small else (os.cpu_count() or 1)
        jobs = min(len(missing), check_int("jobs", n_jobs, 1, name="number of jobs"))
        if jobs <= 1:
            results = (_score_agent(task, agent, candidates) for agent in missing)
        else:
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=jobs, return_as="generator_unordered")(
                delayed(_score_agent)(task, agent, candidates) for agent in missing)
        try:
            for agent, row in results:
                if row.shape != (len(candidates),) or not np.all(np.isfinite(row)):
                    raise RuntimeError(f"{task.name}: agent {agent} produced {row.shape} scores with non-finite "
                                       f"values; expected {len(candidates)} finite scores.")
                _save_chunk_atomic(_chunk_path(parts, agent), row)
                rows[agent] = row
                if progress:
                    progress(len(rows), total)
                checkpoint()    # a stopped build keeps its finished rows for the next one
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
    values = np.stack([rows[agent] for agent in range(total)])
    save_arrays_atomic(path, {"values": values, "candidates": candidates,
                              "definition": np.array(_definition_text(task, size))})
    shutil.rmtree(parts, ignore_errors=True)
    return values, resumed


def _definition_text(task: Task, grid: int) -> str:
    import json

    return json.dumps(table_definition(task, grid), sort_keys=True, default=str)


_TABLE_NAME = re.compile(rf"^{TABLE_KIND}-(?P<task>.+)-(?P<key>[0-9a-f]{{20}})\.(?P<ext>npz|parts)$")


def cached_tables(directory=None) -> list[dict]:
    """Finished tables and interrupted builds in the cache directory (for ``data status``)."""
    root = default_cache_dir(directory)
    found = []
    for entry in sorted(root.iterdir()):
        match = _TABLE_NAME.match(entry.name)
        if not match:
            continue
        if match["ext"] == "npz":
            found.append({"task": match["task"], "path": str(entry), "state": "complete",
                          "bytes": entry.stat().st_size})
        else:
            found.append({"task": match["task"], "path": str(entry), "state": "interrupted",
                          "agents_done": len(list(entry.glob("agent-*.npy")))})
    return found


def _objective_fields(task: Task) -> dict:
    return dict(name=task.name, n_agents=task.n_agents, dim=task.dim, noise_std=task.noise_std,
                reference=np.ones(task.n_agents), metric_label=task.metric_label,
                lengthscale=task.lengthscale, noise_var=task.noise_var, description=task.summary,
                own_gp_prior=tuple(task.own_gp_prior), own_refit_every=int(task.own_refit_every))


def table_objective(task: Task, grid: int | None = None, *, n_jobs: int | None = None,
                    progress: Progress | None = None, directory=None) -> TableObjective:
    """``task`` as a :class:`TableObjective` over its cached candidate grid (built if needed)."""
    built = build_table(task, grid, n_jobs=n_jobs, progress=progress, directory=directory)
    return TableObjective(candidates=built.candidates, values=built.values, **_objective_fields(task))


def function_objective(task: Task) -> FunctionObjective:
    """``task`` as a :class:`FunctionObjective` that trains the model at every queried point."""

    def evaluate(agents: np.ndarray, points: np.ndarray) -> np.ndarray:
        agents = np.asarray(agents, dtype=int).ravel()
        points = np.atleast_2d(np.asarray(points, dtype=float))
        out = np.empty(len(agents))
        for agent in np.unique(agents):
            rows = np.flatnonzero(agents == agent)
            out[rows] = task.score(int(agent), points[rows])
        return out

    return FunctionObjective(fn=evaluate, **_objective_fields(task))


def objective_for(task: Task, domain: str = "table", grid: int | None = None) -> Objective:
    """The objective of ``task`` on the ``"table"`` or ``"continuous"`` domain."""
    check_choice("domain", domain, ("table", "continuous"))
    if domain == "continuous":
        return function_objective(task)
    return table_objective(task, grid)


# Tasks with a discrete candidate table (their module defines ``make_task``).
TABLE_TASKS = ("landmine", "digits-svm", "breast-cancer-lr")


def make_task(name: str, *, n_agents: int | None = None, alpha: float | None = None, seed: int = 0,
              data_dir=None, split: str | None = None) -> Task:
    """The :class:`Task` behind the registered data set ``name`` (one of :data:`TABLE_TASKS`);
    ``split`` is the landmine data split (see :func:`engine.objectives.registry.build_objective`)."""
    check_choice("dataset", name, TABLE_TASKS)
    options = {}
    if split is not None:
        if name != "landmine":
            raise ConfigError("The data split option applies to the landmine task only.", "split")
        options["split"] = split
    module = importlib.import_module(DATASETS[name][0])
    return module.make_task(n_agents=n_agents, alpha=alpha, seed=seed, data_dir=data_dir, **options)


def linear_scale(unit: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map [0, 1] to [low, high] linearly (0 -> low, 1 -> high)."""
    unit = np.clip(np.asarray(unit, dtype=float), 0.0, 1.0)
    return low + unit * (high - low)


def log_scale(unit: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map [0, 1] to [low, high] on a log scale (0 -> low, 1 -> high)."""
    unit = np.clip(np.asarray(unit, dtype=float), 0.0, 1.0)
    return 10.0 ** (np.log10(low) + unit * (np.log10(high) - np.log10(low)))
