"""A many-trial audit's bound from counts on a fixed grid of thresholds, every threshold at once.

Why counts on a grid
    Each attack statistic gets a grid of :data:`GRID_POINTS` thresholds (fewer below 10,000 trials per world:
    one per 25 trials, at least 20), fixed before the audit's trials are
    played: a pilot of its own (trials with seeds the audit never uses again) gives the statistic's range, which
    :func:`pilot_grid` widens to where the largest and smallest of all the trials are expected. Each chunk of
    trials is reduced to how many scores fall between consecutive thresholds (:meth:`ScoreGrid.counts`): memory
    no longer grows with the trials (10^8 trials are a few arrays of 401 counts, not 1.6 GB of scores), and the
    chunks' counts simply add up, on any executor. Where the grid is placed changes only the audit's power,
    never the validity of its bound.

The bound (simultaneous over the grid, all trials used)
    For a threshold tau, TPR(tau) = P[score >= tau | D] and FPR(tau) = P[score >= tau | D'].
    Each world's exceedance count at each of the K grid thresholds of each of the S statistics gets an exact
    one-sided Clopper-Pearson bound (TPR from below, FPR from above) at level alpha_w / (K S), with alpha_w =
    1 - sqrt(confidence). By the union bound all K S bounds of a world hold together with probability at
    least 1 - alpha_w; the two worlds' trials are independent, so both worlds' bounds hold together with
    probability at least confidence. On that event every threshold's pair proves its epsilon
    (:func:`engine.audit.stats.epsilon_from_rates`, both DP inequalities), so the largest of them is a lower
    confidence bound on the mechanism's epsilon, and the same event makes
    max over thresholds of Phi^-1(TPR_lo) - Phi^-1(FPR_hi) a lower confidence bound on its Gaussian-DP mu
    (a mu-GDP mechanism has TPR <= Phi(Phi^-1(FPR) + mu) at every threshold, whatever its statistic).

    What it replaces, and what else was weighed (q = 0.25, z = 1, one release, delta = 1e-5, claim 2.707,
    from the exact rates of the likelihood-ratio attack; benchmarks/bench_audit.py measures it):

    - one threshold chosen on half of the trials and the bound on the other half (the audit before): the
      same expected bound as this one at 10^6 to 2 x 10^8 trials (0.58, 0.77, 0.89, 0.93 x the claim at
      10^6, 10^7, 10^8, 2 x 10^8 over 40 simulated repetitions each), with more spread, and it has to keep
      every score to choose its threshold;
    - the Dvoretzky-Kiefer-Wolfowitz band (a simultaneous band over all thresholds, Massart's constant): its
      width sqrt(log(2 / alpha) / (2 n)) is additive, 2e-4 at 10^8 trials, while the strongest tests sit at
      an FPR of a few 1e-6; the best it proves at 10^8 trials is 1.45 (0.53 x the claim), less than the old
      audit at 10^6;
    - an exact simultaneous band on the order statistics (the per-rank level calibrated on the joint law of
      uniform order statistics): over 240 log-spaced ranks it needs a per-rank level of about alpha / 36,
      i.e. it is Bonferroni over about 36 thresholds instead of the 400 (800 with two statistics) here, which
      would raise the bound by 0.04 to 0.05 nats at 10^8 trials (2.43 against 2.39 and 2.38), at the price of
      a calibration by simulation;
    - the single best threshold chosen without looking at the data (the ceiling of every method): 0.93 x the
      claim at 10^8 trials.

    The trial count is what tightens a subsampled mechanism's bound; the grid keeps the audit's memory flat
    so that the trials a minute of CPU affords (about 10^8 on the 2-core machine) can all be used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from engine.audit.stats import (
    CONFIDENCE,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_from_rates,
    gdp_epsilon,
    per_world_level,
)

GRID_POINTS = 400        # thresholds per statistic (fewer for a small audit, GRID_TRIALS_PER_POINT trials each)
GRID_TRIALS_PER_POINT = 25
GRID_LEAST = 20
PILOT_TRIALS = 20_000    # per world, for the engine's games (a Flower strategy's game reuses its own pilot)
GRID_PAD = 0.05          # of the pilot's range, beyond its widened ends
ROC_POINTS = 200


@dataclass(frozen=True)
class ScoreGrid:
    """``size`` evenly spaced thresholds from ``low`` to ``high``; ``counts`` bins scores between them."""

    low: float
    high: float
    size: int = GRID_POINTS

    @property
    def thresholds(self) -> np.ndarray:
        return np.linspace(self.low, self.high, self.size)

    def counts(self, scores) -> np.ndarray:
        """How many scores fall below the first threshold, between each two, and at or above the last:
        ``len(thresholds) + 1`` counts (bin b holds the scores with exactly b thresholds at or below them)."""
        thresholds = self.thresholds
        index = np.searchsorted(thresholds, np.asarray(scores, dtype=float).ravel(), side="right")
        return np.bincount(index, minlength=len(thresholds) + 1).astype(np.int64)


def pilot_grid(pilot_scores, trials_per_world: int, pilot_per_world: int) -> ScoreGrid:
    """The grid for ``trials_per_world`` trials from a pilot's scores (both worlds pooled, ``pilot_per_world``
    each): the pilot's range widened about its median by sqrt(log n / log n_pilot), the growth of the most
    extreme of n Gaussian draws, and a little more. Fixed before the audit's own trials."""
    scores = np.asarray(pilot_scores, dtype=float).ravel()
    scores = scores[np.isfinite(scores)]
    if scores.size == 0:
        return ScoreGrid(-1.0, 1.0)
    low, high, middle = float(scores.min()), float(scores.max()), float(np.median(scores))
    grow = math.sqrt(math.log(max(trials_per_world, 3)) / math.log(max(pilot_per_world, 3)))
    low, high = middle - (middle - low) * max(grow, 1.0), middle + (high - middle) * max(grow, 1.0)
    pad = GRID_PAD * (high - low) or max(1e-9, 1e-9 * abs(middle))
    # A small audit cannot tell 400 thresholds apart, and each one shares the confidence: fewer of them.
    size = int(min(GRID_POINTS, max(GRID_LEAST, int(trials_per_world) // GRID_TRIALS_PER_POINT)))
    return ScoreGrid(low - pad, high + pad, size)


def exceedances(counts: np.ndarray) -> np.ndarray:
    """Scores at or above each threshold, from :meth:`ScoreGrid.counts`."""
    counts = np.asarray(counts, dtype=np.int64)
    return np.cumsum(counts[::-1])[::-1][1:]


def _mu(tpr, fpr) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = sps.norm.ppf(np.asarray(tpr, dtype=float)) - sps.norm.ppf(np.asarray(fpr, dtype=float))
    return np.where(np.isnan(mu), 0.0, np.maximum(mu, 0.0))


@dataclass(frozen=True)
class GridBound:
    """What the simultaneous bounds prove, and at which threshold of which statistic.

    ``epsilon_lower`` (and ``mu_lower``) hold with ``confidence``; ``epsilon_point`` is the same formula on the
    raw rates at the chosen threshold; ``tests`` the thresholds the confidence is shared over."""

    statistic: str
    threshold: float
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    epsilon_lower: float
    epsilon_point: float
    mu_lower: float
    mu_point: float
    mu_statistic: str
    mu_threshold: float
    epsilon_gdp: float
    trials_per_world: int
    tests: int
    per_test_level: float
    confidence: float = CONFIDENCE


@dataclass
class Tally:
    """Counts of every statistic in both worlds: ``counts[statistic] = (counts_in, counts_out)``."""

    grids: dict
    counts: dict = field(default_factory=dict)
    trials: int = 0           # per world

    def add(self, statistic: str, world: str, counts: np.ndarray) -> None:
        pair = self.counts.setdefault(statistic, [np.zeros(len(self.grids[statistic].thresholds) + 1, np.int64),
                                                  np.zeros(len(self.grids[statistic].thresholds) + 1, np.int64)])
        pair[0 if world == "in" else 1] += counts

    @property
    def tests(self) -> int:
        return sum(len(grid.thresholds) for grid in self.grids.values())


def grid_bound(tally: Tally, delta: float, confidence: float = CONFIDENCE) -> GridBound:
    """The largest epsilon (and mu) any threshold of any statistic proves, all bounds holding together."""
    n = int(tally.trials)
    level = per_world_level(confidence) / tally.tests
    best = dict(eps=-1.0, mu=-1.0)
    for statistic, (counts_in, counts_out) in tally.counts.items():
        thresholds = tally.grids[statistic].thresholds
        tp, fp = exceedances(counts_in), exceedances(counts_out)
        tpr_lo, fpr_hi = clopper_pearson_lower(tp, n, level), clopper_pearson_upper(fp, n, level)
        eps = epsilon_from_rates(tpr_lo, fpr_hi, delta)
        mu = _mu(tpr_lo, fpr_hi)
        i, j = int(np.argmax(eps)), int(np.argmax(mu))
        if eps[i] > best["eps"]:
            best.update(eps=float(eps[i]), statistic=statistic, threshold=float(thresholds[i]), tpr=tp[i] / n,
                        fpr=fp[i] / n, tpr_lower=float(tpr_lo[i]), fpr_upper=float(fpr_hi[i]))
        if mu[j] > best["mu"]:
            best.update(mu=float(mu[j]), mu_statistic=statistic, mu_threshold=float(thresholds[j]),
                        mu_point=float(_mu(tp[j] / n, fp[j] / n)))
    return GridBound(statistic=best["statistic"], threshold=best["threshold"], tpr=float(best["tpr"]),
                     fpr=float(best["fpr"]), tpr_lower=best["tpr_lower"], fpr_upper=best["fpr_upper"],
                     epsilon_lower=best["eps"],
                     epsilon_point=float(epsilon_from_rates(best["tpr"], best["fpr"], delta)),
                     mu_lower=best["mu"], mu_point=best["mu_point"], mu_statistic=best["mu_statistic"],
                     mu_threshold=best["mu_threshold"], epsilon_gdp=gdp_epsilon(best["mu"], delta),
                     trials_per_world=n, tests=tally.tests, per_test_level=level, confidence=confidence)


def roc_points(counts_in: np.ndarray, counts_out: np.ndarray, points: int = ROC_POINTS
               ) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) of "score >= tau" at the grid's thresholds, all trials (sorted by FPR)."""
    n_in, n_out = int(np.sum(counts_in)), int(np.sum(counts_out))
    fpr = exceedances(counts_out) / max(n_out, 1)
    tpr = exceedances(counts_in) / max(n_in, 1)
    keep = np.unique(np.linspace(0, len(fpr) - 1, min(points, len(fpr))).round().astype(int))
    keep = np.union1d(keep, np.flatnonzero((fpr > 0) & (fpr < 0.05)))      # the tail the strongest tests use
    order = np.lexsort((tpr[keep], fpr[keep]))
    return fpr[keep][order], tpr[keep][order]
