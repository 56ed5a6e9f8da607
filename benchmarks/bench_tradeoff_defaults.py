"""Is the Trade-off explorer's default federated BO sweep ordered as privacy predicts, beyond its error bars?

Runs the page's default sweep (``ui.sweep.controls.TOOL_DEFAULTS["fbo"]``: DP-FTS-DE on the synthetic task,
q x z grid, TS as the reference, 60 runs per setting) for a few sweep seeds and, for each of the grid's
neighbouring pairs (a larger q, or a smaller z, should give a lower regret), prints the paired difference
over its standard error over runs (``engine.sweep.analysis.pair_differences``): positive when ordered as
predicted, above 1 when beyond one standard error. docs/benchmarks.md quotes the table.

Usage::

    python -m benchmarks.bench_tradeoff_defaults [--seeds 0,1,2] [--runs 60]

Writes ``benchmarks/results/bench_tradeoff_defaults.json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks import save_results
from engine.sweep import SweepSpec, read_table, run_sweep
from engine.sweep.analysis import pair_differences
from engine.sweep.values import parse_lines

ROOT = Path(__file__).resolve().parents[1]


def default_spec(seed: int, runs: int) -> SweepSpec:
    from ui.sweep.controls import TOOL_DEFAULTS

    defaults = TOOL_DEFAULTS["fbo"]
    numbers = lambda text: tuple(float(v) for v in text.split(","))  # noqa: E731
    return SweepSpec.from_dict(dict(
        tool="fbo", base=parse_lines(defaults["base"]),
        axes=[[defaults["p1"], numbers(defaults["v1"])], [defaults["p2"], numbers(defaults["v2"])]],
        combine="grid", references=[dict(algorithm=a) for a in defaults["refs"]], runs=runs, seed=seed))


def neighbour_pairs(spec: SweepSpec) -> list[tuple[dict, dict]]:
    """(better, worse) settings as privacy predicts: one step up in q, or one step down in z."""
    (p1, v1), (p2, v2) = spec.axes
    pairs = []
    for b in v2:
        pairs += [({p1: v1[i + 1], p2: b}, {p1: v1[i], p2: b}) for i in range(len(v1) - 1)]
    for a in v1:
        pairs += [({p1: a, p2: v2[i]}, {p1: a, p2: v2[i + 1]}) for i in range(len(v2) - 1)]
    return pairs


def z_scores(table, spec: SweepSpec) -> list[float]:
    diffs = pair_differences(table)
    (p1, _), (p2, _) = spec.axes
    label = {}
    for name, group in table[table["role"] == "setting"].groupby("setting"):
        row = group.iloc[0]
        label[(float(row[p1]), float(row[p2]))] = name
    out = []
    for better, worse in neighbour_pairs(spec):
        a, b = label[(better[p1], better[p2])], label[(worse[p1], worse[p2])]
        row = diffs[((diffs["a"] == a) & (diffs["b"] == b)) | ((diffs["a"] == b) & (diffs["b"] == a))].iloc[0]
        difference = row["difference"] if row["a"] == b else -row["difference"]   # worse - better: > 0 as predicted
        out.append(float(difference / row["se"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    results = []
    for seed in (int(s) for s in args.seeds.split(",")):
        spec = default_spec(seed, args.runs)
        out = Path(tempfile.mkdtemp(prefix="dpbo-tradeoff-")) / "sweep.parquet"
        start = time.perf_counter()
        run_sweep(spec, out, executor="joblib", workers=2)
        seconds = time.perf_counter() - start
        z = z_scores(read_table(str(out)), spec)
        results.append(dict(seed=seed, runs=args.runs, seconds=round(seconds, 1), z=[round(v, 2) for v in z],
                            ordered=sum(v > 0 for v in z), beyond_one_se=sum(v > 1 for v in z), pairs=len(z)))
        r = results[-1]
        print(f"seed {seed}: {r['seconds']} s, ordered {r['ordered']} of {r['pairs']}, beyond 1 s.e. "
              f"{r['beyond_one_se']} of {r['pairs']}; z = {', '.join(f'{v:.2f}' for v in z)}", flush=True)
    save_results("bench_tradeoff_defaults.json", results, indent=1)


if __name__ == "__main__":
    main()
