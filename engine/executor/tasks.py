"""What every backend hands back, and what a worker process keeps between the tasks it runs."""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterator, NamedTuple


class Finished(NamedTuple):
    """One finished task: its key, and its value or the error it raised; ``cpu``: the CPU seconds its worker
    process spent on it (0 for a task run in the calling thread, whose CPU is that thread's)."""

    key: Hashable
    value: Any = None
    error: BaseException | None = None
    cpu: float = 0.0

    def result(self) -> Any:
        """The value; re-raises the task's error."""
        if self.error is not None:
            raise self.error
        return self.value


_KEPT: OrderedDict = OrderedDict()
_KEPT_LOCK = threading.Lock()
KEEP = 4        # objects a worker keeps (an audit's game, a reproduction's objective): the latest few


def kept(key: Hashable, make: Callable[[], Any]) -> Any:
    """``make()`` once per worker process and ``key`` (the latest :data:`KEEP` keys are kept).

    What the tasks of one job share and is costly to build (an audited
    strategy with its replies) is built on the worker by its first task and
    reused by the next ones, on every backend alike.
    """
    with _KEPT_LOCK:
        if key in _KEPT:
            _KEPT.move_to_end(key)
            return _KEPT[key]
    value = make()
    with _KEPT_LOCK:
        _KEPT[key] = value
        while len(_KEPT) > KEEP:
            _KEPT.popitem(last=False)
    return value


# Inside a task (a pool's worker process, a Dask task) a job's own tasks run in that process: the workers are
# already busy with the job's siblings, and a stock Dask worker's process may not start children.
_NESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("dpbo_nested", default=False)


def nested() -> bool:
    """Whether this code runs inside a task of an executor."""
    return _NESTED.get()


def mark_worker() -> None:
    """This process (its main thread) is a pool's worker, for the rest of its life."""
    _NESTED.set(True)


@contextlib.contextmanager
def as_task() -> Iterator[None]:
    """Within this block the calling thread runs an executor's task."""
    reset = _NESTED.set(True)
    try:
        yield
    finally:
        _NESTED.reset(reset)


def timed_call(fn: Callable, *args) -> tuple[Any, float]:
    """``(fn(*args), CPU seconds of this process meanwhile)``: a task in a worker process, which runs one at a time."""
    started = time.process_time()
    value = fn(*args)
    return value, time.process_time() - started


class Meter:
    """CPU seconds of a piece of work: its executor tasks' (in their worker processes) and its own thread's."""

    def __init__(self):
        self.tasks = 0.0
        self.thread = 0.0

    @property
    def cpu(self) -> float:
        return self.tasks + self.thread


_METERS: contextvars.ContextVar[tuple] = contextvars.ContextVar("dpbo_meters", default=())


@contextlib.contextmanager
def metered() -> Iterator[Meter]:
    """Within this block (this thread, and the threads it starts with a copy of its context), every finished task's
    CPU seconds add to the yielded :class:`Meter`, and so does this thread's own CPU time."""
    meter = Meter()
    reset = _METERS.set(_METERS.get() + (meter,))
    started = time.thread_time()
    try:
        yield meter
    finally:
        meter.thread += time.thread_time() - started
        _METERS.reset(reset)


def count(stream: Iterator[Finished]) -> Iterator[Finished]:
    """``stream``, each task's CPU seconds added to the meters of the consuming context (:func:`metered`)."""
    with contextlib.closing(stream):
        for done in stream:
            for meter in _METERS.get():
                meter.tasks += done.cpu
            yield done


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
