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
from engine.executor.tasks import Finished, main_script_hidden, mark_worker, timed_call
from engine.hosting import HEAVY_NICENESS, lower_priority

POLL_SECONDS = 0.2          # longest wait for a task between two cancel checkpoints
ORPHAN_CHECK_SECONDS = 0.5  # how often a worker looks whether the process that started it is still there
PR_SET_PDEATHSIG = 1


def worker_init(parent: int, nice: bool, caller: dict | None = None) -> None:
    """Run in every worker process: exit as soon as the process that started it is gone, and (``nice``) yield
    the CPU.

    ``caller``: that process's environment, import path and folder when the pool started, which a worker forked
    from the forkserver (:func:`_pool`) takes on; a spawned worker has them already. Linux delivers SIGKILL to
    the worker when its parent dies (prctl: the forkserver, which exits with the process that started it);
    elsewhere, and as a second guard, a thread looks whether that process is still there.
    """
    mark_worker()
    if caller is not None:
        os.environ.clear()
        os.environ.update(caller["env"])
        sys.path[:] = caller["path"]
        with contextlib.suppress(OSError):
            os.chdir(caller["cwd"])
    if nice:
        lower_priority(HEAVY_NICENESS)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 9)
    if not _alive(parent):      # it died before the guard was set
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(ORPHAN_CHECK_SECONDS)
            if not _alive(parent):
                os._exit(1)

    threading.Thread(target=watch, name="dpbo-orphan-guard", daemon=True).start()


def _alive(pid: int) -> bool:
    """Whether the process ``pid`` (this worker's starter: its parent, or the forkserver's) is still there."""
    if os.getppid() == pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def in_this_process(fn: Callable, tasks: list) -> Iterator[Finished]:
    """Every task in order, in this process (a checkpoint before each); a task's error ends the stream."""
    for key, args in tasks:
        checkpoint()
        yield Finished(key, fn(*args))


def stream(fn: Callable, tasks: list, workers: int, *, nice: bool = False) -> Iterator[Finished]:
    """``fn(*args)`` of every ``(key, args)`` in ``tasks`` on ``workers`` processes, as they finish.

    A task that raised is yielded with its ``error`` (a worker the OS killed: the pool's error); the
    caller decides whether that ends the run.
    """
    n_jobs = max(1, min(workers, len(tasks)))
    executor = _pool(n_jobs, nice)
    futures: dict = {}
    try:
        yield from _feed(executor, fn, tasks, n_jobs, futures)
    finally:
        _settle(futures)
        executor.shutdown(wait=True, kill_workers=True)


class SharedPool:
    """One pool of ``workers`` processes that several jobs use at once (the threads of one command, e.g. the
    papers of ``reproduce all``). All streams together keep at most one task more than there are workers
    submitted (the pool's call queue, as one stream does alone), so every submitted task has left loky's queue of
    work ids and :meth:`close` can kill the workers."""

    def __init__(self, workers: int, *, nice: bool = False):
        self.workers = max(1, int(workers))
        # The workers start now, from this thread (_pool): a spawned worker dies with the thread that started it
        # (PDEATHSIG), and this one outlives the jobs' threads.
        self._executor = _pool(self.workers, nice)
        self._slots = threading.BoundedSemaphore(self.workers + 1)
        self._submitted: set = set()

    def stream(self, fn: Callable, tasks: list) -> Iterator[Finished]:
        futures: dict = {}
        yield from _feed(self._executor, fn, tasks, self.workers, futures, self._take)

    def _take(self, submit: Callable):
        """A submitted future, or None while every slot is taken."""
        if not self._slots.acquire(blocking=False):
            return None
        future = submit()
        self._submitted.add(future)
        future.add_done_callback(self._release)
        return future

    def _release(self, future) -> None:
        self._submitted.discard(future)
        self._slots.release()

    def close(self) -> None:
        _settle({f: None for f in list(self._submitted)})
        self._executor.shutdown(wait=True, kill_workers=True)


def _pool(n_jobs: int, nice: bool):
    """loky's pool of ``n_jobs`` workers, started: forked from the forkserver that imported the engine
    (engine.executor.walled), where the platform has one, so a worker costs milliseconds, not an interpreter's
    start and the engine's imports."""
    from joblib.externals.loky import ProcessPoolExecutor

    from engine.executor.walled import forkserver_context

    context = forkserver_context()
    caller = None if context is None else dict(env=dict(os.environ), path=list(sys.path), cwd=os.getcwd())
    with main_script_hidden():
        executor = ProcessPoolExecutor(max_workers=n_jobs, context=context, initializer=worker_init,
                                       initargs=(os.getpid(), nice, caller))
        executor.submit(int).result()       # the workers start now, while the main script is hidden
    return executor


def _feed(executor, fn: Callable, tasks: list, n_jobs: int, futures: dict,
          take: Callable | None = None) -> Iterator[Finished]:
    """Submit ``tasks`` to ``executor`` (at most ``n_jobs`` + 1 waiting or running, in ``futures``; ``take``: a
    shared pool's slot keeper, which may refuse for now) and yield each as it finishes, with a cancel checkpoint
    at least every :data:`POLL_SECONDS`."""
    waiting = iter(tasks)
    following = [next(waiting, None)]        # the next task not yet submitted

    def submit() -> None:
        while following[0] is not None and len(futures) <= n_jobs:     # the workers' tasks and one behind them
            key, args = following[0]
            future = (take or (lambda submit_: submit_()))(lambda: executor.submit(timed_call, fn, *args))
            if future is None:
                return
            futures[future] = key
            following[0] = next(waiting, None)

    submit()
    while futures or following[0] is not None:
        checkpoint()
        if not futures:                       # a shared pool's slots are all taken by other jobs
            time.sleep(POLL_SECONDS / 4)
            submit()
            continue
        done, _ = wait(futures, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
        finished = [(future, futures.pop(future)) for future in done]
        submit()        # keep the workers busy while the driver handles what finished
        for future, key in finished:
            error = future.exception()
            value, cpu = (None, 0.0) if error is not None else future.result()
            yield Finished(key, value, error, cpu)


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
