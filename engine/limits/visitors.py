"""What one visitor may ask of a shared server at once: jobs queued or running, and reruns per second.

The host's limits (:class:`engine.limits.core.HostLimits`) bound one request; these bound one visitor, so that
one visitor's many tabs (or a script that floods the server) cannot take every place of the run pool or every
turn of the server's script threads from the others. A visitor is a browser session and, where the reverse proxy
passes it (``X-Forwarded-For`` from an address the server trusts, uvicorn's ``FORWARDED_ALLOW_IPS``), the
client's address: the caps per address hold for all the sessions of that address together.

``DPBO_MAX_JOBS_PER_ADDRESS`` (4)
    heavy jobs (runs, sweeps, uploads, table builds, exports) one address may have queued or running at once.
``DPBO_MAX_RERUNS_PER_ADDRESS`` (4)
    page reruns per second one address's sessions may start together (each session alone:
    :data:`RERUNS_PER_SESSION`).

``DPBO_MAX_SCRIPT_SHARE`` (0.25, hosting mode only)
    the share of one core one visitor's page scripts may use on average: each page run's CPU time is charged to
    its visitor, whose next reruns wait until it is earned back (a burst of a few runs is free).

``none`` lifts a cap; a value that is not a positive number falls back to the default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from engine.hosting import is_hosted
from engine.limits.core import _read

JOBS_PER_ADDRESS_ENV = "DPBO_MAX_JOBS_PER_ADDRESS"
RERUNS_PER_ADDRESS_ENV = "DPBO_MAX_RERUNS_PER_ADDRESS"
SCRIPT_SHARE_ENV = "DPBO_MAX_SCRIPT_SHARE"
DEFAULT_SCRIPT_SHARE = 0.25
DEFAULT_JOBS_PER_ADDRESS = 4
DEFAULT_RERUNS_PER_ADDRESS = 4.0
# One tab runs one script at a time: its run (or upload, or export) and a table build it started.
JOBS_PER_SESSION = 2
RERUNS_PER_SESSION = 4.0        # a session's reruns are coalesced to one per quarter second


@dataclass(frozen=True)
class VisitorCaps:
    """Jobs and reruns one visitor may have at once (``None``: no cap)."""

    jobs_per_session: int | None = JOBS_PER_SESSION
    jobs_per_address: int | None = DEFAULT_JOBS_PER_ADDRESS
    reruns_per_session: float | None = RERUNS_PER_SESSION
    reruns_per_address: float | None = DEFAULT_RERUNS_PER_ADDRESS
    script_share: float | None = None           # of one core, per visitor (hosting mode: DEFAULT_SCRIPT_SHARE)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "VisitorCaps":
        environ = os.environ if environ is None else environ
        jobs = _read(environ.get(JOBS_PER_ADDRESS_ENV), DEFAULT_JOBS_PER_ADDRESS)
        share = _read(environ.get(SCRIPT_SHARE_ENV), DEFAULT_SCRIPT_SHARE) if is_hosted(environ) else None
        return cls(jobs_per_address=None if jobs is None else max(1, int(jobs)),
                   reruns_per_address=_read(environ.get(RERUNS_PER_ADDRESS_ENV), DEFAULT_RERUNS_PER_ADDRESS),
                   script_share=share)

    def sentence(self) -> str:
        """The one sentence that tells a visitor these caps (the pages' queue note and docs/hosting.md)."""
        address = "" if self.jobs_per_address is None else f", {self.jobs_per_address} from one network address"
        return (f"To share this server fairly, one visitor may have at most {self.jobs_per_session} jobs queued or "
                f"running per tab{address}, and waiting visitors are served in turn.")
