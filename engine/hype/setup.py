"""What every vote of an experiment shares, and the clean votes of a block of repetitions.

Simulation mode draws fresh local losses for every repetition; data mode
reads the clients' fixed rankings from cached score tables (one per run) and
only the noise (and the dropouts) change from repetition to repetition.
Repetition ``r`` of a data-mode experiment uses run ``r mod runs``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.hype.config import HypeConfig
from engine.hype.scores import score_table
from engine.hype.simulation import clean_votes, draw_standard, good_positions, survivors_mask, top_ids
from engine.hype.training import candidate_labels
from engine.hype.voting import rank_by_score


@dataclass(frozen=True)
class RunTable:
    """One data-mode run: the clients' rankings and the candidates' test accuracies."""

    ranks: np.ndarray          # (n, P), 0 = the client's best candidate
    test_accuracy: np.ndarray  # (P,), federated averaging, held-out test split
    good: np.ndarray           # (P,) bool: within good_within of the best

    def client_votes(self, k: int) -> np.ndarray:
        """(n, P) 0/1: every client's top-k."""
        return (self.ranks < k).astype(np.int64)


@dataclass(frozen=True)
class Setup:
    config: HypeConfig
    good: np.ndarray                 # (P,) bool (simulation; data mode: run 0's)
    tables: tuple[RunTable, ...]     # data mode only
    labels: tuple[str, ...] | None   # data mode: the Table III candidates

    @property
    def p(self) -> int:
        return self.config.p

    def good_of(self, runs: np.ndarray | None) -> np.ndarray:
        """Good masks per repetition (reps, P) for the given run indices (None: simulation)."""
        if runs is None:
            return self.good[None, :]
        return np.stack([table.good for table in self.tables])[runs]


def make_setup(config: HypeConfig, load_table=None) -> Setup:
    """Resolve good candidates and, in data mode, load or compute the score tables.

    ``load_table(dataset, clients, alpha, seed)`` replaces
    :func:`engine.hype.scores.score_table` (the page passes a memory-cached one).
    Run ``r`` uses the table of seed ``config.seed + r``.
    """
    if config.mode == "simulation":
        return Setup(config, good_positions(config.candidates, config.good, config.seed), (), None)
    load_table = score_table if load_table is None else load_table
    tables = []
    for run in range(config.runs):
        table = load_table(config.dataset, config.clients, config.alpha, config.seed + run)
        accuracy = np.asarray(table["test_accuracy"], dtype=float)
        tables.append(RunTable(rank_by_score(table["local_accuracy"], table["local_loss"]), accuracy,
                               accuracy >= accuracy.max() - config.good_within - 1e-12))
    return Setup(config, tables[0].good, tuple(tables), tuple(candidate_labels()))


def run_indices(config: HypeConfig, start: int, size: int) -> np.ndarray | None:
    """Run index of repetitions start..start+size-1 (None in simulation mode)."""
    if config.mode == "simulation":
        return None
    return (start + np.arange(size)) % config.runs


def block_votes(setup: Setup, rng: np.random.Generator, start: int, size: int, ks,
                per_client: bool = False, sigma_losses=None):
    """Clean votes of a block of repetitions, for several k (and sigma_loss) at once.

    Draws (in this order, so every caller shares the stream) the clients'
    standard normals (simulation) and the dropouts. Returns ``(votes (S, K,
    size, P), survivors (size, n) bool or None, runs (size,) or None,
    client_votes)``: S indexes ``sigma_losses`` (simulation; default: the
    config's one; data mode: S = 1), ``client_votes`` is the (size, n, P) 0/1
    array of every client's vote for the first k and sigma_loss when
    ``per_client`` (for the secure-summation path), else None.
    """
    config = setup.config
    n, p = config.clients, setup.p
    ks = [int(k) for k in ks]
    runs = run_indices(config, start, size)
    client = None
    if config.mode == "simulation":
        sigma_losses = [config.sigma_loss] if sigma_losses is None else list(sigma_losses)
        z = draw_standard(rng, size, n, p)
        survivors = survivors_mask(rng, size, n, config.dropped)
        partial = sorted({k for k in ks if k < p})
        kmax = max(ks) if per_client else (partial[-1] if partial else 1)
        votes = np.empty((len(sigma_losses), len(ks), size, p), dtype=np.int64)
        for index, sigma_loss in enumerate(sigma_losses):
            if partial or per_client:
                ids = top_ids(z, setup.good, sigma_loss, kmax, ordered=len(partial) > 1)
            else:  # every k is p: all clients vote for everything
                ids = np.empty((size, n, 0), dtype=np.intp)
            votes[index] = clean_votes(ids, ks, p, survivors)
            if per_client and index == 0:
                client = np.zeros((size, n, p), dtype=np.int64)
                np.put_along_axis(client, ids[..., :ks[0]], 1, axis=-1)
        return votes, survivors, runs, client
    survivors = survivors_mask(rng, size, n, config.dropped)
    votes = np.empty((1, len(ks), size, p), dtype=np.int64)
    weights = np.ones((size, n), dtype=np.int64) if survivors is None else survivors.astype(np.int64)
    for run, table in enumerate(setup.tables):
        rows = runs == run
        if not rows.any():
            continue
        for index, k in enumerate(ks):
            votes[0, index, rows] = weights[rows] @ table.client_votes(k)
    if per_client:
        client = np.stack([setup.tables[run].client_votes(ks[0]) for run in runs])
    return votes, survivors, runs, client
