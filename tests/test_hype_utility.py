"""DP-HYPE utility: Theorem V.1's bound against exact and empirical success, and the paper's trends."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from engine.hype import HypeConfig, run_hype, success_bound, vote_gap
from engine.hype.sweeps import evaluate_grid, good_count_grid
from engine.hype.voting import noisy_argmax
from engine.hype.utility import wilson_interval


def exact_success(votes: np.ndarray, good: np.ndarray, sigma: float) -> float:
    """P[argmax(votes + N(0, sigma^2 I)) is good] by numerical integration over the winner's value."""
    x = np.linspace(votes.min() - 12 * sigma, votes.max() + 12 * sigma, 40_001)
    log_cdf = stats.norm.logcdf((x[:, None] - votes[None, :]) / sigma)
    total = log_cdf.sum(axis=1)
    prob = 0.0
    for g in np.flatnonzero(good):
        density = stats.norm.pdf((x - votes[g]) / sigma) / sigma
        prob += np.trapezoid(density * np.exp(total - log_cdf[:, g]), x)
    return float(prob)


def test_bound_matches_theorem_v1_by_hand():
    votes = np.array([50.0, 44.0, 30.0, 10.0, 0.0])
    good = np.array([True, True, False, False, False])
    gamma = 44.0 - 30.0
    assert vote_gap(votes, good) == gamma
    by_hand = 1 - 3 * 8.0 / (gamma * math.sqrt(math.pi)) * math.exp(-gamma ** 2 / (4 * 8.0 ** 2))
    assert success_bound(votes, good, 8.0) == pytest.approx(by_hand)
    # A bad candidate with as many votes as a good one leaves the bound vacuous; no noise and a gap: certainty.
    assert success_bound(np.array([5.0, 9.0, 5.0]), np.array([True, True, False]), 1.0) == 0.0
    assert success_bound(votes, good, 0.0) == 1.0


@pytest.mark.statistical
@pytest.mark.parametrize("sigma", [6.0, 8.0, 16.0, 30.0, 50.0])
def test_empirical_success_matches_the_exact_probability_and_the_bound_stays_below(sigma):
    good = np.zeros(60, dtype=bool)
    good[[3, 17, 40]] = True
    votes = np.where(good, 0, np.random.default_rng(0).integers(0, 25, 60)).astype(float)
    votes[[3, 17, 40]] = [70, 62, 55]
    exact = exact_success(votes, good, sigma)  # 0.9999+ at sigma 6 down to about 0.3 at sigma 50
    assert success_bound(votes, good, sigma) <= exact + 1e-9
    rng = np.random.default_rng(int(sigma))
    reps = 20_000
    noisy = votes + sigma * rng.standard_normal((reps, votes.size))
    wins = good[noisy_argmax(noisy)].sum()
    # A 99.99 % Wilson interval: a correct mechanism falls outside it once in 10,000 runs.
    low, high = wilson_interval(int(wins), reps, z=3.89)
    assert low - 1e-6 <= exact <= high + 1e-6  # 1e-6: error of the numerical integral


@pytest.mark.statistical
def test_empirical_success_is_never_below_the_bound_beyond_sampling_error():
    reps = 1000
    grid = evaluate_grid(HypeConfig(repetitions=reps, seed=11), ks=[1, 3, 5, 10],
                         epsilons=[0.1, 0.25, 0.5, 1.0, 3.0], sigma_losses=[0.2, 0.3, 0.4, 0.6])
    # Success in a repetition is Bernoulli with probability >= that repetition's bound, so the
    # count is at least the summed bounds minus binomial noise (sd <= sqrt(reps / 4)); 4 sd per cell.
    slack = 4 * math.sqrt(0.25 / reps)
    assert np.all(grid.success_rate >= grid.bound - slack)
    assert (grid.bound > 0.2).sum() >= 20  # the check bites: many cells have an informative bound


@pytest.mark.statistical
def test_large_epsilon_returns_the_clean_argmax():
    for seed in range(6):
        for mode_fields in (dict(sigma_loss=1.0, k=1), dict(sigma_loss=2.0, k=3)):
            result = run_hype(HypeConfig(clients=60, candidates=30, good=3, epsilon=2_000.0, repetitions=1,
                                         seed=seed, **mode_fields))
            best = np.flatnonzero(result.clean_votes == result.clean_votes.max())
            assert result.winner in best
            assert result.noise_std < 0.05  # a one-vote gap is > 14 sd of the difference of two noises
    result = run_hype(HypeConfig(clients=60, candidates=30, good=3, sigma_loss=2.0, sigma=0.0, repetitions=1))
    assert result.clean_votes[result.winner] == result.clean_votes.max()
    assert math.isinf(result.epsilon)


@pytest.mark.statistical
def test_larger_epsilon_never_lowers_the_success_rate_beyond_noise():
    epsilons = [0.05, 0.1, 0.25, 0.5, 1.0, 3.0]
    reps = 1500
    grid = evaluate_grid(HypeConfig(repetitions=reps, seed=5), ks=[1, 5, 10], epsilons=epsilons,
                         sigma_losses=[0.3, 0.6])
    rates = grid.success_rate
    # Common random numbers (same losses and normal draws at every epsilon) make the curves
    # nearly monotone; allow one binomial sd at p = 1/2 for the rare non-monotone repetition.
    assert np.all(np.diff(rates, axis=-1) >= -math.sqrt(0.25 / reps))
    assert np.all(rates[..., -1] - rates[..., 0] > 0.2)


@pytest.mark.statistical
def test_voting_for_everything_is_a_random_guess():
    reps = 2000
    result = run_hype(HypeConfig(clients=100, k=100, good=5, epsilon=1.0, repetitions=reps, seed=2))
    assert result.bound == 0.0
    low, high = wilson_interval(result.successes, reps, z=3.89)
    assert low <= 5 / 100 <= high


@pytest.mark.statistical
def test_larger_k_helps_when_clients_disagree_as_in_fig_2a():
    grid = evaluate_grid(HypeConfig(repetitions=1500, seed=9), ks=[1, 5, 100], epsilons=[0.25],
                         sigma_losses=[0.1, 1.0])
    low_overlap, high_overlap = grid.success_rate[0, :, 0], grid.success_rate[1, :, 0]
    assert high_overlap[1] > high_overlap[0] + 0.05      # k = 5 beats k = 1 when losses overlap (SE ~ 0.013)
    assert low_overlap[1] >= high_overlap[1]              # overlap makes it harder
    assert high_overlap[2] < 0.1 and low_overlap[2] < 0.1  # k = p: noise alone decides


def test_more_dropouts_than_tolerated_raise_the_actual_epsilon():
    within = run_hype(HypeConfig(epsilon=1.0, xi=0.2, dropout=0.2, repetitions=50, clients=100))
    beyond = run_hype(HypeConfig(epsilon=1.0, xi=0.2, dropout=0.4, repetitions=50, clients=100))
    assert within.noise_std >= within.sigma - 1e-9
    assert within.effective_epsilon <= 1.0 + 1e-9
    assert beyond.noise_std < beyond.sigma
    assert beyond.effective_epsilon > 1.05


def test_good_count_grid_has_one_row_per_feasible_count():
    out = good_count_grid(HypeConfig(clients=50, candidates=20, repetitions=200, seed=1), goods=(1, 4, 16, 64),
                          ks=(1, 20), epsilons=(1.0,))
    assert out["goods"] == [1, 4, 16]  # 64 good candidates do not fit among 20
    rates = np.asarray(out["success_rate"])
    assert rates.shape == (3, 2, 1)
    # k = p: every candidate ties on clean votes, so the winner is good with probability |H_good| / p
    # (sd at most 0.035 over 200 repetitions; 0.15 is over 4 sd).
    np.testing.assert_allclose(rates[:, 1, 0], [1 / 20, 4 / 20, 16 / 20], atol=0.15)
