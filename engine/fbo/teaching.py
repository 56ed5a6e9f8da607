"""One server round of DP-FTS-DE, opened up: what the teaching view shows step by step.

A short real run on the paper's synthetic task (one run, 1-D, so every
vector can be drawn as a function) is stopped at iteration t, and the server
round used in that iteration is returned with everything needed to explain
it: the agents' vectors, who was picked and clipped, the weights, the signal
and the noise, and the broadcast vectors turned back into functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.fbo.config import FboConfig
from engine.fbo.plan import resolve_agents
from engine.fbo.simulation import Simulation
from engine.fbo.subregions import Subregions
from engine.fbo.weights import region_weights
from engine.validation import check_int

MAX_ROUND = 40


@dataclass(frozen=True)
class ServerRound:
    """The server round used in iteration t of run 0 (arrays of the first run)."""

    vectors: np.ndarray          # (N, M) the omegas the agents sent
    selected: np.ndarray         # (N,) picked this round
    clipped: np.ndarray          # (N,) clipped (among the picked)
    clipped_vectors: np.ndarray  # (N, M) after clipping to S / sqrt(P)
    weights: object              # (P, N) phi_n^(i), compact (engine.fbo.weights.RegionWeights)
    signal: np.ndarray           # (P, M) weighted sums before noise
    noise: np.ndarray            # (P, M) the noise added
    noise_std: float             # z phi_max S / q
    broadcast: np.ndarray        # (P, M) signal + noise
    assignment: np.ndarray       # (N,) each agent's sub-region
    x: np.ndarray                # (C,) the candidate grid
    clean_f: np.ndarray          # (P, C) signal turned into functions
    noisy_f: np.ndarray          # (P, C) broadcast turned into functions
    bounds: list                 # [(low, high)] of every sub-region
    truth: np.ndarray            # (C,) the agents' mean objective
    threshold: float             # S / sqrt(P)


def teaching_config(agents: int, P: int, t: int, q: float, z: float, S: float, seed: int) -> FboConfig:
    """The run behind the teaching view; raises ConfigError naming the field."""
    t = check_int("t", t, 1, MAX_ROUND, name="iteration t")
    return FboConfig(algorithm="dp-fts-de", dataset="synthetic", agents=agents, iterations=t, runs=1, P=P, q=q, z=z,
                     S=S, seed=seed)


def server_round(config: FboConfig) -> ServerRound:
    """Run ``config`` to its last iteration and return the server round used in it (run 0)."""
    sim = Simulation(config)
    record = None
    for record in sim:
        pass
    step = record.server_step
    phi = sim.domain.phi[0]                         # (C, M) features of the candidate grid, run 0
    lows, highs = sim.subregions.bounds(np.arange(sim.P))
    return ServerRound(vectors=step.vectors, selected=step.selected, clipped=step.clipped,
                       clipped_vectors=step.clipped_vectors, weights=step.weights, signal=step.signal,
                       noise=step.noise, noise_std=step.noise_std, broadcast=step.broadcast,
                       assignment=sim.assignment, x=sim.domain.X[:, 0], clean_f=step.signal @ phi.T,
                       noisy_f=step.broadcast @ phi.T,
                       bounds=[(float(lo[0]), float(hi[0])) for lo, hi in zip(lows, highs)],
                       truth=sim.objective.values.mean(axis=0), threshold=config.S / np.sqrt(config.P))


def round_weights(weights: np.ndarray, assignment: np.ndarray) -> tuple[float, float]:
    """(phi of an agent in its own sub-region, phi of an agent elsewhere) in a server round.

    The adaptive weights softmax((a I + 1) / T_t) take only these two values:
    the indicator I says whether the agent explored the sub-region first, so
    within a sub-region every explorer weighs the same and every other agent too.
    """
    weights = np.asarray(weights, dtype=float)
    own = np.asarray(assignment)[None, :] == np.arange(weights.shape[0])[:, None]
    other = float(weights[~own].max()) if (~own).any() else 0.0
    return float(weights[own].max()), other


@dataclass(frozen=True)
class NoiseSchedule:
    """The server's noise over the iterations: DP-FTS-DE's (P sub-regions) against DP-FTS's (P = 1).

    The noise std of a release is z phi_max S / q (Algorithm 1, line 11) with
    phi_max the largest weight of any agent in any sub-region. DP-FTS averages
    all N agents with weight 1/N; DP-FTS-DE's adaptive weights first favour each
    sub-region's own explorers (about N / P agents), so phi_max is near P / N and
    the noise about P times larger, until the weights even out.
    """

    iterations: np.ndarray      # (T,) 1..T
    phi_max: np.ndarray         # (T,) DP-FTS-DE's largest weight in the round used in iteration t
    dp_fts_de: np.ndarray       # (T,) DP-FTS-DE's noise std per coordinate
    dp_fts: float               # DP-FTS's noise std at the same q, z, S (weights 1/N)
    agents: int
    P: int

    @property
    def ratio(self) -> np.ndarray:
        """DP-FTS-DE's noise std over DP-FTS's, per iteration."""
        return self.dp_fts_de / self.dp_fts

    @property
    def even_from(self) -> int | None:
        """The first iteration whose noise equals DP-FTS's (uniform weights), or None within the schedule."""
        even = np.flatnonzero(np.isclose(self.dp_fts_de, self.dp_fts, rtol=1e-9))
        return int(self.iterations[even[0]]) if even.size else None


def noise_schedule(config: FboConfig, iterations: int | None = None) -> NoiseSchedule:
    """The noise std of every release of ``config`` (a DP-FTS-DE configuration), and DP-FTS's beside it.

    ``iterations`` defaults to the config's T. The weights are the simulation's
    (:func:`engine.fbo.weights.subregion_weights` with the config's schedule,
    ``a`` and mode, agents assigned round-robin).
    """
    n_agents = resolve_agents(config)
    T = check_int("iterations", iterations if iterations is not None else config.iterations, 1, 10_000)
    P = config.n_subregions
    assignment = Subregions(P, 1).assign(n_agents)
    ts = np.arange(1, T + 1)
    phi_max = np.array([region_weights(assignment, P, int(t), a=config.weight_a, schedule=config.weight_schedule,
                                       mode=config.weights).max() for t in ts])
    return NoiseSchedule(ts, phi_max, config.z * phi_max * config.S / config.q,
                         float(config.z * config.S / (n_agents * config.q)), n_agents, P)
