"""The stored DP-HYPE reproduction's data figures as plain numbers, for the pages to draw.

- Figs. 5, 6, 10 and 11: a cell's test accuracy against epsilon (mean and 95 % interval over its runs) with
  OPT and RANDGUESS (:func:`cell_curve`);
- Figs. 4 and 9: the candidates' test accuracies as histograms, mean count per bin over the runs
  (:func:`candidate_histograms`): Fig. 4 at n = 100 iid for every stand-in, Fig. 9 at n = 50 for every split.

A page showing a preset draws the cell of the preset's setting; the Paper reproduction page draws
:data:`FIGURE_CELLS`, the settings of the DP-HYPE page's presets.
"""

from __future__ import annotations

import math

import numpy as np

from engine.hype.utility import mean_interval
from engine.reproduce.dp_hype_data import EPSILONS, alpha_of

CURVE_FIGURES = ("Fig. 5", "Fig. 6", "Fig. 10", "Fig. 11")
HISTOGRAM_FIGURES = ("Fig. 4", "Fig. 9")
FIGURE_CELLS = {"Fig. 5": ("mnist-like", 100, None), "Fig. 6": ("cifar-like", 100, 0.5),
                "Fig. 10": ("mnist-like", 250, 5.0), "Fig. 11": ("mnist-like", 50, 5.0)}
BINS = 20                      # histogram bins of 0.05 over [0, 1]


def find_cell(part: dict, dataset: str, clients: int, alpha) -> dict | None:
    """The stored data part's cell of (data set, n, alpha) (App. D's alpha = 2 stands for 0.5 where it applies)."""
    alpha = alpha_of(dataset, int(clients), alpha)
    for cell in part.get("cells", []):
        if cell["dataset"] == dataset and cell["clients"] == int(clients) and cell["alpha"] == alpha:
            return cell
    return None


def cell_curve(cell: dict) -> dict:
    """Epsilons (inf last), DP-HYPE's (E, 3) mean/low/high, OPT's and RANDGUESS's mean and interval: 95 % over the
    cell's runs, as the DP-HYPE page draws its own runs (:func:`engine.hype.utility.mean_interval`)."""
    keys = [("inf" if math.isinf(e) else f"{e:g}") for e in EPSILONS]
    opt, rand = mean_interval(cell["opt"]), mean_interval(cell["randguess"])
    return {"epsilons": list(EPSILONS), "hype": np.array([mean_interval(cell["accuracy"][k]) for k in keys]),
            "opt": opt[0], "opt_ci": opt[1:], "randguess": rand[0], "randguess_ci": rand[1:],
            "runs": len(cell["opt"])}


def candidate_histograms(part: dict, figure: str, dataset: str | None = None) -> list[dict]:
    """One histogram per shown cell: ``{"name", "edges", "counts"}`` (mean count of candidates per bin over runs).

    Fig. 4: n = 100, iid, every data set (or ``dataset``); Fig. 9: n = 50, every split of ``dataset``
    (default mnist-like)."""
    if figure == "Fig. 4":
        cells = [c for c in part.get("cells", []) if c["clients"] == 100 and c["alpha"] is None
                 and (dataset is None or c["dataset"] == dataset)]
        names = [c["dataset"] for c in cells]
    else:
        dataset = dataset or "mnist-like"
        cells = [c for c in part.get("cells", []) if c["clients"] == 50 and c["dataset"] == dataset]
        names = ["iid" if c["alpha"] is None else f"α = {c['alpha']:g}" for c in cells]
    edges = np.linspace(0.0, 1.0, BINS + 1)
    return [{"name": name, "edges": edges,
             "counts": np.mean([np.histogram(run, bins=edges)[0] for run in cell["candidates"]], axis=0)}
            for name, cell in zip(names, cells)]
