"""The power of the whole decision rule: the chance that :func:`engine.reproduce.claims.decide` says "holds".

A claim holds only when it is decisive in discovery (its two-sided p below the paper's Benjamini-Hochberg
cut-off, in the paper's direction) AND its replication on fresh draws confirms it (one-sided, in the discovery's
direction, at ``ALPHA``). The power of one uncorrected test (the old ``detectable``: (t_0.975 + t_0.8) x s.e.)
overstates that chance: at that difference the rule says "holds" about 45 % of the time. Here:

- :func:`bh_cutoff` is the raw p below which a claim of the family is decisive (the largest sorted p_(k) with
  p_(k) <= k ALPHA / m; ALPHA / m when none is, the cut-off the first claim would need).
- :func:`rule_power` is P(holds) at a true difference ``effect`` (noncentral t for a difference, the normal
  law for an equivalence test): P(discovery decisive the paper's way) x P(replication confirms), the two seed
  sets independent.
- :func:`rule_detectable` is the difference at which that chance is 80 %.
- :func:`simulate_rule` runs the rule itself (the per-unit numbers drawn, t statistics, BH over the family, the
  replication) many times: the check of :func:`rule_power` (tests/test_verdict_power.py) and the way to price a
  design the formula does not cover.

``units`` is what the test counts: runs, or objective draws (functions) when runs share one (a claim's
``numbers["units"]``); the degrees of freedom are ``units - 1``.
"""

from __future__ import annotations

import math

import numpy as np

ALPHA = 0.05
TARGET = 0.8


def bh_cutoff(p_values, alpha: float = ALPHA) -> float:
    """The raw p-value at or below which a claim of this family is decisive under Benjamini-Hochberg."""
    p = np.sort(np.asarray([v for v in p_values if v is not None], float))
    m = len(p)
    if m == 0:
        return alpha
    passing = np.nonzero(p <= alpha * np.arange(1, m + 1) / m)[0]
    return float(p[passing[-1]]) if passing.size else alpha / m


def bh_cutoffs(p_values, alpha: float = ALPHA) -> list[float]:
    """For every claim, the raw p at or below which IT is decisive under Benjamini-Hochberg, the family's other
    p-values as they are: the largest k ALPHA / m such that at least k - 1 others are at or below it."""
    p = np.asarray(p_values, float)
    m = len(p)
    levels = alpha * np.arange(1, m + 1) / m
    below = np.array([(p <= level).sum() for level in levels])        # claims at or below each level, all of them
    out = []
    for value in p:
        others = below - (value <= levels)
        passing = np.nonzero(others + 1 >= np.arange(1, m + 1))[0]
        out.append(float(levels[passing[-1]]) if passing.size else alpha / m)
    return out


def _df(units) -> float:
    return float(max(int(units) - 1, 1)) if units is not None and units >= 2 else math.inf


def _tail(df: float, level: float) -> float:
    """The t quantile 1 - level (the normal's for infinite df)."""
    from scipy.stats import norm, t

    return float(norm.isf(level)) if math.isinf(df) else float(t.isf(level, df))


def _beyond(critical: float, effect: float, se: float, df: float) -> float:
    """P(T > critical) for T the t statistic of a difference ``effect`` measured with standard error ``se``."""
    from scipy.stats import nct, norm

    shift = effect / se
    return float(norm.sf(critical - shift)) if math.isinf(df) else float(nct.sf(critical, df, shift))


def _inside(margin: float, critical: float, effect: float, se: float) -> float:
    """P((margin - |D|) / se > critical) for D ~ N(effect, se^2): an equivalence test's decisive chance."""
    from scipy.stats import norm

    room = margin - critical * se
    if room <= 0:
        return 0.0
    return float(norm.cdf((room - effect) / se) - norm.cdf((-room - effect) / se))


def rule_power(effect: float, se: float, units: int | None, cutoff: float, *, rep_se: float | None = None,
               rep_units: int | None = None, margin: float | None = None, comparisons: int = 1,
               replicated: bool = True, alpha: float = ALPHA) -> float:
    """P(the rule says "holds") at a true difference ``effect`` (in the paper's favour).

    ``se``/``units``: the discovery's standard error and test units; ``cutoff``: the family's BH raw-p cut-off
    (:func:`bh_cutoff`); ``rep_se``/``rep_units``: the replication's (default: the discovery's); ``margin``: an
    equivalence claim's margin (``effect`` is then the true difference, 0 when the settings are alike);
    ``comparisons``: an any-of claim's m (Bonferroni); ``replicated=False``: the discovery alone.
    """
    if se is None or not (se > 0 and math.isfinite(se)):
        return math.nan
    # A replication without a spread (identical runs) or without numbers: plan it as the discovery's.
    rep_se = se if rep_se is None or not (rep_se > 0 and math.isfinite(rep_se)) else rep_se
    rep_units = units if rep_units is None else rep_units
    first = _tail(_df(units), cutoff / (2.0 * max(1, comparisons)))
    second = _tail(_df(rep_units), alpha)
    if margin is not None:
        found = _inside(margin, first, effect, se)
        again = _inside(margin, second, effect, rep_se) if replicated else 1.0
    else:
        found = _beyond(first, effect, se, _df(units))
        again = _beyond(second, effect, rep_se, _df(rep_units)) if replicated else 1.0
    return found * again


def rule_detectable(se: float, units: int | None, cutoff: float, *, rep_se: float | None = None,
                    rep_units: int | None = None, comparisons: int = 1, target: float = TARGET) -> float | None:
    """The true difference at which the rule says "holds" with chance ``target`` (80 %)."""
    from scipy.optimize import brentq

    if se is None or not (se > 0 and math.isfinite(se)):
        return None

    def gap(effect: float) -> float:
        return rule_power(effect, se, units, cutoff, rep_se=rep_se, rep_units=rep_units,
                          comparisons=comparisons) - target

    if not math.isfinite(gap(0.0)):
        return None
    high = 4.0 * se
    while gap(high) < 0:
        high *= 2.0
        if high > 1e6 * se:
            return None
    try:
        return float(brentq(gap, 0.0, high, xtol=1e-6 * se))
    except ValueError:          # a NaN inside the bracket: no difference can be named
        return None


def simulate_rule(effect: float, sd: float, units: int, others, *, rep_units: int | None = None,
                  reps: int = 4000, seed: int = 0, alpha: float = ALPHA) -> float:
    """The share of ``reps`` simulated studies in which the rule says "holds" for one claim.

    Each study draws ``units`` independent per-unit differences N(effect, sd^2), takes the two-sided t p-value,
    adjusts it by Benjamini-Hochberg together with the family's other raw p-values ``others`` (held fixed),
    and when it is decisive the paper's way draws ``rep_units`` fresh ones for the one-sided replication.
    """
    from scipy.stats import t

    from engine.reproduce.stats import benjamini_hochberg

    rng = np.random.default_rng(seed)
    rep_units = units if rep_units is None else rep_units
    others = [float(p) for p in others]
    held = 0
    for _ in range(reps):
        x = rng.normal(effect, sd, units)
        stat = x.mean() / (x.std(ddof=1) / math.sqrt(units))
        p = float(2.0 * t.sf(abs(stat), units - 1))
        if stat <= 0 or benjamini_hochberg([p] + others)[0] > alpha:
            continue
        y = rng.normal(effect, sd, rep_units)
        again = y.mean() / (y.std(ddof=1) / math.sqrt(rep_units))
        held += bool(t.sf(again, rep_units - 1) < alpha)
    return held / reps


# ---------------------------------------------------------------------- a claim's power and reading

# What a "not significant" verdict means, from its numbers: the evidence (discovery and replication pooled) leans
# the paper's way, leans against it, or the runs could not tell (underpowered); a sameness claim without a margin
# from the paper is "not tested" (engine.reproduce.margins).
READINGS = ("leans the paper's way", "leans against it", "underpowered", "not tested")
LEAN_Z = 1.0      # pooled evidence at least one standard error from nothing leans


def power_of(claim: dict, cutoff: float, family: int = 1) -> dict:
    """A claim's power under the whole rule (BH cut-off ``cutoff`` of its family, replication one-sided):
    ``detectable`` (the difference it holds at with 80 % chance; None for an equivalence claim), ``at_zero``
    (an equivalence claim: P(holds) when the settings are truly alike), ``at_paper`` (P(holds) at the paper's
    effect, engine.reproduce.effects, with ``paper_effect`` and its source), ``single_test`` (what one
    uncorrected test at 80 % detects, the old figure) and the cut-off used."""
    from engine.reproduce.stats import deciding, detectable, units_of

    n = claim["numbers"]
    chosen = deciding(n)
    se, units = chosen.get("stderr"), units_of(chosen)
    rep = claim.get("replication") or {}
    rep_se = rep.get("stderr") if rep.get("stderr") is not None else se
    rep_units = units_of(rep) if rep else units
    m = len(n["comparisons"]) if "comparisons" in n else 1
    out = {"cutoff": float(cutoff), "family": int(family), "single_test": detectable(se, units)}
    margin = n.get("equivalence_margin")
    if margin is not None:
        out["detectable"] = None
        out["at_zero"] = _finite(rule_power(0.0, se, units, cutoff, rep_se=rep_se, rep_units=rep_units,
                                            margin=margin))
    else:
        out["detectable"] = rule_detectable(se, units, cutoff, rep_se=rep_se, rep_units=rep_units, comparisons=m)
    from engine.reproduce.effects import effect_of

    found = effect_of(claim)
    if found is not None:
        out["paper_effect"], out["paper_effect_source"] = found
        out["at_paper"] = _finite(rule_power(found[0], se, units, cutoff, rep_se=rep_se, rep_units=rep_units,
                                             margin=margin, comparisons=m))
    return out


def _finite(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def reading_of(claim: dict) -> str:
    """What a not-significant claim's evidence says (:data:`READINGS`): discovery and replication z pooled
    (Stouffer); at least ``LEAN_Z`` either way leans; within it, "leans against it" when the rule had 80 % power
    at the paper's effect (or, for sameness, at no difference) and saw nothing, else "underpowered"."""
    z = (claim.get("discovery") or {}).get("z")
    rz = (claim.get("replication") or {}).get("z")
    found = [v for v in (z, rz) if v is not None]
    pooled = sum(found) / math.sqrt(len(found)) if found else 0.0
    if pooled >= LEAN_Z:
        return READINGS[0]
    if pooled <= -LEAN_Z:
        return READINGS[1]
    power = claim.get("power") or {}
    reference = power.get("at_zero") if power.get("at_zero") is not None else power.get("at_paper")
    return READINGS[1] if reference is not None and reference >= TARGET else READINGS[2]
