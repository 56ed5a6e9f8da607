"""One DP-FTS-DE agent as a Flower client runs it (Algorithm 2 of the paper, one agent at a time).

The agent owns an objective behind one hook, ``evaluate(x) -> float`` (x a
point of [0, 1]^D, larger is better; the value may be noisy). It keeps its
own observations and, every round:

1. with probability 1 - p_t queries the argmax over fresh candidates of
   phi(x)^T omega^(i[x]) of the server's broadcast (its sub-region's vector),
   otherwise the argmax of a Thompson sample from its own exact GP posterior;
2. evaluates that point through the hook;
3. sends omega_n, a draw from the Bayesian linear regression posterior on the
   run's shared random features (the engine's :class:`engine.surrogate.BatchedBlr`).

The shared features come from ``sample_features`` seeded by the run's seed,
so every agent and the server agree on them without sending them. The
agent's state is two arrays (X, y) that a Flower ``Context`` keeps between
rounds (Flower re-creates a ClientApp for every message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.fbo.schedules import one_minus_pt
from engine.fbo.subregions import Subregions
from engine.surrogate.blr import BatchedBlr
from engine.surrogate.rff import RandomFeatures, sample_features

Evaluate = Callable[[np.ndarray], float]
FEATURE_STREAM = 7     # the shared features are drawn from default_rng((seed, FEATURE_STREAM))


def shared_features(seed: int, dim: int, n_features: int, lengthscale: float) -> RandomFeatures:
    """The run's shared random features (one set), the same on every agent and the server."""
    return sample_features(1, dim, n_features, lengthscale, np.random.default_rng((int(seed), FEATURE_STREAM)))


@dataclass
class AgentSettings:
    """What an agent needs from the run config."""

    dim: int = 1
    features: int = 50
    lengthscale: float = 0.03
    noise_var: float = 0.01
    P: int = 2
    n_init: int = 10
    candidates: int = 256
    pt_schedule: str = "sqrt"
    pt_constant: float = 0.5
    local_exploration: bool = True
    own_lengthscale: float = 0.03
    own_signal_var: float = 1.0
    own_noise_var: float = 0.01
    seed: int = 0


DE_ALGORITHMS = ("fts-de", "dp-fts-de")     # the algorithms with sub-regions (FboConfig.uses_de)


def agent_settings(settings: dict) -> dict:
    """The :class:`AgentSettings` fields of a DP-FTS-DE run's settings (:func:`engine.flower.run_config.run_settings`).

    Read from the run config alone, without :class:`engine.fbo.FboConfig`: the export wrote a validated
    configuration, the ServerApp validates it again, and a client process (one per message) is spared the
    accountants' imports. ``tests/test_flower.py`` checks the result against FboConfig's.
    """
    defaults = AgentSettings()
    lengthscale = float(settings.get("lengthscale", defaults.lengthscale))
    noise_var = float(settings.get("noise_var", defaults.noise_var))
    P = int(settings.get("P", 1)) if settings.get("algorithm", "dp-fts-de") in DE_ALGORITHMS else 1
    return dict(dim=int(settings.get("dim", defaults.dim)), features=int(settings.get("features", defaults.features)),
                lengthscale=lengthscale, noise_var=noise_var, P=P, n_init=int(settings.get("n_init", defaults.n_init)),
                candidates=int(settings.get("candidates", defaults.candidates)),
                pt_schedule=str(settings.get("pt_schedule", defaults.pt_schedule)),
                pt_constant=float(settings.get("pt_constant", defaults.pt_constant)),
                local_exploration=bool(settings.get("local_exploration", defaults.local_exploration)),
                own_lengthscale=lengthscale, own_signal_var=1.0, own_noise_var=noise_var,
                seed=int(settings.get("seed", defaults.seed)))


class FboAgent:
    """Agent ``index`` of a run: its observations, its own GP Thompson sampler and its shared-feature BLR."""

    def __init__(self, index: int, settings: AgentSettings, evaluate: Evaluate,
                 X: np.ndarray | None = None, y: np.ndarray | None = None):
        self.index = int(index)
        self.settings = s = settings
        self.evaluate = evaluate
        self.features = shared_features(s.seed, s.dim, s.features, s.lengthscale)
        self.subregions = Subregions(s.P, s.dim)
        self.region = int(self.subregions.assign(self.index + 1)[self.index])
        self.X = np.zeros((0, s.dim)) if X is None else np.asarray(X, dtype=float).reshape(-1, s.dim)
        self.y = np.zeros(0) if y is None else np.asarray(y, dtype=float).ravel()

    # ------------------------------------------------------------------ observations
    def observe(self, points: np.ndarray) -> None:
        points = np.atleast_2d(np.asarray(points, dtype=float))
        values = np.array([float(self.evaluate(x)) for x in points])
        self.X = np.vstack([self.X, points])
        self.y = np.concatenate([self.y, values])

    def initialise(self, rng: np.random.Generator) -> None:
        """n_init points uniform in the agent's sub-region (the whole domain without local exploration)."""
        s = self.settings
        if s.local_exploration and s.P > 1:
            points = self.subregions.sample_points(np.array(self.region), s.n_init, rng)
        else:
            points = rng.random((s.n_init, s.dim))
        self.observe(points)

    # ------------------------------------------------------------------ choosing
    def own_choice(self, candidates: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Argmax over ``candidates`` of one Thompson sample from the agent's exact SE-kernel GP."""
        s = self.settings
        ell2 = s.own_lengthscale ** 2

        def kernel(A, B):
            d = ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2)
            return s.own_signal_var * np.exp(-0.5 * d / ell2)

        K = kernel(self.X, self.X) + s.own_noise_var * np.eye(len(self.y))
        Ks = kernel(self.X, candidates)
        L = np.linalg.cholesky(K)
        alpha = np.linalg.solve(L.T, np.linalg.solve(L, self.y - self.y.mean()))
        V = np.linalg.solve(L, Ks)
        mean = self.y.mean() + Ks.T @ alpha
        cov = kernel(candidates, candidates) - V.T @ V
        jitter = 1e-8 * s.own_signal_var
        while True:
            try:
                root = np.linalg.cholesky(cov + jitter * np.eye(len(candidates)))
                break
            except np.linalg.LinAlgError:
                jitter *= 10
        sample = mean + root @ rng.standard_normal(len(candidates))
        return candidates[int(np.argmax(sample))]

    def broadcast_choice(self, candidates: np.ndarray, broadcast: np.ndarray) -> np.ndarray:
        """argmax_x phi(x)^T omega^(i[x]) over ``candidates``: each scored with its own sub-region's vector."""
        phi = self.features(candidates)[0]                               # (C, M)
        region = self.subregions.index(candidates)                       # (C,)
        scores = np.einsum("cm,cm->c", phi, np.asarray(broadcast)[region])
        return candidates[int(np.argmax(scores))]

    def omega(self, rng: np.random.Generator) -> np.ndarray:
        """The vector the agent sends: one draw from its BLR posterior on the shared features, (M,)."""
        s = self.settings
        blr = BatchedBlr(1, s.features, s.noise_var, max(1, len(self.y)))
        blr.add_batch(self.features(self.X)[0][None], self.y[None])
        return blr.sample(rng, 1)[0, 0]

    # ------------------------------------------------------------------ one round
    def round(self, t: int, broadcast: np.ndarray | None, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
        """Iteration ``t`` (0: initialisation). Returns (omega to send, whether the broadcast chose the query)."""
        s = self.settings
        used = False
        if t == 0 or len(self.y) == 0:
            self.initialise(rng)
        else:
            candidates = rng.random((s.candidates, s.dim))
            used = broadcast is not None and rng.random() < one_minus_pt(s.pt_schedule, t, constant=s.pt_constant)
            choice = self.broadcast_choice(candidates, broadcast) if used else self.own_choice(candidates, rng)
            self.observe(choice[None])
        return self.omega(rng), bool(used)

    @property
    def best(self) -> float:
        return float(self.y.max()) if len(self.y) else -np.inf
