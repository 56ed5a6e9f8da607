"""STAND-IN for the EMNIST task of the DP-FTS-DE paper (App. B.2.1): scikit-learn's bundled digits.

The paper's data (the first 50 writers of federated EMNIST digits, from the
TensorFlow Federated library) cannot be fetched here. This task uses the 1,797
8 x 8 digit images that ship with scikit-learn (pixels scaled to [0, 1], as the
paper normalises pixels) and keeps the rest of the protocol. It is a stand-in:
its numbers are not EMNIST's.

Agents: 50 by default. The images are divided by a per-class Dirichlet(1)
partition (every agent holds at least 2 images of every digit), so agents differ
in label mix and size as writers do; every agent also has its own "pen": a
contrast factor and a one-pixel shift of its images, drawn from the objective
seed. Each agent splits its share in half (stratified; the paper follows the
library's train/validation split) and tunes a small neural network (64 inputs,
16 ReLU units, 10 softmax outputs; the paper uses a CNN) trained by Adam on the
full training half for 60 steps, over the paper's three hyperparameters, all in
[1e-7, 0.02] on a log scale:

- ``x[0]`` -> learning rate,
- ``x[1]`` -> learning-rate decay (step s uses ``lr / (1 + decay * s)``, as Keras's ``decay``),
- ``x[2]`` -> L2 regularisation (added to the loss as ``l2 * sum of squared weights``).

Initial weights are drawn from ``(seed, agent)``, the same for every setting.
Score: validation accuracy; the metric is validation error. Table: a 10^3 grid.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from engine.cancel import checkpoint
from engine.objectives.datasets import SplitData, agent_splits, array_digest
from engine.objectives.task_objective import objective_for
from engine.objectives.tasks import AgentDataTask, log_scale
from engine.validation import check_int

STAND_IN = "stand-in: scikit-learn's 8 x 8 digits in place of federated EMNIST"
RANGE = (1e-7, 0.02)
DEFAULT_AGENTS = 50
MAX_AGENTS = 80
ALPHA = 1.0
MIN_PER_CLASS = 2
HIDDEN = 16
STEPS = 60
ADAM = (0.9, 0.999, 1e-8)
DEFAULT_GRID = 10
LENGTHSCALE = 0.2
NOISE_VAR = 1e-4
SCORER_VERSION = 1


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    data = load_digits()
    features, labels = data.data / 16.0, data.target.astype(int)
    features.flags.writeable = labels.flags.writeable = False
    return features, labels


def _pen(split: SplitData, rng: np.random.Generator) -> SplitData:
    """The agent's own writing: a contrast factor and a shift of at most one pixel, on both halves."""
    contrast = float(rng.uniform(0.6, 1.0))
    dx, dy = (int(v) for v in rng.integers(-1, 2, size=2))

    def apply(x):
        images = np.roll(x.reshape(-1, 8, 8), (dy, dx), axis=(1, 2)) * contrast
        return images.reshape(len(x), 64)

    return SplitData(apply(split.x_train), split.y_train, apply(split.x_valid), split.y_valid)


def adam_mlp_accuracy(data: SplitData, lr: np.ndarray, decay: np.ndarray, l2: np.ndarray, seed: tuple,
                      steps: int = STEPS) -> np.ndarray:
    """Validation accuracy of K small networks (same initial weights) trained by full-batch Adam."""
    k = len(lr)
    lr, decay, l2 = (np.asarray(v, dtype=float)[:, None, None] for v in (lr, decay, l2))
    x, y = data.x_train, data.y_train
    onehot = np.eye(10)[y]
    rng = np.random.default_rng(seed)
    params = [np.repeat(rng.normal(0.0, np.sqrt(2.0 / 64), (1, 64, HIDDEN)), k, axis=0),
              np.zeros((k, 1, HIDDEN)),
              np.repeat(rng.normal(0.0, np.sqrt(1.0 / HIDDEN), (1, HIDDEN, 10)), k, axis=0),
              np.zeros((k, 1, 10))]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = ADAM
    n = len(y)
    for step in range(1, steps + 1):
        hidden_in = np.matmul(x[None], params[0]) + params[1]                  # (K, n, H)
        hidden = np.maximum(hidden_in, 0.0)
        logits = np.matmul(hidden, params[2]) + params[3]                      # (K, n, 10)
        logits -= logits.max(axis=-1, keepdims=True)
        prob = np.exp(logits)
        prob /= prob.sum(axis=-1, keepdims=True)
        delta = (prob - onehot[None]) / n
        grad_w2 = np.matmul(hidden.transpose(0, 2, 1), delta) + 2 * l2 * params[2]
        grad_b2 = delta.sum(axis=1, keepdims=True)
        back = np.matmul(delta, params[2].transpose(0, 2, 1)) * (hidden_in > 0)
        grad_w1 = np.matmul(x.T[None], back) + 2 * l2 * params[0]
        grad_b1 = back.sum(axis=1, keepdims=True)
        rate = lr / (1.0 + decay * (step - 1))
        for i, grad in enumerate((grad_w1, grad_b1, grad_w2, grad_b2)):
            first[i] = beta1 * first[i] + (1 - beta1) * grad
            second[i] = beta2 * second[i] + (1 - beta2) * grad ** 2
            corrected = first[i] / (1 - beta1 ** step) / (np.sqrt(second[i] / (1 - beta2 ** step)) + eps)
            params[i] = params[i] - rate * corrected
    hidden = np.maximum(np.matmul(data.x_valid[None], params[0]) + params[1], 0.0)
    predicted = np.argmax(np.matmul(hidden, params[2]) + params[3], axis=-1)
    return np.mean(predicted == data.y_valid[None, :], axis=1)


@dataclass(frozen=True, eq=False, kw_only=True)
class EmnistStandInTask(AgentDataTask):
    """Agents tuning (learning rate, decay, L2) of a small network on their own digits."""

    data_sha256: str
    name: str = "emnist-standin"
    default_grid: int = DEFAULT_GRID
    lengthscale: float = LENGTHSCALE
    noise_var: float = NOISE_VAR

    def hyperparameters(self, points: np.ndarray, agent: int = 0) -> dict[str, np.ndarray]:
        """The (learning rate, decay, L2) each point of [0, 1]^3 stands for."""
        points = np.atleast_2d(points)
        return {"learning_rate": log_scale(points[:, 0], *RANGE), "decay": log_scale(points[:, 1], *RANGE),
                "l2": log_scale(points[:, 2], *RANGE)}

    def definition(self) -> dict:
        return {"task": self.name, "stand_in": STAND_IN, "model": f"mlp-64-{HIDDEN}-10-adam",
                "axes": ["learning_rate", "decay", "l2"], "scale": "log10", "range": list(RANGE), "steps": STEPS,
                "metric": "accuracy", "scorer_version": SCORER_VERSION, "n_agents": self.n_agents,
                "seed": self.seed, "partition": "dirichlet-labels", "alpha": ALPHA,
                "min_per_class": MIN_PER_CLASS, "split": "stratified-half", "pen": "contrast+shift",
                "data_sha256": self.data_sha256}

    def score(self, agent: int, points: np.ndarray) -> np.ndarray:
        checkpoint()
        hp = self.hyperparameters(points, agent)
        return adam_mlp_accuracy(self.agents[agent], hp["learning_rate"], hp["decay"], hp["l2"],
                                 seed=(self.seed, 19, 3, agent))


def make_task(n_agents: int | None = None, alpha: float | None = None, seed: int = 0,
              data_dir: str | None = None) -> EmnistStandInTask:
    """The EMNIST stand-in with ``n_agents`` agents (default 50); ``alpha`` and ``data_dir`` are unused."""
    count = DEFAULT_AGENTS if n_agents is None else check_int("agents", n_agents, 1, MAX_AGENTS,
                                                              name="number of agents N")
    seed = check_int("objective_seed", seed, 0, name="objective seed")
    features, labels = _digits()
    splits = agent_splits(features, labels, count, ALPHA, seed, MIN_PER_CLASS)
    agents = [_pen(split, np.random.default_rng((seed, 19, 4, i))) for i, split in enumerate(splits)]
    return EmnistStandInTask(agents=tuple(agents), seed=seed, data_sha256=array_digest(features, labels),
                             summary=f"EMNIST STAND-IN (scikit-learn digits): small network by Adam, {count} agents")


def build(n_agents=None, alpha=None, seed=0, data_dir=None, domain="table"):
    """The EMNIST stand-in objective on the table or continuous domain."""
    return objective_for(make_task(n_agents, alpha, seed, data_dir), domain)
