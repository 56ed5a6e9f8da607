"""Paper Table 1 over seeded runs: at epsilon = exp(1.1) the largest admissible r = 10 beats r = 3 and r = 20."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.pogpucb import PoConfig, run_pogpucb

pytestmark = pytest.mark.statistical

# A 200-run pilot (seed 0, synthetic task 0) gave mean S_50 of 0.045 (r = 3, sd 0.15, heavy tail: a few runs
# stuck on a local maximum), 0.007 (r = 10, sd 0.02) and 0.088 (r = 20, sd 0.06). Resampling the pilot, 60 runs
# per r put r = 10 at or above r = 3 in 0.1% of 20,000 draws and never above r = 20 (at 40 runs: 0.5%). So 60 runs
# keep this seeded test stable while the three settings cost 180 GP-UCB runs (~6 s on an idle core).
RUNS = 60


@pytest.fixture(scope="module")
def final_regrets():
    out = {}
    for r in (3, 10, 20):
        config = PoConfig(dataset="synthetic", epsilon=math.exp(1.1), delta=1e-5, r=r, iterations=50, runs=RUNS,
                          seed=0, baseline=False, distortion_pairs=0)
        out[r] = run_pogpucb(config).final_regrets
    return out


def test_largest_admissible_r_has_the_lowest_simple_regret_after_50_iterations(final_regrets):
    mean = {r: float(np.mean(v)) for r, v in final_regrets.items()}
    assert mean[10] < mean[3], mean
    assert mean[10] < mean[20], mean


def test_lifting_costs_more_than_the_standard_error(final_regrets):
    """r = 20 takes the lift branch (sigma_min < omega): its regret exceeds r = 10's by over 3 standard errors."""
    a, b = final_regrets[20], final_regrets[10]
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    assert a.mean() - b.mean() > 3 * se
