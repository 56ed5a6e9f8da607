"""Scaling of the one executor (engine.executor): a reproduction part and a sweep on 1 and 2 local workers and on a
Dask cluster of 2 worker processes; and the per-task overhead of Dask against the local pool.

Cases (each job the same tasks, the same seeds, so the same numbers: checked):

1. ``reproduce``: the DP-FTS-DE paper's synthetic part (Fig. 2a, 2c, 2d: 10 settings) at ``--runs`` runs;
2. ``sweep``: a synthetic DP-FTS-DE sweep (q x z, with a TS reference) at ``--sweep-runs`` runs per cell;
3. ``overhead``: ``--tasks`` trivial tasks through each backend, warm (the pool or the cluster already up):
   (wall of N + 2 tasks - wall of 2 tasks) / N, so the start of the local pool's processes is left out.

Executors: ``local x1`` (this process), ``local x2`` (worker processes; also at niceness 10, the sweep's
workers' old fixed priority, to show what it cost on a busy machine), ``dask x2`` (the stock ``dask scheduler``
and two ``dask worker`` processes on 127.0.0.1, started outside the timed part as a host's cluster would be).
For each: wall seconds, CPU seconds (this process and every worker process), and the efficiency
``wall(local x1) / (workers x wall)``. The machine's load average is recorded before and after: on a shared
machine the figures move with the other users' work.

Usage::

    python -m benchmarks.bench_executor [--runs 2] [--sweep-runs 10] [--tasks 200]

Prints a JSON summary and writes it to ``benchmarks/results/bench_executor.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

from benchmarks import save_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _tree_cpu(pids) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            for member in [proc, *proc.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    times = member.cpu_times()
                    total += times.user + times.system
    return total


def _own_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _timed(job, cluster_pids=()) -> tuple[object, float, float]:
    cpu0, cluster0, wall0 = _own_cpu(), _tree_cpu(cluster_pids), time.perf_counter()
    value = job()
    wall = time.perf_counter() - wall0
    return value, wall, _own_cpu() - cpu0 + _tree_cpu(cluster_pids) - cluster0


def _reproduce(executor, runs):
    from engine.executor import use
    from engine.reproduce import PART_SPECS
    from engine.reproduce.report import run_part

    with use(executor):
        part = run_part(PART_SPECS["synthetic"], runs=runs, seed=0)
    return {key: s.run_curves for key, s in part.results.items()}


def _sweep(executor, runs):
    from engine.sweep import SweepSpec, get_adapter
    from engine.sweep.cell import run_cell

    spec = SweepSpec("fbo", base=dict(dataset="synthetic", agents=20, iterations=40, features=50, n_init=5,
                                      algorithm="dp-fts-de"),
                     axes=(("q", (0.15, 0.35, 0.5)), ("z", (1.0, 2.0))), references=({"algorithm": "ts"},),
                     runs=runs, seed=3)
    cells = spec.cells(get_adapter("fbo"))
    out = dict(executor.results(run_cell, [(c.key, ("fbo", c.params, c.runs)) for c in cells], label="bench"))
    return {key: out[key].utility for key in sorted(out)}


def _overhead(executor, tasks: int, cluster_pids=()) -> dict:
    from engine.limits import cores

    def many(n):
        return lambda: list(executor.results(cores, [(i, ()) for i in range(n)], label="overhead"))

    # Two tasks at least: one alone runs in this process. The difference leaves the start-up (the local pool's
    # processes, which each stream starts; the cluster's connection) out.
    _, two, _ = _timed(many(2), cluster_pids)
    _, wall, _ = _timed(many(tasks + 2), cluster_pids)
    return {"two_tasks_seconds": round(two, 3), "tasks": tasks + 2, "seconds": round(wall, 3),
            "per_task_ms": round(1000 * (wall - two) / tasks, 2)}


def _same(a, b) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="runs per setting of the reproduction part")
    parser.add_argument("--sweep-runs", type=int, default=10, help="runs per sweep cell")
    parser.add_argument("--tasks", type=int, default=200, help="trivial tasks for the per-task overhead")
    args = parser.parse_args()

    from engine.executor import Executor
    from tests.dask_loopback import cluster

    os.environ.pop("DPBO_HOSTED", None)
    results: dict = {"load_before": [round(x, 2) for x in os.getloadavg()], "cores": os.cpu_count(),
                     "runs": args.runs, "sweep_runs": args.sweep_runs}
    with tempfile.TemporaryDirectory() as work:
        started = time.perf_counter()
        with cluster(2, Path(work) / "dask") as (address, processes):
            results["dask_start_seconds"] = round(time.perf_counter() - started, 1)
            pids = [p.pid for p in processes]
            executors = {"local x1": (Executor("joblib", 1), 1, ()),
                         "local x2": (Executor("joblib", 2), 2, ()),
                         "local x2 at niceness 10": (Executor("joblib", 2, nice=True), 2, ()),
                         "dask x2": (Executor("dask", scheduler=address), 2, pids)}
            for job, run, size in (("reproduce", _reproduce, args.runs), ("sweep", _sweep, args.sweep_runs)):
                rows, reference = {}, None
                for name, (executor, workers, cluster_pids) in executors.items():
                    print(f"{job} on {name} ...", file=sys.stderr, flush=True)
                    value, wall, cpu = _timed(lambda: run(executor, size), cluster_pids)
                    reference = value if reference is None else reference
                    rows[name] = {"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                                  "same_numbers": _same(value, reference)}
                serial = rows["local x1"]["wall_seconds"]
                for name, (_, workers, _) in executors.items():
                    rows[name]["efficiency"] = round(serial / (workers * rows[name]["wall_seconds"]), 2)
                results[job] = rows
            print("per-task overhead ...", file=sys.stderr, flush=True)
            results["overhead"] = {"local x2": _overhead(executors["local x2"][0], args.tasks),
                                   "dask x2": _overhead(executors["dask x2"][0], args.tasks, pids)}
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    save_results("bench_executor.json", results)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
