"""The DP-FTS-DE paper's qualitative claims on its synthetic setting (Sec. 5.1, Fig. 2a, 2c, 2d).

Setting of the paper: N = 200 agents, 1000-point grid, M = 50, 1 - p_t = 1/sqrt(t),
N_init = 10, T = 40, S = 11, 5 runs; each agent's own GP keeps the generating
hyperparameters. A run's score is its mean simple regret over iterations 1..T
(averaged over its agents). We use three objective draws (GP functions) x 5 runs = 15
runs per setting; all settings share the seeds, so comparisons are paired run by run,
and a claim is asserted when the paired difference exceeds 2 standard errors over runs.

Measured over 4 draws x 5 runs (20 paired runs), difference (claimed loser - winner)
and its standard error: modified FTS vs TS 0.0168 (0.0035), FTS-DE vs TS 0.0192
(0.0033), q = 0.5 vs 0.15 0.0153 (0.0032), q = 0.5 vs 0.25 0.0115 (0.0030): these hold.
q = 0.25 vs 0.15: 0.0038 (0.0024), z = 1 vs 1.5: 0.0013 (0.0020): right direction, not
significant (on the 15 runs used here: 0.0033 (0.0029) and 0.0013 (0.0021)); they are kept
as expected failures so that the day they do hold, the suite says so.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from engine.fbo import FboConfig, run_fbo
from engine.fbo.presets import SYNTHETIC
from engine.fbo.records import standard_error

pytestmark = pytest.mark.statistical

OBJECTIVE_SEEDS = (0, 1, 2)
RUNS = 5
Z = 2.0   # paired difference must exceed 2 standard errors over runs (about 2.3 % one-sided per claim)


@lru_cache(maxsize=None)
def _scores(**settings) -> np.ndarray:
    """Per-run mean simple regret over iterations 1..T, for 3 objective draws x 5 runs (cached per setting)."""
    scores = []
    for seed in OBJECTIVE_SEEDS:
        config = FboConfig(**{**SYNTHETIC, **settings, "runs": RUNS, "seed": seed, "objective_seed": seed})
        result = run_fbo(config)
        assert result.run_curves.shape == (RUNS, config.iterations + 1)
        scores.append(result.run_curves[:, 1:].mean(axis=1))
    return np.concatenate(scores)


def _beats(winner: dict, loser: dict) -> tuple[float, float]:
    diff = _scores(**loser) - _scores(**winner)
    return float(diff.mean()), standard_error(diff)


def test_modified_fts_and_fts_de_beat_ts():
    # Fig. 2a: central averaging without DE (P = 1) and with DE (P = 2) both converge faster than TS.
    ts = dict(algorithm="ts")
    for method in (dict(algorithm="fts-de", P=1), dict(algorithm="fts-de", P=2)):
        diff, se = _beats(method, ts)
        assert diff > Z * se, (method, diff, se)


def test_dp_fts_de_regret_falls_as_q_rises():
    # Fig. 2c: more agents per round (larger q) lowers the noise std z phi_max S / q.
    q = {v: dict(algorithm="dp-fts-de", P=2, q=v, z=1.0) for v in (0.15, 0.25, 0.5)}
    for winner, loser in ((0.5, 0.25), (0.5, 0.15)):
        diff, se = _beats(q[winner], q[loser])
        assert diff > Z * se, (winner, loser, diff, se)


@pytest.mark.xfail(strict=True, reason="q = 0.25 beats q = 0.15 only within 2 standard errors over runs "
                                       "(0.0033 +- 0.0029 on these 15 runs)")
def test_dp_fts_de_q_025_beats_q_015():
    diff, se = _beats(dict(algorithm="dp-fts-de", P=2, q=0.25, z=1.0), dict(algorithm="dp-fts-de", P=2, q=0.15, z=1.0))
    assert diff > Z * se


@pytest.mark.xfail(strict=True, reason="Fig. 2d's z ordering is not significant with the agents' own GPs "
                                       "(z = 1 vs 1.5: 0.0013 +- 0.0021 on these 15 runs)")
def test_dp_fts_de_regret_rises_as_z_rises():
    # Fig. 2d: more noise (larger z) means worse utility.
    diff, se = _beats(dict(algorithm="dp-fts-de", P=2, q=0.25, z=1.0), dict(algorithm="dp-fts-de", P=2, q=0.25, z=1.5))
    assert diff > Z * se
