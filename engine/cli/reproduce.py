"""``python -m engine reproduce dp-fts-de``: the paper's protocol, our curves and its claims judged over runs.

Prints one JSON object: per part (landmine, synthetic) every setting's mean
curve and standard error over runs (with the checkpoints t = 0, 10, 30, T) and
the list of claim verdicts ``{"claim", "source", "holds", "verdict", "numbers"}``.
Progress, and a readable summary at the end, go to stderr.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from engine.cli import host_limits
from engine.fbo.plan import objective_ready, resolve_agents
from engine.limits import Cost, check_workers, cores, fbo_cost, objective_cost, sweep_cost
from engine.reproduce import PART_SPECS, PARTS, reproduce_dp_fts_de
from engine.reproduce.dp_fts_de import CORE_PARTS, LANDMINE_RUNS, SYNTHETIC_RUNS, parse_parts, part_runs
from engine.reproduce.report import block_seeds, deciding_comparison, setting_config
from engine.validation import ConfigError, check_int

WHAT = "This reproduction"
HELP = "Reproduce a paper's experiments (dp-fts-de): curves with standard errors over runs, claims judged."
PAPERS = ("dp-fts-de",)


def add_arguments(parser) -> None:
    parser.add_argument("paper", metavar="{" + ",".join(PAPERS) + "}", help="which paper to reproduce")
    parser.add_argument("--parts", default=",".join(CORE_PARTS),
                        help=f"comma-separated parts to run, or all (default: {','.join(CORE_PARTS)}; all: "
                             f"{','.join(PARTS)})")
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per setting of every part (default: the paper's, {LANDMINE_RUNS} on landmine, "
                             "10 on the stand-in tasks)")
    parser.add_argument("--synthetic-runs", type=int, default=None,
                        help=f"runs per setting of the synthetic parts (default: --runs if given, else "
                             f"{SYNTHETIC_RUNS}, the paper's)")
    parser.add_argument("--seed", type=int, default=0, help="seeds every block of runs (shared by all settings)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")


def _progress(quiet: bool):
    if quiet:
        return None
    started = time.perf_counter()

    def report(part, done, total):
        print(f"{part}: {done}/{total} blocks of runs, {time.perf_counter() - started:.0f} s", file=sys.stderr,
              flush=True)

    return report


def summary_lines(payload: dict) -> list[str]:
    """A readable table of the checkpoints and the verdicts (what the CLI prints on stderr)."""
    lines = []
    for part in payload["parts"].values():
        checkpoints = part["checkpoints"]
        lines.append(f"\n{part['title']}: {part['metric']}, mean (s.e. over {part['runs']} runs)")
        lines.append(f"{'setting':34s} {'epsilon':>8s} " + " ".join(f"{'t=' + str(t):>16s}" for t in checkpoints))
        for s in part["settings"]:
            eps = f"{s['epsilon']:.2f}" if s["epsilon"] is not None else "-"
            cells = " ".join(f"{s['checkpoints'][str(t)]['mean']:>8.4f} ({s['checkpoints'][str(t)]['stderr']:.4f})"
                             for t in checkpoints)
            lines.append(f"{s['label']:34s} {eps:>8s} {cells}")
        lines.append("Claims (difference = claimed loser minus claimed winner, paired over runs):")
        for c in part["claims"]:
            n = deciding_comparison(c["numbers"])
            detail = f"{n['difference']:+.4f} (s.e. {n['stderr']:.4f})"
            if "comparisons" in c["numbers"]:
                detail = f"best: {n['better']} by {detail}"
            lines.append(f"  [{c['verdict']:>15s}] {c['claim']}: {detail}")
    return lines


def _request(args) -> tuple[tuple[str, ...], int | None]:
    """(parts, workers) of the command line, checked."""
    if args.paper not in PAPERS:
        raise ConfigError(f"Unknown paper {args.paper!r}; choose one of {', '.join(PAPERS)}.", "paper")
    parts = parse_parts(args.parts)
    if args.runs is not None:
        check_int("runs", args.runs, 2, 10_000)
    if args.synthetic_runs is not None:
        check_int("synthetic runs", args.synthetic_runs, 2, 10_000)
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers}.", "workers")
    return parts, check_workers(args.workers, host_limits())


def cost(args) -> Cost:
    """Every block of runs of every setting, on the workers asked for; each part's objective built once."""
    parts, workers = _request(args)
    cells, shared = [], []
    nothing = Cost(0.0, 0.0, "runs")
    for name in parts:
        part = PART_SPECS[name]
        runs = part_runs(name, args.runs, args.synthetic_runs)
        for block_seed, size in block_seeds(args.seed, runs):
            for setting in part.settings:
                config = setting_config(part.base, setting, block_seed, size)
                cells.append(fbo_cost(config, resolve_agents(config), objective=nothing))
        shared.append(objective_cost(config.dataset, resolve_agents(config), alpha=config.alpha,
                                     domain=config.domain, table_ready=objective_ready(config)))
    processes = max(1, min(workers or cores(), len(cells)))
    total = sweep_cost(cells, processes, processes=processes > 1, shared=shared)
    knobs = ("runs", "synthetic_runs") if set(parts) - {"synthetic", "synthetic-appendix", "heterogeneous"} \
        else ("synthetic_runs",)
    return replace(total, field=knobs[0], knobs=knobs + ("parts",),
                   memory_field="workers" if processes > 1 else knobs[0])


def run(args) -> dict:
    parts, workers = _request(args)
    started = time.perf_counter()
    results = reproduce_dp_fts_de(parts, runs=args.runs, synthetic_runs=args.synthetic_runs, seed=args.seed,
                                  jobs=workers, progress=_progress(args.quiet))
    payload = {"paper": args.paper, "seed": args.seed, "seconds": round(time.perf_counter() - started, 1),
               "parts": {name: part.to_json() for name, part in results.items()}}
    if not args.quiet:
        print("\n".join(summary_lines(payload)), file=sys.stderr, flush=True)
    return payload
