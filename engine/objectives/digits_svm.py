"""Digits (scikit-learn's bundled 8 x 8 handwritten digits): an RBF SVM per agent.

No download needed. The 1,797 images (pixels scaled to [0, 1]) are divided
among the agents by a per-class Dirichlet(alpha) partition (every agent holds
at least 2 images of every digit; small alpha gives skewed label mixes and
sizes). Each agent splits its share in half, stratified, and tunes an RBF SVM:

- ``x[0]`` -> C in [1e-2, 1e3], log scale,
- ``x[1]`` -> gamma in [1e-3, 10], log scale,

scored by validation accuracy; the metric is validation error ``1 - best
accuracy so far``. Defaults: 10 agents, alpha = 0.5, a 50 x 50 grid.
"""

from __future__ import annotations

import functools

import numpy as np

from engine.objectives.datasets import agent_splits, array_digest
from engine.objectives.rbf_svm import RbfSvmTask
from engine.objectives.task_objective import objective_for
from engine.validation import check_int, check_positive

C_RANGE = (1e-2, 1e3)
GAMMA_RANGE = (1e-3, 10.0)
DEFAULT_AGENTS = 10
DEFAULT_ALPHA = 0.5
MIN_PER_CLASS = 2
DEFAULT_GRID = 50
# SE lengthscale of the shared random features on [0, 1]^2: maximum-likelihood GP fits
# (SE + white noise, 300 random candidates of each of the 10 default agents) gave 0.10-0.14.
LENGTHSCALE = 0.1
NOISE_VAR = 1e-4  # accuracies move in steps of 1 / (validation size) ~ 0.01


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    data = load_digits()
    features, labels = data.data / 16.0, data.target.astype(int)
    features.flags.writeable = labels.flags.writeable = False  # shared by every task built in this process
    return features, labels


def make_task(n_agents: int | None = None, alpha: float | None = None, seed: int = 0,
              data_dir: str | None = None) -> RbfSvmTask:
    """The digits task; ``data_dir`` is unused (the data ship with scikit-learn)."""
    count = DEFAULT_AGENTS if n_agents is None else check_int("agents", n_agents, 1, name="number of agents N")
    alpha = DEFAULT_ALPHA if alpha is None else check_positive("alpha", alpha, name="heterogeneity alpha")
    seed = check_int("objective_seed", seed, 0, name="objective seed")
    features, labels = _digits()
    agents = agent_splits(features, labels, count, alpha, seed, MIN_PER_CLASS)
    return RbfSvmTask(
        name="digits-svm", agents=tuple(agents), c_range=C_RANGE, gamma_range=GAMMA_RANGE, metric="accuracy",
        metric_label="validation error", lengthscale=LENGTHSCALE, noise_var=NOISE_VAR, default_grid=DEFAULT_GRID,
        data_definition={"data_sha256": array_digest(features, labels), "features": "pixels/16",
                         "partition": "dirichlet-labels", "alpha": alpha, "min_per_class": MIN_PER_CLASS,
                         "split": "stratified-half", "split_seed": seed},
        summary=f"Digits: RBF SVM per agent, {count} agents, Dirichlet alpha = {alpha:g}, validation accuracy")


def build(n_agents=None, alpha=None, seed=0, data_dir=None, domain="table"):
    """The digits objective (see module docstring) on the table or continuous domain."""
    return objective_for(make_task(n_agents, alpha, seed, data_dir), domain)
