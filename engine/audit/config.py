"""What to audit: the settings of the two distinguishing games, validated on construction.

``ServerAudit(...)`` and ``VoteAudit(...)`` raise
:class:`engine.validation.ConfigError` with one sentence naming the bad
field, like every other configuration of the engine. The bounds below keep a
single request finite; what a host accepts is priced by :func:`engine.limits.audit.estimate`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.fbo.config import WEIGHT_SCHEDULES, WEIGHTS
from engine.hype.config import AGGREGATIONS
from engine.privacy import ACCOUNTANTS, SAMPLING, GAUSSIAN_ACCOUNTANTS
from engine.validation import (
    ConfigError,
    check_choice,
    check_int,
    check_positive,
    check_probability_open,
    check_range,
)

MECHANISMS = ("fbo-server", "hype-votes")
MECHANISM_LABELS = {"fbo-server": "Federated BO server round (DP-FTS-DE, Algorithm 1)",
                    "hype-votes": "DP-HYPE noisy vote sum (Algorithm 1)"}
MIN_TRIALS = 100          # a quarter per world and half: enough for the bound to be defined
MAX_TRIALS = 100_000_000
MAX_STEPS = 1_000
MAX_AGENTS = 10_000
MAX_FEATURES = 1_000
MAX_CANDIDATES = 1_000
MAX_CLIENTS = 10_000
MAX_CANARY_NORM = 1e6
MAX_NOISE_SCALE = 100.0
MAX_EPSILON = 20.0        # beyond this a Gaussian PLD gets needlessly large


def _check_common(config) -> None:
    check_int("trials", config.trials, MIN_TRIALS, MAX_TRIALS, name="number of trials")
    check_probability_open("delta", config.delta)
    check_int("seed", config.seed, 0)
    check_range("noise_scale", config.noise_scale, 0, MAX_NOISE_SCALE, low_open=True, name="noise scale")


@dataclass(frozen=True)
class ServerAudit:
    """The fbo-server game: T server rounds with a canary agent in (D) or out (D').

    ``canary_norm`` is the canary vector's norm in units of the clip bound
    S / sqrt(P) (1: at the bound; 1000: checks that clipping happens).
    ``agents`` and ``features`` only change the cost: the canary's shift
    relative to the noise depends on the shape of the weights, not on N or M.
    """

    q: float = 0.25
    z: float = 1.0
    S: float = 11.0
    P: int = 1
    agents: int = 10
    features: int = 4
    steps: int = 1
    sampling: str = "poisson"
    weights: str = "adaptive"
    weight_a: float = 15.0
    weight_schedule: str = "synthetic"
    canary_norm: float = 1.0
    trials: int = 200_000
    delta: float = 1e-5
    seed: int = 0
    accountant: str = "pld"
    noise_scale: float = 1.0

    mechanism = "fbo-server"

    def __post_init__(self):
        check_range("q", self.q, 0, 1, low_open=True)
        check_positive("z", self.z)
        check_positive("S", self.S)
        agents = check_int("agents", self.agents, 2, MAX_AGENTS, name="number of agents N")
        P = check_int("P", self.P, 1, name="number of sub-regions P")
        if P > agents:
            raise ConfigError(f"P must be at most the number of agents ({agents}), got {P}.", "P")
        # The other agents' vectors are orthogonal to the canary's, which needs a second axis.
        check_int("features", self.features, 2, MAX_FEATURES, name="number of random features M")
        check_int("steps", self.steps, 1, MAX_STEPS, name="number of releases T")
        check_choice("sampling", self.sampling, SAMPLING)
        check_choice("weights", self.weights, WEIGHTS)
        check_positive("weight_a", self.weight_a, name="weight parameter a")
        check_choice("weight_schedule", self.weight_schedule, WEIGHT_SCHEDULES, name="weight schedule")
        check_range("canary_norm", self.canary_norm, 0, MAX_CANARY_NORM, low_open=True, name="canary norm")
        check_choice("accountant", self.accountant, ACCOUNTANTS)
        if self.sampling == "fixed" and self.accountant == "pld":
            raise ConfigError("The PLD accountant does not support fixed-size sampling; choose rdp or ma.",
                              "accountant")
        _check_common(self)

    @classmethod
    def from_plan(cls, plan, **changes) -> "ServerAudit":
        """The server a federated BO run releases, from its :class:`engine.fbo.plan.RunPlan` (no simulation).

        Takes the plan's q, z (calibrated when the run calibrates it), S, P,
        sampling, weights, delta, accountant and its number of releases (fewer
        than T when a budget stops the server), so the audit claims what the
        run claims. ``agents`` stays small (it changes only the cost, and
        ``P`` sub-regions need at least P agents) except under fixed-size
        sampling, whose claim depends on N. ``changes`` override any field.
        Raises ConfigError when the run releases nothing private.
        """
        config = plan.config
        if not config.is_private:
            raise ConfigError(f"{config.algorithm.upper()} adds no noise, so there is no claimed epsilon to "
                              "audit; choose DP-FTS or DP-FTS-DE.", "algorithm")
        if plan.releases < 1:
            raise ConfigError("The privacy budget stops the server before its first release, so there is "
                              "nothing to audit.", "budget")
        agents = plan.n_agents if config.sampling == "fixed" else max(cls.agents, plan.n_subregions)
        settings = dict(q=config.q, z=plan.z, S=config.S, P=plan.n_subregions, agents=agents, steps=plan.releases,
                        sampling=config.sampling, weights=config.weights, weight_a=config.weight_a,
                        weight_schedule=config.weight_schedule, delta=plan.delta, seed=config.seed,
                        accountant=config.accountant)
        settings.update(changes)
        return cls(**settings)

    @classmethod
    def from_simulation(cls, simulation, **changes) -> "ServerAudit":
        """The server of a prepared :class:`engine.fbo.Simulation`: :meth:`from_plan` of its plan."""
        return cls.from_plan(simulation.plan, **changes)

    def replace(self, **changes) -> "ServerAudit":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class VoteAudit:
    """The hype-votes game: one DP-HYPE vote with the canary client's k votes on set A (D) or B (D').

    Give the noise as ``epsilon`` (calibrated as the DP-HYPE run does) or as
    ``sigma``, the standard deviation on the summed votes; not both.
    """

    epsilon: float | None = 1.0
    sigma: float | None = None
    k: int = 5
    candidates: int = 100
    clients: int = 250
    aggregation: str = "exact"
    trials: int = 200_000
    delta: float = 1e-5
    seed: int = 0
    accountant: str = "pld"
    noise_scale: float = 1.0

    mechanism = "hype-votes"

    def __post_init__(self):
        if self.epsilon is None and self.sigma is None:
            raise ConfigError("Give the noise as epsilon or as sigma.", "epsilon")
        if self.epsilon is not None and self.sigma is not None:
            raise ConfigError("Give either epsilon or sigma, not both.", "sigma")
        if self.epsilon is not None:
            check_range("epsilon", self.epsilon, 0, MAX_EPSILON, low_open=True)
        if self.sigma is not None:
            check_positive("sigma", self.sigma)
        k = check_int("k", self.k, 1)
        candidates = check_int("candidates", self.candidates, 2, MAX_CANDIDATES, name="number of candidates p")
        if 2 * k > candidates:
            raise ConfigError(f"The canary moves its k votes to k other candidates, so k must be at most "
                              f"half the number of candidates ({candidates // 2}), got {k}.", "k")
        check_int("clients", self.clients, 1, MAX_CLIENTS, name="number of clients n")
        check_choice("aggregation", self.aggregation, AGGREGATIONS)
        check_choice("accountant", self.accountant, GAUSSIAN_ACCOUNTANTS)
        _check_common(self)

    @classmethod
    def from_hype(cls, config, **changes) -> "VoteAudit":
        """The vote of a :class:`engine.hype.HypeConfig` (its epsilon or sigma, k, p, n, delta).

        The claim is the run's own: RDP with Theorem II.1's conversion. Dropouts
        are not part of the game (every client reports).
        """
        settings = dict(epsilon=config.epsilon, sigma=config.sigma, k=config.k, candidates=config.p,
                        clients=config.clients, aggregation=config.aggregation, delta=config.delta, seed=config.seed,
                        accountant="rdp")
        settings.update(changes)
        return cls(**settings)

    def replace(self, **changes) -> "VoteAudit":
        return dataclasses.replace(self, **changes)
