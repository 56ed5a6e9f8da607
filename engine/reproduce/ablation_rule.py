"""Ablations judged by the reproductions' one rule (engine.reproduce.claims.decide), not a laxer one.

Every side of every row of every ablation (with our deviation, and without it) is one claim of the *ablation
family*: Student's t over its test units, Benjamini-Hochberg over the whole family (every side of every row, as
a paper's claims are corrected together), and the replication seed set's numbers of the same comparison (one-sided,
in the discovery's direction). A row without replication numbers keeps "discovery only"; an exact row (a privacy
loss, no spread) is decided by its sign. A side that is the stored reproduction itself (``stored_with``) keeps the
stored claim's numbers and verdict, decided with the paper's claims. :func:`decide_ablations` writes each side's
``verdict``, ``why``, ``reading`` (a "not significant" side: leans the paper's way, against it, or underpowered),
``q`` and ``power``, and the row's conclusion (:func:`engine.reproduce.ablations.conclusion_of`) from those verdicts.
"""

from __future__ import annotations

SIDES = ("with", "without")
# What a side keeps from the rule's output.
KEPT = ("verdict", "why", "reading")


def _claim(name: str, row: dict, side: str) -> dict:
    n = row[side]
    numbers = {k: n.get(k) for k in ("better", "worse", "difference", "stderr", "runs", "units")}
    if "ratio" in n:
        numbers["ratio"] = n["ratio"]
    claim = {"claim": f"{name}: {row['claim']} ({side} the deviation)", "source": row.get("source", ""),
             "numbers": numbers}
    rep = (row.get("replication") or {}).get(side)
    if rep is not None:
        claim["replication"] = {k: rep.get(k) for k in ("difference", "stderr", "runs", "units")}
    return claim


def decide_ablations(payload: dict) -> dict:
    """``payload`` (``{"ablations": {name: table}}``) with every side of every row decided together."""
    from engine.reproduce.ablation_specs import conclusion_of
    from engine.reproduce.claims import decide

    pairs = []
    for name, table in payload.get("ablations", {}).items():
        for row in table["rows"]:
            for side in SIDES:
                if row[side].get("source") != "the stored reproduction":
                    pairs.append((row, side, _claim(name, row, side)))
    decide([claim for _, _, claim in pairs])
    for row, side, claim in pairs:
        n = row[side]
        for key in KEPT:
            n.pop(key, None)
            if key in claim:
                n[key] = claim[key]
        n.pop("power", None)
        found = claim.get("discovery") or {}
        n["q"] = found.get("q")
        n["power"] = claim.get("power")
        rep = (row.get("replication") or {}).get(side)
        if rep is not None:
            rep.pop("verdict", None)
            rep.pop("power", None)
            rep["z"] = (claim.get("replication") or {}).get("z")
    for name, table in payload.get("ablations", {}).items():
        for row in table["rows"]:
            row["conclusion"] = conclusion_of(row["deviation"], row["with"], row["without"])
    return payload


def family_size(payload: dict) -> int:
    """How many sides the family corrects over (the rows' sides judged over runs)."""
    return sum(1 for table in payload.get("ablations", {}).values() for row in table["rows"] for side in SIDES
               if row[side].get("stderr"))
