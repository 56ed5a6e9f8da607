"""All agents of all runs as one batch: their observations, best values and two surrogates.

Every agent keeps two models, on purpose apart:

``own``
    Its own GP posterior (:class:`engine.surrogate.OwnGp`): an exact SE-kernel GP
    on its observations with hyperparameters fitted by marginal likelihood. Its
    Thompson samples choose the agent's own queries and never leave the agent,
    so privacy never touches them.
``shared``
    Bayesian linear regression on the run's shared random features
    (:mod:`engine.surrogate.blr`). The vector omega an agent sends to
    the server (or to another agent, in FTS) is a sample from it: this is the
    only surrogate the privacy mechanism sees. It exists only for algorithms
    that send vectors, and for the "shared features only" ablation, which also
    takes the agent's own sample from it.

The K = R x N models of each kind are stacked, so an iteration is a handful of
array operations whatever N is.

The pool also keeps every agent's query history (the points in [0, 1]^D, the
noiseless values and the observed ones, in the order queried) for the result's
best points and history. An objective that asks for it (``standardise``, a
researcher's own function) has each agent standardise its own observations
before its two surrogates see them: zero mean and unit standard deviation over
that agent's observations so far (:func:`standardised`), re-done after every
observation. Only the agent's own data enters its standardisation, and the
server's clipping bounds whatever vector it then sends, so this changes no
privacy guarantee.
"""

from __future__ import annotations

import numpy as np

from engine.cancel import checkpoint, work_slices
from engine.fbo.domain import Candidates, Domain, TableDomain
from engine.objectives.own import metric_scale
from engine.surrogate import OwnGp, SeHyperparameters
from engine.surrogate.blr import batched_blr


# A spread this small against the values' size is rounding, not signal: such an agent's values are only centred.
FLAT_SPREAD = 1e-10


def standardised(y: np.ndarray) -> np.ndarray:
    """Each row of ``y`` (K, n) centred and divided by its standard deviation (ddof 1); a row of fewer than two
    values, or whose spread is below ``FLAT_SPREAD`` of its mean's size, is only centred."""
    mean = y.mean(axis=1, keepdims=True)
    if y.shape[1] < 2:
        return y - mean
    spread = y.std(axis=1, ddof=1, keepdims=True)
    scale = np.where(spread > FLAT_SPREAD * np.abs(mean), spread, 1.0)
    return (y - mean) / scale


class AgentPool:
    """R runs x N agents with their histories, best values and surrogates.

    Parameters
    ----------
    domain : Domain
    capacity : int
        Largest number of observations per agent.
    shared_noise_var : float
        lambda of the shared-feature BLR.
    sends : bool
        Whether agents send sampled vectors (keeps the shared BLR).
    own_sampler : {"authors", "pathwise", "shared"}
        How an agent draws its own Thompson sample; "shared" uses the shared BLR.
    own_features, own_prior, refit_every
        Settings of the own GP (see :class:`engine.surrogate.OwnGp`).
    """

    def __init__(self, domain: Domain, capacity: int, *, shared_noise_var: float, sends: bool,
                 own_sampler: str = "authors", own_features: int = 100,
                 own_prior: tuple = (1.0, 0.1, 1e-6), refit_every: int = 5):
        self.domain = domain
        self.n_runs, self.n_agents = domain.n_runs, domain.n_agents
        K = self.n_runs * self.n_agents
        self.n_features = domain.features.n_features
        self.shared = None
        if sends or own_sampler == "shared":
            self.shared = batched_blr(K, self.n_features, shared_noise_var, capacity)
        self.own = None
        if own_sampler != "shared":
            self.own = OwnGp(K, domain.objective.dim, capacity, SeHyperparameters.constant(K, *own_prior),
                             refit_every=refit_every, sampler=own_sampler, n_features=own_features)
        self.noise_std = float(domain.objective.noise_std)
        self.reference = np.asarray(domain.objective.reference, dtype=float)[domain.agent_ids]
        self._metric_scale = metric_scale(domain.objective)     # -1: an own objective's best value, maximised
        self.best = np.full((self.n_runs, self.n_agents), -np.inf)
        # Every query so far (run, agent, query): its point in [0, 1]^D, its noiseless and its observed value.
        self.count = 0
        shape = (self.n_runs, self.n_agents, int(capacity))
        self.history_X = np.zeros(shape + (domain.objective.dim,))
        self.history_values = np.zeros(shape)
        self.history_y = np.zeros(shape)
        self.standardise = bool(domain.objective.standardise)
        # Table domains: which candidates each agent has queried (for the authors' repeated-query rule).
        self._visited = None
        if isinstance(domain, TableDomain):
            self._visited = np.zeros((self.n_runs, self.n_agents, len(domain.X)), dtype=bool)

    # ------------------------------------------------------------------ observations
    def _observe(self, choice, rng: np.random.Generator) -> None:
        """Evaluate ``choice`` ((R, N) or (R, N, n) points) and add the noisy values to both surrogates."""
        values = self.domain.evaluate(choice)
        y = values + self.noise_std * rng.standard_normal(values.shape)
        K = self.n_runs * self.n_agents
        batch = values.ndim == 3
        n = values.shape[2] if batch else 1
        seen = slice(self.count, self.count + n)
        coordinates = self.domain.coordinates(choice).reshape(K, n, -1)
        self.history_X[:, :, seen] = coordinates.reshape(self.n_runs, self.n_agents, n, -1)
        self.history_values[:, :, seen] = values.reshape(self.n_runs, self.n_agents, n)
        self.history_y[:, :, seen] = y.reshape(self.n_runs, self.n_agents, n)
        self.count += n
        if self.shared is not None:
            phi = self.domain.features_at(choice).reshape(K, n, self.n_features)
            self.shared.add_batch(phi, y.reshape(K, n))
            checkpoint()
        if self.own is not None:
            self.own.add_batch(coordinates, y.reshape(K, n))
        if self._visited is not None:
            index = np.asarray(choice).reshape(self.n_runs, self.n_agents, n)
            np.put_along_axis(self._visited, index, True, axis=2)
        self.best = np.maximum(self.best, values.max(axis=2) if batch else values)
        if self.standardise:
            # Each agent's values so far, standardised on its own observations, replace what its surrogates hold.
            scaled = standardised(self.history_y[:, :, :self.count].reshape(K, self.count))
            for model in (self.shared, self.own):
                if model is not None:
                    model.replace_values(scaled)

    def initialise(self, regions: np.ndarray | None, n_init: int, rng: np.random.Generator) -> None:
        """Query ``n_init`` initial points per agent (from its sub-region, or anywhere when None).

        Many initial points are observed in blocks (a cancel checkpoint between
        them, and no (R, N, n_init, M) feature array at once); one block holds
        them all whenever they fit in a few million numbers, as usually.
        """
        choice = self.domain.initial_choice(regions, n_init, rng)
        for part in work_slices(n_init, 4 * self.n_runs * self.n_agents * self.n_features):
            self._observe(choice[:, :, part], rng)

    def query(self, choice, rng: np.random.Generator) -> None:
        """Every agent queries one point (``choice`` in the domain's representation, (R, N, ...))."""
        self._observe(choice, rng)

    # ------------------------------------------------------------------ choosing
    def own_choice(self, candidates: Candidates, rng: np.random.Generator, active: np.ndarray | None = None
                   ) -> np.ndarray:
        """Every agent's argmax of a Thompson sample from its own posterior, (R, N) candidate indices.

        ``active`` (R, N) bool: only these agents use their own sample in this iteration (the
        others' entries are meaningless); None: all.
        """
        if self.own is None:
            return self.acquire(candidates.phi, self.sample_shared(rng, 1)[:, :, 0])
        flat = None if active is None else np.asarray(active).ravel()
        return self.own.argmax(rng, candidates.points, flat).reshape(self.n_runs, self.n_agents)

    def avoid_repeats(self, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Replace a candidate the agent has already queried by a random one it has not.

        The authors' agents replace a repeated query by a uniform random point of the
        domain (bayesian_optimization_dp_fts_de.py:212-215), which on their continuous
        domain is always new; on a table the analogue is a uniform draw among the
        candidates the agent has not queried yet, so a deterministic objective is never
        asked the same question twice. Continuous candidates are fresh every iteration.
        """
        if self._visited is None:
            return index
        repeated = np.take_along_axis(self._visited, index[:, :, None], axis=2)[:, :, 0]
        if repeated.any():
            runs, agents = np.nonzero(repeated)
            unvisited = ~self._visited[runs, agents]                       # (n_repeated, C)
            keys = rng.random(unvisited.shape) * unvisited               # zero on visited candidates
            index = index.copy()
            index[runs, agents] = np.argmax(keys, axis=1)
        return index

    def sample_shared(self, rng: np.random.Generator, n_samples: int) -> np.ndarray:
        """Draws of omega from the shared-feature posteriors, (R, N, n_samples, M): what agents send."""
        draws = self.shared.sample(rng, n_samples)
        return draws.reshape(self.n_runs, self.n_agents, n_samples, self.n_features)

    def history(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The first ``n`` queries of every agent: points in [0, 1]^D (R, N, n, D), noiseless values (R, N, n) and
        observed values (R, N, n), in the domain's maximised sign (copies)."""
        n = min(int(n), self.count)
        return (self.history_X[:, :, :n].copy(), self.history_values[:, :, :n].copy(),
                self.history_y[:, :, :n].copy())

    @property
    def metric(self) -> np.ndarray:
        """reference - best noiseless value so far, (R, N); lower is better (an own objective maximised without a
        known optimum: the best value itself, higher is better)."""
        metric = self.reference[None, :] - self.best
        return metric if self._metric_scale == 1.0 else self._metric_scale * metric

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
