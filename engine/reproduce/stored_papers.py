"""The stored reproductions of every registered paper, one summary over them, and each figure's verdicts.

``data/reproduction/<paper>.json`` is exactly what ``python -m engine reproduce <paper>`` prints
(the DP-FTS-DE paper keeps its two files, see :mod:`engine.reproduce.stored`); ``provenance.json``
says how each was made. :func:`stored_payloads` reads them all, :func:`figure_note` says what the
stored runs say about one figure or table, for a page's preset.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.paths import STORED_REPRODUCTION_DIR
from engine.reproduce.claims import VERDICTS
from engine.reproduce.papers import claim_figures, summary_rows

STORED_DIR = STORED_REPRODUCTION_DIR     # the checkout's data/reproduction/, or the wheel's copy
PROVENANCE_FILE = "provenance.json"


def anchor(paper: str, figure: str) -> str:
    """The page anchor of a paper's figure ("dp-hype", "Fig. 5" -> "dp-hype-fig-5")."""
    return re.sub(r"[^a-z0-9]+", "-", f"{paper} {figure}".lower()).strip("-")


def provenance(paper: str, folder: Path | None = None) -> dict:
    path = Path(folder or STORED_DIR) / PROVENANCE_FILE
    return json.loads(path.read_text()).get(paper, {}) if path.is_file() else {}


@lru_cache(maxsize=8)
def _read(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def forget() -> None:
    """Forget the stored files read so far (after they were rewritten)."""
    _read.cache_clear()


def stored_payload(paper: str, folder: Path | None = None) -> dict | None:
    """The stored command-line output of ``paper`` (DP-FTS-DE: its two parts joined), or None."""
    folder = Path(folder or STORED_DIR)
    if paper == "dp-fts-de":
        parts = {}
        from engine.reproduce.dp_fts_de import PARTS     # every stored part, the appendix's too

        for name in PARTS:
            payload = _read(folder / f"dp-fts-de-{name}.json")
            if payload:
                parts.update(payload["parts"])
        return {"paper": paper, "parts": parts} if parts else None
    return _read(folder / f"{paper}.json")


# Stored parts on a data set the paper did not use, kept in files of their own beside the paper's (not in its
# tally, nor run by its default command): by paper, the file names.
BESIDE_FILES = {"dp-hype": ("dp-hype-fashion-mnist.json",)}


def stored_beside(paper: str, folder: Path | None = None) -> dict:
    """{part name: stored part} of ``paper``'s parts on other data (:data:`BESIDE_FILES`) that are installed."""
    folder = Path(folder or STORED_DIR)
    out = {}
    for name in BESIDE_FILES.get(paper, ()):
        payload = _read(folder / name)
        if payload:
            out.update(payload.get("parts", {}))
    return out


def stored_payloads(folder: Path | None = None) -> dict:
    """Every registered paper's stored output, by paper (papers without a stored file are left out)."""
    from engine.reproduce import PAPERS

    out = {}
    for paper in PAPERS:
        payload = stored_payload(paper, folder)
        if payload:
            out[paper] = payload
    return out


def figure_order(figure: str) -> tuple:
    """Where ``figure`` comes in its paper: figures by number and letter, then tables, then the rest
    ("Fig. 2a" < "Fig. 10" < "Table 1" < "App. A")."""
    found = re.fullmatch(r"(Fig\.|Table) (\d+)([a-z]?)", figure)
    if found is None:
        return (2, 0, figure)
    return (0 if found.group(1) == "Fig." else 1, int(found.group(2)), found.group(3))


def summary(folder: Path | None = None) -> list[dict]:
    """Paper x figure rows of the stored reproductions (papers in the registry's order, each paper's figures in
    its own order): claims holding, not significant, reversed."""
    from engine.reproduce import PAPERS

    rows = summary_rows(stored_payloads(folder))
    rows.sort(key=lambda row: (list(PAPERS).index(row["paper"]), figure_order(row["figure"])))
    for row in rows:
        row["anchor"] = anchor(row["paper"], row["figure"])
    return rows


def claims_of(paper: str, figure: str, folder: Path | None = None) -> list[dict]:
    """The stored claims of ``paper`` about ``figure`` ("Fig. 5", "Table 4")."""
    payload = stored_payload(paper, folder) or {"parts": {}}
    return [c for part in payload["parts"].values() for c in part.get("claims", []) if figure in claim_figures(c)]


@dataclass(frozen=True)
class FigureNote:
    headline: str
    details: str
    all_hold: bool


def figure_note(paper: str, figure: str, folder: Path | None = None) -> FigureNote | None:
    """What the stored runs say about one figure: a headline with the counts and the claims that do not hold."""
    claims = claims_of(paper, figure, folder)
    if not claims:
        return None
    n = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    runs = max(c["numbers"].get("runs", 0) for c in claims)
    headline = (f"{figure}, stored reproduction ({runs} runs or repetitions): {n['holds']} of {len(claims)} "
                f"claims hold" + (f", {n['reversed']} reversed." if n["reversed"] else "."))
    failing = [c for c in claims if c["verdict"] != "holds"]
    shown = failing or claims
    details = ("Not holding" if failing else "All hold") + " (difference ± s.e., positive: the paper's way): " + \
        " · ".join(f"{c['claim']}: {c['verdict']} ({c['numbers']['difference']:+.3f} ± "
                   f"{c['numbers']['stderr']:.3f})" for c in shown[:6]) + \
        (f" · and {len(shown) - 6} more" if len(shown) > 6 else "") + "."
    return FigureNote(headline, details, not failing)


def preset_in_view(values: dict, presets: dict, ignore=("runs", "seed", "repetitions")) -> str | None:
    """The preset whose control values the page shows (runs, seed and repetitions aside), or None.

    ``presets`` maps a name to its control values."""
    def same(a, b) -> bool:
        if isinstance(b, float) and isinstance(a, (int, float)):
            return abs(float(a) - b) <= 1e-9 * max(1.0, abs(b))
        return a == b

    for name, wanted in presets.items():
        if all(same(values.get(key), value) for key, value in wanted.items() if key not in ignore):
            return name
    return None
