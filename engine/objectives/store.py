"""Where objective tables live on disk, and which stored tables can be trusted.

A table holds every agent's score on a task's candidate grid. It is stored
under a name that hashes the task's full definition (task name, data
checksum, split seed, hyperparameter ranges, scorer version, number of
agents, heterogeneity, grid), so a changed task never reads a stale table.
A build stores every finished agent row atomically in a ``.parts`` folder
next to the table and writes the table itself atomically at the end
(:func:`save_table`): an interrupted build leaves no table a later run would
trust, and the next build resumes from the finished rows
(:func:`load_row`). Running builds is :mod:`engine.objectives.builds`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

from engine.cache import cache_key, load_arrays, save_arrays_atomic
from engine.objectives.tasks import Task, grid_candidates
from engine.paths import cache_dir as default_cache_dir
from engine.validation import check_int

# Bump when the layout of stored tables changes (not the scores: tasks version those).
TABLE_FORMAT = 1
TABLE_KIND = "table"


def grid_size(task: Task, grid: int | None) -> int:
    """Points per axis: ``grid`` checked, or the task's default."""
    return task.default_grid if grid is None else check_int("grid", grid, 2, 500, name="grid size")


def table_definition(task: Task, grid: int | None = None) -> dict:
    """The description whose hash names the cached table."""
    return {"kind": "objective-table", "format": TABLE_FORMAT, "grid": grid_size(task, grid),
            "task": task.definition()}


def table_path(task: Task, grid: int | None = None, directory=None) -> Path:
    """Where the finished table for ``task`` on this grid lives (it may not exist yet)."""
    return default_cache_dir(directory) / f"{TABLE_KIND}-{task.name}-{cache_key(table_definition(task, grid))}.npz"


def parts_dir(path: Path) -> Path:
    """The folder holding the finished agent rows of an unfinished table at ``path``."""
    return path.with_suffix(".parts")


def _row_path(parts: Path, agent: int) -> Path:
    return parts / f"agent-{agent:04d}.npy"


def save_row(path: Path, agent: int, row: np.ndarray) -> None:
    """Store ``agent``'s finished row of the table at ``path`` atomically."""
    target = _row_path(parts_dir(path), agent)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.save(handle, row, allow_pickle=False)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_row(path: Path, agent: int, size: int) -> np.ndarray | None:
    """``agent``'s finished row of the table at ``path``, or None if absent, unreadable or of the wrong shape."""
    try:
        row = np.load(_row_path(parts_dir(path), agent), allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if row.shape != (size,) or not np.all(np.isfinite(row)):
        return None
    return row


def save_table(task: Task, grid: int, path: Path, values: np.ndarray, candidates: np.ndarray) -> None:
    """Write the finished table atomically, then drop the rows it was assembled from."""
    definition = json.dumps(table_definition(task, grid), sort_keys=True, default=str)
    save_arrays_atomic(path, {"values": values, "candidates": candidates, "definition": np.array(definition)})
    shutil.rmtree(parts_dir(path), ignore_errors=True)


def load_table(task: Task, grid: int | None = None, directory=None) -> np.ndarray | None:
    """The cached values (N x C) for ``task``, or None unless a complete, consistent table exists."""
    size = grid_size(task, grid)
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
    size = grid_size(task, grid)
    path = table_path(task, size, directory)
    if load_table(task, size, directory) is not None:
        return {"complete": True, "agents_done": task.n_agents, "total": task.n_agents, "path": str(path)}
    count = len(grid_candidates(task.dim, size))
    done = sum(load_row(path, a, count) is not None for a in range(task.n_agents))
    return {"complete": False, "agents_done": done, "total": task.n_agents, "path": str(path)}


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
