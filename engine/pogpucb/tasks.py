"""The optimisation tasks of PO-GP-UCB: a finite input set held by the curator and f on it.

Every task follows the paper's Section 4 set-up: inputs centred and scaled to a
maximal norm of 25, GP hyperparameters learned by maximum likelihood, regret
in units of the output's standard deviation.

* ``synthetic``: f drawn from a zero-mean GP (SE, l = 1.25, signal variance 1)
  on a 100 x 100 uniform grid; noise variance 1e-5. The paper does not give the
  grid's extent. On the unit square l = 1.25 makes f nearly linear (every
  method, private or not, finds the maximum: all regrets 0); read on the
  inputs scaled to norm 25 it makes 50 queries a random search (regret ~1.2).
  A grid over [0, 7.5]^2, six length-scales per side, gives the paper's
  magnitudes (non-private regret ~0, private 0.01-0.1 after 50 iterations).
  sigma_min / max-norm, hence the DP branch and the admissible r, do not
  depend on the extent.
* ``branin``: the Branin-Hoo function (negated, to be maximised) on a
  100 x 100 grid of [-5, 10] x [0, 15], standardised.
* ``diabetes``: scikit-learn's diabetes data (442 patients, 10 features) in
  place of the paper's private loan/property data; f = log disease progression,
  standardised. As the paper does for its real inputs, each feature is divided
  by its maximum-likelihood ARD length-scale so an isotropic kernel fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.pogpucb.gp import SEHyper, fit_ard_lengthscales, fit_isotropic
from engine.pogpucb.standins import STANDIN_TASKS, standin_task
from engine.blas import single_threaded_blas
from engine.validation import check_choice

MAX_NORM = 25.0          # Section 4: inputs normalised to a maximal norm of 25
SYNTHETIC_LENGTHSCALE = 1.25
SYNTHETIC_EXTENT = 7.5   # side of the square grid, in the units of the length-scale (see module docstring)
SYNTHETIC_NOISE_VAR = 1e-5
GRID_SIDE = 100
HYPER_FIT_POINTS = 300   # noisy evaluations the curator uses for its maximum-likelihood fit

TASKS = {
    "synthetic": "Synthetic GP on a 100 x 100 grid (paper Sec. 4)",
    "branin": "Branin-Hoo on a 100 x 100 grid (paper App. A)",
    "diabetes": "scikit-learn diabetes: 442 patients, 10 features (stands in for the private real data)",
    **STANDIN_TASKS,
}
# Paper defaults per task: r and delta < 1/n (Section 4).
TASK_DEFAULTS = {
    "synthetic": dict(r=10, delta=1e-5, log_epsilon=1.1),
    "branin": dict(r=10, delta=1e-5, log_epsilon=1.1),
    "diabetes": dict(r=5, delta=1e-3, log_epsilon=2.0),
    "loan-like": dict(r=15, delta=1e-5, log_epsilon=2.9),
    "property-like": dict(r=15, delta=1e-4, log_epsilon=2.8),
}


@dataclass(frozen=True, eq=False)
class PoTask:
    """A curator's data set: inputs X (n x d, centred, max norm 25) and f on every row."""

    name: str
    X: np.ndarray
    f: np.ndarray
    noise_var: float          # variance of the noise on the curator's answers
    hyper: SEHyper            # ML hyperparameters of the isotropic SE kernel on X
    description: str
    input_names: tuple = ()

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def f_max(self) -> float:
        return float(self.f.max())


def normalise_inputs(X: np.ndarray) -> np.ndarray:
    """Centre the columns and scale so that the largest row norm is ``MAX_NORM``."""
    X = np.asarray(X, float)
    Xc = X - X.mean(axis=0, keepdims=True)
    return Xc * (MAX_NORM / np.linalg.norm(Xc, axis=1).max())


def unit_grid(side: int = GRID_SIDE, extent: float = 1.0) -> np.ndarray:
    """The side x side uniform grid of [0, extent]^2, as (side^2, 2) rows (first coordinate slowest)."""
    g = np.linspace(0.0, extent, side)
    a, b = np.meshgrid(g, g, indexing="ij")
    return np.column_stack([a.ravel(), b.ravel()])


def sample_grid_gp(side: int, extent: float, lengthscale: float, signal_var: float,
                   rng: np.random.Generator) -> np.ndarray:
    """A draw of a zero-mean SE GP on the grid ``unit_grid(side, extent)``, flattened like it.

    The SE kernel factorises over coordinates, so on a grid the covariance is a
    Kronecker product K1 (x) K1 and a draw is ``A W A^T`` with ``A A^T = K1``:
    exact, without the 10^4 x 10^4 Cholesky. ``A`` is the symmetric square root
    from an eigendecomposition because K1 is numerically singular for long
    length-scales.
    """
    g = np.linspace(0.0, extent, side)
    K1 = np.exp(-0.5 * (g[:, None] - g[None, :]) ** 2 / lengthscale**2)
    lam, Q = np.linalg.eigh(K1)
    A = (Q * np.sqrt(np.clip(lam, 0.0, None))) @ Q.T
    W = rng.standard_normal((side, side))
    return np.sqrt(signal_var) * (A @ W @ A.T).ravel()


def branin(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    a, b, c, r, s, t = 1.0, 5.1 / (4 * np.pi**2), 5 / np.pi, 6.0, 10.0, 1 / (8 * np.pi)
    return a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * np.cos(x1) + s


DIABETES_FEATURES = ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")


def load_diabetes_arrays() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's diabetes data: 442 x 10 unscaled features and the disease-progression target."""
    from sklearn.datasets import load_diabetes

    data = load_diabetes(scaled=False)
    return np.asarray(data.data, dtype=float), np.asarray(data.target, dtype=float)


def _standardise(v: np.ndarray) -> np.ndarray:
    return (v - v.mean()) / v.std()


def _fit_hyper(X, f, noise_var, rng) -> SEHyper:
    """The curator's ML fit on a random subset of noisy evaluations of f."""
    m = min(HYPER_FIT_POINTS, len(f))
    idx = rng.choice(len(f), size=m, replace=False)
    y = f[idx] + np.sqrt(noise_var) * rng.standard_normal(m)
    return fit_isotropic(X[idx], y, rng)


def build_task(name: str, task_seed: int = 0, extent: float | None = None) -> PoTask:
    """Build (and memoise) the task ``name``; ``task_seed`` fixes the GP draw and the ML fit. ``extent``: the
    synthetic grid's side (None: :data:`SYNTHETIC_EXTENT`; other values are an ablation of that choice)."""
    check_choice("dataset", name, TASKS)
    with single_threaded_blas():
        return _build_task(name, int(task_seed), None if extent is None else float(extent))


@lru_cache(maxsize=64)     # a reproduction's 50 synthetic draws, each reused by every setting
def _build_task(name: str, task_seed: int, extent: float | None = None) -> PoTask:
    rng = np.random.default_rng([task_seed, 1729])
    if name == "synthetic":
        side = SYNTHETIC_EXTENT if extent is None else extent
        X = normalise_inputs(unit_grid(GRID_SIDE, side))
        f = sample_grid_gp(GRID_SIDE, side, SYNTHETIC_LENGTHSCALE, 1.0, rng)
        noise = SYNTHETIC_NOISE_VAR
        names = ("x1", "x2")
    elif name == "branin":
        grid = unit_grid()
        x1, x2 = -5 + 15 * grid[:, 0], 15 * grid[:, 1]
        X = normalise_inputs(np.column_stack([x1, x2]))
        f = _standardise(-branin(x1, x2))
        noise = SYNTHETIC_NOISE_VAR
        names = ("x1", "x2")
    elif name in STANDIN_TASKS:
        X, f, names = standin_task(name, rng)
        noise = SYNTHETIC_NOISE_VAR
    else:
        data, target = load_diabetes_arrays()
        f = _standardise(np.log(target))
        raw = (data - data.mean(0)) / data.std(0)
        ls = fit_ard_lengthscales(raw, f, rng)
        X = normalise_inputs(raw / ls)
        noise = SYNTHETIC_NOISE_VAR
        names = DIABETES_FEATURES
    X.setflags(write=False)
    f = np.asarray(f, float)
    f.setflags(write=False)
    return PoTask(name=name, X=X, f=f, noise_var=noise, hyper=_fit_hyper(X, f, noise, rng),
                  description=TASKS[name], input_names=names)
