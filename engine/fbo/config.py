"""Configuration of a federated BO simulation, validated on construction.

``FboConfig(...)`` raises :class:`engine.validation.ConfigError` with one
sentence naming the bad field; the page shows it next to that control, the CLI
prints it and exits 2.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.objectives.registry import DATASETS
from engine.privacy import ACCOUNTANTS, SAMPLING, supports
from engine.validation import (
    ConfigError,
    check_choice,
    check_int,
    check_positive,
    check_probability_open,
    check_range,
)

ALGORITHMS = ("ts", "fts", "fts-de", "dp-fts", "dp-fts-de")
ALGORITHM_LABELS = {
    "ts": "TS (no communication)",
    "fts": "FTS (original, FTS paper)",
    "fts-de": "FTS-DE (central server, no DP)",
    "dp-fts": "DP-FTS (P = 1)",
    "dp-fts-de": "DP-FTS-DE",
}
# 1 - p_t as a function of t >= 1.
PT_SCHEDULES = ("sqrt", "linear", "square", "constant")
PT_SCHEDULE_LABELS = {"sqrt": "1 - p_t = 1/sqrt(t)", "linear": "1 - p_t = 1/t", "square": "1 - p_t = 1/t^2",
                      "constant": "1 - p_t constant"}
WEIGHTS = ("adaptive", "equal", "fixed")  # fixed = non-adaptive softmax (App. B.2.5, T_t = 1)
WEIGHT_SCHEDULES = ("synthetic", "real")  # App. B: a_t decays over t=6..10, or constant 10 then over 30
FTS_VARIANTS = ("target", "concurrent")
# How an agent draws its own Thompson sample (engine.surrogate.thompson); "shared" is the ablation that
# samples from the shared random features instead of the agent's own GP.
OWN_SAMPLERS = ("authors", "pathwise", "shared")
OWN_SAMPLER_LABELS = {"authors": "own GP, fresh random features per sample (the authors' code)",
                      "pathwise": "own GP, pathwise conditioning (exact GP update of a random-feature prior)",
                      "shared": "shared features only (ablation: no own GP)"}
# Landmine: the authors' fixed split (train_test_split, random_state 0) or one drawn from objective_seed.
SPLITS = ("authors", "seeded")

@dataclass(frozen=True)
class FboConfig:
    """Every parameter of one federated BO experiment (possibly several runs)."""

    algorithm: str = "dp-fts-de"
    dataset: str = "synthetic"
    agents: int | None = 200            # None: the task's own number (e.g. 29 landmine fields)
    iterations: int = 40                # T, iterations after initialisation
    features: int = 50                  # M random Fourier features
    lengthscale: float | None = None    # SE lengthscale of the shared features; None: task default
    noise_var: float | None = None      # lambda of the BLR posterior; None: task default
    q: float = 0.25                     # sampling probability of an agent per server round
    z: float = 1.0                      # noise multiplier
    S: float = 11.0                     # clipping threshold (vectors are clipped to S / sqrt(P))
    P: int = 2                          # number of sub-regions (DE); DP-FTS and FTS use 1
    sampling: str = "poisson"           # poisson | fixed (round(N q) agents without replacement)
    pt_schedule: str = "sqrt"
    pt_constant: float = 0.5            # 1 - p_t when pt_schedule == "constant"
    weights: str = "adaptive"           # adaptive | equal | fixed
    weight_a: float = 15.0              # a in softmax((a I + 1) / T_t)
    weight_schedule: str = "synthetic"  # synthetic | real
    local_exploration: bool = True      # False: initial points from the whole domain (App. Fig. 5 ablation)
    n_init: int = 10                    # initial points per agent
    fts_variant: str = "target"         # original FTS: one target agent, or all agents concurrently
    alpha: float | None = None          # task heterogeneity (synthetic mixing weight, Dirichlet alpha); None: default
    objective_seed: int = 0             # fixes the objective (GP draw, data split), not the runs
    own_sampler: str = "authors"        # authors | pathwise | shared (see OWN_SAMPLERS)
    own_features: int = 100             # random features per own sample (the authors' M_target), at most 2000
    refit_every: int | None = None      # own GP re-fit period in observations; 0 never; None: the task's
    split: str | None = None            # landmine only: authors (default) | seeded
    domain: str = "table"               # table | continuous
    runs: int = 5
    seed: int = 0
    accountant: str = "ma"
    delta: float | None = None          # None: 1 / N^1.1
    budget: float | None = None         # privacy budget epsilon*; None: no budget
    calibrate_z: bool = False           # with a budget: choose z so the run ends exactly at the budget

    def __post_init__(self):
        check_choice("algorithm", self.algorithm, ALGORITHMS)
        check_choice("dataset", self.dataset, DATASETS)
        if self.agents is not None:
            check_int("agents", self.agents, 2, name="number of agents N")
        check_int("iterations", self.iterations, 1, name="number of iterations T")
        check_int("features", self.features, 1, name="number of random features M")
        if self.lengthscale is not None:
            check_positive("lengthscale", self.lengthscale)
        if self.noise_var is not None:
            check_positive("noise_var", self.noise_var, name="noise variance")
        check_range("q", self.q, 0, 1, low_open=True)
        check_positive("z", self.z)
        check_positive("S", self.S)
        check_int("P", self.P, 1, name="number of sub-regions P")
        if self.agents is not None and self.uses_de and self.P > self.agents:
            raise ConfigError(f"P must be at most the number of agents ({self.agents}), got {self.P}.", "P")
        check_choice("sampling", self.sampling, SAMPLING)
        check_choice("pt_schedule", self.pt_schedule, PT_SCHEDULES, name="p_t schedule")
        check_range("pt_constant", self.pt_constant, 0, 1, name="constant 1 - p_t")
        check_choice("weights", self.weights, WEIGHTS)
        check_positive("weight_a", self.weight_a, name="weight parameter a")
        check_choice("weight_schedule", self.weight_schedule, WEIGHT_SCHEDULES, name="weight schedule")
        check_int("n_init", self.n_init, 1, name="number of initial points")
        check_choice("fts_variant", self.fts_variant, FTS_VARIANTS, name="FTS variant")
        if self.alpha is not None:
            # On synthetic alpha mixes each agent's own function with the shared one (a weight in [0, 1]);
            # on the real tasks it is a Dirichlet concentration (any positive number).
            check_range("alpha", self.alpha, 0, 1 if self.dataset == "synthetic" else None,
                        name="heterogeneity alpha")
        check_choice("domain", self.domain, ("table", "continuous"))
        check_int("runs", self.runs, 1, name="number of runs")
        check_int("seed", self.seed, 0)
        check_int("objective_seed", self.objective_seed, 0, name="objective seed")
        check_choice("own_sampler", self.own_sampler, OWN_SAMPLERS, name="own sampler")
        check_int("own_features", self.own_features, 1, 2000, name="number of own random features")
        if self.refit_every is not None:
            check_int("refit_every", self.refit_every, 0, name="re-fit period")
        if self.split is not None:
            check_choice("split", self.split, SPLITS, name="data split")
            if self.dataset != "landmine":
                raise ConfigError("The data split option applies to the landmine task only.", "split")
        check_choice("accountant", self.accountant, ACCOUNTANTS)
        if self.delta is not None:
            check_probability_open("delta", self.delta)
        if self.budget is not None:
            check_positive("budget", self.budget, name="privacy budget epsilon*")
        if self.calibrate_z and self.budget is None:
            raise ConfigError("Calibrating z needs a privacy budget epsilon*.", "budget")
        if self.is_private and not supports(self.accountant, self.sampling):
            raise ConfigError("The PLD accountant does not support fixed-size sampling; choose rdp or ma.",
                              "accountant")

    # What the algorithm name implies.
    @property
    def is_private(self) -> bool:
        return self.algorithm.startswith("dp-")

    @property
    def uses_server(self) -> bool:
        return self.algorithm in ("fts-de", "dp-fts", "dp-fts-de")

    @property
    def uses_de(self) -> bool:
        return self.algorithm in ("fts-de", "dp-fts-de")

    @property
    def n_subregions(self) -> int:
        return self.P if self.uses_de else 1

    def replace(self, **changes) -> "FboConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "FboConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"Unknown setting(s): {', '.join(unknown)}.")
        return cls(**data)

