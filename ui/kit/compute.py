"""Light work (a preview, a cached accounting) computed the stoppable way, without queueing for the run pool.

Streamlit interrupts a script only where it sends something to the browser,
so the waiting script thread refreshes a placeholder every
:data:`POLL_SECONDS`; the live-run loop (:mod:`ui.kit.run_loop`) waits the same way.
"""

from __future__ import annotations

import contextlib
import copyreg
import queue
import threading
from typing import Any, Callable

import streamlit as st
from streamlit.runtime.caching.cache_utils import CachedFunc

from engine.cancel import TIME_LIMIT, Cancelled, CancelToken, cancellable
from engine.limits import HostLimits
from engine.validation import ConfigError
from engine.walls import TIME, use_workers, warm_up
from ui.kit.run_worker import by_name, call_walled, wall_sentence

POLL_SECONDS = 0.1        # the script thread sends something to the browser at least this often while it waits


# Every page that computes in a walled worker imports this module (the live-run loop and compute() both), so a
# Streamlit-cached function can travel to a worker from the first page a fresh server opens.
def _reduce_cached(cached):
    """A Streamlit-cached function travels to a worker by name (its cache holds locks); one defined in a page
    script travels as the plain function."""
    func = cached.__wrapped__
    module, name = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
    if module and module != "__main__" and "<locals>" not in name:
        return by_name, (module, name)
    return _identity, (func,)


def _identity(value):
    return value


copyreg.pickle(CachedFunc, _reduce_cached)
if use_workers():
    warm_up(("ui.kit.cached",))   # the first heavy run does not wait for the workers' process to import


def compute(fn: Callable[..., Any], *args, slot=None, walled: str | None = None, pool=None, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` in a worker thread under a cancel token, without queueing (light work).

    The script thread sends an empty placeholder (``slot``, default a new one)
    to the browser every :data:`POLL_SECONDS` while it waits, so Stop, another
    click or a closed tab interrupt the script there, and the engine stops at
    its next checkpoint. Returns ``fn``'s value or raises what it raised.

    ``walled``: when heavy work computes in workers (:func:`engine.walls.use_workers`), compute ``fn`` in a
    walled worker too (work whose size a visitor decides, e.g. reading an upload), after waiting for a place in
    the server's run pool (``pool``, default :data:`ui.kit.run_pool.POOL`): every walled worker counts against
    ``DPBO_MAX_RUNS``. The value names the knob its wall sentence tells the visitor to lower.
    """
    in_worker = walled is not None and use_workers()
    slot = st.empty() if slot is None else slot
    if in_worker:
        with placed(pool, slot):
            return _compute(fn, args, kwargs, slot, walled, True)
    return _compute(fn, args, kwargs, slot, walled, False)


def _compute(fn, args, kwargs, slot, walled: str | None, in_worker: bool):
    token = CancelToken(HostLimits.from_env().run_seconds)
    box: queue.Queue = queue.Queue(maxsize=1)

    def work() -> None:
        try:
            if in_worker:
                box.put((True, call_walled(fn, args, kwargs, token, field=walled)))
            else:
                with cancellable(token):
                    box.put((True, fn(*args, **kwargs)))
        except BaseException as err:  # noqa: BLE001 - handed to the script thread, which raises it
            box.put((False, err))

    threading.Thread(target=work, name="dpbo-compute", daemon=True).start()
    try:
        while True:
            try:
                ok, value = box.get(timeout=POLL_SECONDS)
                break
            except queue.Empty:
                slot.empty()        # a point where Streamlit can interrupt the script
    finally:
        token.cancel()
    if ok:
        return value
    if in_worker and isinstance(value, Cancelled) and value.reason == TIME_LIMIT:
        raise ConfigError(wall_sentence(TIME, walled), walled) from None    # the time wall, naming the knob
    raise value


def pooled(fn: Callable[..., Any], *args, slot=None, pool=None, **kwargs) -> Any:
    """Heavy work that is not a live run (the teaching view's round, a long accounting): like :func:`compute`,
    after waiting for a place in the server's run pool (:data:`ui.kit.run_pool.POOL`), so it counts against
    ``DPBO_MAX_RUNS`` with every other heavy run. The place is kept until ``fn`` has returned or stopped."""
    slot = st.empty() if slot is None else slot
    walled = kwargs.pop("walled", None)
    with placed(pool, slot):
        return _compute(fn, args, kwargs, slot, walled, walled is not None and use_workers())


def queue_text(pool, ticket, *, stop: bool = False) -> str:
    """The sentence of a job waiting in the pool: its place, the server's capacity and the visitors' caps."""
    capacity = pool.capacity
    return (f"Waiting for a free place: number {pool.ahead(ticket) + 1} in the queue (this server computes "
            f"{capacity} job{'s' if capacity != 1 else ''} at a time; waiting visitors are served in turn)."
            + (" Stop leaves the queue." if stop else ""))


@contextlib.contextmanager
def placed(pool=None, slot=None, slots: int = 1):
    """Wait for a place in the server's run pool for this session's visitor (its place shown in ``slot``) and
    hold it in the block. Raises :class:`ui.kit.run_pool.PoolRefusal` (a ConfigError) when the visitor already
    has as many jobs as one visitor may have."""
    from ui.kit.run_pool import POOL
    from ui.kit.visitor import current

    pool = POOL if pool is None else pool
    ticket = pool.join(slots, current())
    try:
        while not pool.try_start(ticket):
            if slot is not None:
                slot.caption(queue_text(pool, ticket))
            pool.wait(POLL_SECONDS)
        if slot is not None:
            slot.empty()
        yield ticket
    finally:
        pool.leave(ticket)


# The knob a Flower export's wall sentence names, per tool.
EXPORT_KNOB = {"fbo": "agents", "hype": "clients"}


def flower_app(tool: str, config, cache: dict, dim: int | None = None) -> bytes:
    """``config`` as a ready Flower app's zip (:func:`engine.flower.export.app_zip`; ``dim``: the dimension of
    the team's objective), built once per configuration (kept in ``cache``, the run's) through the gate: in a walled
    worker when hosted, under the request's deadline.

    Raises ConfigError (a configuration no app deploys) with its sentence.
    """
    from engine.flower.export import app_zip

    key = ("flower", tool, config, dim)
    if cache.get(key) is None:
        extra = {} if dim is None else {"dim": int(dim)}
        cache[key] = compute(app_zip, tool, config, walled=EXPORT_KNOB[tool], **extra)
    return cache[key]
