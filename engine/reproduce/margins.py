"""The margins of the claims of sameness ("M barely matters", "comparable with TS"), fixed before the runs.

A claim that two settings perform alike is an equivalence test against a margin in the compared quantity. The
margin must come from the paper (its own tolerance, a figure's resolution, or the effect sizes it reports), be
recorded with that source before any run it judges, and never move afterwards. :data:`MARGINS` holds them, by
the claim's sentence, each with its source and the date it was recorded; :func:`margin_problem` is the check
every margin must pass:

- not larger than the differences the paper itself reports as real (else the claim holds by construction: a
  margin wider than the effects the paper calls wins cannot tell "alike" from "better");
- not below the runs' standard error (else it can never hold: the test needs |difference| + t x s.e. < margin).

A claim of sameness whose paper gives no number to set a margin from (no tolerance stated, and a figure this
text copy does not carry) gets none: it is reported as *not tested* (``numbers["margin_source"]`` says why),
never given one chosen after seeing our runs. The 20 %-of-the-reference's-mean margin that arrived after the
stored runs is gone.
"""

from __future__ import annotations

from dataclasses import dataclass

NO_MARGIN = ("no margin from the paper: it states no tolerance for 'alike' and the figure the claim reads is not "
             "in the text copy here, so sameness is not tested")


@dataclass(frozen=True)
class Margin:
    """A sameness claim's margin (in the compared quantity), where it comes from, and the paper's own
    differences it must stay below."""

    value: float
    source: str
    recorded: str               # the date it was fixed, before the runs it judges
    paper_differences: tuple    # differences the paper reports as real, in the same quantity (its effects)


# FTS, App. D.2.1 (Fig. 4): "consistent performances of FTS in both settings". The same landmine metric (1 - AUC
# after 50 iterations) as Fig. 2a, where the largest difference between methods is 0.035 (FTS against its
# rivals, the effect the paper reports as FTS's advantage): half of it is the margin.
FTS_FIG2A_LARGEST = 0.035
MARGINS = {
    "FTS performs consistently in the simple and the general setting": Margin(
        FTS_FIG2A_LARGEST / 2,
        "half the largest between-method difference of FTS Fig. 2a (0.035 in 1 - AUC on landmine, the effect the "
        "paper reports as a method's advantage on the same metric)",
        "2026-11-29", (FTS_FIG2A_LARGEST,)),
}


def margin_of(claim_text: str) -> Margin | None:
    """The registered margin of a sameness claim (None: the paper gives none, the claim is not tested)."""
    return MARGINS.get(claim_text)


def margin_problem(margin: float, paper_differences, stderr: float | None) -> str | None:
    """Why ``margin`` cannot judge its claim, or None when it can: larger than a difference the paper reports as
    real (holds by construction), or below the runs' standard error ``stderr`` (can never hold)."""
    bigger = [d for d in paper_differences if margin > abs(d)]
    if bigger:
        return (f"the margin {margin:.4g} is larger than a difference the paper reports as real ({abs(bigger[0]):.4g}):"
                " the claim would hold by construction")
    if stderr is not None and margin < stderr:
        return f"the margin {margin:.4g} is below the runs' standard error ({stderr:.4g}): the claim can never hold"
    return None


def margin_numbers(text: str) -> dict:
    """A sameness claim's margin numbers: ``equivalence_margin`` and ``margin_source`` from the registry
    (engine.reproduce.margins), or ``untested`` with the reason when the paper gives no margin."""
    margin = margin_of(text)
    if margin is None:
        return {"untested": True, "margin_source": NO_MARGIN}
    return {"equivalence_margin": margin.value, "margin_source": margin.source, "margin_recorded": margin.recorded,
            "paper_differences": list(margin.paper_differences)}


SAMENESS_KEYS = ("equivalence_margin", "equivalence_relative", "untested", "margin_source", "margin_recorded",
                 "paper_differences")


def remargin(claims) -> list:
    """Stored claims of sameness (their numbers carry a margin or say untested) given the registered margin or
    none, as a run under this registry would: what a stored discovery needs before it is judged again."""
    for claim in claims:
        numbers = claim["numbers"]
        if any(key in numbers for key in SAMENESS_KEYS):
            for key in SAMENESS_KEYS:
                numbers.pop(key, None)
            numbers.update(margin_numbers(claim["claim"]))
    return claims
