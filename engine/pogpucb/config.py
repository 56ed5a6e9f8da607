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
from engine.settings import SEED_MAX, setting, validate
from engine.settings_doc import documented
from engine.validation import Checked, ConfigError, check_range

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


PAGE_DEFAULT = "an expert setting of the command line and sweeps; the page keeps the default"


def _whole(field: str, low: int, high: int, name: str):
    """A check of a whole number in [low, high] with a sentence that says what the field is."""
    def check(config, value) -> int:
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
    return check


@documented
@dataclass(frozen=True)
class PoConfig(metaclass=Checked):
    """Every parameter of one PO-GP-UCB experiment (several runs).

    Defaults are the paper's synthetic set-up (Section 4, Table 1's best r):
    epsilon = exp(1.1), delta = 1e-5, r = 10, T = 50, delta_ucb = 0.05.
    """

    dataset: str = setting("synthetic", choices=TASKS, label="data set",
                           help="the curator's data set: its rows are the points GP-UCB chooses among")
    epsilon: float = setting(math.exp(1.1), low=MIN_EPSILON, high=MAX_EPSILON, cli_default=None, label="ε",
                             help="DP epsilon (default: the data set's, exp(1.1) for synthetic)")
    delta: float = setting(1e-5, low=0, high=1, low_open=True, high_open=True, cli_default=None,
                           link=(1e-300, 1 - 1e-9), label="δ",
                           help="DP delta in (0, 1) (default: the data set's, below 1/n)")
    r: int = setting(10, low=1, high=MAX_R, check=_whole("r", 1, MAX_R, "projection dimension"), cli_type=float,
                     cli_default=None, label="projection dimension r",
                     help="projection dimension r (default: the data set's)")
    iterations: int = setting(50, low=1, high=MAX_ITERATIONS, cli_type=float, label="iterations T",
                              check=_whole("iterations", 1, MAX_ITERATIONS, "number of GP-UCB iterations T"),
                              help="GP-UCB iterations T")
    runs: int = setting(20, low=1, high=MAX_RUNS, check=_whole("runs", 1, MAX_RUNS, "number of runs"),
                        cli_type=float, label="runs", help="independent runs (own M and initial rows)")  # paper: 50
    seed: int = setting(0, low=0, high=SEED_MAX, link=(0, SEED_MAX), label="seed",
                        help="fixes the runs' randomness: the same seed gives the same result")
    # Random rows queried before GP-UCB (not stated in the paper).
    initial_points: int = setting(2, low=1, high=100, not_on_page=PAGE_DEFAULT,
                                  help="random rows queried before GP-UCB")
    # Theorem 3; beta_t uses delta' = delta_ucb / 2.
    delta_ucb: float = setting(0.05, low=0, high=1, low_open=True, high_open=True, not_on_page=PAGE_DEFAULT,
                               help="GP-UCB delta_ucb; beta_t uses delta_ucb/2")
    hyperparameters: str = setting("shared", choices=HYPER_MODES, label="kernel hyperparameters",
                                   help="shared: the curator's ML fit for both kernels (paper); refit: the "
                                        "modeler's own fits")
    # With "refit": iterations between the modeler's ML fits.
    refit_every: int = setting(10, low=1, high=MAX_ITERATIONS, not_on_page=PAGE_DEFAULT,
                              help="with refit: iterations between the modeler's maximum-likelihood fits")
    # Fixes the task (synthetic GP draw, the curator's ML fit).
    task_seed: int = setting(0, low=0, high=SEED_MAX, not_on_page=PAGE_DEFAULT,
                             help="fixes the synthetic GP draw and the ML fit")
    # The synthetic grid's side: the square [0, extent]^2 (the paper does not state it; None: ours, 7.5).
    extent: float | None = setting(None, kind=float, optional=True, low=0, low_open=True, high=1000,
                                   not_on_page=PAGE_DEFAULT, noun="synthetic grid extent",
                                   help="synthetic task only: the grid [0, extent]^2 (default 7.5)")
    baseline: bool = setting(True, not_on_page=PAGE_DEFAULT, label="run non-private GP-UCB beside it",
                             help="skip non-private GP-UCB")
    # Pairs sampled for the distance-distortion histogram.
    distortion_pairs: int = setting(2000, low=0, high=MAX_DISTORTION_PAIRS, not_on_page=PAGE_DEFAULT,
                                   help="pairs of rows sampled for the distance-distortion histogram")

    def __post_init__(self):
        validate(self, normalize=True)
        if self.extent is not None and self.dataset != "synthetic":
            raise ConfigError("The grid extent applies to the synthetic task only.", "extent")

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


def config_from_log_epsilon(log_epsilon: float, **fields) -> PoConfig:
    """A PoConfig with ``epsilon = exp(log_epsilon)`` (the paper reports epsilon as exp(1.1) etc.)."""
    value = check_range("log_epsilon", log_epsilon, -20, 20, name="log epsilon")
    return PoConfig(epsilon=math.exp(value), **fields)
