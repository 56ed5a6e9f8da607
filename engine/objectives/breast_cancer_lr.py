"""Breast cancer (scikit-learn's bundled Wisconsin diagnostic set): logistic regression by SGD per agent.

No download needed. The 569 examples are divided among the agents by a
per-class Dirichlet(alpha) partition over the two labels (every agent holds at
least 5 examples of each class; small alpha gives skewed class balances and
sizes). Each agent splits its share in half, stratified, standardises the 30
inputs by the mean and standard deviation of its own training half (as the
DP-FTS-DE paper does for activity recognition, App. B.2.1) and tunes
logistic regression trained by minibatch SGD over three hyperparameters, as
the paper's activity-recognition task:

- ``x[0]`` -> batch size in [4, 32], log scale, rounded, at most the training size
  (the paper's [128, 512] is for a few hundred examples per agent; here agents hold
  about 30 training examples, so the range is scaled down to keep 1-8 steps per epoch),
- ``x[1]`` -> L2 regularisation in [1e-6, 10], log scale,
- ``x[2]`` -> learning rate in [1e-6, 1], log scale.

Training: weights start at zero, 20 epochs, every epoch a fresh shuffle drawn
from a generator seeded by ``(seed, agent, epoch)`` (the same order for every
hyperparameter setting), logistic-loss gradient averaged over the batch, and a
proximal L2 step ``w <- (w - lr * grad) / (1 + lr * l2)`` (the bias is not
regularised), which stays stable for any ``lr * l2``. Score: validation
accuracy; the metric is validation error. Defaults: 10 agents, alpha = 0.5, a
16^3 = 4,096-point grid.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from engine.objectives.datasets import SplitData, agent_splits, array_digest
from engine.objectives.task_objective import objective_for
from engine.objectives.tasks import SgdAgentTask, score_by_batch
from engine.validation import check_int, check_positive

BATCH_RANGE = (4.0, 32.0)
L2_RANGE = (1e-6, 10.0)
LR_RANGE = (1e-6, 1.0)
EPOCHS = 20
DEFAULT_AGENTS = 10
DEFAULT_ALPHA = 0.5
MIN_PER_CLASS = 5
DEFAULT_GRID = 16
# SE lengthscale of the shared random features on [0, 1]^3: maximum-likelihood GP fits
# (SE + white noise, 300 random candidates of each of the 10 default agents) gave
# 0.10-0.32, median about 0.24.
LENGTHSCALE = 0.2
NOISE_VAR = 1e-4
SCORER_VERSION = 1


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # no overflow for large |z|


def sgd_logistic_accuracy(data: SplitData, batch: int, l2: np.ndarray, lr: np.ndarray, seed: tuple,
                          epochs: int = EPOCHS) -> np.ndarray:
    """Validation accuracy of logistic regression trained by SGD, for K settings sharing one batch size.

    ``l2`` and ``lr`` have shape (K,). All K models see the same minibatches,
    and every product is reduced along its last axis, so a model's result does
    not depend on which other settings are trained alongside it.
    """
    l2 = np.asarray(l2, dtype=float)[:, None]
    lr = np.asarray(lr, dtype=float)[:, None]
    x, y = data.x_train, data.y_train.astype(float)
    n, d = x.shape
    weights = np.zeros((len(l2), d))
    bias = np.zeros((len(l2), 1))
    for epoch in range(epochs):
        order = np.random.default_rng((*seed, epoch)).permutation(n)
        for start in range(0, n, batch):
            rows = order[start:start + batch]
            xb, yb = x[rows], y[rows]
            logits = (weights[:, None, :] * xb[None, :, :]).sum(axis=-1) + bias          # (K, b)
            residual = _sigmoid(logits) - yb[None, :]                                     # (K, b)
            grad_w = (residual[:, None, :] * xb.T[None, :, :]).sum(axis=-1) / len(rows)  # (K, d)
            grad_b = residual.sum(axis=-1, keepdims=True) / len(rows)
            weights = (weights - lr * grad_w) / (1.0 + lr * l2)
            bias = bias - lr * grad_b
    logits = (weights[:, None, :] * data.x_valid[None, :, :]).sum(axis=-1) + bias
    return np.mean((logits > 0) == (data.y_valid[None, :] == 1), axis=1)


@dataclass(frozen=True, eq=False, kw_only=True)
class SgdLogisticTask(SgdAgentTask):
    """Agents tuning (batch size, L2, learning rate) of SGD logistic regression on their own data."""

    data_definition: dict
    name: str = "breast-cancer-lr"
    default_grid: int = DEFAULT_GRID
    lengthscale: float = LENGTHSCALE
    noise_var: float = NOISE_VAR
    ranges = (BATCH_RANGE, L2_RANGE, LR_RANGE)

    def definition(self) -> dict:
        return {"task": self.name, "model": "sgd-logistic-regression", **self.sgd_definition(), "epochs": EPOCHS,
                "scorer_version": SCORER_VERSION, **self.data_definition}

    def score(self, agent: int, points: np.ndarray) -> np.ndarray:
        return score_by_batch(self.hyperparameters(points, agent), lambda batch, l2, lr: sgd_logistic_accuracy(
            self.agents[agent], batch, l2, lr, seed=(self.seed, 2, agent)))


@functools.lru_cache(maxsize=1)
def _breast_cancer() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    features, labels = data.data, data.target.astype(int)
    features.flags.writeable = labels.flags.writeable = False  # shared by every task built in this process
    return features, labels


def make_task(n_agents: int | None = None, alpha: float | None = None, seed: int = 0,
              data_dir: str | None = None) -> SgdLogisticTask:
    """The breast-cancer task; ``data_dir`` is unused (the data ship with scikit-learn)."""
    count = DEFAULT_AGENTS if n_agents is None else check_int("agents", n_agents, 1, name="number of agents N")
    alpha = DEFAULT_ALPHA if alpha is None else check_positive("alpha", alpha, name="heterogeneity alpha")
    seed = check_int("objective_seed", seed, 0, name="objective seed")
    features, labels = _breast_cancer()
    agents = agent_splits(features, labels, count, alpha, seed, MIN_PER_CLASS, standardise=True)
    return SgdLogisticTask(
        agents=tuple(agents), seed=seed, default_grid=DEFAULT_GRID,
        data_definition={"data_sha256": array_digest(features, labels), "features": "standardised-per-agent",
                         "partition": "dirichlet-labels", "alpha": alpha, "min_per_class": MIN_PER_CLASS,
                         "split": "stratified-half"},
        summary=f"Breast cancer: SGD logistic regression per agent, {count} agents, Dirichlet alpha = {alpha:g}")


def build(n_agents=None, alpha=None, seed=0, data_dir=None, domain="table"):
    """The breast-cancer objective (see module docstring) on the table or continuous domain."""
    return objective_for(make_task(n_agents, alpha, seed, data_dir), domain)
