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
    valid lower bound (:mod:`engine.audit.bands`: every threshold of a grid at
    once); the pilot only makes it powerful, and its scores place the grid.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import math
import time
from typing import Callable

import numpy as np

from engine.audit.game import WORLDS, play_on
from engine.audit.result import AuditResult
from engine.audit.run import audit_result
from engine.audit.stats import CONFIDENCE
from engine.executor import Executor
from engine.flower.audit_config import BUILTINS, AuditTarget, StrategyAudit
from engine.hosting import is_hosted
from engine.validation import ConfigError

__all__ = ["AuditTarget", "BUILTINS", "StrategyAudit", "StrategyGame", "audit_strategy", "load_factory",
           "run_strategy_audit"]
OTHER_NORMS = (0.5, 2.0)
PILOT_TRIALS = 1000
CHUNK_TRIALS = 256        # trials per chunk: about a quarter of a second, so progress and cancel come often


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


def _snapshot(message) -> tuple:
    """A reply's records, each record's items and the arrays' bytes, as built."""
    content = dict(message.content.__dict__["_data"])
    records = [(record, dict(record.__dict__["_data"])) for record in content.values()]
    arrays = [(item, item.data) for _, items in records for item in items.values() if hasattr(item, "data")]
    return content, records, arrays


def _log_mixture(u: np.ndarray, m: float, p: float) -> np.ndarray:
    """log(1 - p + p exp(m u - m^2 / 2)), computed stably."""
    if p >= 1:
        return m * u - m * m / 2
    return np.logaddexp(math.log1p(-p), math.log(p) + m * u - m * m / 2)


class StrategyGame:
    """The game of :class:`StrategyAudit` against ``target`` (the interface of :func:`engine.audit.game.play`)."""

    def __init__(self, config: StrategyAudit, target: AuditTarget, pilot: tuple | None = None):
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
        self.chunk_trials = CHUNK_TRIALS
        self.replies = {world: self._build_replies(world) for world in WORLDS}
        self.rebuilt = 0          # times a strategy changed a reply's arrays in place (each costs a rebuild)
        self.mean_out = self.spread = self.shift = None
        self.statistics, self.descriptions = ("llr",), {"llr": STATISTIC}
        self.statistic, self.neighbours = STATISTIC, NEIGHBOURS
        self.pilot_scores = None
        if pilot is None:
            self._pilot()
        else:
            self.mean_out, self.spread, self.shift = (np.asarray(a, dtype=float) for a in pilot)

    # ------------------------------------------------------------------ the replies, built once per world
    def _build_replies(self, world: str) -> list:
        """The world's reply Messages and a snapshot of their records (see :meth:`restore`)."""
        target = self.target
        messages = [target.reply(n, self.canary if n == self.canary_index else self.others[n])
                    for n in range(self.n_replies) if world == "in" or n != self.canary_index]
        return [(message, _snapshot(message)) for message in messages]

    def restore(self, world: str) -> list:
        """The world's replies as they were built.

        Building a reply serialises its arrays (most of a trial's cost outside
        the strategy), so the replies are built once. A strategy may replace
        records of a reply (Flower's DP wrapper swaps in the clipped arrays):
        every trial puts the original records and items back, which costs a
        few dict copies. Arrays are immutable bytes in Flower; one changed in
        place anyway is caught by identity and its reply rebuilt.
        """
        cached = self.replies[world]
        for message, (content, records, arrays) in cached:
            if any(array.data is not data for array, data in arrays):
                self.replies[world] = cached = self._build_replies(world)
                self.rebuilt += 1
                break
            message.content.__dict__["_data"] = dict(content)
            for record, items in records:
                record.__dict__["_data"] = dict(items)
        return [message for message, _ in cached]

    def projections(self, world: str, size: int, rng: np.random.Generator) -> np.ndarray:
        """w_t of ``size`` trials, (size, steps)."""
        cfg, target = self.config, self.target
        out = np.empty((size, cfg.steps))
        aggregate, release = target.strategy.aggregate_train, target.release
        for trial in range(size):
            target.reset(rng)
            for t in range(cfg.steps):
                arrays, _ = aggregate(t + 1, self.restore(world))
                out[trial, t] = np.asarray(release(arrays), dtype=float)[0]
        return out

    def _pilot(self) -> None:
        seed = self.config.seed
        size = min(PILOT_TRIALS, max(100, self.config.trials // 4))
        w_in = self.projections("in", size, np.random.default_rng((seed, 9, 0)))
        w_out = self.projections("out", size, np.random.default_rng((seed, 9, 1)))
        self.mean_out = w_out.mean(axis=0)
        self.spread = np.maximum(w_out.std(axis=0, ddof=1), 1e-12)
        self.shift = np.maximum((w_in.mean(axis=0) - self.mean_out) / self.target.used, 0.0)
        self.pilot_scores = ({"llr": np.concatenate([self._score(w_in), self._score(w_out)])}, size)

    @property
    def pilot(self) -> tuple[list, list, list]:
        return self.mean_out.tolist(), self.spread.tolist(), self.shift.tolist()

    def _score(self, w: np.ndarray) -> np.ndarray:
        u = (w - self.mean_out) / self.spread
        m = self.shift / self.spread
        return sum(_log_mixture(u[:, t], float(m[t]), self.target.used) for t in range(self.config.steps))

    def scores(self, world: str, size: int, rng: np.random.Generator) -> dict:
        return {"llr": self._score(self.projections(world, size, rng))}


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


def _target(config: StrategyAudit, factory: Callable | None) -> AuditTarget:
    target = (factory or load_factory(config.strategy))(config)
    if not isinstance(target, AuditTarget):
        raise ConfigError("The strategy factory must return an engine.flower.audit.AuditTarget.", "strategy")
    return target


# ---------------------------------------------------------------------------------- chunks on workers
def _worker_game(config: StrategyAudit, factory: Callable | None, pilot: tuple) -> StrategyGame:
    """The game on a worker: its own strategy (``factory``), the pilot's statistics taken from the caller."""
    target = _target(config, factory)                  # imports Flower, which sets its logger's level
    logging.getLogger("flwr").setLevel(logging.ERROR)
    return StrategyGame(config, target, pilot=pilot)


# ---------------------------------------------------------------------------------- the audit
STATISTIC = "log-likelihood ratio of the release's projection on the canary (Gaussian mixture, pilot-fitted)"
NEIGHBOURS = "add/remove-one: the canary's reply present or absent, the other replies known"


def audit_strategy(config: StrategyAudit, factory: Callable | None = None, confidence: float = CONFIDENCE, *,
                   workers: int = 1, progress: Callable[[int, int], None] | None = None,
                   cancel: Callable[[], bool] | None = None, executor: Executor | None = None) -> AuditResult:
    """Play the game against the strategy and bound epsilon: an :class:`engine.audit.AuditResult`
    (``config`` the StrategyAudit; the claim is the strategy's accountant's or ``config.claimed_epsilon``).

    ``workers`` > 1 plays the chunks in that many processes, ``executor`` on its workers (same scores as one);
    ``progress(done, total)`` and ``cancel()`` as in :func:`engine.audit.game.play`.
    """
    started = (time.perf_counter(), time.process_time())
    target = _target(config, factory)
    per_world = config.trials // 2
    with quiet_flower():
        game = StrategyGame(config, target)
        chosen = executor or Executor("joblib", workers)
        build = functools.partial(_worker_game, config, factory, game.pilot)
        tally, prefixes = play_on(chosen, game, build, per_world, config.seed, progress, cancel)
    claimed = float(config.claimed_epsilon if config.claimed_epsilon is not None else target.claim())
    return audit_result(game, config, tally, prefixes, mechanism="flower", claimed=claimed, canary=claimed,
                        accountant=target.accountant or config.accountant,
                        mu_claimed=(math.sqrt(config.steps) / config.z if target.used >= 1 else None),
                        confidence=confidence, started=started)


def summary(result: AuditResult) -> dict:
    """The CLI's record of an audit of a strategy."""
    config = result.config
    return {"mechanism": "flower", "strategy": config.strategy, "q": config.q, "z": config.z,
            "steps": config.steps, "agents": config.agents, "canary_norm": config.canary_norm,
            "epsilon_claimed": result.epsilon_claimed, "epsilon_lower": float(result.epsilon_lower),
            "epsilon_point": float(result.epsilon_point), "violation": bool(result.violation),
            "tpr": float(result.tpr), "fpr": float(result.fpr), "trials": result.trials, "delta": config.delta,
            "confidence": result.confidence, "accountant": result.accountant, "verdict": result.verdict,
            "seconds": result.wall_seconds}


def run_strategy_audit(config: StrategyAudit, factory: Callable | None = None,
                       confidence: float = CONFIDENCE, workers: int = 1, executor: Executor | None = None) -> dict:
    """:func:`audit_strategy` as the CLI's JSON record."""
    return summary(audit_strategy(config, factory, confidence, workers=workers, executor=executor))
