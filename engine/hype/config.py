"""Configuration of a DP-HYPE experiment, validated on construction.

``HypeConfig(...)`` raises :class:`engine.validation.ConfigError` with one
sentence naming the bad field; the page shows it next to that control, the CLI
prints it and exits 2.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.hype.datasets import HYPE_DATASETS, max_clients
from engine.hype.training import candidate_grid
from engine.validation import (
    ConfigError,
    check_choice,
    check_int,
    check_positive,
    check_probability_open,
    check_range,
)

MODES = ("simulation", "data")
MODE_LABELS = {"simulation": "Simulated losses (paper Sec. V-B)", "data": "Real data set (paper Sec. VI)"}
AGGREGATIONS = ("exact", "secure-sum")
AGGREGATION_LABELS = {"exact": "Summed noise drawn at once (fast)",
                      "secure-sum": "Client by client through secure summation (slow, same law)"}
DATA_CANDIDATES = len(candidate_grid())  # the paper's Table III
MAX_CLIENTS = 10_000
MAX_CANDIDATES = 1_000
MAX_REPETITIONS = 1_000_000
MAX_RUNS = 20
DEFAULT_EPSILON = 1.0
# Below epsilon = 0.01 dp_accounting's RDP conversion reports 0 for every noise level (no calibration exists);
# above these the noise is either nothing or overflows the accounting.
MIN_EPSILON, MAX_EPSILON = 0.01, 1e4
MAX_SIGMA = 1e6


@dataclass(frozen=True)
class HypeConfig:
    """Every parameter of one DP-HYPE experiment (many repeated votes).

    Give the privacy level either as ``epsilon`` (the noise is calibrated with
    ``delta`` and ``k``) or directly as ``sigma``, the standard deviation of the
    noise on the summed votes (``sigma = 0``: no privacy), not both; with
    neither, epsilon is ``DEFAULT_EPSILON``.
    """

    mode: str = "simulation"
    clients: int = 250                  # n
    candidates: int = 100               # p (simulation; data mode uses the 100 of Table III)
    good: int = 5                       # |H_good| (simulation)
    sigma_loss: float = 0.2             # spread of the simulated local losses
    k: int = 5                          # votes per client
    epsilon: float | None = None
    sigma: float | None = None
    delta: float = 1e-5
    xi: float = 0.0                     # dropout tolerance: noise scaled for up to xi * n dropouts
    dropout: float = 0.0                # fraction of clients that actually drop out in every vote
    repetitions: int = 2000
    seed: int = 0
    dataset: str = "digits"             # data mode
    alpha: float | None = None          # data mode: Dirichlet concentration; None = iid shares
    good_within: float = 0.02           # data mode: good = test accuracy within this of OPT
    runs: int = 1                       # data mode: independent splits/trainings (score tables)
    aggregation: str = "exact"          # exact | secure-sum

    def __post_init__(self):
        check_choice("mode", self.mode, MODES)
        check_int("clients", self.clients, 1, MAX_CLIENTS, name="number of clients n")
        if self.mode == "simulation":
            check_int("candidates", self.candidates, 2, MAX_CANDIDATES, name="number of candidates p")
            good = check_int("good", self.good, 1, name="number of good candidates")
            if good > self.candidates:
                raise ConfigError(f"The number of good candidates must be at most the number of candidates "
                                  f"({self.candidates}), got {good}.", "good")
            check_positive("sigma_loss", self.sigma_loss)
        k = check_int("k", self.k, 1)
        if k > self.p:
            raise ConfigError(f"k must be at most the number of candidates p ({self.p}), got {k}.", "k")
        if self.epsilon is None and self.sigma is None:
            object.__setattr__(self, "epsilon", DEFAULT_EPSILON)
        if self.epsilon is not None and self.sigma is not None:
            raise ConfigError("Give either epsilon or sigma, not both.", "sigma")
        if self.epsilon is not None:
            check_range("epsilon", self.epsilon, MIN_EPSILON, MAX_EPSILON)
        if self.sigma is not None:
            check_range("sigma", self.sigma, 0, MAX_SIGMA)
        check_probability_open("delta", self.delta)
        check_range("xi", self.xi, 0, 1, high_open=True, name="dropout tolerance xi")
        check_range("dropout", self.dropout, 0, 1, high_open=True, name="dropout fraction")
        if self.dropped >= self.clients:
            raise ConfigError(f"The dropout fraction leaves no client reporting (n = {self.clients}).", "dropout")
        check_int("repetitions", self.repetitions, 1, MAX_REPETITIONS, name="number of repetitions")
        check_int("seed", self.seed, 0)
        check_choice("aggregation", self.aggregation, AGGREGATIONS)
        if self.mode == "data":
            check_choice("dataset", self.dataset, HYPE_DATASETS, name="data set")
            if self.alpha is not None:
                check_positive("alpha", self.alpha, name="Dirichlet alpha")
            largest = max_clients(self.dataset)
            if self.clients > largest:
                raise ConfigError(f"The {self.dataset} data set can serve at most {largest} clients "
                                  f"(each needs 2 training examples), got {self.clients}.", "clients")
            check_range("good_within", self.good_within, 0, 1)
            check_int("runs", self.runs, 1, MAX_RUNS, name="number of runs")

    # ------------------------------------------------------------------ derived

    @property
    def p(self) -> int:
        """Number of candidates."""
        return self.candidates if self.mode == "simulation" else DATA_CANDIDATES

    @property
    def dropped(self) -> int:
        """Clients that drop out in every vote: round(dropout * n)."""
        return int(round(float(self.dropout) * int(self.clients)))

    def replace(self, **changes) -> "HypeConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
