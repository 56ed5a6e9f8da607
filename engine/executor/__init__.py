"""The one place heavy work leaves this thread: worker processes on this machine, or a Dask cluster.

Every heavy job (a sweep's cells, a reproduction's blocks of runs and score
tables, an objective table's agent rows, an audit's chunks of trials, a
hosted page's walled run) is a list of tasks handed to an :class:`Executor`:

- ``"joblib"`` (the default): worker processes on this machine
  (:mod:`engine.executor.pool`); no daemon, no server. ``workers=1`` runs the
  tasks in this process, in order.
- ``"dask"``: the cluster of the scheduler named by ``scheduler`` (the command
  line's ``--scheduler``), else by the host's ``DPBO_DASK_SCHEDULER``, else a
  loopback cluster of ``workers`` processes (:mod:`engine.executor.cluster`).
- ``"local"``: in this process (tiny jobs, tests).

Both backends behave the same to the caller: :meth:`Executor.stream` yields a
:class:`Finished` per task as it finishes (progress), the driver checks the
cancel token (:mod:`engine.cancel`: Stop, a closed tab, the deadline) at
least every fifth of a second, and closing the stream ends the work at once
(local workers killed; Dask tasks cancelled and the running ones stopped at
their next checkpoint). A task's result depends on its arguments alone (its
seed among them), so every backend gives the same numbers.

Work made of several jobs one after another (the settings advisor's rounds) keeps its worker processes, or its
loopback Dask cluster, across them with :meth:`Executor.session`.

Worker processes lower their CPU priority only where a server shares the
machine with its visitors (hosting mode, ``nice=None``); a user's own command
runs at its own priority. Walled runs (memory and CPU caps) are
:mod:`engine.executor.walled`. The executor a job uses when its caller passes
none is :func:`current` (set for a command with :func:`use`).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Hashable, Iterable, Iterator

from engine.executor import cluster, pool
from engine.executor.tasks import Finished, kept, nested
from engine.hosting import dask_scheduler, is_hosted
from engine.limits import check_workers, cores
from engine.validation import ConfigError, check_choice, check_int

EXECUTORS = ("local", "joblib", "dask")
EXECUTOR_LABELS = {
    "local": "In this process (tiny sweeps)",
    "joblib": "Worker processes on this machine",
    "dask": "Dask: the host's scheduler, or a cluster on this machine",
}
DEFAULT = "joblib"


@dataclass(frozen=True)
class Executor:
    """Where tasks run: ``kind`` (one of :data:`EXECUTORS`), ``workers`` (local processes, or the processes of a
    loopback Dask cluster; default all cores), ``scheduler`` (a Dask scheduler's address), ``client`` (an open
    Dask client, for callers that hold one), ``nice`` (lower the workers' priority; None: in hosting mode)."""

    kind: str = DEFAULT
    workers: int | None = None
    scheduler: str | None = None
    client: Any = field(default=None, compare=False, repr=False)
    nice: bool | None = None
    kept: Any = field(default=None, compare=False, repr=False)      # a session's processes (:meth:`session`)

    def __post_init__(self):
        check_choice("executor", self.kind, EXECUTORS)
        if self.workers is not None:
            check_int("workers", self.workers, 1, name="number of workers")
            check_workers(self.workers)
        if (self.scheduler or self.client is not None) and self.kind != "dask":
            raise ConfigError("A scheduler address needs the dask executor (--executor dask).", "scheduler")
        if self.scheduler:
            object.__setattr__(self, "scheduler", cluster.check_address(self.scheduler))

    @property
    def in_process(self) -> bool:
        return self.kind == "local" or (self.kind == "joblib" and self.workers == 1)

    @property
    def address(self) -> str | None:
        """The scheduler the Dask backend connects to (None: a loopback cluster, or not Dask)."""
        if self.kind != "dask" or self.client is not None:
            return None
        return self.scheduler or dask_scheduler()

    def processes(self, tasks: int) -> int:
        """Worker processes a job of ``tasks`` tasks uses on this machine (1: this process)."""
        if self.in_process:
            return 1
        return max(1, min(self.workers or cores(), max(1, tasks)))

    def with_workers(self, workers: int | None) -> "Executor":
        """This executor with ``workers`` processes (unchanged when ``workers`` is None)."""
        return self if workers is None or workers == self.workers else replace(self, workers=workers)

    @contextlib.contextmanager
    def session(self) -> Iterator["Executor"]:
        """This executor with its worker processes (or its loopback Dask cluster) kept across the jobs run through
        it in the block, for work made of several jobs one after another (the advisor's rounds): the processes
        start once instead of once a job. A job stopped early ends its processes as usual; the next starts new
        ones. Everything the session started is stopped when the block ends."""
        if self.kept is not None or self.in_process or nested():
            yield self
            return
        if self.kind == "joblib":
            kept = pool.KeptPool(self.workers or cores(), is_hosted() if self.nice is None else self.nice)
        elif self.address is None and self.client is None:
            kept = cluster.KeptCluster(self.workers or cores())
        else:           # a scheduler's client is kept per process already (cluster.client_for)
            yield self
            return
        try:
            yield replace(self, kept=kept)
        finally:
            kept.close()

    def stream(self, fn: Callable, tasks: Iterable[tuple[Hashable, tuple]], *, label: str = "task"
               ) -> Iterator[Finished]:
        """``fn(*args)`` of every ``(key, args)``, a :class:`Finished` as each ends, in any order (with one
        worker or one task: in this process, in order, a task's error raised). ``fn`` must be importable by
        the workers (a module-level function of the engine). Close the stream to stop what is left."""
        tasks = list(tasks)
        if nested() or (self.processes(len(tasks)) == 1 and self.kind != "dask"):
            return pool.in_this_process(fn, tasks)          # inside a task, one worker or one task: no pool
        if self.kind == "joblib":
            nice = is_hosted() if self.nice is None else self.nice
            return pool.stream(fn, tasks, self.processes(len(tasks)), nice=nice, kept=self.kept)
        client = self.client if self.kept is None else self.kept.open()
        return cluster.stream(fn, tasks, address=self.address, workers=self.workers or cores(), client=client,
                              label=label)

    def results(self, fn: Callable, tasks: Iterable[tuple[Hashable, tuple]], *, label: str = "task"
                ) -> Iterator[tuple[Hashable, Any]]:
        """``(key, fn(*args))`` as tasks finish; the first task that failed raises its error (and stops the rest)."""
        stream = self.stream(fn, tasks, label=label)
        with contextlib.closing(stream):
            for done in stream:
                yield done.key, done.result()


_CURRENT: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("dpbo_executor", default=None)


def current() -> Executor:
    """The executor of the enclosing :func:`use` block, else the default (worker processes on this machine)."""
    return _CURRENT.get() or Executor()


@contextlib.contextmanager
def use(executor: Executor | None) -> Iterator[Executor | None]:
    """Within this block, jobs that are given no executor run on ``executor`` (None: the default)."""
    reset = _CURRENT.set(executor)
    try:
        yield executor
    finally:
        _CURRENT.reset(reset)


# ------------------------------------------------------------------ the command line's options
def add_arguments(parser, *, workers: bool = True, default: str = DEFAULT) -> None:
    """``--executor``, ``--scheduler`` (and ``--workers``) for a command that runs heavy work."""
    parser.add_argument("--executor", choices=EXECUTORS, default=default,
                        help="where the work runs: worker processes on this machine (joblib, the default), "
                             "a Dask cluster (dask) or this process (local)")
    parser.add_argument("--scheduler", help="with --executor dask: a running Dask scheduler, tcp://host:port "
                                            "(default: DPBO_DASK_SCHEDULER, else a loopback cluster)")
    if workers:
        parser.add_argument("--workers", type=int, default=None,
                            help="worker processes (default: all cores; a loopback Dask cluster's size)")


def from_args(args, *, workers: int | None = None) -> Executor:
    """The :class:`Executor` of a command line's options (one sentence when they do not fit)."""
    kind = getattr(args, "executor", None) or DEFAULT
    scheduler = getattr(args, "scheduler", None)
    if scheduler and kind != "dask":
        raise ConfigError("--scheduler needs --executor dask.", "scheduler")
    return Executor(kind, getattr(args, "workers", None) if workers is None else workers, scheduler)


__all__ = ["DEFAULT", "EXECUTORS", "EXECUTOR_LABELS", "Executor", "Finished", "add_arguments", "current",
           "from_args", "kept", "use"]
