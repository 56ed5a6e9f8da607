"""Playing a distinguishing game many times, in chunks, in both worlds, reduced to counts as it goes.

A game object exposes ``chunk_trials`` (the most trials per chunk, fixed by its settings with
:func:`engine.limits.audit.chunk_trials` so that memory stays bounded), ``statistics`` (its attack statistics'
names) and ``scores(world, size, rng)``: each statistic's value in ``size`` independent runs of the mechanism on
input D (``world == "in"``) or D' (``"out"``), a dict of arrays; optionally ``pilot_scores`` (scores of a pilot
it already played), else a pilot with seeds of its own places each statistic's grid
(:func:`engine.audit.bands.pilot_grid`). Every (world, chunk) pair draws from its own generator seeded by (seed, world,
chunk): the two worlds are independent, which the confidence bound of :mod:`engine.audit.bands` relies on, and
the same seed gives the same counts on every executor. Each chunk comes back as counts on the grids, so
10^8 trials need no more memory than 10^4.

Chunks start small and double (:func:`chunk_schedule`): the bound after every chunk is the audit's curve
against the number of trials, from 10^4 up.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Callable

import numpy as np

from engine.audit.bands import PILOT_TRIALS, Tally, pilot_grid
from engine.blas import single_threaded_blas
from engine.cancel import checkpoint
from engine.executor import Executor, kept

WORLDS = ("in", "out")
FIRST_CHUNK = 10_000
CURVE_STEP = 1.2          # the bound's curve against the trials: a point each time the trials grow this much


class AuditCancelled(Exception):
    """The caller's ``cancel()`` returned True between two chunks."""


def chunk_schedule(total: int, largest: int, first: int = FIRST_CHUNK) -> list[tuple[int, int]]:
    """(chunk index, trials) covering ``total`` trials per world: ``first`` trials, then twice as many each
    chunk up to ``largest`` (a deterministic schedule: the same settings give the same chunks and seeds)."""
    out, done, size = [], 0, max(1, min(int(first), int(largest)))
    while done < total:
        step = min(size, total - done)
        out.append((len(out), step))
        done += step
        size = min(2 * size, int(largest))
    return out


def grids_of(game, trials_per_world: int, seed: int) -> dict:
    """Each statistic's grid, from the game's own pilot scores or a pilot played here (seeds (seed, 2 + world,
    0), which no chunk of the audit uses)."""
    pilot = getattr(game, "pilot_scores", None)
    if pilot is None:
        size = max(200, min(PILOT_TRIALS, int(trials_per_world)))
        played = []
        for index, world in enumerate(WORLDS):
            for chunk, part in chunk_schedule(size, game.chunk_trials, first=game.chunk_trials):
                checkpoint()
                played.append(game.scores(world, part, np.random.default_rng((int(seed), 2 + index, chunk))))
        pilot = ({name: np.concatenate([scores[name] for scores in played]) for name in game.statistics}, size)
    scores, size = pilot
    return {name: pilot_grid(scores[name], trials_per_world, size) for name in game.statistics}


def _counts(game, grids: dict, world: str, size: int, rng: np.random.Generator) -> dict:
    return {name: grids[name].counts(values) for name, values in game.scores(world, size, rng).items()}


def _chunk(build: Callable, key: str, world_index: int, index: int, size: int, seed: int, grids: dict,
           single_blas: bool) -> dict:
    """On a worker: one (world, chunk)'s counts, from the generator :func:`play_on` gives it."""
    game = kept(key, build)         # each worker builds the game once per audit
    with single_threaded_blas() if single_blas else contextlib.nullcontext():
        return _counts(game, grids, WORLDS[world_index], size, np.random.default_rng((int(seed), world_index, index)))


def play_on(executor: Executor, game, build: Callable, trials_per_world: int, seed: int,
            progress: Callable[[int, int], None] | None = None, cancel: Callable[[], bool] | None = None, *,
            single_blas: bool = False) -> tuple[Tally, list[Tally]]:
    """Play ``trials_per_world`` trials in each world; (the counts of all of them, the counts after each chunk).

    ``build`` (picklable, e.g. a ``functools.partial`` of a module-level function) makes ``game`` again on a
    worker; ``progress(done, total)`` hears the trials done (both worlds) as chunks finish, ``cancel()`` is asked
    before each chunk in this process and as each one finishes on workers (Stop, a closed tab and the deadline
    reach the executor's own checkpoints). The same seed gives the same counts whatever the backend.
    """
    grids = grids_of(game, trials_per_world, seed)
    schedule = chunk_schedule(trials_per_world, game.chunk_trials)
    per_chunk: dict[int, list] = {index: [] for index, _ in schedule}
    total, done = 2 * trials_per_world, 0
    if executor.processes(2) == 1 and executor.kind != "dask":
        with single_threaded_blas() if single_blas else contextlib.nullcontext():
            for index, size in schedule:
                checkpoint()
                if cancel is not None and cancel():
                    raise AuditCancelled("The audit was cancelled.")
                for world_index, world in enumerate(WORLDS):
                    rng = np.random.default_rng((int(seed), world_index, index))
                    per_chunk[index].append((world, _counts(game, grids, world, size, rng)))
                done += 2 * size
                if progress is not None:
                    progress(done, total)
    else:
        key = f"audit-{uuid.uuid4().hex}"
        tasks = [((world_index, index, size), (build, key, world_index, index, size, seed, grids, single_blas))
                 for index, size in schedule for world_index in range(len(WORLDS))]
        results = executor.results(_chunk, tasks, label="audit")
        with contextlib.closing(results):
            for (world_index, index, size), counts in results:
                per_chunk[index].append((WORLDS[world_index], counts))
                done += size
                if progress is not None:
                    progress(done, total)
                if cancel is not None and cancel():
                    raise AuditCancelled("The audit was cancelled.")
    tally, prefixes = Tally(grids), []
    for index, size in schedule:
        for world, counts in per_chunk[index]:
            for name, values in counts.items():
                tally.add(name, world, values)
        tally.trials += size
        # The curve's points: every chunk while they double, then every 20 % more trials, and the last.
        if not prefixes or tally.trials >= CURVE_STEP * prefixes[-1].trials or index == schedule[-1][0]:
            prefixes.append(Tally(grids, {name: [a.copy(), b.copy()] for name, (a, b) in tally.counts.items()},
                                  tally.trials))
    return tally, prefixes
