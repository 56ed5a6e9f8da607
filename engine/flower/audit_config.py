"""Settings of an audit of a Flower strategy, and the adapter a strategy's factory returns (no Flower needed)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Callable

from engine.validation import check_choice, check_int, check_probability_open, check_range


# The built-in strategies (engine.flower.audit_targets): the only ones a visitor of a hosted explorer can name.
BUILTINS = ("flower-dp-fixed", "dp-fts-de", "broken-clip-after-mean", "dp-fts-de-public-seed")
BUILTIN_LABELS = {"flower-dp-fixed": "Flower's DP wrapper (server-side fixed clipping) around FedAvg",
                  "dp-fts-de": "the product's DP-FTS-DE strategy",
                  "broken-clip-after-mean": "a broken strategy (clips the average, not each reply)",
                  "dp-fts-de-public-seed": "broken: the DP-FTS-DE strategy as exported before (noise from the "
                                           "public seed)"}


def flower_installed() -> bool:
    """Whether Flower can be imported here (without importing it)."""
    return importlib.util.find_spec("flwr") is not None


def game_agents(strategy: str, q: float) -> int:
    """The fewest agents that still mean something for a built-in strategy's game (a trial costs about one
    reply's serialisation per agent): two sampled replies a round, round(q N) = 2, for the honest strategies
    (neither claim depends on N); 16 for the broken one, whose leak grows with the replies it averages."""
    return 16 if strategy == "broken-clip-after-mean" else max(4, int(round(2 / q)))


@dataclass(frozen=True)
class StrategyAudit:
    """Settings of a game against a Flower strategy (what its factory receives)."""

    strategy: str = "dp-fts-de"
    q: float = 0.25
    z: float = 1.0
    S: float = 11.0
    agents: int = 16
    features: int = 4
    steps: int = 1
    canary_norm: float = 1000.0
    trials: int = 20_000
    delta: float = 1e-5
    seed: int = 0
    accountant: str = "rdp"
    claimed_epsilon: float | None = None

    def __post_init__(self):
        check_range("q", self.q, 0, 1, low_open=True)
        check_range("z", self.z, 0, None, low_open=True)
        check_range("S", self.S, 0, None, low_open=True)
        check_int("agents", self.agents, 2, 1000, name="number of agents N")
        check_int("features", self.features, 2, 1000, name="number of features M")
        check_int("steps", self.steps, 1, 100, name="number of releases T")
        check_int("trials", self.trials, 100, 10_000_000, name="number of trials")
        check_probability_open("delta", self.delta)
        check_int("seed", self.seed, 0)
        if self.claimed_epsilon is not None:
            check_range("claimed_epsilon", self.claimed_epsilon, 0, None, low_open=True, name="claimed epsilon")


@dataclass
class AuditTarget:
    """A strategy and how the game talks to it.

    ``reply(index, vector)`` builds agent ``index``'s reply Message;
    ``release(arrays)`` reads the released vector (flattened) from what
    ``aggregate_train`` returned; ``reset(rng)`` prepares a fresh run (state,
    generator); ``claim()`` is the strategy's accountant's epsilon for the
    game's releases; ``used`` the probability that a reply is used; ``clip``
    the L2 bound the strategy promises per reply; ``accountant`` the kind of
    accountant behind ``claim()`` (default: the settings' ``accountant``).
    """

    strategy: object
    reply: Callable
    release: Callable
    reset: Callable
    claim: Callable
    used: float
    clip: float
    replies: int | None = None          # replies per round (default: the game's agents)
    accountant: str | None = None       # the kind of accountant behind claim() ("rdp", "pld", "ma")
    notes: dict = field(default_factory=dict)




# A participant's attack (engine.flower.participant): the fixed apps and copies as they were before, whose
# randomness came from the run config's public seed (the known-broken negative controls).
PARTICIPANT_TARGETS = ("dp-fts-de", "dp-fts-de-public-seed", "dp-hype", "dp-hype-public-seed")
PARTICIPANT_LABELS = {"dp-fts-de": "the product's DP-FTS-DE server (noise from the OS's entropy)",
                      "dp-fts-de-public-seed": "broken: the DP-FTS-DE server as it was, noise from the public seed",
                      "dp-hype": "the product's DP-HYPE clients (noise from their own entropy)",
                      "dp-hype-public-seed": "broken: DP-HYPE clients whose noise comes from the public seed"}
MAX_PARTICIPANT_AGENTS = 50
MAX_PARTICIPANT_STEPS = 50


@dataclass(frozen=True)
class ParticipantAudit:
    """Settings of a participant's attack on an app played in one process (``engine.flower.participant_targets``).

    DP-FTS-DE: ``agents`` agents, ``steps`` releases, q, z, S, P, ``features`` random features. DP-HYPE:
    ``agents`` clients, ``candidates``, k, epsilon. ``attacker``: the participant's own index.
    """

    strategy: str = "dp-fts-de"
    agents: int = 5
    steps: int = 10
    q: float = 0.5
    z: float = 1.0
    S: float = 11.0
    P: int = 2
    features: int = 50
    candidates: int = 10
    k: int = 2
    epsilon: float = 1.0
    seed: int = 0
    attacker: int = 0

    def __post_init__(self):
        check_choice("strategy", self.strategy, PARTICIPANT_TARGETS)
        check_int("agents", self.agents, 2, MAX_PARTICIPANT_AGENTS, name="number of agents N")
        check_int("steps", self.steps, 1, MAX_PARTICIPANT_STEPS, name="number of releases T")
        check_range("q", self.q, 0, 1, low_open=True)
        check_range("z", self.z, 0, None, low_open=True)
        check_range("S", self.S, 0, None, low_open=True)
        check_int("P", self.P, 1, self.agents, name="number of sub-regions P (at most N)")
        check_int("features", self.features, 2, 1000, name="number of features M")
        check_int("candidates", self.candidates, 2, 1000, name="number of candidates")
        check_int("k", self.k, 1, self.candidates - 1, name="votes per client k (below the candidates)")
        check_range("epsilon", self.epsilon, 0.01, None, name="epsilon")
        check_int("seed", self.seed, 0)
        check_int("attacker", self.attacker, 0, self.agents - 1, name="the attacker's index")

    @property
    def app(self) -> str:
        return "hype" if self.strategy.startswith("dp-hype") else "fbo"
