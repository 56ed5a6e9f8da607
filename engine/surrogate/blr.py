"""Bayesian linear regression on random features, for many agents at once.

With prior ``omega ~ N(0, I)`` and observation noise variance lambda, the
posterior after t observations is ``N(nu_t, lambda Sigma_t^-1)`` with
``Sigma_t = Phi_t^T Phi_t + lambda I`` and ``nu_t = Sigma_t^-1 Phi_t^T y_t``
(DP-FTS-DE paper eq. 2, FTS paper eqs. 2-3).

Every model receives one observation per step (agents query in lockstep), so
the state is a stack of K models: ``Sigma^-1`` (K, M, M), ``Phi^T y`` (K, M)
and the feature history (K, capacity, M).

Speed: ``Sigma^-1`` is kept by Sherman-Morrison rank-one updates, and a
posterior sample needs no factorisation: with ``xi1 ~ N(0, I_M)`` and
``xi2 ~ N(0, I_t)``,

    omega = Sigma^-1 (Phi^T y + lambda xi1 + sqrt(lambda) Phi^T xi2)

has mean ``nu`` and covariance ``Sigma^-1 (lambda^2 I + lambda Phi^T Phi) Sigma^-1
= lambda Sigma^-1``, exactly the posterior. In numpy a batched Cholesky or solve
costs 10-50x more (one LAPACK call per small matrix).

The rank-one updates are applied lazily: ``Sigma^-1 = C0 - W W^T`` with the
recent updates as columns of W (K, M, k), folded into C0 every ``fold_every``
observations. An observation then costs one pass over C0 (for ``C0 phi``)
instead of the five or six of an explicit update, which matters because the
K x M x M stack (20 MB for 1000 agents at M = 50) is the largest array touched
per iteration. Measured drift of the rank-one updates after 200 observations:
relative 1e-13 at lambda = 0.01 and 1e-9 at lambda = 1e-6 (condition numbers up
to 1e8), below the error of a direct solve; ``refresh()`` recomputes the
inverse exactly if ever needed.
"""

from __future__ import annotations

import numpy as np

from engine.cancel import checkpoint, work_slices
from engine.validation import check_int, check_positive


class BatchedBlr:
    """K independent BLR posteriors over the same M features.

    Parameters
    ----------
    n_models : int
        K, e.g. runs x agents.
    n_features : int
        M.
    noise_var : float
        lambda, the regulariser / observation noise variance of eq. (2).
    capacity : int
        Largest number of observations per model.
    fold_every : int
        Pending rank-one updates kept apart from C0 before they are folded in
        (16 was fastest at M = 50; 8 and 32 within 10 %).
    """

    def __init__(self, n_models: int, n_features: int, noise_var: float, capacity: int, *, fold_every: int = 16):
        self.n_models = check_int("number of models", n_models, 1)
        self.n_features = check_int("number of random features M", n_features, 1)
        self.noise_var = check_positive("noise variance", noise_var)
        self.capacity = check_int("capacity", capacity, 1)
        self.fold_every = check_int("fold period", fold_every, 1)
        eye = np.eye(n_features) / noise_var
        self._base = np.empty((n_models, n_features, n_features))                                  # C0
        for part in work_slices(n_models, n_features * n_features):    # large stacks take a while to fill
            self._base[part] = eye
        self._pending = np.zeros((n_models, n_features, self.fold_every))  # W: Sigma^-1 = C0 - W W^T
        self._n_pending = 0
        self.phi_y = np.zeros((n_models, n_features))
        self.phi = np.zeros((n_models, capacity, n_features))
        for part in work_slices(n_models, capacity * n_features):
            self.phi[part] = 0.0        # touch the history now, in chunks (huge pages would zero it all at once later)
        self.y = np.zeros((n_models, capacity))
        self.count = 0

    def _apply(self, x: np.ndarray) -> np.ndarray:
        """Sigma^-1 x for x of shape (K, M, s)."""
        K, M, s = x.shape
        out = np.empty((K, M, s))
        # In chunks of models, with a cancel checkpoint between them (one chunk for small stacks).
        for part in work_slices(K, M * M * s):
            base, xs = self._base[part], x[part]
            # One batched matrix-vector product per column: numpy's batched matmul is 3-5x
            # slower per column when given several columns at once (no gemv path).
            out[part] = np.concatenate([np.matmul(base, xs[:, :, j:j + 1]) for j in range(s)], axis=2)
            if self._n_pending:
                W = self._pending[part, :, :self._n_pending]
                out[part] -= np.matmul(W, np.matmul(np.swapaxes(W, 1, 2), xs))
        return out

    def _fold(self) -> None:
        M = self.n_features
        for part in work_slices(self.n_models, M * M * self._n_pending):
            W = self._pending[part, :, :self._n_pending]
            self._base[part] -= np.matmul(W, np.swapaxes(W, 1, 2))
        self._n_pending = 0

    @property
    def covariance(self) -> np.ndarray:
        """Sigma_t^-1, (K, M, M)."""
        W = self._pending[:, :, :self._n_pending]
        return self._base - np.matmul(W, np.swapaxes(W, 1, 2))

    def add(self, phi: np.ndarray, y: np.ndarray) -> None:
        """Add one observation to every model: ``phi`` (K, M), ``y`` (K,)."""
        phi = np.asarray(phi, dtype=float)
        y = np.asarray(y, dtype=float)
        if self.count >= self.capacity:
            raise ValueError(f"capacity of {self.capacity} observations exceeded")
        self.phi[:, self.count] = phi
        self.y[:, self.count] = y
        self.count += 1
        self.phi_y += phi * y[:, None]
        # Sherman-Morrison: (A + p p^T)^-1 = A^-1 - (A^-1 p)(A^-1 p)^T / (1 + p^T A^-1 p), kept as a new column of W.
        u = self._apply(phi[:, :, None])[:, :, 0]
        denom = 1.0 + np.einsum("km,km->k", phi, u)
        self._pending[:, :, self._n_pending] = u / np.sqrt(denom)[:, None]
        self._n_pending += 1
        if self._n_pending == self.fold_every:
            self._fold()

    def add_batch(self, phi: np.ndarray, y: np.ndarray) -> None:
        """Add ``n`` observations to every model: ``phi`` (K, n, M), ``y`` (K, n)."""
        for j in range(np.shape(phi)[1]):
            checkpoint()
            self.add(phi[:, j], y[:, j])

    def replace_values(self, y: np.ndarray) -> None:
        """Replace the values of every observation so far, ``y`` (K, count) (e.g. re-standardised); the
        features, and so Sigma^-1, stay."""
        self.y[:, :self.count] = y
        self.phi_y = np.einsum("knm,kn->km", self.phi[:, :self.count], self.y[:, :self.count])

    @property
    def precision(self) -> np.ndarray:
        """Sigma_t = Phi^T Phi + lambda I, (K, M, M)."""
        phi = self.phi[:, :self.count]
        return np.matmul(np.swapaxes(phi, 1, 2), phi) + self.noise_var * np.eye(self.n_features)

    def refresh(self) -> None:
        """Recompute ``Sigma^-1`` exactly from the history (symmetrised)."""
        inverse = np.linalg.inv(self.precision)
        self._base = 0.5 * (inverse + np.swapaxes(inverse, 1, 2))
        self._n_pending = 0

    @property
    def mean(self) -> np.ndarray:
        """nu_t for every model, (K, M)."""
        return self._apply(self.phi_y[:, :, None])[:, :, 0]

    def sample(self, rng: np.random.Generator, n_samples: int = 1) -> np.ndarray:
        """Independent draws of omega from every posterior, shape (K, n_samples, M)."""
        K, M, t = self.n_models, self.n_features, self.count
        lam = self.noise_var
        rhs = self.phi_y[:, :, None] + lam * rng.standard_normal((K, M, n_samples))
        if t:
            xi = rng.standard_normal((K, t, n_samples))
            for part in work_slices(K, M * t * n_samples):
                history = np.swapaxes(self.phi[part, :t], 1, 2)              # Phi^T, (k, M, t)
                for j in range(n_samples):                                   # matrix-vector products (see _apply)
                    rhs[part, :, j:j + 1] += np.sqrt(lam) * np.matmul(history, xi[part, :, j:j + 1])
        return np.swapaxes(self._apply(rhs), 1, 2)


class DualBlr:
    """The same K posteriors as :class:`BatchedBlr`, kept in the n-dimensional dual form.

    While a model has fewer observations than features (n <= M, e.g. the
    landmine setting: at most 70 observations, M = 100), the posterior is
    cheaper through G = Phi Phi^T + lambda I (n x n) than through the M x M
    Sigma: its inverse grows by one bordered row per observation
    (:func:`engine.surrogate.linalg.append_inverse`, O(n^2)) and a sample is
    Matheron's rule

        omega = w0 + Phi^T G^-1 (y - Phi w0 - sqrt(lambda) eps),  w0 ~ N(0, I_M), eps ~ N(0, I_n),

    exactly N(nu, lambda Sigma^-1): the same distribution as the primal form.
    Same interface as :class:`BatchedBlr`; :func:`batched_blr` picks the cheaper one.
    """

    def __init__(self, n_models: int, n_features: int, noise_var: float, capacity: int):
        self.n_models = check_int("number of models", n_models, 1)
        self.n_features = check_int("number of random features M", n_features, 1)
        self.noise_var = check_positive("noise variance", noise_var)
        self.capacity = check_int("capacity", capacity, 1)
        self.phi = np.zeros((n_models, capacity, n_features))
        self.y = np.zeros((n_models, capacity))
        self._buffer = np.zeros((n_models, capacity, capacity))    # [:n, :n] holds G^-1
        self.count = 0

    def add(self, phi: np.ndarray, y: np.ndarray) -> None:
        """Add one observation to every model: ``phi`` (K, M), ``y`` (K,)."""
        from engine.surrogate.linalg import append_inverse

        phi = np.asarray(phi, dtype=float)
        if self.count >= self.capacity:
            raise ValueError(f"capacity of {self.capacity} observations exceeded")
        n = self.count
        column = np.einsum("knm,km->kn", self.phi[:, :n], phi)
        corner = np.einsum("km,km->k", phi, phi) + self.noise_var
        append_inverse(self._buffer, n, column, corner)
        self.phi[:, n] = phi
        self.y[:, n] = np.asarray(y, dtype=float)
        self.count = n + 1

    def add_batch(self, phi: np.ndarray, y: np.ndarray) -> None:
        """Add ``n`` observations to every model: ``phi`` (K, n, M), ``y`` (K, n)."""
        for j in range(np.shape(phi)[1]):
            self.add(phi[:, j], y[:, j])

    def replace_values(self, y: np.ndarray) -> None:
        """Replace the values of every observation so far, ``y`` (K, count); G^-1 depends on the features only."""
        self.y[:, :self.count] = y

    @property
    def _inverse(self) -> np.ndarray:
        return self._buffer[:, :self.count, :self.count]

    @property
    def precision(self) -> np.ndarray:
        """Sigma_t = Phi^T Phi + lambda I, (K, M, M)."""
        phi = self.phi[:, :self.count]
        return np.matmul(np.swapaxes(phi, 1, 2), phi) + self.noise_var * np.eye(self.n_features)

    @property
    def covariance(self) -> np.ndarray:
        """Sigma_t^-1 = (I - Phi^T G^-1 Phi) / lambda, (K, M, M)."""
        phi = self.phi[:, :self.count]
        inner = np.matmul(np.swapaxes(phi, 1, 2), np.matmul(self._inverse, phi))
        return (np.eye(self.n_features) - inner) / self.noise_var

    @property
    def mean(self) -> np.ndarray:
        """nu_t = Phi^T G^-1 y for every model, (K, M)."""
        n = self.count
        beta = np.einsum("kij,kj->ki", self._inverse, self.y[:, :n])
        return np.einsum("knm,kn->km", self.phi[:, :n], beta)

    def refresh(self) -> None:
        """Recompute G^-1 exactly from the history."""
        phi = self.phi[:, :self.count]
        G = np.matmul(phi, np.swapaxes(phi, 1, 2)) + self.noise_var * np.eye(self.count)
        self._buffer[:, :self.count, :self.count] = np.linalg.inv(G)

    def sample(self, rng: np.random.Generator, n_samples: int = 1) -> np.ndarray:
        """Independent draws of omega from every posterior, shape (K, n_samples, M)."""
        K, M, n = self.n_models, self.n_features, self.count
        prior = rng.standard_normal((K, n_samples, M))
        if not n:
            return prior
        phi = self.phi[:, :n]
        noise = rng.standard_normal((K, n_samples, n))
        resid = self.y[:, None, :n] - np.matmul(prior, np.swapaxes(phi, 1, 2)) - np.sqrt(self.noise_var) * noise
        beta = np.matmul(resid, self._inverse)                          # G^-1 is symmetric
        return prior + np.matmul(beta, phi)


def batched_blr(n_models: int, n_features: int, noise_var: float, capacity: int):
    """K BLR posteriors in the cheaper form: dual while every model keeps at most M observations."""
    cls = DualBlr if capacity <= n_features else BatchedBlr
    return cls(n_models, n_features, noise_var, capacity)
