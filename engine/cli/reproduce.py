"""``python -m engine reproduce dp-fts-de``: the paper's protocol, our curves and its claims judged over runs.

Prints one JSON object: per part (landmine, synthetic) every setting's mean
curve and standard error over runs (with the checkpoints t = 0, 10, 30, T) and
the list of claim verdicts ``{"claim", "source", "holds", "verdict", "numbers"}``.
Progress, and a readable summary at the end, go to stderr.
"""

from __future__ import annotations

import functools
import sys
import time
from dataclasses import replace

from engine.cli import host_limits
from engine.executor import add_arguments as add_executor_arguments
from engine.executor import from_args, metered, together, use
from engine.fbo.plan import objective_ready, resolve_agents
from engine.limits import Cost, check_workers, cores, fbo_cost, objective_cost, sweep_cost
from engine.reproduce import PAPERS as REGISTERED
from engine.reproduce import PART_SPECS, PARTS, fts, reproduce_dp_fts_de
from engine.reproduce.papers import (claim_lines, default_parts, paper_cost, paper_module, paper_parts, paper_runs,
                                     run_paper, summary_rows)
from engine.reproduce.dp_fts_de import (CORE_PARTS, LANDMINE_RUNS, STORED_SYNTHETIC_RUNS, SYNTHETIC_PARTS,
                                       SYNTHETIC_RUNS, parse_parts, part_runs)
from engine.reproduce.claims import decide_payload
from engine.reproduce.replication import replicate, replication_seed, reusable
from engine.reproduce.report import Setting, block_plan, deciding_comparison, setting_config
from engine.reproduce.ablations import (ABLATIONS, NAMES as ABLATION_NAMES, OWN_CODE as ABLATION_OWN_CODE,
                                        ablation_lines, ablation_settings, block_cost, switched_config,
                                        run_ablations)
from engine.reproduce.runs import block_key
from engine.validation import ConfigError, check_choice, check_int

WHAT = "This reproduction"
HELP = "Reproduce a paper's experiments (or all): curves with standard errors over runs, claims judged."
PAPERS = tuple(REGISTERED) + ("all", "ablations")
# Papers whose parts are federated BO settings, run and priced block by block of runs.
FBO_PAPERS = ("dp-fts-de", "fts", "ablations")
# The fig11-neighbours ablation's accounting (27 RDP privacy losses, the fixed samples' the slowest): 15 s of CPU
# measured on the 2-core development machine, priced with a margin.
FIG11_SECONDS, FIG11_MB = 30.0, 300.0


def add_arguments(parser) -> None:
    parser.add_argument("paper", metavar="{" + ",".join(PAPERS) + "}", help="which paper to reproduce")
    parser.add_argument("--parts", default=None,
                        help=f"comma-separated parts to run (dp-fts-de: default {','.join(CORE_PARTS)}, or all: "
                             f"{','.join(PARTS)}; fts: {','.join(fts.PARTS)}; ablations: "
                             f"{','.join(ABLATION_NAMES)}; the others: their figures; default, and under all, every "
                             "part but dp-hype's fashion-mnist, which needs the Debian package dataset-fashion-mnist "
                             "and about 4 GB with two workers)")
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per setting of every part (default: the paper's; dp-fts-de: {LANDMINE_RUNS} on "
                             f"landmine, 10 on the stand-in tasks; fts: initialisations, {fts.RUNS})")
    parser.add_argument("--synthetic-runs", type=int, default=None,
                        help=f"dp-fts-de: runs per setting of the synthetic parts (default: --runs if given, else "
                             f"{SYNTHETIC_RUNS}, the paper's; under all, {STORED_SYNTHETIC_RUNS}, the stored parts' "
                             "count)")
    parser.add_argument("--functions", type=int, default=fts.FUNCTIONS,
                        help=f"fts synthetic part: GP functions (default {fts.FUNCTIONS}, the paper's)")
    parser.add_argument("--repetitions", type=int, default=None,
                        help="dp-hype: simulated votes per point of Fig. 2 (default 5000, the paper's)")
    parser.add_argument("--training", choices=("paper", "short"), default=None,
                        help="dp-hype: how the stand-ins' score tables train: paper (5 rounds x 5 local epochs, the "
                             "default) or short (2 x 1, about 8 times cheaper, labelled in the output)")
    parser.add_argument("--seed", type=int, default=0, help="seeds every block of runs (shared by all settings)")
    parser.add_argument("--no-replication", action="store_true",
                        help="judge on the discovery runs alone (a quick look): the claims decisive there say "
                             "'discovery only' instead of being run again on the replication seed set")
    parser.add_argument("--reuse-stored", action="store_true",
                        help="take the discovery of every part stored in data/reproduction/ whose claims the "
                             "engine still makes (seed 0, the stored runs) instead of running it again; run the "
                             "other parts and the replication")
    add_executor_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")


def _progress(quiet: bool):
    if quiet:
        return None
    started = time.perf_counter()

    def report(part, done, total):
        print(f"{part}: {done}/{total} done, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    return report


def summary_lines(payload: dict) -> list[str]:
    """A readable table of the checkpoints and the verdicts (what the CLI prints on stderr)."""
    lines = []
    if payload.get("machine"):
        lines.append(f"Run times measured on: {payload['machine']}")
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
    for item in payload.get("not_reproducible", []):
        lines.append(f"  [not reproducible] {item['claim']} ({item['source']}): {item['reason']}")
    return lines


def _papers(args) -> tuple[str, ...]:
    if args.paper not in PAPERS:
        raise ConfigError(f"Unknown paper {args.paper!r}; choose one of {', '.join(PAPERS)}.", "paper")
    return tuple(REGISTERED) if args.paper == "all" else (args.paper,)


def _parts_of(args, paper: str) -> tuple[str, ...]:
    if paper == "ablations":
        if args.parts is None:
            return ABLATION_NAMES
        names = tuple(p.strip() for p in str(args.parts).split(",") if p.strip())
        for name in names:
            check_choice("ablation", name, ABLATION_NAMES)
        return names
    if paper == "dp-fts-de":
        if args.paper == "all":
            return PARTS
        return parse_parts(args.parts) if args.parts else CORE_PARTS
    known = fts.PARTS if paper == "fts" else paper_parts(paper)
    if args.parts is None or args.paper == "all":
        return tuple(known) if paper == "fts" else default_parts(paper)
    parts = tuple(p.strip() for p in str(args.parts).split(",") if p.strip())
    for part in parts:
        check_choice("reproduction part", part, known)
    return parts


def _runs(args, paper: str) -> int | None:
    """Runs per setting of ``paper``: the command line's (at most the paper's under ``all``), else the paper's
    (None for dp-fts-de: each part's own count, engine.reproduce.dp_fts_de.part_runs)."""
    if paper == "ablations":
        return LANDMINE_RUNS if args.runs is None else args.runs
    own = LANDMINE_RUNS if paper == "dp-fts-de" else fts.RUNS if paper == "fts" else paper_runs(paper)
    if args.runs is None:
        return None if paper == "dp-fts-de" else own
    return min(args.runs, own) if args.paper == "all" else args.runs


def _synthetic_runs(args) -> int | None:
    """Runs per setting of dp-fts-de's synthetic parts: the command line's; under ``all`` without ``--runs``, the
    stored parts' count (what ``reproduce all`` reproduces: its verdicts are the stored ones); else None (the
    part's own count, engine.reproduce.dp_fts_de.part_runs)."""
    if args.synthetic_runs is not None:
        return args.synthetic_runs
    return STORED_SYNTHETIC_RUNS if args.paper == "all" and args.runs is None else None


def _request(args) -> tuple[dict[str, tuple[str, ...]], int | None]:
    """({paper: parts}, workers) of the command line, checked."""
    papers = {paper: _parts_of(args, paper) for paper in _papers(args)}
    if args.runs is not None:
        check_int("runs", args.runs, 2, 10_000)
    if args.synthetic_runs is not None:
        check_int("synthetic runs", args.synthetic_runs, 2, 10_000)
    if args.repetitions is not None:
        check_int("repetitions", args.repetitions, 2, 1_000_000)
    check_int("functions", args.functions, 2, 1000)
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers}.", "workers")
    from_args(args)         # --scheduler without --executor dask, a malformed address: one sentence, before pricing
    for paper, parts in papers.items():       # data a part needs and this machine lacks: one sentence, before pricing
        if paper not in FBO_PAPERS and hasattr(paper_module(paper), "check_parts"):
            paper_module(paper).check_parts(parts)
    return papers, check_workers(args.workers, host_limits())


def _fbo_cells(args, paper: str, parts) -> tuple[list[Cost], list[Cost]]:
    """One cost per block of runs of every setting of a federated BO paper, and each part's objective once."""
    cells, shared, seen = [], [], set()
    nothing = Cost(0.0, 0.0, "runs")
    specs = fts.PART_SPECS if paper == "fts" else PART_SPECS
    if paper == "ablations":      # each ablation runs its claims' settings twice: with the deviation and without
        return _ablation_cells(args, parts)
    for name in parts:
        part = specs[name]
        if paper == "fts":
            # The fts synthetic part: one block per GP function drawn (its initialisations).
            runs = args.functions * fts.INITIALISATIONS if name == "synthetic" else _runs(args, paper)
        else:
            runs = part_runs(name, _runs(args, paper), _synthetic_runs(args))
        # The run-time part steps single runs of the rivals by hand: priced as FTS runs of its base.
        settings = part.settings or (Setting("fts", "FTS", dict(algorithm="fts")),)
        for block_seed, size, objective in block_plan(args.seed, runs, part.draws, part.per_draw):
            for setting in settings:
                config = setting_config(part.base, setting, block_seed, size, objective)
                key = block_key(config)
                if key in seen and paper == "dp-fts-de":    # a block two parts share is made once
                    continue
                seen.add(key)
                cells.append(fbo_cost(config, resolve_agents(config), objective=nothing))
        shared.append(objective_cost(config.dataset, resolve_agents(config), alpha=config.alpha,
                                     domain=config.domain, table_ready=objective_ready(config)))
    return cells, shared


def _ablation_cells(args, names) -> tuple[list[Cost], list[Cost]]:
    """One cost per block of runs of every setting an FBO ablation runs, on each side (with our deviation and
    without it), and each side's objective once."""
    cells, shared = [], []
    for name in names:
        if name in ABLATION_OWN_CODE:
            continue
        spec = ABLATIONS[name]
        part = PART_SPECS[spec["part"]]
        base = {**part.base, **spec.get("base", {})}
        keys = {key for _, key in ablation_settings((name,))}
        settings = [s for s in part.settings if s.key in keys]
        for side in (None, spec["switch"]):
            for block_seed, size, objective in block_plan(args.seed, _runs(args, "ablations"), part.draws,
                                                          part.per_draw):
                cells += [block_cost(setting_config(base, setting, block_seed, size, objective), side)
                          for setting in settings]
            config = switched_config(setting_config(base, settings[0], args.seed, 1), side)
            shared.append(objective_cost(config.dataset, resolve_agents(config), alpha=config.alpha,
                                         domain=config.domain, table_ready=objective_ready(config)))
    return cells, shared


def cost(args) -> Cost:
    """Every block of runs of every setting, on the workers asked for (each part's objective built once); the
    other papers by their own measured price per run."""
    papers, workers = _request(args)
    cells, shared, serial = [], [], []
    for paper, parts in papers.items():
        if paper in FBO_PAPERS:
            more, objectives = _fbo_cells(args, paper, parts)
            cells += more
            shared += objectives
            if paper == "ablations" and "pogpucb-extent" in parts:   # three extents' Fig. 2a: below the part's price
                serial.append(paper_cost("po-gp-ucb", ("synthetic",), min(_runs(args, paper), 50), workers=1))
            if paper == "ablations" and "fig11-neighbours" in parts:   # 27 privacy losses: 15 s of CPU, measured
                serial.append(Cost(FIG11_SECONDS, FIG11_MB, "parts"))
        else:
            serial.append(paper_cost(paper, parts, _runs(args, paper), repetitions=args.repetitions,
                                     training=args.training if paper == "dp-hype" else None,
                                     workers=workers or cores()))
    processes = max(1, min(workers or cores(), max(1, len(cells))))
    total = sweep_cost(cells, processes, processes=processes > 1, shared=shared) if cells else Cost(0.0, 0.0, "runs")
    # Under `all` the papers run at once (engine.executor.together): what each holds adds up.
    memory = (sum if len(papers) > 1 else max)([total.memory_mb] + [c.memory_mb for c in serial])
    total = replace(total, seconds=total.seconds + sum(c.seconds for c in serial), memory_mb=memory)
    if not args.no_replication:     # the replication runs the decisive claims' settings again: at most as much
        total = replace(total, seconds=total.seconds * 2)
    knobs = ("runs",)
    if "dp-fts-de" in papers:
        synthetic_only = not set(papers["dp-fts-de"]) - set(SYNTHETIC_PARTS)
        knobs = ("synthetic_runs",) if synthetic_only else ("runs", "synthetic_runs")
    if args.paper == "fts":
        knobs = ("runs", "functions")
    return replace(total, field=knobs[0], knobs=knobs + ("parts",),
                   memory_field="workers" if processes > 1 else knobs[0])


def _stored(args, paper: str, parts) -> dict:
    """The stored discovery of ``parts`` that ``--reuse-stored`` may take (engine.reproduce.replication)."""
    if not args.reuse_stored:
        return {}
    if args.seed != 0:
        raise ConfigError("--reuse-stored takes the stored seed-0 discovery; leave --seed at 0.", "seed")
    return reusable(paper, parts)


def _replicated(args, paper: str, payload: dict, workers, keep=()) -> dict:
    """``payload`` decided over the paper's claims, and (unless --no-replication) replicated; the reused stored
    parts ``keep`` (one objective for every seed set: their design unchanged) keep their stored replication."""
    decide_payload(payload)
    if args.no_replication:
        return payload
    started = time.perf_counter()
    replicate(paper, payload, args.seed, jobs=workers, progress=_progress(args.quiet), keep=keep)
    payload["replication"] = {"seed": replication_seed(args.seed),
                              "seconds": round(time.perf_counter() - started, 1)}
    return payload


def _fbo_paper(args, paper: str, parts, workers) -> dict:
    started = time.perf_counter()
    if paper == "ablations":
        payload = run_ablations(parts, runs=_runs(args, paper), seed=args.seed, jobs=workers,
                                replicate=not args.no_replication)
        payload.update(paper="ablations", seed=args.seed, seconds=round(time.perf_counter() - started, 1))
        if not args.quiet:
            print("\n".join(ablation_lines(payload)), file=sys.stderr, flush=True)
        return payload
    stored = _stored(args, paper, parts)
    todo = tuple(p for p in parts if p not in stored)
    if paper == "fts":
        results = fts.reproduce(todo, runs=_runs(args, paper), functions=args.functions, seed=args.seed,
                                jobs=workers, progress=_progress(args.quiet)) if todo else {}
        extra = {"machine": fts.machine(), "not_reproducible": fts.NOT_REPRODUCIBLE}
    else:
        results = reproduce_dp_fts_de(todo, runs=_runs(args, paper), synthetic_runs=_synthetic_runs(args),
                                      seed=args.seed, jobs=workers, progress=_progress(args.quiet)) if todo else {}
        extra = {}
    made = {name: part.to_json() for name, part in results.items()}
    payload = {"paper": paper, "seed": args.seed, "seconds": round(time.perf_counter() - started, 1),
               "parts": {name: stored.get(name) or made[name] for name in parts}, **extra}
    if stored:
        payload["reused"] = sorted(stored)
    specs = fts.PART_SPECS if paper == "fts" else PART_SPECS
    _replicated(args, paper, payload, workers, keep={name for name in stored if specs[name].draws == "fixed"})
    payload["seconds"] = round(time.perf_counter() - started, 1)
    if not args.quiet:
        print("\n".join(summary_lines(payload)), file=sys.stderr, flush=True)
    return payload


def _other(args, paper: str, parts, workers) -> dict:
    started = time.perf_counter()
    options = {"repetitions": args.repetitions} if paper == "dp-hype" and args.repetitions else {}
    if paper == "dp-hype":
        options["jobs"] = workers
        if args.training:
            options["training"] = args.training
    stored = _stored(args, paper, parts)
    todo = tuple(p for p in parts if p not in stored)
    payload = run_paper(paper, todo, runs=_runs(args, paper), seed=args.seed, progress=_progress(args.quiet),
                        **options) if todo else {"paper": paper, "seed": args.seed, "parts": {}}
    if stored:
        payload["parts"] = {name: stored.get(name) or payload["parts"][name] for name in parts}
        payload["reused"] = sorted(stored)
    _replicated(args, paper, payload, workers)
    payload["seconds"] = round(time.perf_counter() - started, 1)
    if not args.quiet:
        print("\n".join(claim_lines(payload)), file=sys.stderr, flush=True)
    return payload


def _timed(args, paper: str, parts, workers) -> dict:
    """One paper's output with its CPU seconds (its tasks' on the workers and its own thread's) beside its wall
    seconds (``seconds``)."""
    with metered() as meter:
        payload = (_fbo_paper if paper in FBO_PAPERS else _other)(args, paper, parts, workers)
    payload["cpu_seconds"] = round(meter.cpu, 1)
    return payload


def run(args) -> dict:
    """Every paper asked for on the command's executor (every block, score table, objective table and whole part
    runs there); under ``all`` the papers run at once, sharing its workers (one pool, or one cluster)."""
    papers, workers = _request(args)
    started = time.perf_counter()
    with from_args(args, workers=workers).session() as executor, use(executor):
        outputs = together({paper: functools.partial(_timed, args, paper, parts, workers)
                            for paper, parts in papers.items()})
    if args.paper != "all":
        return outputs[args.paper]
    return {"paper": "all", "seed": args.seed, "seconds": round(time.perf_counter() - started, 1),
            "papers": outputs, "summary": summary_rows(outputs)}
