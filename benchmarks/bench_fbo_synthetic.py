"""Benchmark the federated BO engine on the paper's synthetic setting.

Cases (engine time = ``FboResult.wall_seconds``: objective, privacy curve and
simulation, without interpreter start-up):

1. ``paper``: DP-FTS-DE as in Sec. 5.1 (N = 200 agents, T = 40, M = 50, the
   1000-point grid, q = 0.25, z = 1, P = 2), one run, every agent sampling its own
   GP the authors' way (100 fresh random features per sample). Target: at most 1 s.
2. ``paper-5-runs``: the same with 5 runs simulated together (the paper's figures).
   ``paper-pathwise`` and ``paper-shared``: one run with the other own samplers.
3. ``grid-2d``: 29 agents x 60 iterations, M = 100, P = 4, on a 2500-point 2-D
   table (50 x 50 grid, landmine-sized; lengthscale 0.01 and noise 1e-6 as in
   App. B.2.1), one run.
4. ``first-record``: time from ``Simulation(config)`` to the first record (what
   the dashboard waits for before its first chart).

The CPU is shared, so every case is repeated and the minimum is reported, as
wall-clock engine time and as process CPU time.

Usage::

    python -m benchmarks.bench_fbo_synthetic [--repeats 5]

Prints a JSON summary and writes it to ``benchmarks/results/bench_fbo_synthetic.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from benchmarks import save_results
from engine.fbo import FboConfig, Simulation, run_fbo
from engine.fbo.presets import SYNTHETIC
from engine.objectives.base import TableObjective

ROOT = Path(__file__).resolve().parents[1]

TARGET_SECONDS = 1.0


def grid_objective(n_agents: int = 29, side: int = 50, seed: int = 0) -> TableObjective:
    """A landmine-sized 2-D table: a smooth base surface plus a per-agent smooth perturbation."""
    rng = np.random.default_rng(seed)
    axis = np.linspace(0.0, 1.0, side)
    X = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)

    def smooth(n):  # random sums of bumps, one row per function
        centres = rng.random((n, 12, 2))
        heights = rng.random((n, 12, 1))
        return (heights * np.exp(-((X[None, None] - centres[:, :, None]) ** 2).sum(-1) / 0.02)).sum(1)

    values = smooth(1) + 0.2 * smooth(n_agents)
    values = (values - values.min()) / np.ptp(values)
    return TableObjective(name="grid-2d", n_agents=n_agents, dim=2, noise_std=1e-3, reference=values.max(axis=1),
                          metric_label="simple regret", lengthscale=0.01, noise_var=1e-6, candidates=X, values=values)


def measure(make, repeats: int) -> dict:
    walls, cpus, engines = [], [], []
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        engine = make()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        engines.append(engine)
    return {"engine_seconds_min": min(engines), "engine_seconds_median": float(np.median(engines)),
            "cpu_seconds_min": min(cpus), "wall_seconds_min": min(walls), "repeats": repeats}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    paper = FboConfig(**{**SYNTHETIC, "algorithm": "dp-fts-de", "P": 2, "q": 0.25, "z": 1.0, "runs": 1, "seed": 0})
    grid = grid_objective()
    grid_config = FboConfig(algorithm="dp-fts-de", agents=None, iterations=60, features=100, P=4, q=0.35, z=1.0,
                            S=22.0, pt_schedule="linear", weight_schedule="real", runs=1)

    def first_record():
        sim = Simulation(paper)
        next(iter(sim))
        return sim.result().wall_seconds

    cases = {
        "paper": lambda: run_fbo(paper).wall_seconds,
        "paper-5-runs": lambda: run_fbo(paper.replace(runs=5)).wall_seconds,
        "paper-pathwise": lambda: run_fbo(paper.replace(own_sampler="pathwise")).wall_seconds,
        "paper-shared": lambda: run_fbo(paper.replace(own_sampler="shared")).wall_seconds,
        "grid-2d": lambda: run_fbo(grid_config, grid).wall_seconds,
        "first-record": first_record,
    }
    run_fbo(paper.replace(iterations=2))  # warm imports and caches
    summary = {"target_seconds": TARGET_SECONDS, "load_average_at_start": list(os.getloadavg()), "cases": {}}
    for name, make in cases.items():
        summary["cases"][name] = measure(make, args.repeats)
        print(f"{name:14s} engine min {summary['cases'][name]['engine_seconds_min']:.3f} s  "
              f"(median {summary['cases'][name]['engine_seconds_median']:.3f} s, "
              f"CPU min {summary['cases'][name]['cpu_seconds_min']:.3f} s)", flush=True)
    summary["paper_within_target"] = summary["cases"]["paper"]["engine_seconds_min"] <= TARGET_SECONDS
    summary["load_average_at_end"] = list(os.getloadavg())
    save_results("bench_fbo_synthetic.json", summary)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
