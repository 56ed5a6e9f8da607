"""Benchmark the objective tables and a landmine run that reads from them.

Measures, on this machine:

1. the one-time build of each task's default table (landmine: 29 fields x
   50 x 50 = 72,500 SVM fits) in a fresh cache directory, with ``--jobs``
   worker processes;
2. one landmine DP-FTS-DE run (29 agents x 60 iterations, q = 0.35, z = 1, the
   paper preset ``engine.fbo.presets.LANDMINE``: own GPs re-fitted every 5
   observations, sampled the authors' way) once the table exists: loading the
   objective from the cache, and the simulation itself (engine time; target at most 2 s);
3. unless ``--skip-curves``: the landmine curves (mean 1 - AUC at iterations 0,
   10, 30, 60 with standard errors over ``--runs`` runs) of TS, FTS-DE and DP-FTS-DE.

Usage::

    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.bench_tables [--jobs 2] [--runs 10]

Prints a JSON summary and writes it to ``benchmarks/results/bench_tables.json``.
Pass ``--cache-dir`` to reuse tables built earlier (then build times are cache reads).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS

ROOT = Path(__file__).resolve().parents[1]

CHECKPOINTS = (0, 10, 30, 60)


def _build_tables(names, jobs):
    from engine.objectives.builds import build_table
    from engine.objectives.registry import make_task

    out = {}
    for name in names:
        task = make_task(name)
        last = [0.0]

        def report(done, total, name=name, last=last):
            if time.perf_counter() - last[0] > 10 or done == total:
                last[0] = time.perf_counter()
                print(f"  {name}: {done}/{total} agents", file=sys.stderr, flush=True)

        built = build_table(task, n_jobs=jobs, progress=report)
        out[name] = {"seconds": round(built.seconds, 2), "from_cache": built.from_cache,
                     "shape": list(built.values.shape), "path": str(built.path),
                     "mean_best_score": round(float(built.values.max(axis=1).mean()), 4)}
        print(f"{name}: {out[name]}", file=sys.stderr, flush=True)
    return out


def _landmine_config(**changes):
    from engine.fbo import FboConfig
    from engine.fbo.presets import LANDMINE

    return FboConfig(**{**LANDMINE, "algorithm": "dp-fts-de", "q": 0.35, "z": 1.0, "runs": 1, "seed": 0, **changes})


def _time_run(repeats):
    from engine.fbo import run_fbo
    from engine.objectives import build_objective

    config = _landmine_config()
    started = time.perf_counter()
    objective = build_objective("landmine")
    load = time.perf_counter() - started
    times, engine = [], []
    for repeat in range(repeats):
        started = time.perf_counter()
        engine.append(run_fbo(config.replace(seed=repeat), objective).wall_seconds)
        times.append(time.perf_counter() - started)
    return {"objective_from_cache_seconds": round(load, 3), "run_seconds": [round(t, 3) for t in times],
            "run_seconds_median": round(sorted(times)[len(times) // 2], 3),
            "engine_seconds_median": round(sorted(engine)[len(engine) // 2], 3), "target_seconds": 2.0}


def _curves(runs):
    from engine.fbo import run_fbo
    from engine.objectives import build_objective

    objective = build_objective("landmine")
    out = {}
    for algorithm in ("ts", "fts-de", "dp-fts-de"):
        started = time.perf_counter()
        result = run_fbo(_landmine_config(algorithm=algorithm, runs=runs, seed=1), objective)
        by_iteration = {r.iteration: r for r in result.records}
        entry = {f"t{t}": [round(by_iteration[t].mean, 4), round(by_iteration[t].stderr, 4)]
                 for t in CHECKPOINTS if t in by_iteration}          # mean, standard error over runs
        entry["epsilon"] = round(result.epsilon[-1], 3) if result.epsilon else None
        entry["delta"] = result.delta
        entry["seconds"] = round(time.perf_counter() - started, 2)
        out[algorithm] = entry
        print(f"{algorithm}: {entry}", file=sys.stderr, flush=True)
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", help="reuse this cache (default: a fresh temporary one)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tasks", nargs="+", default=["landmine", "digits-svm", "breast-cancer-lr"])
    parser.add_argument("--repeats", type=int, default=3, help="timed landmine DP-FTS-DE runs")
    parser.add_argument("--runs", type=int, default=10, help="runs per algorithm for the curves")
    parser.add_argument("--skip-curves", action="store_true")
    parser.add_argument("--out", default=str(RESULTS / "bench_tables.json"))
    args = parser.parse_args(argv)

    cache = args.cache_dir or tempfile.mkdtemp(prefix="dpbo-bench-tables-")
    os.environ["DPBO_CACHE_DIR"] = cache
    summary = {"cpu_count": os.cpu_count(), "load_average_at_start": list(os.getloadavg()), "cache_dir": cache,
               "jobs": args.jobs, "tables": _build_tables(args.tasks, args.jobs)}
    if "landmine" in args.tasks:
        summary["landmine_dp_fts_de_run"] = _time_run(args.repeats)
        if not args.skip_curves:
            summary["landmine_curves"] = {"runs": args.runs, "q": 0.35, "z": 1.0, **_curves(args.runs)}
    summary["load_average_at_end"] = list(os.getloadavg())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
