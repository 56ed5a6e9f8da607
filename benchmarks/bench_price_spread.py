"""How far a priced run's cost spreads, told in the reference machine's seconds: over repeated runs, over load
(two busy loops beside it, ``python3 -c "while True: pass"``) and over BLAS code paths (OpenBLAS's Haswell, SkylakeX
and SandyBridge kernels, chosen with ``OPENBLAS_CORETYPE``, on this machine's one CPU model). These are the
measurements behind each tool's price margin (``engine.limits.core.MARGINS``; docs/hosting.md, "Prices and their
margins").

Every case of ``tests/test_limits_conservative.py`` runs in a fresh process (``benchmarks.bench_limits.measure``:
its CPU time told in reference seconds by the reference workload measured in the same process, and its peak
memory) ``--repeats`` times under each condition. Per case: the median of the quiet Haswell runs (the machine's
environment pins that kernel), the largest measurement under any condition, the spread (largest / that median),
and the price against both; per tool, the largest spread and the least headroom (price / largest measurement).

Usage::

    python -m benchmarks.bench_price_spread [--repeats 3] [--tools hype,table] [--conditions haswell,busy]

Prints a table and writes ``benchmarks/results/bench_price_spread.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

from benchmarks import save_results
from benchmarks.bench_limits import estimate, in_reference_seconds, measure

# name: (OPENBLAS_CORETYPE, or None for the kernel OpenBLAS picks itself; busy loops beside the run)
CONDITIONS = {
    "haswell": ("Haswell", 0),
    "skylakex": (None, 0),
    "sandybridge": ("SandyBridge", 0),
    "busy": ("Haswell", 2),
}
BASELINE = "haswell"


def cases():
    from tests.test_limits_conservative import CASES

    return CASES


@contextlib.contextmanager
def busy_loops(count: int):
    """``count`` busy loops (``python3 -c "while True: pass"``) for the block, stopped by their pids."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def run_condition(name: str, repeats: int, selected, cache: str) -> dict:
    coretype, loops = CONDITIONS[name]
    saved = os.environ.get("OPENBLAS_CORETYPE")
    if coretype is None:
        os.environ.pop("OPENBLAS_CORETYPE", None)
    else:
        os.environ["OPENBLAS_CORETYPE"] = coretype
    out = {}
    try:
        with busy_loops(loops):
            for index, (tool, kw) in selected:
                runs = [measure(tool, kw, env={"DPBO_CACHE_DIR": cache}) for _ in range(repeats)]
                out[index] = [dict(run, reference=in_reference_seconds(run)) for run in runs]
                print(f"{name:12s} {tool:11s} {json.dumps(kw)[:60]:60s} "
                      + " ".join(f"{r['reference']:7.3f}" for r in out[index]), flush=True)
    finally:
        if saved is None:
            os.environ.pop("OPENBLAS_CORETYPE", None)
        else:
            os.environ["OPENBLAS_CORETYPE"] = saved
    return out


def summarise(selected, measured: dict) -> tuple[list[dict], dict]:
    rows, tools = [], {}
    for index, (tool, kw) in selected:
        cost = estimate(tool, kw)
        base = statistics.median(r["reference"] for r in measured[BASELINE][index])
        by = {name: max(r["reference"] for r in runs[index]) for name, runs in measured.items()}
        largest = max(by.values())
        peak = max(r["peak_mb"] for runs in measured.values() for r in runs[index])
        row = dict(tool=tool, config=kw, price_seconds=round(cost.seconds, 3), median_seconds=round(base, 3),
                   largest_seconds=round(largest, 3), largest_by_condition={k: round(v, 3) for k, v in by.items()},
                   spread=round(largest / max(base, 1e-9), 3), headroom=round(cost.seconds / max(largest, 1e-9), 3),
                   price_mb=round(cost.memory_mb, 1), peak_mb=round(peak, 1))
        rows.append(row)
        entry = tools.setdefault(tool, dict(spread=0.0, headroom=float("inf"), cases=0))
        entry["spread"] = max(entry["spread"], row["spread"])
        entry["headroom"] = min(entry["headroom"], row["headroom"])
        entry["cases"] += 1
    return rows, tools


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tools", default="", help="comma-separated tools (default: all)")
    parser.add_argument("--conditions", default=",".join(CONDITIONS), help="comma-separated conditions")
    args = parser.parse_args()
    selected = [(i, case) for i, case in enumerate(cases()) if not args.tools or case[0] in args.tools.split(",")]
    conditions = [c for c in args.conditions.split(",") if c]
    if BASELINE not in conditions:
        conditions.insert(0, BASELINE)
    cache = tempfile.mkdtemp(prefix="dpbo-spread-cache-")
    started = os.getloadavg()
    measured = {name: run_condition(name, args.repeats, selected, cache) for name in conditions}
    rows, tools = summarise(selected, measured)
    print("\ntool        cases  spread (largest / quiet median)  headroom (price / largest)")
    for tool, entry in tools.items():
        print(f"{tool:11s} {entry['cases']:5d}  {entry['spread']:8.2f}  {entry['headroom']:8.2f}")
    save_results("bench_price_spread.json", dict(load_at_start=started, load_at_end=os.getloadavg(),
                                                 repeats=args.repeats, conditions=conditions, rows=rows,
                                                 tools=tools, raw={k: {str(i): v for i, v in m.items()}
                                                                   for k, m in measured.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
