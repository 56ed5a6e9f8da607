"""Each agent's own GP: the batched linear algebra, the hyperparameter fit, the candidate sums and the samplers."""

from __future__ import annotations

import numpy as np
import pytest

from engine.objectives.tasks import grid_candidates
from engine.surrogate import OwnGp, PointCandidates, SeHyperparameters, candidate_set, fit_hyperparameters
from engine.surrogate.gp import negative_log_likelihood, squared_distances
from engine.surrogate.linalg import append_inverse, cho_solve, safe_cholesky
from engine.surrogate.thompson import FIRST_FIT_STEPS


def _gp_draws(rng, K, n, dim, ell, signal, noise):
    """K data sets of n points drawn from a zero-mean GP with an SE kernel and Gaussian noise."""
    X = rng.random((K, n, dim))
    C = signal * np.exp(-squared_distances(X, X) / (2 * ell ** 2)) + noise * np.eye(n)
    y = np.matmul(np.linalg.cholesky(C), rng.standard_normal((K, n, 1)))[:, :, 0]
    return X, y


def test_batched_linear_algebra_matches_numpy():
    rng = np.random.default_rng(0)
    K, n = 5, 9
    A = rng.standard_normal((K, n, n))
    A = A @ np.swapaxes(A, 1, 2) + n * np.eye(n)
    b = rng.standard_normal((K, n))
    L = safe_cholesky(A)
    np.testing.assert_allclose(cho_solve(L, b), np.linalg.solve(A, b[:, :, None])[:, :, 0], rtol=1e-10)
    # Growing an inverse one bordered row at a time gives the inverse of the whole matrix.
    buffer = np.zeros((K, n, n))
    for j in range(n):
        append_inverse(buffer, j, A[:, j, :j], A[:, j, j])
    np.testing.assert_allclose(buffer, np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    # One singular member of the stack gets jitter instead of failing the others.
    A[2] = np.outer(b[2], b[2])
    L = safe_cholesky(A)
    assert np.all(np.isfinite(L)) and np.allclose(L[0] @ L[0].T, A[0])


@pytest.mark.statistical
def test_fit_recovers_the_lengthscale_of_the_generating_gp():
    rng = np.random.default_rng(1)
    X, y = _gp_draws(rng, K=200, n=40, dim=2, ell=0.2, signal=1.0, noise=1e-3)
    theta = fit_hyperparameters(squared_distances(X, X), y, steps=FIRST_FIT_STEPS)   # what an agent's first fit does
    ell = np.exp(theta[:, 0])
    # Maximum-likelihood lengthscales of 40-point draws scatter about +-8 % (10-90 % range 0.18-0.21 in
    # 500 draws, fitted to convergence); the median over 200 draws is then within about 1 %: 5 % leaves
    # room for the few scoring steps, a wrong lengthscale (0.1 or 0.4, the nearest grid starts) is far outside.
    assert np.median(ell) == pytest.approx(0.2, rel=0.05)
    assert np.mean((ell > 0.15) & (ell < 0.27)) > 0.85
    # The signal variance of a single 40-point draw is much less certain: the median within 25 %.
    assert np.median(np.exp(theta[:, 1])) == pytest.approx(1.0, rel=0.25)
    # The fit is a maximum: it beats the generating values on almost every draw.
    sq = squared_distances(X, X)
    truth = np.log(np.tile([0.2, 1.0, 1e-3], (200, 1)))
    assert np.mean(negative_log_likelihood(sq, y, theta) <= negative_log_likelihood(sq, y, truth) + 1e-6) > 0.95


@pytest.mark.parametrize("points", [np.linspace(0, 1, 1000)[:, None], grid_candidates(2, 12), grid_candidates(3, 5)])
def test_grid_sums_equal_point_by_point_sums(points):
    rng = np.random.default_rng(2)
    grid = candidate_set(points)
    assert type(grid).__name__ == "GridCandidates"
    direct = PointCandidates(points)
    B, M, D = 4, 30, points.shape[1]
    freq, phase = rng.normal(0, 20, (B, M, D)), rng.uniform(0, 2 * np.pi, (B, M))
    weight = rng.normal(size=(B, M))
    value, norm = grid.feature_sum(freq, phase, weight, norm_squared=True)
    value_d, norm_d = direct.feature_sum(freq, phase, weight, norm_squared=True)
    # Single-precision trigonometry: agreement to ~1e-5 of the sum's scale.
    np.testing.assert_allclose(value, value_d, atol=1e-4 * np.abs(value_d).max())
    np.testing.assert_allclose(norm, norm_d, atol=1e-4 * M)
    alpha, ell = rng.normal(size=(B, 6)), rng.uniform(0.02, 0.5, B)
    # Anywhere, and on the grid's own points (a long 1-D axis then convolves by FFT).
    for X in (rng.random((B, 6, D)), points[rng.integers(0, len(points), (B, 6))]):
        np.testing.assert_allclose(grid.kernel_sum(X, alpha, ell), direct.kernel_sum(X, alpha, ell), atol=1e-12)


def _exact_posterior(X, y, T, ell, signal, noise):
    k = lambda a, b: signal * np.exp(-((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) / (2 * ell ** 2))  # noqa: E731
    Ci = np.linalg.inv(k(X, X) + noise * np.eye(len(X)))
    return k(T, X) @ Ci @ y, np.diag(k(T, T) - k(T, X) @ Ci @ k(X, T))


@pytest.mark.statistical
def test_pathwise_samples_have_the_exact_posterior_mean_and_variance():
    rng = np.random.default_rng(3)
    ell, signal, noise = 0.15, 0.8, 1e-3
    X = rng.random((6, 1))
    y = np.sin(6 * X[:, 0])
    T = np.array([[0.05], [0.33], [0.5], [0.9]])
    mean, var = _exact_posterior(X, y, T, ell, signal, noise)
    S = 40_000
    gp = OwnGp(S, 1, 6, SeHyperparameters.constant(S, ell, signal, noise), refit_every=0, sampler="pathwise")
    gp.add_batch(np.broadcast_to(X, (S, 6, 1)), np.broadcast_to(y, (S, 6)))
    f = gp.sample(rng, PointCandidates(T))
    # Fresh random features per sample make the prior's first two moments exact, and the update is
    # exact, so sample moments match the posterior up to sampling error: the mean within 4 standard
    # errors (sqrt(var / S)) and the variance within 5 (sqrt((kurtosis - 1) / S) relative).
    assert np.all(np.abs(f.mean(axis=0) - mean) < 4 * np.sqrt(var / S))
    centred = f - mean
    kurtosis = (centred ** 4).mean(axis=0) / var ** 2
    assert np.all(np.abs(f.var(axis=0) / var - 1) < 5 * np.sqrt((kurtosis - 1) / S))


def test_authors_sampler_interpolates_the_data_with_fresh_features_per_sample():
    rng = np.random.default_rng(4)
    K = 50
    X = rng.random((5, 2))
    y = np.cos(3 * X.sum(axis=1))
    gp = OwnGp(K, 2, 5, SeHyperparameters.constant(K, 0.3, 1.0, 1e-8), refit_every=0, sampler="authors")
    gp.add_batch(np.broadcast_to(X, (K, 5, 2)), np.broadcast_to(y, (K, 5)))
    at_data = gp.sample(rng, PointCandidates(X))
    # Noise floored at 1e-5 (the authors' obs_noise floor): samples pass within a few sqrt(1e-5) of the data.
    assert np.abs(at_data - y).max() < 0.05
    elsewhere = gp.sample(rng, PointCandidates(rng.random((20, 2))))
    assert np.std(elsewhere, axis=0).min() > 1e-3    # different features, different functions away from data


def test_hyperparameters_are_refitted_every_five_observations():
    rng = np.random.default_rng(5)
    K = 3
    X, y = _gp_draws(rng, K, 22, 1, 0.2, 1.0, 1e-4)
    gp = OwnGp(K, 1, 22, SeHyperparameters.constant(K, 1.0, 0.1, 1e-6), refit_every=5)
    grid = candidate_set(np.linspace(0, 1, 50)[:, None])
    fitted_at = []
    for j in range(22):
        gp.add(X[:, j], y[:, j])
        before = gp.fits
        gp.argmax(rng, grid)
        if gp.fits > before:
            fitted_at.append(gp.count)
    assert fitted_at == [5, 10, 15, 20]
    fixed = OwnGp(K, 1, 22, SeHyperparameters.constant(K, 1.0, 0.1, 1e-6), refit_every=0)
    fixed.add_batch(X, y)
    fixed.argmax(rng, grid)
    assert fixed.fits == 0 and np.allclose(fixed.hyperparameters.lengthscale, 1.0)
