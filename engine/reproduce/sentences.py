"""Sentences generated from the stored verdicts they cite: the investigations, conclusions and docs notes.

A note is a template: plain prose that names no verdict and quotes no number of a run, and fields in braces
that are filled from the stored JSON (data/reproduction/*.json) when the note is shown:

- ``{v:PAPER|CLAIM}``: the verdict of the stored claim of PAPER whose sentence starts with CLAIM, with the
  reading of a "not significant" one ("not significant, leans the paper's way");
- ``{n:PAPER|CLAIM}``: its discovery difference ± standard error (positive: the paper's way), over how many
  units; ``{r:PAPER|CLAIM}``: its replication's, or "not run again";
- ``{av:ABLATION|CLAIM|SIDE}``, ``{an:ABLATION|CLAIM|SIDE}``, ``{ar:ABLATION|CLAIM|SIDE}``: the verdict, the
  discovery numbers and the replication numbers of one side ("with" our deviation, "without" it) of an ablation
  row; ``{ac:ABLATION|CLAIM}``: the row's conclusion (engine.reproduce.ablations.conclusion_of, from its verdicts);
- ``{pct:ABLATION|CLAIM|SIDE}``: a size row's measured percent on one side;
- ``{scale:ABLATION}``: an ablation's fitted clip factor; ``{clip:PAPER|PART|SETTING}``: a stored setting's clipped
  percent; ``{runs:ABLATION}``: an ablation's runs per side.

A field that names a claim the JSON does not hold raises :class:`MissingVerdict` (the test renders every note);
:func:`verdict_words` finds a verdict named in a template's prose outside a field (the test requires none).
"""

from __future__ import annotations

import re
from functools import lru_cache

from engine.reproduce.stats import numbers_text, verdict_text  # noqa: F401  (re-exported)

FIELD = re.compile(r"\{(v|n|r|av|an|ar|ac|pct|scale|clip|runs):([^{}]+)\}")
VERDICT_WORDS = re.compile(r"\b(holds?|held|reversed|not significant|inconsistent|replicated|replicates|differs)\b",
                           re.IGNORECASE)


class MissingVerdict(KeyError):
    """A field of a note names a claim, an ablation or a setting the stored JSON does not hold."""


def verdict_words(template: str) -> list[str]:
    """The verdict words a template's prose names outside its fields (none allowed: a verdict is a field)."""
    return VERDICT_WORDS.findall(FIELD.sub("", template))


@lru_cache(maxsize=2)
def _stored(folder=None) -> tuple[dict, dict]:
    from engine.reproduce.ablation_tables import stored_ablations
    from engine.reproduce.stored_papers import stored_beside, stored_payloads

    payloads = stored_payloads(folder)
    for paper in list(payloads):
        beside = stored_beside(paper, folder)
        if beside:
            payloads[paper] = {**payloads[paper], "parts": {**payloads[paper]["parts"], **beside}}
    return payloads, (stored_ablations(folder) or {}).get("ablations", {})


def clear() -> None:
    """Forget the stored JSON read (after the files changed)."""
    _stored.cache_clear()


def _claim(payloads: dict, paper: str, start: str) -> dict:
    for part in payloads.get(paper, {}).get("parts", {}).values():
        for claim in part.get("claims", []):
            if claim["claim"].startswith(start):
                return claim
    raise MissingVerdict(f"{paper}: no stored claim starts with {start!r}")


def _row(ablations: dict, name: str, start: str) -> dict:
    for row in ablations.get(name, {}).get("rows", []):
        if row["claim"].startswith(start):
            return row
    raise MissingVerdict(f"ablation {name}: no row starts with {start!r}")


def _fill(kind: str, args: list[str], payloads: dict, ablations: dict) -> str:
    if kind in ("v", "n", "r"):
        claim = _claim(payloads, args[0], args[1])
        if kind == "v":
            return verdict_text(claim)
        return numbers_text(claim["numbers"] if kind == "n" else claim.get("replication"))
    if kind in ("av", "an", "ar"):
        row = _row(ablations, args[0], args[1])
        side = row[args[2]]
        if kind == "av":
            return verdict_text(side)
        return numbers_text(side if kind == "an" else (row.get("replication") or {}).get(args[2]))
    if kind == "ac":
        return _row(ablations, args[0], args[1])["conclusion"]
    if kind == "pct":           # a size row's measured percent (a clipped share) on one side
        side = _row(ablations, args[0], args[1])[args[2]]
        if side.get("better_mean") is None:
            raise MissingVerdict(f"ablation {args[0]}: no percent for {args[1]!r}")
        return f"{side['better_mean']:.2f} %"
    if kind in ("scale", "runs"):
        table = ablations.get(args[0])
        if table is None or (kind == "scale" and "scale" not in table):
            raise MissingVerdict(f"ablation {args[0]}: no {kind}")
        return f"{table['scale']:.3f}" if kind == "scale" else str(table["runs"])
    part = payloads.get(args[0], {}).get("parts", {}).get(args[1], {})
    setting = next((s for s in part.get("settings", []) if s["key"] == args[2]), None)
    if setting is None or setting.get("clipped_percent") is None:
        raise MissingVerdict(f"{args[0]} {args[1]}: no clipped percent of {args[2]!r}")
    return f"{setting['clipped_percent']:.1f} %"


def render(template: str, folder=None) -> str:
    """``template`` with every field filled from the stored JSON in ``folder`` (default: data/reproduction)."""
    payloads, ablations = _stored(folder)
    return FIELD.sub(lambda m: _fill(m.group(1), m.group(2).split("|"), payloads, ablations), template)
