"""Exact Gaussian process regression with the SE kernel, for K models at once.

Every agent keeps its own GP on its own observations: zero prior mean, kernel
``v exp(-|x - x'|^2 / (2 l^2))``, Gaussian noise of variance s. That is the
model the authors' code fits with GPy (``GPy.models.GPRegression`` with an
isotropic RBF kernel and no output normalisation,
bayesian_optimization_dp_fts_de.py:131-133) and re-fits by maximising the
marginal likelihood whenever the number of observations is a multiple of 5
(same file, lines 139 and 157: ``optimize_restarts(num_restarts=10)``).

Hyperparameters live in log space, ``theta = (log l, log v, log s)``, one
row per model. :func:`fit_hyperparameters` is a batched replacement for
GPy's restarted L-BFGS: a handful of starting points shared by all models
(the previous fit, as GPy's first restart, plus a coarse grid with v profiled
out in closed form), then damped Fisher-scoring steps, each model accepting a
step only if its likelihood improves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.surrogate.linalg import log_det_from_cholesky, safe_cholesky, solve_lower

LOG_2PI = float(np.log(2.0 * np.pi))
# Box for theta = (log l, log v, log s): inputs live in [0, 1]^D, outputs are scores of order 1.
LOG_BOUNDS = np.log(np.array([[1e-3, 1e3], [1e-6, 1e4], [1e-8, 1e2]]))
LOG_RATIO_BOUNDS = tuple(np.log([1e-9, 1e2]))      # noise-to-signal ratio s / v
# Coarse grid of starting points: lengthscales x noise-to-signal ratios (v is profiled out).
PROBE_LENGTHSCALES = (0.1, 0.4, 1.5, 6.0)
PROBE_RATIOS = (1e-4,)
MAX_STEP = 3.0
STEP_LENGTHS = (1.0, 2.5)   # multiples of the Fisher-scoring step tried in each iteration


@dataclass(frozen=True)
class SeHyperparameters:
    """Lengthscale, signal variance and noise variance of K models, each (K,)."""

    lengthscale: np.ndarray
    signal_var: np.ndarray
    noise_var: np.ndarray

    @classmethod
    def constant(cls, n_models: int, lengthscale: float, signal_var: float, noise_var: float) -> "SeHyperparameters":
        full = lambda v: np.full(n_models, float(v))  # noqa: E731
        return cls(full(lengthscale), full(signal_var), full(noise_var))

    @classmethod
    def from_log(cls, theta: np.ndarray) -> "SeHyperparameters":
        theta = np.exp(np.asarray(theta, dtype=float))
        return cls(theta[:, 0].copy(), theta[:, 1].copy(), theta[:, 2].copy())

    def log(self) -> np.ndarray:
        return np.log(np.stack([self.lengthscale, self.signal_var, self.noise_var], axis=1))

    def take(self, index) -> "SeHyperparameters":
        return SeHyperparameters(self.lengthscale[index], self.signal_var[index], self.noise_var[index])


def squared_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the rows of A (K, n, D) and B (K, m, D): (K, n, m)."""
    out = np.zeros((A.shape[0], A.shape[1], B.shape[1]))
    for d in range(A.shape[2]):  # D is 1-3: one broadcast per input dimension
        diff = A[:, :, None, d] - B[:, None, :, d]
        out += diff * diff
    return out


def se_correlation(sqdist: np.ndarray, lengthscale: np.ndarray) -> np.ndarray:
    """exp(-d / (2 l^2)) with one lengthscale per model (leading axis)."""
    scale = (-0.5 / np.asarray(lengthscale, dtype=float) ** 2).reshape((-1,) + (1,) * (sqdist.ndim - 1))
    return np.exp(sqdist * scale)


def _covariance(correlation: np.ndarray, signal: np.ndarray, noise: np.ndarray) -> np.ndarray:
    C = correlation * signal[:, None, None]
    idx = np.arange(C.shape[1])
    C[:, idx, idx] += noise[:, None]
    return C


def _profile(sqdist, y, log_ell, log_ratio, dtype):
    """-log p(y) at (l, s = ratio v) with v = y^T (R + ratio I)^-1 y / n, its closed-form optimum.

    Returns (value (K,), v (K,), R, R + ratio I), computed in ``dtype``.
    """
    K, n = y.shape
    log_ell = np.clip(log_ell, *LOG_BOUNDS[0])
    ratio = np.exp(np.clip(log_ratio, *LOG_RATIO_BOUNDS))
    scale = (-0.5 * np.exp(-2.0 * log_ell)).reshape(-1, 1, 1)
    R = np.exp((sqdist * scale).astype(dtype, copy=False))
    A = R.copy()
    idx = np.arange(n)
    A[:, idx, idx] += ratio.astype(dtype)[:, None]
    L = safe_cholesky(A)
    beta = solve_lower(L, y.astype(dtype, copy=False))
    quadratic = (beta * beta).sum(axis=1, dtype=float)
    signal = np.clip(quadratic / n, np.exp(LOG_BOUNDS[1, 0]), np.exp(LOG_BOUNDS[1, 1]))
    # C = v (R + ratio I): log|C| = n log v + log|R + ratio I| and y^T C^-1 y = |beta|^2 / v.
    log_det = 2.0 * np.log(np.einsum("kii->ki", L).astype(float)).sum(axis=1)
    value = 0.5 * quadratic / signal + 0.5 * (n * np.log(signal) + log_det) + 0.5 * n * LOG_2PI
    return value, signal, R, A


class _State:
    """One likelihood evaluation: theta, the correlation R, the covariance C and -log p(y | theta)."""

    def __init__(self, sqdist, y, theta, R=None):
        self.theta = theta
        ell, signal, noise = np.exp(theta).T
        self.R = se_correlation(sqdist, ell) if R is None else R
        self.C = _covariance(self.R, signal, noise)
        L = safe_cholesky(self.C)
        beta = solve_lower(L, y)
        n = y.shape[1]
        self.value = 0.5 * (beta * beta).sum(axis=1) + 0.5 * log_det_from_cholesky(L) + 0.5 * n * LOG_2PI

    @classmethod
    def profiled(cls, sqdist, y, log_ell, log_ratio) -> "_State":
        """The evaluation at (l, s = ratio v) with v at its closed-form optimum y^T (R + ratio I)^-1 y / n."""
        state = object.__new__(cls)
        state.value, signal, state.R, A = _profile(sqdist, y, log_ell, log_ratio, float)
        state.C = A * signal[:, None, None]
        log_ell = np.clip(log_ell, *LOG_BOUNDS[0])
        log_ratio = np.clip(log_ratio, *LOG_RATIO_BOUNDS)
        state.theta = np.stack([log_ell, np.log(signal), log_ratio + np.log(signal)], axis=1)
        return state

    def select(self, other: "_State", mask: np.ndarray) -> "_State":
        """A state holding ``other``'s evaluation where ``mask``, this one's elsewhere."""
        if mask.all():
            return other
        if not mask.any():
            return self
        out = object.__new__(_State)
        for name in ("theta", "R", "C", "value"):
            mine, theirs = getattr(self, name), getattr(other, name)
            shape = (-1,) + (1,) * (mine.ndim - 1)
            setattr(out, name, np.where(mask.reshape(shape), theirs, mine))
        return out


def negative_log_likelihood(sqdist: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """-log p(y | theta) of every model: sqdist (K, n, n), y (K, n), theta (K, 3) -> (K,)."""
    return _State(sqdist, np.asarray(y, dtype=float), np.asarray(theta, dtype=float)).value


def _gradient_and_fisher(state: _State, sqdist, y):
    """NLL gradient (K, 3) and Fisher information (K, 3, 3) in log parameters.

    With C = v R + s I, A_i = C^-1 dC/dtheta_i: A_s = s C^-1, A_v = I - A_s and
    A_l = C^-1 (v R * d / l^2); grad_i = tr(A_i) / 2 - alpha^T dC_i alpha / 2 and
    F_ij = tr(A_i A_j) / 2 (the expected Hessian of the NLL).
    """
    ell, signal, noise = np.exp(state.theta).T
    Ci = np.linalg.inv(state.C)
    alpha = np.matmul(Ci, y[:, :, None])[:, :, 0]
    n = y.shape[1]
    dC_l = state.R * sqdist
    dC_l *= (signal / ell ** 2)[:, None, None]
    A_s = Ci * noise[:, None, None]
    A_l = np.matmul(Ci, dC_l)
    tr_s = np.einsum("kii->k", A_s)
    tr_l = np.einsum("kii->k", A_l)
    aa = (alpha * alpha).sum(axis=1)
    ya = (y * alpha).sum(axis=1)
    quad_l = (np.matmul(dC_l, alpha[:, :, None])[:, :, 0] * alpha).sum(axis=1)
    grad = np.stack([0.5 * tr_l - 0.5 * quad_l,
                     0.5 * (n - tr_s) - 0.5 * (ya - noise * aa),      # v R alpha = y - s alpha
                     0.5 * tr_s - 0.5 * noise * aa], axis=1)
    # tr(X Y) = sum of X * Y^T; with A_v = I - A_s, the v entries follow from the s ones.
    ss = (A_s * A_s).sum(axis=(1, 2))            # A_s is symmetric
    ll = (A_l * np.swapaxes(A_l, 1, 2)).sum(axis=(1, 2))
    ls = (A_l * A_s).sum(axis=(1, 2))
    vv = n - 2.0 * tr_s + ss
    lv = tr_l - ls
    vs = tr_s - ss
    fisher = 0.5 * np.stack([np.stack([ll, lv, ls], -1), np.stack([lv, vv, vs], -1),
                             np.stack([ls, vs, ss], -1)], axis=1)
    return grad, fisher


def _profiled_step(grad, fisher, damping):
    """Fisher-scoring step in (log l, log ratio) with log v profiled out of the quadratic model.

    Coordinates (a, b, rho) = (log l, log v, log s - log v): the gradient and Fisher matrix
    transform with J = d(log l, log v, log s)/d(a, b, rho); eliminating b (its Schur
    complement) gives the step of the profiled likelihood, on which v is always optimal.
    """
    J = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    g = grad @ J
    F = np.einsum("ji,kjl,lm->kim", J, fisher, J)
    keep = [0, 2]
    Fbb = F[:, 1, 1][:, None] + 1e-12
    S = F[:, keep][:, :, keep] - F[:, keep, 1][:, :, None] * F[:, 1, keep][:, None, :] / Fbb[:, :, None]
    gp = g[:, keep] - F[:, keep, 1] * g[:, 1:2] / Fbb
    S = S + (damping * (np.einsum("kii->k", S) / 2 + 1e-12))[:, None, None] * np.eye(2)
    return -np.linalg.solve(S, gp[:, :, None])[:, :, 0]


def fit_hyperparameters(sqdist: np.ndarray, y: np.ndarray, start: np.ndarray | None = None, *, steps: int = 3,
                        probe_lengthscales=None, probe_ratios=None) -> np.ndarray:
    """Maximum-marginal-likelihood theta = (log l, log v, log s) of K zero-mean SE GPs.

    Parameters
    ----------
    sqdist : (K, n, n) squared distances between each model's inputs
        (:func:`squared_distances`).
    y : (K, n) outputs (not normalised, as GPy's default).
    start : (K, 3), optional
        The previous fit, one more starting point (GPy starts its first
        restart from the current values too).
    steps : int
        Damped Fisher-scoring steps on the likelihood with v profiled out, after
        picking the best starting point.
    probe_lengthscales, probe_ratios
        The coarse grid of starting points (noise ratio s / v; v profiled out);
        default :data:`PROBE_LENGTHSCALES` x :data:`PROBE_RATIOS`.

    Returns
    -------
    theta : (K, 3), inside :data:`LOG_BOUNDS`.
    """
    sqdist = np.asarray(sqdist, dtype=float)
    y = np.asarray(y, dtype=float)
    K = y.shape[0]
    probe_lengthscales = PROBE_LENGTHSCALES if probe_lengthscales is None else probe_lengthscales
    probe_ratios = PROBE_RATIOS if probe_ratios is None else probe_ratios
    # Starting points: the previous fit (re-profiled in v) and the coarse grid. Single precision is
    # plenty for ranking grid points (the noise ratio tried, 1e-4, keeps R + ratio I well conditioned
    # for it); the chosen start is evaluated again in double precision.
    starts = []
    if start is not None:
        start = np.asarray(start, dtype=float)
        starts.append((start[:, 0], start[:, 2] - start[:, 1], float))
    starts += [(np.full(K, np.log(ell)), np.full(K, np.log(ratio)), np.float32)
               for ell in probe_lengthscales for ratio in probe_ratios]
    if not starts:
        raise ValueError("fit_hyperparameters needs a start or at least one probe")
    best, where = np.full(K, np.inf), np.zeros((K, 2))
    for log_ell, log_ratio, dtype in starts:
        value = _profile(sqdist, y, log_ell, log_ratio, dtype)[0]
        better = value < best
        best = np.where(better, value, best)
        where = np.where(better[:, None], np.stack([log_ell, log_ratio], axis=1), where)
    state = _State.profiled(sqdist, y, where[:, 0], where[:, 1])
    damping = np.full(K, 1e-3)
    for _ in range(steps):
        grad, fisher = _gradient_and_fisher(state, sqdist, y)
        direction = _profiled_step(grad, fisher, damping)
        here = np.stack([state.theta[:, 0], state.theta[:, 2] - state.theta[:, 1]], axis=1)
        # Far from the optimum a scoring step is often too short or too long: try a few lengths
        # along it and keep the best, each coordinate moving at most a factor e^MAX_STEP.
        new = state
        for length in STEP_LENGTHS:
            target = here + np.clip(length * direction, -MAX_STEP, MAX_STEP)
            trial = _State.profiled(sqdist, y, target[:, 0], target[:, 1])
            new = new.select(trial, trial.value < new.value)
        accept = new.value < state.value
        state = new
        damping = np.where(accept, damping * 0.1, damping * 10.0)
    return np.clip(state.theta, LOG_BOUNDS[:, 0], LOG_BOUNDS[:, 1])
