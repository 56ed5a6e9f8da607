"""Random Fourier features for the squared-exponential (SE) kernel.

With ``W ~ N(0, I / ell^2)`` and ``b ~ U(0, 2 pi)``, the features
``phi(x) = sqrt(2 / M) cos(x W + b)`` satisfy ``E[phi(x)^T phi(x')] =
exp(-|x - x'|^2 / (2 ell^2))`` (Rahimi & Recht), the unit-variance SE kernel
that both papers assume (``k(x, x') <= 1``). All agents of one run share the same
features (FTS paper, Sec. 2); different runs draw their own.

Every feature vector is then scaled to unit norm, ``phi(x) / |phi(x)|``: the
DP-FTS-DE analysis assumes ``|phi(x)|^2 = 1`` (App. A, eq. 20, step (a)), and
the authors' code normalises the shared features the same way
(bayesian_optimization_dp_fts_de.py:104 and helper_funcs_dp_fts_de.py:90), so
the norms of the vectors the server clips are the authors'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.validation import check_int, check_positive


@dataclass(frozen=True)
class RandomFeatures:
    """``n_sets`` independent sets of M features on [0, 1]^D.

    ``W``: (n_sets, D, M) frequencies, ``b``: (n_sets, M) phases.
    """

    W: np.ndarray
    b: np.ndarray
    normalised: bool = True

    @property
    def n_sets(self) -> int:
        return self.W.shape[0]

    @property
    def dim(self) -> int:
        return self.W.shape[1]

    @property
    def n_features(self) -> int:
        return self.W.shape[2]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Features of points.

        ``X`` of shape (C, D) gives the same points to every set: (n_sets, C, M).
        ``X`` of shape (n_sets, ..., D) gives each set its own points:
        (n_sets, ..., M).
        """
        X = np.asarray(X, dtype=float)
        if X.ndim == 2:
            out = np.cos(np.einsum("cd,sdm->scm", X, self.W) + self.b[:, None, :])
        else:
            if X.shape[0] != self.n_sets:
                raise ValueError(f"points for {X.shape[0]} feature sets, expected {self.n_sets}")
            flat = X.reshape(self.n_sets, -1, self.dim)
            out = np.cos(np.einsum("scd,sdm->scm", flat, self.W) + self.b[:, None, :])
        if self.normalised:
            out /= np.sqrt(np.einsum("scm,scm->sc", out, out))[:, :, None]
        else:
            out *= np.sqrt(2.0 / self.n_features)
        return out if X.ndim == 2 else out.reshape(*X.shape[:-1], self.n_features)


def sample_features(n_sets: int, dim: int, n_features: int, lengthscale: float,
                    rng: np.random.Generator, *, normalised: bool = True) -> RandomFeatures:
    """Draw ``n_sets`` independent sets of M random Fourier features for the SE kernel.

    Parameters
    ----------
    n_sets : int
        How many independent feature sets (one per simulated run).
    dim : int
        Input dimension D.
    n_features : int
        M, the number of features.
    lengthscale : float
        SE kernel lengthscale ell (inputs live in [0, 1]^D).
    rng : numpy.random.Generator
    normalised : bool
        Scale every feature vector to unit norm (the papers' and the authors' choice).
    """
    check_int("number of feature sets", n_sets, 1)
    check_int("input dimension", dim, 1)
    check_int("number of random features M", n_features, 1)
    check_positive("lengthscale", lengthscale)
    W = rng.normal(0.0, 1.0 / lengthscale, size=(n_sets, dim, n_features))
    b = rng.uniform(0.0, 2.0 * np.pi, size=(n_sets, n_features))
    return RandomFeatures(W=W, b=b, normalised=normalised)
