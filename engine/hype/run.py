"""Repeated DP-HYPE votes: the result record and the runner that yields it as it grows.

``iter_hype(config)`` yields a :class:`HypeResult` after every few hundred
repetitions (the page redraws its vote histograms from each), the last one
complete; ``run_hype(config)`` returns only the complete one. Results do not
depend on how often partial results are asked for.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from engine.cancel import checkpoint
from engine.hype.calibration import noise_summary
from engine.hype.config import HypeConfig
from engine.hype.setup import Setup, block_votes, make_setup
from engine.hype.simulation import block_length, block_rng, blocks
from engine.hype.utility import mean_interval, success_bound, vote_gap, wilson_interval
from engine.hype.voting import noisy_argmax, noisy_vote_sum, per_client_std, secure_sum_votes, sensitivity

DEFAULT_EVERY = 250


@dataclass
class HypeResult:
    """What repeated DP-HYPE votes showed so far (``complete`` once all repetitions ran).

    Vote vectors ``clean_votes``/``noisy_votes``/``winner`` are those of the
    last repetition; ``winner_counts`` counts the winners of all of them and
    ``winners`` (repetitions,) is the candidate each vote chose, in order
    (``labels``: the data mode's candidate hyperparameters, by index).
    ``noise_std`` is the standard deviation actually on the sum (after
    dropouts) and ``effective_epsilon`` the privacy it gives.
    """

    config: HypeConfig
    sigma: float
    epsilon: float
    noise_std: float
    effective_epsilon: float
    good: np.ndarray
    repetitions: int = 0
    complete: bool = False
    winner_counts: np.ndarray | None = None
    successes: int = 0
    bound_sum: float = 0.0
    clean_votes: np.ndarray | None = None
    noisy_votes: np.ndarray | None = None
    winner: int = -1
    clean_vote_sum: np.ndarray | None = None
    chosen_accuracy: list = field(default_factory=list)   # data mode: per repetition
    run_of: list = field(default_factory=list)            # data mode: run of each repetition
    test_accuracy: np.ndarray | None = None               # data mode: (runs, P)
    labels: tuple | None = None
    elapsed: float = 0.0
    stopped: str | None = None                            # why the votes ended early ("interrupted", ...)
    winner_blocks: list = field(default_factory=list)     # each block's winners, in order

    @property
    def winners(self) -> np.ndarray:
        """The candidate each repetition's vote chose, (repetitions,) int."""
        if not self.winner_blocks:
            return np.empty(0, dtype=np.int64)
        return np.concatenate(self.winner_blocks).astype(np.int64)

    @property
    def most_chosen(self) -> int | None:
        """The candidate chosen most often over the repetitions (the smallest index on a tie); None before any."""
        return int(np.argmax(self.winner_counts)) if self.repetitions else None

    @property
    def most_chosen_label(self) -> str | None:
        """Data mode: the hyperparameters of :attr:`most_chosen` (None in simulation mode or before any vote)."""
        chosen = self.most_chosen
        return None if chosen is None or self.labels is None else str(self.labels[chosen])

    # ------------------------------------------------------------------ summaries

    @property
    def success_rate(self) -> float:
        return self.successes / self.repetitions if self.repetitions else math.nan

    @property
    def success_ci(self) -> tuple[float, float]:
        return wilson_interval(self.successes, self.repetitions)

    @property
    def bound(self) -> float:
        """Mean over repetitions of Theorem V.1's bound given that repetition's clean votes.

        P[good] = E[P[good | clean votes]] >= E[bound], so this bounds the success rate.
        """
        return self.bound_sum / self.repetitions if self.repetitions else math.nan

    @property
    def gamma(self) -> float:
        """Vote gap of the last repetition's clean votes."""
        return float(vote_gap(self.clean_votes, self.good)) if self.clean_votes is not None else math.nan

    @property
    def bound_last(self) -> float:
        if self.clean_votes is None:
            return math.nan
        return float(success_bound(self.clean_votes, self.good, self.noise_std))

    @property
    def mean_clean_votes(self) -> np.ndarray | None:
        return None if self.clean_vote_sum is None else self.clean_vote_sum / max(1, self.repetitions)

    def accuracy_summary(self) -> dict:
        """Data mode: DP-HYPE, OPT and RANDGUESS accuracy, each with a 95 % interval.

        With several runs the intervals are over runs (DP-HYPE: each run's mean
        over its repetitions); with one run OPT and RANDGUESS are single values
        and DP-HYPE's interval is over the repetitions (the noise).
        """
        if self.test_accuracy is None or not self.chosen_accuracy:
            return {}
        chosen = np.asarray(self.chosen_accuracy, dtype=float)
        runs = np.asarray(self.run_of, dtype=int)
        opt = self.test_accuracy.max(axis=1)
        rand = self.test_accuracy.mean(axis=1)
        used = np.unique(runs)
        if len(self.test_accuracy) > 1 and len(used) > 1:
            hype = mean_interval([chosen[runs == run].mean() for run in used])
        else:
            hype = mean_interval(chosen)
        opt_ci, rand_ci = mean_interval(opt[used]), mean_interval(rand[used])
        return {
            "accuracy_dp_hype": hype[0], "accuracy_dp_hype_ci": [hype[1], hype[2]],
            "accuracy_opt": opt_ci[0], "accuracy_opt_ci": [opt_ci[1], opt_ci[2]],
            "accuracy_randguess": rand_ci[0], "accuracy_randguess_ci": [rand_ci[1], rand_ci[2]],
        }

    def to_json(self) -> dict:
        """The CLI's JSON record."""
        config = self.config
        out = {
            "mode": config.mode, "complete": self.complete, "repetitions": self.repetitions,
            "clients": config.clients, "candidates": config.p, "k": config.k, "delta": config.delta,
            "epsilon": self.epsilon, "sigma": self.sigma, "sensitivity": sensitivity(config.k),
            "per_client_std": per_client_std(self.sigma, config.clients, config.xi),
            "xi": config.xi, "dropped": config.dropped, "noise_std": self.noise_std,
            "effective_epsilon": self.effective_epsilon,
            "good": np.flatnonzero(self.good),
            "success_rate": self.success_rate, "success_ci": list(self.success_ci),
            "bound": self.bound, "bound_last": self.bound_last, "gamma": self.gamma,
            "clean_votes": self.clean_votes, "noisy_votes": self.noisy_votes, "winner": self.winner,
            "winner_counts": self.winner_counts, "mean_clean_votes": self.mean_clean_votes,
            "most_chosen": self.most_chosen, "most_chosen_label": self.most_chosen_label, "stopped": self.stopped,
            "elapsed_seconds": self.elapsed, "config": config.to_dict(),
        }
        if config.mode == "data":
            out.update(self.accuracy_summary())
            out["candidate_accuracy"] = self.test_accuracy.mean(axis=0)
            out["candidate_labels"] = list(self.labels)
            out["dataset"] = config.dataset
            out["alpha"] = config.alpha
        return out


def new_result(config: HypeConfig, setup: Setup) -> HypeResult:
    noise = noise_summary(config)
    result = HypeResult(config, noise.sigma, noise.epsilon, noise.actual, noise.actual_epsilon, setup.good.copy(),
                        winner_counts=np.zeros(setup.p, dtype=np.int64),
                        clean_vote_sum=np.zeros(setup.p, dtype=np.int64), labels=setup.labels)
    if config.mode == "data":
        result.test_accuracy = np.stack([table.test_accuracy for table in setup.tables])
    return result


def vote_block(setup: Setup, result: HypeResult, index: int, start: int, size: int) -> None:
    """Run repetitions start..start+size-1 (block ``index``) and add them to ``result``."""
    config = setup.config
    rng = block_rng(config.seed, index)
    secure = config.aggregation == "secure-sum"
    votes, survivors, runs, client = block_votes(setup, rng, start, size, [config.k], per_client=secure)
    votes = votes[0, 0]
    if secure:
        reporting = np.ones(client.shape[:2], dtype=bool) if survivors is None else survivors
        std = per_client_std(result.sigma, config.clients, config.xi)
        noisy = secure_sum_votes(client, reporting, std, rng)
    else:
        noisy = noisy_vote_sum(votes, result.noise_std, rng)
    ties = rng.random(votes.shape)
    winners = noisy_argmax(noisy, result.noise_std, ties)
    good = setup.good_of(runs)
    good = np.broadcast_to(good, votes.shape)
    won_good = good[np.arange(size), winners]
    result.successes += int(won_good.sum())
    if runs is None:
        result.bound_sum += float(success_bound(votes, setup.good, result.noise_std).sum())
    else:
        for run in np.unique(runs):
            rows = runs == run
            result.bound_sum += float(success_bound(votes[rows], setup.tables[run].good, result.noise_std).sum())
        result.chosen_accuracy.extend(result.test_accuracy[runs, winners].tolist())
        result.run_of.extend(runs.tolist())
        result.good = setup.tables[runs[-1]].good.copy()
    result.winner_counts += np.bincount(winners, minlength=setup.p)
    result.clean_vote_sum += votes.sum(axis=0)
    result.clean_votes = votes[-1].copy()
    result.noisy_votes = noisy[-1].copy()
    result.winner = int(winners[-1])
    result.winner_blocks.append(np.asarray(winners, dtype=np.int32))
    result.repetitions += size


def iter_hype(config: HypeConfig, every: int = DEFAULT_EVERY, load_table=None) -> Iterator[HypeResult]:
    """Yield the growing result after about every ``every`` repetitions; the last one is complete.

    Each yielded object is the same record, updated in place: copy what you
    need to keep. ``load_table`` replaces the disk-cached score table loader
    (see :func:`engine.hype.setup.make_setup`).
    """
    started = time.perf_counter()
    setup = make_setup(config, load_table)
    result = new_result(config, setup)
    length = block_length(config.clients, config.p)
    pending = 0
    plan = blocks(config.repetitions, length)
    for position, (index, size) in enumerate(plan):
        checkpoint()
        vote_block(setup, result, index, result.repetitions, size)
        pending += size
        last = position == len(plan) - 1
        if last or pending >= every:
            pending = 0
            result.complete = last
            result.elapsed = time.perf_counter() - started
            yield result


def run_hype(config: HypeConfig, load_table=None) -> HypeResult:
    """Run every repetition of ``config`` and return the complete result."""
    result = None
    for result in iter_hype(config, every=config.repetitions, load_table=load_table):
        pass
    return result
