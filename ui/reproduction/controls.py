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


def small_run_refusal(part, values: dict) -> str | None:
    """When a small run of ``part`` at the page's default runs is too large for this host: the plain sentence
    that says so (Run is off, the stored results stay), with the fewer runs that fit if any; None otherwise (a
    refusal of runs the visitor chose is shown at the control)."""
    from engine.fbo.plan import lines_cost
    from engine.limits import HostLimits, check, format_seconds
    from engine.reproduce import small_run_configs
    from engine.validation import ConfigError

    if values["runs"] != PARAMS["runs"].default:
        return None

    def fits(runs: int) -> bool:
        try:
            configs = small_run_configs(part, runs, values["seed"])
            check(lines_cost(tuple(cfg for _, cfg in configs), objectives_built=True))
        except ConfigError:
            return False
        return True

    if fits(values["runs"]):
        return None
    fewer = next((runs for runs in range(values["runs"] - 1, PARAMS["runs"].low - 1, -1) if fits(runs)), None)
    limit = format_seconds(HostLimits.from_env().max_seconds or 0)
    return (f"A small run of this part with {values['runs']} runs per setting is more than the {limit} of computing "
            "this server allows per request, so Run is off; the stored results below are this part's. "
            + (f"With {fewer} runs per setting it fits." if fewer else "Run it on your own machine for a small run."))

