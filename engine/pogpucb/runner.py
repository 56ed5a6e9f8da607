"""Runs of PO-GP-UCB against non-private GP-UCB, with results the page and the CLI share.

Each run draws its own projection matrix M, its own initial rows and its own
observation noise from independent child streams of ``SeedSequence([seed,
run])``: the initial rows of run k are the same whatever r or epsilon, so
settings are compared on common random numbers, and the baseline of run k
starts from the same rows as PO-GP-UCB.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from engine.cancel import checkpoint
from engine.pogpucb.config import PoConfig
from engine.pogpucb.curator import BRANCH_PRESERVE, Release, max_admissible_r, omega, release, sigma_min
from engine.pogpucb.distortion import pair_ratios, sample_pairs
from engine.pogpucb.gp import SEHyper
from engine.pogpucb.modeler import beta, run_gp_ucb, simple_regret
from engine.pogpucb.tasks import PoTask, build_task
from engine.blas import single_threaded_blas
from engine.validation import ConfigError

PREVIEW_POINTS = 2500  # rows shown in the original-vs-released scatter
DISTORTION_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _streams(seed: int, run: int) -> tuple[np.random.Generator, ...]:
    """Independent generators (initial rows, projection, PO noise, baseline noise) for one run."""
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence([seed, run]).spawn(4))


@dataclass(frozen=True)
class CuratorSummary:
    """What Algorithm 1 decides before any run: the branch and the numbers behind it."""

    sigma_min: float
    omega: float
    branch: str
    max_admissible_r: int
    distortion_bound: float   # C' of Theorem 2
    n: int
    d: int

    @property
    def preserves(self) -> bool:
        return self.branch == BRANCH_PRESERVE


def curator_summary(config: PoConfig) -> CuratorSummary:
    """Branch, sigma_min, omega and the largest admissible r for ``config`` (no BO run)."""
    task = build_task(config.dataset, config.task_seed, config.extent)
    return summarise(task.X, config.epsilon, config.delta, config.r)


def summarise(X: np.ndarray, epsilon: float, delta: float, r: int) -> CuratorSummary:
    s = sigma_min(X)
    w = omega(r, epsilon, delta)
    branch = BRANCH_PRESERVE if s >= w else "lift"
    bound = 1.0 if s >= w else (math.inf if s == 0 else 1.0 + w**2 / s**2)
    return CuratorSummary(sigma_min=s, omega=w, branch=branch, max_admissible_r=max_admissible_r(s, epsilon, delta),
                          distortion_bound=bound, n=X.shape[0], d=X.shape[1])


def first_release(config: PoConfig) -> tuple[PoTask, Release]:
    """The task and the curator's release of run 0 (what the modeler of run 0 receives)."""
    task = build_task(config.dataset, config.task_seed, config.extent)
    _, proj, _, _ = _streams(config.seed, 0)
    return task, release(task.X, config.epsilon, config.delta, config.r, proj)


@dataclass
class PoResult:
    """Simple regrets of the runs done so far, and what the curator released."""

    config: PoConfig
    summary: CuratorSummary
    hyper: SEHyper
    regrets: np.ndarray                       # (runs_done, T) PO-GP-UCB simple regret after t = 1..T
    baseline_regrets: np.ndarray | None       # (runs_done, T) non-private GP-UCB, or None
    distortion: np.ndarray                    # |z - z'|^2 / |x - x'|^2 over sampled pairs of run 0
    preview_rows: np.ndarray                  # rows of X shown in the scatter
    preview_x: np.ndarray                     # (k, min(d, 2)) centred original inputs of those rows
    preview_z: np.ndarray                     # (k, min(r, 2)) released inputs of run 0
    preview_f: np.ndarray                     # f at those rows
    seconds: float = 0.0
    seconds_per_run: list = field(default_factory=list)
    queries: np.ndarray | None = None         # (runs_done, initial_points + T) rows of the data set PO-GP-UCB queried
    query_values: np.ndarray | None = None    # (runs_done, initial_points + T) f at those rows (noiseless)
    stopped: str | None = None                # why the runs ended early ("interrupted", "time limit")

    @property
    def best_rows(self) -> np.ndarray:
        """The row of the data set each run found best (by f, as the regret measures), (runs_done,)."""
        if self.queries is None or len(self.queries) == 0:
            return np.empty(0, dtype=int)
        return self.queries[np.arange(len(self.queries)), np.argmax(self.query_values, axis=1)]

    @property
    def best_values(self) -> np.ndarray:
        """f at :attr:`best_rows`, (runs_done,)."""
        if self.query_values is None or len(self.query_values) == 0:
            return np.empty(0)
        return self.query_values.max(axis=1)

    @property
    def runs_done(self) -> int:
        return self.regrets.shape[0]

    @property
    def complete(self) -> bool:
        return self.runs_done == self.config.runs

    @property
    def iterations(self) -> np.ndarray:
        return np.arange(1, self.config.iterations + 1)

    @staticmethod
    def _mean_se(values: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray | None]:
        if values is None or values.shape[0] == 0:
            return None, None
        mean = values.mean(0)
        if values.shape[0] < 2:
            return mean, np.zeros_like(mean)
        return mean, values.std(0, ddof=1) / math.sqrt(values.shape[0])

    @property
    def curve(self) -> np.ndarray:
        return self._mean_se(self.regrets)[0]

    @property
    def curve_stderr(self) -> np.ndarray:
        return self._mean_se(self.regrets)[1]

    @property
    def baseline_curve(self) -> np.ndarray | None:
        return self._mean_se(self.baseline_regrets)[0]

    @property
    def baseline_stderr(self) -> np.ndarray | None:
        return self._mean_se(self.baseline_regrets)[1]

    @property
    def final_regrets(self) -> np.ndarray:
        """S_T of every run done (the paper's tables report their mean)."""
        return self.regrets[:, -1]

    def to_json(self) -> dict:
        """The CLI's JSON payload (numpy values are converted by the dispatcher)."""
        cfg, s = self.config, self.summary
        quantiles = (np.quantile(self.distortion, DISTORTION_QUANTILES) if self.distortion.size
                     else np.full(len(DISTORTION_QUANTILES), np.nan))
        out = dict(
            dataset=cfg.dataset, epsilon=cfg.epsilon, log_epsilon=cfg.log_epsilon, delta=cfg.delta, r=cfg.r,
            iterations=cfg.iterations, runs=cfg.runs, runs_done=self.runs_done, seed=cfg.seed,
            initial_points=cfg.initial_points, hyperparameters=cfg.hyperparameters, n=s.n, d=s.d,
            branch=s.branch, sigma_min=s.sigma_min, omega=s.omega, max_admissible_r=s.max_admissible_r,
            distortion_bound=s.distortion_bound, delta_below_1_over_n=cfg.delta < 1.0 / s.n,
            delta_prime=cfg.delta_prime, beta_T=beta(cfg.iterations, s.n, cfg.delta_prime),
            kernel=self.hyper.as_dict(),
            curve=self.curve, curve_stderr=self.curve_stderr,
            final_regret=float(self.curve[-1]), final_stderr=float(self.curve_stderr[-1]),
            final_regrets=self.final_regrets,
            baseline_curve=self.baseline_curve, baseline_stderr=self.baseline_stderr,
            baseline_final_regret=None if self.baseline_regrets is None else float(self.baseline_curve[-1]),
            distortion_mean=float(self.distortion.mean()) if self.distortion.size else None,
            distortion_quantiles={f"q{int(q * 100):02d}": v for q, v in zip(DISTORTION_QUANTILES, quantiles)},
            seconds=self.seconds, best_rows=self.best_rows, best_values=self.best_values, stopped=self.stopped,
        )
        return out


def iter_pogpucb(config: PoConfig) -> Iterator[PoResult]:
    """Run ``config`` and yield the result so far after every run (the last one is complete).

    Parameters
    ----------
    config : PoConfig

    Yields
    ------
    PoResult
        A new object after each run, holding the regrets of all runs done.
    """
    if not isinstance(config, PoConfig):
        raise ConfigError("run_pogpucb needs a PoConfig.")
    start = time.perf_counter()
    with single_threaded_blas():
        task = build_task(config.dataset, config.task_seed, config.extent)
    if config.initial_points > task.n:
        raise ConfigError(f"initial_points must be at most the {task.n} rows of {config.dataset}, "
                          f"got {config.initial_points}.", "initial_points")
    summary = summarise(task.X, config.epsilon, config.delta, config.r)
    T = config.iterations
    regrets = np.empty((0, T))
    base = np.empty((0, T)) if config.baseline else None
    distortion = np.empty(0)
    preview = None
    per_run = []
    queries = np.empty((0, config.initial_points + T), dtype=int)
    query_values = np.empty((0, config.initial_points + T))
    refit = config.refit_every if config.hyperparameters == "refit" else 0
    for run in range(config.runs):
        checkpoint()
        run_start = time.perf_counter()
        init_rng, proj_rng, noise_rng, base_rng = _streams(config.seed, run)
        init = init_rng.choice(task.n, size=config.initial_points, replace=False)
        with single_threaded_blas():
            rel = release(task.X, config.epsilon, config.delta, config.r, proj_rng)
            trace = run_gp_ucb(rel.Z, task.f, task.noise_var, task.hyper, init, T, config.delta_prime, noise_rng,
                               refit_every=refit)
            regrets = np.vstack([regrets, simple_regret(trace, task.f_max, config.initial_points)])
            queries = np.vstack([queries, trace.queries[None, :]])
            query_values = np.vstack([query_values, trace.values[None, :]])
            if base is not None:
                btrace = run_gp_ucb(task.X, task.f, task.noise_var, task.hyper, init, T, config.delta_prime,
                                    base_rng, refit_every=refit)
                base = np.vstack([base, simple_regret(btrace, task.f_max, config.initial_points)])
        if run == 0:
            pair_rng = np.random.default_rng([config.seed, 0, 7])
            if config.distortion_pairs:
                i, j = sample_pairs(task.n, config.distortion_pairs, pair_rng)
                distortion = pair_ratios(rel.X_centred, rel.Z, i, j)
            rows = np.sort(pair_rng.choice(task.n, size=min(PREVIEW_POINTS, task.n), replace=False))
            preview = (rows, rel.X_centred[rows, :2], rel.Z[rows, :2], task.f[rows])
        per_run.append(time.perf_counter() - run_start)
        yield PoResult(config=config, summary=summary, hyper=task.hyper, regrets=regrets, baseline_regrets=base,
                       distortion=distortion, preview_rows=preview[0], preview_x=preview[1], preview_z=preview[2],
                       preview_f=preview[3], seconds=time.perf_counter() - start, seconds_per_run=list(per_run),
                       queries=queries, query_values=query_values)


def run_pogpucb(config: PoConfig) -> PoResult:
    """Run every run of ``config`` and return the complete result."""
    result = None
    for result in iter_pogpucb(config):
        pass
    return result
