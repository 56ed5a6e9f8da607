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
from engine.settings import SEED_MAX, setting, validate
from engine.settings_doc import documented
from engine.validation import Checked, ConfigError

MODES = ("simulation", "data")
MODE_LABELS = {"simulation": "Simulated losses (paper Sec. V-B)", "data": "Real data set (paper Sec. VI)"}
AGGREGATIONS = ("exact", "secure-sum")
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
# The number of clients when none is given: the paper's simulation (Sec. V-B) and data (Sec. VI) settings.
DEFAULT_CLIENTS = {"simulation": 250, "data": 100}
PAGE_DEFAULT = "an expert setting of the command line and sweeps; the page keeps the paper's default"


def default_clients(mode: str) -> int:
    """n when none is given: 250 simulated clients, 100 on a real data set."""
    return DEFAULT_CLIENTS.get(mode, DEFAULT_CLIENTS["simulation"])


def _simulation(config) -> bool:
    return config.mode == "simulation"


def _data(config) -> bool:
    return config.mode == "data"



@documented
@dataclass(frozen=True)
class HypeConfig(metaclass=Checked):
    """Every parameter of one DP-HYPE experiment (many repeated votes).

    Give the privacy level either as ``epsilon`` (the noise is calibrated with
    ``delta`` and ``k``) or directly as ``sigma``, the standard deviation of the
    noise on the summed votes (``sigma = 0``: no privacy), not both; with
    neither, epsilon is ``DEFAULT_EPSILON``.
    """

    mode: str = setting("simulation", choices=MODES, label="clients' scores",
                        help="simulation (simulated local losses) or data (each client trains and scores the "
                             "candidates on its share of a data set)")
    clients: int = setting(250, low=1, high=MAX_CLIENTS, noun="number of clients n", label="clients n",
                           cli_default=None, help="number of clients n (simulation: 250, data: 100)")
    # p (simulation; data mode uses the 100 of Table III)
    candidates: int = setting(100, low=2, high=MAX_CANDIDATES, noun="number of candidates p", when=_simulation,
                              label="candidates p", help="number of candidates p (simulation)")
    good: int = setting(5, low=1, noun="number of good candidates", when=_simulation, link=(1, MAX_CANDIDATES),
                        label="good |H_good|", help="number of good candidates |H_good| (simulation)")
    sigma_loss: float = setting(0.2, low=0, low_open=True, when=_simulation, link=(1e-9, 1e6), label="σ_loss",
                                help="spread of the simulated local losses")
    k: int = setting(5, low=1, link=(1, MAX_CANDIDATES), label="votes per client k", help="votes per client")
    epsilon: float | None = setting(None, kind=float, low=MIN_EPSILON, high=MAX_EPSILON, label="ε",
                                    help="privacy budget (default 1 unless --sigma is given)")
    sigma: float | None = setting(None, kind=float, low=0, high=MAX_SIGMA, label="σ (on the sum)",
                                  help="std of the noise on the summed votes instead of --epsilon")
    delta: float = setting(1e-5, low=0, high=1, low_open=True, high_open=True, link=(1e-300, 1 - 1e-9), label="δ",
                          help="delta of the guarantee")
    # Dropout tolerance: noise scaled for up to xi * n dropouts.
    xi: float = setting(0.0, low=0, high=1, high_open=True, noun="dropout tolerance xi", link=(0.0, 1 - 1e-9),
                        label="tolerance ξ", help="dropout tolerance: noise scaled for xi * n dropouts")
    dropout: float = setting(0.0, low=0, high=1, high_open=True, noun="dropout fraction", link=(0.0, 1 - 1e-9),
                             label="actual dropouts", help="fraction of clients that drop out in every vote")
    repetitions: int = setting(2000, low=1, high=MAX_REPETITIONS, noun="number of repetitions", label="repetitions",
                               help="independent votes; the success rate is over them")
    seed: int = setting(0, low=0, high=SEED_MAX, link=(0, SEED_MAX), label="seed",
                        help="fixes the votes' randomness: the same seed gives the same result")
    dataset: str = setting("digits", choices=HYPE_DATASETS, noun="data set", when=_data, label="data set",
                           help="data mode")
    # Data mode: Dirichlet concentration; None = iid shares.
    alpha: float | None = setting(None, kind=float, low=0, low_open=True, noun="Dirichlet alpha", when=_data,
                                  link=(1e-9, 1e6), label="Dirichlet α",
                                  help="Dirichlet concentration of the client split (default: iid)")
    good_within: float = setting(0.02, low=0, high=1, when=_data, not_on_page=PAGE_DEFAULT,
                                 help="data mode: a candidate is good within this accuracy of OPT")
    runs: int = setting(1, low=1, high=MAX_RUNS, noun="number of runs", when=_data, label="runs",
                        help="data mode: independent splits and trainings")
    aggregation: str = setting("exact", choices=AGGREGATIONS, not_on_page=PAGE_DEFAULT,
                               help="exact (the summed noise added at once) or secure-sum (each client adds its "
                                    "share)")

    def __post_init__(self):
        if self.epsilon is None and self.sigma is None:
            object.__setattr__(self, "epsilon", DEFAULT_EPSILON)
        validate(self)
        if self.mode == "simulation" and self.good > self.candidates:
            raise ConfigError(f"The number of good candidates must be at most the number of candidates "
                              f"({self.candidates}), got {self.good}.", "good")
        if self.k > self.p:
            raise ConfigError(f"k must be at most the number of candidates p ({self.p}), got {self.k}.", "k")
        if self.epsilon is not None and self.sigma is not None:
            raise ConfigError("Give either epsilon or sigma, not both.", "sigma")
        if self.dropped >= self.clients:
            raise ConfigError(f"The dropout fraction leaves no client reporting (n = {self.clients}).", "dropout")
        if self.mode == "data":
            largest = max_clients(self.dataset)
            if self.clients > largest:
                raise ConfigError(f"The {self.dataset} data set can serve at most {largest} clients "
                                  f"(each needs 2 training examples), got {self.clients}.", "clients")

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
