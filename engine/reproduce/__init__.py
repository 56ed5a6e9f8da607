"""Reproductions of the papers' experiments: our curves beside the papers' claims, judged over runs.

``reproduce_dp_fts_de(parts, runs=..., ...)`` runs the DP-FTS-DE paper's landmine and
synthetic protocols and returns ``{part: PartResult}``; ``PartResult.to_json()`` holds every
setting's curve with standard errors over runs and the list of claim verdicts
``{"claim", "source", "holds", "verdict", "numbers"}``. ``reproduce_fts`` does the same for the FTS
paper (:mod:`engine.reproduce.fts`).
"""

from engine.reproduce.dp_fts_de import (
    LANDMINE_CLAIMS,
    LANDMINE_SETTINGS,
    PART_SPECS,
    PARTS,
    SYNTHETIC_CLAIMS,
    SYNTHETIC_SETTINGS,
)
from engine.reproduce.dp_fts_de import reproduce as reproduce_dp_fts_de
from engine.reproduce import fts
from engine.reproduce.fts import reproduce as reproduce_fts
from engine.reproduce.report import (
    Claim,
    Part,
    PartResult,
    Setting,
    SettingResult,
    Verdict,
    compare,
    judge,
    part_from_results,
    small_run_configs,
)

# Every paper's reproduction, by the name the command line takes: one line per paper, the module that
# runs it (``python -m engine reproduce NAME``; ``all`` runs every one).
PAPERS = {
    "dp-fts-de": "engine.reproduce.dp_fts_de",
    "dp-hype": "engine.reproduce.dp_hype",
    "po-gp-ucb": "engine.reproduce.po_gp_ucb",
    "fts": "engine.reproduce.fts",
}

__all__ = ["PAPERS", "Claim", "LANDMINE_CLAIMS", "LANDMINE_SETTINGS", "PARTS", "PART_SPECS", "Part", "PartResult",
           "SYNTHETIC_CLAIMS", "SYNTHETIC_SETTINGS", "Setting", "SettingResult", "Verdict", "compare", "judge",
           "fts", "part_from_results", "reproduce_dp_fts_de", "reproduce_fts", "small_run_configs"]
