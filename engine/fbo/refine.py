"""The authors' query optimiser on the continuous box: an ablation of our argmax over a fixed table.

Our agents take the argmax of their Thompson sample over the task's candidate table (on landmine, the 50 x 50
grid of (C, gamma)). The authors' agents maximise the sample over the continuous box with ``acq_max``
(helper_funcs_dp_fts_de.py:7-33): the best of 1000 uniform points, then L-BFGS-B from 20 uniform starts
(lines 22-31), keeping the best value found; App. B.2.6 describes the same for the real-world tasks. Their
model is then trained at the point found.

:class:`RefinedSimulation` does this on a continuous objective (a :class:`~engine.objectives.base.FunctionObjective`,
which trains the model at every queried point). The domain's 1000 uniform points are scored with each agent's
sample (the simulation's own argmax), L-BFGS-B refines the sample from its ``STARTS`` best points, and the agent
queries the best point found. Where the authors start 20 local searches anywhere, ours start from the best of the
1000 points (local search from points already known to be good: a deviation that can only find a better maximum
per local search, chosen for its cost). The samples are the ones the agents draw anyway:

- an agent's own sample, the authors' sampler: sqrt(v) phi(x)^T omega over fresh random features, with every
  feature vector normalised (engine.surrogate.thompson);
- the server's broadcast: phi(x)^T omega^(i[x]) over the shared, normalised features, where the vector is that
  of x's sub-region. The authors clip x to the box and look its sub-region up at every evaluation (lines
  51-80), so their L-BFGS-B may cross a sub-region's edge, where the sample jumps; here each start stays in
  its own sub-region (bounds), where the sample is smooth.

All problems of an iteration (runs x agents x starts) are solved together as one separable problem by SciPy's
L-BFGS-B with the exact gradient (the authors' code differentiates numerically, one problem at a time). A shared
line search may move a single problem downhill, so every start and every end is re-evaluated and the best is
kept: the point found is never worse than the best of the 1000. Only the query optimiser changes: the
simulation draws the same random numbers.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import Bounds, minimize

from engine.fbo.simulation import Simulation
from engine.validation import ConfigError

STARTS = 5              # L-BFGS-B starts per agent: its sample's best 5 of the 1000 uniform points
MAX_ITERATIONS = 200


def normalised_rff(x: np.ndarray, freq: np.ndarray, phase: np.ndarray, weight: np.ndarray, scale: np.ndarray):
    """scale sum_m w_m cos(a_m) / sqrt(sum_m cos^2(a_m)), a = freq x + phase, and its gradient in x.

    ``x`` (K, S, D) points (S per problem), ``freq`` (K, M, D), ``phase`` (K, M), ``weight`` (K, S, M) (each
    point's own vector), ``scale`` (K,). Returns values (K, S) and gradients (K, S, D).
    """
    angle = np.matmul(x, np.swapaxes(freq, 1, 2))
    angle += phase[:, None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    u = np.einsum("ksm,ksm->ks", cos, weight)
    norm_sq = np.einsum("ksm,ksm->ks", cos, cos)
    norm = np.sqrt(norm_sq)
    du = -np.matmul(sin * weight, freq)
    dnorm_sq = -2.0 * np.matmul(cos * sin, freq)
    value = scale[:, None] * u / norm
    grad = scale[:, None, None] * (du / norm[..., None] - (u / (2.0 * norm_sq * norm))[..., None] * dnorm_sq)
    return value, grad


def maximise(function, starts: np.ndarray, lo: np.ndarray, hi: np.ndarray, value=None) -> np.ndarray:
    """The best point per problem: L-BFGS-B from every start within [lo, hi], the best of all starts and ends.

    ``function(x (K, S, D)) -> (values (K, S), gradients (K, S, D))``; ``starts``, ``lo``, ``hi`` (K, S, D).
    ``value(x (K, S', D)) -> (K, S')`` scores the starts and ends to keep the best (default: ``function``'s
    values). Returns (K, D).
    """
    shape = starts.shape

    def negative(flat):
        values, grads = function(flat.reshape(shape))
        return -float(values.sum()), -grads.ravel()

    found = minimize(negative, starts.ravel(), jac=True, method="L-BFGS-B",
                     bounds=Bounds(lo.ravel(), hi.ravel()),
                     options=dict(maxiter=MAX_ITERATIONS, ftol=1e-15, gtol=1e-9))
    ends = np.clip(found.x.reshape(shape), lo, hi)
    points = np.concatenate([starts, ends], axis=1)                       # (K, 2S, D)
    values = function(points)[0] if value is None else value(points)
    best = np.argmax(values, axis=1)
    return points[np.arange(shape[0]), best]


class RefinedSimulation(Simulation):
    """A :class:`Simulation` whose agents maximise their samples the authors' way (continuous objectives only)."""

    def __init__(self, config, objective=None):
        super().__init__(config, objective)
        if self.objective.is_discrete:
            raise ConfigError("The authors' query optimiser needs a continuous objective (domain 'continuous').")
        if config.own_sampler != "authors":
            raise ConfigError("The authors' query optimiser refines the authors' own sampler only.")
        if config.in_target_setting or (config.algorithm == "fts" and config.fts_variant == "concurrent"):
            raise ConfigError("The authors' query optimiser covers TS, FTS-DE and DP-FTS-DE.")

    def _agent_pool(self, sends, domain=None, capacity=None):
        pool = super()._agent_pool(sends, domain, capacity)
        if pool.own is not None:
            pool.own.keep_best = STARTS
        return pool

    def _choice(self, candidates, index, use_other, step, t):
        R, N, D = self.config.runs, self.pool.n_agents, self.objective.dim
        chosen = candidates.X[index].copy()                                  # (R, N, D): the best tries
        own = ~use_other
        if own.any():
            sample = self.pool.own.last_sample
            models = sample["models"]                                        # the flat (run, agent) of each
            rows = np.flatnonzero(own.ravel())
            position = np.searchsorted(models, rows)
            freq, phase = sample["freq"][position], sample["phase"][position]
            weight, scale = sample["weights"][position], sample["scale"][position]
            x0 = candidates.X[sample["best"][rows]]                          # (B, STARTS, D)

            def own_sample(x):
                each = np.broadcast_to(weight[:, None, :], x.shape[:2] + weight.shape[1:])    # one vector per agent
                return normalised_rff(x, freq, phase, each, scale)

            chosen.reshape(R * N, D)[rows] = maximise(own_sample, x0, np.zeros_like(x0), np.ones_like(x0))
        if use_other.any():
            runs, agents = np.nonzero(use_other)
            features = self.domain.features
            if not features.normalised:
                raise ConfigError("The authors' query optimiser expects normalised shared features.")
            # Every run's broadcast at every candidate (each candidate scored with its own sub-region's vector,
            # as the simulation's argmax does), and the best STARTS of them.
            scores = np.einsum("rcm,rcm->rc", step.broadcast[:, candidates.region, :], candidates.phi)
            best = np.argpartition(scores, -STARTS, axis=1)[:, -STARTS:]        # (R, STARTS)
            x0 = candidates.X[best[runs]]                                        # (B, STARTS, D)
            regions = self.subregions.index(x0)
            lo, hi = self.subregions.bounds(regions)
            freq, phase = np.swapaxes(features.W, 1, 2)[runs], features.b[runs]  # (B, M, D), (B, M)
            scale = np.ones(len(runs))

            def broadcast_sample(x, regions=regions):
                # Each start's own sub-region's vector while it is refined; a point's own at the end (a point on
                # a shared edge belongs to the upper box, Subregions.index).
                return normalised_rff(x, freq, phase, step.broadcast[runs[:, None], regions], scale)

            chosen[runs, agents] = maximise(broadcast_sample, x0, lo, hi,
                                            value=lambda x: broadcast_sample(x, self.subregions.index(x))[0])
        return chosen


# The refinement's CPU per agent and iteration (STARTS starts, M = 100 features, D = 2), measured by
# benchmarks/bench_refine.py on the development machine, rounded up; the queries' model training is priced
# apart (the data set's query_seconds, engine.limits.fbo).
REFINE_AGENT_ITERATION_S = 4e-3


def refine_seconds(config, n_agents: int) -> float:
    """CPU seconds the refinement adds to a run of ``config`` with ``n_agents`` agents."""
    return float(config.runs) * int(n_agents) * int(config.iterations) * REFINE_AGENT_ITERATION_S


def refined_cost(config, refine: bool = True):
    """The one gate's price of a run of ``config`` (its objective apart), with the refinement's seconds when
    ``refine`` (every query's training is in the continuous domain's own price)."""
    from dataclasses import replace

    from engine.fbo.plan import resolve_agents
    from engine.limits import Cost, fbo_cost

    agents = resolve_agents(config)
    price = fbo_cost(config, agents, objective=Cost(0.0, 0.0, "runs"))
    return replace(price, seconds=price.seconds + refine_seconds(config, agents)) if refine else price
