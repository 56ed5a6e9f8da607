"""Where cells run: in this process, in worker processes on this machine, or on a Dask cluster.

Every executor yields ``(cell, outcome)`` pairs as cells finish, in whatever
order they finish; the driver writes each one to disk at once. Results never
depend on the executor: a cell's seed is part of its parameters.

Stopping: the driver waits for cells in short slices with a cancel checkpoint
(:mod:`engine.cancel`) between them, and closing the stream (a finished,
stopped or failed sweep) kills the worker processes at once. Worker processes
also exit by themselves within a second when the process that started them
dies (a killed sweep leaves no orphan computing), and run at a lower CPU
priority than the process they serve.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, wait
from typing import Iterable, Iterator

from engine.cancel import checkpoint
from engine.hosting import dask_scheduler, is_hosted
from engine.limits import check_workers
from engine.sweep.cell import CellOutcome, describe_error, error_kind, run_cell
from engine.validation import ConfigError, check_choice, check_int

EXECUTORS = ("local", "joblib", "dask")
EXECUTOR_LABELS = {
    "local": "In this process (tiny sweeps)",
    "joblib": "Worker processes on this machine",
    "dask": "Dask: the host's scheduler, or a cluster on this machine",
}
POLL_SECONDS = 0.2          # longest wait for a cell between two cancel checkpoints
ORPHAN_CHECK_SECONDS = 0.5  # how often a worker looks whether the process that started it is still there
WORKER_NICENESS = 10        # workers yield the CPU to the server they serve (pages, health checks)
PR_SET_PDEATHSIG = 1


class SweepAborted(ConfigError):
    """The executor itself broke (a worker process died, the scheduler went away)."""


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def worker_init(parent: int) -> None:
    """Run in every worker process: lower priority, and exit as soon as the parent is gone.

    Linux delivers SIGKILL to the worker when its parent dies (prctl); elsewhere,
    and as a second guard, a thread polls the parent's pid.
    """
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WORKER_NICENESS)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:      # the parent died before the guard was set
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(ORPHAN_CHECK_SECONDS)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="dpbo-orphan-guard", daemon=True).start()


def run_local(cells: list, tool: str) -> Iterator[tuple]:
    for cell in cells:
        checkpoint()
        yield cell, run_cell(tool, cell.params, cell.runs)


def run_processes(cells: list, tool: str, workers: int | None = None) -> Iterator[tuple]:
    """Run cells in their own worker processes (loky, as joblib does); killed when the stream closes.

    At most one cell more than there are workers is submitted at a time (what
    the pool's call queue holds), so every submitted cell has left the pool's
    queue of work ids when the stream closes: loky's manager thread, shut down
    with ``kill_workers`` while ids still wait there, dies on a KeyError and
    leaves its queues, pipes and feeder threads behind (a leak per abandoned
    sweep). Closing waits for that thread, so a closed stream holds nothing.
    """
    from joblib.externals.loky import ProcessPoolExecutor

    n_jobs = min(workers or default_workers(), max(1, len(cells)))
    with _main_script_hidden():
        executor = ProcessPoolExecutor(max_workers=n_jobs, initializer=worker_init, initargs=(os.getpid(),))
    futures: dict = {}
    try:
        waiting = iter(cells)

        def submit() -> None:
            while len(futures) <= n_jobs:       # the workers' cells and one queued behind them
                cell = next(waiting, None)
                if cell is None:
                    return
                futures[executor.submit(run_cell, tool, cell.params, cell.runs)] = cell

        submit()
        while futures:
            checkpoint()
            done, _ = wait(futures, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            finished = [(future, futures.pop(future)) for future in done]
            submit()        # keep the workers busy while the driver writes what finished
            for future, cell in finished:
                try:
                    outcome = future.result()
                except Exception as err:  # noqa: BLE001 - e.g. a worker killed by the OS
                    detail = "" if is_hosted() else f" ({describe_error(err)})"
                    raise SweepAborted(f"A worker process stopped{detail}; finished cells are saved, rerun the "
                                       "same command to resume.") from None
                yield cell, outcome
    finally:
        _settle(futures)
        executor.shutdown(wait=True, kill_workers=True)


def _settle(futures, limit: float = 2.0) -> None:
    """Wait (briefly) until the pool has taken every submitted cell off its queue of work ids.

    A future turns running (or cancelled) exactly when loky's manager thread
    moves its id to the call queue; with no more cells submitted than that
    queue holds this takes microseconds, and afterwards a shutdown that kills
    the workers finds no id left to trip over.
    """
    end = time.monotonic() + limit
    while any(not (f.running() or f.done()) for f in futures) and time.monotonic() < end:
        time.sleep(0.002)


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
        ready = as_completed(futures, loop=client.loop)
        while not ready.is_empty():
            checkpoint()
            batch = ready.next_batch(block=False)
            if not batch:
                time.sleep(POLL_SECONDS)
                continue
            for future in batch:
                cell = futures[future]
                try:
                    outcome = future.result()
                except Exception as err:  # noqa: BLE001 - e.g. KilledWorker: record it on the cell
                    outcome = CellOutcome(error=describe_error(err), kind=error_kind(err))
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
    """Run ``cells`` with the chosen executor, yielding ``(cell, CellOutcome)`` as each finishes.

    ``workers`` (local processes) may not exceed the host's DPBO_MAX_WORKERS.
    """
    check_choice("executor", executor, EXECUTORS)
    if workers is not None:
        check_int("workers", workers, 1, name="number of workers")
        check_workers(workers)
    if (scheduler or client is not None) and executor != "dask":
        raise ConfigError("A scheduler address needs the dask executor (--executor dask).", "scheduler")
    cells = list(cells)
    if not cells:
        return iter(())
    if executor == "local":
        return run_local(cells, tool)
    if executor == "joblib":
        return run_processes(cells, tool, workers)
    return run_dask(cells, tool, workers, scheduler, client)


__all__ = ["EXECUTORS", "EXECUTOR_LABELS", "SweepAborted", "connect_dask", "dask_scheduler", "default_workers",
           "execute", "run_dask", "run_local", "run_processes", "worker_init"]
