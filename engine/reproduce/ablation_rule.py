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


STORED = "the stored reproduction"


def stored_sides(payload: dict, folder=None) -> dict:
    """The ablations whose spec says ``stored_with`` (the deviation's side is the part as stored: landmine's
    metric, on all 29 fields, is exactly the stored reproduction) take that side from the stored claim: its
    numbers, discovery and replication, and its verdict, decided with the paper's claims (not again here), so the
    table and the stored verdict rest on the same runs."""
    from engine.reproduce.ablation_specs import ABLATIONS
    from engine.reproduce.stored_papers import stored_payload

    stored = {c["claim"]: c for part in (stored_payload("dp-fts-de", folder) or {}).get("parts", {}).values()
              for c in part.get("claims", [])}
    for name, table in payload.get("ablations", {}).items():
        if not ABLATIONS.get(name, {}).get("stored_with"):
            continue
        for row in table["rows"]:
            claim = stored.get(row["claim"])
            if claim is None:
                continue
            numbers = {k: claim["numbers"].get(k) for k in ("better", "worse", "better_mean", "worse_mean",
                                                             "difference", "stderr", "runs", "units", "paired")}
            row["with"] = {**numbers, "source": STORED, "verdict": claim["verdict"], "why": claim.get("why"),
                           "q": (claim.get("discovery") or {}).get("q"), "power": claim.get("power"),
                           **({"reading": claim["reading"]} if claim.get("reading") else {})}
            rep = claim.get("replication")
            if row.get("replication") is not None:
                if rep:
                    row["replication"]["with"] = {k: rep.get(k) for k in ("difference", "stderr", "runs", "units")}
                else:
                    row["replication"].pop("with", None)
    return payload


def decide_ablations(payload: dict) -> dict:
    """``payload`` (``{"ablations": {name: table}}``) with every side of every row decided together (a stored
    side keeps its stored verdict)."""
    from engine.reproduce.ablation_specs import conclusion_of
    from engine.reproduce.claims import decide

    stored_sides(payload)
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
