"""What the curator will release, before any BO run: the numbers behind the page's release panels.

For the controls' own setting and every compared one: Algorithm 1's branch
(sigma_min against omega, the distortion bound C'), omega as a function of r
for each compared epsilon, and the distance ratios ``|z - z'|^2 / |x - x'|^2``
of run 0's release on a fixed sample of pairs (Lemma 1 and Theorem 2 in one
histogram).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.pogpucb.config import PoConfig
from engine.pogpucb.curator import Release, max_admissible_r, omega
from engine.pogpucb.distortion import pair_ratios, sample_pairs
from engine.pogpucb.runner import CuratorSummary, first_release, summarise
from engine.pogpucb.tasks import PoTask

DISTORTION_PAIRS = 2000
MAX_R_GRID = 500


@dataclass(frozen=True)
class ReleasePreview:
    """Algorithm 1 before any run, for ``base`` (the controls) and every compared setting."""

    summary: CuratorSummary            # at the base setting
    summaries: list[CuratorSummary]    # one per compared setting
    best_compared_r: int | None        # the largest admissible r among the compared ones (r compared)
    r_grid: np.ndarray                 # r = 1..R for the omega curves
    omegas: dict                       # epsilon -> omega(r_grid)
    ratios: list[np.ndarray]           # distance ratios of run 0's release, one array per compared setting
    releases: list[Release]            # run 0's release of every compared setting


def release_preview(task: PoTask, base: PoConfig, variants: list[PoConfig]) -> ReleasePreview:
    """The :class:`ReleasePreview` of ``variants`` (compared settings of ``base``) on ``task``."""
    summary = summarise(task.X, base.epsilon, base.delta, base.r)
    summaries = [summarise(task.X, cfg.epsilon, cfg.delta, cfg.r) for cfg in variants]
    rs = sorted({cfg.r for cfg in variants})
    best = max_admissible_r(summary.sigma_min, base.epsilon, base.delta, rs) if len(rs) > 1 else None
    r_top = max(50, 2 * max(rs), 2 * summary.max_admissible_r)
    r_grid = np.arange(1, min(r_top, MAX_R_GRID) + 1)
    omegas = {eps: omega(r_grid, eps, base.delta) for eps in sorted({cfg.epsilon for cfg in variants})}
    pair_i, pair_j = sample_pairs(task.n, DISTORTION_PAIRS, np.random.default_rng(1))
    releases = [first_release(cfg)[1] for cfg in variants]
    ratios = [pair_ratios(rel.X_centred, rel.Z, pair_i, pair_j) for rel in releases]
    return ReleasePreview(summary=summary, summaries=summaries, best_compared_r=best, r_grid=r_grid,
                          omegas=omegas, ratios=ratios, releases=releases)
