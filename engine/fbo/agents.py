"""All agents of all runs as one batch: their BLR posteriors, observations and best values.

The K = R x N posteriors live in one :class:`engine.surrogate.BatchedBlr`, so an
iteration is a handful of array operations whatever N is. ``acquire`` turns
one sampled vector per agent into a query (argmax of phi(x)^T omega over the
candidate set, one matrix product for everybody).
"""

from __future__ import annotations

import numpy as np

from engine.cancel import work_slices
from engine.fbo.domain import Domain
from engine.surrogate import BatchedBlr


class AgentPool:
    """R runs x N agents, each with its own history and posterior over shared features."""

    def __init__(self, domain: Domain, noise_var: float, capacity: int):
        self.domain = domain
        self.n_runs, self.n_agents = domain.n_runs, domain.n_agents
        self.n_features = domain.features.n_features
        self.blr = BatchedBlr(self.n_runs * self.n_agents, self.n_features, noise_var, capacity)
        self.noise_std = float(domain.objective.noise_std)
        self.reference = np.asarray(domain.objective.reference, dtype=float)
        self.best = np.full((self.n_runs, self.n_agents), -np.inf)

    def initialise(self, regions: np.ndarray | None, n_init: int, rng: np.random.Generator) -> None:
        """Query ``n_init`` initial points per agent (from its sub-region, or anywhere when None).

        Many initial points are evaluated in blocks (a cancel checkpoint between
        them, and no (R, N, n_init, M) array at once); a block holds them all
        whenever they fit in a few million numbers, as usually.
        """
        choice = self.domain.initial_choice(regions, n_init, rng)
        K = self.n_runs * self.n_agents
        for part in work_slices(n_init, 4 * K * self.n_features):
            phi, values = self.domain.evaluate(choice[:, :, part])           # (R, N, n, M), (R, N, n)
            y = values + self.noise_std * rng.standard_normal(values.shape)
            n = values.shape[2]
            self.blr.add_batch(phi.reshape(K, n, self.n_features), y.reshape(K, n))
            self.best = np.maximum(self.best, values.max(axis=2))

    def query(self, choice, rng: np.random.Generator) -> None:
        """Every agent queries one point (``choice`` in the domain's representation, (R, N, ...))."""
        phi, values = self.domain.evaluate(choice)                       # (R, N, M), (R, N)
        y = values + self.noise_std * rng.standard_normal(values.shape)
        K = self.n_runs * self.n_agents
        self.blr.add(phi.reshape(K, self.n_features), y.reshape(K))
        self.best = np.maximum(self.best, values)

    def sample(self, rng: np.random.Generator, n_samples: int) -> np.ndarray:
        """Posterior draws of omega, (R, N, n_samples, M)."""
        draws = self.blr.sample(rng, n_samples)
        return draws.reshape(self.n_runs, self.n_agents, n_samples, self.n_features)

    @property
    def metric(self) -> np.ndarray:
        """reference - best noiseless value so far, (R, N); lower is better."""
        return self.reference[None, :] - self.best

    @staticmethod
    def acquire(phi_candidates: np.ndarray, omega: np.ndarray) -> np.ndarray:
        """Index of argmax_x phi(x)^T omega_n for every agent: phi (R, C, M), omega (R, N, M) -> (R, N)."""
        R, N, M = omega.shape
        out = np.empty((R, N), dtype=np.intp)
        candidates_t = np.swapaxes(phi_candidates, 1, 2)
        for part in work_slices(N, R * candidates_t.shape[2] * M):      # chunks of agents, checkpoint between
            scores = np.matmul(omega[:, part], candidates_t)              # (R, n, C): argmax over the last,
            out[:, part] = np.argmax(scores, axis=2)                      # contiguous axis is 5x faster
        return out
