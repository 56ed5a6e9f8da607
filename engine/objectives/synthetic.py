"""The synthetic setting of the DP-FTS-DE paper (App. B.1.1 and B.1.2).

A base function drawn from a GP with the SE kernel (lengthscale 0.03) on an
equally spaced grid of 1000 points in [0, 1], scaled to [0, 1]. Agent n's value
at each input is the base value shifted by +0.02 or -0.02 with equal
probability, independently per input. Observations carry Gaussian noise of
variance 0.01; the metric is simple regret (each agent's own maximum minus the
best value found).

Each agent's own GP keeps the generating values (the authors' synthetic code
is not public): lengthscale 0.03, noise variance 0.01 and signal variance 1
(their TS code notes "v_kernel is set to be 1 here in the synthetic
experiments", helper_funcs_ts.py:111); it is never re-fitted.

Heterogeneity (App. B.1.2): with ``alpha`` > 0 each agent draws its own GP
function f_n (scaled to [0, 1] like the base) and uses alpha f_n + (1 - alpha)
f_base. The paper states no perturbation for that experiment; we keep the
+-0.02 shifts on top so that alpha = 0 is exactly the B.1.1 setting and the
setting moves continuously with alpha (they are small next to alpha f_n).
``shifts=False`` (an ablation, engine.reproduce.ablations) drops them: the paper's mixing alone.
"""

from __future__ import annotations

import numpy as np

from engine.objectives.base import FunctionObjective, TableObjective
from engine.validation import check_choice, check_int, check_range

GRID_SIZE = 1000
DIM = 1                 # a function of [0, 1]
LENGTHSCALE = 0.03
SHIFT = 0.02
NOISE_VAR = 0.01
DEFAULT_AGENTS = 200
# The circulant draws are exact while the SE kernel has decayed at a lag of 1 (exp(-50) at 0.1).
CIRCULANT_MAX_LENGTHSCALE = 0.1


def _gp_draws(n_points: int, n_draws: int, rng: np.random.Generator, lengthscale: float = LENGTHSCALE
              ) -> np.ndarray:
    """``n_draws`` functions from GP(0, SE(lengthscale)) on an even grid of [0, 1], each scaled to [0, 1].

    Exact draws by circulant embedding (Dietrich & Newsam): the SE Gram matrix of
    an even grid is Toeplitz, so it is the top-left block of a circulant matrix
    whose eigenvalues are one FFT of its first row. O(C log C) per draw instead
    of a 1000 x 1000 Cholesky (which is slow under a busy multithreaded BLAS).
    The SE kernel has decayed to ~0 at half the embedding length (for lengthscales up to
    :data:`CIRCULANT_MAX_LENGTHSCALE`), so the eigenvalues are non-negative up to round-off (clipped at 0).
    """
    lags = np.arange(n_points) / (n_points - 1)
    first_row = np.exp(-0.5 * (lags / lengthscale) ** 2)
    embedding = np.concatenate([first_row, first_row[-2:0:-1]])
    m = embedding.size
    eigenvalues = np.clip(np.fft.fft(embedding).real, 0.0, None)
    pairs = (n_draws + 1) // 2  # real and imaginary parts are two independent draws
    white = rng.standard_normal((pairs, m)) + 1j * rng.standard_normal((pairs, m))
    field = np.fft.fft(np.sqrt(eigenvalues / m) * white, axis=1)[:, :n_points]
    draws = np.concatenate([field.real, field.imag])[:n_draws]
    low = draws.min(axis=1, keepdims=True)
    high = draws.max(axis=1, keepdims=True)
    return (draws - low) / (high - low)


def mixed_values(draws, n_agents: int, size: int, alpha: float | None, rng: np.random.Generator,
                 shifts: bool = True) -> np.ndarray:
    """Every agent's values (N, C) from ``draws(count)`` (count functions scaled to [0, 1], (count, C)): the
    base function, mixed with each agent's own draw by ``alpha``, plus the +-0.02 shifts (``shifts``)."""
    base = draws(1)[0]
    values = np.broadcast_to(base, (n_agents, size)).copy()
    if alpha:
        values = alpha * draws(n_agents) + (1.0 - alpha) * base
    if shifts:
        values += np.where(rng.random((n_agents, size)) < 0.5, SHIFT, -SHIFT)
    return values


def synthetic_values(n_agents: int, alpha: float | None, seed: int, shifts: bool = True
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The grid (C,) and every agent's noiseless values (N, C); ``shifts=False``: without the +-0.02 shifts."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(0.0, 1.0, GRID_SIZE)
    values = mixed_values(lambda count: _gp_draws(GRID_SIZE, count, rng), n_agents, GRID_SIZE, alpha, rng, shifts)
    return grid, values


def build(n_agents: int | None = None, alpha: float | None = None, seed: int = 0, data_dir=None,
          domain: str = "table", shifts: bool = True):
    """Build the synthetic objective (registry contract).

    Parameters
    ----------
    n_agents : int, optional
        Number of agents N (default 200, the paper's).
    alpha : float, optional
        Heterogeneity in [0, 1]; None or 0 is the homogeneous setting of App. B.1.1.
    seed : int
        Fixes the GP draws and the shifts.
    data_dir : ignored (nothing to read).
    domain : {"table", "continuous"}
        ``table``: the 1000-point grid; ``continuous``: the same functions on
        [0, 1], linearly interpolated between grid points.
    """
    n_agents = DEFAULT_AGENTS if n_agents is None else check_int("agents", n_agents, 1, name="number of agents N")
    if alpha is not None:
        alpha = check_range("alpha", alpha, 0, 1, name="heterogeneity alpha")
    seed = check_int("objective_seed", seed, 0, name="objective seed")
    check_choice("domain", domain, ("table", "continuous"))
    grid, values = synthetic_values(n_agents, alpha, seed, shifts)
    common = dict(name="synthetic", n_agents=n_agents, dim=DIM, noise_std=float(np.sqrt(NOISE_VAR)),
                  reference=values.max(axis=1), metric_label="simple regret", lengthscale=LENGTHSCALE,
                  noise_var=NOISE_VAR, own_gp_prior=(LENGTHSCALE, 1.0, NOISE_VAR), own_refit_every=0,
                  description=f"GP sample (SE, lengthscale {LENGTHSCALE}) on {GRID_SIZE} points, "
                              f"{n_agents} agents" + (f", alpha = {alpha:g}" if alpha else ""))
    if domain == "table":
        return TableObjective(candidates=grid[:, None], values=values, **common)

    def interpolate(agents: np.ndarray, X: np.ndarray) -> np.ndarray:
        # Piecewise linear, so the maximum over [0, 1] is the grid maximum (reference).
        pos = np.clip(X[:, 0], 0.0, 1.0) * (GRID_SIZE - 1)
        left = np.minimum(np.floor(pos).astype(int), GRID_SIZE - 2)
        frac = pos - left
        return (1.0 - frac) * values[agents, left] + frac * values[agents, left + 1]

    return FunctionObjective(fn=interpolate, **common)
