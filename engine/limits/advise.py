"""The price of the settings advisor: its simulations, its calibrations, its worker processes.

The advisor (:mod:`engine.advise`) knows before it starts how many runs every round makes
(``engine.advise.search.Plan``); each is priced as one federated BO run of its most expensive setting
(:func:`engine.limits.fbo.fbo_cost`, one run, its objective drawn anew), the noise of every sampling rate as one
calibration (:func:`engine.limits.privacy.accountant_cost`), and every round starts its worker processes anew.
"""

from __future__ import annotations

from engine.limits.core import Cost, priced
from engine.limits.privacy import accountant_cost
from engine.limits.sweep import WORKER_BASE_MB

# A worker process's start: the interpreter, numpy, scipy and the engine's simulation modules (measured 1.2-1.3 s
# of CPU per worker on the development machine at load 30; priced 1.6 s).
WORKER_START_S = 1.6
# A proxy's draw on a grid needs the eigendecomposition of each axis's kernel matrix once per process
# (1000 points: 0.7 s of CPU with one BLAS thread): priced per cubed axis length.
EIGH_S = 1e-9
ADVICE_USUAL = dict(effort=1, agents=200, iterations=40)


def advice_cost(run: Cost, runs: int, *, calibrations: int, steps: int, rounds: int, workers: int,
                effort: int, agents: int, objective: Cost | None = None, axes: tuple = ()) -> Cost:
    """Cost of an advice: ``runs`` runs each at most ``run`` (one federated BO run), ``calibrations`` noise
    calibrations over ``steps`` releases (and each worker's privacy curves of those rates), ``rounds`` jobs of
    ``workers`` worker processes, building the task's objective once (``objective``: a table not cached) and, for
    a proxy, each process's kernel roots of the axes' lengths ``axes``."""
    accounting = accountant_cost(steps, ("rdp",), calibrations=1).seconds * calibrations
    curves = accountant_cost(steps, ("rdp",)).seconds * calibrations * max(1, workers) * rounds
    starts = WORKER_START_S * rounds * workers if workers > 1 else 0.0
    roots = sum(EIGH_S * points ** 3 for points in axes) * max(1, workers) * rounds
    seconds = runs * run.seconds + accounting + curves + starts + roots + (objective.seconds if objective else 0.0)
    memory = max(1, workers) * (run.memory_mb + (WORKER_BASE_MB if workers > 1 else 0.0))
    if objective is not None:
        memory = max(memory, objective.memory_mb)
    knobs = [("agents", agents, ADVICE_USUAL["agents"], 1), ("iterations", steps, ADVICE_USUAL["iterations"], 1)]
    if effort > 1:          # the effort can be lowered to 1, no further
        knobs.insert(0, ("effort", effort, ADVICE_USUAL["effort"], 1))
    return priced(seconds, memory, knobs, memory_field="workers" if workers > 1 else "agents")
