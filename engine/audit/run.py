"""Run an audit: play the game, bound epsilon, and say what it costs before it runs."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from engine.audit.config import ServerAudit, VoteAudit
from engine.audit.fbo_server import ServerGame
from engine.audit.game import chunk_trials, play
from engine.audit.hype_votes import VoteGame
from engine.audit.result import AuditResult
from engine.audit.stats import CONFIDENCE, epsilon_lower_bound, gdp_lower_bound, roc_curve
from engine.blas import single_threaded_blas
from engine.limits import Cost, knob_ranking

# Measured on the 2-core development machine (benchmarks/bench_audit.py and the
# README's audit section), rounded up: seconds per trial and release are
# OVERHEAD + PER_ELEMENT x (elements the mechanism touches per trial and release);
# a chunk needs a few arrays of its largest size (the mechanism's temporaries),
# and every trial keeps 3 float64 (its score, the sorted halves).
OVERHEAD_SECONDS = {"fbo-server": 1.0e-6, "hype-votes": 0.2e-6}
PER_ELEMENT_SECONDS = {"fbo-server": 2.0e-8, "hype-votes": 1.8e-8}
CHUNK_ARRAYS = 6
BYTES_PER_TRIAL = 3 * 8


@dataclass(frozen=True)
class AuditCost:
    """What an audit will ask of the machine, known before it runs.

    ``work``: array elements the mechanism touches, trials x steps x agents x
    features for the server, trials x candidates (x clients for secure
    summation) for the votes; ``peak_bytes`` (beyond the interpreter's
    imports) and ``seconds`` are upper estimates from measured constants.
    """

    work: int
    chunk_trials: int
    peak_bytes: int
    seconds: float


def _game(config):
    if isinstance(config, ServerAudit):
        return ServerGame(config)
    if isinstance(config, VoteAudit):
        return VoteGame(config)
    raise TypeError(f"Not an audit configuration: {type(config).__name__}.")


def _elements_per_trial(config) -> tuple[int, int]:
    """(elements of the largest per-trial array, how many times the mechanism touches that many)."""
    if isinstance(config, ServerAudit):
        return config.agents * config.features, config.steps
    return config.candidates, (config.clients if config.aggregation == "secure-sum" else 1)


def estimate(config) -> AuditCost:
    """The cost of ``run_audit(config)``, without running it (for a host's limits and the page)."""
    if not isinstance(config, (ServerAudit, VoteAudit)):
        raise TypeError(f"Not an audit configuration: {type(config).__name__}.")
    largest, repeats = _elements_per_trial(config)
    chunk = chunk_trials(largest, repeats)
    work = int(config.trials) * largest * repeats
    peak = CHUNK_ARRAYS * min(chunk, config.trials) * largest * 8 + BYTES_PER_TRIAL * int(config.trials)
    per_release = OVERHEAD_SECONDS[config.mechanism] + PER_ELEMENT_SECONDS[config.mechanism] * largest
    return AuditCost(work=work, chunk_trials=chunk, peak_bytes=int(peak),
                     seconds=int(config.trials) * repeats * per_release)


AUDIT_USUAL = dict(trials=200_000, steps=1, agents=10, features=4, candidates=100, clients=250)


def audit_cost(config) -> Cost:
    """:func:`estimate` as the host's :class:`~engine.limits.Cost`, with the knob to lower first."""
    estimated = estimate(config)
    names = ("trials", "steps", "agents", "features") if isinstance(config, ServerAudit) else ("trials", "clients",
                                                                                             "candidates")
    knobs = [(name, getattr(config, name), AUDIT_USUAL[name], 1) for name in names]
    ranked = knob_ranking(knobs)
    return Cost(seconds=estimated.seconds, memory_mb=estimated.peak_bytes / 1e6, field=ranked[0], knobs=ranked)


def run_audit(config, *, progress: Callable[[int, int], None] | None = None,
              cancel: Callable[[], bool] | None = None, confidence: float = CONFIDENCE) -> AuditResult:
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
    """
    start = time.perf_counter()
    game = _game(config)
    per_world = int(config.trials) // 2
    with single_threaded_blas():
        scores_in, scores_out = play(game, per_world, config.seed, progress, cancel)
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

