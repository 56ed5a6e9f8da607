"""The small statistics the verdict rule and its power share (engine.reproduce.claims re-exports them): a
comparison's test units, its p-values over few units (Student's t), the single-test detectable difference, the
comparison an any-of claim rests on, Benjamini-Hochberg's adjusted p-values, and how a verdict and its numbers
read in a sentence or a table."""

from __future__ import annotations

import math

ALPHA = 0.05
Z_REPLICATION = 1.959964          # two-sided ALPHA
Z_POWER = 0.841621                # 80 % power
DETECTABLE = Z_REPLICATION + Z_POWER   # detectable difference = DETECTABLE x s.e.


def units_of(numbers: dict) -> int | None:
    """What a comparison's test counts: its ``units`` (objective draws, when runs share one) or its runs."""
    return numbers.get("units") or numbers.get("runs")


def p_one_sided(z: float | None, units: int | None = None) -> float:
    """One-sided p of z in its positive direction (Student's t with units - 1 degrees of freedom over few)."""
    if z is None:
        return 1.0
    if not math.isfinite(z):
        return 0.0 if z > 0 else 1.0
    if units is not None and 2 <= units < 1000:
        from scipy.stats import t

        return float(t.sf(z, units - 1))
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def p_two_sided(z: float | None, runs: int | None = None) -> float:
    """Two-sided p of z: Student's t with runs - 1 degrees of freedom when the s.e. is over few runs (a
    normal z overstates 10 runs' evidence), the normal law otherwise."""
    if z is None:
        return 1.0
    if not math.isfinite(z):
        return 0.0
    if runs is not None and 2 <= runs < 1000:
        from scipy.stats import t

        return float(2.0 * t.sf(abs(z), runs - 1))
    return math.erfc(abs(z) / math.sqrt(2.0))


def detectable(stderr, runs: int | None = None) -> float | None:
    """The smallest difference detected with 80 % power at two-sided ``ALPHA``: (t_{1-ALPHA/2} + t_{0.8}) s.e."""
    if stderr is None or not math.isfinite(stderr):
        return None
    if runs is not None and 2 <= runs < 1000:
        from scipy.stats import t

        return float((t.ppf(1 - ALPHA / 2, runs - 1) + t.ppf(0.8, runs - 1)) * stderr)
    return DETECTABLE * stderr


def deciding(numbers: dict) -> dict:
    """The comparison a claim rests on: its own, or the best (largest z) of an any-of claim's."""
    if "comparisons" not in numbers:
        return numbers
    return max(numbers["comparisons"], key=lambda c: c["z"] if c.get("z") is not None else -math.inf)


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the input's order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


# ---------------------------------------------------------------------- how a verdict and its numbers read

def verdict_text(claim: dict) -> str:
    verdict = claim["verdict"]
    if verdict == "not significant" and claim.get("reading"):
        return f"not significant, {claim['reading']}"
    return verdict


def numbers_text(numbers: dict | None) -> str:
    if not numbers:
        return "not run again"
    n = deciding(numbers) if "comparisons" in numbers else numbers
    if n.get("difference") is None:
        return "no number"
    if not n.get("stderr"):
        return f"{n['difference']:+.4g}, exact"
    units = units_of(n)
    return f"{n['difference']:+.4f} ± {n['stderr']:.4f}" + (f" over {units}" if units else "")
