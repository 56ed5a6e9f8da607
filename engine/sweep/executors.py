"""Where a sweep's cells run: :mod:`engine.executor` (this process, worker processes, or a Dask cluster).

Every executor yields ``(cell, outcome)`` pairs as cells finish, in whatever
order they finish; the driver writes each one to disk at once. Results never
depend on the executor: a cell's seed is part of its parameters. Stopping and
the workers' lives are the executor's (:mod:`engine.executor`).
"""

from __future__ import annotations

from typing import Iterable, Iterator

from engine.executor import EXECUTOR_LABELS, EXECUTORS, Executor
from engine.hosting import dask_scheduler, is_hosted
from engine.limits import cores
from engine.sweep.cell import CellOutcome, describe_error, error_kind, run_cell
from engine.validation import ConfigError


class SweepAborted(ConfigError):
    """The executor itself broke (a worker process died, the scheduler went away)."""


def default_workers() -> int:
    return cores()


def _outcomes(executor: Executor, cells: list, tool: str) -> Iterator[tuple]:
    by_key = {cell.key: cell for cell in cells}
    stream = executor.stream(run_cell, [(cell.key, (tool, cell.params, cell.runs)) for cell in cells], label="sweep")
    try:
        for done in stream:
            cell = by_key[done.key]
            if done.error is None:
                yield cell, done.value
            elif executor.kind == "dask":     # e.g. KilledWorker: recorded on the cell, the rest go on
                yield cell, CellOutcome(error=describe_error(done.error), kind=error_kind(done.error))
            else:                             # a local worker killed by the OS: the pool is broken
                detail = "" if is_hosted() else f" ({describe_error(done.error)})"
                raise SweepAborted(f"A worker process stopped{detail}; finished cells are saved, rerun the "
                                   "same command to resume.")
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def execute(cells: Iterable, tool: str, executor: str = "joblib", *, workers: int | None = None,
            scheduler: str | None = None, client=None) -> Iterator[tuple]:
    """Run ``cells`` with the chosen executor, yielding ``(cell, CellOutcome)`` as each finishes.

    ``workers`` (local processes) may not exceed the host's DPBO_MAX_WORKERS.
    """
    chosen = Executor(executor, workers, scheduler, client)
    cells = list(cells)
    if not cells:
        return iter(())
    return _outcomes(chosen, cells, tool)


__all__ = ["EXECUTORS", "EXECUTOR_LABELS", "SweepAborted", "dask_scheduler", "default_workers", "execute"]
