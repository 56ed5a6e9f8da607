"""Configuration of a federated BO simulation, validated on construction.

``FboConfig(...)`` raises :class:`engine.validation.ConfigError` with one
sentence naming the bad field; the page shows it next to that control, the CLI
prints it and exits 2.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.fbo.schedules import PT_SCHEDULES
from engine.objectives.registry import DATASETS, check_split
from engine.privacy import ACCOUNTANTS, DEFAULT_ACCOUNTANT, DELTA_RULES, SAMPLING, supports
from engine.privacy.accountants import Q_MIN, Z_MAX, Z_MIN
from engine.settings import SEED_MAX, from_dict, setting, validate
from engine.settings_doc import documented
from engine.validation import Checked, ConfigError, check_range

ALGORITHMS = ("ts", "fts", "fts-de", "dp-fts", "dp-fts-de", "rgpe", "taf")
# The FTS paper's setting (Sec. 3.1-3.2): one target agent and N other agents that finished their BO
# tasks before it starts. RGPE and TAF (Sec. 3.2) exist only there; TS runs there when d_n is set.
TARGET_ALGORITHMS = ("ts", "fts", "rgpe", "taf")
# 1 - p_t as a function of t >= 1.
PT_SCHEDULE_LABELS = {"sqrt": "1 - p_t = 1/sqrt(t)", "linear": "1 - p_t = 1/t", "square": "1 - p_t = 1/t^2",
                      "constant": "1 - p_t constant"}
# fixed = non-adaptive softmax (App. B.2.5, T_t = 1); proportional / proportional-squared = "weights 2" and
# "weights 3" of App. B.2.3 (Fig. 9): own explorers weigh a_t (or a_t^2), the others 1, a_t decaying from a to 1.
WEIGHTS = ("adaptive", "equal", "fixed", "proportional", "proportional-squared")
WEIGHT_SCHEDULES = ("synthetic", "real")  # App. B: a_t decays over t=6..10, or constant 10 then over 30
FTS_VARIANTS = ("target", "concurrent")
# How an agent draws its own Thompson sample (engine.surrogate.thompson); "shared" is the ablation that
# samples from the shared random features instead of the agent's own GP.
OWN_SAMPLERS = ("authors", "pathwise", "shared")
# Landmine: the authors' fixed split (train_test_split, random_state 0) or one drawn from objective_seed.
SPLITS = ("authors", "seeded")
CLI_ONLY = "an expert setting of the command line and sweeps; the page keeps the authors' default"


def _check_alpha(config, value) -> float:
    # On synthetic alpha mixes each agent's own function with the shared one (a weight in [0, 1]);
    # on the real tasks it is a Dirichlet concentration (any positive number).
    return check_range("alpha", value, 0, 1 if config.dataset == "synthetic" else None, name="heterogeneity alpha")


@documented
@dataclass(frozen=True)
class FboConfig(metaclass=Checked):
    """Every parameter of one federated BO experiment (possibly several runs), validated on construction.

    A bad value raises ConfigError with one sentence and the field (``err.field``); ``config.replace(q=0.5)``
    gives a modified copy. With a researcher's own objective (``dpbo.run_fbo(config, f, box=...)``) the data
    set's fields (dataset, alpha, objective_seed, split, domain, dissimilarity) do not apply.
    """

    algorithm: str = setting("dp-fts-de", choices=ALGORITHMS, label="algorithm", page_param="algorithms",
                             help="ts (every agent alone), fts, fts-de, dp-fts, dp-fts-de (private: subsampled, "
                                  "clipped and noised server rounds), rgpe or taf (the FTS paper's rivals)")
    dataset: str = setting("synthetic", choices=DATASETS, label="data set",
                           help="the built-in task the agents optimise (ignored with your own objective)")
    # None: the task's own number (e.g. 29 landmine fields); the CLI's default.
    agents: int | None = setting(200, kind=int, optional=True, low=2, noun="number of agents N", link=(2, 100_000),
                                 cli_default=None, label="agents N",
                                 help="number of agents N (default: the data set's own, 200 for synthetic)")
    iterations: int = setting(40, low=1, noun="number of iterations T", link=(1, 10_000), label="iterations T",
                              help="T, iterations after initialisation")
    features: int = setting(50, low=1, noun="number of random features M", link=(1, 5000),
                            label="random features M", help="M random Fourier features")
    lengthscale: float | None = setting(None, kind=float, low=0, low_open=True, link=(1e-6, 1e6),
                                        label="lengthscale", help="SE lengthscale (default: the task's)")
    noise_var: float | None = setting(None, kind=float, low=0, low_open=True, noun="noise variance",
                                      link=(1e-12, 1e6), label="noise variance",
                                      help="lambda of the BLR posterior (default: the task's)")
    q: float = setting(0.25, low=0, high=1, low_open=True, link=(Q_MIN, 1.0), label="q (sampling)",
                       help="sampling probability of an agent per server round")
    z: float = setting(1.0, low=0, low_open=True, link=(Z_MIN, Z_MAX), label="z (noise)", help="noise multiplier")
    S: float = setting(11.0, low=0, low_open=True, link=(1e-9, 1e9), label="S (clipping)",
                       help="clipping threshold (vectors clipped to S / sqrt(P))")
    P: int = setting(2, low=1, noun="number of sub-regions P", link=(1, 1000), label="P (sub-regions)",
                     help="number of sub-regions (FTS-DE / DP-FTS-DE)")
    sampling: str = setting("poisson", choices=SAMPLING, label="subsampling",
                            help="poisson (probability q) or fixed (round(N q) agents)")
    pt_schedule: str = setting("sqrt", choices=PT_SCHEDULES, noun="p_t schedule", label="1 - p_t schedule",
                               help="1 - p_t = 1/sqrt(t), 1/t, 1/t^2 or constant")
    pt_constant: float = setting(0.5, low=0, high=1, noun="constant 1 - p_t", label="constant 1 - p_t",
                                 help="1 - p_t for the constant schedule")
    weights: str = setting("adaptive", choices=WEIGHTS, label="sub-region weights",
                           help="adaptive softmax, equal (uniform), fixed (non-adaptive, T_t = 1), proportional (own "
                                "explorers a_t, others 1) or proportional-squared (a_t^2 against 1)")
    weight_a: float = setting(15.0, low=0, low_open=True, noun="weight parameter a", link=(1e-9, 1e6),
                              label="weight a", help="a of the softmax weights")
    weight_schedule: str = setting("synthetic", choices=WEIGHT_SCHEDULES, noun="weight schedule",
                                   label="temperature schedule",
                                   help="how the weights' a_t decays: synthetic (over t = 6..10) or real (constant "
                                        "10, then over 30 iterations), as the paper's App. B")
    # False: initial points from the whole domain (App. Fig. 5 ablation).
    local_exploration: bool = setting(True, label="local exploration at initialisation",
                                      help="draw initial points from the whole domain instead of the agent's "
                                           "sub-region")
    n_init: int = setting(10, low=1, noun="number of initial points", link=(1, 10_000),
                          label="initial points per agent", help="initial points per agent")
    fts_variant: str = setting("target", choices=FTS_VARIANTS, noun="FTS variant", label="FTS variant",
                               help="target: one target agent, the others finished before it starts (FTS paper, "
                                    "Sec. 3.1); concurrent: all agents optimise together (App. D.2.1)")
    # t_n: BO iterations each other agent completed before sending its message; None: T.
    other_observations: int | None = setting(None, kind=int, optional=True, low=1, link=(1, 10_000),
                                             noun="other agents' iterations t_n", label="other agents' t_n",
                                             help="BO iterations each other agent completed before it sends its "
                                                  "message (FTS paper t_n; default: T)")
    # d_n (synthetic only): max_x |f(x) - g_n(x)| between the target's and every other agent's function.
    dissimilarity: float | None = setting(None, kind=float, optional=True, low=0, link=(0.0, 100.0),
                                          noun="dissimilarity d_n", label="dissimilarity d_n",
                                          help="synthetic only: one target agent and N others whose functions "
                                               "differ from the target's by at most d_n (FTS paper Sec. 5.1)")
    # How many of the first agents act as targets in the target setting (the paper's landmine figures: 6).
    targets: int | None = setting(None, kind=int, optional=True, low=1, link=(1, 100_000), noun="number of targets",
                                  label="target agents",
                                  help="target setting: the first this many agents act as targets (default: all)")
    # Task heterogeneity (synthetic mixing weight in [0, 1], Dirichlet alpha on real tasks); None: the task's.
    alpha: float | None = setting(None, kind=float, low=0, check=_check_alpha, link=(0.0, 1e6),
                                  noun="heterogeneity alpha", label="heterogeneity α",
                                  help="task heterogeneity (default: the task's)")
    objective_seed: int = setting(0, low=0, high=SEED_MAX, noun="objective seed", link=(0, SEED_MAX),
                                  label="objective seed",
                                  help="fixes the objective itself")
    own_sampler: str = setting("authors", choices=OWN_SAMPLERS, noun="own sampler", not_on_page=CLI_ONLY,
                               help="an agent's own Thompson sample: authors (its GP, fresh random features), "
                                    "pathwise (its GP, exact update of a random-feature prior) or shared "
                                    "(ablation: shared features)")
    own_features: int = setting(100, low=1, high=2000, noun="number of own random features", not_on_page=CLI_ONLY,
                                help="random features per own sample (the authors' M_target)")
    # Own GP re-fit period in observations; 0 never; None: the task's.
    refit_every: int | None = setting(None, kind=int, low=0, noun="re-fit period", not_on_page=CLI_ONLY,
                                      help="re-fit each agent's GP hyperparameters every this many observations; "
                                           "0 never (default: the task's, 5 on real tasks, never on synthetic)")
    split: str | None = setting(None, kind=str, choices=SPLITS, noun="data split", not_on_page=CLI_ONLY,
                                help="landmine data split: authors (the paper's fixed split, default) or seeded "
                                     "(drawn from --objective-seed)")
    domain: str = setting("table", choices=("table", "continuous"), label="domain",
                          help="a real task's candidates: its precomputed table, or any point (one model trained "
                               "per query)")
    runs: int = setting(5, low=1, noun="number of runs", link=(1, 1000), label="runs",
                        help="independent runs simulated together")
    seed: int = setting(0, low=0, high=SEED_MAX, link=(0, SEED_MAX), label="seed",
                        help="fixes the run's randomness: the same seed gives the same result")
    accountant: str = setting(DEFAULT_ACCOUNTANT, choices=ACCOUNTANTS, label="accountant",
                              help="how epsilon is computed: rdp (dp_accounting's RDP, the product's default), ma "
                                   "(the moments accountant the DP-FTS-DE paper used) or pld")
    delta: float | None = setting(None, kind=float, low=0, high=1, low_open=True, high_open=True,
                                  link=(1e-300, 1 - 1e-9), label="δ",
                                  help="delta of the guarantee (default: the delta rule's for the run's N)")
    delta_rule: str = setting("product", choices=DELTA_RULES, noun="delta rule", label="δ rule",
                              help="the default delta when none is given: product (1e-5, or 1 % of 1/N when "
                                   "smaller) or paper (the DP-FTS-DE paper's 1 / N^1.1)")
    budget: float | None = setting(None, kind=float, low=0, low_open=True, noun="privacy budget epsilon*",
                                   link=(1e-6, 1e6), label="privacy budget ε*", help="privacy budget epsilon*")
    # With a budget: choose z so the run ends exactly at the budget.
    calibrate_z: bool = setting(False, label="calibrate z", page_param="budget_mode",
                                help="choose z so that the run ends at the budget")

    def __post_init__(self):
        validate(self)
        if self.agents is not None and self.uses_de and self.P > self.agents:
            raise ConfigError(f"P must be at most the number of agents ({self.agents}), got {self.P}.", "P")
        check_split(self.dataset, self.split)
        if self.dissimilarity is not None:
            if self.dataset != "synthetic":
                raise ConfigError("The dissimilarity d_n is defined for the synthetic functions only.", "dissimilarity")
            if self.algorithm not in TARGET_ALGORITHMS or self.fts_variant != "target":
                raise ConfigError("The dissimilarity d_n needs the target setting (TS, FTS, RGPE or TAF with the "
                                  "target variant).", "dissimilarity")
        if self.algorithm in ("rgpe", "taf") and self.fts_variant != "target":
            raise ConfigError("RGPE and TAF run in the target setting only; choose the target variant.",
                              "fts_variant")
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
    def in_target_setting(self) -> bool:
        """One target agent (or several, batched) and N other agents that finished before it (FTS paper)."""
        if self.algorithm in ("rgpe", "taf"):
            return True
        if self.algorithm == "fts":
            return self.fts_variant == "target"
        return self.algorithm == "ts" and (self.dissimilarity is not None or self.targets is not None)

    @property
    def message_length(self) -> int:
        """Numbers each other agent sends (FTS paper Sec. 3.2): M (omega_n) for FTS, M + M^2 (nu_n and
        Sigma_n^-1) for RGPE, M + M^2 + 1 (also the incumbent) for TAF, 0 for TS; M per round for the
        DP-FTS-DE family (each agent sends its omega_n; the server broadcasts one vector per sub-region)."""
        M = self.features
        return {"ts": 0, "rgpe": M + M * M, "taf": M + M * M + 1}.get(self.algorithm, M)

    @property
    def n_subregions(self) -> int:
        return self.P if self.uses_de else 1

    def replace(self, **changes) -> "FboConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "FboConfig":
        return from_dict(cls, data)
