"""What to audit: the settings of the two distinguishing games, validated on construction.

``ServerAudit(...)`` and ``VoteAudit(...)`` raise
:class:`engine.validation.ConfigError` with one sentence naming the bad
field, like every other configuration of the engine. The bounds below keep a
single request finite; what a host accepts is priced by :func:`engine.limits.audit.estimate`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.audit.controls import CONTROLS
from engine.fbo.config import WEIGHT_SCHEDULES, WEIGHTS
from engine.hype.config import AGGREGATIONS
from engine.privacy import ACCOUNTANTS, SAMPLING, GAUSSIAN_ACCOUNTANTS
from engine.settings import setting, validate
from engine.settings_doc import documented
from engine.validation import Checked, ConfigError

MECHANISMS = ("fbo-server", "hype-votes")
MECHANISM_LABELS = {"fbo-server": "Federated BO server round (DP-FTS-DE, Algorithm 1)",
                    "hype-votes": "DP-HYPE noisy vote sum (Algorithm 1)"}
MIN_TRIALS = 100          # a quarter per world and half: enough for the bound to be defined
MAX_TRIALS = 1_000_000_000   # the counts do not grow with the trials: only the price bounds a request
MAX_STEPS = 1_000
MAX_AGENTS = 10_000
MAX_FEATURES = 1_000
MAX_CANDIDATES = 1_000
MAX_CLIENTS = 10_000
MAX_CANARY_NORM = 1e6
MAX_NOISE_SCALE = 100.0
MAX_EPSILON = 20.0        # beyond this a Gaussian PLD gets needlessly large


HUGE = 1e6  # a link's bound on knobs the audit bounds only by their sign


def _trials(default=200_000):
    return setting(default, low=MIN_TRIALS, high=MAX_TRIALS, noun="number of trials", label="trials",
                   help="games played, half with each input")


def _delta():
    return setting(1e-5, low=0, high=1, low_open=True, high_open=True, link=(0, 1), label="δ",
                   help="delta at which the claimed epsilon is stated")


def _seed():
    return setting(0, low=0, high=2**32 - 1, link=(0, 2**32 - 1), label="seed",
                   help="fixes the games' randomness: the same seed gives the same result")


def _weights():
    return setting("adaptive", choices=WEIGHTS, label="weights", help="sub-region weights")


def _weight_a():
    return setting(15.0, low=0, low_open=True, noun="weight parameter a", link=(0, HUGE), label="weight a",
                   help="a of the softmax weights")


def _weight_schedule():
    return setting("synthetic", choices=WEIGHT_SCHEDULES, noun="weight schedule", label="weight schedule",
                   help="how the weights' a_t decays (as FboConfig's)")


def _canary_norm():
    return setting(1.0, low=0, high=MAX_CANARY_NORM, low_open=True, noun="canary norm", link=(0, MAX_CANARY_NORM),
                   label="canary norm", help="canary norm in clip bounds (e.g. 1000 checks that clipping happens)")


def _accountant():
    return setting("pld", choices=ACCOUNTANTS, label="accountant",
                   help="accountant of the claimed epsilon (pld, the tightest)")


def _noise_scale():
    return setting(1.0, low=0, high=MAX_NOISE_SCALE, low_open=True, noun="noise scale", page_param="control",
                   help="negative control: multiply the noise actually added, keep the claim")


@documented
@dataclass(frozen=True)
class ServerAudit(metaclass=Checked):
    """The fbo-server game: T server rounds with a canary agent in (D) or out (D').

    ``canary_norm`` is the canary vector's norm in units of the clip bound
    S / sqrt(P) (1: at the bound; 1000: checks that clipping happens).
    ``agents`` and ``features`` only change the cost: the canary's shift
    relative to the noise depends on the shape of the weights, not on N or M
    (so both default to the fewest the game allows). ``control`` breaks the
    mechanism on purpose (:mod:`engine.audit.controls`); the claim stays.
    """

    q: float = setting(0.25, low=0, high=1, low_open=True, link=(0, 1), label="q",
                       help="sampling probability of an agent")
    z: float = setting(1.0, low=0, low_open=True, link=(0, HUGE), label="z", help="noise multiplier")
    S: float = setting(11.0, low=0, low_open=True, link=(0, HUGE), label="S",
                       help="clipping threshold, vectors clipped to S/sqrt(P)")
    P: int = setting(1, low=1, noun="number of sub-regions P", link=(1, MAX_AGENTS), label="P",
                     help="number of sub-regions")
    agents: int = setting(2, low=2, high=MAX_AGENTS, noun="number of agents N", label="agents N",
                          help="number of agents N (changes only the cost)")
    # The other agents' vectors are orthogonal to the canary's, which needs a second axis.
    features: int = setting(2, low=2, high=MAX_FEATURES, noun="number of random features M", label="features M",
                            help="vector length M (changes only the cost)")
    steps: int = setting(1, low=1, high=MAX_STEPS, noun="number of releases T", label="releases T",
                         help="T releases composed")
    sampling: str = setting("poisson", choices=SAMPLING, label="sampling",
                            help="poisson (add/remove) or fixed (replace-one)")
    weights: str = _weights()
    weight_a: float = _weight_a()
    weight_schedule: str = _weight_schedule()
    canary_norm: float = _canary_norm()
    trials: int = _trials()
    delta: float = _delta()
    seed: int = _seed()
    accountant: str = _accountant()
    noise_scale: float = _noise_scale()
    control: str = setting("none", choices=CONTROLS, noun="negative control", page_param="control",
                           help="negative control: break the mechanism this way (no-subsampling, reused-noise, "
                                "public-seed), keep the claim")

    mechanism = "fbo-server"

    def __post_init__(self):
        validate(self)
        if self.P > self.agents:
            raise ConfigError(f"P must be at most the number of agents ({self.agents}), got {self.P}.", "P")
        if self.sampling == "fixed" and self.accountant == "pld":
            raise ConfigError("The PLD accountant does not support fixed-size sampling; choose rdp or ma.",
                              "accountant")

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


@documented
@dataclass(frozen=True)
class VoteAudit(metaclass=Checked):
    """The hype-votes game: one DP-HYPE vote with the canary client's k votes on set A (D) or B (D').

    Give the noise as ``epsilon`` (calibrated as the DP-HYPE run does) or as
    ``sigma``, the standard deviation on the summed votes; not both.
    """

    epsilon: float | None = setting(1.0, kind=float, optional=True, low=0, high=MAX_EPSILON, low_open=True,
                                    link=(0, MAX_EPSILON), label="ε",
                                    help="privacy budget the noise is calibrated to")
    sigma: float | None = setting(None, kind=float, low=0, low_open=True, link=(0, HUGE), label="σ",
                                  help="noise std on the summed votes instead of --epsilon")
    k: int = setting(5, low=1, link=(1, MAX_CANDIDATES // 2), label="votes per client k", help="votes per client")
    candidates: int = setting(100, low=2, high=MAX_CANDIDATES, noun="number of candidates p", label="candidates p",
                              help="number of candidates p")
    clients: int = setting(250, low=1, high=MAX_CLIENTS, noun="number of clients n", label="clients n",
                           help="number of clients n")
    aggregation: str = setting("exact", choices=AGGREGATIONS, label="aggregation",
                               help="exact (summed noise at once) or secure-sum (client by client)")
    trials: int = _trials()
    delta: float = _delta()
    seed: int = _seed()
    accountant: str = setting("pld", choices=GAUSSIAN_ACCOUNTANTS, label="accountant",
                              help="accountant of the claimed epsilon")
    noise_scale: float = _noise_scale()

    mechanism = "hype-votes"

    def __post_init__(self):
        if self.epsilon is None and self.sigma is None:
            raise ConfigError("Give the noise as epsilon or as sigma.", "epsilon")
        if self.epsilon is not None and self.sigma is not None:
            raise ConfigError("Give either epsilon or sigma, not both.", "sigma")
        validate(self)
        if 2 * self.k > self.candidates:
            raise ConfigError(f"The canary moves its k votes to k other candidates, so k must be at most "
                              f"half the number of candidates ({self.candidates // 2}), got {self.k}.", "k")

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


MIN_CANARIES = 10
MAX_CANARIES = 100_000


@documented
@dataclass(frozen=True)
class OneRunAudit(metaclass=Checked):
    """The one-run game of the fbo-server: ``canaries`` canary agents, each in the federation with probability 1/2,
    one run of all ``steps`` releases, the bound from the auditor's guesses (:mod:`engine.audit.one_run`).

    The canaries are agents whose vectors point along distinct axes at ``canary_norm`` clip bounds; each one
    included is then subsampled with probability q in every release (Poisson sampling: the game is add/remove).
    ``control`` and ``noise_scale`` break the mechanism as :class:`ServerAudit`'s do.
    """

    q: float = setting(0.25, low=0, high=1, low_open=True, link=(0, 1), label="q",
                       help="sampling probability of an agent")
    z: float = setting(1.0, low=0, low_open=True, link=(0, HUGE), label="z", help="noise multiplier")
    S: float = setting(11.0, low=0, low_open=True, link=(0, HUGE), label="S",
                       help="clipping threshold, vectors clipped to S/sqrt(P)")
    P: int = setting(1, low=1, noun="number of sub-regions P", link=(1, MAX_AGENTS), label="P",
                     help="number of sub-regions")
    steps: int = setting(40, low=1, high=MAX_STEPS, noun="number of releases T", label="releases T",
                         help="T releases in the one run")
    canaries: int = setting(1_000, low=MIN_CANARIES, high=MAX_CANARIES, noun="number of canaries m",
                            label="canaries m", help="canary agents, each in the run with probability 1/2")
    weights: str = _weights()
    weight_a: float = _weight_a()
    weight_schedule: str = _weight_schedule()
    canary_norm: float = _canary_norm()
    delta: float = _delta()
    seed: int = _seed()
    accountant: str = _accountant()
    noise_scale: float = _noise_scale()
    control: str = setting("none", choices=CONTROLS, noun="negative control", page_param="control",
                           help="negative control: break the mechanism this way, keep the claim")

    mechanism = "fbo-server"
    sampling = "poisson"

    def __post_init__(self):
        validate(self)
        if self.P > self.canaries:
            raise ConfigError(f"P must be at most the number of canaries ({self.canaries}), got {self.P}.", "P")

    def replace(self, **changes) -> "OneRunAudit":
        return dataclasses.replace(self, **changes)
