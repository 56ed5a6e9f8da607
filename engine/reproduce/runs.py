"""Running blocks of seeded federated BO runs for the reproductions: each distinct block once.

A *block* is ``runs`` runs of one :class:`engine.fbo.FboConfig` simulated together
(:data:`RUNS_PER_BLOCK` at most), seeded with its ``seed``. Its outcome depends on the
configuration alone, so a block is known by :func:`block_key`: every field of the
configuration, except the privacy settings of an algorithm without privacy (q, z, S,
the accountant, the sampling, delta and the budget are never read by TS or FTS-DE).
Two parts of a paper that run the same line with the same seeds (TS on landmine for
Fig. 3a and for Fig. 11; TS, FTS-DE and DP-FTS-DE's default on the synthetic functions
for Fig. 2 and for App. B.1) therefore make those runs once: :func:`run_blocks` runs
every distinct key once, on the executor in use (:mod:`engine.executor`: worker processes on this machine
or a Dask cluster), and hands each part the same outcome.

An outcome is ``(per-run curves (runs, T + 1), epsilon after T, delta, engine seconds,
percent of the selected vectors clipped)``.
"""

from __future__ import annotations

import dataclasses
import os
from functools import lru_cache
from typing import Callable, Hashable, Iterable, Mapping

import numpy as np

from engine.executor import Executor, current

RUNS_PER_BLOCK = 25        # runs simulated together in one task (memory, progress and load balance)
# FboConfig fields that only a private algorithm reads (the server's subsampling, clipping, noise and its
# accounting); they do not change the runs of TS, FTS or FTS-DE.
PRIVACY_FIELDS = ("q", "z", "S", "accountant", "sampling", "delta", "budget", "calibrate_z")


def setting_config(base: dict, setting, seed: int, runs: int, objective_seed: int | None = None):
    """The :class:`engine.fbo.FboConfig` of ``runs`` runs of ``setting`` (its ``overrides`` on ``base``) seeded
    with ``seed`` (one block), on the objective drawn with ``objective_seed`` (None: the base's)."""
    from engine.fbo import FboConfig

    draw = {} if objective_seed is None else {"objective_seed": int(objective_seed)}
    return FboConfig(**{**base, **setting.overrides, "runs": runs, "seed": seed, **draw})


def block_key(config) -> tuple:
    """What decides the outcome of a block: ``config``'s fields, the privacy ones only when it is private."""
    fields = dataclasses.fields(config)
    skip = () if config.is_private else PRIVACY_FIELDS
    return tuple((f.name, repr(getattr(config, f.name))) for f in fields if f.name not in skip)


def block_seeds(seed: int, runs: int) -> list[tuple[int, int]]:
    """(engine seed, runs) of every block of ``RUNS_PER_BLOCK`` runs; the same for every setting."""
    from engine.sweep.spec import derive_seed

    blocks, b = [], 0
    while runs > 0:
        size = min(RUNS_PER_BLOCK, runs)
        blocks.append((derive_seed(seed, b), size))
        runs -= size
        b += 1
    return blocks


# Where a part's objective comes from (engine.reproduce.report.Part.draws): "fixed", one objective for every run and
# seed set (the paper's own data with the authors' split: the claim is about that data); "run", a fresh draw for
# every block of ``per_draw`` runs (generated functions: the claim is about the method over functions, so every
# seed set draws new ones and the test counts draws); "seed-set", one draw per seed set (a stand-in instance).
DRAWS = ("fixed", "run", "seed-set")
OBJECTIVE_STREAM = 7919     # the objective's seed is derived apart from the runs' own seed


def block_plan(seed: int, runs: int, draws: str = "fixed", per_draw: int = 1) -> list[tuple[int, int, int | None]]:
    """(engine seed, runs, objective seed or None) of every block of ``runs`` runs at seed set ``seed``; the same
    for every setting of a part, so run r of every setting shares its objective draw (paired comparisons)."""
    from engine.sweep.spec import derive_seed

    if draws == "fixed":
        return [(block_seed, size, None) for block_seed, size in block_seeds(seed, runs)]
    if draws == "seed-set":
        return [(block_seed, size, int(seed) % (2**31 - 1)) for block_seed, size in block_seeds(seed, runs)]
    per_draw = max(1, min(int(per_draw), RUNS_PER_BLOCK))
    blocks, b = [], 0
    while runs > 0:
        size = min(per_draw, runs)
        block_seed = derive_seed(seed, b)
        blocks.append((block_seed, size, derive_seed(block_seed, OBJECTIVE_STREAM)))
        runs -= size
        b += 1
    return blocks


@lru_cache(maxsize=2)
def _objective(dataset: str, split, env_data_dir, env_cache_dir):
    # The environment is part of the key: it alone decides where data and tables come from.
    from engine.objectives import build_objective

    return build_objective(dataset, split=split)


def outcome(result) -> tuple:
    """(per-run curves (runs, T + 1), epsilon after T, delta, engine seconds, percent clipped) of an FboResult."""
    epsilon = float(result.epsilon[-1]) if result.epsilon is not None and len(result.epsilon) else None
    fractions = [f for f in result.clipped_fraction if f is not None]
    clipped = 100.0 * float(np.mean(fractions)) if fractions and result.config.is_private else None
    return (result.run_curves, epsilon, result.delta if result.config.is_private else None, result.wall_seconds,
            clipped)


def run_config(config) -> tuple:
    """Run one block (``config.runs`` runs of ``config``) and return its :func:`outcome`."""
    from engine.fbo import run_fbo

    objective = _objective(config.dataset, config.split, os.environ.get("DPBO_DATA_DIR"),
                           os.environ.get("DPBO_CACHE_DIR")) if config.dataset != "synthetic" else None
    return outcome(run_fbo(config, objective))


def _indexed(key, config):
    return key, run_config(config)


def run_blocks(configs: Iterable, *, jobs: int | None = None, cache: dict | None = None,
               done: Callable[[Hashable], None] | None = None) -> dict:
    """The outcome of every block in ``configs`` (FboConfigs), by :func:`block_key`.

    Each distinct key runs once, in the order first met; keys already in ``cache`` do not run
    again, and every new outcome is added to it. ``jobs`` worker processes (default: all cores;
    1: in this process). ``done(key)`` is called as each block finishes.
    """
    cache = {} if cache is None else cache
    wanted: dict = {}
    for config in configs:
        wanted.setdefault(block_key(config), config)
    todo = [(key, config) for key, config in wanted.items() if key not in cache]
    for key, output in run_tasks(todo, _indexed, jobs=jobs):
        cache[key] = output
        if done:
            done(key)
    return {key: cache[key] for key in wanted}


def run_tasks(todo: list, work: Callable, *, jobs: int | None = None, executor: Executor | None = None):
    """``work(key, item)`` of every ``(key, item)`` in ``todo``, as they finish, on ``executor`` (default: the
    command's, :func:`engine.executor.current`) with ``jobs`` worker processes (default: all cores, at most one
    per task; 1: in this process, in order). ``work`` must be a module-level function (the workers import it).
    The first task that fails raises its error and stops the others."""
    chosen = (executor or current()).with_workers(jobs)
    for _, value in chosen.results(work, [(key, (key, item)) for key, item in todo], label="reproduce"):
        yield value


def block_progress(needs: Mapping[str, set], cache: Mapping, progress: Callable[[str, int, int], None] | None):
    """A ``done(key)`` for :func:`run_blocks` that reports ``progress(name, done, total)`` for every name
    whose blocks ``needs[name]`` (keys) include it; blocks already in ``cache`` count as done at once."""
    left = {name: set(keys) - set(cache) for name, keys in needs.items()}
    if progress:
        for name, keys in needs.items():
            progress(name, len(keys) - len(left[name]), len(keys))

    def done(key) -> None:
        for name, keys in left.items():
            if key in keys:
                keys.discard(key)
                if progress:
                    progress(name, len(needs[name]) - len(keys), len(needs[name]))

    return done, left
