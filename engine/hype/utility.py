"""Utility of DP-HYPE: the vote gap gamma, Theorem V.1's bound, and confidence intervals."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054  # two-sided 95 % normal quantile


def vote_gap(votes: np.ndarray, good: np.ndarray) -> np.ndarray:
    """gamma of Eq. (3): fewest votes of a good candidate minus most votes of a bad one.

    ``votes`` (..., P) clean (noise-free) votes, ``good`` (P,) bool. With no
    bad candidate the gap is +inf (every output is good).
    """
    votes = np.asarray(votes, dtype=float)
    good = np.asarray(good, dtype=bool)
    if good.all():
        return np.full(votes.shape[:-1], np.inf)
    least_good = np.where(good, votes, np.inf).min(axis=-1)
    most_bad = np.where(good, -np.inf, votes).max(axis=-1)
    return least_good - most_bad


def success_bound(votes: np.ndarray, good: np.ndarray, sigma) -> np.ndarray:
    """Theorem V.1: P[output is good | clean votes] >= 1 - |H_bad| sigma / (gamma sqrt(pi)) exp(-gamma^2 / (4 sigma^2)).

    Clipped to [0, 1]: a gap gamma <= 0 (a bad candidate has at least as many
    clean votes as some good one) leaves the bound vacuous, 0. ``sigma`` is the
    standard deviation of the noise on the sum (it broadcasts over the leading
    axes of ``votes``); sigma = 0 with gamma > 0 gives 1.
    """
    gamma = vote_gap(votes, good)
    sigma = np.broadcast_to(np.asarray(sigma, dtype=float), gamma.shape)
    n_bad = int(np.sum(~np.asarray(good, dtype=bool)))
    out = np.zeros(gamma.shape)
    positive = gamma > 0
    noiseless = positive & (sigma == 0)
    out[noiseless | (positive & np.isinf(gamma))] = 1.0
    regular = positive & (sigma > 0) & np.isfinite(gamma)
    g, s = gamma[regular], sigma[regular]
    out[regular] = 1.0 - n_bad * s / (g * math.sqrt(math.pi)) * np.exp(-(g ** 2) / (4.0 * s ** 2))
    return np.clip(out, 0.0, 1.0)


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95 % by default)."""
    if trials <= 0:
        return (0.0, 1.0)
    phat = successes / trials
    denom = 1.0 + z * z / trials
    centre = (phat + z * z / (2 * trials)) / denom
    half = z * math.sqrt(phat * (1 - phat) / trials + z * z / (4 * trials * trials)) / denom
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= trials else min(1.0, centre + half)
    return (low, high)


def mean_interval(values: np.ndarray) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its 95 % interval (Student t; a point when fewer than 2 values)."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean()) if values.size else math.nan
    if values.size < 2:
        return mean, mean, mean
    from scipy.stats import t

    half = float(t.ppf(0.975, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size))
    return mean, mean - half, mean + half
