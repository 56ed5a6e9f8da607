"""Benchmark the authors' query optimiser of the landmine ablation (engine.fbo.refine).

Measures, on this machine, with one thread:

1. the refinement alone: L-BFGS-B from STARTS starts for every agent of ``--runs`` runs x ``--agents``
   agents, on own samples of M = 100 normalised random features in D = 2 (the landmine setting), per agent
   and iteration: the figure ``engine.fbo.refine.REFINE_AGENT_ITERATION_S`` must stay above;
2. unless ``--skip-run``: one landmine DP-FTS-DE block (q = 0.35, z = 1) on the continuous box with the
   refinement, ``--agents`` fields, ``--iterations`` iterations, against the price the command line gives it.

Usage::

    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.bench_refine [--runs 20] [--agents 8]

Prints a JSON summary and writes it to ``benchmarks/results/bench_refine.json``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import RESULTS


def refinement_seconds(runs: int, agents: int, repeats: int = 5) -> float:
    """CPU seconds per agent and iteration of the refinement (the best of ``repeats``)."""
    from engine.fbo.refine import STARTS, maximise, normalised_rff

    rng = np.random.default_rng(0)
    K, M, D = runs * agents, 100, 2
    freq = rng.standard_normal((K, M, D)) / 0.1
    phase = rng.uniform(0.0, 2.0 * np.pi, (K, M))
    weight = rng.standard_normal((K, M))
    scale = np.full(K, 0.3)
    starts = rng.random((K, STARTS, D))

    def sample(x):
        return normalised_rff(x, freq, phase, np.broadcast_to(weight[:, None, :], x.shape[:2] + (M,)), scale)

    best = np.inf
    for _ in range(repeats):
        begin = time.process_time()
        maximise(sample, starts, np.zeros_like(starts), np.ones_like(starts))
        best = min(best, time.process_time() - begin)
    return best / K


def block_seconds(runs: int, agents: int, iterations: int) -> dict:
    """One refined landmine block: its CPU seconds and the command line's price for it."""
    from engine.fbo.config import FboConfig
    from engine.fbo.refine import RefinedSimulation
    from engine.objectives.landmine import make_task
    from engine.reproduce.ablations import block_cost
    from engine.objectives.task_objective import objective_for
    from engine.reproduce.dp_fts_de import PART_SPECS

    objective = objective_for(make_task(agents), "continuous")
    config = FboConfig(**{**PART_SPECS["landmine"].base, "agents": agents, "iterations": iterations, "runs": runs,
                          "algorithm": "dp-fts-de", "q": 0.35, "z": 1.0, "domain": "continuous"})
    begin = time.process_time()
    sim = RefinedSimulation(config, objective)
    for _ in sim:
        pass
    seconds = time.process_time() - begin
    price = block_cost(config, "continuous").seconds
    return {"seconds": round(seconds, 2), "priced_seconds": round(price, 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--skip-run", action="store_true")
    args = parser.parse_args(argv)
    from engine.fbo.refine import REFINE_AGENT_ITERATION_S

    with threadpool_limits(1):
        out = {"refine_agent_iteration_s": refinement_seconds(args.runs, args.agents),
               "priced_refine_agent_iteration_s": REFINE_AGENT_ITERATION_S}
        if not args.skip_run:
            out["block"] = {"runs": args.runs, "agents": args.agents, "iterations": args.iterations,
                            **block_seconds(args.runs, args.agents, args.iterations)}
    text = json.dumps(out, indent=2)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_refine.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
