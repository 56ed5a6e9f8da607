"""The synthetic setting of the FTS paper (Sec. 5.1): one target agent and N other agents at distance d_n.

The target's function f is a GP draw (SE kernel, lengthscale 0.03) on an
equally spaced grid of 1000 points in [0, 1], scaled to [0, 1] (Sec. 5.1:
"sampled from a GP ... defined on a 1-D discrete domain within [0, 1] ...
and scaled into the range [0, 1]"). Every other agent n has
g_n = f + d_n h_n, where h_n is an independent draw from the same GP scaled
to [-1, 1], so that max_x |f(x) - g_n(x)| = d_n exactly: the paper's
definition of d_n (Sec. 2), with every g_n as smooth as f (bounded RKHS norm,
the theory's assumption). The paper's appendix, which would say how the
authors built g_n, is not in the text we have, and the authors' public code
covers the landmine experiment only; this construction is our reading.

Agent 0 is the target; agents 1..N are the others. Observation noise and the
agents' GP settings are those of the DP-FTS-DE synthetic task by the same
authors (noise variance 0.01, lengthscale 0.03).
"""

from __future__ import annotations

import numpy as np

from engine.objectives.base import TableObjective
from engine.objectives.synthetic import GRID_SIZE, LENGTHSCALE, NOISE_VAR, _gp_draws
from engine.validation import check_int, check_range

DEFAULT_OTHERS = 50   # Sec. 5.1: N = 50


def fts_synthetic_values(n_others: int, dissimilarity: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid (C,) and the noiseless values (1 + N, C): row 0 the target, rows 1..N the others."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(0.0, 1.0, GRID_SIZE)
    target = _gp_draws(GRID_SIZE, 1, rng)[0]
    others = target + dissimilarity * (2.0 * _gp_draws(GRID_SIZE, n_others, rng) - 1.0)
    return grid, np.vstack([target[None, :], others])


def build(n_others: int | None = None, dissimilarity: float = 0.02, seed: int = 0) -> TableObjective:
    """The FTS paper's synthetic objective with ``n_others`` other agents at distance ``dissimilarity``."""
    n_others = DEFAULT_OTHERS if n_others is None else check_int("agents", n_others, 1, name="number of agents N")
    dissimilarity = check_range("dissimilarity", dissimilarity, 0, None, name="dissimilarity d_n")
    seed = check_int("objective_seed", seed, 0, name="objective seed")
    grid, values = fts_synthetic_values(n_others, dissimilarity, seed)
    return TableObjective(candidates=grid[:, None], values=values, name="synthetic", n_agents=n_others + 1, dim=1,
                          noise_std=float(np.sqrt(NOISE_VAR)), reference=values.max(axis=1),
                          metric_label="simple regret", lengthscale=LENGTHSCALE, noise_var=NOISE_VAR,
                          own_gp_prior=(LENGTHSCALE, 1.0, NOISE_VAR), own_refit_every=0,
                          description=f"target GP sample and {n_others} others at d_n = {dissimilarity:g} "
                                      "(FTS paper Sec. 5.1)")
