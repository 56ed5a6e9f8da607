"""What a request will cost, and whether this host accepts it: the one resource model.

Every tool that starts work a visitor (or a command line) asked for turns its
configuration into a :class:`Cost` with one of the estimators below, and the
pages and the CLI call :func:`check` before starting it:

- ``fbo_cost``: a federated BO run (every line of a comparison, the teaching
  view's round), including building its objective (the synthetic GP draw, a
  real task's table when it is not cached yet, or a model trained per query on
  the continuous domain) and accounting its privacy curve;
- ``accountant_cost``: epsilon curves, single epsilons and calibrations;
- ``hype_cost`` (both modes) and ``hype_grid_cost`` (its curves and Fig. 2a);
- ``pogpucb_cost``; ``sweep_cost`` (cells, workers, shared table builds);
- ``upload_cost`` (reading a table a visitor uploads);
- the privacy audit's ``engine.audit.audit_cost``.

The refusal is a :class:`~engine.validation.ConfigError` whose field is the
knob to lower, so a page shows it under that control and the CLI prints it and
exits 2.

The host's limits (:class:`HostLimits`, from the environment):

``DPBO_MAX_SECONDS`` (120)
    estimated CPU seconds one request (one press of Run, one CLI command) may
    ask for; a run still computing after twice this (wall clock, queueing
    excluded) is stopped.
``DPBO_MAX_MEMORY_MB`` (2048)
    estimated peak memory one request may add.
``DPBO_MAX_WORKERS`` (the number of cores)
    worker processes one sweep may start.
``DPBO_MAX_RUNS`` (the number of cores)
    heavy runs computing at once on the whole server (the dashboard queues the others).
``DPBO_MAX_UPLOAD_ROWS`` (200000)
    rows of an uploaded table (its size in MB is Streamlit's ``server.maxUploadSize``).

``DPBO_MAX_SECONDS``, ``DPBO_MAX_MEMORY_MB`` and ``DPBO_MAX_UPLOAD_ROWS`` may be
``none`` for no limit; a value that is not a positive number falls back to its
default. The command line applies the time limit only when the host sets it.

Each estimate is a few terms "operations in the inner loop x seconds per
operation", with constants measured on the 2-core development machine
(numpy, single-threaded BLAS) and rounded up, so estimates lie above the
measured figures (``tests/test_limits_conservative.py`` holds a spread of
configurations to that; ``python -m benchmarks.bench_limits`` sweeps wider).
They decide refusals, not progress bars.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

from engine.cancel import CHUNK_ELEMENTS
from engine.privacy.accountants import PLD_FINE_STEPS, PLD_STEPWISE, RDP_POINTS, curve_counts, pld_point_seconds
from engine.validation import ConfigError

SECONDS_ENV = "DPBO_MAX_SECONDS"
MEMORY_ENV = "DPBO_MAX_MEMORY_MB"
WORKERS_ENV = "DPBO_MAX_WORKERS"
RUNS_ENV = "DPBO_MAX_RUNS"
UPLOAD_ROWS_ENV = "DPBO_MAX_UPLOAD_ROWS"
# Two minutes of one core per request: the largest paper preset (the landmine
# Fig. 3a sweep, 12 cells x 10 runs) is estimated at 35 s, 93 s with its table build.
DEFAULT_MAX_SECONDS = 120.0
# Two gigabytes per request: the largest preset (DP-HYPE data mode, n = 500) needs about 900 MB;
# with DPBO_MAX_RUNS runs at once a host needs about that many times this, plus the server.
DEFAULT_MAX_MEMORY_MB = 2048.0
DEFAULT_MAX_UPLOAD_ROWS = 200_000
# A running heavy request is stopped after this many times DPBO_MAX_SECONDS of wall-clock time: estimates are
# CPU seconds and conservative, so only a run slowed by a crowded machine (or mispriced) gets there.
RUN_TIME_FACTOR = 2.0
# Estimated CPU seconds a page may compute inline, without the queue of heavy runs (a curve after a run):
# more is done with fewer repetitions, or refused.
LIGHT_SECONDS = 5.0
NO_LIMIT = ("none", "off", "unlimited")

# How the sentence names a knob (config field -> words).
KNOB_NAMES = {
    "agents": "agents", "iterations": "iterations", "runs": "runs", "features": "random features M",
    "n_init": "initial points", "t": "iteration t", "repetitions": "repetitions", "clients": "clients",
    "candidates": "candidates", "workers": "workers", "values": "compared values", "replicates": "seeds per setting",
    "lines": "lines", "steps": "releases T", "domain": "domain (use the table)", "rows": "rows of the table",
    "upload": "size of the file", "accountant": "accountant (RDP is the fastest)", "trials": "number of trials",
    "dataset": "data set", "r": "projection dimension r",
}


def cores() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Cost:
    """The estimated price of a request.

    ``seconds`` is CPU time, ``memory_mb`` the peak memory the work adds.
    ``field`` is the configuration field to lower first (the knob furthest
    above its usual value); ``knobs`` lists every field that drives the cost,
    ``field`` first; ``memory_field`` is the one to lower when memory is the
    problem (default: ``field``). ``transient_mb`` is the part of ``memory_mb``
    needed only while the work computes (temporaries, a table build's workers).
    """

    seconds: float
    memory_mb: float
    field: str
    knobs: tuple[str, ...] = ()
    memory_field: str | None = None
    transient_mb: float = 0.0

    def __add__(self, other: "Cost") -> "Cost":
        """Two pieces of work held in memory together, computed in turn (e.g. the lines of one comparison):
        what each keeps adds up, the temporaries of only one are alive at a time."""
        first = self if self.seconds >= other.seconds else other
        transient = max(self.transient_mb, other.transient_mb)
        kept = (self.memory_mb - self.transient_mb) + (other.memory_mb - other.transient_mb)
        return replace(first, seconds=self.seconds + other.seconds, memory_mb=kept + transient,
                       transient_mb=transient)


@dataclass(frozen=True)
class HostLimits:
    """What one request may ask of this host (``None``: no limit)."""

    max_seconds: float | None = DEFAULT_MAX_SECONDS
    max_memory_mb: float | None = DEFAULT_MAX_MEMORY_MB
    max_workers: int | None = None          # None here means: the number of cores (see ``workers_cap``)
    max_runs: int | None = None             # heavy runs at once on the server; None: the number of cores
    max_upload_rows: int | None = DEFAULT_MAX_UPLOAD_ROWS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *,
                 default_seconds: float | None = DEFAULT_MAX_SECONDS) -> "HostLimits":
        """The limits the host set (the ``DPBO_MAX_*`` variables of the module docstring).

        A value that is not a positive number falls back to the default;
        ``none`` lifts the limit. The CLI passes ``default_seconds=None``.
        """
        environ = os.environ if environ is None else environ
        workers = _read(environ.get(WORKERS_ENV), None)
        runs = _read(environ.get(RUNS_ENV), None)
        rows = _read(environ.get(UPLOAD_ROWS_ENV), DEFAULT_MAX_UPLOAD_ROWS)
        return cls(max_seconds=_read(environ.get(SECONDS_ENV), default_seconds),
                   max_memory_mb=_read(environ.get(MEMORY_ENV), DEFAULT_MAX_MEMORY_MB),
                   max_workers=None if workers is None else max(1, int(workers)),
                   max_runs=None if runs is None else max(1, int(runs)),
                   max_upload_rows=None if rows is None else max(1, int(rows)))

    @property
    def workers_cap(self) -> int:
        """Worker processes one request may start (DPBO_MAX_WORKERS, default the number of cores)."""
        return self.max_workers or cores()

    @property
    def runs_cap(self) -> int:
        """Heavy runs computing at once on the server (DPBO_MAX_RUNS, default the number of cores)."""
        return self.max_runs or cores()

    @property
    def run_seconds(self) -> float | None:
        """Wall-clock seconds after which a running request is stopped (None: never)."""
        return None if self.max_seconds is None else RUN_TIME_FACTOR * self.max_seconds


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


def check_workers(workers: int | None, limits: HostLimits | None = None, *, field: str = "workers") -> int | None:
    """``workers`` if this host allows that many worker processes; raises ConfigError (``field``) otherwise."""
    if workers is None:
        return None
    limits = HostLimits.from_env() if limits is None else limits
    cap = limits.workers_cap
    if int(workers) > cap:
        raise ConfigError(f"This server starts at most {cap} worker processes per request, got {int(workers)}. "
                          "Lower the workers.", field)
    return int(workers)


# ---------------------------------------------------------------- privacy accounting
# Measured (CPU seconds, 2-core machine): an RDP curve converts each release count in ~0.2 ms (the moments
# accountant's own conversion in ~0.01 ms), at most RDP_POINTS of them; a PLD curve composes one release at a
# time up to PLD_STEPWISE releases (40 releases: 0.7 s, 64: 1.3 s), beyond that a bounded number of
# self-compositions (engine.privacy.accountants.CURVE_SECONDS); one PLD epsilon on the fine grid takes
# 0.15 s at 40 releases and 1.3 s at 100,000 (peak 316 MB). A calibration evaluates about 40 epsilons.
RDP_POINT_S = 4e-4
MA_POINT_S = 4e-5
PLD_STEP_S = 0.02            # per release composed one at a time, plus PLD_STEP_T_S per release so far
PLD_STEP_T_S = 6e-4
PLD_EPS_S = 0.3              # one epsilon on the fine grid, plus PLD_EPS_T_S per release
PLD_EPS_T_S = 2.5e-5
CALIBRATION_EVALS = 45
ACCOUNTANT_BASE_MB = 100.0
PLD_MB_PER_STEP = 0.004


def _curve_seconds(steps: int, accountant: str) -> float:
    if accountant == "pld":
        if steps <= PLD_STEPWISE:
            return steps * PLD_STEP_S + PLD_STEP_T_S * steps * (steps + 1) / 2
        return 2.0 * len(curve_counts(steps, "pld")) * pld_point_seconds(steps)
    return min(steps, RDP_POINTS) * (MA_POINT_S if accountant == "ma" else RDP_POINT_S) + 0.05


def _epsilon_seconds(steps: int, accountant: str) -> float:
    if accountant == "pld":
        # beyond PLD_FINE_STEPS releases PLD composes on the coarse grid (engine.privacy.make_accountant)
        return 2.0 * pld_point_seconds(steps) if steps > PLD_FINE_STEPS else PLD_EPS_S + PLD_EPS_T_S * steps
    return 0.05


def pld_noise_factor(z: float | None, power: float = 2.0) -> float:
    """How much longer PLD takes with noise multiplier ``z`` than at z = 1: its privacy loss distribution
    widens as z shrinks. Measured for one epsilon on the fine grid: z = 0.5 3 times, 0.3 7 times, 0.2 13 times
    (power 2); for a curve on the coarse grid: z = 0.5 2.2 times, 0.3 3.4 times (power 1.2)."""
    return max(1.0, 1.0 / max(float(z), 1e-3) ** power) if z is not None else 1.0


CALIBRATION_Z = 0.5      # a calibration's z is not known before it runs; PLD's is priced as if it were this


def accountant_cost(steps: int, accountants: Sequence[str] = ("rdp",), *, curve: bool = True, points: int = 1,
                    calibrations: int = 0, calibrate_steps: int | None = None, z: float | None = 1.0) -> Cost:
    """Cost of accounting ``steps`` releases with each of ``accountants`` at noise multiplier ``z``.

    ``curve``: the epsilon curve over 1..steps; ``points``: single epsilons
    at ``steps``; ``calibrations``: inverse questions (z, q or T for a target),
    each about CALIBRATION_EVALS epsilons, at up to ``calibrate_steps``
    releases (default ``steps``).
    """
    steps = max(1, int(steps))
    seconds, memory = 0.0, ACCOUNTANT_BASE_MB
    for name in accountants:
        factor = pld_noise_factor(z) if name == "pld" else 1.0
        if curve:
            seconds += (pld_noise_factor(z, 1.2) if name == "pld" else 1.0) * _curve_seconds(steps, name)
        seconds += factor * points * _epsilon_seconds(steps, name)
        if calibrations:
            largest = max(steps, int(calibrate_steps or steps))
            calibration_factor = max(factor, pld_noise_factor(CALIBRATION_Z)) if name == "pld" else 1.0
            seconds += calibration_factor * calibrations * CALIBRATION_EVALS * _epsilon_seconds(largest, name)
            steps_for_memory = largest
        else:
            steps_for_memory = steps
        if name == "pld":
            memory = max(memory, ACCOUNTANT_BASE_MB + factor * PLD_MB_PER_STEP * steps_for_memory)
    knobs = [("steps", steps, 40, 1)] + ([("accountant", 1, 1, 1)] if "pld" in accountants else [])
    return _cost(seconds, memory, knobs)


# ---------------------------------------------------------------- objectives
# Synthetic: 1000 values per agent and a few temporaries (20,000 agents: 0.71 s, 331 MB; each agent's own GP
# draw with alpha > 0 doubles both). Real tasks: building a table scores every agent on the grid (landmine
# 1.3 s per agent, digits 1.7 s, breast cancer 0.5 s of CPU, in worker processes); the continuous domain
# trains one model per query instead (landmine 61 ms, digits 9 ms, breast cancer 1.6 ms).
SYNTHETIC_AGENT_S = 6e-5
SYNTHETIC_AGENT_MB = 0.03
TABLE_AGENT_S = {"landmine": 2.0, "digits-svm": 2.5, "breast-cancer-lr": 1.0}
QUERY_S = {"landmine": 0.08, "digits-svm": 0.015, "breast-cancer-lr": 0.003, "synthetic": 2e-7}
TABLE_BUILD_MB = 400.0       # two worker processes with the task's data


def objective_cost(dataset: str, n_agents: int, *, alpha: float | None = None, domain: str = "table",
                   table_ready: bool = False) -> Cost:
    """Cost of building the objective of ``dataset`` for ``n_agents`` agents (tables: only when not cached)."""
    N = int(n_agents)
    if dataset == "synthetic":
        factor = 2.0 if alpha else 1.0
        seconds, memory = factor * N * SYNTHETIC_AGENT_S, factor * N * SYNTHETIC_AGENT_MB
    elif domain == "table" and not table_ready:
        seconds, memory = N * TABLE_AGENT_S.get(dataset, 3.0), TABLE_BUILD_MB
    else:
        seconds, memory = 0.0, 0.0
    return _cost(seconds, memory, [("agents", N, 200, 1)])


# ---------------------------------------------------------------- federated BO
# Per iteration every one of the K = runs x agents shared-feature posteriors is sampled and
# updated (~M^2 each) and scores the C candidates (K C M multiply-adds);
# initialisation adds n_init observations per posterior. Measured CPU seconds
# (estimate): N = 50, T = 30, 3 runs, M = 50: 0.10 (0.16); N = 200, T = 40,
# 5 runs: 0.86 (1.4); M = 800: 11.3 (13.8); landmine 29 x 60, 10 runs,
# M = 100: 1.6 (2.8). Peak memory MB: 15 (39), 118 (211), 1605 (2464), 130 (181).
FBO_SCORE_S = 0.65e-9        # per K x C x M
FBO_POSTERIOR_S = 4.5e-9     # per K x M^2 and iteration
FBO_INIT_S = 2e-9            # per K x n_init x M^2
FBO_BASE_MB = 25.0
# Each agent's own GP (engine.surrogate.thompson.OwnGp; not with own_sampler "shared"): per iteration and
# model a Thompson sample of F fresh features scored on the C candidates (C F), the n x n Gram matrix of
# the n = n_init + T observations on them (n^2 F) and its Cholesky (n^3); every refit_every observations
# a marginal-likelihood fit (a few n x n Choleskys). Measured CPU seconds per model and iteration (this
# estimate): n = 40, F = 100: 6e-5 (9e-5); n = 210: 4.2e-4 (8.7e-4); n = 505: 4.8e-3 (4.8e-3); n = 1005:
# 1.9e-2 (1.9e-2); F = 1000: 8.3e-4 (8.9e-4); landmine (C = 2500, refits): 2.6e-4 (4.4e-4); all x 1.5 below.
# Memory: the K x n x n distances (and, pathwise, the inverse) plus chunks of 512 models' n x n
# temporaries: K = 100, n = 1005: 1.7 GB (2.4 GB); n = 505: 475 MB (610 MB).
OWN_OVERHEAD_S = 4e-5        # per model and iteration and 100 features
OWN_CANDIDATE_S = 3e-10      # per C x F beyond the overhead (tables are grids: engine.surrogate.candidates)
OWN_GRAM_S = 1.84e-10        # per n^2 F
OWN_CHOLESKY_S = 3.4e-13     # per n^3
OWN_FIT_S = 2.5e-4           # per model and fit, plus OWN_FIT_CUBE_S n^3
OWN_FIT_CUBE_S = 5e-10
FIRST_FIT_COST = 4             # the first fit takes FIRST_FIT_STEPS = 4 steps, a refit one
OWN_MARGIN = 1.5
OWN_CHUNK = 512              # engine.surrogate.thompson SOLVE_CHUNK and FIT_CHUNK
OWN_BASE_MB = 40.0           # the models' small arrays and the fit's temporaries at a few observations
DEFAULT_CANDIDATES = 4096    # the largest table (16^3 in 3-D) when the objective is not built yet
CANDIDATES = {"synthetic": 1000, "landmine": 2500, "digits-svm": 2500, "breast-cancer-lr": 4096}
FBO_USUAL = dict(agents=200, iterations=40, runs=5, features=50, n_init=10)


def fbo_cost(config, n_agents: int, candidates: int | None = None, *, objective: Cost | None = None,
             accounting: bool = True) -> Cost:
    """Cost of a federated BO run of ``config`` (an FboConfig) with ``n_agents`` agents.

    ``candidates``: size of the objective's candidate set (the continuous
    domain draws 1000 per iteration); unknown: :data:`DEFAULT_CANDIDATES`.
    ``objective``: the cost of building the objective (default: as
    :func:`objective_cost` prices it when no table is cached). ``accounting``:
    include the privacy curve of a private algorithm.
    """
    N, R, T, M = int(n_agents), int(config.runs), int(config.iterations), int(config.features)
    n_init = int(config.n_init)
    C = 1000 if config.domain == "continuous" else int(candidates or CANDIDATES.get(config.dataset,
                                                                                   DEFAULT_CANDIDATES))
    K = R * N
    copies = 2 if config.algorithm == "fts" and config.fts_variant == "target" else 1  # others run T first
    seconds = copies * (K * n_init * M * M * FBO_INIT_S + T * K * (C * M * FBO_SCORE_S + M * M * FBO_POSTERIOR_S))
    if config.domain == "continuous":
        # every query trains the task's model (or interpolates the synthetic table)
        seconds += copies * K * (n_init + T) * QUERY_S.get(config.dataset, 0.1)
    # Each posterior: Sigma^-1 (M^2), its feature history and the initial points' features (2 (n_init + T) M)
    # and a few vectors; batched temporaries come in chunks of CHUNK_ELEMENTS (engine.cancel.work_slices).
    per_model = 1.2 * M * M + 2 * (n_init + T) * M + 8 * M
    records = T * N * M * 4 + T * K * 2      # run 0's server rounds and the metric per iteration
    features = R * C * M                     # every candidate's features, computed once per run (tables)
    chunks = 6 * CHUNK_ELEMENTS if K * M * M > CHUNK_ELEMENTS else 0
    memory = 1.2 * (copies * K * per_model + records + features + chunks) * 8 / 1e6 + FBO_BASE_MB
    transient = 1.2 * chunks * 8 / 1e6 + FBO_BASE_MB
    own_seconds, own_mb, own_transient = own_gp_cost(config, K, C)
    seconds += copies * own_seconds
    memory += copies * own_mb
    transient += copies * own_transient
    if objective is None:
        objective = objective_cost(config.dataset, N, alpha=config.alpha, domain=config.domain)
    seconds += objective.seconds
    memory += objective.memory_mb
    transient += objective.memory_mb         # a table build's workers exit; a built objective is shared
    if accounting and config.is_private:
        seconds += accountant_cost(T, (config.accountant,), points=2 if config.budget is not None else 1,
                                   calibrations=1 if config.calibrate_z else 0, z=config.z).seconds
    knobs = [("agents", N, FBO_USUAL["agents"], 1), ("iterations", T, FBO_USUAL["iterations"], 1),
             ("runs", R, FBO_USUAL["runs"], 1), ("features", M, FBO_USUAL["features"], 2),
             ("n_init", n_init, FBO_USUAL["n_init"], 0.5)]
    if config.domain == "continuous" and config.dataset != "synthetic":
        knobs.insert(0, ("domain", 1000, 1, 1))
    return _cost(seconds, memory, knobs, transient_mb=min(transient, memory))


def _sum_of_squares(m: int) -> float:
    return m * (m + 1) * (2 * m + 1) / 6 if m > 0 else 0.0


def _sum_of_cubes(m: int) -> float:
    return (m * (m + 1) / 2) ** 2 if m > 0 else 0.0


def own_gp_cost(config, K: int, C: int) -> tuple[float, float, float]:
    """(CPU seconds, MB, MB of temporaries) of the K agents' own GPs over a run of ``config`` (an FboConfig)
    with C candidates."""
    if config.own_sampler == "shared":
        return 0.0, 0.0, 0.0
    T, F, n = int(config.iterations), int(config.own_features), int(config.n_init) + int(config.iterations)
    refit = config.refit_every
    if refit is None:       # the task's own period: 5 on the real tasks, never on synthetic (engine.objectives)
        refit = 0 if config.dataset == "synthetic" else 5
    # Observations grow from n_init to n over the run: the time follows the mean of n^2 and n^3 over the
    # iterations, the memory the largest n.
    low, values = int(config.n_init) - 1, T + 1
    square = (_sum_of_squares(n) - _sum_of_squares(low)) / values
    cube = (_sum_of_cubes(n) - _sum_of_cubes(low)) / values
    per_iteration = (OWN_OVERHEAD_S * max(1.0, F / 100) + OWN_CANDIDATE_S * C * F + OWN_GRAM_S * square * F
                     + OWN_CHOLESKY_S * cube)
    fits = (FIRST_FIT_COST + T // int(refit)) if refit else 0
    seconds = OWN_MARGIN * K * (T * per_iteration + fits * (OWN_FIT_S + OWN_FIT_CUBE_S * cube))
    matrices = 2 if config.own_sampler == "pathwise" else 1
    chunk = min(K, OWN_CHUNK) * (2 * n * n + 3 * n * F)
    transient_mb = OWN_BASE_MB + 1.2 * chunk * 8 / 1e6
    return seconds, transient_mb + 1.2 * (matrices * K * n * n + K * n * 4) * 8 / 1e6, transient_mb


# ---------------------------------------------------------------- DP-HYPE
# Simulation: every repetition draws n x p losses and sorts them (exact: 2000
# reps, n = 250, p = 100: 0.90 s (1.5); p = 1000: 10.8 s (15); secure summation
# client by client, 500 reps: 0.53 s (0.75)). Data mode trains every candidate on every client once per
# run (n = 100 with 1000 votes: 3.2 s (4.0); n = 500: 14 s (20); counted even
# when cached) and votes cheaply. Memory: a block of at most 2.5 M losses
# (31 MB (80)); data mode 245 MB (260) at n = 100, 839 MB (900) at n = 500.
HYPE_SIM_S = 30e-9           # per repetition x client x candidate
HYPE_SECURE_SUM_S = 60e-9
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


HYPE_POINT_S = 1e-7          # per repetition, grid point and candidate: the noisy argmax and the bound


def hype_grid_cost(config, points: int, sigma_losses: int = 1) -> Cost:
    """Cost of ``evaluate_grid`` over ``points`` (k, noise) pairs and ``sigma_losses`` loss spreads.

    The points share each block's losses and sorts (common random numbers);
    data mode reads the score tables of the run it follows (in memory).
    """
    R, n, p = int(config.repetitions), int(config.clients), int(config.p)
    S = max(1, int(sigma_losses))
    per_vote = HYPE_SIM_S if config.mode == "simulation" else HYPE_DATA_VOTE_S
    seconds = R * (S * n * p * per_vote + S * int(points) * p * HYPE_POINT_S * 10)
    memory = 40 + max(2_500_000, n * p) * 16 * S / 1e6
    return _cost(seconds, memory, [("repetitions", R, HYPE_USUAL["repetitions"], 1),
                                   ("clients", n, HYPE_USUAL["clients"], 1),
                                   ("candidates", p, HYPE_USUAL["candidates"], 1)])


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


# ---------------------------------------------------------------- uploads
# Reading a CSV runs at about 30 MB/s (Parquet faster) and needs a few times the file in memory; summarising
# a sweep table (one point per setting, the Pareto front, the figures) is about 20 us per row (50,000 rows:
# 0.37 s, estimated 1.3 s).
UPLOAD_BYTE_S = 4e-8
UPLOAD_ROW_S = 4e-5
UPLOAD_MEMORY_FACTOR = 8.0


def upload_cost(n_bytes: int, rows: int | None = None) -> Cost:
    """Cost of reading and summarising an uploaded table of ``n_bytes`` (``rows`` when known)."""
    rows = int(rows) if rows is not None else int(n_bytes) // 40
    seconds = 0.3 + int(n_bytes) * UPLOAD_BYTE_S + rows * UPLOAD_ROW_S
    memory = 60 + UPLOAD_MEMORY_FACTOR * int(n_bytes) / 1e6
    return _cost(seconds, memory, [("upload", n_bytes, 1e6, 1), ("rows", rows, 10_000, 1)])


def check_rows(rows: int, limits: HostLimits | None = None, *, what: str = "The table") -> int:
    """``rows`` if an uploaded table may have that many rows here; raises ConfigError ("rows") otherwise."""
    limits = HostLimits.from_env() if limits is None else limits
    if limits.max_upload_rows is not None and int(rows) > limits.max_upload_rows:
        raise ConfigError(f"{what} has more than {limits.max_upload_rows:,} rows, the most this server reads; "
                          "upload a smaller table.", "rows")
    return int(rows)


# The privacy audit prices itself with ``engine.audit.audit_cost(config)`` (its
# constants live beside the game they measure, and engine.audit imports this
# module, not the other way round); its page and CLI call ``check`` on it.

__all__ = ["Cost", "DEFAULT_MAX_MEMORY_MB", "DEFAULT_MAX_SECONDS", "HostLimits", "MEMORY_ENV", "SECONDS_ENV",
           "accountant_cost", "check", "check_rows", "check_workers", "fbo_cost", "format_seconds", "hype_cost",
           "hype_grid_cost", "objective_cost", "pogpucb_cost", "sweep_cost", "upload_cost"]
