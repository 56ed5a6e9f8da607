"""The objective interface shared by every task.

All objectives are maximised over the unit box [0, 1]^D (tasks map the box to
their hyperparameter ranges). Agent ``n`` observes ``value(n, x) + noise``. The
reported metric is ``reference[n] - best noiseless value found so far``, so
lower is better: simple regret when ``reference`` is the maximum, ``1 - AUC``
when values are AUCs and ``reference`` is 1.

``lengthscale`` and ``noise_var`` configure the random features all agents
share (what crosses the wire). ``own_gp_prior`` and ``own_refit_every``
configure each agent's own GP: its (lengthscale, signal variance, noise
variance) before any fit, and how often it is re-fitted by marginal
likelihood (0: never, the prior values are used throughout). The default is
what the authors' code does on real tasks: GPy's RBF kernel starts at
lengthscale 1 and variance 0.1 with noise 1e-6
(bayesian_optimization_dp_fts_de.py:131-133) and is re-fitted every 5
observations.

``standardise``: each agent standardises its own observations before its
surrogates see them (zero mean, unit standard deviation over what it observed
so far, re-done after every observation, as BoTorch's ``Standardize`` outcome
transform), so a function in any units gives the same run; a researcher's own
objective does (:mod:`engine.objectives.own`), the papers' tasks do not (their
values already have the scale the papers' settings were chosen for).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from engine.validation import ConfigError


class DatasetUnavailable(ConfigError):
    """The data behind a task is missing or corrupt; the message says where to put it."""


@dataclass(frozen=True)
class DataStatus:
    """Whether a data set can be used here, and if not, where its file goes and where to get it.

    ``path`` is where the file is expected, ``url`` where it can be
    downloaded (what ``python -m engine data fetch`` uses), ``problem`` a few
    words saying what is wrong with the file there ("missing", "corrupt ...");
    all None for an available data set.
    """

    available: bool
    path: str | None = None
    url: str | None = None
    problem: str | None = None


@dataclass(frozen=True, eq=False)
class Objective(ABC):
    """Common description of an objective for ``n_agents`` agents on [0, 1]^dim."""

    name: str
    n_agents: int
    dim: int
    noise_std: float
    reference: np.ndarray
    metric_label: str = "simple regret"
    lengthscale: float = 0.03
    noise_var: float = 0.01
    description: str = ""
    own_gp_prior: tuple = (1.0, 0.1, 1e-6)
    own_refit_every: int = 5
    standardise: bool = False

    @property
    @abstractmethod
    def is_discrete(self) -> bool:
        """True when the domain is a finite candidate set (``candidates``)."""

    @abstractmethod
    def value(self, agents: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Noiseless values for pairs (agent, point).

        ``agents`` is an int array of shape (K,). ``points`` is an int array of
        candidate indices (K,) for a discrete objective, or coordinates (K, D)
        in [0, 1]^D for a continuous one. Returns shape (K,).
        """


@dataclass(frozen=True, eq=False)
class TableObjective(Objective):
    """Values of every agent at every candidate, computed once (``values``: N x C)."""

    candidates: np.ndarray = field(default=None)
    values: np.ndarray = field(default=None)

    @property
    def is_discrete(self) -> bool:
        return True

    def value(self, agents, points):
        return self.values[np.asarray(agents), np.asarray(points)]


@dataclass(frozen=True, eq=False)
class FunctionObjective(Objective):
    """Values computed on demand at any point of [0, 1]^D (e.g. training a model per query).

    ``fn(agents (K,), X (K, D)) -> (K,)``.
    """

    fn: Callable[[np.ndarray, np.ndarray], np.ndarray] = field(default=None)

    @property
    def is_discrete(self) -> bool:
        return False

    def value(self, agents, points):
        return np.asarray(self.fn(np.asarray(agents), np.atleast_2d(points)), dtype=float)
