"""A differential trace of DP-FTS-DE on landmine: the authors' public code beside the engine, round by round.

    python benchmarks/trace_authors_dpftsde.py AUTHORS_CHECKOUT [--iterations 10] [--seeds 0,1]
                                               [--out data/reproduction/authors-trace.json]

AUTHORS_CHECKOUT is a checkout of the authors' repository (Differentially-Private-Federated-Bayesian-Optimization
by Zhongxiang Dai: landmine_dp_fts_de.py, bayesian_optimization_dp_fts_de.py, aux_files/). Their script needs
GPy, which the project does not depend on: run this file with an interpreter that has it (e.g. a virtual
environment in /tmp that adds the project's packages through a .pth file and installs GPy).

What runs on their side is their own file, unchanged but for three settings read at run time: one run
(run_list), ``--iterations`` + 1 rounds (max_iter) and their thread pool replaced by a sequential map so that
``numpy.random.seed(seed)`` makes the run repeatable (29 threads share numpy's global generator in their code,
which makes the order of draws, hence the run, depend on thread scheduling). Nothing of their code is copied
here: the script is executed from the checkout, and a hook on the pool's map reads, at the start of every
round, what the previous round left in the script's variables (the agents' vectors ``all_w_nt``, the sample
``select_subset_id``, the weights ``all_weights`` and the broadcast ``all_w_t``).

Our side is :func:`engine.reproduce.trace.engine_trace` at the same settings and seed numbers (the random
streams cannot be shared: theirs is numpy's global generator and GPy's, ours numpy Generators). The output
holds both traces per round, their summaries, the authors' commit, the command and the date.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.reproduce.trace import engine_trace, round_summary, summary  # noqa: E402

SCRIPT = "landmine_dp_fts_de.py"
# Their settings we change, as they appear in their file (landmine_dp_fts_de.py:9 and :73).
REPLACE = {"max_iter = 61": "max_iter = {rounds}", "run_list = np.arange(0, 100)": "run_list = np.arange(0, 1)"}


class _Refused(Exception):
    pass


class SequentialPool:
    """multiprocessing.dummy.Pool's map, one call after another, with a hook before each map."""

    hook = None

    def __init__(self, *args, **kwargs):
        pass

    def map(self, func, items):
        if SequentialPool.hook is not None:
            SequentialPool.hook(func)
        return [func(item) for item in items]


def _squeezed_minimize(minimize):
    """scipy.optimize.minimize as the scipy of 2021 called it: a 2-D x0 (their helper_funcs_dp_fts_de.py:24-27
    passes x0 of shape (1, d)) had its singleton dimension removed; scipy 1.11 on refuses it."""
    def wrapper(fun, x0, *args, **kwargs):
        return minimize(fun, np.ravel(x0), *args, **kwargs)
    return wrapper


def _commit(checkout: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _authors_round(ns: dict) -> dict:
    """The round the script just finished, from its variables (landmine_dp_fts_de.py:95-148)."""
    r = int(ns["itr"])
    vectors = np.asarray(ns["all_w_nt"], dtype=float)
    N, P = vectors.shape[0], int(ns["N_partitions"])
    selected = np.zeros(N, dtype=bool)
    selected[list(ns["select_subset_id"])] = True
    weights = ns["all_weights"][r]
    phi_max = [float(np.max(weights[p])) for p in range(P)]
    noise = [m * ns["z"] * ns["S"] / ns["q"] for m in phi_max]
    out = round_summary(np.linalg.norm(vectors, axis=1), selected, ns["S"] / np.sqrt(P), phi_max, noise,
                        [np.linalg.norm(w) for w in ns["all_w_t"]])
    out["round"] = r
    return out


def authors_trace(checkout: Path, iterations: int, seed: int) -> dict:
    """Run the authors' landmine DP-FTS-DE script for one seeded run and return its rounds 0..iterations-1."""
    try:
        import GPy  # noqa: F401
    except ImportError:
        raise _Refused("The authors' code needs GPy, which this interpreter lacks; run this script with an "
                       "interpreter that has GPy installed.") from None
    source_path = checkout / SCRIPT
    if not source_path.is_file():
        raise _Refused(f"{checkout} holds no {SCRIPT}; give the path of a checkout of the authors' repository.")
    source = source_path.read_text()
    for old, new in REPLACE.items():
        if old not in source:
            raise _Refused(f"{SCRIPT} in {checkout} does not set '{old}' as the commit this script knows does.")
        source = source.replace(old, new.format(rounds=iterations + 1))
    import multiprocessing.dummy

    rounds: list[dict] = []
    ns: dict = {"__name__": "__authors__", "__file__": str(source_path)}

    def hook(func):
        if func.__name__ == "parallel_bo" and ns.get("itr", 0) >= 1:
            rounds.append(_authors_round(dict(ns, itr=ns["itr"] - 1)))
            print(f"authors round {rounds[-1]['round']}: {json.dumps(rounds[-1])}", file=sys.stderr, flush=True)

    original_pool, cwd, path = multiprocessing.dummy.Pool, os.getcwd(), list(sys.path)
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "aux_files").symlink_to(checkout / "aux_files")
        (Path(work) / "results_dp_fts_de").mkdir()
        try:
            multiprocessing.dummy.Pool = SequentialPool
            SequentialPool.hook = hook
            sys.path.insert(0, str(checkout))
            import helper_funcs_dp_fts_de as helpers
            helpers.minimize = _squeezed_minimize(helpers.minimize)
            os.chdir(work)
            np.random.seed(seed)
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(source, str(source_path), "exec"), ns)
        finally:
            multiprocessing.dummy.Pool, SequentialPool.hook = original_pool, None
            os.chdir(cwd)
            sys.path[:] = path
            for name in ("helper_funcs_dp_fts_de", "bayesian_optimization_dp_fts_de"):
                sys.modules.pop(name, None)
    rounds.append(_authors_round(ns))            # the last round: its broadcast would serve iteration T + 1
    return {"rounds": rounds[:iterations], "threshold": float(ns["S"] / np.sqrt(ns["N_partitions"]))}


def logged_trace(log: Path, checkout: Path, iterations: int) -> dict:
    """The authors' rounds 0..iterations-1 as an earlier run of this script logged them (``authors round r: {...}``)."""
    rounds = {}
    for line in log.read_text().splitlines():
        if line.startswith("authors round "):
            head, payload = line.split(": ", 1)
            rounds[int(head.split()[-1])] = json.loads(payload)
    if any(r not in rounds for r in range(iterations)):
        raise _Refused(f"{log} logs {len(rounds)} rounds of the authors' run, fewer than --iterations {iterations}.")
    if not (checkout / SCRIPT).is_file():
        raise _Refused(f"{checkout} holds no {SCRIPT}; give the path of a checkout of the authors' repository.")
    # Their S / sqrt(N_partitions) = 22 / 2 (landmine_dp_fts_de.py:50, :70 and :133).
    return {"rounds": [rounds[r] for r in range(iterations)], "threshold": 11.0, "from_log": str(log.name)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="path of a checkout of the authors' repository")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--seeds", default="0,1", help="comma-separated seed numbers, one run of each side per seed")
    parser.add_argument("--out", default=str(ROOT / "data" / "reproduction" / "authors-trace.json"))
    parser.add_argument("--authors-commit", default=None,
                        help="the authors' commit, for a checkout exported without its .git (default: git's answer)")
    parser.add_argument("--note", default="", help="a sentence for the provenance (how the authors' run went)")
    parser.add_argument("--authors-log", default=None,
                        help="take the authors' rounds from the stderr of an earlier run of this script (one seed), "
                             "e.g. one stopped once its last wanted round was logged, instead of running their code")
    args = parser.parse_args(argv)
    checkout = Path(args.checkout).expanduser().resolve()
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        if not seeds or min(seeds) < 0 or not 1 <= args.iterations <= 60:
            raise ValueError
    except ValueError:
        print("Give --seeds as non-negative integers separated by commas and --iterations from 1 to 60.",
              file=sys.stderr)
        return 2
    if not checkout.is_dir():
        print(f"{checkout} is not a directory; give the path of a checkout of the authors' repository.",
              file=sys.stderr)
        return 2
    runs = []
    try:
        for seed in seeds:
            started = time.perf_counter()
            theirs = (logged_trace(Path(args.authors_log), checkout, args.iterations) if args.authors_log
                      else authors_trace(checkout, args.iterations, seed))
            their_seconds = time.perf_counter() - started
            started = time.perf_counter()
            ours = engine_trace(args.iterations, seed)
            runs.append({"seed": seed, "authors": {**theirs, "summary": summary(theirs["rounds"]),
                                                   "seconds": round(their_seconds, 1)},
                         "engine": {**ours, "summary": summary(ours["rounds"]),
                                    "seconds": round(time.perf_counter() - started, 1)}})
            print(f"seed {seed}: authors {their_seconds:.0f} s", file=sys.stderr)
    except _Refused as refusal:
        print(refusal, file=sys.stderr)
        return 2
    pooled = {side: summary([r for run in runs for r in run[side]["rounds"]]) for side in ("authors", "engine")}
    out = {"provenance": {"authors_repository": "github.com/daizhongxiang/"
                                                "Differentially-Private-Federated-Bayesian-Optimization",
                          "authors_commit": args.authors_commit or _commit(checkout), "authors_script": SCRIPT,
                          "changed_in_their_script": {k: v.format(rounds=args.iterations + 1)
                                                      for k, v in REPLACE.items()},
                          "command": "python benchmarks/trace_authors_dpftsde.py AUTHORS_CHECKOUT "
                                     f"--iterations {args.iterations} --seeds {args.seeds}"
                                     + (" --authors-log LOG" if args.authors_log else ""),
                          "date": dt.date.today().isoformat(), "engine_commit": _commit(ROOT), "note": args.note},
           "iterations": args.iterations, "seeds": seeds, "runs": runs, "pooled": pooled}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(pooled, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
