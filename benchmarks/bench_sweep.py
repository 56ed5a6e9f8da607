"""Benchmark a parameter sweep: the landmine Fig. 3a sweep, on 1 and 2 workers.

The sweep is the paper's Fig. 3a (``engine.sweep.preset_spec("fig3a")``):
DP-FTS-DE on landmine detection (29 agents, 60 iterations, M = 100) for z in
{1, 1.6, 2, 3, 4} at q = 0.35 and q in {0.1, 0.15, 0.2, 0.25, 0.35} at z = 1
(9 distinct settings, since (q, z) = (0.35, 1) is in both), plus TS, FTS and
FTS-DE as reference levels: 12 cells x 10 runs. Measured:

1. the objective table (built once if the cache has none; reported apart);
2. the whole sweep from the cached table with the chosen executor on 1 and on
   2 workers (each into a fresh output, so nothing is reused), with the speed-up;
3. that every worker count wrote the same rows (timing columns aside);
4. the frontier: privacy loss and mean 1 - AUC after 60 iterations per setting.

Without LandmineData.mat it measures the synthetic Fig. 2c and 2d sweeps instead
and says so.

Usage::

    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.bench_sweep [--runs 10] [--workers 1,2]
        [--executor joblib|dask] [--cache-dir DIR]

Prints a JSON summary and writes it to ``benchmarks/results/bench_sweep.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import save_results

ROOT = Path(__file__).resolve().parents[1]

TARGET_SECONDS = 120.0


def _landmine_available() -> str | None:
    """None when the landmine table can be built or read, else the sentence why not."""
    from engine.objectives import DatasetUnavailable
    from engine.objectives.landmine import make_task

    try:
        make_task()
    except DatasetUnavailable as err:
        return str(err)
    return None


def _prepare_table(spec) -> dict:
    from engine.sweep import get_adapter

    started = time.perf_counter()
    get_adapter("fbo").prepare(spec.cells(get_adapter("fbo"))[0].params)
    return {"seconds": round(time.perf_counter() - started, 2)}


def _run(spec, executor: str, workers: int, directory: Path) -> dict:
    from engine.sweep import run_sweep

    out = directory / f"{executor}-{workers}.parquet"
    cluster = None
    extra = {}
    kwargs = dict(executor=executor, workers=workers)
    if executor == "dask":
        # Start the cluster outside the timed part: on a real cluster it is already running.
        from distributed import LocalCluster

        started = time.perf_counter()
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                               processes=True)
        extra["cluster_start_seconds"] = round(time.perf_counter() - started, 2)
        kwargs = dict(executor="dask", scheduler=cluster.scheduler_address)

    def report(progress):
        print(f"  [{executor} x{workers}] {progress.line()}", file=sys.stderr, flush=True)

    try:
        started = time.perf_counter()
        summary = run_sweep(spec, out, on_progress=report, **kwargs)
        seconds = time.perf_counter() - started
    finally:
        if cluster is not None:
            cluster.close()
    return {"workers": workers, "executor": executor, "seconds": round(seconds, 2), "cells": summary.cells,
            "rows": summary.rows, "failed_cells": len(summary.failed),
            "cell_wall_seconds_sum": round(float(summary.table["wall_seconds"].sum()), 2),
            "cell_cpu_seconds_sum": round(float(summary.table["cpu_seconds"].sum()), 2), **extra,
            "table": summary.table}


def _frontier(table) -> list[dict]:
    from engine.sweep import summarise

    summary = summarise(table)
    return [{"setting": row["setting"], "reference": bool(row["reference"]),
             "epsilon": None if row["reference"] else round(float(row["privacy_loss"]), 3),
             "mean_metric": round(float(row["utility"]), 4), "stderr": round(float(row["utility_se"]), 4),
             "pareto": bool(row["pareto"])} for _, row in summary.iterrows()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--executor", choices=("joblib", "dask"), default="joblib")
    parser.add_argument("--cache-dir", help="objective tables (default: DPBO_CACHE_DIR or data/cache)")
    parser.add_argument("--synthetic", action="store_true", help="measure the synthetic Fig. 2c-d sweeps")
    args = parser.parse_args(argv)
    if args.cache_dir:
        os.environ["DPBO_CACHE_DIR"] = args.cache_dir

    from engine.paths import cache_dir
    from engine.sweep import comparable, preset_spec

    workers = [int(w) for w in args.workers.split(",")]
    result = {"cpu_count": os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
              "cache_dir": str(cache_dir()), "executor": args.executor, "runs": args.runs}
    unavailable = None if args.synthetic else _landmine_available()
    if args.synthetic or unavailable:
        if unavailable:
            print(f"landmine unavailable ({unavailable}); measuring the synthetic Fig. 2c-d sweeps instead",
                  file=sys.stderr)
        result["sweep"] = "synthetic fig2c + fig2d (landmine unavailable)" if unavailable else "synthetic"
        specs = {"fig2c": preset_spec("fig2c", runs=args.runs), "fig2d": preset_spec("fig2d", runs=args.runs)}
    else:
        result["sweep"] = "landmine fig3a"
        specs = {"fig3a": preset_spec("fig3a", runs=args.runs)}
        result["table"] = _prepare_table(specs["fig3a"])
        print(f"landmine table ready in {result['table']['seconds']} s", file=sys.stderr)

    result["timings"] = {}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        for name, spec in specs.items():
            runs = [_run(spec, args.executor, w, Path(tmp)) for w in workers]
            tables = [r.pop("table") for r in runs]
            identical = all(comparable(t).equals(comparable(tables[0])) for t in tables[1:])
            base = runs[0]["seconds"]
            for r in runs:
                r["speedup"] = round(base / r["seconds"], 2)
            result["timings"][name] = {"runs": runs, "identical_rows_across_worker_counts": identical,
                                       "frontier": _frontier(tables[0])}
    best = min(r["seconds"] for t in result["timings"].values() for r in t["runs"])
    result["fastest_seconds"] = best
    result["within_target"] = bool(best <= TARGET_SECONDS) if result["sweep"] == "landmine fig3a" else None
    save_results("bench_sweep.json", result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
