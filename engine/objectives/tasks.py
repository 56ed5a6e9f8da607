"""Hyperparameter-tuning tasks: agents scoring points of the unit box, and the maps from it to real ranges.

A :class:`Task` is what a data set module defines: ``n_agents`` agents, each
scoring points of [0, 1]^dim by training a model. The grid its table is
built on is :func:`grid_candidates`; :func:`linear_scale` and
:func:`log_scale` turn a coordinate of the box into a hyperparameter value.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from engine.cancel import checkpoint


class Task(ABC):
    """A hyperparameter-tuning task: ``n_agents`` agents each scoring points of [0, 1]^dim.

    Subclasses set the attributes below and implement :meth:`definition` and
    :meth:`score`. Scores are deterministic and higher is better; the metric
    reported by the engine is ``1 - best score so far``.
    """

    name: str
    dim: int
    n_agents: int
    default_grid: int
    metric_label: str
    lengthscale: float
    noise_var: float
    noise_std: float = 0.0
    summary: str = ""
    own_gp_prior: tuple = (1.0, 0.1, 1e-6)   # see engine.objectives.base.Objective
    own_refit_every: int = 5

    @abstractmethod
    def definition(self) -> dict:
        """Everything that fixes the scores, as JSON-able values (the table's cache key)."""

    @abstractmethod
    def score(self, agent: int, points: np.ndarray) -> np.ndarray:
        """Scores of ``agent`` at ``points`` (K, dim) in [0, 1]^dim, shape (K,).

        Must not depend on which other points are scored in the same call, so a
        table row equals training at each point on its own.
        """


@dataclass(frozen=True, eq=False, kw_only=True)
class AgentDataTask(Task):
    """A task whose every agent tunes one model on a split of its own data (``agents``: one
    :class:`engine.objectives.datasets.SplitData` each). A data set module sets ``name``, ``default_grid``,
    ``lengthscale`` and ``noise_var`` as field defaults and implements :meth:`definition` and :meth:`score`."""

    agents: tuple
    seed: int
    name: str
    default_grid: int
    lengthscale: float
    noise_var: float
    summary: str = ""
    dim: int = 3
    metric_label: str = "validation error"
    noise_std: float = 0.0

    @property
    def n_agents(self) -> int:
        return len(self.agents)


@dataclass(frozen=True, eq=False, kw_only=True)
class SgdAgentTask(AgentDataTask):
    """Agents tuning (batch size, L2, learning rate) of a model trained by SGD, on log scales over the class's
    ``ranges`` (batch, L2, learning rate); the batch is at most the agent's training examples."""

    ranges: ClassVar[tuple]

    def hyperparameters(self, points: np.ndarray, agent: int = 0) -> dict[str, np.ndarray]:
        """The (batch size, L2, learning rate) each point of [0, 1]^3 stands for, for ``agent``."""
        return batch_l2_lr(points, len(self.agents[agent].y_train), *self.ranges)

    def sgd_definition(self) -> dict:
        """The part of :meth:`definition` that this map fixes."""
        batch, l2, lr = self.ranges
        return {"axes": ["batch_size", "l2", "learning_rate"], "scale": "log10", "batch_range": list(batch),
                "l2_range": list(l2), "lr_range": list(lr), "update": "proximal-l2", "metric": "accuracy",
                "n_agents": self.n_agents, "seed": self.seed}


def score_by_batch(hp: dict[str, np.ndarray], train: Callable[[int, np.ndarray, np.ndarray], np.ndarray]
                   ) -> np.ndarray:
    """Scores of SGD settings ``hp`` (from :func:`batch_l2_lr`), trained together one batch size at a time:
    ``train(batch, l2, learning_rate)`` gives the accuracies of the settings sharing ``batch``."""
    out = np.empty(len(hp["batch_size"]))
    for batch in np.unique(hp["batch_size"]):
        checkpoint()
        rows = np.flatnonzero(hp["batch_size"] == batch)
        out[rows] = train(int(batch), hp["l2"][rows], hp["learning_rate"][rows])
    return out


def grid_candidates(dim: int, size: int) -> np.ndarray:
    """The ``size**dim`` points of a regular grid on [0, 1]^dim, last axis varying fastest."""
    axis = np.linspace(0.0, 1.0, size)
    mesh = np.meshgrid(*([axis] * dim), indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def linear_scale(unit: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map [0, 1] to [low, high] linearly (0 -> low, 1 -> high)."""
    unit = np.clip(np.asarray(unit, dtype=float), 0.0, 1.0)
    return low + unit * (high - low)


def log_scale(unit: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map [0, 1] to [low, high] on a log scale (0 -> low, 1 -> high)."""
    unit = np.clip(np.asarray(unit, dtype=float), 0.0, 1.0)
    return 10.0 ** (np.log10(low) + unit * (np.log10(high) - np.log10(low)))


def batch_l2_lr(points: np.ndarray, n_train: int, batch_range, l2_range, lr_range) -> dict[str, np.ndarray]:
    """The (batch size, L2, learning rate) of SGD each point of [0, 1]^3 stands for, on log scales; the batch
    is at most the agent's ``n_train`` training examples."""
    points = np.atleast_2d(points)
    batch = np.minimum(np.rint(log_scale(points[:, 0], *batch_range)).astype(int), n_train)
    return {"batch_size": batch, "l2": log_scale(points[:, 1], *l2_range),
            "learning_rate": log_scale(points[:, 2], *lr_range)}
