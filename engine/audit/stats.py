"""The inequalities an audit's error rates are held to, and exact binomial confidence bounds.

A mechanism M that is (epsilon, delta)-DP satisfies, for neighbouring inputs D
("in") and D' ("out") and every test "score >= tau",

    TPR <= e^eps FPR + delta   and   1 - FPR <= e^eps (1 - TPR) + delta,

with TPR = P[score >= tau | D] and FPR = P[score >= tau | D'] (the second is
the first with the roles of D and D' swapped; both relations the engine uses,
add/remove and replace-one, are symmetric). So any pair (TPR, FPR)
proves epsilon >= max(log((TPR - delta) / FPR), log((1 - FPR - delta) / (1 - TPR))),
and both use only a lower bound on TPR and an upper bound on FPR. The rates get
exact one-sided Clopper-Pearson bounds (Jagielski et al. 2020; Nasr et al. 2023);
:mod:`engine.audit.bands` makes them hold at every threshold at once.

A mu-GDP mechanism (Dong, Roth and Su 2019) has TPR <= Phi(Phi^-1(FPR) + mu) at
every threshold, so mu >= Phi^-1(TPR) - Phi^-1(FPR), and mu converts to epsilon at
delta exactly (:func:`gdp_epsilon`). That epsilon is the mechanism's only if its
trade-off is Gaussian (one Gaussian release such as a DP-HYPE vote, or the server at
q = 1); for subsampled releases it is a summary, never the verdict.
"""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np
from scipy import stats

CONFIDENCE = 0.95


def per_world_level(confidence: float) -> float:
    """Miss probability of each world's one-sided bound so that both hold with ``confidence``."""
    return 1.0 - math.sqrt(confidence)


def clopper_pearson_lower(successes, trials, alpha: float) -> np.ndarray:
    """Exact one-sided lower bound: P[p >= bound] >= 1 - alpha."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, bound)


def clopper_pearson_upper(successes, trials, alpha: float) -> np.ndarray:
    """Exact one-sided upper bound: P[p <= bound] >= 1 - alpha."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, bound)


def epsilon_from_rates(tpr, fpr, delta: float) -> np.ndarray:
    """The largest epsilon the pair (TPR, FPR) proves at delta (0 when it proves nothing)."""
    tpr = np.asarray(tpr, dtype=float)
    fpr = np.asarray(fpr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        high = np.log(np.maximum(tpr - delta, 0.0) / fpr)
        low = np.log(np.maximum(1.0 - fpr - delta, 0.0) / (1.0 - tpr))
    out = np.fmax(high, low)
    return np.where(np.isnan(out), 0.0, np.maximum(out, 0.0))


def max_tpr(epsilon: float, delta: float, fpr) -> np.ndarray:
    """The highest TPR an (epsilon, delta)-DP mechanism allows at each FPR (the curve beside a ROC)."""
    fpr = np.asarray(fpr, dtype=float)
    bound = np.minimum(math.exp(epsilon) * fpr + delta, 1.0 - math.exp(-epsilon) * (1.0 - delta - fpr))
    return np.clip(bound, 0.0, 1.0)


def gdp_epsilon(mu: float, delta: float) -> float:
    """epsilon at delta of a mu-GDP mechanism: the Gaussian mechanism with noise 1/mu (exact)."""
    if mu <= 0:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    return float(dpa.gaussian_mechanism.get_epsilon_gaussian(1.0 / mu, delta))
