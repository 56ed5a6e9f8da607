"""Run an audit: play the game and bound epsilon (its price before it runs: :mod:`engine.limits.audit`)."""

from __future__ import annotations

import functools
import time
from typing import Callable

from engine.audit.config import ServerAudit, VoteAudit
from engine.audit.fbo_server import ServerGame
from engine.audit.game import play_on
from engine.audit.hype_votes import VoteGame
from engine.audit.result import AuditResult
from engine.audit.stats import CONFIDENCE, epsilon_lower_bound, gdp_lower_bound, roc_curve
from engine.executor import Executor


def _game(config):
    if isinstance(config, ServerAudit):
        return ServerGame(config)
    if isinstance(config, VoteAudit):
        return VoteGame(config)
    raise TypeError(f"Not an audit configuration: {type(config).__name__}.")


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
        Of the one-sided lower bound on epsilon.
    executor : Executor, optional
        Plays the chunks on its workers (the same scores); default: in this process.
    """
    start = time.perf_counter()
    game = _game(config)
    per_world = int(config.trials) // 2
    scores_in, scores_out = play_on(executor or Executor("local"), game, functools.partial(_game, config), per_world,
                                    config.seed, progress, cancel, single_blas=True)
    bound = epsilon_lower_bound(scores_in, scores_out, config.delta, confidence)
    gdp = gdp_lower_bound(scores_in, scores_out, config.delta, confidence)
    roc_fpr, roc_tpr = roc_curve(scores_in, scores_out)
    return AuditResult(
        mechanism=config.mechanism, config=config, accountant=config.accountant, delta=config.delta,
        confidence=confidence, epsilon_claimed=game.epsilon_claimed(), epsilon_canary=game.epsilon_canary(),
        epsilon_lower=bound.epsilon_lower, epsilon_point=bound.epsilon_point, threshold=bound.threshold,
        tpr=bound.tpr, fpr=bound.fpr, tpr_lower=bound.tpr_lower, fpr_upper=bound.fpr_upper, trials=2 * per_world,
        evaluation_trials=bound.n_in, scores_in=scores_in, scores_out=scores_out, roc_fpr=roc_fpr, roc_tpr=roc_tpr,
        mu_lower=gdp.mu_lower, mu_point=gdp.mu_point, epsilon_gdp=gdp.epsilon, mu_claimed=game.mu_claimed(),
        noise_scale=config.noise_scale, statistic=game.statistic, neighbours=game.neighbours,
        wall_seconds=time.perf_counter() - start)

