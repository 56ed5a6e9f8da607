"""The curator of PO-GP-UCB (Algorithm 1 of Kharkovskii et al., ICML 2020).

The curator centres its n x d inputs, draws a d x r Gaussian matrix M and
releases ``Z = r^(-1/2) X M``. When the smallest singular value of the centred
inputs is below the threshold ``omega`` every singular value is first lifted to
``sqrt(s^2 + omega^2)`` (line 9), which is what makes the release
(epsilon, delta)-differentially private (Theorem 1) at the price of distorting
pairwise distances by up to ``C' = 1 + omega^2 / sigma_min^2`` (Theorem 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.validation import check_int, check_positive, check_probability_open

BRANCH_PRESERVE = "preserve"  # sigma_min >= omega: line 7, distances approximately preserved
BRANCH_LIFT = "lift"          # sigma_min < omega: lines 9-10, singular values lifted first


def omega(r, epsilon: float, delta: float):
    """Threshold of line 5: ``16 sqrt(r log(2/delta)) log(16 r/delta) / epsilon``.

    ``r`` may be a scalar or an array; the result has its shape.
    """
    r = np.asarray(r, dtype=float)
    value = 16.0 * np.sqrt(r * np.log(2.0 / delta)) * np.log(16.0 * r / delta) / epsilon
    return float(value) if value.ndim == 0 else value


def centre(X: np.ndarray) -> np.ndarray:
    """Line 2: subtract the column means."""
    X = np.asarray(X, dtype=float)
    return X - X.mean(axis=0, keepdims=True)


def singular_values(X: np.ndarray) -> np.ndarray:
    """Singular values of the centred inputs, largest first (min(n, d) of them)."""
    return np.linalg.svd(centre(X), compute_uv=False)


def sigma_min(X: np.ndarray) -> float:
    """Smallest singular value of the centred n x d inputs (the last of min(n, d))."""
    return float(singular_values(X)[-1])


def max_admissible_r(sigma: float, epsilon: float, delta: float, candidates=None) -> int:
    """Largest r with ``omega(r) <= sigma`` (0 when even r = 1 fails).

    ``omega`` increases with r (both sqrt(r) and log(16 r / delta) do, since
    16 / delta > 1), so the admissible r form a prefix 1..r_max: found here by
    doubling then bisection. With ``candidates`` (e.g. the r values a paper
    table tries) the largest admissible one among them is returned, 0 if none.
    """
    if candidates is not None:
        ok = [int(r) for r in candidates if omega(int(r), epsilon, delta) <= sigma]
        return max(ok) if ok else 0
    if omega(1, epsilon, delta) > sigma:
        return 0
    lo, hi = 1, 2
    while omega(hi, epsilon, delta) <= sigma:
        lo, hi = hi, hi * 2
        if hi > 2**40:  # sigma is astronomically large relative to omega; nothing practical beyond this
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if omega(mid, epsilon, delta) <= sigma:
            lo = mid
        else:
            hi = mid
    return lo


def lift_singular_values(Xc: np.ndarray, w: float) -> np.ndarray:
    """Line 9: ``U sqrt(Sigma^2 + omega^2 I) V^T``, every singular value s raised to sqrt(s^2 + omega^2).

    The thin SVD is enough: the n x d diagonal of line 9 holds the min(n, d)
    singular values only. Rows stay centred (U's columns are orthogonal to 1).
    """
    U, s, Vt = np.linalg.svd(np.asarray(Xc, float), full_matrices=False)
    return (U * np.sqrt(s**2 + w**2)) @ Vt


@dataclass(frozen=True)
class Release:
    """What the curator computed: the released ``Z`` and how it got there."""

    Z: np.ndarray            # n x r, the only thing the modeler sees
    X_centred: np.ndarray    # n x d, kept by the curator
    M: np.ndarray            # d x r projection matrix
    branch: str              # BRANCH_PRESERVE or BRANCH_LIFT
    sigma_min: float
    omega: float
    r: int

    @property
    def distortion_bound(self) -> float:
        """C' of Theorem 2: 1 when distances are preserved, 1 + omega^2 / sigma_min^2 otherwise."""
        if self.branch == BRANCH_PRESERVE:
            return 1.0
        return float("inf") if self.sigma_min == 0 else 1.0 + self.omega**2 / self.sigma_min**2


def release(X: np.ndarray, epsilon: float, delta: float, r: int, rng: np.random.Generator) -> Release:
    """Run Algorithm 1 on the n x d inputs ``X`` and return the release.

    Parameters
    ----------
    X : array (n, d)
        The curator's original inputs (not necessarily centred).
    epsilon, delta : float
        DP parameters of Definition 2; epsilon > 0, delta in (0, 1).
    r : int
        Projection dimension (r >= 1).
    rng : numpy.random.Generator
        Source of the projection matrix M.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability_open("delta", delta)
    r = check_int("r", r, 1)
    Xc = centre(X)
    M = rng.standard_normal((Xc.shape[1], r))
    smin = float(np.linalg.svd(Xc, compute_uv=False)[-1])
    w = omega(r, epsilon, delta)
    if smin >= w:
        branch, source = BRANCH_PRESERVE, Xc
    else:
        branch, source = BRANCH_LIFT, lift_singular_values(Xc, w)
    Z = source @ M / np.sqrt(r)
    return Release(Z=Z, X_centred=Xc, M=M, branch=branch, sigma_min=smin, omega=w, r=r)
