"""How well the release preserves pairwise distances (Lemma 1, Theorem 2).

For a pair of rows the distortion is ``|z - z'|^2 / |x - x'|^2`` with z the
released row (which already carries the factor r^(-1/2) of Algorithm 1, so this
is Lemma 1's ``r^-1 |xM - x'M|^2 / |x - x'|^2``) and x the centred original.
Theorem 2 bounds it, for all pairs with probability >= 1 - mu, by
``[1 - nu, (1 + nu) C']`` when ``r >= 8 log(n^2 / mu) / nu^2``.
"""

from __future__ import annotations

import math

import numpy as np


def sample_pairs(n: int, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pairs (i, j) of distinct rows, drawn uniformly."""
    i = rng.integers(0, n, size=count)
    j = (i + rng.integers(1, n, size=count)) % n  # uniform over the n - 1 other rows
    return i, j


def pair_ratios(X: np.ndarray, Z: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``|Z_i - Z_j|^2 / |X_i - X_j|^2`` for the given pairs (pairs of identical x dropped)."""
    dx = ((X[i] - X[j]) ** 2).sum(1)
    dz = ((Z[i] - Z[j]) ** 2).sum(1)
    keep = dx > 0
    return dz[keep] / dx[keep]


def all_pair_ratios(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """The ratio for every pair i < j (for small n)."""
    i, j = np.triu_indices(X.shape[0], k=1)
    return pair_ratios(X, Z, i, j)


def lemma1_min_r(n: int, nu: float, mu: float) -> int:
    """Smallest r satisfying Lemma 1's ``r >= 8 log(n^2 / mu) / nu^2``."""
    return int(math.ceil(8.0 * math.log(n**2 / mu) / nu**2))


def lemma1_nu(n: int, r: int, mu: float) -> float:
    """The accuracy nu Lemma 1 guarantees at dimension r (may exceed its 1/2 limit for small r)."""
    return math.sqrt(8.0 * math.log(n**2 / mu) / r)


def theorem2_band(nu: float, c_prime: float) -> tuple[float, float]:
    """Theorem 2's band ``[1 - nu, (1 + nu) C']`` for the distortion of every pair."""
    return 1.0 - nu, (1.0 + nu) * c_prime
