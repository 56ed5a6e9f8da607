"""Configuration of a PO-GP-UCB experiment, validated on construction.

``PoConfig(...)`` raises :class:`engine.validation.ConfigError` with one
sentence naming the bad field; the page shows it next to that control, the CLI
prints it and exits 2.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from engine.pogpucb.tasks import TASKS
from engine.validation import (
    ConfigError,
    check_choice,
    check_int,
    check_probability_open,
    check_range,
)

HYPER_MODES = ("shared", "refit")
HYPER_MODE_LABELS = {
    "shared": "shared: the curator's ML fit on X, used for k(x, x') and k(z, z') alike (paper Sec. 3.1)",
    "refit": "refit: the modeler refits by ML on its own observations every few iterations",
}
MAX_R = 500
MIN_EPSILON, MAX_EPSILON = 1e-6, 1e6     # omega stays a finite number
MAX_ITERATIONS = 300
MAX_RUNS = 200
MAX_DISTORTION_PAIRS = 100_000


@dataclass(frozen=True)
class PoConfig:
    """Every parameter of one PO-GP-UCB experiment (several runs).

    Defaults are the paper's synthetic set-up (Section 4, Table 1's best r):
    epsilon = exp(1.1), delta = 1e-5, r = 10, T = 50, delta_ucb = 0.05.
    """

    dataset: str = "synthetic"
    epsilon: float = math.exp(1.1)
    delta: float = 1e-5
    r: int = 10
    iterations: int = 50                # T
    runs: int = 20                      # the paper averages 50
    seed: int = 0
    initial_points: int = 2             # random rows queried before GP-UCB (not stated in the paper)
    delta_ucb: float = 0.05             # Theorem 3; beta_t uses delta' = delta_ucb / 2
    hyperparameters: str = "shared"     # shared | refit
    refit_every: int = 10               # with "refit": iterations between the modeler's ML fits
    task_seed: int = 0                  # fixes the task (synthetic GP draw, the curator's ML fit)
    baseline: bool = True               # also run non-private GP-UCB on X
    distortion_pairs: int = 2000        # pairs sampled for the distance-distortion histogram

    def __post_init__(self):
        check_choice("dataset", self.dataset, TASKS)
        eps = check_range("epsilon", self.epsilon, MIN_EPSILON, MAX_EPSILON)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", check_probability_open("delta", self.delta))
        r = _whole("r", self.r, 1, MAX_R, "projection dimension")
        object.__setattr__(self, "r", r)
        object.__setattr__(self, "iterations", _whole("iterations", self.iterations, 1, MAX_ITERATIONS,
                                                      "number of GP-UCB iterations T"))
        object.__setattr__(self, "runs", _whole("runs", self.runs, 1, MAX_RUNS, "number of runs"))
        object.__setattr__(self, "seed", check_int("seed", self.seed, 0))
        object.__setattr__(self, "initial_points", check_int("initial_points", self.initial_points, 1, 100))
        object.__setattr__(self, "delta_ucb", check_probability_open("delta_ucb", self.delta_ucb))
        check_choice("hyperparameters", self.hyperparameters, HYPER_MODES)
        object.__setattr__(self, "refit_every", check_int("refit_every", self.refit_every, 1, MAX_ITERATIONS))
        object.__setattr__(self, "task_seed", check_int("task_seed", self.task_seed, 0))
        if not isinstance(self.baseline, bool):
            raise ConfigError(f"baseline must be true or false, got {self.baseline!r}.", "baseline")
        object.__setattr__(self, "distortion_pairs",
                           check_int("distortion_pairs", self.distortion_pairs, 0, MAX_DISTORTION_PAIRS))

    @property
    def log_epsilon(self) -> float:
        return math.log(self.epsilon)

    @property
    def delta_prime(self) -> float:
        """delta' of beta_t: Theorem 3 sets it to delta_ucb / 2."""
        return self.delta_ucb / 2.0

    def replace(self, **changes) -> "PoConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _whole(field: str, value, low: int, high: int, name: str) -> int:
    """A whole number in [low, high] with a sentence that says what the field is."""
    try:
        number = check_range(field, value)
    except ConfigError:
        raise ConfigError(f"{field} ({name}) must be a number, got {value!r}.", field) from None
    if number != int(number):
        raise ConfigError(f"{field} ({name}) must be a whole number, got {value!r}.", field)
    if number < low:
        raise ConfigError(f"{field} ({name}) must be at least {low}, got {int(number)}.", field)
    if number > high:
        raise ConfigError(f"{field} ({name}) must be at most {high}, got {int(number)}.", field)
    return int(number)


def config_from_log_epsilon(log_epsilon: float, **fields) -> PoConfig:
    """A PoConfig with ``epsilon = exp(log_epsilon)`` (the paper reports epsilon as exp(1.1) etc.)."""
    value = check_range("log_epsilon", log_epsilon, -20, 20, name="log epsilon")
    return PoConfig(epsilon=math.exp(value), **fields)
