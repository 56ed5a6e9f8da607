"""Benchmark the DP-FTS-DE reproduction, part by part, and extrapolate to the stored run counts.

Default (``--parts landmine``): the paper's landmine protocol (12 settings: TS, FTS, FTS-DE and the
nine DP-FTS-DE settings of Fig. 3a; 29 agents x 60 iterations, own GPs re-fitted every 5
observations) at ``--runs`` runs per setting with ``--jobs`` worker processes, once the landmine
table is cached. Target: at most 5 minutes of wall time on the 2-core machine.

``--parts all --runs 5``: every part at 5 runs per setting, timed one by one (wall and CPU
seconds), then all parts in one ``reproduce`` call (runs shared between parts are made once), each
figure extrapolated linearly to the run counts of the stored results (``STORED_RUNS``: 100 for
landmine and the synthetic parts, 10 for the stand-ins). The estimate of ``--parts all`` at those
counts on 2 cores is the extrapolated CPU seconds of the shared call divided by 2 (the blocks of
runs are independent, so two worker processes share them evenly); the target is 1200 s.

``--blocks``: one block of runs (25 runs, the stored results' block size; 10 on the stand-ins) of a few
typical settings of each part, timed in CPU seconds in this process; ``--save FILE.npz`` keeps their curves
and ``--compare FILE.npz`` checks that they are the same numbers as a saved set (e.g. from a checkout of an
earlier commit, run alternately with this one on the same machine to pair the timings).

Usage::

    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.bench_reproduce [--runs 100] [--jobs 2]
    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.bench_reproduce --parts all --runs 5 --jobs 1
    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.bench_reproduce --blocks --save after.npz

Prints a JSON summary (wall and CPU seconds, load averages and, for one part, the checkpoint table
and the claim verdicts) and writes it to ``benchmarks/results/bench_reproduce.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

from benchmarks import RESULTS

ROOT = Path(__file__).resolve().parents[1]

TARGET_SECONDS = 300.0          # the landmine part at 100 runs
ALL_TARGET_SECONDS = 1200.0     # every part at the stored run counts
CORES = 2
# Runs per setting of the stored results (data/reproduction/provenance.json).
STORED_RUNS = {"landmine": 100, "synthetic": 100, "synthetic-appendix": 100, "heterogeneous": 100,
               "landmine-renyi": 100, "har-standin": 10, "emnist-standin": 10}


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes, once shut down)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _stop_workers() -> None:
    # joblib keeps its worker processes for reuse; their CPU time is counted once they exit.
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)


def _timed(parts, runs, jobs):
    from engine.reproduce import reproduce_dp_fts_de

    cpu, wall = _cpu_seconds(), time.perf_counter()
    results = reproduce_dp_fts_de(parts, runs=runs, synthetic_runs=runs, jobs=jobs)
    wall = time.perf_counter() - wall
    _stop_workers()
    return results, wall, _cpu_seconds() - cpu


def _one_part(part: str, runs: int, jobs: int) -> dict:
    results, wall, cpu = _timed([part], runs, jobs)
    payload = results[part].to_json()
    return {"wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "checkpoints": {s["label"]: {t: [round(v["mean"], 4), round(v["stderr"], 4)]
                                         for t, v in s["checkpoints"].items()} for s in payload["settings"]},
            "epsilon": {s["label"]: s["epsilon"] for s in payload["settings"]},
            "claims": [{"claim": c["claim"], "verdict": c["verdict"]} for c in payload["claims"]]}


def _all_parts(parts, runs: int, jobs: int, together: bool) -> dict:
    """Each part alone, then (``together``) all in one call; extrapolated to ``STORED_RUNS``."""
    out = {"parts": {}}
    for part in parts:
        _, wall, cpu = _timed([part], runs, jobs)
        scale = STORED_RUNS[part] / runs
        out["parts"][part] = {"wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
                              "stored_runs": STORED_RUNS[part],
                              "extrapolated_cpu_seconds": round(cpu * scale, 1),
                              "load_average_after": [round(x, 2) for x in os.getloadavg()]}
        print(f"{part}: {wall:.1f} s wall, {cpu:.1f} s CPU at {runs} runs; "
              f"{cpu * scale:.0f} s CPU at {STORED_RUNS[part]}", file=sys.stderr, flush=True)
    separate = sum(p["extrapolated_cpu_seconds"] for p in out["parts"].values())
    out["separate_extrapolated_cpu_seconds"] = round(separate, 1)
    out["separate_estimated_wall_seconds_on_2_cores"] = round(separate / CORES, 1)
    if together:
        # Each part's share of the extrapolation is its own scale; shared runs are counted where they are made.
        _, wall, cpu = _timed(list(parts), runs, jobs)
        mean_scale = separate / max(1e-9, sum(p["cpu_seconds"] for p in out["parts"].values()))
        out["together"] = {"wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
                           "extrapolated_cpu_seconds": round(cpu * mean_scale, 1),
                           "estimated_wall_seconds_on_2_cores": round(cpu * mean_scale / CORES, 1)}
        print(f"all together: {wall:.1f} s wall, {cpu:.1f} s CPU; about {cpu * mean_scale / CORES:.0f} s on "
              f"{CORES} cores at the stored run counts", file=sys.stderr, flush=True)
    return out


# (part, setting, runs) of --blocks: the commonest kinds of line of every part, at the block size they run at.
BLOCKS = (("landmine", "ts", 25), ("landmine", "fts-de", 25), ("landmine", "dp-fts-de q=0.35 z=1", 25),
          ("synthetic", "ts", 25), ("synthetic", "dp-fts-de q=0.25", 25), ("heterogeneous", "fts-de a=0.7", 25),
          ("landmine-renyi", "dp-fts-de q=0.35 z=1", 25), ("har-standin", "dp-fts-de q=0.35 z=1", 10),
          ("emnist-standin", "fts-de", 10))


def _blocks(save: str | None, compare: str | None) -> dict:
    import numpy as np

    from engine.reproduce.dp_fts_de import PART_SPECS

    try:
        from engine.reproduce.runs import run_config, setting_config
    except ImportError:       # commits before engine.reproduce.runs (to pair with them)
        from engine.reproduce.report import _run_block, setting_config

        def run_config(config):
            setting = type("S", (), {"overrides": {}})()
            return _run_block(dict(config.to_dict()), setting, config.seed, config.runs)

    out, curves = {"blocks": {}}, {}
    for name, key, runs in BLOCKS:
        part = PART_SPECS[name]
        setting = next(s for s in part.settings if s.key == key)
        config = setting_config(part.base, setting, 11, runs)
        run_config(config.replace(runs=2, iterations=2))          # the objective loaded (not timed)
        cpu = time.process_time()
        curves[f"{name}|{key}"] = run_config(config)[0]
        out["blocks"][f"{name}|{key}"] = round(time.process_time() - cpu, 2)
        print(f"{name} {key} ({runs} runs): {out['blocks'][f'{name}|{key}']} s CPU", file=sys.stderr, flush=True)
    out["total_cpu_seconds"] = round(sum(out["blocks"].values()), 2)
    if save:
        np.savez(save, **curves)
    if compare:
        saved = np.load(compare)
        out["same_numbers"] = {key: bool(np.array_equal(saved[key], value)) for key, value in curves.items()}
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="runs per setting (default 100; 5 with --parts all)")
    parser.add_argument("--parts", default="landmine", help="landmine (default), a comma-separated list, or all")
    parser.add_argument("--synthetic-runs", type=int, default=0,
                        help="with the landmine default: also run the synthetic part (0: skip)")
    parser.add_argument("--no-together", action="store_true", help="with several parts: skip the shared call")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--blocks", action="store_true", help="time one block of typical settings of every part")
    parser.add_argument("--save", default=None, help="with --blocks: keep the curves in this .npz file")
    parser.add_argument("--compare", default=None, help="with --blocks: check the curves against this .npz file")
    parser.add_argument("--out", default=str(RESULTS / "bench_reproduce.json"))
    args = parser.parse_args(argv)

    from engine.objectives import build_objective
    from engine.reproduce.dp_fts_de import parse_parts

    parts = parse_parts(args.parts)
    build_objective("landmine")            # the table, built once if missing (not timed)
    for dataset in ("har-standin", "emnist-standin"):
        if dataset in parts:
            build_objective(dataset)      # the stand-ins' tables (part names are their data sets)
    summary = {"cpu_count": os.cpu_count(), "jobs": args.jobs, "load_average_at_start": list(os.getloadavg())}
    if args.blocks:
        summary.update(_blocks(args.save, args.compare))
    elif parts == ("landmine",):
        runs = args.runs or 100
        summary.update(runs=runs, target_seconds=TARGET_SECONDS, parts={})
        names = ["landmine"] + (["synthetic"] if args.synthetic_runs else [])
        for part in names:
            summary["parts"][part] = _one_part(part, args.synthetic_runs if part == "synthetic" else runs,
                                               args.jobs)
            print(f"{part}: {summary['parts'][part]['wall_seconds']} s wall, "
                  f"{summary['parts'][part]['cpu_seconds']} s CPU", file=sys.stderr, flush=True)
        summary["landmine_within_target"] = summary["parts"]["landmine"]["wall_seconds"] <= TARGET_SECONDS
    else:
        runs = args.runs or 5
        summary.update(runs=runs, target_seconds=ALL_TARGET_SECONDS,
                       **_all_parts(parts, runs, args.jobs, together=not args.no_together and len(parts) > 1))
    summary["load_average_at_end"] = list(os.getloadavg())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
