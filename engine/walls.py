"""Hard walls for heavy work (its home is :mod:`engine.executor.walled`; this name stays for its callers).

:func:`run_walled` calls ``work(send)`` in a worker process whose memory and
CPU time the operating system caps, on this machine or on the host's Dask
cluster (``DPBO_DASK_SCHEDULER``), and yields the messages the work sends.
"""

from engine.executor.walled import (CPU_MARGIN_SECONDS, MEMORY, MEMORY_MARGIN_MB, POLL_SECONDS, TIME, WORKER_NICENESS,
                                    WORKERS_ENV, Wall, WallHit, run_walled, use_workers, warm_up)

__all__ = ["CPU_MARGIN_SECONDS", "MEMORY", "MEMORY_MARGIN_MB", "POLL_SECONDS", "TIME", "WORKERS_ENV",
           "WORKER_NICENESS", "Wall", "WallHit", "run_walled", "use_workers", "warm_up"]
