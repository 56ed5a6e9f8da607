"""RGPE and TAF adapted to federated BO through the RFF approximation (FTS paper, Sec. 3.2).

Every other agent n sends nu_n and Sigma_n^-1 (M + M^2 numbers; TAF also its
incumbent, the best value it observed). The target agent turns them into the
agent's surrogate, mean phi(x)^T nu_n and variance sigma^2 phi(x)^T Sigma_n^-1
phi(x) (Sec. 2), and plugs these surrogates, with its own GP, into the
original meta-learning method:

RGPE (Feurer, Letham and Bakshy 2018)
    Every model's ranking loss on the target's observations is counted over
    ``S`` posterior samples; a model's weight is the fraction of samples in
    which its loss is the smallest (ties go to the target's own model), a model
    whose median loss exceeds the 95th percentile of the target's losses gets
    weight 0, and the acquisition is expected improvement of the weighted
    ensemble (mean sum w mu, variance sum w^2 sigma^2). The target's samples
    are leave-one-out: the sample at pair (i, j) comes from its GP without
    observation i. As the authors' code: S = 100 (run_landmine_federated_bo.py:34),
    the discard rule and tie rule (federated_bayesian_optimization.py:515-530),
    the other agents' samples drawn independently per point from their marginal
    posteriors (:486-506; we draw one set per point, they redraw per pair).
TAF (Wistuba, Schilling and Schmidt-Thieme 2018)
    A model's weight is the Epanechnikov kernel 3/4 (1 - (d / rho)^2) of the
    distance d between its pairwise-ranking vector and the target's
    (rho = 0.5, federated_bayesian_optimization.py:21 and :573-582), the
    target's own weight 3/4; the acquisition is the weighted mean of the
    target's expected improvement and each other agent's predicted improvement
    max(0, mu_n(x) - incumbent_n). The original TAF uses the mean mu_n; the
    authors' code draws a random value from N(mu_n, sigma_n^2) at every
    evaluation instead (federated_helper_funcs.py:200), which we do not follow
    because it makes the acquisition a random function.

All functions are batched: a leading (R, T) over runs and target agents.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

RGPE_SAMPLES = 100     # S_rgpe, run_landmine_federated_bo.py:34
TAF_RHO = 0.5          # kernel_rho, federated_bayesian_optimization.py:21
REMOVED_LOSS = 1e5     # the loss given to a discarded model (federated_bayesian_optimization.py:517)


def expected_improvement(mean, var, best):
    """EI of maximisation, (mu - best) Phi(z) + sigma phi(z) with z = (mu - best) / sigma (xi = 0)."""
    std = np.sqrt(np.maximum(var, 1e-300))
    z = (mean - best) / std
    return (mean - best) * ndtr(z) + std * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


def rff_predict(phi, nu, cov, noise_var):
    """Mean and variance of the other agents' RFF surrogates: phi (R, C, M), nu (R, N, M), cov (R, N, M, M)
    (Sigma_n^-1) -> (R, N, C) each; the variance is noise_var phi^T Sigma^-1 phi (Sec. 2)."""
    mean = np.einsum("rcm,rnm->rnc", phi, nu)
    return mean, quadratic_forms(phi, cov, noise_var)


def quadratic_forms(phi, cov, scale):
    """scale phi^T Sigma_n^-1 phi for every agent n: phi (R, ..., M), cov (R, N, M, M) -> (R, N, ...)."""
    R, M = phi.shape[0], phi.shape[-1]
    flat = phi.reshape(R, -1, M)
    out = np.empty((R, cov.shape[1], flat.shape[1]))
    for n in range(cov.shape[1]):
        out[:, n] = scale * np.sum(np.matmul(flat, cov[:, n]) * flat, axis=-1)     # BLAS, not einsum
    return np.maximum(out, 0.0).reshape((R, cov.shape[1]) + phi.shape[1:-1])


def pair_disagreements(y, samples):
    """Ranking loss sum_{i != j} 1[(y_i < y_j) xor (s_i < s_j)]: y (..., n), samples (..., n, S) -> (..., S)."""
    truth = y[..., :, None] < y[..., None, :]                                     # (..., n, n)
    pred = samples[..., :, None, :] < samples[..., None, :, :]                    # (..., n, n, S)
    return np.sum(truth[..., None] ^ pred, axis=(-3, -2))


def rgpe_weights(losses, allowed=None):
    """RGPE weights from ranking losses (..., N + 1, S), the last model the target's own.

    ``allowed`` (..., N) bool: other models that may be used (False: weight 0, e.g. the
    target's own message in the all-targets batch). Returns (..., N + 1).
    """
    losses = np.array(losses, dtype=float)
    n_other, S = losses.shape[-2] - 1, losses.shape[-1]
    target = losses[..., -1:, :]
    discard = np.median(losses[..., :-1, :], axis=-1) > np.percentile(target[..., 0, :], 95, axis=-1)[..., None]
    if allowed is not None:
        discard |= ~np.asarray(allowed, dtype=bool)
    losses[..., :-1, :] = np.where(discard[..., None], REMOVED_LOSS, losses[..., :-1, :])
    best = losses.min(axis=-2, keepdims=True)
    winner = np.argmax(losses == best, axis=-2)                                   # first model with the least loss
    winner = np.where(target[..., 0, :] == best[..., 0, :], n_other, winner)      # ties go to the target
    counts = (winner[..., None, :] == np.arange(n_other + 1)[:, None]).sum(axis=-1)
    return counts / S


def rgpe_acquisition(weights, target_mean, target_var, other_mean, other_var, best):
    """EI of the RGPE ensemble: weights (..., N + 1), target (..., C), others (..., N, C), best (...,)."""
    mean = np.einsum("...n,...nc->...c", weights[..., :-1], other_mean) + weights[..., -1:] * target_mean
    var = np.einsum("...n,...nc->...c", weights[..., :-1] ** 2, other_var) + weights[..., -1:] ** 2 * target_var
    return expected_improvement(mean, var, best[..., None])


def ranking_vectors(values):
    """TAF's pairwise ranking vector: 1 / (n (n - 1)) where v_i > v_j, over ordered pairs i != j.

    values (..., n) -> (..., n (n - 1)) (pairs in row-major order, i then j).
    """
    n = values.shape[-1]
    greater = (values[..., :, None] > values[..., None, :]).astype(float) / (n * (n - 1))
    off = ~np.eye(n, dtype=bool)
    return greater[..., off]


def taf_weights(target_y, other_means, allowed=None, rho: float = TAF_RHO):
    """TAF weights: target_y (..., n), other_means (..., N, n) at the target's observations -> (..., N + 1)."""
    target = ranking_vectors(target_y)
    others = ranking_vectors(other_means)
    distance = np.sqrt(np.sum((others - target[..., None, :]) ** 2, axis=-1)) / rho
    w = np.where(distance <= 1.0, 0.75 * (1.0 - distance ** 2), 0.0)
    if allowed is not None:
        w = np.where(allowed, w, 0.0)
    return np.concatenate([w, np.full(w.shape[:-1] + (1,), 0.75)], axis=-1)


def taf_acquisition(weights, target_mean, target_var, best, other_mean, incumbents):
    """TAF: (w_target EI_target + sum_n w_n max(0, mu_n - incumbent_n)) / sum w.

    weights (..., N + 1), target (..., C), best (...,), other_mean (..., N, C), incumbents (..., N).
    """
    improvement = np.maximum(other_mean - incumbents[..., None], 0.0)
    total = np.einsum("...n,...nc->...c", weights[..., :-1], improvement)
    total = total + weights[..., -1:] * expected_improvement(target_mean, target_var, best[..., None])
    return total / weights.sum(axis=-1, keepdims=True)


def gp_posterior(X, y, theta, points, noise_floor: float = 1e-6):
    """Exact posterior of K zero-mean SE GPs: X (K, n, D), y (K, n), theta (K, 3) log (lengthscale, signal,
    noise), points (K, C, D) or (C, D) -> mean, variance (K, C) and the Cholesky factor (K, n, n)."""
    ell, signal, noise = np.exp(theta).T
    noise = np.maximum(noise, noise_floor)
    gram = signal[:, None, None] * _se(X, X, ell) + noise[:, None, None] * np.eye(X.shape[1])
    L = np.linalg.cholesky(gram)
    P = np.broadcast_to(points, (X.shape[0],) + np.shape(points)[-2:])
    cross = signal[:, None, None] * _se(X, P, ell)                                  # (K, n, C)
    a = np.linalg.solve(L, cross)
    b = np.linalg.solve(L, y[:, :, None])[:, :, 0]
    mean = np.einsum("knc,kn->kc", a, b)
    var = signal[:, None] - np.einsum("knc,knc->kc", a, a)
    return mean, np.maximum(var, 1e-12), L


def _se(A, B, ell):
    d = np.sum(A * A, -1)[:, :, None] + np.sum(B * B, -1)[:, None, :] - 2 * np.matmul(A, np.swapaxes(B, 1, 2))
    return np.exp(-0.5 * np.maximum(d, 0.0) / (ell[:, None, None] ** 2))


def loo_samples(X, y, theta, S: int, rng: np.random.Generator, noise_floor: float = 1e-6):
    """RGPE's leave-one-out samples of the target's GP: for every i a joint posterior sample, at all n
    observations, of the GP fitted without observation i. X (K, n, D), y (K, n) -> (K, n_i, n, S)."""
    K, n, _ = X.shape
    ell, signal, noise = np.exp(theta).T
    noise = np.maximum(noise, noise_floor)
    corr = _se(X, X, ell) * signal[:, None, None]                                  # (K, n, n)
    out = np.empty((K, n, n, S))
    for i in range(n):
        keep = np.arange(n) != i
        gram = corr[:, keep][:, :, keep] + noise[:, None, None] * np.eye(n - 1)
        L = np.linalg.cholesky(gram)
        cross = corr[:, keep, :]                                                   # (K, n-1, n)
        a = np.linalg.solve(L, cross)
        b = np.linalg.solve(L, y[:, keep, None])[:, :, 0]
        mean = np.einsum("knc,kn->kc", a, b)
        cov = corr - np.matmul(np.swapaxes(a, 1, 2), a) + 1e-8 * np.eye(n)
        w, V = np.linalg.eigh(cov)
        root = V * np.sqrt(np.maximum(w, 0.0))[:, None, :]
        out[:, i] = mean[:, :, None] + np.matmul(root, rng.standard_normal((K, n, S)))
    return out
