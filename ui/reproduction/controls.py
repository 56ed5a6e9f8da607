"""The paper reproduction's controls: which part of the paper, and a small live run's size and seed."""

from __future__ import annotations

from engine.reproduce import PART_SPECS, PARTS
from engine.reproduce.report import RUNS_PER_BLOCK
from ui.kit.state import Ignored, Param, current_values, init_state

PREFIX = "repro_"
# Every paper the page holds, in the order it offers them (ui.reproduction.papers.PAPER_LABELS names them).
PAPERS = ("dp-fts-de", "fts", "dp-hype", "po-gp-ucb")
PARAMS = {
    "paper": Param("dp-fts-de", str, PAPERS),
    "part": Param("landmine", str, PARTS),
    # A small run is one block of runs per setting (the command line's numbers for the same runs and seed).
    "runs": Param(4, int, low=2, high=RUNS_PER_BLOCK),
    "seed": Param(0, int, low=0, high=2**31 - 1),
}
NAMES = {"landmine": "Landmine", "synthetic": "Synthetic", "synthetic-appendix": "Synthetic, appendix",
         "heterogeneous": "Heterogeneous agents", "landmine-renyi": "Landmine, Rényi DP",
         "har-standin": "Activity recognition, stand-in", "emnist-standin": "EMNIST, stand-in"}
# "Synthetic (Fig. 2a, 2c, 2d)": each part's name and the figures its spec reproduces.
TITLES = {name: f"{NAMES.get(name, name)} (Fig. " + ", ".join(f.removeprefix("fig") for f in spec.figures) + ")"
          for name, spec in PART_SPECS.items()}


def init() -> list[Ignored]:
    """Seed the controls from the URL; returns the link values that were ignored."""
    return init_state(PARAMS, PREFIX)


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)
