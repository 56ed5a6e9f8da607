"""Claims judged from per-run numbers: the shared verdict rule of the DP-HYPE and PO-GP-UCB reproductions.

A claim is a comparison (one quantity beats another, per run, paired when both come from the same
runs) or a level (a quantity is above or below a threshold). Its verdict follows from the mean
difference in the claim's favour and its standard error over runs, with the rule of
:mod:`engine.reproduce.report`: ``holds`` above ``Z_THRESHOLD`` standard errors, ``reversed`` below
minus that, ``not significant`` in between. Exact facts (a vector length, a formula) have no spread:
their sign decides. Every claim is plain data: ``{"claim", "source", "figure", "holds", "verdict",
"numbers"}`` with ``numbers["difference"]`` (positive: the paper's way) and ``numbers["stderr"]``.
"""

from __future__ import annotations

import math

import numpy as np

from engine.reproduce.report import Z_THRESHOLD

VERDICTS = ("holds", "not significant", "reversed")


def _stderr(values: np.ndarray) -> float:
    values = np.asarray(values, float)
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.inf


def verdict_of(difference: float, stderr: float) -> tuple[str, float | None]:
    """(verdict, z) of a difference in the claim's favour with its standard error."""
    if stderr > 0 and math.isfinite(stderr):
        z = difference / stderr
    elif stderr == 0 and difference != 0:
        z = math.copysign(math.inf, difference)
    else:
        z = None
    if z is None:
        return "not significant", None
    return ("holds" if z > Z_THRESHOLD else "reversed" if z < -Z_THRESHOLD else "not significant"), z


def _claim(text: str, source: str, figure: str, numbers: dict) -> dict:
    verdict, z = verdict_of(numbers["difference"], numbers["stderr"])
    numbers["z"] = None if z is None or not math.isfinite(z) else float(z)
    return {"claim": text, "source": source, "figure": figure, "holds": verdict == "holds", "verdict": verdict,
            "numbers": numbers}


def beats(text: str, source: str, figure: str, better, worse, *, higher: bool = True, paired: bool = True,
          better_label: str = "", worse_label: str = "", margin: float = 0.0) -> dict:
    """``better`` beats ``worse`` per run (higher values win when ``higher``), by more than ``margin``.

    Paired: the standard error of the per-run differences (both from the same runs); unpaired: the two
    standard errors added in quadrature.
    """
    a, b = np.asarray(better, float), np.asarray(worse, float)
    sign = 1.0 if higher else -1.0
    if paired:
        runs = min(len(a), len(b))
        diff = sign * (a[:runs] - b[:runs]) - margin
        mean, se = float(diff.mean()), _stderr(diff)
    else:
        runs = min(len(a), len(b))
        mean = float(sign * (a.mean() - b.mean()) - margin)
        se = math.hypot(_stderr(a), _stderr(b))
    numbers = {"better": better_label, "worse": worse_label, "better_mean": float(a.mean()),
               "worse_mean": float(b.mean()), "difference": mean, "stderr": se, "runs": int(runs),
               "paired": bool(paired), "margin": margin}
    return _claim(text, source, figure, numbers)


def level(text: str, source: str, figure: str, values, threshold: float, *, above: bool = True,
          label: str = "") -> dict:
    """The mean of ``values`` over runs is above (or below) ``threshold``."""
    v = np.asarray(values, float)
    mean = float(v.mean())
    numbers = {"better": label, "worse": f"threshold {threshold:g}", "better_mean": mean, "worse_mean": threshold,
               "difference": (mean - threshold) if above else (threshold - mean), "stderr": _stderr(v),
               "runs": int(len(v)), "paired": False}
    return _claim(text, source, figure, numbers)


def proportion_beats(text: str, source: str, figure: str, p_better: float, p_worse: float, trials: int, *,
                     better_label: str = "", worse_label: str = "") -> dict:
    """Success rate ``p_better`` above ``p_worse`` over ``trials`` repetitions each (binomial standard errors)."""
    se = math.sqrt(max(p_better * (1 - p_better), 0.25 / trials) / trials
                   + max(p_worse * (1 - p_worse), 0.25 / trials) / trials)
    numbers = {"better": better_label, "worse": worse_label, "better_mean": float(p_better),
               "worse_mean": float(p_worse), "difference": float(p_better - p_worse), "stderr": se,
               "runs": int(trials), "paired": False}
    return _claim(text, source, figure, numbers)


def proportion_level(text: str, source: str, figure: str, rate: float, threshold: float, trials: int, *,
                     above: bool = True, label: str = "") -> dict:
    """A success rate over ``trials`` repetitions above (or below) ``threshold``."""
    se = math.sqrt(max(rate * (1 - rate), 0.25 / trials) / trials)
    numbers = {"better": label, "worse": f"threshold {threshold:g}", "better_mean": float(rate),
               "worse_mean": threshold, "difference": (rate - threshold) if above else (threshold - rate),
               "stderr": se, "runs": int(trials), "paired": False}
    return _claim(text, source, figure, numbers)


def exact(text: str, source: str, figure: str, ours: float, target: float, *, tolerance: float = 0.0,
          label: str = "") -> dict:
    """A deterministic number within ``tolerance`` of ``target`` (no spread: the sign of the slack decides)."""
    slack = tolerance - abs(ours - target)
    numbers = {"better": label, "worse": f"target {target:g}", "better_mean": float(ours),
               "worse_mean": float(target), "difference": float(slack if slack != 0 else 1e-12), "stderr": 0.0,
               "runs": 1, "paired": False, "tolerance": tolerance}
    return _claim(text, source, figure, numbers)


def counts(claims: list[dict]) -> dict:
    """How many claims hold, are not significant and are reversed."""
    return {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
