"""The one-run audit of a Flower strategy: canary replies to its own ``aggregate_train``, one run of T rounds.

The run
    m canary agents, canary j replying the vector e_j at ``canary_norm`` times the strategy's clip bound (the
    strategy is built for m agents and m features, so every canary has its own axis); each canary is in the run
    with probability 1/2 (it replies in every round) or out (it sends no reply). The strategy's own
    ``aggregate_train`` runs T rounds on the replies of the canaries that are in, once, as deployed: the target's
    ``reset`` starts a fresh run whose private randomness comes from a generator the auditor never sees (the
    known-broken public-seed copy starts from its public seed instead, as it did when exported).
The scores (from the releases and what the strategy's code and its config give anyone)
    Release t along canary j, y_t,j, is standardised by the release's own spread over the canaries
    (1.4826 x the median absolute deviation: most canaries' coordinates are pure noise), u = (y - median) / s;
    ``llr`` sums log(1 - p + p exp(m u - m^2 / 2)) over the rounds with p the probability a reply is used and
    m = min(canary_norm, 1) / z the canary's shift the claim assumes; ``reuse`` is the largest
    |y_t,j - y_t-1,j| / (sqrt(2) s); ``shadow`` replays the strategy from its factory (a fresh instance, as
    anyone with the app's code and config builds it) on no replies and scores y - replay as ``llr`` with noise
    sqrt(2) s (strategies that release nothing without replies give no ``shadow`` score).
The bound is :func:`engine.audit.one_run.one_run_bound` (Steinke et al.; the f-DP one beside it).
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.audit.fbo_server import _log_mixture
from engine.audit.one_run import one_run_bound
from engine.audit.one_run_server import OneRunResult
from engine.audit.stats import CONFIDENCE
from engine.cancel import checkpoint
from engine.flower.audit import _target, quiet_flower
from engine.flower.audit_config import StrategyAudit
from engine.validation import ConfigError, check_choice, check_int, check_probability_open, check_range

MAX_CANARIES = 1000        # the strategy is built for m agents and m features: m^2 numbers per round
STATISTICS = {
    "llr": "log-likelihood ratio of the canary's coordinate (standardised by the release's spread), summed",
    "reuse": "largest change along the canary between consecutive releases (noise units)",
    "shadow": "llr of the release minus the strategy replayed from its factory on no replies",
}
NEIGHBOURS = "add/remove-one for each canary reply: present in every round with probability 1/2"


@dataclass(frozen=True)
class StrategyOneRun:
    """Settings of a one-run audit of a Flower strategy (its factory receives them as a StrategyAudit)."""

    strategy: str = "dp-fts-de"
    q: float = 0.25
    z: float = 1.0
    S: float = 11.0
    steps: int = 10
    canaries: int = 500
    canary_norm: float = 1000.0       # a strategy that clips in the wrong place lets it through
    delta: float = 1e-5
    seed: int = 0
    accountant: str = "rdp"
    claimed_epsilon: float | None = None

    def __post_init__(self):
        check_range("q", self.q, 0, 1, low_open=True)
        check_range("z", self.z, 0, None, low_open=True)
        check_range("S", self.S, 0, None, low_open=True)
        check_int("steps", self.steps, 1, 100, name="number of releases T")
        check_int("canaries", self.canaries, 10, MAX_CANARIES, name="number of canaries m")
        check_range("canary_norm", self.canary_norm, 0, 1e6, low_open=True, name="canary norm")
        check_probability_open("delta", self.delta)
        check_int("seed", self.seed, 0)
        check_choice("accountant", self.accountant, ("ma", "rdp", "pld"))
        if self.claimed_epsilon is not None:
            check_range("claimed_epsilon", self.claimed_epsilon, 0, None, low_open=True, name="claimed epsilon")

    def as_game(self) -> StrategyAudit:
        """The StrategyAudit the strategy's factory builds its target from: m agents, m features."""
        return StrategyAudit(strategy=self.strategy, q=self.q, z=self.z, S=self.S, agents=self.canaries,
                             features=self.canaries, steps=self.steps, canary_norm=self.canary_norm, trials=100,
                             delta=self.delta, seed=self.seed, accountant=self.accountant,
                             claimed_epsilon=self.claimed_epsilon)


def robust_spread(values: np.ndarray) -> tuple[float, float]:
    """(median, 1.4826 x median absolute deviation): the noise's location and scale when most values are noise."""
    middle = float(np.median(values))
    spread = 1.4826 * float(np.median(np.abs(values - middle)))
    return middle, spread if spread > 0 else float(np.std(values)) or 1.0


def canary_scores(releases: list[np.ndarray], replays: list[np.ndarray] | None, shift: float, used: float) -> dict:
    """Every canary's scores from its coordinate in each release (``releases[t][j]``) and, when the strategy can
    be replayed, the replay's (see the module docstring)."""
    m = len(releases[0])
    scores = {"llr": np.zeros(m)}
    if len(releases) >= 2:
        scores["reuse"] = np.zeros(m)
    if replays is not None:
        scores["shadow"] = np.zeros(m)
    log_p, log_not_p = math.log(used), (math.log1p(-used) if used < 1 else -math.inf)
    previous = None
    for t, release in enumerate(releases):
        middle, spread = robust_spread(release)
        scores["llr"] += _log_mixture((release - middle) / spread, shift, log_p, log_not_p)
        if previous is not None:
            scores["reuse"] = np.maximum(scores["reuse"], np.abs(release - previous) / (math.sqrt(2) * spread))
        if replays is not None:
            residual = (release - replays[t]) / (math.sqrt(2) * spread)
            scores["shadow"] += _log_mixture(residual, shift / math.sqrt(2), log_p, log_not_p)
        previous = release
    return scores


def _rounds(target, replies: Callable[[], list], steps: int, m: int) -> list[np.ndarray] | None:
    releases = []
    for t in range(1, steps + 1):
        checkpoint()
        arrays, _ = target.strategy.aggregate_train(t, replies())
        if arrays is None:
            return None
        releases.append(np.asarray(target.release(arrays), dtype=float)[:m])
    return releases


def strategy_one_run(config: StrategyOneRun, factory: Callable | None = None,
                     confidence: float = CONFIDENCE) -> OneRunResult:
    """One run of the strategy on its canary replies, and the bound (an :class:`OneRunResult`)."""
    wall, cpu = time.perf_counter(), time.process_time()
    game, m = config.as_game(), config.canaries
    included = np.random.default_rng((config.seed, 41)).random(m) < 0.5
    with quiet_flower(), contextlib.redirect_stdout(io.StringIO()):     # the rounds' logs: the result is the record
        target = _target(game, factory)
        logging.getLogger("flwr").setLevel(logging.ERROR)      # importing Flower above set its logger's level
        vectors = np.eye(m) * config.canary_norm * target.clip

        def replies():
            return [target.reply(int(j), vectors[j]) for j in np.flatnonzero(included)]

        target.reset(np.random.default_rng((config.seed, 43)))
        releases = _rounds(target, replies, config.steps, m)
        if releases is None:
            raise ConfigError(f"The strategy {config.strategy} released nothing in a round.", "strategy")
        shadow = _target(game, factory)            # the app's code, built again by anyone who holds it
        shadow.reset(np.random.default_rng((config.seed, 53)))
        try:
            replays = _rounds(shadow, list, config.steps, m)
        except Exception:  # noqa: BLE001 - a strategy that cannot aggregate no replies gives no shadow score
            replays = None
    scores = canary_scores(releases, replays, min(config.canary_norm, 1.0) / config.z, float(target.used))
    bound = one_run_bound(scores, included, config.delta, confidence)
    claimed = float(config.claimed_epsilon if config.claimed_epsilon is not None else target.claim())
    return OneRunResult(config=config, mechanism="flower", epsilon_claimed=claimed, epsilon_canary=claimed,
                        bound=bound, scores=scores, included=included, accountant=target.accountant or
                        config.accountant, delta=config.delta, statistics={k: STATISTICS[k] for k in scores},
                        neighbours=NEIGHBOURS, control="none", noise_scale=1.0,
                        wall_seconds=time.perf_counter() - wall, cpu_seconds=time.process_time() - cpu,
                        notes={"strategy": config.strategy, **target.notes})
