"""The stored ablation tables (data/reproduction/ablations.json): read, matched to claims, written as markdown.

:mod:`engine.reproduce.ablations` makes them; the Paper reproduction page (ui.reproduction.ablations) and
docs/paper-comparisons.md show them under the investigations of the claims they are about.
"""

from __future__ import annotations

from functools import lru_cache

from engine.reproduce.ablation_specs import ABLATIONS


ABLATIONS_FILE = "ablations.json"


def stored_ablations(folder=None) -> dict | None:
    """The stored ablation tables (data/reproduction/ablations.json), or None when the file is missing."""
    from pathlib import Path

    from engine.reproduce.stored import STORED_DIR

    return _read_stored(Path(folder or STORED_DIR) / ABLATIONS_FILE)


def forget() -> None:
    """Forget the stored tables read so far (after the file was rewritten)."""
    _read_stored.cache_clear()


@lru_cache(maxsize=2)
def _read_stored(path) -> dict | None:
    import json

    return json.loads(path.read_text()) if path.is_file() else None


def rows_for(claims, stored: dict | None = None) -> list[dict]:
    """The stored ablation rows about the claims with these texts, each with its ablation's name and runs."""
    stored = stored_ablations() if stored is None else stored
    wanted = set(claims)
    return [{**row, "ablation": name, "runs": table["runs"]}
            for name, table in (stored or {}).get("ablations", {}).items()
            for row in table["rows"] if row["claim"] in wanted]


def ablation_markdown(stored: dict) -> str:
    """docs/paper-comparisons.md's tables: per ablation, each claim's verdict with our deviation and without it,
    each side judged by the one rule over the ablation family (discovery numbers, then the replication's)."""
    from engine.reproduce.stats import numbers_text, verdict_text

    out = []
    for name, table in stored["ablations"].items():
        spec = ABLATIONS[name]
        runs = f"{table['runs']} paired runs per side, seed {table['seed']}" if table["runs"] else "accounting only"
        if table.get("base", {}).get("agents"):
            runs += f", the first {table['base']['agents']} landmine fields"
        if table.get("scale") is not None:
            fit = table.get("fitted_on", {})
            runs += f"; clip factor {table['scale']:.3f} fitted on seed {fit.get('seed')} ({fit.get('runs')} runs)"
        out += [f"**{name}** ({runs}). Ours: {spec['deviation']}. Without it: {spec['authors']}.", "",
                "| claim | with our deviation | without it | conclusion |", "| --- | --- | --- | --- |"]
        for row in table["rows"]:
            cells = []
            for side in ("with", "without"):
                n = row[side]
                again = (row.get("replication") or {}).get(side)
                cells.append(f"{verdict_text(n)} ({numbers_text(n)}"
                             + (f"; replication {numbers_text(again)})" if again else ")"))
            if row["authors"] != spec["authors"]:
                cells[1] = f"{row['authors']}: {cells[1]}"
            out.append(f"| {row['claim']} | {cells[0]} | {cells[1]} | {row['conclusion']} |")
        out.append("")
    return "\n".join(out)
