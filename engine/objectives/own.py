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

Every value the function returns must be a finite real number (a Python or
NumPy number); anything else (text such as '0.5', a dict, None, NaN) is one
:class:`~engine.validation.ConfigError` sentence naming the point. Each agent
standardises its own observations (``standardise``, see
:mod:`engine.fbo.agents`), so the function's units and offset do not change
the run: ``f`` and ``a f + b`` (a > 0) make the same queries, and so do a box
and its rescaled copy (the engine sees [0, 1]^D either way).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from engine.cancel import checkpoint
from engine.objectives.base import FunctionObjective
from engine.validation import ConfigError, shown

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


def _number(value, field: str, what: str) -> float:
    """``value`` as a float when it is a real number (a Python or NumPy number, or an array of one), else one
    ConfigError sentence naming ``field``: text such as '0.5', a dict, None, a bool or a complex number is not."""
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        value = value.reshape(-1)[0]
    if isinstance(value, bool) or isinstance(value, np.bool_) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{what} must be a number, got {shown(value)} (a {type(value).__name__}).", field)
    return float(value)


def check_noise(noise) -> float:
    """The observation noise's standard deviation: a finite number >= 0 (ConfigError ``noise`` otherwise)."""
    value = _number(noise, "noise", "noise (the standard deviation of the observation noise)")
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"noise (the standard deviation of the observation noise) must be a finite number >= 0, "
                          f"got {shown(noise)}.", "noise")
    return value


def check_values(y, n_points: int, X: np.ndarray, vectorised: bool) -> np.ndarray:
    """What the function returned for ``n_points`` points as a float array (n_points,), or one ConfigError
    sentence (``objective``): every value must be a finite real number."""
    if vectorised:
        array = y if isinstance(y, np.ndarray) else None
        if array is None:
            try:
                array = np.asarray(y) if isinstance(y, (list, tuple)) else None
            except (TypeError, ValueError):
                array = None
        if array is None or array.dtype.kind not in "iuf":
            raise ConfigError(f"A vectorised objective must return an array of {n_points} numbers, got "
                              f"{shown(y)} (a {type(y).__name__}).", "objective")
        values = array.astype(float).reshape(-1)
        if values.shape != (n_points,):
            raise ConfigError(f"The objective returned {values.size} values for {n_points} points.", "objective")
    else:
        values = np.array([_number(v, "objective", f"The objective's value at x = {shown(list(x))}")
                           for v, x in zip(y, X)], dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ConfigError(f"The objective returned {values[bad[0]]:g} at x = {shown(X[bad[0]].tolist())}: every "
                          "value must be a finite number.", "objective")
    return values


def own_objective(fn: Callable, box, *, minimise: bool = False, optimum: float | None = None,
                  agents: int = 2, per_agent: bool = False, vectorised: bool = False,
                  name: str | None = None, noise_std: float = 0.0) -> OwnObjective:
    """The :class:`OwnObjective` of ``fn`` on ``box`` for ``agents`` agents (see the module's docstring)."""
    if not callable(fn):
        raise ConfigError("The objective must be a function of one point (or of a batch with vectorised=True).",
                          "objective")
    box = check_box(box)
    if optimum is not None:
        optimum = _number(optimum, "optimum", "The known optimum")
        if not np.isfinite(optimum):
            raise ConfigError(f"The known optimum must be a finite number, got {optimum}.", "optimum")
    noise_std = check_noise(noise_std)
    sign = -1.0 if minimise else 1.0
    low, width = box[:, 0], box[:, 1] - box[:, 0]

    def values(agent_ids: np.ndarray, unit: np.ndarray) -> np.ndarray:
        X = low + np.asarray(unit, dtype=float) * width
        if vectorised:
            y = fn(X, agent_ids) if per_agent else fn(X)
        else:               # one call per point, a cancel checkpoint before each (a slow function stops in one call)
            y = []
            for x, a in zip(X, agent_ids):
                checkpoint()
                y.append(fn(x, int(a)) if per_agent else fn(x))
        return sign * check_values(y, len(X), X, vectorised)

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
        fn=values, box=box, minimise=bool(minimise), optimum=optimum, agents_fixed=bool(per_agent), standardise=True)


def metric_scale(objective) -> float:
    """The factor that turns ``reference - best`` (the engine's metric) into what the objective reports: -1 for
    a maximised own objective without a known optimum (the best value found, higher is better), else 1."""
    if isinstance(objective, OwnObjective) and objective.optimum is None and not objective.minimise:
        return -1.0
    return 1.0
