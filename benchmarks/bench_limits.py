"""How conservative the host's cost model is: estimated against measured CPU time and peak memory
(peak resident size during the work minus the resident size before it).

Every case runs in a fresh process (so its peak memory is its own); the
estimate is what ``engine.limits`` says before the run. A ratio above 1 means
the estimate is conservative (it says more than the run took).

Usage::

    python -m benchmarks.bench_limits [--quick]

Prints a table and writes ``benchmarks/results/bench_limits.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from engine.fbo import FboConfig
from engine.fbo.plan import make_plan
from engine.hype import HypeConfig
from engine.limits import hype_cost, pogpucb_cost
from engine.pogpucb import PoConfig

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    ("fbo", dict(agents=50, iterations=30, runs=3)),
    ("fbo", dict(agents=200, iterations=40, runs=5)),
    ("fbo", dict(agents=200, iterations=40, runs=20)),
    ("fbo", dict(agents=50, iterations=30, runs=3, features=400)),
    ("fbo", dict(agents=100, iterations=5, runs=1, n_init=3000)),
    ("fbo", dict(agents=50, iterations=300, runs=3)),
    ("hype", dict(repetitions=2000)),
    ("hype", dict(repetitions=2000, candidates=1000)),
    ("hype", dict(repetitions=500, aggregation="secure-sum")),
    ("pogpucb", dict(runs=20)),
    ("pogpucb", dict(runs=5, iterations=300)),
]
QUICK = [0, 1, 6, 9]

# Runs one case in this child process: the work after the imports, its CPU time and the peak RSS it added.
CHILD = """
import json, resource, sys, time
tool, kw = sys.argv[1], json.loads(sys.argv[2])
if tool == "fbo":
    from engine.fbo import FboConfig, run_fbo
    from engine.objectives import build_objective
    config = FboConfig(**kw)
    objective = build_objective(config.dataset, n_agents=config.agents)
    work = lambda: run_fbo(config, objective)
elif tool == "hype":
    from engine.hype import HypeConfig, run_hype
    work = lambda: run_hype(HypeConfig(**kw))
else:
    from engine.pogpucb import PoConfig, run_pogpucb
    work = lambda: run_pogpucb(PoConfig(**kw))
# The resident size now (the imports' high-water mark may lie above it), in kB like ru_maxrss.
base = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:"))
cpu = time.process_time()
work()
print(json.dumps({"cpu_seconds": time.process_time() - cpu,
                  "peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024}))
"""


def estimate(tool: str, kw: dict):
    if tool == "fbo":
        return make_plan(FboConfig(**kw)).cost
    if tool == "hype":
        return hype_cost(HypeConfig(**kw))
    return pogpucb_cost(PoConfig(**kw))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="four cases only")
    args = parser.parse_args()
    cases = [CASES[i] for i in QUICK] if args.quick else CASES
    rows = []
    for tool, kw in cases:
        cost = estimate(tool, kw)
        proc = subprocess.run([sys.executable, "-c", CHILD, tool, json.dumps(kw)], cwd=ROOT, capture_output=True,
                              text=True, check=True)
        measured = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(dict(tool=tool, config=kw, estimated_seconds=round(cost.seconds, 3),
                         measured_cpu_seconds=round(measured["cpu_seconds"], 3),
                         estimated_mb=round(cost.memory_mb, 1), measured_peak_mb=round(measured["peak_mb"], 1)))
        row = rows[-1]
        print(f"{tool:8s} {json.dumps(kw):60s} seconds {row['estimated_seconds']:8.2f} est / "
              f"{row['measured_cpu_seconds']:7.2f} cpu   memory {row['estimated_mb']:8.1f} est / "
              f"{row['measured_peak_mb']:7.1f} MB")
    out = ROOT / "benchmarks" / "results" / "bench_limits.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
