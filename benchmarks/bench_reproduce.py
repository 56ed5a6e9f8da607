"""Benchmark the DP-FTS-DE reproduction: the paper's landmine protocol at 100 runs per setting.

Runs ``engine.reproduce.reproduce_dp_fts_de`` (12 settings: TS, FTS, FTS-DE and the nine
DP-FTS-DE settings of Fig. 3a; 29 agents x 60 iterations, own GPs re-fitted every 5
observations) with ``--jobs`` worker processes, once the landmine table is cached.
Target: at most 5 minutes of wall time on the 2-core machine. Optionally (``--synthetic-runs``)
also the synthetic part (Fig. 2a and 2c, N = 200, T = 40).

Usage::

    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.bench_reproduce [--runs 100] [--jobs 2]

Prints a JSON summary (wall and CPU seconds, load averages, the checkpoint table and the
claim verdicts) and writes it to ``benchmarks/results/bench_reproduce.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TARGET_SECONDS = 300.0


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes, once shut down)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _stop_workers() -> None:
    # joblib keeps its worker processes for reuse; their CPU time is counted once they exit.
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--synthetic-runs", type=int, default=0, help="also run the synthetic part (0: skip)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_reproduce.json"))
    args = parser.parse_args(argv)

    from engine.objectives import build_objective
    from engine.reproduce import reproduce_dp_fts_de

    build_objective("landmine")            # the table, built once if missing (not timed)
    summary = {"cpu_count": os.cpu_count(), "jobs": args.jobs, "runs": args.runs,
               "load_average_at_start": list(os.getloadavg()), "target_seconds": TARGET_SECONDS, "parts": {}}
    parts = ["landmine"] + (["synthetic"] if args.synthetic_runs else [])
    for part in parts:
        cpu, wall = _cpu_seconds(), time.perf_counter()
        result = reproduce_dp_fts_de([part], runs=args.runs, synthetic_runs=max(args.synthetic_runs, 2),
                                     jobs=args.jobs)[part]
        wall = time.perf_counter() - wall
        _stop_workers()
        payload = result.to_json()
        summary["parts"][part] = {
            "wall_seconds": round(wall, 1), "cpu_seconds": round(_cpu_seconds() - cpu, 1),
            "checkpoints": {s["label"]: {t: [round(v["mean"], 4), round(v["stderr"], 4)]
                                         for t, v in s["checkpoints"].items()} for s in payload["settings"]},
            "epsilon": {s["label"]: s["epsilon"] for s in payload["settings"]},
            "claims": [{"claim": c["claim"], "verdict": c["verdict"]} for c in payload["claims"]]}
        print(f"{part}: {summary['parts'][part]['wall_seconds']} s wall, "
              f"{summary['parts'][part]['cpu_seconds']} s CPU", file=sys.stderr, flush=True)
    summary["landmine_within_target"] = summary["parts"]["landmine"]["wall_seconds"] <= TARGET_SECONDS
    summary["load_average_at_end"] = list(os.getloadavg())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
