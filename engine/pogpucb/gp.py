"""Squared-exponential GP pieces for PO-GP-UCB: kernel and maximum-likelihood fits.

The paper's kernel is isotropic, ``k(x, x') = s2 exp(-0.5 |x - x'|^2 / l^2)``,
with a zero prior mean; its hyperparameters are learned by maximum likelihood
(Section 4). An ARD variant is used only to pre-process real inputs into a
space where the isotropic kernel fits (footnote 4: divide each input dimension
by its length-scale).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.linalg import cho_solve, cholesky, lapack

from engine.blas import single_threaded_blas
from engine.cancel import checkpoint


ANCHOR_FACTOR = 100.0   # how far outside the data's distances a length-scale grid may be centred
ROUNDING = 1e-10        # squared distances below this fraction of the data's scale are repeated rows


@dataclass(frozen=True)
class SEHyper:
    """Hyperparameters of the isotropic SE kernel plus the Gaussian noise variance."""

    lengthscale: float
    signal_var: float
    noise_var: float

    def as_dict(self) -> dict:
        return asdict(self)


def sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the rows of A (m, k) and B (p, k)."""
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(d2, 0.0)


def se_kernel(A: np.ndarray, B: np.ndarray, hyper: SEHyper) -> np.ndarray:
    return hyper.signal_var * np.exp(-0.5 * sq_dists(A, B) / hyper.lengthscale**2)


def _nll_and_grad(log_params: np.ndarray, X: np.ndarray, y: np.ndarray, ard: bool):
    """Negative log marginal likelihood and its gradient in log-parameters.

    ``log_params`` = [log l_1..l_k, log s2, log noise] with k = d (ARD) or 1.
    """
    k = X.shape[1] if ard else 1
    ls = np.exp(log_params[:k])
    s2, nv = np.exp(log_params[k]), np.exp(log_params[k + 1])
    scaled = X / ls if ard else X / ls[0]
    Kf = s2 * np.exp(-0.5 * sq_dists(scaled, scaled))
    K = Kf + (nv + 1e-10) * np.eye(len(y))
    try:
        L = cholesky(K, lower=True)
    except np.linalg.LinAlgError:
        return 1e25, np.zeros_like(log_params)
    alpha = cho_solve((L, True), y)
    nll = 0.5 * y @ alpha + np.log(np.diag(L)).sum() + 0.5 * len(y) * np.log(2 * np.pi)
    # d nll / d theta = -0.5 tr((alpha alpha^T - K^-1) dK/dtheta)
    K_inv, _ = lapack.dpotri(L, lower=1)
    K_inv = np.tril(K_inv) + np.tril(K_inv, -1).T
    W = np.outer(alpha, alpha) - K_inv
    A = W * Kf
    grad = np.empty_like(log_params)
    # sum_ab A_ab (x_aj - x_bj)^2 = 2 sum_a x_aj^2 (A 1)_a - 2 x_j^T A x_j for symmetric A: O(m^2 d), no m x m x d.
    per_dim = 2.0 * (scaled**2).T @ A.sum(1) - 2.0 * ((A @ scaled) * scaled).sum(0)
    if ard:
        grad[:k] = -0.5 * per_dim
    else:
        grad[0] = -0.5 * per_dim.sum()
    grad[k] = -0.5 * np.sum(A)
    grad[k + 1] = -0.5 * nv * np.trace(W)
    return nll, grad


def _fit(X, y, ard: bool, lengthscale_guess: float, noise_floor: float, rng: np.random.Generator,
         restarts: int):
    from scipy.optimize import minimize  # heavy import, needed only for the ARD pre-processing

    X = np.asarray(X, float)
    y = np.asarray(y, float)
    k = X.shape[1] if ard else 1
    var_y = max(float(np.mean(y**2)), 1e-12)
    bounds = ([(np.log(lengthscale_guess) - 5, np.log(lengthscale_guess) + 5)] * k
              + [(np.log(var_y) - 7, np.log(var_y) + 5), (np.log(max(noise_floor * var_y, 1e-12)), np.log(var_y) + 2)])
    # Start long and noisy: from a short, nearly noiseless start L-BFGS-B tends to run to the
    # white-noise optimum (every length-scale at its lower bound).
    starts = [np.r_[np.full(k, np.log(3.0 * lengthscale_guess)), np.log(var_y), np.log(0.5 * var_y)]]
    for _ in range(restarts):
        starts.append(np.array([rng.uniform(lo, hi) for lo, hi in bounds]))
    best = None
    for x0 in starts:
        x0 = np.clip(x0, [b[0] for b in bounds], [b[1] for b in bounds])
        res = minimize(_nll_and_grad, x0, args=(X, y, ard), jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 200})
        if best is None or res.fun < best.fun:
            best = res
    return np.exp(best.x), k


def _profile_nll(lam: np.ndarray, qy2: np.ndarray, log_g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Profile NLL over noise ratios g = noise/signal for one length-scale (eigen-form).

    With K0 = Q diag(lam) Q^T the unit-variance kernel matrix and qy2 = (Q^T y)^2,
    the signal variance maximising the likelihood is s2 = sum(qy2 / (lam + g)) / m,
    so NLL(g) = m/2 log s2 + 1/2 sum log(lam + g) + const. Returns (nll, s2) per g.
    """
    g = np.exp(log_g)[:, None]
    denom = lam[None, :] + g
    m = lam.size
    s2 = (qy2[None, :] / denom).sum(1) / m
    nll = 0.5 * m * np.log(s2) + 0.5 * np.log(denom).sum(1)
    return nll, s2


def fit_isotropic(X, y, rng: np.random.Generator | None = None, *, lengthscale_guess: float | None = None,
                  noise_floor: float = 1e-6, n_lengthscales: int = 16) -> SEHyper:
    """Maximum-likelihood isotropic SE hyperparameters for data (X, y), zero prior mean.

    The signal variance is profiled out in closed form, the noise-to-signal
    ratio is searched on a fine grid through one eigendecomposition per
    length-scale, and the length-scale on a log grid refined by golden-section
    search: a global, deterministic search that costs a few dozen m x m
    eigendecompositions instead of a multi-start gradient fit.

    Parameters
    ----------
    X : array (m, k)
    y : array (m,)
    rng : unused, kept so callers can pass their generator uniformly.
    lengthscale_guess : float, optional
        Centre of the length-scale grid (default: the median pairwise distance),
        held within a factor 100 of the data's smallest and largest distance;
        the grid spans a factor 100 either side.
    noise_floor : float
        Smallest noise-to-signal variance ratio considered.
    """
    with single_threaded_blas():
        return _fit_isotropic(np.asarray(X, float), np.asarray(y, float), lengthscale_guess, noise_floor,
                              n_lengthscales)


def _anchored(guess: float, positive_d2: np.ndarray) -> float:
    """The centre of the length-scale grid, held within a factor 100 of the data's smallest and largest distance.

    A refit centres its grid on the previous fit's length-scale. Without this
    anchor a run of fits that each pick the short end of their grid (a modeler
    that queries the same few rows again and again, where every length-scale
    shorter than the closest pair of rows explains the data equally well)
    walks the grid down by a factor 100 per fit until the length-scale
    underflows and the kernel matrix becomes NaN. Far below the closest pair
    or far beyond the widest one the likelihood no longer changes, so nothing
    is lost by stopping there; a grid centred on the median distance (the
    first fit) is never moved.
    """
    if positive_d2.size == 0:       # one distinct input: every length-scale gives the same kernel
        return guess if np.isfinite(guess) and guess > 0 else 1.0
    lo, hi = float(np.sqrt(positive_d2.min())) / ANCHOR_FACTOR, float(np.sqrt(positive_d2.max())) * ANCHOR_FACTOR
    if not np.isfinite(guess) or guess <= 0:
        return float(np.sqrt(lo * hi))
    return float(np.clip(guess, lo, hi))


def _fit_isotropic(X, y, lengthscale_guess, noise_floor, n_lengthscales) -> SEHyper:
    d2 = sq_dists(X, X)
    positive = d2[d2 > 0]
    if lengthscale_guess is None:
        lengthscale_guess = float(np.sqrt(np.median(positive))) if positive.size else 1.0
    # Repeated rows come out of sq_dists at rounding level (1e-16 |x|^2), not 0: they are not distances.
    apart = d2[d2 > ROUNDING * max(float(d2.max(initial=0.0)), float((X * X).sum(1).max(initial=0.0)))]
    lengthscale_guess = _anchored(lengthscale_guess, apart)
    log_g = np.linspace(np.log(noise_floor), np.log(10.0), 300)

    def best_for(log_l: float):
        checkpoint()    # a few dozen eigendecompositions of up to a second together on the larger tasks
        try:
            lam, Q = np.linalg.eigh(np.exp(-0.5 * d2 / np.exp(2 * log_l)))
        except np.linalg.LinAlgError:   # LAPACK did not converge on this length-scale's kernel: not a candidate
            return float("inf"), float("nan"), float("nan")
        nll, s2 = _profile_nll(np.clip(lam, 0.0, None), (Q.T @ y) ** 2, log_g)
        i = int(np.argmin(nll))
        return float(nll[i]), float(s2[i]), float(np.exp(log_g[i]))

    grid = np.linspace(np.log(lengthscale_guess) - np.log(100), np.log(lengthscale_guess) + np.log(100),
                       n_lengthscales)
    values = [best_for(v)[0] for v in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    phi = (np.sqrt(5) - 1) / 2
    a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
    fa, fb = best_for(a)[0], best_for(b)[0]
    for _ in range(10):  # bracket shrinks to 0.618^10 = 1% of two grid steps
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - phi * (hi - lo)
            fa = best_for(a)[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + phi * (hi - lo)
            fb = best_for(b)[0]
    log_l = min([(values[i], grid[i]), (fa, a), (fb, b)])[1]
    _, s2, g = best_for(log_l)
    return SEHyper(lengthscale=float(np.exp(log_l)), signal_var=s2, noise_var=s2 * g)


def fit_ard_lengthscales(X, y, rng: np.random.Generator, *, restarts: int = 0) -> np.ndarray:
    """Maximum-likelihood ARD length-scales (one per input dimension) of an SE kernel."""
    X = np.asarray(X, float)
    guess = float(np.sqrt(np.mean(np.var(X, axis=0)) * X.shape[1]))
    with single_threaded_blas():
        params, k = _fit(X, y, True, guess, 1e-4, rng, restarts)
    return params[:k]
