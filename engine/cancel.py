"""Stopping long computations: the cancel token every long loop of the engine checks.

A caller that may want to stop work (the dashboard's live-run loop on Stop, a
closed tab or the host's time limit; a test) runs it inside
``with cancellable(token):``. Every long loop of the engine calls
:func:`checkpoint` between units of work that take a fraction of a second
(an iteration, a block of repetitions, a chunk of agents, one PLD
composition, one table row, one sweep cell, a chunk of CSV rows), and
:func:`checkpoint` raises :class:`Cancelled` once the token is cancelled or
past its deadline. Outside such a block a checkpoint is one context-variable
lookup, so the CLI and library callers pay nothing.

The token travels in a :class:`contextvars.ContextVar` (like
``engine.objectives.builds.report_progress``), so no engine signature has to
carry it; :func:`work_slices` splits one large vectorised operation into
chunks with a checkpoint between them. :func:`interruptible` turns the first
Ctrl-C of a library call into a cancellation (the call returns what it
finished), the second into the usual KeyboardInterrupt.
"""

from __future__ import annotations

import contextlib
import contextvars
import signal
import threading
import time
from typing import Iterator

STOPPED = "stop"        # someone asked (Stop, a closed tab)
TIME_LIMIT = "time"     # the token's deadline passed
# Elements one chunk of a vectorised operation may touch between two checkpoints
# (about 10-30 ms of numpy work on the development machine).
CHUNK_ELEMENTS = 1 << 22


class Cancelled(Exception):
    """The work was stopped; ``reason`` is :data:`STOPPED` or :data:`TIME_LIMIT`."""

    def __init__(self, reason: str = STOPPED):
        super().__init__("The run was stopped at the time limit." if reason == TIME_LIMIT else "The run was stopped.")
        self.reason = reason


class CancelToken:
    """A thread-safe flag with an optional deadline (seconds from now, on the monotonic clock).

    Calling the token returns whether it is cancelled, so it also fits APIs
    that take ``cancel: Callable[[], bool]`` (e.g. ``engine.audit.run_audit``).
    """

    def __init__(self, deadline_seconds: float | None = None):
        self._event = threading.Event()
        self._reason = STOPPED
        self.deadline = None if deadline_seconds is None else time.monotonic() + float(deadline_seconds)

    def cancel(self, reason: str = STOPPED) -> None:
        if not self._event.is_set():
            self._reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.cancel(TIME_LIMIT)
            return True
        return False

    @property
    def reason(self) -> str | None:
        """Why the token is cancelled (None while it is not)."""
        return self._reason if self.cancelled else None

    def check(self) -> None:
        """Raise :class:`Cancelled` if the token is cancelled or past its deadline."""
        if self.cancelled:
            raise Cancelled(self._reason)

    def __call__(self) -> bool:
        return self.cancelled


_CURRENT: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar("dpbo_cancel_token", default=None)


@contextlib.contextmanager
def cancellable(token: CancelToken | None) -> Iterator[CancelToken | None]:
    """Within this block, :func:`checkpoint` raises :class:`Cancelled` once ``token`` is cancelled."""
    reset = _CURRENT.set(token)
    try:
        yield token
    finally:
        _CURRENT.reset(reset)


@contextlib.contextmanager
def interruptible(token: CancelToken) -> Iterator[None]:
    """Within: the first Ctrl-C (SIGINT) cancels ``token``, so the work stops at its next checkpoint; a second
    one raises KeyboardInterrupt at once. Outside the main thread (where Python delivers no signals), and when
    another program set its own SIGINT handler, nothing changes."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return

    def on_interrupt(signum, frame):
        if token.cancelled:
            raise KeyboardInterrupt
        token.cancel()

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def guarded(token: CancelToken) -> Iterator[None]:
    """Compute under ``token``: :func:`checkpoint` stops at its deadline, a Stop or a Ctrl-C (:func:`interruptible`)."""
    with interruptible(token), cancellable(token):
        yield


def current() -> CancelToken | None:
    """The token of the enclosing :func:`cancellable` block, if any."""
    return _CURRENT.get()


def checkpoint() -> None:
    """Raise :class:`Cancelled` if the enclosing block's token is cancelled (no-op outside one)."""
    token = _CURRENT.get()
    if token is not None:
        token.check()


def work_slices(total: int, elements_each: int, budget: int = CHUNK_ELEMENTS) -> Iterator[slice]:
    """Slices of ``range(total)`` whose items touch at most ``budget`` elements together.

    A checkpoint runs before every slice after the first, so one large batched
    operation over ``total`` items (``elements_each`` numbers each) can be
    stopped part-way. Small operations come as one slice.
    """
    total = int(total)
    step = max(1, int(budget) // max(1, int(elements_each)))
    for start in range(0, total, step):
        if start:
            checkpoint()
        yield slice(start, min(total, start + step))
