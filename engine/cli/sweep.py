"""``python -m engine sweep``: a grid of configurations x seeds of one tool, written as a resumable table."""

from __future__ import annotations

import sys

from engine.sweep import (
    COMBINE,
    EXECUTORS,
    SWEEP_PRESETS,
    TOOLS,
    SweepSpec,
    get_adapter,
    parse_assignment,
    parse_setting,
    preset_spec,
    run_sweep,
    spec_cost,
)
from engine.cli import require
from engine.executor import from_args
from engine.validation import ConfigError

WHAT = "This sweep"
HELP = ("Sweep a tool over a grid of settings x seeds (locally, in worker processes or on Dask); "
        "writes one row per cell x run to a Parquet/CSV table and resumes from it.")


def add_arguments(parser) -> None:
    # dest differs from "tool": the dispatcher keeps the CLI tool (sweep) there.
    parser.add_argument("--tool", dest="sweep_tool", choices=TOOLS,
                        help="which engine each cell runs (default: fbo, or the preset's)")
    parser.add_argument("--preset", choices=sorted(SWEEP_PRESETS), help="start from a paper's sweep")
    parser.add_argument("--dataset", help="shorthand for --set dataset=NAME")
    parser.add_argument("--set", dest="fixed", action="append", default=[], metavar="KEY=VALUE",
                        help="a fixed parameter of every cell (repeatable), e.g. --set agents=20")
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                        help="a varied parameter and its values (repeatable; replaces a preset's)")
    parser.add_argument("--combine", choices=COMBINE,
                        help="grid: every combination (default); one-at-a-time: vary each parameter alone "
                             "around the fixed values, as the paper's Fig. 3a")
    parser.add_argument("--reference", action="append", default=[], metavar="KEY=VALUE,...",
                        help="an extra setting drawn as a reference level, e.g. algorithm=ts (repeatable)")
    parser.add_argument("--runs", type=int, help="runs per cell, one row each (default 5, or the preset's)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds (cells) per setting (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="sweep seed every cell's seed is derived from")
    parser.add_argument("--out", required=True, help="output table, .parquet or .csv (rerun to resume)")
    parser.add_argument("--executor", choices=EXECUTORS, default="joblib")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://host:8786")
    parser.add_argument("--workers", type=int, help="worker processes (joblib, or a local Dask cluster)")
    parser.add_argument("--no-retry-failed", action="store_true", help="keep failed cells of an earlier run")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def build_spec(args) -> SweepSpec:
    """The sweep the command line describes (a preset, then the explicit options on top)."""
    fixed = dict(parse_assignment(a, many=False) for a in args.fixed)
    if args.dataset:
        fixed["dataset"] = args.dataset
    axes = tuple(parse_assignment(a, many=True) for a in args.grid)
    references = tuple(parse_setting(r) for r in args.reference)
    changes = {"seed": args.seed}
    if args.runs is not None:
        changes["runs"] = args.runs
    if args.seeds is not None:
        changes["replicates"] = args.seeds
    if args.combine:
        changes["combine"] = args.combine
    if args.preset:
        base_spec = preset_spec(args.preset)
        if args.sweep_tool and args.sweep_tool != base_spec.tool:
            raise ConfigError(f"The preset {args.preset} sweeps {base_spec.tool}, not {args.sweep_tool}.", "tool")
        changes["base"] = dict(base_spec.base, **fixed)
        if axes:
            changes["axes"] = axes
        if references:
            changes["references"] = references
        return preset_spec(args.preset, **changes)
    if not axes:
        raise ConfigError("Give at least one --grid KEY=V1,V2,... (or a --preset).", "grid")
    return SweepSpec(tool=args.sweep_tool or "fbo", base=fixed, axes=axes, references=references, **changes)


def cost(args):
    """Every cell's price on the workers asked for, and the table builds the cells share."""
    spec = build_spec(args)
    get_adapter(spec.tool)
    require("pyarrow")                  # the table is Parquet: say so before the runs, not after them
    if args.executor == "dask":
        require("distributed")
    from_args(args)         # --scheduler without --executor dask, a malformed or tls:// address: one sentence
    return spec_cost(spec, executor=args.executor, workers=args.workers)


def run(args) -> dict:
    spec = build_spec(args)

    def report(progress):
        print(progress.line(), file=sys.stderr, flush=True)

    summary = run_sweep(spec, args.out, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                        retry_failed=not args.no_retry_failed, on_progress=None if args.quiet else report)
    out = summary.to_json()
    out["varied"] = spec.varied
    return out
