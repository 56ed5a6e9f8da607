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
from engine.reproduce import PAPERS as REGISTERED
from engine.reproduce import PART_SPECS, PARTS, reproduce_dp_fts_de
from engine.reproduce.papers import claim_lines, paper_parts, paper_runs, run_paper, summary_rows
from engine.reproduce.dp_fts_de import LANDMINE_RUNS, SYNTHETIC_RUNS
from engine.reproduce.report import block_seeds, deciding_comparison, setting_config
from engine.validation import ConfigError, check_choice, check_int

WHAT = "This reproduction"
HELP = "Reproduce a paper's experiments (or all): curves with standard errors over runs, claims judged."
PAPERS = tuple(REGISTERED) + ("all",)


def add_arguments(parser) -> None:
    parser.add_argument("paper", metavar="{" + ",".join(PAPERS) + "}", help="which paper to reproduce")
    parser.add_argument("--parts", default=None,
                        help=f"comma-separated parts to run (default: all; dp-fts-de: {','.join(PARTS)})")
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per setting (default: the paper's; dp-fts-de landmine: {LANDMINE_RUNS})")
    parser.add_argument("--repetitions", type=int, default=None,
                        help="dp-hype: simulated votes per point of Fig. 2 (default 5000, the paper's)")
    parser.add_argument("--synthetic-runs", type=int, default=SYNTHETIC_RUNS,
                        help=f"runs per synthetic setting (default {SYNTHETIC_RUNS}, the paper's)")
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


def _papers(args) -> tuple[str, ...]:
    if args.paper not in PAPERS:
        raise ConfigError(f"Unknown paper {args.paper!r}; choose one of {', '.join(PAPERS)}.", "paper")
    return tuple(REGISTERED) if args.paper == "all" else (args.paper,)


def _parts_of(args, paper: str) -> tuple[str, ...]:
    known = PARTS if paper == "dp-fts-de" else paper_parts(paper)
    if args.parts is None or args.paper == "all":
        return tuple(known)
    parts = tuple(p.strip() for p in str(args.parts).split(",") if p.strip())
    for part in parts:
        check_choice("reproduction part", part, known)
    return parts


def _request(args) -> tuple[tuple[str, ...], int | None]:
    """(dp-fts-de parts, workers) of the command line, checked (every paper's parts and runs too)."""
    papers = _papers(args)
    for paper in papers:
        _parts_of(args, paper)
    parts = _parts_of(args, "dp-fts-de") if "dp-fts-de" in papers else ()
    if args.runs is not None:
        check_int("runs", args.runs, 2, 10_000)
    if args.repetitions is not None:
        check_int("repetitions", args.repetitions, 2, 1_000_000)
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
        runs = (args.runs or LANDMINE_RUNS) if name == "landmine" else args.synthetic_runs
        for block_seed, size in block_seeds(args.seed, runs):
            for setting in part.settings:
                config = setting_config(part.base, setting, block_seed, size)
                cells.append(fbo_cost(config, resolve_agents(config), objective=nothing))
        shared.append(objective_cost(config.dataset, resolve_agents(config), alpha=config.alpha,
                                     domain=config.domain, table_ready=objective_ready(config)))
    if not cells:       # the other papers' reproductions are bounded by their own run counts
        return None
    processes = max(1, min(workers or cores(), len(cells)))
    total = sweep_cost(cells, processes, processes=processes > 1, shared=shared)
    knobs = ("runs", "synthetic_runs") if "landmine" in parts else ("synthetic_runs",)
    return replace(total, field=knobs[0], knobs=knobs + ("parts",),
                   memory_field="workers" if processes > 1 else knobs[0])


def _dp_fts_de(args, parts, workers) -> dict:
    started = time.perf_counter()
    results = reproduce_dp_fts_de(parts, runs=args.runs or LANDMINE_RUNS, synthetic_runs=args.synthetic_runs,
                                  seed=args.seed, jobs=workers, progress=_progress(args.quiet))
    payload = {"paper": "dp-fts-de", "seed": args.seed, "seconds": round(time.perf_counter() - started, 1),
               "parts": {name: part.to_json() for name, part in results.items()}}
    if not args.quiet:
        print("\n".join(summary_lines(payload)), file=sys.stderr, flush=True)
    return payload


def _other(args, paper: str) -> dict:
    started = time.perf_counter()
    options = {"repetitions": args.repetitions} if paper == "dp-hype" and args.repetitions else {}
    runs = min(args.runs, paper_runs(paper)) if args.paper == "all" and args.runs else args.runs
    payload = run_paper(paper, _parts_of(args, paper), runs=runs, seed=args.seed,
                        progress=_progress(args.quiet), **options)
    payload["seconds"] = round(time.perf_counter() - started, 1)
    if not args.quiet:
        print("\n".join(claim_lines(payload)), file=sys.stderr, flush=True)
    return payload


def run(args) -> dict:
    parts, workers = _request(args)
    papers = _papers(args)
    outputs = {paper: _dp_fts_de(args, parts, workers) if paper == "dp-fts-de" else _other(args, paper)
               for paper in papers}
    if args.paper != "all":
        return outputs[args.paper]
    return {"paper": "all", "seed": args.seed, "papers": outputs, "summary": summary_rows(outputs)}
