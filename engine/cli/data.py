"""``python -m engine data``: fetch the landmine file, show what is available, build objective tables.

- ``data fetch landmine [--data-dir D] [--url U]``: download and verify the file
  (sha256); without a network it says where to put the file (exit 2).
- ``data status [--data-dir D] [--cache-dir C]``: which tasks can run, and the
  cached or interrupted tables.
- ``data build-table --dataset NAME [--agents N] [--alpha A] [--seed S] [--grid G] [--workers W]``:
  build (or find) a task's table; prints its path and the build time. A table
  not cached yet is priced first (:func:`cost`); a cached one costs nothing.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from engine.executor import add_arguments as add_executor_arguments
from engine.executor import from_args, use
from engine.objectives.builds import build_table
from engine.objectives.datasets import LANDMINE_URL, check_landmine_file, fetch_landmine
from engine.cli import host_limits
from engine.limits import check_workers, cores, objective_cost
from engine.objectives.registry import DATASETS, TABLE_TASKS, data_status, dataset_costs, dataset_label, make_task
from engine.objectives.store import cached_tables, table_path
from engine.paths import DATA_DIR_ORDER, DEFAULT_CACHE_DIR, DEFAULT_DATA_DIR, cache_dir, data_dir, data_dir_source
from engine.validation import ConfigError

WHAT = "This table build"
HELP = "Data sets and objective tables: fetch the landmine file, show what is available, build a table."
ACTIONS = ("fetch", "status", "build-table")


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    fetch = sub.add_parser("fetch", help="download a data set and verify its sha256")
    fetch.add_argument("dataset", choices=("landmine",))
    fetch.add_argument("--data-dir", help=f"data directory (default: DPBO_DATA_DIR, else {DEFAULT_DATA_DIR})")
    fetch.add_argument("--url", default=LANDMINE_URL, help="where to download from (http(s):// or file://)")
    fetch.add_argument("--timeout", type=float, default=30.0, help="seconds before giving up on the network")

    status = sub.add_parser("status", help="which tasks can run, and the cached tables")
    status.add_argument("--data-dir")
    status.add_argument("--cache-dir", help=f"cache directory (default: DPBO_CACHE_DIR, else {DEFAULT_CACHE_DIR})")

    build = sub.add_parser("build-table", help="build a task's objective table (or find it in the cache)")
    build.add_argument("--dataset", required=True, choices=TABLE_TASKS)
    build.add_argument("--agents", type=int, help="number of agents (default: the task's own)")
    build.add_argument("--alpha", type=float, help="Dirichlet heterogeneity of the scikit-learn tasks")
    build.add_argument("--seed", type=int, default=0, help="objective seed (data split and partition)")
    build.add_argument("--grid", type=int, help="points per axis (default: 50 in 2-D, 16 in 3-D)")
    add_executor_arguments(build)
    build.add_argument("--data-dir")
    build.add_argument("--cache-dir")
    build.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _status(args) -> dict:
    datasets = []
    for name in DATASETS:
        entry = {"name": name, "label": dataset_label(name)}
        if name == "landmine":
            try:
                entry.update(available=True, path=str(check_landmine_file()))
            except ConfigError as err:
                status = data_status(name)
                entry.update(available=False, path=status.path, url=status.url, message=str(err))
        else:
            entry.update(available=True, source="generated" if name == "synthetic" else "bundled with scikit-learn")
        datasets.append(entry)
    # --data-dir and --cache-dir are already in the environment (engine.cli.paths_to_environment).
    return {"action": "status", "data_dir": str(data_dir()),
            "data_dir_source": data_dir_source(args.data_dir), "data_dir_order": list(DATA_DIR_ORDER),
            "cache_dir": str(cache_dir()), "datasets": datasets, "tables": cached_tables()}


def _build_table(args) -> dict:
    task = make_task(args.dataset, n_agents=args.agents, alpha=args.alpha, seed=args.seed)

    def report(done: int, total: int) -> None:
        print(f"{args.dataset} table: {done}/{total} agents", file=sys.stderr, flush=True)

    with use(from_args(args)):
        built = build_table(task, args.grid, n_jobs=args.workers, progress=None if args.quiet else report)
    return {"action": "build-table", "dataset": args.dataset, "path": str(built.path),
            "n_agents": task.n_agents, "candidates": int(built.values.shape[1]), "dim": task.dim,
            "build_seconds": round(built.seconds, 3), "from_cache": built.from_cache,
            "resumed_agents": built.resumed, "mean_best_score": float(built.values.max(axis=1).mean())}


def cost(args):
    """A table build's price: every agent scored on the grid, in worker processes; nothing when it is cached."""
    if args.action != "build-table":
        return None
    workers = check_workers(args.workers, host_limits()) if args.workers is not None else None
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}.", "workers")
    from_args(args)         # --scheduler without --executor dask, a malformed address: one sentence
    task = make_task(args.dataset, n_agents=args.agents, alpha=args.alpha, seed=args.seed)
    if table_path(task, args.grid).is_file():
        return objective_cost(args.dataset, task.n_agents, table_ready=True)
    price = objective_cost(args.dataset, task.n_agents)
    candidates = (args.grid or task.default_grid) ** task.dim
    processes = max(1, min(workers or cores(), task.n_agents))
    return replace(price, seconds=price.seconds * candidates / dataset_costs(args.dataset).candidates,
                   memory_mb=price.memory_mb * max(1.0, processes / 2))


def run(args) -> dict:
    if args.action is None:
        raise ConfigError(f"Name an action: {', '.join(ACTIONS)} (python -m engine data ACTION --help).")
    if args.action == "fetch":
        result = fetch_landmine(url=args.url, timeout=args.timeout)
        return {"action": "fetch", "dataset": args.dataset, **result}
    if args.action == "status":
        return _status(args)
    return _build_table(args)
