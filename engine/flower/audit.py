"""The privacy audit's distinguishing game played against a Flower strategy's own ``aggregate_train``.

What runs
    ``steps`` rounds of the strategy's ``aggregate_train`` per trial, fed
    Flower ``Message`` replies from N agents: the canary agent's reply is
    present (world "in") or absent ("out"); the other replies are known to
    the auditor, orthogonal to the canary, with norms 0.5 to 2 clip bounds.
    The canary points along the first coordinate with norm ``canary_norm``
    clip bounds (default 1000: a strategy that clips in the wrong place lets
    it through). A target (:class:`AuditTarget`) says how to build a reply
    for its strategy, read a release, and what its accountant claims.

The statistic
    Only the canary moves a release along its direction, so the projection
    w_t of release t on it carries the evidence. A pilot run (its own seeds,
    never reused) estimates w_t's mean and spread without the canary and the
    canary's shift when it is used; with p the probability that the strategy
    uses a reply (q under Poisson subsampling inside ``aggregate_train``, 1
    otherwise) the score is the log-likelihood ratio of the Gaussian mixture,
    sum_t log(1 - p + p exp(m_t u_t - m_t^2 / 2)). Any fixed statistic gives a
    valid lower bound (:func:`engine.audit.stats.epsilon_lower_bound` chooses
    the threshold on one half and evaluates it on the other); the pilot only
    makes it powerful.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import time
from typing import Callable

import numpy as np

from engine.audit.game import play
from engine.flower.audit_config import AuditTarget, StrategyAudit
from engine.audit.stats import CONFIDENCE, epsilon_lower_bound
from engine.hosting import is_hosted
from engine.validation import ConfigError

__all__ = ["AuditTarget", "BUILTINS", "StrategyAudit", "StrategyGame", "load_factory", "run_strategy_audit"]
OTHER_NORMS = (0.5, 2.0)
PILOT_TRIALS = 1000
BUILTINS = ("flower-dp-fixed", "dp-fts-de", "broken-clip-after-mean")


def load_factory(spec: str) -> Callable:
    """A built-in name, or ``MODULE:FACTORY`` (local use only: hosting mode refuses module paths)."""
    if spec in BUILTINS:
        from engine.flower import audit_targets       # needs Flower; loaded on use

        return audit_targets.BUILTIN_FACTORIES[spec]
    if is_hosted():
        raise ConfigError("A hosted explorer audits only its built-in strategies "
                          f"({', '.join(BUILTINS)}); run a module of your own locally.", "strategy")
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ConfigError(f"Name the strategy as MODULE:FACTORY or one of {', '.join(BUILTINS)}, got {spec!r}.",
                          "strategy")
    try:
        factory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise ConfigError(f"Cannot load {spec}: {err}.", "strategy") from err
    if not callable(factory):
        raise ConfigError(f"{spec} is not callable.", "strategy")
    return factory


def _log_mixture(u: np.ndarray, m: float, p: float) -> np.ndarray:
    """log(1 - p + p exp(m u - m^2 / 2)), computed stably."""
    if p >= 1:
        return m * u - m * m / 2
    return np.logaddexp(math.log1p(-p), math.log(p) + m * u - m * m / 2)


class StrategyGame:
    """The game of :class:`StrategyAudit` against ``target`` (the interface of :func:`engine.audit.game.play`)."""

    def __init__(self, config: StrategyAudit, target: AuditTarget):
        self.config, self.target = config, target
        N, M = target.replies or config.agents, config.features
        self.n_replies = N
        rng = np.random.default_rng((config.seed, 3))
        others = rng.standard_normal((N, M))
        others[:, 0] = 0.0
        others *= rng.uniform(*OTHER_NORMS, size=(N, 1)) * target.clip / np.linalg.norm(others, axis=1,
                                                                                        keepdims=True)
        self.others = others
        self.canary_index = 0
        self.canary = np.zeros(M)
        self.canary[0] = config.canary_norm * target.clip
        self.chunk_trials = 256
        self.mean_out = self.spread = self.shift = None
        self._pilot()

    def projections(self, world: str, size: int, rng: np.random.Generator) -> np.ndarray:
        """w_t of ``size`` trials, (size, steps)."""
        cfg, target = self.config, self.target
        out = np.empty((size, cfg.steps))
        for trial in range(size):
            target.reset(rng)
            for t in range(cfg.steps):
                replies = [target.reply(n, self.canary if n == self.canary_index else self.others[n])
                           for n in range(self.n_replies) if world == "in" or n != self.canary_index]
                arrays, _ = target.strategy.aggregate_train(t + 1, replies)
                out[trial, t] = np.asarray(target.release(arrays), dtype=float)[0]
        return out

    def _pilot(self) -> None:
        seed = self.config.seed
        size = min(PILOT_TRIALS, max(100, self.config.trials // 4))
        w_in = self.projections("in", size, np.random.default_rng((seed, 9, 0)))
        w_out = self.projections("out", size, np.random.default_rng((seed, 9, 1)))
        self.mean_out = w_out.mean(axis=0)
        self.spread = np.maximum(w_out.std(axis=0, ddof=1), 1e-12)
        self.shift = np.maximum((w_in.mean(axis=0) - self.mean_out) / self.target.used, 0.0)

    def scores(self, world: str, size: int, rng: np.random.Generator) -> np.ndarray:
        w = self.projections(world, size, rng)
        u = (w - self.mean_out) / self.spread
        m = self.shift / self.spread
        return sum(_log_mixture(u[:, t], float(m[t]), self.target.used) for t in range(self.config.steps))


@contextlib.contextmanager
def quiet_flower():
    """Flower logs every aggregation (and warns of every absent canary); an audit makes millions of them."""
    logger = logging.getLogger("flwr")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def run_strategy_audit(config: StrategyAudit, factory: Callable | None = None,
                       confidence: float = CONFIDENCE) -> dict:
    """Play the game and return claimed epsilon, the lower bound, trials and seconds."""
    start = time.perf_counter()
    target = (factory or load_factory(config.strategy))(config)
    if not isinstance(target, AuditTarget):
        raise ConfigError("The strategy factory must return an engine.flower.audit.AuditTarget.", "strategy")
    per_world = config.trials // 2
    with quiet_flower():
        game = StrategyGame(config, target)
        scores_in, scores_out = play(game, per_world, config.seed)
    bound = epsilon_lower_bound(scores_in, scores_out, config.delta, confidence)
    claimed = config.claimed_epsilon if config.claimed_epsilon is not None else target.claim()
    return {"mechanism": "flower", "strategy": config.strategy, "q": config.q, "z": config.z,
            "steps": config.steps, "agents": config.agents, "canary_norm": config.canary_norm,
            "epsilon_claimed": float(claimed), "epsilon_lower": float(bound.epsilon_lower),
            "epsilon_point": float(bound.epsilon_point), "violation": bool(bound.epsilon_lower > claimed),
            "tpr": float(bound.tpr), "fpr": float(bound.fpr), "trials": 2 * per_world, "delta": config.delta,
            "confidence": confidence, "pilot_shift": game.shift.tolist(), "pilot_spread": game.spread.tolist(),
            "notes": target.notes, "seconds": time.perf_counter() - start}
