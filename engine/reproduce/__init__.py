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

__all__ = ["Claim", "LANDMINE_CLAIMS", "LANDMINE_SETTINGS", "PARTS", "PART_SPECS", "Part", "PartResult",
           "SYNTHETIC_CLAIMS", "SYNTHETIC_SETTINGS", "Setting", "SettingResult", "Verdict", "compare", "judge",
           "fts", "part_from_results", "reproduce_dp_fts_de", "reproduce_fts", "small_run_configs"]
