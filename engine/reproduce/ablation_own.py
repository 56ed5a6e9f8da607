"""The ablations that run code of their own, not blocks of federated BO runs: Fig. 11's accounting under each
neighbouring relation, and PO-GP-UCB's Fig. 2a on other grid extents (engine.reproduce.ablations names them)."""

from __future__ import annotations

import time
from functools import lru_cache

from engine.validation import check_choice


def fig11_ablation() -> dict:
    """Fig. 11's nine (q, z): the fixed sample's RDP loss under each neighbouring relation against Fig. 3a's."""
    from engine.privacy import default_delta, epsilon
    from engine.reproduce.dp_fts_de_appendix import REAL_DP

    from engine.reproduce.ablation_specs import ABLATIONS
    from engine.reproduce.dp_fts_de import PART_SPECS

    spec = ABLATIONS["fig11-neighbours"]
    part = PART_SPECS["landmine-renyi"]
    agents, steps = 29, int(part.base["iterations"])
    delta = default_delta(agents, "paper")     # Fig. 11 at the paper's delta = 1/N^1.1
    rows = []
    for claim, (q, z) in zip(part.claims, REAL_DP):
        reference = epsilon(q, z, steps, delta, "ma")
        sides = {}
        for side, value in (("with", fixed_sample_epsilon(q, z, steps, delta, agents, "replace-one")),
                            ("without", fixed_sample_epsilon(q, z, steps, delta, agents, "add-remove"))):
            difference = reference - value
            sides[side] = {"better_mean": value, "worse_mean": reference, "difference": difference, "stderr": 0.0,
                           "runs": 0}
        rows.append({"claim": claim.text, "source": claim.source, "deviation": spec["deviation"],
                     "authors": spec["authors"], **sides})
    return {"name": "fig11-neighbours", "part": "landmine-renyi", "switch": "add-remove", "runs": 0, "seed": None,
            "rows": rows, "seconds": 0.0}


EXTENTS = (3.75, 15.0)   # half and twice our side of PO-GP-UCB's synthetic grid


def extent_ablation(runs: int = 50, seed: int = 0, replicate: bool = True) -> dict:
    """PO-GP-UCB Fig. 2a's orderings on our grid extent and on half and twice it (the paper's 50 runs at most), on
    the discovery seed set and (``replicate``) the replication seed set; judged by the ablation family's rule."""
    from engine.reproduce.ablation_specs import ABLATIONS
    from engine.reproduce.replication import replication_seed

    spec = ABLATIONS["pogpucb-extent"]
    started = time.perf_counter()
    seeds = (seed, replication_seed(seed)) if replicate else (seed,)
    sides = {s: _extent_numbers(runs, s) for s in seeds}
    rows = []
    for i, (claim, source, _) in enumerate(sides[seed][None]):
        for extent in EXTENTS:
            row = {"claim": claim, "source": source, "deviation": spec["deviation"],
                   "authors": f"the grid [0, {extent:g}]^2", "with": sides[seed][None][i][2],
                   "without": sides[seed][extent][i][2]}
            if replicate:
                again = sides[seeds[1]]
                row["replication"] = {"seed": seeds[1], "with": again[None][i][2], "without": again[extent][i][2]}
            rows.append(row)
    return {"name": "pogpucb-extent", "part": "po-gp-ucb synthetic", "switch": "extent", "runs": runs, "seed": seed,
            "rows": rows, "seconds": round(time.perf_counter() - started, 1)}


def _extent_numbers(runs: int, seed: int) -> dict:
    """{extent (None: ours): [(claim, source, numbers)]} of Fig. 2a's claims at seed set ``seed``."""
    from engine.reproduce.po_gp_ucb import figure_claims

    keys = ("better", "worse", "better_mean", "worse_mean", "difference", "stderr", "runs", "paired")
    return {extent: [(c["claim"], c["source"], {k: c["numbers"].get(k) for k in keys})
                     for c in figure_claims("synthetic", runs, seed, extent=extent)]
            for extent in (None, *EXTENTS)}


@lru_cache(maxsize=64)
def fixed_sample_epsilon(q: float, z: float, steps: int, delta: float, agents: int,
                         neighbours: str = "replace-one") -> float:
    """epsilon of ``steps`` releases with a fixed sample of round(N q) agents, RDP accountant.

    ``replace-one`` (the engine's accounting of fixed samples): dp_accounting's sampling without replacement
    under replace-one neighbours. ``add-remove``: the paper's reading, the Poisson-subsampled Gaussian at
    rate q under add/remove neighbours (the analysis whose numbers Fig. 11 matches).
    """
    from engine.privacy import epsilon

    check_choice("neighbouring relation", neighbours, ("replace-one", "add-remove"))
    if neighbours == "replace-one":
        return float(epsilon(q, z, steps, delta, "rdp", sampling="fixed", n_agents=agents))
    return float(epsilon(q, z, steps, delta, "rdp", sampling="poisson"))


