"""Distributed exploration: P equal-volume hyper-rectangles of [0, 1]^D.

The sub-regions split the first dimensions as evenly as possible (the prime
factors of P go, largest first, to the dimension with the fewest cuts so far):
P intervals in 1-D, and P = 4 in 2-D or 3-D is the 2 x 2 grid of App. B.2.1,
numbered row-major with the first dimension slowest ({[0,.5),[0,.5)} is 0,
{[0,.5),[.5,1]} is 1, ...). Agent n explores sub-region n mod P
(round-robin, about N / P agents each, paper footnote 6).
"""

from __future__ import annotations

import numpy as np

from engine.validation import check_int


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    return sorted(factors, reverse=True)


def split_counts(P: int, dim: int) -> tuple[int, ...]:
    """Number of equal cuts of each dimension, their product is P."""
    P = check_int("P", P, 1, name="number of sub-regions P")
    dim = check_int("dim", dim, 1, name="input dimension")
    counts = [1] * dim
    for factor in _prime_factors(P):
        counts[int(np.argmin(counts))] *= factor
    return tuple(counts)


class Subregions:
    """P equal-volume boxes partitioning [0, 1]^D."""

    def __init__(self, P: int, dim: int):
        self.P = check_int("P", P, 1, name="number of sub-regions P")
        self.dim = check_int("dim", dim, 1, name="input dimension")
        self.counts = np.array(split_counts(P, dim))

    def index(self, points: np.ndarray) -> np.ndarray:
        """Sub-region of each point, ``points`` (..., D) -> ints (...). The upper
        edge 1 belongs to the last box ([0, .5) and [.5, 1] as in App. B.1.1)."""
        points = np.asarray(points, dtype=float)
        cells = np.clip(np.floor(points * self.counts).astype(int), 0, self.counts - 1)
        return np.ravel_multi_index(np.moveaxis(cells, -1, 0), tuple(self.counts))

    def bounds(self, regions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of the given sub-regions, each (..., D)."""
        cells = np.stack(np.unravel_index(np.asarray(regions), tuple(self.counts)), axis=-1)
        return cells / self.counts, (cells + 1) / self.counts

    def assign(self, n_agents: int) -> np.ndarray:
        """Round-robin assignment: agent n explores sub-region n mod P."""
        return np.arange(check_int("agents", n_agents, 1, name="number of agents")) % self.P

    def sample_points(self, regions: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` points uniform in each given sub-region: regions (...,) -> (..., n, D)."""
        lo, hi = self.bounds(regions)
        u = rng.random((*np.shape(regions), n, self.dim))
        return lo[..., None, :] + u * (hi - lo)[..., None, :]

    def sample_candidates(self, candidate_regions: np.ndarray, regions: np.ndarray, n: int,
                          rng: np.random.Generator) -> np.ndarray:
        """``n`` distinct candidate indices lying in each given sub-region.

        ``candidate_regions`` (C,) is the sub-region of each candidate;
        ``regions`` (...,) the sub-region per draw. Returns ints (..., n). When a
        sub-region holds fewer than ``n`` candidates, its draws repeat; when it
        holds none, they come from the whole candidate set.
        """
        regions = np.asarray(regions)
        out = np.empty((*regions.shape, n), dtype=int)
        all_candidates = np.arange(len(candidate_regions))
        for i in np.unique(regions):  # loop over sub-regions (P is small), never agents
            pool = all_candidates[candidate_regions == i]
            if pool.size == 0:
                pool = all_candidates
            mask = regions == i
            out[mask] = pool[_distinct_indices(rng, int(mask.sum()), pool.size, n)]
        return out


def _distinct_indices(rng: np.random.Generator, rows: int, size: int, n: int) -> np.ndarray:
    """``rows`` draws of ``n`` indices in [0, size), distinct within a row when size >= n."""
    if size < n:
        return rng.integers(0, size, (rows, n))
    if size > 8 * n:
        # Rejection is cheap when collisions are rare: redraw rows holding a repeat.
        draws = rng.integers(0, size, (rows, n))
        while True:
            ordered = np.sort(draws, axis=1)
            bad = np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
            if not bad.any():
                return draws
            draws[bad] = rng.integers(0, size, (int(bad.sum()), n))
    return np.argpartition(rng.random((rows, size)), n - 1, axis=1)[:, :n]
