"""A proxy task a team describes in four numbers: dimension, lengthscale, noise and how different the agents are.

The synthetic task of the DP-FTS-DE paper (:mod:`engine.objectives.synthetic`) generalised: a base function
drawn from a GP with the squared-exponential kernel of the given ``lengthscale`` on a grid of [0, 1]^D, scaled
to [0, 1]; with ``heterogeneity`` alpha > 0 every agent mixes its own draw in (alpha f_n + (1 - alpha) f_base),
and every value carries the synthetic task's +-0.02 shift. Observations add Gaussian noise of standard deviation
``noise`` (in units of the functions' range, which is 1). Each agent's own GP keeps the generating lengthscale and
noise, as on the synthetic task, so the proxy with D = 1, lengthscale 0.03, noise 0.1 and alpha 0 is exactly
the synthetic task (the same values for the same seed).

The grid: 1000 points in 1-D, 32 x 32 in 2-D, 10^3 in 3-D, 6^4 in 4-D, 4^5 in 5-D and 3^6 in 6-D (the
engine's grid candidates make Thompson samples on a grid cheap). A draw on a grid is exact: the SE kernel of a
grid is the Kronecker product of one small kernel matrix per axis, so a draw is one small matrix square root per
axis applied along that axis (the 1-D grid of short lengthscales uses the synthetic task's circulant draw).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.blas import single_threaded_blas
from engine.objectives.base import TableObjective
from engine.objectives.synthetic import (CIRCULANT_MAX_LENGTHSCALE, GRID_SIZE, _gp_draws,
                                         mixed_values)
from engine.validation import check_int, check_range

MAX_DIMENSION = 6
GRID_POINTS = {1: GRID_SIZE, 2: 32, 3: 10, 4: 6, 5: 4, 6: 3}     # points per axis
MIN_LENGTHSCALE, MAX_LENGTHSCALE = 0.005, 2.0
MAX_NOISE = 1.0
JITTER = 1e-9


@dataclass(frozen=True)
class Proxy:
    """What a team says its objective looks like (each checked: one sentence naming the field)."""

    dimension: int = 1
    lengthscale: float = 0.03
    noise: float = 0.1
    heterogeneity: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "dimension", check_int("dimension", self.dimension, 1, MAX_DIMENSION,
                                                        name="dimension"))
        object.__setattr__(self, "lengthscale", check_range("lengthscale", self.lengthscale, MIN_LENGTHSCALE,
                                                            MAX_LENGTHSCALE, name="lengthscale"))
        object.__setattr__(self, "noise", check_range("noise", self.noise, 0, MAX_NOISE, name="noise"))
        object.__setattr__(self, "heterogeneity", check_range("heterogeneity", self.heterogeneity, 0, 1,
                                                              name="heterogeneity"))

    @property
    def noise_var(self) -> float:
        """The observation noise's variance (the surrogates' noise; at least 1e-6 so a noiseless proxy is stable),
        to 12 digits (0.1 gives the synthetic task's 0.01)."""
        return max(float(f"{self.noise ** 2:.12g}"), 1e-6)

    def describe(self) -> str:
        return (f"GP proxy in {self.dimension}-D (lengthscale {self.lengthscale:g}, noise {self.noise:g}, "
                f"heterogeneity {self.heterogeneity:g})")


SYNTHETIC_PROXY = Proxy()     # the synthetic task's own numbers


def grid_axes(dimension: int) -> list[np.ndarray]:
    """The proxy's grid: one even axis of [0, 1] per dimension."""
    return [np.linspace(0.0, 1.0, GRID_POINTS[int(dimension)])] * int(dimension)


@lru_cache(maxsize=16)
def _axis_root(points: int, lengthscale: float) -> np.ndarray:
    """A square root R of the SE kernel matrix on an even axis of ``points`` points (R R^T = K), by its
    eigendecomposition (kept: every seed of a proxy uses the same axes)."""
    axis = np.linspace(0.0, 1.0, points)
    gram = np.exp(-0.5 * ((axis[:, None] - axis[None, :]) / lengthscale) ** 2)
    with single_threaded_blas():        # a multithreaded eigh on a busy machine is ten times slower
        values, vectors = np.linalg.eigh(gram + JITTER * np.eye(points))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    root.setflags(write=False)
    return root


def root_axes(proxy: Proxy) -> tuple[int, ...]:
    """The axis lengths whose kernel roots a draw of ``proxy`` computes (none for the circulant 1-D draw)."""
    if proxy.dimension == 1 and proxy.lengthscale <= CIRCULANT_MAX_LENGTHSCALE:
        return ()
    return (GRID_POINTS[proxy.dimension],)


def grid_draws(axes: list[np.ndarray], lengthscale: float, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` GP draws on the grid of ``axes`` (count, C), each scaled to [0, 1]."""
    if len(axes) == 1 and lengthscale <= CIRCULANT_MAX_LENGTHSCALE and len(axes[0]) == GRID_SIZE:
        return _gp_draws(GRID_SIZE, count, rng, lengthscale)
    roots = [_axis_root(len(axis), float(lengthscale)) for axis in axes]
    shape = tuple(len(axis) for axis in axes)
    field = rng.standard_normal((count,) + shape)
    for d, root in enumerate(roots):        # (R_1 x ... x R_D) z, one axis at a time
        field = np.moveaxis(np.tensordot(field, root, axes=([d + 1], [1])), -1, d + 1)
    draws = field.reshape(count, -1)
    low = draws.min(axis=1, keepdims=True)
    high = draws.max(axis=1, keepdims=True)
    return (draws - low) / np.maximum(high - low, 1e-12)


def proxy_values(proxy: Proxy, n_agents: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid points (C, D) and every agent's noiseless values (N, C) of ``proxy`` drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    axes = grid_axes(proxy.dimension)
    mesh = np.meshgrid(*axes, indexing="ij")
    points = np.stack([m.ravel() for m in mesh], axis=1)
    values = mixed_values(lambda count: grid_draws(axes, proxy.lengthscale, count, rng), n_agents, len(points),
                          proxy.heterogeneity or None, rng)
    return points, values


def build(proxy: Proxy, n_agents: int, seed: int = 0) -> TableObjective:
    """The proxy's objective for ``n_agents`` agents, drawn with ``seed`` (a new function per seed)."""
    n_agents = check_int("agents", n_agents, 2, name="number of agents N")
    seed = check_int("objective_seed", seed, 0, name="objective seed")
    points, values = proxy_values(proxy, n_agents, seed)
    return TableObjective(candidates=points, values=values, name="proxy", n_agents=n_agents, dim=proxy.dimension,
                          noise_std=float(proxy.noise), reference=values.max(axis=1), metric_label="simple regret",
                          lengthscale=proxy.lengthscale, noise_var=proxy.noise_var,
                          own_gp_prior=(proxy.lengthscale, 1.0, proxy.noise_var), own_refit_every=0,
                          description=f"{proxy.describe()}, {n_agents} agents")
