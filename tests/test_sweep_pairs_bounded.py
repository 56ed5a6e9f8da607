"""Pairwise comparison of settings: all pairs for small tables, neighbours only beyond a documented bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.cancel import Cancelled, CancelToken, cancellable
from engine.sweep.analysis import (ALL_PAIRS_MAX_SETTINGS, neighbour_pairs, pair_count, pair_differences,
                                   pair_seconds)


def _table(settings: int, runs: int = 4, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    q = np.arange(settings) / settings
    order = rng.permutation(settings)          # sweep order differs from the order along q
    labels = [f"q={v:.4f}" for v in q[order]]
    return pd.DataFrame({"setting": np.repeat(labels, runs), "q": np.repeat(q[order], runs), "seed": 0,
                         "run": np.tile(np.arange(runs), settings),
                         "utility": np.repeat(q[order], runs) + 0.2 * rng.standard_normal(settings * runs),
                         "privacy_loss": np.repeat(1.0 / (0.1 + q[order]), runs), "error": None,
                         "role": "setting", "replicate": 0, "cell": np.repeat(np.arange(settings), runs)})


def test_a_small_table_compares_every_pair():
    pairs = pair_differences(_table(8))
    assert len(pairs) == 28 == pair_count(8)


def test_past_the_bound_only_neighbours_along_the_line_are_compared_with_the_same_numbers():
    table = _table(12)
    full = pair_differences(table)
    bounded = pair_differences(table, max_settings=5)
    assert len(full) == 66 and len(bounded) == 11 <= pair_count(12, max_settings=5)
    # The neighbours are those of the frontier figure's line along q.
    along = sorted(table["setting"].unique(), key=lambda s: float(s.split("=")[1]))
    assert {frozenset(p) for p in zip(along, along[1:])} == {frozenset((r.a, r.b)) for r in bounded.itertuples()}
    assert {frozenset(p) for p in neighbour_pairs(table)} == {frozenset((r.a, r.b)) for r in bounded.itertuples()}
    by_pair = {frozenset((r.a, r.b)): r for r in full.itertuples()}
    for row in bounded.itertuples():
        ref = by_pair[frozenset((row.a, row.b))]
        sign = 1.0 if (ref.a, ref.b) == (row.a, row.b) else -1.0
        assert row.difference == pytest.approx(sign * ref.difference)
        assert (row.se, row.paired, row.tied) == pytest.approx((ref.se, ref.paired, ref.tied))


def test_the_work_grows_linearly_past_the_bound():
    assert pair_count(ALL_PAIRS_MAX_SETTINGS) == ALL_PAIRS_MAX_SETTINGS * (ALL_PAIRS_MAX_SETTINGS - 1) // 2
    assert pair_count(2000) <= 4000                 # instead of 1,999,000
    assert pair_seconds(2000) < 20 < pair_seconds(2000, max_settings=2000)


def test_the_comparison_stops_at_a_cancel():
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled), cancellable(token):
        pair_differences(_table(6))
