"""The price of a sweep: its cells on a number of workers, and the work its cells share (``sweep_cost``)."""

from __future__ import annotations

from typing import Sequence

from engine.limits.core import Cost

WORKER_BASE_MB = 200.0       # a worker process's own interpreter, numpy and scikit-learn


def sweep_cost(cell_costs: Sequence[Cost], workers: int = 1, *, processes: bool = False,
               shared: Sequence[Cost] = ()) -> Cost:
    """Cost of running cells one after another on ``workers`` workers.

    CPU seconds add up whatever the number of workers; memory is the largest
    cell once per worker (plus each worker process's own footprint with
    ``processes``). ``shared`` is work the driver does once before the cells
    (a real task's table build that cells share).
    """
    workers = max(1, int(workers))
    seconds = sum(c.seconds for c in cell_costs) + sum(c.seconds for c in shared)
    largest = max((c.memory_mb for c in cell_costs), default=0.0)
    memory = max(workers * (largest + (WORKER_BASE_MB if processes else 0.0)),
                 max((c.memory_mb for c in shared), default=0.0))
    slowest = max(cell_costs, key=lambda c: c.seconds, default=None)
    biggest = max(cell_costs, key=lambda c: c.memory_mb, default=None)
    own = tuple(k for k in (slowest.knobs if slowest else ()) if k != "runs")
    if slowest is not None and slowest.seconds >= 0.5 * seconds and own:
        knobs = own[:1] + ("values", "runs", "replicates") + own[1:]   # one cell is most of it: its own knob first
    else:
        knobs = ("values", "runs", "replicates") + own
    memory_field = "workers" if workers > 1 else (biggest.memory_field or biggest.field if biggest else "runs")
    return Cost(seconds=seconds, memory_mb=memory, field=knobs[0] if knobs[0] != "values" else "runs", knobs=knobs,
                memory_field=memory_field)
