"""Playing a distinguishing game many times, in chunks, in both worlds.

A game object exposes ``chunk_trials`` (trials per chunk, fixed by its
settings with :func:`engine.limits.audit.chunk_trials` so that memory stays
bounded and results do not depend on how often anyone asks for progress) and ``scores(world, size, rng)``: the attack
statistic of ``size`` independent runs of the mechanism on input D
(``world == "in"``) or D' (``"out"``). Every (world, chunk) pair draws from its
own generator seeded by (seed, world, chunk): the two worlds are independent,
which the confidence bound of :mod:`engine.audit.stats` relies on, and the same
seed gives the same scores.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Callable

import numpy as np

from engine.blas import single_threaded_blas
from engine.cancel import checkpoint
from engine.executor import Executor, kept
from engine.hype.simulation import blocks

WORLDS = ("in", "out")


class AuditCancelled(Exception):
    """The caller's ``cancel()`` returned True between two chunks."""


def play(game, trials_per_world: int, seed: int, progress: Callable[[int, int], None] | None = None,
         cancel: Callable[[], bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scores of ``trials_per_world`` runs in each world: ``(scores_in, scores_out)``.

    ``progress(done, total)`` is called after every chunk with the trials run
    so far over both worlds; ``cancel()`` is asked before every chunk and
    raises :class:`AuditCancelled` when it returns True.
    """
    scores = {world: np.empty(trials_per_world) for world in WORLDS}
    done = 0
    for index, size in blocks(trials_per_world, game.chunk_trials):
        checkpoint()
        if cancel is not None and cancel():
            raise AuditCancelled("The audit was cancelled.")
        for world_index, world in enumerate(WORLDS):
            rng = np.random.default_rng((int(seed), world_index, index))
            scores[world][done:done + size] = game.scores(world, size, rng)
        done += size
        if progress is not None:
            progress(2 * done, 2 * trials_per_world)
    return scores["in"], scores["out"]


def _chunk(build: Callable, key: str, world_index: int, index: int, size: int, seed: int,
           single_blas: bool) -> np.ndarray:
    """On a worker: the scores of one (world, chunk), from the generator :func:`play` gives it."""
    game = kept(key, build)         # each worker builds the game once per audit
    with single_threaded_blas() if single_blas else contextlib.nullcontext():
        return game.scores(WORLDS[world_index], size, np.random.default_rng((int(seed), world_index, index)))


def play_on(executor: Executor, game, build: Callable, trials_per_world: int, seed: int,
            progress: Callable[[int, int], None] | None = None, cancel: Callable[[], bool] | None = None, *,
            single_blas: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`play` with the chunks on ``executor``'s workers: the same scores, whatever the backend.

    ``build`` (picklable, e.g. a ``functools.partial`` of a module-level function) makes ``game`` again on a
    worker; ``progress`` hears the trials done as chunks finish, ``cancel()`` is asked as each one finishes
    (Stop, a closed tab and the deadline reach the executor's own checkpoints).
    """
    if executor.processes(2) == 1 and executor.kind != "dask":
        with single_threaded_blas() if single_blas else contextlib.nullcontext():
            return play(game, trials_per_world, seed, progress, cancel)
    scores = {world: np.empty(trials_per_world) for world in WORLDS}
    key = f"audit-{uuid.uuid4().hex}"
    tasks, start = [], 0
    for index, size in blocks(trials_per_world, game.chunk_trials):
        for world_index in range(len(WORLDS)):
            tasks.append(((world_index, start, size), (build, key, world_index, index, size, seed, single_blas)))
        start += size
    done = 0
    results = executor.results(_chunk, tasks, label="audit")
    with contextlib.closing(results):
        for (world_index, begin, size), chunk in results:
            scores[WORLDS[world_index]][begin:begin + size] = chunk
            done += size
            if progress is not None:
                progress(done, 2 * trials_per_world)
            if cancel is not None and cancel():
                raise AuditCancelled("The audit was cancelled.")
    return scores["in"], scores["out"]
