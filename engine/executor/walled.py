"""Hard walls for heavy work: a run computes in a worker process whose memory and CPU time the OS caps.

A price (:mod:`engine.limits`) is a prediction; the wall holds when the
prediction is wrong. :func:`run_walled` calls ``work(send)`` in a fresh worker
process and yields every message the work sends, as it sends it (records
stream back pickled). The worker runs under ``RLIMIT_AS`` (the host's memory
limit plus :data:`MEMORY_MARGIN_MB` above what the worker holds when it starts)
and ``RLIMIT_CPU`` (the host's time limit for a run plus a margin), so a run
that crosses a wall ends alone: its worker dies or raises ``MemoryError``,
:func:`run_walled` raises :class:`WallHit`, and the server process (which only
receives the messages) and every other run carry on.

Workers are forked from a ``forkserver`` process that imported the engine
once, so starting one costs milliseconds, not an interpreter start. Cancelling
the caller's token kills the worker at once (within :data:`POLL_SECONDS`). A
worker also dies with the server (the forkserver exits when the server does,
and the worker gets SIGKILL when the forkserver goes).

With ``DPBO_DASK_SCHEDULER`` set by the host, the walled run is a task on that
cluster instead: the task starts the same walled worker on a Dask worker's
machine and forwards its messages through a ``distributed.Queue``; Stop sets a
``distributed.Event`` the task watches. Visitors never name an address. A stock
``dask worker`` runs its tasks in a daemonic process, which ``multiprocessing``
forbids to start children (dask/distributed#2142); the walled worker is started
there all the same (:func:`_children_allowed`), so the host sets nothing on its
workers.

``DPBO_RUN_WORKERS``: ``1`` runs heavy work in walled workers, ``0`` in the
server's own process; unset, walled workers are used in hosting mode
(``DPBO_HOSTED``) and whenever the host set a Dask scheduler.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import threading
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from engine.cancel import CancelToken
from engine.executor.cluster import client_for
from engine.hosting import HEAVY_NICENESS, TRUE, dask_scheduler, is_hosted, lower_priority
from engine.limits import HostLimits

try:
    import resource
except ImportError:  # pragma: no cover - Windows has no rlimits: workers there run without walls
    resource = None

WORKERS_ENV = "DPBO_RUN_WORKERS"
MEMORY_MARGIN_MB = 384.0    # above the host's limit: the interpreter's threads and malloc arenas in the worker
CPU_MARGIN_SECONDS = 5.0
POLL_SECONDS = 0.1          # longest wait for a message between two looks at the caller's token
WORKER_NICENESS = HEAVY_NICENESS     # workers yield the CPU to the server's pages and health checks
PRELOAD = ["engine.fbo", "engine.sweep", "engine.audit", "engine.hype", "engine.pogpucb", "engine.privacy"]
PR_SET_PDEATHSIG = 1
MEMORY, TIME = "memory", "time"
PROCESS_NAME = "dpbo-walled-run"
# The host's limits as the server sees them now travel with each run: the forkserver's environment is the one
# it started with, and a worker's own checks (a sweep's cells, an upload's price) must apply the server's.
LIMIT_VARIABLES = ("DPBO_HOSTED", "DPBO_MAX_SECONDS", "DPBO_MAX_MEMORY_MB", "DPBO_MAX_WORKERS", "DPBO_MAX_RUNS",
                   "DPBO_MAX_UPLOAD_ROWS")


@dataclass(frozen=True)
class Wall:
    """What a worker may use: megabytes it may add to what it holds at its start, CPU seconds (None: no wall)."""

    memory_mb: float | None
    cpu_seconds: float | None

    @classmethod
    def from_limits(cls, limits: HostLimits | None = None) -> "Wall":
        """The host's limits as a wall: the memory a price may promise and the time a run may take, plus margins."""
        limits = HostLimits.from_env() if limits is None else limits
        memory, seconds = limits.max_memory_mb, limits.run_seconds
        return cls(memory_mb=None if memory is None else memory + MEMORY_MARGIN_MB,
                   cpu_seconds=None if seconds is None else seconds + CPU_MARGIN_SECONDS)


class WallHit(Exception):
    """The worker crossed a wall (``kind``: :data:`MEMORY` or :data:`TIME`) and was ended."""

    def __init__(self, kind: str):
        super().__init__(f"The worker crossed its {kind} limit.")
        self.kind = kind


def use_workers(environ: Mapping[str, str] | None = None) -> bool:
    """Whether heavy runs compute in walled workers (``DPBO_RUN_WORKERS``; default: when hosted or when the host
    set a Dask scheduler)."""
    environ = os.environ if environ is None else environ
    raw = environ.get(WORKERS_ENV, "").strip().lower()
    if raw:
        return raw in TRUE
    return is_hosted(environ) or dask_scheduler(environ) is not None


# ---------------------------------------------------------------- the worker process
_CONTEXT = None
_CONTEXT_LOCK = threading.Lock()
_START_LOCK = threading.Lock()


def _context():
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if ctx.get_start_method() == "forkserver":
                ctx.set_forkserver_preload(list(PRELOAD))
            _no_main_in_workers()
            _CONTEXT = ctx
        return _CONTEXT


def forkserver_context():
    """The ``forkserver`` context the walled workers and the local pools' workers fork from (it imports
    :data:`PRELOAD` once), or None where the platform has none."""
    ctx = _context()
    return ctx if ctx.get_start_method() == "forkserver" else None


def _no_main_in_workers() -> None:
    """A walled worker must not re-run the server's ``__main__``.

    multiprocessing re-imports the parent's main module in every new process;
    in a Streamlit server that is the page script being run (Streamlit makes it
    ``__main__``), which must never run in a worker. The work travels pickled by
    value, so it needs no main module: for our workers only, the preparation
    data drops it.
    """
    from multiprocessing import spawn

    original = spawn.get_preparation_data
    if getattr(original, "dpbo_walls", False):
        return

    def preparation(name):
        data = original(name)
        if str(name).startswith(PROCESS_NAME):
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    preparation.dpbo_walls = True
    spawn.get_preparation_data = preparation


def warm_up(preload: tuple[str, ...] = ()) -> None:
    """Start the forkserver now (in a thread), so the first run does not pay for importing the engine.

    ``preload``: more modules the workers' work uses (imported once, in the forkserver).
    """
    PRELOAD.extend(name for name in preload if name not in PRELOAD)

    def start() -> None:
        with contextlib.suppress(Exception):
            ctx = _context()
            if ctx.get_start_method() == "forkserver":
                from multiprocessing import forkserver
                forkserver.ensure_running()
    threading.Thread(target=start, name="dpbo-walls-warm-up", daemon=True).start()


def _vm_size_mb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0 if resource is None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _apply(wall: Wall) -> None:
    """In the worker: the OS's limits, a lower priority, and death with the process that started it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    lower_priority(WORKER_NICENESS)
    if resource is None:
        return
    if wall.memory_mb is not None:
        limit = int((_vm_size_mb() + float(wall.memory_mb)) * 1024 * 1024)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if wall.cpu_seconds is not None:
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = max(1, int(used.ru_utime + used.ru_stime + float(wall.cpu_seconds) + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 2))


def _limits_of(environ: Mapping[str, str] | None) -> dict[str, str | None]:
    environ = os.environ if environ is None else environ
    return {name: environ.get(name) for name in LIMIT_VARIABLES}


def _use_limits(limits: Mapping[str, str | None]) -> None:
    for name, value in limits.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _worker(payload: bytes, conn, wall: Wall, limits: Mapping[str, str | None] | None = None) -> None:
    _apply(wall)
    _use_limits(limits or {})
    try:
        import cloudpickle

        work = cloudpickle.loads(payload)
        work(conn.send)
    except MemoryError:
        with contextlib.suppress(Exception):
            conn.send(("wall", MEMORY))
        os._exit(3)
    finally:
        with contextlib.suppress(Exception):
            conn.close()


def _end(proc) -> None:
    if proc.is_alive():
        with contextlib.suppress(Exception):
            proc.kill()
    proc.join(2.0)
    with contextlib.suppress(Exception):
        proc.close()


@contextlib.contextmanager
def _children_allowed():
    """Let this process start the walled worker even when it is daemonic (a stock ``dask worker``'s is).

    ``multiprocessing`` refuses children to a daemonic process because nobody
    would end them when it ends. A walled worker is ended by its run (Stop, the
    end of the stream) and dies with the process that forked it
    (``PR_SET_PDEATHSIG``); so the flag is lifted while the worker starts, and
    only then (one start at a time).
    """
    me = multiprocessing.current_process()
    config = getattr(me, "_config", None)
    if not isinstance(config, dict) or not config.get("daemon"):
        yield
        return
    with _START_LOCK:
        config["daemon"] = False
        try:
            yield
        finally:
            config["daemon"] = True


def _run_local(payload: bytes, wall: Wall, stopped: Callable[[], bool],
               limits: Mapping[str, str | None] | None = None) -> Iterator[tuple]:
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_worker, args=(payload, send, wall, limits), name=PROCESS_NAME, daemon=False)
    with _children_allowed():
        proc.start()
    send.close()
    try:
        while not stopped():
            if not receive.poll(POLL_SECONDS):
                continue
            try:
                message = receive.recv()
            except (EOFError, OSError):
                break
            if message[0] == "wall":
                raise WallHit(message[1])
            yield message
        else:
            return
        proc.join(5.0)
        code = proc.exitcode
        if code in (None, 0):
            return
        raise WallHit(TIME if code in (-signal.SIGXCPU, -signal.SIGKILL) and wall.cpu_seconds else MEMORY)
    finally:
        receive.close()
        _end(proc)


# ---------------------------------------------------------------- the Dask path
def _dask_task(payload: bytes, wall: Wall, name: str, limits: Mapping[str, str | None] | None = None) -> str:
    """On a Dask worker: the walled run, its messages forwarded through the queue ``name``."""
    import pickle

    from distributed import Event, Queue

    out, stop = Queue(name), Event(name + "-stop")
    try:
        for message in _run_local(payload, wall, stop.is_set, limits):
            out.put(pickle.dumps(message))          # bytes travel through the scheduler as they are
    except WallHit as hit:
        out.put(pickle.dumps(("wall", hit.kind)))
    out.put(pickle.dumps(("end",)))
    return "ok"


def _run_dask(address: str, payload: bytes, wall: Wall, stopped: Callable[[], bool],
              limits: Mapping[str, str | None] | None = None) -> Iterator[tuple]:
    import pickle

    from distributed import Event, Queue

    client = client_for(address)
    name = f"dpbo-run-{uuid.uuid4().hex}"
    out, stop = Queue(name, client=client), Event(name + "-stop", client=client)
    future = client.submit(_dask_task, payload, wall, name, limits, pure=False, key=name)
    try:
        while not stopped():
            try:
                message = pickle.loads(out.get(timeout=POLL_SECONDS * 5))
            except Exception:  # noqa: BLE001 - a timeout: look at the task and the token again
                if future.done() and future.status != "finished":
                    future.result()     # raises what the task raised
                continue
            if message[0] == "end":
                return
            if message[0] == "wall":
                raise WallHit(message[1])
            yield tuple(message)
    finally:
        with contextlib.suppress(Exception):
            stop.set()
        with contextlib.suppress(Exception):
            future.cancel()


# ---------------------------------------------------------------- the entry
def run_walled(work: Callable[[Callable[[Any], None]], None], token: CancelToken, wall: Wall | None = None,
               *, environ: Mapping[str, str] | None = None) -> Iterator[tuple]:
    """The messages ``work(send)`` sends from a walled worker, as they come.

    ``work`` is pickled by value (cloudpickle), so closures work; each message
    must be picklable. Cancelling ``token`` kills the worker (the iterator then
    raises :class:`engine.cancel.Cancelled`); crossing the wall raises
    :class:`WallHit`. Runs on the host's Dask cluster when ``DPBO_DASK_SCHEDULER`` is set.
    """
    import cloudpickle

    wall = Wall.from_limits() if wall is None else wall
    payload = cloudpickle.dumps(work)
    address = dask_scheduler(environ)
    limits = _limits_of(environ)
    stream = _run_dask(address, payload, wall, lambda: token.cancelled, limits) if address else \
        _run_local(payload, wall, lambda: token.cancelled, limits)
    with contextlib.closing(stream):
        yield from stream
    token.check()
