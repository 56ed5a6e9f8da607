"""Random Fourier features and the batched Bayesian linear regression posterior."""

from __future__ import annotations

import numpy as np
import pytest

from engine.surrogate import BatchedBlr, sample_features


def _exact_posterior(phi, y, lam):
    """nu and lambda Sigma^-1 of eq. (2) by direct linear algebra, for one model."""
    sigma = phi.T @ phi + lam * np.eye(phi.shape[1])
    return np.linalg.solve(sigma, phi.T @ y), lam * np.linalg.inv(sigma)


def test_features_approximate_the_se_kernel():
    rng = np.random.default_rng(0)
    M, ell = 20_000, 0.1
    feats = sample_features(1, 2, M, ell, rng)
    X = rng.random((30, 2))
    phi = feats(X)[0]
    approx = phi @ phi.T
    exact = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / ell ** 2)
    # Each entry is a mean of M terms of variance <= 1/2 (scaled by 2/M): std <= 1/sqrt(M) = 0.007.
    # The max over 900 entries stays within 5 of those.
    assert np.abs(approx - exact).max() < 5 / np.sqrt(M)


def test_features_shapes_and_per_set_points():
    rng = np.random.default_rng(1)
    feats = sample_features(3, 2, 7, 0.2, rng)
    shared = feats(rng.random((5, 2)))
    assert shared.shape == (3, 5, 7)
    own = rng.random((3, 4, 6, 2))
    per_set = feats(own)
    assert per_set.shape == (3, 4, 6, 7)
    # Set s evaluated at its own points equals evaluating those points as a shared set.
    assert np.allclose(per_set[1].reshape(-1, 7), feats(own[1].reshape(-1, 2))[1])
    # Different sets are different features.
    assert not np.allclose(shared[0], shared[1])


@pytest.mark.parametrize("lam", [0.01, 1e-6])
def test_posterior_matches_direct_formula(lam):
    rng = np.random.default_rng(2)
    K, M, n = 6, 20, 45
    feats = sample_features(1, 2, M, 0.05, rng)
    phi = feats(rng.random((K * n, 2)))[0].reshape(K, n, M)
    y = rng.normal(size=(K, n))
    blr = BatchedBlr(K, M, lam, capacity=n)
    blr.add_batch(phi[:, :10], y[:, :10])
    for j in range(10, n):
        blr.add(phi[:, j], y[:, j])
    for k in range(K):
        nu, cov = _exact_posterior(phi[k], y[k], lam)
        scale = np.abs(nu).max()
        assert np.allclose(blr.mean[k], nu, atol=1e-7 * scale)
        assert np.allclose(lam * blr.covariance[k], cov, atol=1e-7 * np.abs(cov).max())
    assert np.allclose(blr.precision[0], phi[0].T @ phi[0] + lam * np.eye(M))
    kept = blr.covariance.copy()
    blr.refresh()
    assert np.allclose(blr.covariance, kept, rtol=1e-6, atol=1e-9 / lam)


def test_prior_is_standard_normal_before_any_observation():
    blr = BatchedBlr(2, 3, 0.5, capacity=4)
    draws = blr.sample(np.random.default_rng(3), 20_000)           # (2, 20000, 3)
    assert draws.shape == (2, 20_000, 3)
    # Mean 0 (std error 1/sqrt(20000) = 0.007) and identity covariance (std error ~0.01).
    assert np.abs(draws.mean(axis=1)).max() < 0.05
    assert np.allclose(np.cov(draws[0].T), np.eye(3), atol=0.06)


@pytest.mark.statistical
def test_samples_follow_the_posterior():
    rng = np.random.default_rng(4)
    K, M, n, lam = 3, 4, 12, 0.01
    feats = sample_features(1, 1, M, 0.3, rng)
    phi = feats(rng.random((K * n, 1)))[0].reshape(K, n, M)
    y = np.sin(6 * rng.random((K, n)))
    blr = BatchedBlr(K, M, lam, capacity=n)
    blr.add_batch(phi, y)
    S = 40_000
    draws = blr.sample(rng, S)
    for k in range(K):
        nu, cov = _exact_posterior(phi[k], y[k], lam)
        std = np.sqrt(np.diag(cov))
        # Sample mean: standard error std / sqrt(S) per coordinate; allow 5 of them.
        assert np.all(np.abs(draws[k].mean(axis=0) - nu) < 5 * std / np.sqrt(S))
        # Sample covariance in correlation units: entries have standard error ~ 1/sqrt(S) = 0.005.
        emp = np.cov(draws[k].T)
        assert np.allclose(emp / np.outer(std, std), cov / np.outer(std, std), atol=0.03)


def test_capacity_is_enforced():
    blr = BatchedBlr(1, 2, 0.1, capacity=1)
    blr.add(np.ones((1, 2)), np.ones(1))
    with pytest.raises(ValueError):
        blr.add(np.ones((1, 2)), np.ones(1))
