"""`python -m engine reproduce all` end to end, at the stored run counts with replication, and its time per paper
and part recorded in ``data/reproduction/provenance.json`` (the ``"reproduce-all"`` entry).

Run it on an idle machine from a fresh clone: it starts with an empty cache (a new ``DPBO_CACHE_DIR``, so every
objective table and DP-HYPE score table is built, as on a first run), runs the command as a user types it
(``COMMAND``: the papers at once on ``--workers`` worker processes), samples the memory of the command and its
workers every second, and writes to the provenance entry's ``"measured"``: the date, the machine, the load
average before and after, the wall and CPU seconds (the command and every worker process), the peak memory, and
each paper's wall and CPU seconds with its parts' seconds (what the command's JSON reports). The command's JSON
itself is kept beside the results (``benchmarks/results/reproduce-all.json``), not in ``data/reproduction/``:
storing a new reproduction is a separate step. docs/paper-comparisons.md quotes the entry's figure
(``tests/test_reproduce_all_time.py`` holds the two equal).

``--estimate`` instead writes the entry's ``"estimate"`` from the CPU seconds of each paper's stored runs
(``PAPER_CPU_SECONDS``, discovery and replication, with where each figure comes from): the papers run at once,
so the wall time on ``CORES`` cores is their CPU seconds over the cores, or the longest paper's own time if that is
longer.

Usage::

    DPBO_DATA_DIR=/path/to/datasets python -m benchmarks.bench_reproduce_all [--workers 2] [--force]
    python -m benchmarks.bench_reproduce_all --estimate
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks import save_results
from engine.reproduce.dp_fts_de import STORED_SYNTHETIC_RUNS

ROOT = Path(__file__).resolve().parents[1]
PROVENANCE = ROOT / "data" / "reproduction" / "provenance.json"
ENTRY = "reproduce-all"
CORES = 2
COMMAND = ["python", "-m", "engine", "reproduce", "all", "--workers", "2"]
# The command's memory price adds up what every paper holds at once (above the CLI's default 2 GB): the stored
# commands lift the limit the same way.
ENVIRONMENT = {"DPBO_MAX_MEMORY_MB": "8192"}
COUNTS = (f"the command's own, the stored counts: DP-FTS-DE's synthetic parts at {STORED_SYNTHETIC_RUNS} runs per "
          "setting, every other part at the paper's; the replication of every claim its discovery found decisive")
IDLE_LOAD = 0.5          # 1-minute load average above which the machine is not idle (--force runs anyway)

# CPU seconds of each paper at the stored counts, discovery + replication, from data/reproduction/provenance.json
# (each figure's source beside it); the largest single task bounds how early a paper can end.
PAPER_CPU_SECONDS = {
    "dp-fts-de": (1385 + 1125, "landmine/synthetic entries: the seven parts' discovery 1,385 s (idle), their "
                               "replication 1,125 s (beside other low-priority jobs)"),
    "fts": (715 + 140, "fts entry: the discovery's CPU is not stored; its wall time on 2 workers (715 s, at load "
                       "6-18) stands for it; its replication about 140 s of CPU (docs/paper-comparisons.md)"),
    "po-gp-ucb": (181, "po-gp-ucb entry: discovery and replication, 181 s of CPU"),
    "dp-hype": (66 + 2330 + round(927 * 360 / 260), "dp-hype entry: the simulation, labels and exact parts with "
                                                    "their replication 66 s; the data part's 960 score tables "
                                                    "2,330 s; its replication's 360 tables at the 260 measured "
                                                    "(927 s)"),
}


def estimate() -> dict:
    cpu = sum(seconds for seconds, _ in PAPER_CPU_SECONDS.values())
    wall = cpu / CORES
    return {"date": datetime.date.today().isoformat(), "cores": CORES, "command": " ".join(COMMAND),
            "cpu_seconds": cpu, "wall_seconds": round(wall),
            "papers": {paper: {"cpu_seconds": seconds, "source": source}
                       for paper, (seconds, source) in PAPER_CPU_SECONDS.items()},
            "how": "the papers run at once on the command's two worker processes (engine.executor.together in one "
                   "session of workers), so the wall time is about their CPU seconds over the two cores; not "
                   "measured end to end"}


class PeakMemory:
    """The largest resident memory of a process and its descendants, sampled every second in a thread."""

    def __init__(self, pid: int):
        self.pid, self.peak_mb, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import psutil

        while not self._stop.wait(1.0):
            try:
                root = psutil.Process(self.pid)
                total = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
            except psutil.Error:
                continue
            self.peak_mb = max(self.peak_mb, total / 2**20)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return round(self.peak_mb)


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(workers: int) -> dict:
    command = COMMAND[:-1] + [str(workers)]
    cache = tempfile.mkdtemp(prefix="dpbo-reproduce-all-cache-")
    env = dict(os.environ, DPBO_CACHE_DIR=cache, **ENVIRONMENT)
    load_before, cpu_before, started = os.getloadavg(), _cpu_children(), time.perf_counter()
    with open(Path(cache) / "stderr.log", "w") as log:
        proc = subprocess.Popen([sys.executable, *command[1:]], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=log, text=True)
        peak = PeakMemory(proc.pid)
        stdout, _ = proc.communicate()
        peak_mb = peak.stop()
    wall = time.perf_counter() - started
    if proc.returncode:
        raise SystemExit(f"the command failed ({proc.returncode}); its stderr: {Path(cache) / 'stderr.log'}")
    payload = json.loads(stdout)
    save_results("reproduce-all.json", payload)
    papers = {name: {"seconds": paper.get("seconds"), "cpu_seconds": paper.get("cpu_seconds"),
                     "parts": {part: out.get("seconds") for part, out in paper.get("parts", {}).items()},
                     "runs": {part: out.get("runs") for part, out in paper.get("parts", {}).items()},
                     "replication_seconds": (paper.get("replication") or {}).get("seconds")}
              for name, paper in payload["papers"].items()}
    return {"command": " ".join(f"{k}={v}" for k, v in ENVIRONMENT.items()) + " " + " ".join(command),
            "date": datetime.date.today().isoformat(), "machine": _machine(), "workers": workers,
            "cache": "empty at the start (a fresh DPBO_CACHE_DIR): every table built by the command",
            "blas": _kernel(env),
            "load_average_before": load_before, "load_average_after": os.getloadavg(),
            "wall_seconds": round(wall), "cpu_seconds": round(_cpu_children() - cpu_before),
            "peak_memory_mb": peak_mb, "papers": papers, "counts": COUNTS}


def _kernel(env: dict) -> str:
    """The BLAS kernel the command's processes ran on, and whether the environment pinned it."""
    found = subprocess.run([sys.executable, "-c", "from engine.blas import blas_kernel; print(blas_kernel())"],
                           cwd=ROOT, env=env, capture_output=True, text=True).stdout.strip() or "unknown"
    pinned = env.get("OPENBLAS_CORETYPE")
    return f"{found} (" + ("pinned by OPENBLAS_CORETYPE" if pinned else "OpenBLAS's own choice") + ")"


def _machine() -> str:
    from engine.reproduce.fts import machine

    return machine() or platform.platform()


def record(key: str, value: dict) -> None:
    provenance = json.loads(PROVENANCE.read_text())
    entry = provenance.setdefault(ENTRY, {})
    entry[key] = value
    PROVENANCE.write_text(json.dumps(provenance, indent=2, ensure_ascii=False) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=CORES)
    parser.add_argument("--estimate", action="store_true", help="write the estimate from per-paper CPU seconds")
    parser.add_argument("--force", action="store_true", help="measure even if the machine is not idle")
    args = parser.parse_args()
    if args.estimate:
        value = estimate()
        record("estimate", value)
        print(json.dumps(value, indent=1))
        return 0
    load = os.getloadavg()[0]
    if load > IDLE_LOAD and not args.force:
        print(f"The 1-minute load average is {load:.2f}: measure on an idle machine (or pass --force).",
              file=sys.stderr)
        return 2
    value = measure(args.workers)
    record("measured", value)
    print(json.dumps(value, indent=1))
    print(f"reproduce all: {value['wall_seconds'] / 60:.1f} minutes; docs/paper-comparisons.md must quote "
          f"{round(value['wall_seconds'] / 60)} minutes (tests/test_reproduce_all_time.py).", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
