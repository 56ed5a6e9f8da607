"""The local backend: worker processes on this machine (loky's pool, the one joblib uses), killed when a stream closes.

:func:`stream` runs ``fn(*args)`` of every task in worker processes and
yields a :class:`~engine.executor.tasks.Finished` for each as it finishes.
The driver waits in slices of :data:`POLL_SECONDS` with a cancel checkpoint
between them, so Stop, a closed tab or the deadline reach it at once; closing
the stream (finished, stopped or failed) kills the workers.

Two quirks of loky's pool are handled here, once:

- At most one task more than there are workers is submitted at a time (what
  the pool's call queue holds), so every submitted task has left the pool's
  queue of work ids when the stream closes. loky's manager thread, shut down
  with ``kill_workers`` while ids still wait there, dies on a KeyError and
  leaves its queues, pipes and feeder threads behind (a leak per abandoned
  run), or prints a traceback over the command's one sentence.
- Spawned workers re-run the parent's ``__main__`` file (under Streamlit the
  page itself): the workers are told there is no main file while they start.

Workers exit by themselves within a second when the process that started
them dies (a killed command leaves no orphan computing). They lower their CPU
priority only when asked (``nice``: a server sharing the machine with its
visitors), never for a user's own command.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, wait
from typing import Callable, Iterator

from engine.cancel import checkpoint
from engine.executor.tasks import Finished, mark_worker
from engine.hosting import HEAVY_NICENESS, lower_priority

POLL_SECONDS = 0.2          # longest wait for a task between two cancel checkpoints
ORPHAN_CHECK_SECONDS = 0.5  # how often a worker looks whether the process that started it is still there
PR_SET_PDEATHSIG = 1


def worker_init(parent: int, nice: bool) -> None:
    """Run in every worker process: exit as soon as the parent is gone, and (``nice``) yield the CPU.

    Linux delivers SIGKILL to the worker when its parent dies (prctl); elsewhere,
    and as a second guard, a thread polls the parent's pid.
    """
    mark_worker()
    if nice:
        lower_priority(HEAVY_NICENESS)
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


@contextlib.contextmanager
def main_script_hidden():
    """Keep spawned worker processes from re-running the parent's main script.

    ``multiprocessing``'s spawn imports the parent's ``__main__`` file in every
    child; under Streamlit that is the page itself. Tasks only need ``engine``,
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


def in_this_process(fn: Callable, tasks: list) -> Iterator[Finished]:
    """Every task in order, in this process (a checkpoint before each); a task's error ends the stream."""
    for key, args in tasks:
        checkpoint()
        yield Finished(key, fn(*args))


def _new_pool(workers: int, nice: bool):
    from joblib.externals.loky import ProcessPoolExecutor

    with main_script_hidden():
        return ProcessPoolExecutor(max_workers=workers, initializer=worker_init, initargs=(os.getpid(), nice))


class KeptPool:
    """Worker processes kept across the jobs of one session (:meth:`engine.executor.Executor.session`): a job
    that finished every task leaves them running for the next; a job stopped early (Stop, an error, the time
    limit) kills them as a pool of its own would, and the next job starts new ones."""

    def __init__(self, workers: int, nice: bool):
        self.workers, self.nice = int(workers), bool(nice)
        self._executor = None
        self.started = 0            # pools started so far (a benchmark's count)

    def executor(self):
        if self._executor is None:
            self._executor = _new_pool(self.workers, self.nice)
            self.started += 1
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, kill_workers=True)
            self._executor = None


def stream(fn: Callable, tasks: list, workers: int, *, nice: bool = False, kept: KeptPool | None = None
           ) -> Iterator[Finished]:
    """``fn(*args)`` of every ``(key, args)`` in ``tasks`` on ``workers`` processes, as they finish (``kept``:
    the session's processes, left running when every task finished).

    A task that raised is yielded with its ``error`` (a worker the OS killed: the pool's error); the
    caller decides whether that ends the run.
    """
    n_jobs = max(1, min(workers, len(tasks))) if kept is None else kept.workers
    executor = _new_pool(n_jobs, nice) if kept is None else kept.executor()
    futures: dict = {}
    try:
        waiting = iter(tasks)

        def submit() -> None:
            while len(futures) <= n_jobs:       # the workers' tasks and one queued behind them
                task = next(waiting, None)
                if task is None:
                    return
                key, args = task
                futures[executor.submit(fn, *args)] = key

        submit()
        while futures:
            checkpoint()
            done, _ = wait(futures, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            finished = [(future, futures.pop(future)) for future in done]
            submit()        # keep the workers busy while the driver handles what finished
            for future, key in finished:
                error = future.exception()
                yield Finished(key, None if error is not None else future.result(), error)
    finally:
        _settle(futures)
        if kept is None:
            executor.shutdown(wait=True, kill_workers=True)
        elif futures:               # stopped early: its tasks still run in the session's workers; end them
            kept.close()


def _settle(futures, limit: float = 2.0) -> None:
    """Wait (briefly) until the pool has taken every submitted task off its queue of work ids.

    A future turns running (or cancelled) exactly when loky's manager thread
    moves its id to the call queue; with no more tasks submitted than that
    queue holds this takes microseconds, and afterwards a shutdown that kills
    the workers finds no id left to trip over.
    """
    end = time.monotonic() + limit
    while any(not (f.running() or f.done()) for f in futures) and time.monotonic() < end:
        time.sleep(0.002)
