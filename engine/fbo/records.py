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


@dataclass
class FboResult:
    """All records of a finished (or stopped) simulation."""

    config: FboConfig
    records: list[IterationRecord] = field(default_factory=list)
    n_agents: int = 0
    delta: float | None = None
    z: float | None = None                  # the z actually used (after calibration)
    budget_reached_at: int | None = None    # iteration of the last release allowed by the budget
    wall_seconds: float = 0.0
    metric_label: str = "simple regret"
    objective: str | None = None            # the name of a researcher's own objective (None: the config's data set)

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
    def epsilon(self) -> list[float] | None:
        if not self.config.is_private:
            return None
        return [r.epsilon for r in self.records]

    @property
    def clipped_fraction(self) -> list[float | None]:
        return [r.clipped_fraction for r in self.records]

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
            "epsilon": self.epsilon,
            "delta": self.delta,
            "clipped_fraction": self.clipped_fraction,
            "n_selected": [None if r.n_selected is None else float(np.mean(r.n_selected)) for r in self.records],
            "budget_reached_at": self.budget_reached_at,
            "wall_seconds": self.wall_seconds,
        }

    def to_frame(self) -> pd.DataFrame:
        """Tidy table: one row per run x agent x iteration.

        As in a sweep table (and the JSON), ``metric`` names what is measured
        (e.g. "simple regret") and ``utility`` holds the number (lower is better).
        """
        frames = []
        for r in self.records:
            runs, agents = r.metric.shape
            frames.append(pd.DataFrame({
                "algorithm": self.config.algorithm,
                "run": np.repeat(np.arange(runs), agents),
                "agent": np.tile(np.arange(agents), runs),
                "iteration": r.iteration,
                "metric": self.metric_label,
                "utility": r.metric.ravel(),
                "epsilon": np.nan if r.epsilon is None else r.epsilon,
            }))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
