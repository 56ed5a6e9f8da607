"""The committed reproduction of the DP-FTS-DE paper (``data/reproduction/``), and what it says about each figure.

A reproduction at the paper's 100 runs per setting takes minutes, so its
output is stored: one JSON file per part, exactly what
``python -m engine reproduce dp-fts-de --parts <part> ...`` prints (the
commands, dates and machine load are in ``data/reproduction/provenance.json``
and ``data/reproduction/README.md``). The dashboard draws these curves and
verdicts, and every paper preset quotes the verdicts about its figure
(:func:`figure_verdicts`) next to its chart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.paths import STORED_REPRODUCTION_DIR
from engine.reproduce.dp_fts_de import PART_SPECS, PARTS
from engine.reproduce.report import Claim, deciding_comparison
from engine.validation import check_choice

STORED_DIR = STORED_REPRODUCTION_DIR     # the checkout's data/reproduction/, or the wheel's copy
STORED_FILES = {name: f"dp-fts-de-{name}.json" for name in PARTS}
PROVENANCE_FILE = "provenance.json"
VERDICTS = ("holds", "not significant", "reversed", "differs")   # differs: a size claim outside its band


@dataclass(frozen=True)
class StoredPart:
    """One part of the stored reproduction: the CLI's JSON for it and how it was generated."""

    name: str
    payload: dict          # {"title", "metric", "runs", "checkpoints", "settings": [...], "claims": [...]}
    provenance: dict       # {"command", "date", "wall_seconds", "load_average", ...}
    path: Path

    @property
    def runs(self) -> int:
        return int(self.payload["runs"])

    def setting_label(self, key: str) -> str:
        return next((s["label"] for s in self.payload["settings"] if s["key"] == key), key)


def stored_part(name: str, folder: Path | None = None) -> StoredPart | None:
    """The stored part ``name`` (one of :data:`engine.reproduce.PARTS`), or None when its file is missing."""
    check_choice("reproduction part", name, tuple(STORED_FILES))
    return _read(name, Path(folder or STORED_DIR))


@lru_cache(maxsize=8)
def _read(name: str, folder: Path) -> StoredPart | None:
    path = folder / STORED_FILES[name]
    if not path.is_file():
        return None
    output = json.loads(path.read_text())
    provenance_path = folder / PROVENANCE_FILE
    provenance = json.loads(provenance_path.read_text()).get(name, {}) if provenance_path.is_file() else {}
    return StoredPart(name, output["parts"][name], provenance, path)


def _claim_of(part: str, text: str) -> Claim | None:
    """The engine's :class:`Claim` whose sentence is ``text`` (the stored JSON keeps the sentence only)."""
    return next((c for c in PART_SPECS[part].claims if c.text == text), None)


@dataclass(frozen=True)
class FigureVerdicts:
    """The stored verdicts about one figure of the paper, and a short note that says them with the numbers."""

    figure: str                 # a preset name, "fig3a"
    part: str
    runs: int
    claims: list                # stored claim dicts, each with "family" added
    headline: str               # "Fig. 3a, 100 paired runs per setting: 3 of 13 claims hold, 1 reversed."
    details: str                # the claims that do not hold (or, if all do, all of them), with the numbers

    @property
    def held(self) -> int:
        return sum(c["verdict"] == "holds" for c in self.claims)

    @property
    def all_hold(self) -> bool:
        return self.held == len(self.claims)


def figure_name(figure: str) -> str:
    """"fig3a" -> "Fig. 3a"."""
    return "Fig. " + figure.removeprefix("fig")


def figure_verdicts(figure: str, folder: Path | None = None) -> FigureVerdicts | None:
    """What the stored reproduction says about the paper's ``figure`` ("fig2a", "fig3a", ...).

    None when no stored part has a claim about that figure (or its file is missing).
    """
    for name in STORED_FILES:
        part = stored_part(name, folder)
        if part is None:
            continue
        claims = []
        for stored in part.payload["claims"]:
            claim = _claim_of(name, stored["claim"])
            if claim is not None and figure in claim.figures:
                claims.append(dict(stored, family=claim.family or claim.text))
        if claims:
            return FigureVerdicts(figure, name, part.runs, claims, _headline(figure, part.runs, claims),
                                  _details(part, claims))
    return None


def _numbers(claim: dict) -> str:
    """The paired difference ± its standard error (positive: the paper's way)."""
    n = deciding_comparison(claim["numbers"])
    return f"{n['difference']:+.4f} ± {n['stderr']:.4f}"


def _headline(figure: str, runs: int, claims: list) -> str:
    held = sum(c["verdict"] == "holds" for c in claims)
    reversed_ = sum(c["verdict"] == "reversed" for c in claims)
    text = f"{figure_name(figure)}, {runs} paired runs per setting: {held} of {len(claims)} claims hold"
    return text + (f", {reversed_} reversed." if reversed_ else ".")


def _details(part: StoredPart, claims: list) -> str:
    """The claims that do not hold, a family of claims counted together; every claim if all hold."""
    families: dict[str, list] = {}
    for claim in claims:
        families.setdefault(claim["family"], []).append(claim)
    failing = {family: group for family, group in families.items()
               if any(c["verdict"] != "holds" for c in group)}
    shown = failing or families
    phrases = []
    for family, group in shown.items():
        if len(group) == 1:
            phrases.append(f"{family}: {group[0]['verdict']} ({_numbers(group[0])})")
            continue
        counts = []
        for verdict in VERDICTS:
            members = [c for c in group if c["verdict"] == verdict]
            if not members:
                continue
            if len(members) <= 2:
                where = "; ".join(f"{_setting(part, c)}: {_numbers(c)}" for c in members)
            else:
                diffs = [deciding_comparison(c["numbers"])["difference"] for c in members]
                where = f"differences {min(diffs):+.4f} to {max(diffs):+.4f}"
            counts.append(f"{verdict} in {len(members)} of {len(group)} ({where})")
        phrases.append(f"{family}: " + ", ".join(counts))
    return (("Not holding" if failing else "All hold") + " (difference ± s.e., positive: the paper's way): "
            + " · ".join(phrases) + ".")


def _setting(part: StoredPart, claim: dict) -> str:
    return part.setting_label(deciding_comparison(claim["numbers"])["better"])
