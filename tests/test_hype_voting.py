"""DP-HYPE's vote: top-k votes, the noise on the secure sum (with dropouts), the noisy argmax."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from engine.hype.calibration import effective_noise
from engine.hype.simulation import clean_votes, good_positions, survivors_mask, top_ids
from engine.hype.voting import (
    SecureSum,
    noisy_argmax,
    per_client_std,
    rank_by_score,
    secure_sum_votes,
    summed_noise,
    top_k_mask,
)

N_CLIENTS, P, SIGMA = 40, 25, 3.0
REPS = 1200  # x P = 30,000 noise samples per case: the sample variance has relative sd sqrt(2/30000) = 0.8 %


def secure_noise(clients: int, xi: float, dropped: int, seed: int) -> np.ndarray:
    """Noise on the secure sum (noisy sum minus clean sum) of ``clients`` clients, ``dropped`` absent."""
    rng = np.random.default_rng(seed)
    votes = (rng.random((REPS, clients, P)) < 0.2).astype(np.int64)
    survivors = survivors_mask(rng, REPS, clients, dropped)
    survivors = np.ones((REPS, clients), dtype=bool) if survivors is None else survivors
    noisy = secure_sum_votes(votes, survivors, per_client_std(SIGMA, clients, xi), rng)
    return noisy - (votes * survivors[:, :, None]).sum(axis=1)


def variance_bounds(samples: np.ndarray, confidence: float = 1e-4) -> tuple[float, float]:
    """Two-sided chi-square interval for the variance of zero-mean normal samples (miss rate 1e-4)."""
    dof = samples.size
    total = float((samples ** 2).sum())
    return total / stats.chi2.ppf(1 - confidence / 2, dof), total / stats.chi2.ppf(confidence / 2, dof)


def test_summed_noise_has_variance_sigma_squared_when_every_client_reports():
    low, high = variance_bounds(secure_noise(N_CLIENTS, 0.0, 0, seed=1))
    assert low <= SIGMA ** 2 <= high


@pytest.mark.parametrize("dropped", [4, 10, 20])
def test_summed_noise_shrinks_as_clients_drop_out(dropped):
    expected = SIGMA ** 2 * (N_CLIENTS - dropped) / N_CLIENTS
    low, high = variance_bounds(secure_noise(N_CLIENTS, 0.0, dropped, seed=2 + dropped))
    assert low <= expected <= high
    assert high < SIGMA ** 2  # measurably below the calibrated variance
    assert effective_noise(SIGMA, N_CLIENTS, 0.0, dropped) ** 2 == pytest.approx(expected)


@pytest.mark.parametrize("xi", [0.1, 0.25, 0.5])
def test_dropout_tolerance_keeps_at_least_sigma_squared_for_up_to_xi_n_dropouts(xi):
    for dropped in (0, int(xi * N_CLIENTS) // 2, int(xi * N_CLIENTS)):
        expected = SIGMA ** 2 * (N_CLIENTS - dropped) / ((1 - xi) * N_CLIENTS)
        low, high = variance_bounds(secure_noise(N_CLIENTS, xi, dropped, seed=int(100 * xi) + dropped))
        assert low <= expected <= high
        assert expected >= SIGMA ** 2 - 1e-9
    # One dropout more than planned and the noise falls below the calibrated level.
    beyond = int(xi * N_CLIENTS) + 1
    assert effective_noise(SIGMA, N_CLIENTS, xi, beyond) < SIGMA


def test_secure_summation_and_the_direct_draw_agree_in_distribution():
    rng = np.random.default_rng(7)
    via_clients = secure_noise(N_CLIENTS, 0.2, 5, seed=8).ravel()
    std = effective_noise(SIGMA, N_CLIENTS, 0.2, 5)
    direct = summed_noise((REPS, P), std, rng).ravel()
    # Two-sample Kolmogorov-Smirnov: the same law would give p < 1e-3 once in a thousand runs.
    assert stats.ks_2samp(via_clients, direct).pvalue > 1e-3
    assert np.var(direct) == pytest.approx(np.var(via_clients), rel=0.05)  # 5 > 6 sd of the ratio


def test_secure_sum_reveals_only_the_total():
    channel = SecureSum()
    for message in (np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([2.0, 0.0])):
        channel.add(message)
    assert channel.count == 3
    np.testing.assert_allclose(channel.result(), [3.5, 1.0])
    assert not any(isinstance(v, list) for v in vars(channel).values())  # no per-client record is kept
    with pytest.raises(ValueError):
        SecureSum().result()


def test_top_k_mask_sets_exactly_the_k_smallest():
    rng = np.random.default_rng(3)
    losses = rng.random((6, 30))
    for k in (1, 4, 30):
        mask = top_k_mask(losses, k)
        assert (mask.sum(axis=1) == k).all()
        order = np.argsort(losses, axis=1)[:, :k]
        assert all(set(np.flatnonzero(row)) == set(best) for row, best in zip(mask, order))


@pytest.mark.parametrize("p", [100, 300])  # 32-bit keys up to 128 candidates, 64-bit beyond
def test_fast_ranking_equals_sorting_the_losses(p):
    rng = np.random.default_rng(4)
    reps, clients = 3, 50
    good = good_positions(p, 7, seed=0)
    z = rng.standard_normal((reps, clients, p), dtype=np.float32)
    for sigma_loss in (0.1, 0.5, 2.0):
        losses = sigma_loss * z.astype(float) + (~good)
        expected = np.argsort(losses, axis=-1, kind="stable")[..., :12]
        ids = top_ids(z, good, sigma_loss, 12, ordered=True)
        assert (ids == expected).mean() > 0.999  # only float32 near-ties (< 2^-17 apart) may swap
        unordered = top_ids(z, good, sigma_loss, 5, ordered=False)
        assert (np.sort(unordered, axis=-1) == np.sort(expected[..., :5], axis=-1)).mean() > 0.999


def test_votes_for_several_k_equal_separate_counts_and_respect_dropouts():
    rng = np.random.default_rng(5)
    reps, clients, p = 4, 30, 20
    good = good_positions(p, 3, seed=1)
    z = rng.standard_normal((reps, clients, p), dtype=np.float32)
    survivors = survivors_mask(rng, reps, clients, 7)
    assert (survivors.sum(axis=1) == clients - 7).all()
    ks = [1, 3, 8, 20]
    ids = top_ids(z, good, 0.4, 8, ordered=True)
    together = clean_votes(ids, ks, p, survivors)
    losses = 0.4 * z.astype(float) + (~good)
    for index, k in enumerate(ks):
        expected = (top_k_mask(losses, k) * survivors[:, :, None]).sum(axis=1)
        np.testing.assert_array_equal(together[index], expected)


def test_rank_by_score_prefers_accuracy_then_lower_loss():
    accuracy = np.array([[0.5, 0.9, 0.9, 0.1]])
    loss = np.array([[0.1, 0.7, 0.3, 0.0]])
    np.testing.assert_array_equal(rank_by_score(accuracy, loss), [[2, 1, 0, 3]])


def test_noiseless_ties_are_broken_uniformly_and_noise_is_left_alone():
    rng = np.random.default_rng(6)
    votes = np.tile(np.array([3.0, 7.0, 7.0, 1.0, 7.0]), (3000, 1))
    winners = noisy_argmax(votes, 0.0, rng.random(votes.shape))
    counts = np.bincount(winners, minlength=5)
    assert counts[[0, 3]].sum() == 0
    # Each tied candidate wins a third of 3000: sd 26, so +-150 is beyond 5 sd.
    assert np.all(np.abs(counts[[1, 2, 4]] - 1000) < 150)
    noisy = votes + rng.standard_normal(votes.shape)
    np.testing.assert_array_equal(noisy_argmax(noisy, 1.0, rng.random(votes.shape)), noisy.argmax(axis=1))


def test_per_client_noise_follows_appendix_a():
    assert per_client_std(10.0, 100) == pytest.approx(1.0)
    assert per_client_std(10.0, 100, 0.19) == pytest.approx(10.0 / math.sqrt(81))
