"""A researcher's own objective: a plain Python function on a box, maximised or minimised.

The engine maximises on the unit box [0, 1]^D (:mod:`engine.objectives.base`);
:class:`OwnObjective` maps a point ``u`` of it to ``x = low + u (high - low)``
in the function's own box, calls the function, and turns a minimisation into
a maximisation of ``-f``. Every agent optimises the same function unless the
function takes the agent's index (``per_agent=True``: ``fn(x, agent)``).

What a run reports (the metric, lower or higher is better as its label says):

- with a known optimum: the simple regret ``|f* - best value found|``
  (lower is better), in the function's units;
- without one: the best value found itself, in the function's units (higher
  is better when maximising, lower when minimising).

A function of one point, ``fn(x)`` with ``x`` of shape (D,) returning a
number, is called once per point; ``vectorised=True`` says it takes a batch
``X`` (K, D) and returns (K,), which is much faster (every agent of every run
queries once per iteration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from engine.objectives.base import FunctionObjective
from engine.validation import ConfigError

# The shared random features' lengthscale on the unit box and the BLR's noise: a smooth function over its box.
OWN_LENGTHSCALE = 0.1
OWN_NOISE_VAR = 0.01


def check_box(box) -> np.ndarray:
    """``box`` as a (D, 2) float array of (low, high) rows; ConfigError for anything else."""
    try:
        array = np.asarray(box, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != 2 or array.shape[1] != 2 or len(array) == 0:
        raise ConfigError("The box must be a list of (low, high) pairs, one per coordinate, such as [(0, 1), (-5, 5)].",
                          "box")
    if not np.all(np.isfinite(array)) or not np.all(array[:, 1] > array[:, 0]):
        raise ConfigError("Every (low, high) pair of the box must be finite with low < high.", "box")
    return array


@dataclass(frozen=True, eq=False)
class OwnObjective(FunctionObjective):
    """A user's function ``fn`` on ``box`` (D rows of (low, high)); see the module's docstring.

    Build it with :func:`own_objective`; the engine sees a maximisation on [0, 1]^D.
    """

    box: np.ndarray = field(default=None)
    minimise: bool = False
    optimum: float | None = None
    agents_fixed: bool = False          # the function takes the agent's index, so the objective fixes N

    @property
    def goal(self) -> str:
        return "minimise" if self.minimise else "maximise"

    def to_box(self, unit: np.ndarray) -> np.ndarray:
        """Points of [0, 1]^D (K, D) as points of the function's box (K, D)."""
        low, high = self.box[:, 0], self.box[:, 1]
        return low + np.asarray(unit, dtype=float) * (high - low)


def own_objective(fn: Callable, box, *, minimise: bool = False, optimum: float | None = None,
                  agents: int = 2, per_agent: bool = False, vectorised: bool = False,
                  name: str | None = None, noise_std: float = 0.0) -> OwnObjective:
    """The :class:`OwnObjective` of ``fn`` on ``box`` for ``agents`` agents (see the module's docstring)."""
    if not callable(fn):
        raise ConfigError("The objective must be a function of one point (or of a batch with vectorised=True).",
                          "objective")
    box = check_box(box)
    if optimum is not None:
        optimum = float(optimum)
        if not np.isfinite(optimum):
            raise ConfigError(f"The known optimum must be a finite number, got {optimum}.", "optimum")
    sign = -1.0 if minimise else 1.0
    low, width = box[:, 0], box[:, 1] - box[:, 0]

    def values(agent_ids: np.ndarray, unit: np.ndarray) -> np.ndarray:
        X = low + np.asarray(unit, dtype=float) * width
        if vectorised:
            y = fn(X, agent_ids) if per_agent else fn(X)
        elif per_agent:
            y = [fn(x, int(a)) for x, a in zip(X, agent_ids)]
        else:
            y = [fn(x) for x in X]
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.shape != (len(X),):
            raise ConfigError(f"The objective returned {y.size} values for {len(X)} points.", "objective")
        if not np.all(np.isfinite(y)):
            raise ConfigError("The objective returned a value that is not a finite number.", "objective")
        return sign * y

    label = name or getattr(fn, "__name__", None) or "objective"
    if optimum is None:
        metric = f"best value found ({'lower' if minimise else 'higher'} is better)"
        reference = np.zeros(agents)
    else:
        metric = "simple regret"
        reference = np.full(agents, sign * optimum)
    return OwnObjective(
        name=label, n_agents=int(agents), dim=len(box), noise_std=float(noise_std), reference=reference,
        metric_label=metric, lengthscale=OWN_LENGTHSCALE, noise_var=OWN_NOISE_VAR,
        description=f"{label}: {'minimised' if minimise else 'maximised'} on a box of {len(box)} dimensions",
        fn=values, box=box, minimise=bool(minimise), optimum=optimum, agents_fixed=bool(per_agent))


def metric_scale(objective) -> float:
    """The factor that turns ``reference - best`` (the engine's metric) into what the objective reports: -1 for
    a maximised own objective without a known optimum (the best value found, higher is better), else 1."""
    if isinstance(objective, OwnObjective) and objective.optimum is None and not objective.minimise:
        return -1.0
    return 1.0
