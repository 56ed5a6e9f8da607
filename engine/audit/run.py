"""Run an audit: play the game and bound epsilon (its price before it runs: :mod:`engine.limits.audit`)."""

from __future__ import annotations

import functools
import time
from typing import Callable

from engine.audit.bands import grid_bound, roc_points
from engine.audit.config import ServerAudit, VoteAudit
from engine.audit.fbo_server import ServerGame
from engine.audit.game import play_on
from engine.audit.hype_votes import VoteGame
from engine.audit.result import AuditResult
from engine.audit.stats import CONFIDENCE
from engine.executor import Executor


def _game(config):
    if isinstance(config, ServerAudit):
        return ServerGame(config)
    if isinstance(config, VoteAudit):
        return VoteGame(config)
    raise TypeError(f"Not an audit configuration: {type(config).__name__}.")


def audit_result(game, config, tally, prefixes, *, mechanism: str, claimed: float, canary: float,
                 accountant: str, mu_claimed: float | None, confidence: float, started: tuple[float, float],
                 noise_scale: float = 1.0, control: str = "none") -> AuditResult:
    """The :class:`AuditResult` of a played game (``tally``: all its counts; ``prefixes``: after each chunk)."""
    bound = grid_bound(tally, config.delta, confidence)
    curve = [(2 * prefix.trials, grid_bound(prefix, config.delta, confidence).epsilon_lower) for prefix in prefixes]
    roc_fpr, roc_tpr = roc_points(*tally.counts[bound.statistic])
    wall, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    return AuditResult(
        mechanism=mechanism, config=config, accountant=accountant, delta=config.delta, confidence=confidence,
        epsilon_claimed=float(claimed), epsilon_canary=float(canary), epsilon_lower=bound.epsilon_lower,
        epsilon_point=bound.epsilon_point, statistic_used=bound.statistic, threshold=bound.threshold,
        tpr=bound.tpr, fpr=bound.fpr, tpr_lower=bound.tpr_lower, fpr_upper=bound.fpr_upper,
        trials=2 * tally.trials, evaluation_trials=tally.trials, grids=tally.grids,
        counts={name: (a, b) for name, (a, b) in tally.counts.items()}, curve=curve, roc_fpr=roc_fpr,
        roc_tpr=roc_tpr, mu_lower=bound.mu_lower, mu_point=bound.mu_point, epsilon_gdp=bound.epsilon_gdp,
        mu_claimed=mu_claimed, noise_scale=noise_scale, statistic=game.statistic, neighbours=game.neighbours,
        wall_seconds=wall, cpu_seconds=cpu, tests=bound.tests, statistics=dict(game.descriptions),
        control=control)


def run_audit(config, *, progress: Callable[[int, int], None] | None = None,
              cancel: Callable[[], bool] | None = None, confidence: float = CONFIDENCE,
              executor: Executor | None = None) -> AuditResult:
    """Play ``config.trials`` games (half in each world) against the engine's mechanism and bound epsilon.

    Parameters
    ----------
    config : ServerAudit or VoteAudit
    progress : callable(done, total), optional
        Called after every chunk with the trials played so far.
    cancel : callable() -> bool, optional
        Asked before every chunk; True stops the audit with :class:`AuditCancelled`.
    confidence : float
        Of the lower bound on epsilon (and on mu).
    executor : Executor, optional
        Plays the chunks on its workers (the same counts); default: in this process. ``cpu_seconds`` of the
        result counts this process only.
    """
    started = (time.perf_counter(), time.process_time())
    game = _game(config)
    per_world = int(config.trials) // 2
    tally, prefixes = play_on(executor or Executor("local"), game, functools.partial(_game, config), per_world,
                              config.seed, progress, cancel, single_blas=True)
    return audit_result(game, config, tally, prefixes, mechanism=config.mechanism, claimed=game.epsilon_claimed(),
                        canary=game.epsilon_canary(), accountant=config.accountant, mu_claimed=game.mu_claimed(),
                        confidence=confidence, started=started, noise_scale=config.noise_scale,
                        control=getattr(config, "control", "none"))
