"""Settings of an audit of a Flower strategy, and the adapter a strategy's factory returns (no Flower needed)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Callable

from engine.validation import check_int, check_probability_open, check_range


# The built-in strategies (engine.flower.audit_targets): the only ones a visitor of a hosted explorer can name.
BUILTINS = ("flower-dp-fixed", "dp-fts-de", "broken-clip-after-mean")
BUILTIN_LABELS = {"flower-dp-fixed": "Flower's DP wrapper (server-side fixed clipping) around FedAvg",
                  "dp-fts-de": "the product's DP-FTS-DE strategy",
                  "broken-clip-after-mean": "a broken strategy (clips the average, not each reply)"}


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


