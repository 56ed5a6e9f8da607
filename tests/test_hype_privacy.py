"""DP-HYPE privacy: the vote vector's sensitivity, the noise calibration and its RDP-to-DP conversion."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.hype import calibrate_sigma, epsilon_for_sigma, sensitivity
from engine.hype.voting import top_k_mask
from engine.privacy.gaussian import gaussian_epsilon, gaussian_sigma
from engine.validation import ConfigError

# The paper (Sec. VI-C) lists these noise scales for k = 5, delta = 1e-5 (it calls them sigma^2,
# but they are standard deviations: 12.5^2 = 156 would be far off any accountant).
PAPER_TABLE = {0.1: 103.0, 0.25: 46.0, 0.5: 24.0, 1.0: 12.5, 3.0: 4.7}


def summed_votes(losses: np.ndarray, k: int) -> np.ndarray:
    return top_k_mask(losses, k).sum(axis=0)


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_worst_neighbouring_pair_moves_the_vote_vector_by_sqrt_2k(k):
    rng = np.random.default_rng(k)
    p, n = 40, 12
    losses = rng.random((n, p))
    # Client 0 prefers candidates 0..k-1; in the neighbouring data set it prefers k..2k-1 instead.
    losses[0] = 1.0
    losses[0, :k] = 0.0
    neighbour = losses.copy()
    neighbour[0] = 1.0
    neighbour[0, k:2 * k] = 0.0
    change = summed_votes(losses, k) - summed_votes(neighbour, k)
    assert np.linalg.norm(change) == pytest.approx(math.sqrt(2 * k))
    assert sensitivity(k) == pytest.approx(math.sqrt(2 * k))


@pytest.mark.parametrize("k", [1, 4, 30])
def test_no_replacement_of_one_client_moves_the_votes_further(k):
    rng = np.random.default_rng(100 + k)
    p, n = 40, 10
    losses = rng.random((n, p))
    base = summed_votes(losses, k)
    largest = 0.0
    for _ in range(500):
        neighbour = losses.copy()
        neighbour[rng.integers(n)] = rng.random(p)
        largest = max(largest, float(np.linalg.norm(summed_votes(neighbour, k) - base)))
    assert largest <= math.sqrt(2 * k) + 1e-12


@pytest.mark.parametrize("epsilon, paper", sorted(PAPER_TABLE.items()))
def test_calibrated_sigma_reproduces_the_papers_noise_scales(epsilon, paper):
    sigma = calibrate_sigma(epsilon, 1e-5, 5)
    assert sigma == pytest.approx(paper, rel=0.05)
    # The reverse direction returns the budget.
    assert epsilon_for_sigma(sigma, 1e-5, 5) == pytest.approx(epsilon, rel=1e-4)


def theorem_ii1_epsilon(sigma: float, delta: float, k: int) -> float:
    """Theorem II.1 applied to Theorem IV.1's RDP alpha k / sigma^2, minimised over a dense alpha grid."""
    alpha = np.concatenate([np.linspace(1.001, 10, 20_000), np.linspace(10, 5_000, 200_000)])
    eps = alpha * k / sigma ** 2 + np.log((alpha - 1) / alpha) - (np.log(delta) + np.log(alpha)) / (alpha - 1)
    return float(eps.min())


@pytest.mark.parametrize("sigma", [4.7, 12.5, 46.0, 103.0])
def test_accountant_uses_theorem_ii1s_conversion_not_the_classic_one(sigma):
    ours = epsilon_for_sigma(sigma, 1e-5, 5)
    # dp_accounting evaluates a fixed set of orders, so it can only be slightly above the continuous minimum.
    assert theorem_ii1_epsilon(sigma, 1e-5, 5) <= ours + 1e-9
    assert ours == pytest.approx(theorem_ii1_epsilon(sigma, 1e-5, 5), rel=0.02)
    alpha = np.linspace(1.001, 5_000, 500_000)
    classic = float((alpha * 5 / sigma ** 2 + np.log(1e5) / (alpha - 1)).min())
    assert classic > 1.1 * ours


def test_sigma_scales_with_the_sensitivity_and_shrinks_with_epsilon():
    assert calibrate_sigma(1.0, 1e-5, 20) == pytest.approx(2 * calibrate_sigma(1.0, 1e-5, 5), rel=1e-6)
    sigmas = [calibrate_sigma(e, 1e-5, 5) for e in (0.1, 0.5, 1.0, 3.0, 10.0)]
    assert all(a > b for a, b in zip(sigmas, sigmas[1:]))
    assert gaussian_sigma(1.0, 1e-5, 1.0) == pytest.approx(calibrate_sigma(1.0, 1e-5, 5) / math.sqrt(10), rel=1e-6)


def test_no_noise_means_no_privacy_and_bad_values_are_refused():
    assert math.isinf(gaussian_epsilon(0.0, 1e-5, 1.0))
    with pytest.raises(ConfigError, match="epsilon must be > 0"):
        calibrate_sigma(0.0, 1e-5, 5)
    with pytest.raises(ConfigError, match=r"delta must be in \(0, 1\)"):
        calibrate_sigma(1.0, 1.0, 5)
