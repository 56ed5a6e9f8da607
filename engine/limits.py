"""What a request will cost, and whether this host accepts it: the one work limit.

Every tool that starts heavy work turns its configuration into a :class:`Cost`
with one of the estimators below (``fbo_cost`` for a federated BO run, the
teaching view's round and every line of a comparison; ``hype_cost`` for
DP-HYPE in both modes; ``pogpucb_cost``; ``sweep_cost`` for a sweep of cells;
the privacy audit's ``engine.audit.audit_cost``), and the pages and the CLI call
:func:`check` before starting it. The refusal is a
:class:`~engine.validation.ConfigError` whose field is the knob to lower, so a
page shows it under that control and the CLI prints it and exits 2.

The host sets one variable for work, ``DPBO_MAX_SECONDS``: the estimated CPU
seconds one request (one press of Run, one CLI command) may ask for. Memory is
bounded by ``DPBO_MAX_MEMORY_MB`` (estimated peak above the process's own
footprint), whose default is generous. Either may be ``none`` for no limit.
The command line applies the time limit only when the host sets it.

Each estimate is a few terms "operations in the inner loop x seconds per
operation", with constants measured on the 2-core development machine
(numpy, single-threaded BLAS) and rounded up, so estimates lie above the
measured figures quoted next to each estimator. They decide refusals, not
progress bars.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

from engine.validation import ConfigError

SECONDS_ENV = "DPBO_MAX_SECONDS"
MEMORY_ENV = "DPBO_MAX_MEMORY_MB"
# Two minutes of one core per request: the largest paper preset (the landmine
# Fig. 3a sweep, 12 cells x 10 runs) is estimated at about a minute.
DEFAULT_MAX_SECONDS = 120.0
DEFAULT_MAX_MEMORY_MB = 8192.0
NO_LIMIT = ("none", "off", "unlimited")

# How the sentence names a knob (config field -> words).
KNOB_NAMES = {
    "agents": "agents", "iterations": "iterations", "runs": "runs", "features": "random features M",
    "n_init": "initial points", "t": "iteration t", "repetitions": "repetitions", "clients": "clients",
    "candidates": "candidates", "workers": "workers", "values": "compared values", "replicates": "seeds per setting",
    "lines": "lines", "trials": "number of trials", "steps": "releases T",
}


@dataclass(frozen=True)
class Cost:
    """The estimated price of a request.

    ``seconds`` is CPU time, ``memory_mb`` the peak memory the work adds.
    ``field`` is the configuration field to lower first (the knob furthest
    above its usual value); ``knobs`` lists every field that drives the cost,
    ``field`` first; ``memory_field`` is the one to lower when memory is the
    problem (default: ``field``).
    """

    seconds: float
    memory_mb: float
    field: str
    knobs: tuple[str, ...] = ()
    memory_field: str | None = None

    def __add__(self, other: "Cost") -> "Cost":
        """Two pieces of work held in memory together (e.g. the lines of one comparison)."""
        first = self if self.seconds >= other.seconds else other
        return replace(first, seconds=self.seconds + other.seconds, memory_mb=self.memory_mb + other.memory_mb)


@dataclass(frozen=True)
class HostLimits:
    """What one request may ask of this host (``None``: no limit)."""

    max_seconds: float | None = DEFAULT_MAX_SECONDS
    max_memory_mb: float | None = DEFAULT_MAX_MEMORY_MB

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *,
                 default_seconds: float | None = DEFAULT_MAX_SECONDS) -> "HostLimits":
        """The limits the host set (``DPBO_MAX_SECONDS``, ``DPBO_MAX_MEMORY_MB``).

        A value that is not a positive number falls back to the default;
        ``none`` lifts the limit. The CLI passes ``default_seconds=None``.
        """
        environ = os.environ if environ is None else environ
        return cls(max_seconds=_read(environ.get(SECONDS_ENV), default_seconds),
                   max_memory_mb=_read(environ.get(MEMORY_ENV), DEFAULT_MAX_MEMORY_MB))


def _read(raw: str | None, default: float | None) -> float | None:
    text = (raw or "").strip().lower()
    if text in NO_LIMIT:
        return None
    try:
        value = float(text)
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def check(cost: Cost, limits: HostLimits | None = None, *, what: str = "This run", fewer: str | None = None) -> Cost:
    """Refuse ``cost`` when it is above the host's limits; return it otherwise.

    ``what`` is the sentence's subject ("This run", "These 3 lines", "This
    sweep"); ``fewer`` names something the visitor can have fewer of
    ("lines", "compared values"). Raises ConfigError with the knob to lower as
    its field.
    """
    limits = HostLimits.from_env() if limits is None else limits
    verb = "need" if what.split()[0].lower() in ("these", "they") else "needs"
    if limits.max_memory_mb is not None and cost.memory_mb > limits.max_memory_mb:
        field = cost.memory_field or cost.field
        raise ConfigError(f"{what} {verb} about {cost.memory_mb:,.0f} MB of memory (estimated); the limit here is "
                          f"{limits.max_memory_mb:,.0f} MB. {_advice(cost, field, fewer)}", field)
    if limits.max_seconds is not None and cost.seconds > limits.max_seconds:
        raise ConfigError(f"{what} {verb} about {format_seconds(cost.seconds)} of computing (estimated); the limit "
                          f"here is {format_seconds(limits.max_seconds)}. {_advice(cost, cost.field, fewer)}",
                          cost.field)
    return cost


def format_seconds(seconds: float) -> str:
    """A duration for a sentence: ``0.16 s``, ``42 s``, ``2.0 min``, ``1.5 h``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _advice(cost: Cost, first: str, fewer: str | None) -> str:
    names = ([first] + [k for k in cost.knobs if k != first])[:3]
    words = [f"the {KNOB_NAMES.get(name, name)}" for name in names]
    lower = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
    return (f"Compare fewer {fewer} or lower {lower}." if fewer else f"Lower {lower}.")


def knob_ranking(knobs: Iterable[tuple[str, float, float, float]]) -> tuple[str, ...]:
    """Fields ordered by how far each is above its usual value: (field, value, usual, power).

    Knobs at or below their usual value keep the given order (the most
    natural ones to lower come first).
    """
    knobs = list(knobs)
    factor = {name: max(1.0, (max(float(value), 1e-12) / usual) ** power) for name, value, usual, power in knobs}
    return tuple(sorted(factor, key=lambda name: -factor[name]))


def _cost(seconds: float, memory_mb: float, knobs: Sequence[tuple[str, float, float, float]], **extra) -> Cost:
    ranked = knob_ranking(knobs)
    return Cost(seconds=float(seconds), memory_mb=float(memory_mb), field=ranked[0], knobs=ranked, **extra)


# ---------------------------------------------------------------- federated BO
# Per iteration every one of the K = runs x agents posteriors is sampled and
# updated (~M^2 each) and scores the C candidates (K C M multiply-adds);
# initialisation adds n_init observations per posterior. Measured CPU seconds
# (estimate): N = 50, T = 30, 3 runs, M = 50: 0.10 (0.16); N = 200, T = 40,
# 5 runs: 0.86 (1.4); M = 800: 11.3 (13.8); landmine 29 x 60, 10 runs,
# M = 100: 1.6 (2.8). Peak memory MB: 15 (39), 118 (211), 1605 (2464), 130 (181).
FBO_SCORE_S = 0.5e-9         # per K x C x M
FBO_POSTERIOR_S = 3.5e-9     # per K x M^2 and iteration
FBO_INIT_S = 2e-9            # per K x n_init x M^2
FBO_BASE_MB = 10.0
DEFAULT_CANDIDATES = 4096    # the largest table (16^3 in 3-D) when the objective is not built yet
FBO_USUAL = dict(agents=200, iterations=40, runs=5, features=50, n_init=10)


def fbo_cost(config, n_agents: int, candidates: int | None = None) -> Cost:
    """Cost of a federated BO run of ``config`` (an FboConfig) with ``n_agents`` agents.

    ``candidates``: size of the objective's candidate set (the continuous
    domain draws 1000 per iteration); unknown: :data:`DEFAULT_CANDIDATES`.
    """
    N, R, T, M = int(n_agents), int(config.runs), int(config.iterations), int(config.features)
    n_init = int(config.n_init)
    C = 1000 if config.domain == "continuous" else int(candidates or DEFAULT_CANDIDATES)
    K = R * N
    copies = 2 if config.algorithm == "fts" and config.fts_variant == "target" else 1  # others run T first
    seconds = copies * (K * n_init * M * M * FBO_INIT_S + T * K * (C * M * FBO_SCORE_S + M * M * FBO_POSTERIOR_S))
    per_model = 2.5 * M * M + 2 * (n_init + T) * M + 8 * C
    records = T * N * M * 4 + T * K * 2      # run 0's server rounds and the metric per iteration
    memory = 1.2 * (copies * K * per_model + records) * 8 / 1e6 + FBO_BASE_MB
    knobs = [("agents", N, FBO_USUAL["agents"], 1), ("iterations", T, FBO_USUAL["iterations"], 1),
             ("runs", R, FBO_USUAL["runs"], 1), ("features", M, FBO_USUAL["features"], 2),
             ("n_init", n_init, FBO_USUAL["n_init"], 0.5)]
    return _cost(seconds, memory, knobs)


# ---------------------------------------------------------------- DP-HYPE
# Simulation: every repetition draws n x p losses and sorts them (exact: 2000
# reps, n = 250, p = 100: 0.89 s (1.1); secure summation client by client, 500
# reps: 0.41 s (0.5)). Data mode trains every candidate on every client once per
# run (n = 100 with 1000 votes: 3.2 s (4.0); n = 500: 14 s (20); counted even
# when cached) and votes cheaply. Memory: a block of at most 2.5 M losses
# (31 MB (80)); data mode 245 MB (260) at n = 100, 839 MB (900) at n = 500.
HYPE_SIM_S = 22e-9           # per repetition x client x candidate
HYPE_SECURE_SUM_S = 40e-9
HYPE_DATA_VOTE_S = 2e-9
HYPE_TRAIN_S = 0.04          # per client and run (data mode score table)
HYPE_USUAL = dict(repetitions=2000, clients=250, candidates=100, runs=1)


def hype_cost(config) -> Cost:
    """Cost of ``run_hype(config)`` (a HypeConfig)."""
    R, n, p = int(config.repetitions), int(config.clients), int(config.p)
    per_vote = HYPE_SECURE_SUM_S if config.aggregation == "secure-sum" else (
        HYPE_SIM_S if config.mode == "simulation" else HYPE_DATA_VOTE_S)
    seconds = R * n * p * per_vote
    elements = max(2_500_000, n * p)
    memory = 40 + elements * (24 if config.aggregation == "secure-sum" else 16) / 1e6
    knobs = [("repetitions", R, HYPE_USUAL["repetitions"], 1), ("clients", n, HYPE_USUAL["clients"], 1)]
    if config.mode == "simulation":
        knobs.append(("candidates", p, HYPE_USUAL["candidates"], 1))
    else:
        runs = int(config.runs)
        seconds += runs * n * HYPE_TRAIN_S
        memory = max(memory, 100 + 1.6 * n)
        knobs.append(("runs", runs, HYPE_USUAL["runs"], 1))
    return _cost(seconds, memory, knobs)


# ---------------------------------------------------------------- PO-GP-UCB
# A GP-UCB query updates the posterior over all n inputs in O(n t); the
# baseline doubles it, a refit of the modeler's kernel every few iterations
# multiplies it by about 5, and building the task (ML fit) costs ~2 s once.
# Measured: 20 runs, T = 50, n = 10,000: 0.52 s (2.8 with the build); 5 runs,
# T = 300: 1.8 s (4.7); refit: 2.4 s (6.0). Memory: building the task peaks at
# about 116 MB (the grid's GP draw and the ML fit), the runs add 2 T n floats.
PO_PER_INPUT_S = 3e-8        # per run, input and iteration
PO_PER_INPUT_T2_S = 2e-10    # per run, input and iteration^2 (the growing Cholesky row)
PO_TASK_S = 2.0
PO_TASK_MB = 150.0
PO_INPUTS = 10_000           # the 100 x 100 grids; diabetes has 442
PO_USUAL = dict(runs=20, iterations=50)


def pogpucb_cost(config, n_inputs: int = PO_INPUTS) -> Cost:
    """Cost of ``run_pogpucb(config)`` (a PoConfig) on ``n_inputs`` inputs."""
    R, T = int(config.runs), int(config.iterations)
    methods = 2 if config.baseline else 1
    refit = 5 if config.hyperparameters == "refit" else 1
    seconds = PO_TASK_S + R * methods * refit * n_inputs * (PO_PER_INPUT_S * T + PO_PER_INPUT_T2_S * T * T)
    memory = PO_TASK_MB + 2 * T * n_inputs * 8 / 1e6
    return _cost(seconds, memory, [("runs", R, PO_USUAL["runs"], 1), ("iterations", T, PO_USUAL["iterations"], 1)])


# ---------------------------------------------------------------- sweeps
WORKER_BASE_MB = 200.0       # a worker process's own interpreter, numpy and scikit-learn


def sweep_cost(cell_costs: Sequence[Cost], workers: int = 1, *, processes: bool = False) -> Cost:
    """Cost of running cells one after another on ``workers`` workers.

    CPU seconds add up whatever the number of workers; memory is the largest
    cell once per worker (plus each worker process's own footprint with
    ``processes``).
    """
    workers = max(1, int(workers))
    seconds = sum(c.seconds for c in cell_costs)
    largest = max((c.memory_mb for c in cell_costs), default=0.0)
    memory = workers * (largest + (WORKER_BASE_MB if processes else 0.0))
    slowest = max(cell_costs, key=lambda c: c.seconds, default=None)
    biggest = max(cell_costs, key=lambda c: c.memory_mb, default=None)
    knobs = ("values", "runs", "replicates") + tuple(k for k in (slowest.knobs if slowest else ()) if k != "runs")
    memory_field = "workers" if workers > 1 else (biggest.memory_field or biggest.field if biggest else "runs")
    return Cost(seconds=seconds, memory_mb=memory, field="runs", knobs=knobs, memory_field=memory_field)


# The privacy audit prices itself with ``engine.audit.audit_cost(config)`` (its
# constants live beside the game they measure, and engine.audit imports this
# module, not the other way round); its page and CLI call ``check`` on it.

__all__ = ["Cost", "DEFAULT_MAX_MEMORY_MB", "DEFAULT_MAX_SECONDS", "HostLimits", "MEMORY_ENV", "SECONDS_ENV", "check",
           "fbo_cost", "format_seconds", "hype_cost", "pogpucb_cost", "sweep_cost"]
