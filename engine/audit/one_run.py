"""A lower bound on epsilon from one run: m canaries, each in with probability 1/2, and the auditor's guesses.

The game (Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
arXiv 2305.08846)
    Each of m canaries is included in the run independently with probability 1/2 (S_i = +1 or -1); the
    mechanism runs once; the auditor scores every canary from the output alone and guesses "in" for its k+
    highest scores, "out" for its k- lowest and abstains on the rest (r = k+ + k- guesses). If the mechanism is
    (epsilon, delta)-DP with respect to each canary, the number W of correct guesses satisfies

        P[W >= v] <= beta + alpha * 2 m delta,    beta = P[Binomial(r, p) >= v],  p = e^eps / (1 + e^eps),
        alpha = max over i in 1..v of P[v > Binomial(r, p) >= v - i] / i

    (their Theorem for approximate DP; with delta = 0 it is the binomial tail of randomized response alone).
    The bound :func:`steinke_epsilon` is the largest epsilon this p-value rejects at the chosen level.
The f-DP sharpening (Mahloujifar, Melis and Chaudhuri, "Auditing f-Differential Privacy in One Run",
arXiv 2410.22235, their Algorithm 3 with the Gaussian trade-off curves)
    The same guesses tested against the hypothesis that the mechanism's trade-off curve is the Gaussian
    mechanism's with (epsilon, delta) (:func:`fdp_epsilon`). It rejects more (it uses the whole curve, not one
    point), and it is a lower bound on epsilon when the run's trade-off is Gaussian (many composed releases
    are close to it); for any other mechanism it bounds the Gaussian curve it is not, so the verdict is
    Steinke et al.'s bound and the f-DP one is reported beside it.
Choosing the guesses
    The number of guesses and the statistic are chosen after seeing which guesses were right, so every
    candidate pays: :func:`one_run_bound` tries each statistic with guess fractions :data:`FRACTIONS` of m,
    one-sided (k- = 0) and two-sided (k+ = k-), and holds each at level (1 - confidence) / candidates (a union
    bound), as jax_privacy's auditing module does over thresholds.

The formulas are the papers'; the code is this module's (the authors' and jax_privacy's implementations were
read, not copied). ``tests/test_audit_one_run.py`` checks them against values jax_privacy's tests publish.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import dp_accounting as dpa
import numpy as np
from scipy import optimize, special
from scipy import stats as sps

from engine.audit.stats import CONFIDENCE

FRACTIONS = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
EPSILON_CEILING = 60.0     # no one-run audit of fewer than 10^20 canaries proves more
NESTED = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
FDP_CANDIDATES = 6


def steinke_p_value(m: int, r: int, v: int, epsilon: float, delta: float, block: int = 256) -> float:
    """P[at least v of r guesses right] if the mechanism is (epsilon, delta)-DP per canary (m canaries)."""
    if v <= 0:
        return 1.0
    p = float(special.expit(epsilon))
    beta = float(sps.binom.sf(v - 1, r, p))
    if delta <= 0:
        return beta
    # alpha = max over i of P[v - i <= Binomial <= v - 1] / i: the partial sums of the pmf downwards from v - 1.
    # A term is at most 1 / i, so the blocks stop once 1 / i cannot beat the largest term so far.
    alpha, total, start = 0.0, 0.0, 1
    while start <= v and 1.0 / start > alpha:
        i = np.arange(start, min(v, start + block - 1) + 1)
        sums = total + np.cumsum(sps.binom.pmf(v - i, r, p))
        alpha = max(alpha, float(np.max(sums / i)))
        total, start = float(sums[-1]), int(i[-1]) + 1
        block *= 2
    return min(beta + alpha * delta * 2 * m, 1.0)


def _largest(rejects, lowest: float = 0.0) -> float:
    """The largest epsilon at which ``rejects(epsilon)`` holds (it holds on [0, e*) and not above), or 0."""
    if not rejects(lowest):
        return lowest
    high = max(1.0, 2.0 * lowest)
    while rejects(high):
        lowest, high = high, 2.0 * high
        if high > EPSILON_CEILING:
            return EPSILON_CEILING
    return float(optimize.brentq(lambda e: 1.0 if rejects(e) else -1.0, lowest, high, xtol=1e-6))


def pure_epsilon(r: int, v: int, significance: float) -> float:
    """The bound with delta = 0, at least the bound with any delta > 0: P[Binomial(r, p) >= v] <= significance
    exactly when p is at most the Beta(v, r - v + 1) quantile at ``significance`` (the Clopper-Pearson lower
    bound), so epsilon = logit of that quantile."""
    if v <= 0 or r <= 0:
        return 0.0
    p = float(sps.beta.ppf(significance, v, r - v + 1))
    return max(0.0, math.log(p / (1.0 - p))) if p < 1 else EPSILON_CEILING


def steinke_epsilon(m: int, r: int, v: int, significance: float, delta: float, grid: int = 32) -> float:
    """The largest epsilon whose (epsilon, delta) claim v correct guesses of r reject at ``significance``.

    An (epsilon, delta)-DP mechanism is (epsilon', delta)-DP for every epsilon' >= epsilon, so rejecting any
    epsilon' rejects every smaller epsilon: the bound is the largest epsilon the p-value rejects. With delta > 0
    the p-value is not monotone in epsilon (its delta term grows again as p nears 1), so it is scanned on a grid
    up to where the delta-free tail beta alone stops rejecting (beta <= p-value), and the last rejection refined.
    """
    top = pure_epsilon(r, v, significance)
    if delta <= 0 or top <= 0:
        return top
    points = np.linspace(0.0, top, grid + 1)
    rejected = [e for e in points if steinke_p_value(m, r, v, e, delta) <= significance]
    if not rejected:
        return 0.0
    last = max(rejected)
    upper = min(last + top / grid, top)

    def margin(e: float) -> float:
        return significance - steinke_p_value(m, r, v, e, delta)

    if upper <= last or margin(upper) >= 0:
        return float(upper)
    return float(optimize.brentq(margin, last, upper, xtol=1e-6))


def _gaussian_inverse(epsilon: float, delta: float):
    """x -> Phi(Phi^-1(x) - 1 / sigma): the inverse blow-up of the Gaussian mechanism with (epsilon, delta)."""
    sigma = float(dpa.get_sigma_gaussian(epsilon, delta))
    if sigma <= 0:
        return lambda x: float(x >= 1.0)
    shift = 1.0 / sigma
    return lambda x: float(sps.norm.cdf(sps.norm.ppf(min(max(x, 0.0), 1.0)) - shift))


def fdp_rejects(m: int, r: int, v: int, significance: float, epsilon: float, delta: float) -> bool:
    """Mahloujifar et al.'s Algorithm 3 with abstention: does the Gaussian (epsilon, delta) curve fail to explain
    v correct guesses of r among m canaries at ``significance``?"""
    inverse = _gaussian_inverse(epsilon, delta)
    right, wrong = significance * v / m, significance * (r - v) / m
    for i in range(v - 1, -1, -1):
        grown = max(wrong, inverse(right))
        if grown == wrong:
            break
        right = min(right + (i / (r - i)) * (grown - wrong), 1.0)
        wrong = grown
    return right + wrong > r / m


def fdp_epsilon(m: int, r: int, v: int, significance: float, delta: float) -> float:
    """The largest epsilon whose Gaussian trade-off curve the guesses reject (a bound if the run is Gaussian)."""
    if v <= 0 or r <= 0 or not fdp_rejects(m, r, v, significance, 1e-3, delta):
        return 0.0
    return _largest(lambda e: fdp_rejects(m, r, v, significance, e, delta), 1e-3)


@dataclass(frozen=True)
class Guess:
    """One candidate: ``statistic``, ``k_in`` highest scores guessed in, ``k_out`` lowest guessed out."""

    statistic: str
    k_in: int
    k_out: int
    correct: int

    @property
    def guesses(self) -> int:
        return self.k_in + self.k_out


@dataclass
class OneRunBound:
    """What the guesses prove. ``epsilon_lower``: Steinke et al.'s bound (the verdict); ``epsilon_fdp``: the f-DP
    one (a bound if the run's trade-off is Gaussian); ``best``/``best_fdp``: the candidates that gave them."""

    canaries: int
    included: int
    epsilon_lower: float
    epsilon_fdp: float
    best: Guess | None
    best_fdp: Guess | None
    candidates: int
    significance: float
    confidence: float = CONFIDENCE
    nested: list = field(default_factory=list)        # (canaries, epsilon_lower) on the first m' canaries


def guesses(scores: dict, included: np.ndarray) -> list[Guess]:
    """Every candidate of :func:`one_run_bound` with its count of correct guesses (ties broken by index)."""
    included = np.asarray(included, dtype=bool)
    m = len(included)
    out = []
    for name, values in scores.items():
        order = np.argsort(-np.asarray(values, dtype=float), kind="stable")
        right_in = np.concatenate([[0], np.cumsum(included[order])])          # correct "in" among the top k
        right_out = np.concatenate([[0], np.cumsum(~included[order[::-1]])])  # correct "out" among the bottom k
        for fraction in FRACTIONS:
            r = max(1, int(round(fraction * m)))
            out.append(Guess(name, r, 0, int(right_in[r])))
            if r >= 2:
                k_in, k_out = r // 2, r - r // 2
                out.append(Guess(name, k_in, k_out, int(right_in[k_in] + right_out[k_out])))
    return out


def one_run_bound(scores: dict, included, delta: float, confidence: float = CONFIDENCE, *, fdp: bool = True,
                  nested: bool = True) -> OneRunBound:
    """The one-run bound of canaries ``included`` (bool, one per canary) scored ``scores`` (name -> array).

    Every candidate guess set is held at level (1 - confidence) / candidates; the largest epsilon any of them
    proves is the bound (and likewise for the f-DP bound). ``nested``: the bound on the first 100, 300, 1000, ...
    canaries too (each its own one-run audit: the other canaries are part of the run).
    """
    included = np.asarray(included, dtype=bool)
    m = len(included)
    candidates = guesses(scores, included)
    significance = (1.0 - confidence) / len(candidates)
    best, best_eps = None, 0.0
    # The delta-free bound is at least the bound with delta: candidates in its decreasing order, until it cannot
    # beat the best so far.
    ceilings = sorted(((pure_epsilon(g.guesses, g.correct, significance), g) for g in set(candidates)),
                      key=lambda pair: (-pair[0], pair[1].statistic, pair[1].k_in, pair[1].k_out))
    for ceiling, guess in ceilings:
        if ceiling <= best_eps:
            break
        eps = steinke_epsilon(m, guess.guesses, guess.correct, significance, delta)
        if eps > best_eps:
            best, best_eps = guess, eps
    best_fdp, fdp_eps = None, 0.0
    if fdp:       # on the candidates whose delta-free bound is largest (its recursion is a loop per guess)
        for _, guess in ceilings[:FDP_CANDIDATES]:
            eps = fdp_epsilon(m, guess.guesses, guess.correct, significance, delta)
            if eps > fdp_eps:
                best_fdp, fdp_eps = guess, eps
    curve = []
    if nested:
        for size in NESTED:
            if size >= m:
                break
            part = one_run_bound({k: np.asarray(v)[:size] for k, v in scores.items()}, included[:size], delta,
                                 confidence, fdp=False, nested=False)
            curve.append((size, part.epsilon_lower))
        curve.append((m, best_eps))
    return OneRunBound(canaries=m, included=int(included.sum()), epsilon_lower=best_eps, epsilon_fdp=fdp_eps,
                       best=best, best_fdp=best_fdp, candidates=len(candidates), significance=significance,
                       confidence=confidence, nested=curve)


def randomized_response_ceiling(r: int, significance: float) -> float:
    """The most r guesses, all right, can prove (delta = 0): p^r = significance, epsilon = log(p / (1 - p));
    0 when even that many right guesses are not unlikely enough (r < log2(1 / significance))."""
    p = significance ** (1.0 / max(int(r), 1))
    return max(0.0, math.log(p / (1.0 - p))) if p < 1 else math.inf
