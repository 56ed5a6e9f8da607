"""Verdict tallies per paper and data kind: what the page, the docs and ``data/reproduction/tallies.json`` show.

A paper's verdicts are never added up across kinds of data: a reversal on a stand-in or on generated functions
says something else than one on the paper's own data, and an identity (an exact computation such as a privacy
accountant's loss: no data at all) says nothing about data. So every tally is per (paper, data kind), the kinds
of :data:`engine.reproduce.claims.DATA_KINDS`, identities in a row of their own. Each row counts every claim
once (a claim about two figures is one claim), splits "not significant" by its reading
(engine.reproduce.power.READINGS) and keeps the claims that hold by construction apart.
"""

from __future__ import annotations

from engine.reproduce.claims import DATA_KINDS, VERDICTS, tally
from engine.reproduce.power import READINGS

BY_CONSTRUCTION = "by construction"
TALLIES_FILE = "tallies.json"
KIND_LABELS = {"paper": "the paper's data", "stand-in": "stand-in data", "generated": "generated data",
               "other": "other real data (beside the tally)", "identity": "identities (exact, no data)"}


def claims_of(payload: dict) -> list[dict]:
    """Every claim of one paper's output, once."""
    return [c for part in payload.get("parts", {}).values() for c in part.get("claims", [])]


def kind_tally(claims) -> dict:
    """{data kind: {verdict counts, "by construction", "not significant" split by reading, "claims"}} of the
    kinds present, in :data:`DATA_KINDS` order."""
    out = {}
    for kind in DATA_KINDS:
        mine = [c for c in claims if c.get("data_kind", "paper") == kind]
        if not mine:
            continue
        row = {"claims": len(mine), **{v: 0 for v in VERDICTS}, BY_CONSTRUCTION: 0,
               "readings": {r: 0 for r in READINGS}}
        for claim in mine:
            if claim.get("by_construction"):
                row[BY_CONSTRUCTION] += 1
                continue
            verdict = tally(claim["verdict"])
            row[verdict] += 1
            if verdict == "not significant":
                row["readings"][claim.get("reading") or "underpowered"] += 1
        out[kind] = row
    return out


def paper_tallies(payloads: dict) -> dict:
    """{paper: kind_tally} of every paper's stored output (``payloads``: paper -> output), and the claims on other
    data kept beside a paper (``beside``: paper -> {part: stored part}) counted under "other"."""
    return {paper: kind_tally(claims_of(payload)) for paper, payload in payloads.items()}


def stored_tallies(folder=None) -> dict:
    """The tallies of every stored reproduction (data/reproduction), DP-HYPE's Fashion-MNIST beside it included."""
    from engine.reproduce.stored_papers import stored_beside, stored_payloads

    payloads = stored_payloads(folder)
    out = {}
    for paper, payload in payloads.items():
        claims = claims_of(payload) + [c for part in stored_beside(paper, folder).values() for c in part["claims"]]
        out[paper] = kind_tally(claims)
    return out


def tally_rows(tallies: dict) -> list[dict]:
    """One flat row per (paper, data kind): what a table shows."""
    rows = []
    for paper, kinds in tallies.items():
        for kind, row in kinds.items():
            rows.append({"paper": paper, "data": kind, "claims": row["claims"],
                         **{v: row[v] for v in VERDICTS}, BY_CONSTRUCTION: row[BY_CONSTRUCTION],
                         **{f"n.s.: {r}": row["readings"][r] for r in READINGS}})
    return rows


def tally_markdown(tallies: dict) -> str:
    """The per-paper, per-kind table of docs/paper-comparisons.md."""
    head = ("| paper | data | claims | holds | reversed | inconsistent | not significant: leans the paper's way / "
            "leans against it / underpowered / not tested | by construction |")
    lines = [head, "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in tally_rows(tallies):
        split = " / ".join(str(row[f"n.s.: {r}"]) for r in READINGS)
        lines.append(f"| {row['paper']} | {KIND_LABELS[row['data']]} | {row['claims']} | {row['holds']} | "
                     f"{row['reversed']} | {row['inconsistent']} | {row['not significant']} ({split}) | "
                     f"{row[BY_CONSTRUCTION]} |")
    return "\n".join(lines)
