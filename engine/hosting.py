"""Hosting mode: what changes when the explorer is served to the public (``DPBO_HOSTED=1``).

Hosting mode is configuration, not a fork: the same pages and engine run
locally and hosted, and everything a host decides comes from its
environment. This module reads the switches that are not numbers (numbers,
the host's limits, live in :mod:`engine.limits`; the cache size in
:mod:`engine.cache`; data and cache folders in :mod:`engine.paths`):

- ``DPBO_HOSTED``: ``1`` (or ``true``/``yes``/``on``) serves the public.
  Sentences then name no folder of the server, and the dashboard turns
  Streamlit's error details off.
- ``DPBO_DASK_SCHEDULER``: the only address the dashboard's sweeps and
  walled runs connect to (``tcp://host:port`` or ``tls://host:port``), and the
  command line's ``--executor dask`` without ``--scheduler``. No page, link or
  sweep setting can name one, hosted or not; without it the dashboard's Dask
  option starts a loopback cluster (locally) or is not offered (hosted).
  Anyone who reaches a scheduler runs code on its workers: docs/hosting.md
  says how to bind it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Mapping

HOSTED_ENV = "DPBO_HOSTED"
SCHEDULER_ENV = "DPBO_DASK_SCHEDULER"
TRUE = ("1", "true", "yes", "on")


def is_hosted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process serves the public (``DPBO_HOSTED``)."""
    environ = os.environ if environ is None else environ
    return environ.get(HOSTED_ENV, "").strip().lower() in TRUE


def dask_scheduler(environ: Mapping[str, str] | None = None) -> str | None:
    """The Dask scheduler address the host configured, or None."""
    environ = os.environ if environ is None else environ
    address = environ.get(SCHEDULER_ENV, "").strip()
    return address or None


def where(path, fallback: str) -> str:
    """A folder or file for a sentence: the path itself locally, ``fallback`` when hosted (no server paths)."""
    return fallback if is_hosted() else str(path)


# Heavy work a server runs for its visitors (walled workers, a hosting server's pool workers, a data set's table
# build in the background) runs at this niceness or lower, so the server's own threads (pages, health checks) get
# the CPU first; see docs/hosting.md for what it measured. A user's own command runs at its own priority.
HEAVY_NICENESS = 10


def lower_priority(niceness: int = HEAVY_NICENESS) -> None:
    """The calling thread yields the CPU to the server's pages: its niceness becomes at least ``niceness``.

    On Linux niceness belongs to a thread, and the threads and processes it starts later inherit it: heavy
    work that runs in a thread of the server (a data set's table build) calls this in that thread, a walled
    worker at its start.
    """
    if not hasattr(os, "setpriority"):
        return
    with contextlib.suppress(OSError):
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, max(niceness, os.getpriority(os.PRIO_PROCESS, me)))
