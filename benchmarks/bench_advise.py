"""The settings advisor's cost: the default request's CPU seconds, with and without the executor session, and its
scaling on a Dask cluster of one and of two worker processes.

Cases:

1. ``default``: ``python -m engine advise --dataset synthetic --agents 50 --iterations 40 --epsilon 4 --delta 1e-5``
   (the issue's request), in a fresh process on two local worker processes: CPU seconds of the process and every
   worker (they are its children), wall seconds, its price. ``--before`` also runs it with each round starting
   its own worker processes (the executor's behaviour before sessions) for the before/after figures.
2. ``dask``: the same request through a loopback Dask cluster (the stock ``dask scheduler`` and ``dask worker``
   processes, tests/dask_loopback.py) of 1 and of 2 workers, started outside the timed part as a host's would be:
   wall seconds, CPU of this process and the cluster's processes, efficiency wall(1) / (2 wall(2)), and whether
   both give the same advice.

The machine's load average is recorded before and after each case: on the shared 2-core machine wall times move
with the other users' work (CPU seconds much less).

Usage::

    nice -n 10 python -m benchmarks.bench_advise [--before] [--dask] [--repeat 1]

Prints a JSON summary and writes it to ``benchmarks/results/bench_advise.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks import save_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REQUEST = ["--dataset", "synthetic", "--agents", "50", "--iterations", "40", "--epsilon", "4", "--delta", "1e-5"]
# Runs each the whole grid would take at the finalists' depth, against what the search runs (both printed).
EXHAUSTIVE_RUNS_PER_SETTING = 12


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load() -> list[float]:
    return [round(x, 1) for x in os.getloadavg()]


def _command(before: bool) -> dict:
    """The default request in a fresh process (its workers are its children, so their CPU is in its rusage)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = ("import sys, engine.executor as e, contextlib\n"
            "e.Executor.session = contextlib.contextmanager(lambda self: (yield self))\n"
            "from engine.cli import main\nsys.exit(main(sys.argv[1:]))") if before else None
    argv = [sys.executable, "-c", code, "advise", *REQUEST] if before else [sys.executable, "-m", "engine",
                                                                           "advise", *REQUEST]
    load, cpu0, start = _load(), _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
    out = json.loads(done.stdout)
    rec = out["recommended"]
    return {"cpu_seconds": round(cpu, 1), "wall_seconds": round(wall, 1), "load_before": load,
            "load_after": _load(), "runs": out["search"]["runs_done"], "tasks": out["search"]["tasks_done"],
            "pick": {k: rec[k] for k in ("q", "z", "S", "P", "pt_schedule")}, "utility": rec["utility"],
            "stderr": rec["stderr"]}


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


def _on_dask(workers: int, work: Path) -> dict:
    from engine.advise import AdviceRequest, advice_of_search, iter_search
    from engine.executor import Executor
    from tests.dask_loopback import cluster

    request = AdviceRequest(dataset="synthetic", agents=50, iterations=40, epsilon=4.0, delta=1e-5)
    from distributed import get_task_stream

    from engine.executor.cluster import client_for

    with cluster(workers, work / f"dask{workers}") as (address, processes):
        pids = [p.pid for p in processes]
        load, own0, tree0 = _load(), time.process_time(), _tree_cpu(pids)
        start = time.perf_counter()
        search = None
        with get_task_stream(client=client_for(address)) as stream:
            for search in iter_search(request, executor=Executor("dask", scheduler=address)):
                pass
        wall = time.perf_counter() - start
        cpu = time.process_time() - own0 + _tree_cpu(pids) - tree0
        advice = advice_of_search(search).to_json()
    # The workers' timeline: how much of the search's span they were computing (the rounds' barriers and the
    # driver's calibration leave them idle), whatever the machine's other users take from them.
    spans = [(part["start"], part["stop"]) for task in stream.data for part in task["startstops"]
             if part["action"] == "compute"]
    first, last = min(a for a, _ in spans), max(b for _, b in spans)
    busy = sum(b - a for a, b in spans) / (workers * (last - first))
    return {"workers": workers, "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "load_before": load,
            "load_after": _load(), "tasks": len(spans), "workers_busy": round(busy, 3), "advice": advice}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", action="store_true", help="also run with one set of workers per round")
    parser.add_argument("--dask", action="store_true", help="also the scaling on 1 and 2 Dask workers")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each local case")
    args = parser.parse_args()
    os.environ.pop("DPBO_HOSTED", None)

    from engine.advise import AdviceRequest, request_cost

    request = AdviceRequest(dataset="synthetic", agents=50, iterations=40, epsilon=4.0, delta=1e-5)
    results: dict = {"request": "python -m engine advise " + " ".join(REQUEST), "cores": os.cpu_count(),
                     "price_seconds": round(request_cost(request).seconds, 1)}
    variants = (("after: one session", False),) + ((("before: workers per round", True),) if args.before else ())
    for name, before in variants:
        results[name] = []
        for _ in range(args.repeat):
            print(f"{name} ...", file=sys.stderr, flush=True)
            results[name].append(_command(before))
    runs = results["after: one session"][0]["runs"]
    settings = 81
    results["exhaustive"] = {
        "runs": settings * EXHAUSTIVE_RUNS_PER_SETTING + 36,
        "search_runs": runs,
        "note": f"every one of the {settings} settings at the finalists' {EXHAUSTIVE_RUNS_PER_SETTING} runs (plus "
                "the same validation) against the search's runs: the search's share of the simulations"}
    if args.dask:
        with tempfile.TemporaryDirectory() as work:
            rows = [_on_dask(n, Path(work)) for n in (1, 2)]
        one, two = rows
        results["dask"] = {"one worker": {k: v for k, v in one.items() if k != "advice"},
                           "two workers": {k: v for k, v in two.items() if k != "advice"},
                           "efficiency": round(one["wall_seconds"] / (2 * two["wall_seconds"]), 2),
                           "same_advice": one["advice"] == two["advice"]}
    save_results("bench_advise.json", results)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
