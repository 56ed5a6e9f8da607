"""The server-wide pool of heavy jobs: ``DPBO_MAX_RUNS`` compute at once, and waiting visitors are served in turn.

Every walled or heavy job joins :data:`POOL` before it starts: a live run
(:func:`ui.kit.run_loop.run_live`), a walled computation (an upload's reading, a
Flower export: :func:`ui.kit.compute.compute` with ``walled=``), pooled work (the
teaching view's round) and a data set's table build. Light work never joins it.

Fair to every visitor. A :class:`Visitor` is a session and, where the proxy passes
it, the client's address (:mod:`ui.kit.visitor`); the pool's queue is per visitor
(the address when known, else the session). When a place frees, it goes to the
waiting visitor with the fewest jobs running, and among those to the one served
longest ago (then the earliest job): one visitor's many tabs cannot push another
visitor's run behind all of theirs, only behind the jobs already running. A
visitor may have at most :attr:`VisitorCaps.jobs_per_session` jobs queued or
running per session and :attr:`VisitorCaps.jobs_per_address` per address; one more
is refused with a sentence (:class:`PoolRefusal`, a ConfigError).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from dataclasses import dataclass, field

from engine.limits import HostLimits, VisitorCaps
from engine.validation import ConfigError


@dataclass(frozen=True)
class Visitor:
    """Who asks: a session (its own key) and, where a proxy passed it, the client's address (None: unknown)."""

    session: str
    address: str | None = None

    @property
    def key(self) -> str:
        """The queue this visitor's jobs wait in: one per address when known, else one per session."""
        return f"address {self.address}" if self.address else f"session {self.session}"


_ANONYMOUS = itertools.count()


def anonymous() -> Visitor:
    """A visitor of its own (a job with nobody behind it, e.g. in a test): it is served in turn like any other."""
    return Visitor(session=f"anonymous-{next(_ANONYMOUS)}")


@dataclass(eq=False)
class Ticket:
    """A job's place in the pool (compared by identity)."""

    slots: int
    visitor: Visitor = field(default_factory=anonymous)
    running: bool = False
    order: int = 0


class PoolRefusal(ConfigError):
    """A visitor already has as many jobs queued or running as one visitor may have."""


def refusal(held: int, cap: int, per: str) -> PoolRefusal:
    return PoolRefusal(
        f"You already have {held} job{'s' if held != 1 else ''} queued or running on this server "
        f"{per}, the most one visitor may have at once ({cap}), so this one was not queued. Wait for one to "
        "finish (or stop it) and press Run again.")


class RunPool:
    """Heavy jobs computing at once on the whole server; waiting visitors served in turn.

    A job takes ``slots`` places (a sweep on w worker processes takes w, at most
    the capacity). The capacity is the host's ``DPBO_MAX_RUNS`` (read when a job
    joins, default the number of cores) unless given; the caps per visitor are
    the host's (:class:`engine.limits.VisitorCaps`) unless given.
    """

    def __init__(self, capacity: int | None = None, caps: VisitorCaps | None = None):
        self._fixed = capacity
        self._caps = caps
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._started: list[Ticket] = []
        self._served: dict[str, float] = {}          # visitor key -> when its last job started
        self._order = itertools.count()

    @property
    def capacity(self) -> int:
        return self._fixed or HostLimits.from_env().runs_cap

    @property
    def caps(self) -> VisitorCaps:
        return self._caps or VisitorCaps.from_env()

    def join(self, slots: int = 1, visitor: Visitor | None = None) -> Ticket:
        """Queue a job of ``visitor`` (default: one of its own); raises :class:`PoolRefusal` over a cap."""
        visitor = visitor or anonymous()
        ticket = Ticket(max(1, min(int(slots), self.capacity)), visitor)
        caps = self.caps
        with self._cond:
            held = [t for t in self._waiting + self._started if t.visitor.session == visitor.session]
            if caps.jobs_per_session is not None and len(held) >= caps.jobs_per_session:
                raise refusal(len(held), caps.jobs_per_session, "from this tab")
            if visitor.address:
                held = [t for t in self._waiting + self._started if t.visitor.address == visitor.address]
                if caps.jobs_per_address is not None and len(held) >= caps.jobs_per_address:
                    raise refusal(len(held), caps.jobs_per_address, "from your network address")
            ticket.order = next(self._order)
            self._waiting.append(ticket)
        return ticket

    def _running_by_visitor(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for t in self._started:
            counts[t.visitor.key] = counts.get(t.visitor.key, 0) + t.slots
        return counts

    def _service_order(self) -> list[Ticket]:
        """The waiting tickets in the order they will start: visitors in turn (fewest running, served longest
        ago, earliest job), each visitor's own jobs in the order they came."""
        running = self._running_by_visitor()
        served = dict(self._served)
        queues: dict[str, list[Ticket]] = {}
        for t in sorted(self._waiting, key=lambda t: t.order):
            queues.setdefault(t.visitor.key, []).append(t)
        order, step = [], 0
        while queues:
            key = min(queues, key=lambda k: (running.get(k, 0), served.get(k, -math.inf), queues[k][0].order))
            ticket = queues[key].pop(0)
            if not queues[key]:
                del queues[key]
            order.append(ticket)
            running[key] = running.get(key, 0) + ticket.slots
            step += 1
            served[key] = 1e18 + step          # served now: after every real and every earlier simulated turn
        return order

    def try_start(self, ticket: Ticket) -> bool:
        """Start ``ticket`` if it is the next to serve and its slots are free."""
        with self._cond:
            order = self._service_order()
            used = sum(t.slots for t in self._started)
            if order and order[0] is ticket and used + ticket.slots <= self.capacity:
                self._waiting.remove(ticket)
                self._started.append(ticket)
                self._served[ticket.visitor.key] = time.monotonic()
                ticket.running = True
                self._cond.notify_all()
                return True
            return False

    def ahead(self, ticket: Ticket) -> int:
        """How many waiting jobs will start before ``ticket``."""
        with self._cond:
            return next((i for i, t in enumerate(self._service_order()) if t is ticket), 0)

    @property
    def running(self) -> int:
        with self._cond:
            return sum(t.slots for t in self._started)

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def leave(self, ticket: Ticket) -> None:
        """Give back a started ticket's slots, or leave the queue."""
        with self._cond:
            if ticket.running:
                ticket.running = False
                self._started = [t for t in self._started if t is not ticket]
            else:
                self._waiting = [t for t in self._waiting if t is not ticket]
            self._cond.notify_all()

    def wait(self, timeout: float) -> None:
        with self._cond:
            self._cond.wait(timeout)

    def held(self, visitor: Visitor | None = None, slots: int = 1, poll: float = 0.25):
        """A context manager that waits (in this thread, without a page) for a place and holds it: a job that
        runs outside a script, such as a table build in the background."""
        return _Held(self, visitor, slots, poll)


class _Held:
    def __init__(self, pool: RunPool, visitor: Visitor | None, slots: int, poll: float):
        self.pool, self.visitor, self.slots, self.poll = pool, visitor, slots, poll
        self.ticket: Ticket | None = None

    def __enter__(self) -> Ticket:
        self.ticket = self.pool.join(self.slots, self.visitor)
        try:
            while not self.pool.try_start(self.ticket):
                self.pool.wait(self.poll)
        except BaseException:
            self.pool.leave(self.ticket)
            raise
        return self.ticket

    def __exit__(self, *exc) -> None:
        self.pool.leave(self.ticket)


POOL = RunPool()
