"""What a federated BO simulation reports: one record per iteration, and the result.

The simulation is a generator of :class:`IterationRecord` so a page can redraw
every few iterations and a test can stop early; :class:`FboResult` collects
the records and turns them into the CLI's JSON and a tidy DataFrame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.fbo.config import FboConfig


@dataclass
class ServerStep:
    """Everything one server round did (for one run), for the teaching view and tests.

    Shapes: N agents, M features, P sub-regions.
    """

    vectors: np.ndarray          # (N, M) omega_{n,t} sent by the agents
    selected: np.ndarray         # (N,) bool, the subsample S_t
    clipped: np.ndarray          # (N,) bool, selected and norm > S / sqrt(P)
    clipped_vectors: np.ndarray  # (N, M) after clipping (unselected rows are the raw vectors)
    weights: object              # (P, N) phi_n^(i), each row sums to 1 (a compact RegionWeights in a run)
    signal: np.ndarray           # (P, M) sum_n in S_t phi_n^(i) / q * clipped omega_n
    noise: np.ndarray            # (P, M) Gaussian noise added (zeros without DP)
    noise_std: float             # z * phi_max * S / q (0 without DP)
    broadcast: np.ndarray        # (P, M) signal + noise, what every agent receives


def standard_error(values) -> float:
    """Standard error of the mean of independent replicates (ddof 1); NaN for fewer than two."""
    values = np.asarray(values, dtype=float).ravel()
    return float(np.std(values, ddof=1) / np.sqrt(values.size)) if values.size > 1 else float("nan")


@dataclass
class IterationRecord:
    """State after one iteration (iteration 0 = after the initial points)."""

    algorithm: str
    iteration: int
    metric: np.ndarray                      # (R, N) metric per run and agent (lower is better)
    epsilon: float | None = None            # privacy loss so far; None without DP
    released: bool = False                  # the server released a vector in this iteration
    n_selected: np.ndarray | None = None    # (R,) agents selected per run
    clipped_fraction: float | None = None   # share of selected vectors clipped, over all runs
    weights: object | None = None           # (P, N) sub-region weights of this iteration (RegionWeights: O(P + N))
    server_step: ServerStep | None = None   # the first run's server round, when one happened
    broadcast_norm: np.ndarray | None = None  # (R,) norm of each run's broadcast, when one was released
    used_broadcast: np.ndarray | None = None  # (R,) agents whose query the broadcast chose, when one was released

    @property
    def run_means(self) -> np.ndarray:
        """Mean metric over the agents of each run, (R,): the independent replicates."""
        return np.asarray(self.metric, dtype=float).mean(axis=1)

    @property
    def mean(self) -> float:
        return float(np.mean(self.metric))

    @property
    def stderr(self) -> float:
        """Standard error of :attr:`mean` over runs: the s.e. of the per-run means.

        Agents of one run share the objective draw, the random features and the
        server's broadcasts, so they are not independent replicates; runs are.
        NaN with a single run (no spread to estimate).
        """
        return standard_error(self.run_means)


@dataclass(frozen=True)
class BestPoint:
    """One query: where (``x``, (D,)), its value, and which run, agent and iteration made it (0: initial)."""

    x: np.ndarray
    value: float
    run: int
    agent: int
    iteration: int


STOP_REASONS = ("callback", "interrupted", "time limit", "error")


@dataclass
class FboResult:
    """All records of a finished (or stopped) simulation, with every agent's query history.

    Shapes: R runs, N agents, D dimensions, T iterations done, n = n_init + T queries per agent (the n_init
    initial points first, then one per iteration).

    ``X`` (R, N, n, D): every query, in the objective's own box and units (a researcher's own function) or on
    the task's [0, 1]^D; ``y`` (R, N, n): the values observed there (with the noise the run adds, if any), in
    the objective's units; ``values`` (R, N, n): the same without that noise (``y`` when the run adds none).
    ``minimise``: lower values are better (a researcher's function with ``minimise=True``).
    ``stopped``: None for a run that did all its iterations, else why it ended early: "callback" (a callback
    asked), "interrupted" (KeyboardInterrupt, Ctrl-C), "time limit" or "error" (the objective returned a bad
    value, a ConfigError, in a loop of ``iterate_fbo``); the records, history and best points are those of the
    finished iterations.
    """

    config: FboConfig
    records: list[IterationRecord] = field(default_factory=list)
    n_agents: int = 0
    delta: float | None = None
    z: float | None = None                  # the z actually used (after calibration)
    budget_reached_at: int | None = None    # iteration of the last release allowed by the budget
    wall_seconds: float = 0.0
    metric_label: str = "simple regret"
    objective: str | None = None            # the name of a researcher's own objective (None: the config's data set)
    X: np.ndarray | None = None             # (R, N, n, D)
    y: np.ndarray | None = None             # (R, N, n)
    values: np.ndarray | None = None        # (R, N, n)
    minimise: bool = False
    stopped: str | None = None

    @property
    def complete(self) -> bool:
        """Whether the run did all ``config.iterations`` iterations."""
        return self.stopped is None and len(self.records) == self.config.iterations + 1

    @property
    def iterations_done(self) -> int:
        """T done: the last finished iteration (0 after the initial points; -1 before them)."""
        return self.records[-1].iteration if self.records else -1

    @property
    def query_iteration(self) -> np.ndarray:
        """The iteration of every query, (n,): 0 for the n_init initial points, then 1, 2, ..."""
        n = 0 if self.X is None else self.X.shape[2]
        n_init = n - max(self.iterations_done, 0)
        return np.concatenate([np.zeros(n_init, dtype=int), np.arange(1, n - n_init + 1)])

    def _best_index(self) -> np.ndarray:
        """Index of each agent's best query (by the noiseless value), (R, N)."""
        if self.values is None or self.values.shape[2] == 0:
            raise ValueError("This result has no queries yet: the run stopped before its initial points.")
        return np.argmin(self.values, axis=2) if self.minimise else np.argmax(self.values, axis=2)

    @property
    def best_x(self) -> np.ndarray:
        """Each agent's best point found, (R, N, D), in the objective's units (as ``X``)."""
        index = self._best_index()
        return np.take_along_axis(self.X, index[:, :, None, None], axis=2)[:, :, 0]

    @property
    def best_value(self) -> np.ndarray:
        """Each agent's best value found (noiseless, as the curve measures it), (R, N)."""
        return np.take_along_axis(self.values, self._best_index()[:, :, None], axis=2)[:, :, 0]

    @property
    def best_iteration(self) -> np.ndarray:
        """The iteration in which each agent found its best point, (R, N) (0: one of its initial points)."""
        return self.query_iteration[self._best_index()]

    def best(self, run: int | None = None, agent: int | None = None) -> BestPoint:
        """The best query over all runs and agents (or of one ``run`` and/or ``agent``).

        With a per-agent objective each agent has its own function: compare one agent's points
        (``best(agent=a)``), or pick by your own rule from ``best_x`` and ``best_value``.
        """
        values = self.best_value
        runs = np.arange(values.shape[0]) if run is None else np.array([int(run)])
        agents = np.arange(values.shape[1]) if agent is None else np.array([int(agent)])
        block = values[np.ix_(runs, agents)]
        r, a = np.unravel_index(np.argmin(block) if self.minimise else np.argmax(block), block.shape)
        r, a = int(runs[r]), int(agents[a])
        return BestPoint(x=self.best_x[r, a].copy(), value=float(values[r, a]), run=r, agent=a,
                         iteration=int(self.best_iteration[r, a]))

    @property
    def curve(self) -> np.ndarray:
        return np.array([r.mean for r in self.records])

    @property
    def curve_stderr(self) -> np.ndarray:
        """Standard error over runs of every point of :attr:`curve` (NaN with one run)."""
        return np.array([r.stderr for r in self.records])

    @property
    def run_curves(self) -> np.ndarray:
        """Mean metric over agents per run and iteration, (R, T + 1): what comparisons pair up."""
        return np.stack([r.run_means for r in self.records], axis=1) if self.records else np.empty((0, 0))

    def per_release(self, name: str) -> np.ndarray:
        """A per-release record field (``broadcast_norm`` or ``used_broadcast``) per run, (R, releases)."""
        columns = [getattr(r, name) for r in self.records if r.released]
        return np.stack(columns, axis=1).astype(float) if columns else np.empty((self.config.runs, 0))

    @property
    def epsilon(self) -> np.ndarray | None:
        """Privacy loss after each iteration, (T + 1,) (0 after the initial points); None without DP."""
        if not self.config.is_private:
            return None
        return np.array([r.epsilon for r in self.records], dtype=float)

    @property
    def clipped_fraction(self) -> list[float | None]:
        return [r.clipped_fraction for r in self.records]

    def _best_json(self) -> dict | None:
        if self.values is None or self.values.shape[2] == 0:
            return None
        best = self.best()
        return {"x": best.x.tolist(), "value": best.value, "run": best.run, "agent": best.agent,
                "iteration": best.iteration}

    def to_json(self) -> dict:
        """The CLI's JSON object (see the headless contract in the README)."""
        config = self.config.to_dict()
        config.update(agents=self.n_agents, delta=self.delta, z=self.z if self.z is not None else self.config.z)
        if self.objective is not None:      # an own objective replaces the data set: the echo says which ran
            config.update(dataset=None, objective=self.objective)
        return {
            "algorithm": self.config.algorithm,
            "config": config,
            "message_length": self.config.message_length,
            "metric": self.metric_label,
            "curve": self.curve.tolist(),
            "curve_stderr": [v if np.isfinite(v) else None for v in self.curve_stderr.tolist()],
            "epsilon": None if self.epsilon is None else self.epsilon.tolist(),
            "delta": self.delta,
            "clipped_fraction": self.clipped_fraction,
            "n_selected": [None if r.n_selected is None else float(np.mean(r.n_selected)) for r in self.records],
            "budget_reached_at": self.budget_reached_at,
            "best": self._best_json(),
            "stopped": self.stopped,
            "wall_seconds": self.wall_seconds,
        }

    def to_frame(self) -> pd.DataFrame:
        """Tidy table: one row per run x agent x query (the n_init initial points as iteration 0).

        As in a sweep table (and the JSON), ``metric`` names what is measured (e.g. "simple regret") and
        ``utility`` holds the number after that query's iteration (lower is better, or as ``metric_label``
        says); ``x0`` ... ``x{D-1}`` are the query's point (as ``X``), ``y`` its observed value, ``epsilon``
        the privacy loss after the iteration.
        """
        if not self.records:
            return pd.DataFrame()
        R, N = self.records[0].metric.shape
        iteration = self.query_iteration
        n = len(iteration)
        utility = np.stack([r.metric for r in self.records], axis=2)[:, :, iteration]      # (R, N, n)
        epsilon = np.full(len(self.records), np.nan) if self.epsilon is None else self.epsilon
        frame = pd.DataFrame({
            "algorithm": self.config.algorithm,
            "run": np.repeat(np.arange(R), N * n),
            "agent": np.tile(np.repeat(np.arange(N), n), R),
            "iteration": np.tile(iteration, R * N),
            "query": np.tile(np.arange(n), R * N),
            "metric": self.metric_label,
            "utility": utility.ravel(),
            "epsilon": np.tile(epsilon[iteration], R * N),
        })
        for d in range(self.X.shape[3]):
            frame[f"x{d}"] = self.X[:, :, :, d].ravel()
        frame["y"] = self.y.ravel()
        return frame
