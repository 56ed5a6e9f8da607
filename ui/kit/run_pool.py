"""The server-wide pool of heavy runs: ``DPBO_MAX_RUNS`` compute at once, the others wait in the order they came.

Every session's :func:`ui.kit.run_loop.run_live` joins :data:`POOL` before it
starts, and light work (:func:`ui.kit.compute.compute`) never joins it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from engine.limits import HostLimits


@dataclass(eq=False)
class Ticket:
    """A run's place in the pool (compared by identity)."""

    slots: int
    running: bool = False


class RunPool:
    """Heavy runs computing at once on the whole server; the others wait in the order they came.

    A run takes ``slots`` places (a sweep on w worker processes takes w, at most
    the capacity). The capacity is the host's ``DPBO_MAX_RUNS`` (read when a run
    joins, default the number of cores) unless given.
    """

    def __init__(self, capacity: int | None = None):
        self._fixed = capacity
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._running = 0

    @property
    def capacity(self) -> int:
        return self._fixed or HostLimits.from_env().runs_cap

    def join(self, slots: int = 1) -> Ticket:
        ticket = Ticket(max(1, min(int(slots), self.capacity)))
        with self._cond:
            self._waiting.append(ticket)
        return ticket

    def try_start(self, ticket: Ticket) -> bool:
        """Start ``ticket`` if every ticket before it has started and its slots are free."""
        with self._cond:
            if self._waiting and self._waiting[0] is ticket and self._running + ticket.slots <= self.capacity:
                self._waiting.pop(0)
                self._running += ticket.slots
                ticket.running = True
                self._cond.notify_all()
                return True
            return False

    def ahead(self, ticket: Ticket) -> int:
        """How many waiting runs are before ``ticket``."""
        with self._cond:
            return next((i for i, t in enumerate(self._waiting) if t is ticket), 0)

    @property
    def running(self) -> int:
        with self._cond:
            return self._running

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def leave(self, ticket: Ticket) -> None:
        """Give back a started ticket's slots, or leave the queue."""
        with self._cond:
            if ticket.running:
                ticket.running = False
                self._running -= ticket.slots
            else:
                self._waiting = [t for t in self._waiting if t is not ticket]
            self._cond.notify_all()

    def wait(self, timeout: float) -> None:
        with self._cond:
            self._cond.wait(timeout)


POOL = RunPool()
