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

from typing import Callable

import numpy as np

from engine.cancel import checkpoint
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
