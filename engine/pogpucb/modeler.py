"""The modeler of PO-GP-UCB (Algorithm 2): GP-UCB over a finite set of released inputs.

The modeler sees only the candidate inputs (rows of Z, or of X for the
non-private baseline) and asks the curator for ``f(row) + noise`` by row index.
The GP posterior over all n candidates is kept in the form

    V = L^-1 K(X_t, candidates)   (t x n),   a = L^-1 y_t,   L L^T = K(X_t, X_t) + s_n^2 I,

so mean = V^T a and variance = s_y^2 - sum(V^2, axis=0). Adding an observation
appends one row to V and one entry to a: O(n t) per iteration, no t x t solve
(the new Cholesky row is read off the column of V at the queried index).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.cancel import checkpoint
from engine.pogpucb.gp import SEHyper, fit_isotropic, se_kernel, sq_dists


def beta(t: np.ndarray | int, n: int, delta_prime: float):
    """GP-UCB exploration weight of Algorithm 2, line 3: ``2 log(n t^2 pi^2 / (6 delta'))``."""
    t = np.asarray(t, dtype=float)
    value = 2.0 * np.log(n * t**2 * math.pi**2 / (6.0 * delta_prime))
    return float(value) if value.ndim == 0 else value


class GPPosterior:
    """Incremental GP posterior over a fixed candidate set (rows of ``inputs``)."""

    def __init__(self, inputs: np.ndarray, hyper: SEHyper, capacity: int):
        self.inputs = np.asarray(inputs, float)
        self.sq_norms = (self.inputs**2).sum(1)
        self.hyper = hyper
        n = self.inputs.shape[0]
        self.V = np.empty((capacity, n))
        self.a = np.empty(capacity)
        self.idx = np.empty(capacity, dtype=int)
        self.y = np.empty(capacity)
        self.t = 0
        self.mean = np.zeros(n)
        self.sumsq = np.zeros(n)

    def _kernel_row(self, i: int, out: np.ndarray) -> np.ndarray:
        """k(candidate i, every candidate) written into ``out`` (n,).

        The same floating-point operations, in the same order, as
        ``s2 * exp(-0.5 * max(|x|^2 + |x_i|^2 - 2 x . x_i, 0) / l^2)`` (doubling is exact), in place: the
        hot path of every GP-UCB step on large candidate sets.
        """
        np.add(self.sq_norms, self.sq_norms[i], out=out)
        cross = self.inputs @ self.inputs[i]
        cross *= 2.0
        out -= cross
        np.maximum(out, 0.0, out=out)
        out *= -0.5
        out /= self.hyper.lengthscale**2
        np.exp(out, out=out)
        out *= self.hyper.signal_var
        return out

    @property
    def variance(self) -> np.ndarray:
        return np.maximum(self.hyper.signal_var - self.sumsq, 0.0)

    def sd(self) -> np.ndarray:
        """The posterior standard deviation of every candidate (the square root of :attr:`variance`)."""
        out = np.subtract(self.hyper.signal_var, self.sumsq)
        np.maximum(out, 0.0, out=out)
        return np.sqrt(out, out=out)

    def add(self, i: int, y: float) -> None:
        """Condition on the noisy observation ``y`` at candidate ``i``."""
        t = self.t
        col = self.V[:t, i]
        pivot = self.hyper.signal_var + self.hyper.noise_var - col @ col
        pivot = math.sqrt(max(pivot, 1e-12 * self.hyper.signal_var))
        a_new = (y - col @ self.a[:t]) / pivot
        row = self._kernel_row(i, self.V[t])        # the new row of V, built where it is kept
        row -= col @ self.V[:t]
        row /= pivot
        self.a[t], self.idx[t], self.y[t] = a_new, i, y
        scratch = np.multiply(row, a_new)
        self.mean += scratch
        np.multiply(row, row, out=scratch)
        self.sumsq += scratch
        self.t = t + 1

    def refit(self, hyper: SEHyper) -> None:
        """Recompute the posterior from scratch under new hyperparameters."""
        from scipy.linalg import cholesky, solve_triangular

        t, self.hyper = self.t, hyper
        obs = self.inputs[self.idx[:t]]
        K = se_kernel(obs, obs, hyper) + hyper.noise_var * np.eye(t)
        L = cholesky(K + 1e-12 * hyper.signal_var * np.eye(t), lower=True)
        Kx = hyper.signal_var * np.exp(-0.5 * sq_dists(obs, self.inputs) / hyper.lengthscale**2)
        self.V[:t] = solve_triangular(L, Kx, lower=True)
        self.a[:t] = solve_triangular(L, self.y[:t], lower=True)
        self.mean = self.V[:t].T @ self.a[:t]
        self.sumsq = (self.V[:t] ** 2).sum(0)


@dataclass(frozen=True)
class UcbTrace:
    """What one GP-UCB run did: queried rows and the noiseless values seen."""

    queries: np.ndarray       # (n_init + T,) row indices, initial points first
    values: np.ndarray        # f at those rows (noiseless, for regret)
    hypers: tuple             # hyperparameters in force at each BO iteration


def run_gp_ucb(inputs: np.ndarray, f: np.ndarray, noise_var: float, hyper: SEHyper, init: np.ndarray,
               iterations: int, delta_prime: float, rng: np.random.Generator, *,
               refit_every: int = 0, on_iteration: Callable[[int], None] | None = None) -> UcbTrace:
    """GP-UCB on the rows of ``inputs`` (Algorithm 2), querying the curator by row index.

    Parameters
    ----------
    inputs : array (n, k)
        What the modeler sees: the released Z (PO-GP-UCB) or the original X (baseline).
    f : array (n,)
        The curator's noiseless objective values, row-aligned with ``inputs``.
    noise_var : float
        Variance of the noise on each answer of the curator.
    hyper : SEHyper
        Kernel hyperparameters (shared from the curator's ML fit, or the starting
        point of the modeler's own fits when ``refit_every`` > 0).
    init : int array
        Rows queried before the first GP-UCB iteration.
    iterations : int
        T, the number of GP-UCB iterations.
    delta_prime : float
        delta' of beta_t (the paper uses delta_ucb / 2 with delta_ucb = 0.05).
    rng : numpy.random.Generator
        Noise of the curator's answers.
    refit_every : int
        0: keep ``hyper``; k > 0: the modeler refits the hyperparameters by
        maximum likelihood on its own observations every k iterations.
    """
    n = inputs.shape[0]
    init = np.asarray(init, dtype=int)
    post = GPPosterior(inputs, hyper, capacity=init.size + iterations)
    noise_sd = math.sqrt(noise_var)
    for i in init:
        post.add(int(i), f[i] + noise_sd * rng.standard_normal())
    betas = beta(np.arange(1, iterations + 1), n, delta_prime)
    hypers = []
    for t in range(1, iterations + 1):
        checkpoint()
        if refit_every and (t - 1) % refit_every == 0 and post.t >= 3:
            post.refit(fit_isotropic(post.inputs[post.idx[:post.t]], post.y[:post.t],
                                     lengthscale_guess=post.hyper.lengthscale, n_lengthscales=12))
        hypers.append(post.hyper)
        ucb = post.sd()
        ucb *= math.sqrt(betas[t - 1])
        ucb += post.mean        # mean + sqrt(beta) sd, as Algorithm 2 line 3 (addition commutes exactly)
        i = int(np.argmax(ucb))
        post.add(i, f[i] + noise_sd * rng.standard_normal())
        if on_iteration is not None:
            on_iteration(t)
    queries = post.idx[: post.t].copy()
    return UcbTrace(queries=queries, values=np.asarray(f)[queries], hypers=tuple(hypers))


def simple_regret(trace: UcbTrace, f_max: float, n_init: int) -> np.ndarray:
    """S_t = f* - best f among the initial points and the first t queries, t = 1..T."""
    best = np.maximum.accumulate(trace.values)
    return f_max - best[n_init:]
