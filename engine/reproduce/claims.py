"""Claims judged from per-run numbers, and THE decision rule every reproduction's verdicts follow.

A claim is plain data: ``{"claim", "source", "figure", "data_kind", "by_construction", "holds", "verdict",
"numbers"}`` with ``numbers["difference"]`` (positive: the paper's way) and ``numbers["stderr"]`` over runs
(an "any-of" claim keeps its ``numbers["comparisons"]``). The constructors below (:func:`beats`,
:func:`level`, ...) make the claims of the DP-HYPE and PO-GP-UCB reproductions; ``engine.reproduce.report``
makes those of the federated BO papers in the same form.

The rule (:func:`decide`, docs/paper-comparisons.md "How a verdict is decided"), applied to all the claims
of one paper at once:

1. **Discovery** (the runs at the command's seed, seed 0 for the stored files): every claim judged over runs
   gets a signed z in the paper's favour and a two-sided p (Student's t with units - 1 degrees of freedom; the
   units are the runs, or the objective draws when runs share one: engine.reproduce.report.by_draw); an "any-of"
   claim takes its best comparison with its p times m (Bonferroni); a sameness claim is an equivalence test
   (TOST) against the margin registered from the paper (engine.reproduce.margins), not tested without one.
   Benjamini-Hochberg holds the false discovery rate over the paper's claims at ``ALPHA``: a claim is
   *decisive* when its adjusted p is at most ``ALPHA``.
2. **Replication** (an independent seed set: new runs and, for generated data, new objective draws): every
   decisive claim is run again on the same comparison and confirms it when its ONE-sided p in the discovery's
   direction is below ``ALPHA``.
3. The verdict: **holds** / **reversed** (sameness: **holds** / **differs**) when confirmed; **inconsistent**
   when the replication is significant the other way (two-sided); **not significant** otherwise, with ``why``
   and a ``reading`` (engine.reproduce.power.READINGS: leans the paper's way, leans against it, underpowered, not
   tested). Without replication numbers a decisive claim says "discovery only". Exact facts are decided by
   their sign and sizes by their band; neither enters the correction.

Each claim carries its **power** under the whole rule (engine.reproduce.power): ``detectable``, the difference
at which the rule says "holds" with 80 % chance (BH cut-off and replication included), and the chance of "holds"
at the paper's effect where the claim's numbers carry one.
"""

from __future__ import annotations

import math

import numpy as np

from engine.reproduce.power import bh_cutoffs, power_of, reading_of
from engine.reproduce.stats import (ALPHA, DETECTABLE, Z_POWER, Z_REPLICATION, benjamini_hochberg,  # noqa: F401
                                    deciding, detectable, p_one_sided, p_two_sided, units_of)

VERDICTS = ("holds", "not significant", "reversed", "inconsistent")
# What a claim's data is (every stored claim says): the paper's own data, a labelled stand-in for it, data
# generated the way the paper describes (synthetic functions, simulations), or a real data set the paper did not
# use (reported beside the paper's tally, not in it).
# "identity": an exact computation that uses no data (a privacy accountant's loss, a formula); counted apart from
# every data kind, never as the paper's data.
DATA_KINDS = ("paper", "stand-in", "generated", "other", "identity")
# ALPHA: the false discovery rate per paper, and the replication's one-sided level (engine.reproduce.stats).
Z_THRESHOLD = Z_REPLICATION      # the old per-claim threshold, for a single comparison (the page's small run)


def _stderr(values: np.ndarray) -> float:
    values = np.asarray(values, float)
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.inf


def signed_z(difference, stderr) -> float | None:
    """difference / s.e.; +-inf for an exact nonzero difference; None when nothing can be said."""
    if difference is None or stderr is None:
        return None
    if stderr > 0 and math.isfinite(stderr):
        return difference / stderr
    if stderr == 0 and difference != 0:
        return math.copysign(math.inf, difference)
    return None


def verdict_of(difference: float, stderr: float) -> tuple[str, float | None]:
    """(verdict, z) of ONE comparison at two-sided ``ALPHA``, with no correction and no replication: the
    provisional verdict a claim has before :func:`decide` sees the paper's other claims."""
    z = signed_z(difference, stderr)
    if z is None:
        return "not significant", None
    return ("holds" if z > Z_REPLICATION else "reversed" if z < -Z_REPLICATION else "not significant"), z


def _claim(text: str, source: str, figure: str, numbers: dict, data_kind: str | None,
           by_construction: bool) -> dict:
    verdict, z = verdict_of(numbers["difference"], numbers["stderr"])
    numbers["z"] = None if z is None or not math.isfinite(z) else float(z)
    out = {"claim": text, "source": source, "figure": figure, "holds": verdict == "holds", "verdict": verdict,
           "numbers": numbers}
    if data_kind is not None:
        out["data_kind"] = check_kind(data_kind)
    out["by_construction"] = bool(by_construction)
    return out


def check_kind(kind: str) -> str:
    if kind not in DATA_KINDS:
        raise ValueError(f"data_kind must be one of {', '.join(DATA_KINDS)}, got {kind!r}")
    return kind


def beats(text: str, source: str, figure: str, better, worse, *, higher: bool = True, paired: bool = True,
          better_label: str = "", worse_label: str = "", margin: float = 0.0, data_kind: str | None = None,
          by_construction: bool = False) -> dict:
    """``better`` beats ``worse`` per run (higher values win when ``higher``), by more than ``margin``.

    Paired: the standard error of the per-run differences (both from the same runs); unpaired: the two
    standard errors added in quadrature.
    """
    a, b = np.asarray(better, float), np.asarray(worse, float)
    sign = 1.0 if higher else -1.0
    runs = min(len(a), len(b))
    if paired:
        diff = sign * (a[:runs] - b[:runs]) - margin
        mean, se = float(diff.mean()), _stderr(diff)
    else:
        mean = float(sign * (a.mean() - b.mean()) - margin)
        se = math.hypot(_stderr(a), _stderr(b))
    numbers = {"better": better_label, "worse": worse_label, "better_mean": float(a.mean()),
               "worse_mean": float(b.mean()), "difference": mean, "stderr": se, "runs": int(runs),
               "paired": bool(paired), "margin": margin}
    return _claim(text, source, figure, numbers, data_kind, by_construction)


def level(text: str, source: str, figure: str, values, threshold: float, *, above: bool = True,
          label: str = "", data_kind: str | None = None, by_construction: bool = False) -> dict:
    """The mean of ``values`` over runs is above (or below) ``threshold``."""
    v = np.asarray(values, float)
    mean = float(v.mean())
    numbers = {"better": label, "worse": f"threshold {threshold:g}", "better_mean": mean, "worse_mean": threshold,
               "difference": (mean - threshold) if above else (threshold - mean), "stderr": _stderr(v),
               "runs": int(len(v)), "paired": False}
    return _claim(text, source, figure, numbers, data_kind, by_construction)


def proportion_beats(text: str, source: str, figure: str, p_better: float, p_worse: float, trials: int, *,
                     better_label: str = "", worse_label: str = "", data_kind: str | None = None,
                     by_construction: bool = False) -> dict:
    """Success rate ``p_better`` above ``p_worse`` over ``trials`` repetitions each (binomial standard errors)."""
    se = math.sqrt(max(p_better * (1 - p_better), 0.25 / trials) / trials
                   + max(p_worse * (1 - p_worse), 0.25 / trials) / trials)
    numbers = {"better": better_label, "worse": worse_label, "better_mean": float(p_better),
               "worse_mean": float(p_worse), "difference": float(p_better - p_worse), "stderr": se,
               "runs": int(trials), "paired": False}
    return _claim(text, source, figure, numbers, data_kind, by_construction)


def proportion_level(text: str, source: str, figure: str, rate: float, threshold: float, trials: int, *,
                     above: bool = True, label: str = "", data_kind: str | None = None,
                     by_construction: bool = False) -> dict:
    """A success rate over ``trials`` repetitions above (or below) ``threshold``."""
    se = math.sqrt(max(rate * (1 - rate), 0.25 / trials) / trials)
    numbers = {"better": label, "worse": f"threshold {threshold:g}", "better_mean": float(rate),
               "worse_mean": threshold, "difference": (rate - threshold) if above else (threshold - rate),
               "stderr": se, "runs": int(trials), "paired": False}
    return _claim(text, source, figure, numbers, data_kind, by_construction)


def exact(text: str, source: str, figure: str, ours: float, target: float, *, tolerance: float = 0.0,
          label: str = "", data_kind: str | None = None, by_construction: bool = False) -> dict:
    """A deterministic number within ``tolerance`` of ``target`` (no spread: the sign of the slack decides)."""
    slack = tolerance - abs(ours - target)
    numbers = {"better": label, "worse": f"target {target:g}", "better_mean": float(ours),
               "worse_mean": float(target), "difference": float(slack if slack != 0 else 1e-12), "stderr": 0.0,
               "runs": 1, "paired": False, "tolerance": tolerance}
    return _claim(text, source, figure, numbers, data_kind, by_construction)


def mark(claims: list[dict], data_kind: str, by_construction: bool = False) -> list[dict]:
    """Give every claim without one this ``data_kind``; ``by_construction``: every claim holds by construction."""
    check_kind(data_kind)
    for claim in claims:
        claim.setdefault("data_kind", data_kind)
        claim["by_construction"] = bool(claim.get("by_construction")) or bool(by_construction)
    return claims


# A claim that two settings perform alike and that our runs tell apart ("differs"), or a size outside its band, is
# the opposite of what the paper says: tallies count it with the reversed ones.
TALLY_VERDICT = {"differs": "reversed"}


def tally(verdict: str) -> str:
    """The column of a tally a verdict is counted in (one of :data:`VERDICTS`)."""
    return TALLY_VERDICT.get(verdict, verdict)


def counts(claims: list[dict]) -> dict:
    """How many claims hold, are not significant, are reversed (or differ) and are inconsistent."""
    return {v: sum(tally(c["verdict"]) == v for c in claims) for v in VERDICTS}


# ---------------------------------------------------------------------- the decision rule

def test_of(claim: dict) -> str:
    """"size" (a band), "exact" (no spread), "untested" (sameness without a margin from the paper),
    "equivalence" (sameness), "any-of" or "difference"."""
    n = claim["numbers"]
    if n.get("untested"):
        return "untested"
    if "ratio" in n:
        return "size"
    if "comparisons" in n:
        return "any-of"
    if n.get("equivalence_margin") is not None:
        return "equivalence"
    if n.get("stderr") == 0 or n.get("at") == "epsilon":
        return "exact"
    return "difference"


def equivalence_z(difference, stderr, margin) -> float | None:
    """TOST as one z: positive when |difference| is inside +-margin by that many standard errors."""
    if difference is None or stderr is None or not (stderr > 0 and math.isfinite(stderr)):
        return None
    return (margin - abs(difference)) / stderr


def _z(test: str, difference, stderr, margin=None) -> float | None:
    if test == "equivalence":
        return equivalence_z(difference, stderr, margin)
    return signed_z(difference, stderr)


def discovery_z(claim: dict) -> tuple[float | None, float]:
    """(z in the claim's favour, p-value) of the discovery runs, an any-of claim's p Bonferroni-corrected."""
    test, n = test_of(claim), claim["numbers"]
    if test == "any-of":
        comparisons = n["comparisons"]
        best = deciding(n)
        z = best.get("z")
        if z is not None and z > 0:
            return z, min(1.0, len(comparisons) * p_two_sided(z, units_of(best)))
        # Reversed only when every comparison is behind: the least behind decides, no correction needed.
        return z, p_two_sided(z, units_of(best))
    z = _z(test, n.get("difference"), n.get("stderr"), n.get("equivalence_margin"))
    return z, p_two_sided(z, units_of(n))


def _named(test: str, z: float) -> str:
    if test == "equivalence":
        return "holds" if z > 0 else "differs"
    return "holds" if z > 0 else "reversed"


def _fixed_verdict(claim: dict, test: str) -> tuple[str, str]:
    n = claim["numbers"]
    if test == "size":
        ratio = n.get("ratio")
        from engine.reproduce.sizes import SIZE_FACTOR

        inside = ratio is not None and 1 / SIZE_FACTOR <= ratio <= SIZE_FACTOR
        return ("holds" if inside else "differs"), "a size: within a factor of the paper's number, or not"
    d = deciding(n).get("difference") or 0.0
    if d == 0:
        return "not significant", "exact: no difference at all"
    return ("holds" if d > 0 else "reversed"), "exact: no spread, the sign decides"


def decide_one(claim: dict, q_value: float | None, cutoff: float = ALPHA, family: int = 1) -> dict:
    """Set ``claim``'s verdict from its discovery (``q_value``: its FDR-adjusted p) and replication numbers;
    ``cutoff``: the family's Benjamini-Hochberg raw-p cut-off and ``family`` its size (for the power)."""
    test = test_of(claim)
    claim["test"] = test
    n = claim["numbers"]
    claim.pop("reading", None)
    if test in ("size", "exact", "untested"):
        verdict, why = (_fixed_verdict(claim, test) if test != "untested"
                        else ("not significant", "not tested: no margin from the paper (margin_source says why)"))
        claim.pop("discovery", None)
        claim.pop("power", None)
        if test == "untested":
            claim["reading"] = "not tested"
    else:
        z, p = discovery_z(claim)
        chosen = deciding(n)
        decisive = z is not None and q_value is not None and q_value <= ALPHA
        claim["discovery"] = {"z": None if z is None or not math.isfinite(z) else float(z), "p": float(p),
                              "q": None if q_value is None else float(q_value), "decisive": bool(decisive),
                              "units": units_of(chosen)}
        rep = claim.get("replication")
        rz = None
        if rep:
            rz = _z(test, rep.get("difference"), rep.get("stderr"), n.get("equivalence_margin"))
            rep["z"] = None if rz is None or not math.isfinite(rz) else float(rz)
        if not decisive:
            verdict, why = "not significant", "not decisive in discovery (FDR-adjusted p above 0.05)"
        elif not rep:
            verdict, why = _named(test, z), "discovery only (no replication run)"
        else:
            # One-sided in the discovery's direction: the replication confirms what discovery found, or not.
            way = 1.0 if z > 0 else -1.0
            if rz is not None and p_one_sided(way * rz, units_of(rep)) < ALPHA:
                verdict, why = _named(test, z), "replicated"
            elif rz is not None and p_two_sided(rz, units_of(rep)) < ALPHA:
                verdict, why = "inconsistent", "decisive in discovery and the opposite way in replication"
            else:
                verdict, why = "not significant", "not replicated (decisive in discovery only)"
        claim["power"] = power_of(claim, cutoff, family)
        claim["discovery"]["detectable"] = claim["power"].get("detectable")
        if rep:
            rep["detectable"] = detectable(rep.get("stderr"), units_of(rep))
        if verdict == "not significant":
            claim["reading"] = reading_of(claim)
    claim["verdict"], claim["holds"], claim["why"] = verdict, verdict == "holds", why
    return claim


def decide(claims: list[dict]) -> list[dict]:
    """Every claim of ONE paper judged together (the rule above): BH over the claims judged over runs."""
    random = [c for c in claims if test_of(c) not in ("size", "exact", "untested")]
    p_values = [discovery_z(c)[1] for c in random]
    by_id = {id(c): qc for c, qc in zip(random, zip(benjamini_hochberg(p_values), bh_cutoffs(p_values, ALPHA)))}
    for claim in claims:
        q, cutoff = by_id.get(id(claim), (None, ALPHA))
        decide_one(claim, q, cutoff, len(random))
    return claims


def decide_payload(payload: dict) -> dict:
    """:func:`decide` over every part of one paper's output (``{"parts": {name: {"claims": [...]}}}``), each
    part's ``counts`` brought up to date."""
    parts = payload.get("parts", {})
    decide([c for part in parts.values() for c in part.get("claims", [])])
    for part in parts.values():
        if "counts" in part:
            part["counts"] = counts(part["claims"])
    return payload


def redecided(claims: list[dict]) -> list[str]:
    """The verdicts :func:`decide` gives ``claims`` (one paper's) from their numbers, on copies: a stored file's
    verdicts must equal these."""
    import copy

    return [c["verdict"] for c in decide(copy.deepcopy(list(claims)))]
