"""Where cells run: in this process, in joblib worker processes, or on a Dask cluster.

Every executor yields ``(cell, outcome)`` pairs as cells finish, in whatever
order they finish; the driver writes each one to disk at once. Results never
depend on the executor: a cell's seed is part of its parameters.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import uuid
from typing import Iterable, Iterator

from engine.sweep.cell import CellOutcome, describe_error, indexed_run_cell, run_cell
from engine.validation import ConfigError, check_choice, check_int

EXECUTORS = ("local", "joblib", "dask")
EXECUTOR_LABELS = {
    "local": "In this process (tiny sweeps)",
    "joblib": "Worker processes on this machine (joblib)",
    "dask": "Dask: a local cluster, or an existing one at a scheduler address",
}


class SweepAborted(ConfigError):
    """The executor itself broke (a worker process died, the scheduler went away)."""


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def run_local(cells: list, tool: str) -> Iterator[tuple]:
    for cell in cells:
        yield cell, run_cell(tool, cell.params, cell.runs)


def run_joblib(cells: list, tool: str, workers: int | None = None) -> Iterator[tuple]:
    from joblib import Parallel, delayed

    n_jobs = min(workers or default_workers(), max(1, len(cells)))
    by_index = {cell.index: cell for cell in cells}
    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs")
    results = parallel(delayed(indexed_run_cell)(c.index, tool, c.params, c.runs) for c in cells)
    try:
        for index, outcome in results:
            yield by_index[index], outcome
    except ConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - e.g. a worker killed by the OS
        raise SweepAborted(f"A worker process stopped ({describe_error(err)}); finished cells are saved, "
                           "rerun the same command to resume.") from None
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


def connect_dask(scheduler: str | None, workers: int | None):
    """A ``(client, cluster)`` pair: a client of ``scheduler``, or of a new loopback LocalCluster."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - dask[distributed] is a requirement
        raise ConfigError("The Dask executor needs dask[distributed]: pip install 'dask[distributed]'.") from None
    if scheduler:
        if "://" not in scheduler:
            raise ConfigError(f"Give the scheduler address as tcp://host:port, got {scheduler!r}.", "scheduler")
        try:
            return Client(scheduler, timeout="15s", set_as_default=False), None
        except (OSError, TimeoutError) as err:
            raise ConfigError(f"Could not reach the Dask scheduler at {scheduler} ({describe_error(err)}).",
                              "scheduler") from None
    with _main_script_hidden():
        cluster = LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1, host="127.0.0.1",
                               dashboard_address=None, processes=True, silence_logs=logging.ERROR)
    return Client(cluster, set_as_default=False), cluster


@contextlib.contextmanager
def _main_script_hidden():
    """Keep spawned worker processes from re-running the parent's main script.

    ``multiprocessing``'s spawn imports the parent's ``__main__`` file in every
    child; under Streamlit that is the page itself. Cells only need ``engine``,
    so the children are told there is no main file while they start.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(main, "__spec__", None) is not None:
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def run_dask(cells: list, tool: str, workers: int | None = None, scheduler: str | None = None,
             client=None) -> Iterator[tuple]:
    """Submit every cell to Dask and yield them as they complete.

    Workers must be able to ``import engine`` (same project on their
    ``PYTHONPATH``); they return plain data and never touch the output files.
    """
    from distributed import as_completed

    own_client, own_cluster = None, None
    if client is None:
        own_client, own_cluster = connect_dask(scheduler, workers)
        client = own_client
    token = uuid.uuid4().hex[:8]
    futures = {client.submit(run_cell, tool, cell.params, cell.runs, key=f"dpbo-sweep-{cell.key}-{token}",
                             pure=False): cell for cell in cells}
    try:
        for future in as_completed(futures, loop=client.loop):
            cell = futures[future]
            try:
                outcome = future.result()
            except Exception as err:  # noqa: BLE001 - e.g. KilledWorker: record it on the cell
                outcome = CellOutcome(error=describe_error(err))
            yield cell, outcome
            future.release()
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()


def execute(cells: Iterable, tool: str, executor: str = "joblib", *, workers: int | None = None,
            scheduler: str | None = None, client=None) -> Iterator[tuple]:
    """Run ``cells`` with the chosen executor, yielding ``(cell, CellOutcome)`` as each finishes."""
    check_choice("executor", executor, EXECUTORS)
    if workers is not None:
        check_int("workers", workers, 1, name="number of workers")
    if (scheduler or client is not None) and executor != "dask":
        raise ConfigError("A scheduler address needs the dask executor (--executor dask).", "scheduler")
    cells = list(cells)
    if not cells:
        return iter(())
    if executor == "local":
        return run_local(cells, tool)
    if executor == "joblib":
        return run_joblib(cells, tool, workers)
    return run_dask(cells, tool, workers, scheduler, client)
