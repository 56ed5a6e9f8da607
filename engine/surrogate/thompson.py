"""Each agent's own GP posterior and its Thompson samples, for K agents (runs x agents) at once.

This is the surrogate an agent uses for itself; nothing here is ever sent to
the server, so privacy never touches it. (What crosses the wire comes from
the shared random features: :mod:`engine.surrogate.blr`.)

Every model is an exact zero-mean GP with the SE kernel on its own
observations (:mod:`engine.surrogate.gp`); its hyperparameters are re-fitted by
maximum marginal likelihood whenever the number of observations is a multiple
of ``refit_every`` (the authors' ``gp_opt_schedule = 5``,
landmine_dp_fts_de.py:88 and bayesian_optimization_dp_fts_de.py:139), or kept
fixed when ``refit_every`` is 0. A Thompson sample, evaluated on the candidate
set, comes from one of two samplers:

``authors``
    What the authors' code does in every iteration that uses the agent's own
    sample (bayesian_optimization_dp_fts_de.py:169-206): draw M fresh random
    Fourier features from the learned lengthscale, normalise every feature
    vector to norm sqrt(v) (lines 189-192), floor the noise at 1e-5 (line 175)
    and sample omega ~ N(nu, lambda Sigma^-1) of the Bayesian linear regression
    on those features (lines 196-201); the sample is phi(x)^T omega. We draw
    omega with Matheron's rule in the n-dimensional dual form, exact in
    distribution and cheaper than the M x M form while n < M.
``pathwise``
    Pathwise conditioning (Wilson et al., ICML 2020): a prior sample from M
    random features, corrected by the exact GP update
    f(x) = f0(x) + k(x, X)(K + s I)^-1 (y - f0(X) - eps), eps ~ N(0, s I). The
    posterior is exact; only the prior draw is approximate.
"""

from __future__ import annotations

import numpy as np

from engine.surrogate.candidates import CandidateSet
from engine.surrogate.gp import SeHyperparameters, fit_hyperparameters, se_correlation
from engine.surrogate.linalg import append_inverse, cho_solve, safe_cholesky
from engine.validation import check_choice, check_int, check_positive

OWN_SAMPLERS = ("authors", "pathwise")
NOISE_FLOOR = 1e-5          # bayesian_optimization_dp_fts_de.py:175: obs_noise = max(1e-5, fitted noise)
CHUNK = 16                  # models whose candidate sums are computed together (they stay in cache)
SOLVE_CHUNK = 64            # models whose posterior weights are solved together (their arrays stay in cache)
FIT_CHUNK = 512             # models whose hyperparameters are fitted together (bounds (B, n, n) temporaries)
FIRST_FIT_STEPS = 4         # Fisher-scoring steps of the first fit (cheap: few observations)
REFIT_STEPS = 1             # later fits start from the previous fit, which is close


class OwnGp:
    """K exact SE-kernel GPs, one per agent, with their hyperparameters and Thompson samples.

    Parameters
    ----------
    n_models, dim, capacity : int
        K models on [0, 1]^dim, each holding at most ``capacity`` observations.
    prior : SeHyperparameters
        The hyperparameters before the first fit (and forever when ``refit_every`` is 0).
    refit_every : int
        Re-fit when the number of observations is a positive multiple of this; 0: never.
    sampler : {"authors", "pathwise"}
    n_features : int
        Random features per sample (the authors' M_target = 100, landmine_dp_fts_de.py:14).
    noise_floor : float
        Smallest noise variance used when sampling.
    """

    def __init__(self, n_models: int, dim: int, capacity: int, prior: SeHyperparameters, *, refit_every: int = 5,
                 sampler: str = "authors", n_features: int = 100, noise_floor: float = NOISE_FLOOR):
        self.n_models = check_int("number of models", n_models, 1)
        self.dim = check_int("input dimension", dim, 1)
        self.capacity = check_int("capacity", capacity, 1)
        self.refit_every = check_int("refit period", refit_every, 0)
        self.sampler = check_choice("own sampler", sampler, OWN_SAMPLERS)
        self.n_features = check_int("number of own random features", n_features, 1)
        self.noise_floor = check_positive("noise floor", noise_floor)
        self.theta = np.broadcast_to(prior.log(), (n_models, 3)).copy()
        self.X = np.zeros((n_models, capacity, dim))
        self.y = np.zeros((n_models, capacity))
        self.sqdist = np.zeros((n_models, capacity, capacity))
        self.count = 0
        self.fits = 0
        self._fitted_at = None
        # > 0: the last samples' features and weights, and each model's ``keep_best`` best candidates, stay in
        # ``last_sample`` (the query optimiser's ablation refines the samples from there, engine.fbo.refine)
        self.keep_best = 0
        self.last_sample = None
        self._inverse = None       # pathwise: (K, capacity, capacity); [:n, :n] inverts v R + s I

    @property
    def hyperparameters(self) -> SeHyperparameters:
        return SeHyperparameters.from_log(self.theta)

    # ------------------------------------------------------------------ data
    def add(self, X: np.ndarray, y: np.ndarray) -> None:
        """One observation per model: X (K, D), y (K,)."""
        X = np.asarray(X, dtype=float).reshape(self.n_models, self.dim)
        n = self.count
        if n >= self.capacity:
            raise ValueError(f"capacity of {self.capacity} observations exceeded")
        self.X[:, n] = X
        self.y[:, n] = np.asarray(y, dtype=float).reshape(self.n_models)
        diff = self.X[:, :n + 1] - X[:, None, :]
        row = np.einsum("knd,knd->kn", diff, diff)
        self.sqdist[:, n, :n + 1] = row
        self.sqdist[:, :n + 1, n] = row
        if self._inverse is not None:
            ell, signal, noise = self._kernel()
            corr = se_correlation(row[:, :n], ell)
            append_inverse(self._inverse, n, corr * signal[:, None], signal + noise)
        self.count = n + 1

    def add_batch(self, X: np.ndarray, y: np.ndarray) -> None:
        """``n`` observations per model: X (K, n, D), y (K, n)."""
        for j in range(np.shape(y)[1]):
            self.add(X[:, j], y[:, j])

    def replace_values(self, y: np.ndarray) -> None:
        """Replace the values of every observation so far, ``y`` (K, count) (e.g. re-standardised); the inputs,
        the distances and the pathwise inverse (which depend on X and the hyperparameters only) stay."""
        self.y[:, :self.count] = y

    # ------------------------------------------------------------------ hyperparameters
    def refit_if_due(self) -> bool:
        """Fit the hyperparameters when the observation count is a multiple of ``refit_every``."""
        n = self.count
        if not self.refit_every or n < self.refit_every or n % self.refit_every or self._fitted_at == n:
            return False
        first = self._fitted_at is None
        for lo in range(0, self.n_models, FIT_CHUNK):
            part = slice(lo, lo + FIT_CHUNK)
            self.theta[part] = fit_hyperparameters(self.sqdist[part, :n, :n], self.y[part, :n], self.theta[part],
                                                   steps=FIRST_FIT_STEPS if first else REFIT_STEPS)
        self._fitted_at = n
        self.fits += 1
        self._inverse = None
        return True

    def _kernel(self, part=slice(None)):
        ell, signal, noise = np.exp(self.theta[part]).T
        return ell, signal, np.maximum(noise, self.noise_floor)

    def _build_inverse(self) -> None:
        n = self.count
        ell, signal, noise = self._kernel()
        C = se_correlation(self.sqdist[:, :n, :n], ell) * signal[:, None, None]
        C[:, np.arange(n), np.arange(n)] += noise[:, None]
        self._inverse = np.zeros((self.n_models, self.capacity, self.capacity))
        self._inverse[:, :n, :n] = np.linalg.inv(C)

    # ------------------------------------------------------------------ Thompson samples
    def sample(self, rng: np.random.Generator, candidates: CandidateSet) -> np.ndarray:
        """One posterior sample per model, evaluated at every candidate: (K, C).

        Re-fits first when a fit is due, as the authors' agent does before choosing its query.
        """
        out = np.empty((self.n_models, candidates.size))
        for rows, values in self._samples(rng, candidates, None):
            out[rows] = values
        return out

    def argmax(self, rng: np.random.Generator, candidates: CandidateSet, active: np.ndarray | None = None
               ) -> np.ndarray:
        """Index of the best candidate under one fresh posterior sample per model, (K,).

        ``active`` (K,) bool limits the work to the models that will use their sample (the
        others get index 0); the random numbers drawn do not depend on it.
        """
        out = np.zeros(self.n_models, dtype=int)
        for rows, values in self._samples(rng, candidates, active):
            out[rows] = np.argmax(values, axis=1)
            if self.keep_best:
                self.last_sample["best"][rows] = np.argpartition(values, -self.keep_best, axis=1)[:, -self.keep_best:]
        return out

    def _samples(self, rng, candidates, active):
        """Yield (model indices, their samples at the candidates) chunk by chunk."""
        if self.count == 0:
            raise ValueError("a GP needs at least one observation before it can be sampled")
        self.refit_if_due()
        K, M, n = self.n_models, self.n_features, self.count
        # Every random number is drawn up front, so results depend neither on chunk sizes nor on `active`.
        freq = rng.standard_normal((K, M, self.dim)) / np.exp(self.theta[:, 0])[:, None, None]
        phase = rng.uniform(0.0, 2.0 * np.pi, (K, M))
        prior = rng.standard_normal((K, M))
        noise = rng.standard_normal((K, n))
        models = np.arange(K) if active is None else np.flatnonzero(active)
        if self.sampler == "pathwise" and self._inverse is None:
            self._build_inverse()
        # First the small linear algebra of every model (in large chunks), then the candidate
        # sums in chunks small enough for the cache.
        weights = np.empty((len(models), M if self.sampler == "authors" else n))
        solve = self._authors_weights if self.sampler == "authors" else self._pathwise_weights
        for lo in range(0, len(models), SOLVE_CHUNK):
            rows = models[lo:lo + SOLVE_CHUNK]
            weights[lo:lo + len(rows)] = solve(rows, freq[rows], phase[rows], prior[rows], noise[rows])
        if self.keep_best:
            self.last_sample = dict(models=models, freq=freq[models], phase=phase[models], weights=weights,
                                    scale=np.sqrt(np.exp(self.theta[models, 1])),
                                    best=np.zeros((self.n_models, self.keep_best), dtype=int))
        evaluate = self._authors_values if self.sampler == "authors" else self._pathwise_values
        for lo in range(0, len(models), CHUNK):
            rows = models[lo:lo + CHUNK]
            yield rows, evaluate(rows, candidates, freq[rows], phase[rows], prior[rows], weights[lo:lo + len(rows)])

    def _features_at_observations(self, part, freq, phase):
        """cos(freq . x + phase) at every observation, (B, n, M)."""
        X = self.X[part, :self.count].astype(np.float32)
        if self.dim == 1:   # an outer product: the same single products as the matrix product, 3x faster
            angle = X * freq[:, :, 0].astype(np.float32)[:, None, :]
        else:
            angle = np.matmul(X, np.swapaxes(freq, 1, 2).astype(np.float32))
        angle += phase[:, None, :].astype(np.float32)
        return np.cos(angle).astype(float)

    def _authors_weights(self, part, freq, phase, prior, noise):
        """omega ~ N(nu, lam Sigma^-1) of the BLR on the fresh, normalised features, (B, M)."""
        ell, signal, lam = self._kernel(part)
        y = self.y[part, :self.count]
        cos = self._features_at_observations(part, freq, phase)
        # phi(x) = sqrt(v) raw(x) / |raw(x)|, raw = sqrt(2 / M) cos(...): the sqrt(2 / M) cancels.
        Phi = cos * (np.sqrt(signal)[:, None] / np.sqrt((cos * cos).sum(axis=2)))[:, :, None]
        # Matheron's rule: omega = w0 + Phi^T (Phi Phi^T + lam I)^-1 (y - Phi w0 - sqrt(lam) e).
        G = np.matmul(Phi, np.swapaxes(Phi, 1, 2))
        n = G.shape[1]
        G[:, np.arange(n), np.arange(n)] += lam[:, None]
        resid = y - np.matmul(Phi, prior[:, :, None])[:, :, 0] - np.sqrt(lam)[:, None] * noise
        beta = cho_solve(safe_cholesky(G), resid)
        return prior + np.matmul(np.swapaxes(Phi, 1, 2), beta[:, :, None])[:, :, 0]

    def _authors_values(self, part, candidates, freq, phase, prior, omega):
        """phi(x)^T omega at every candidate, with the same normalised features."""
        signal = np.exp(self.theta[part, 1])
        value, norm_sq = candidates.feature_sum(freq, phase, omega, norm_squared=True)
        return np.sqrt(signal)[:, None] * value / np.sqrt(norm_sq)

    def _pathwise_weights(self, part, freq, phase, prior, noise):
        """alpha = (K + s I)^-1 (y - f0(X) - eps) of the exact GP update, (B, n)."""
        ell, signal, lam = self._kernel(part)
        y = self.y[part, :self.count]
        scale = np.sqrt(2.0 * signal / self.n_features)
        f0_obs = scale[:, None] * np.matmul(self._features_at_observations(part, freq, phase),
                                            prior[:, :, None])[:, :, 0]
        resid = y - f0_obs - np.sqrt(lam)[:, None] * noise
        return np.matmul(self._inverse[part, :self.count, :self.count], resid[:, :, None])[:, :, 0]

    def _pathwise_values(self, part, candidates, freq, phase, prior, alpha):
        """f0(x) + k(x, X) alpha at every candidate."""
        ell, signal, _ = self._kernel(part)
        f0 = np.sqrt(2.0 * signal / self.n_features)[:, None] * candidates.feature_sum(freq, phase, prior)
        return f0 + signal[:, None] * candidates.kernel_sum(self.X[part, :self.count], alpha, ell)
