"""What a team asks the settings advisor: N, T, the privacy budget and what its objective looks like.

``AdviceRequest(...)`` is validated on construction (one ConfigError sentence naming the field), like every
tool's configuration: the command line's options, ``--config`` files, the page's controls and links all come
from its ``setting()`` declarations.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.flower.settings import check_delta
from engine.hype.config import MAX_CANDIDATES, MAX_CLIENTS, MAX_EPSILON, MIN_EPSILON
from engine.objectives.proxy import MAX_DIMENSION, MAX_LENGTHSCALE, MAX_NOISE, MIN_LENGTHSCALE, Proxy
from engine.objectives.registry import DATASETS, default_agents
from engine.privacy import default_delta
from engine.settings import SEED_MAX, from_dict, setting, validate
from engine.settings_doc import documented
from engine.validation import Checked, ConfigError

ALGORITHMS = ("dp-fts-de", "dp-hype")
PROXY = "proxy"
TASKS = tuple(DATASETS) + (PROXY,)
PROXY_FIELDS = ("dimension", "lengthscale", "noise", "heterogeneity")
PROXY_AGENTS = 50                 # a proxy's N when none is given
MAX_AGENTS = 100_000
MAX_EFFORT = 20


def _fbo(request) -> bool:
    return request.algorithm == "dp-fts-de"


def _hype(request) -> bool:
    return request.algorithm == "dp-hype"


def _proxy(request) -> bool:
    return _fbo(request) and request.dataset == PROXY


@documented
@dataclass(frozen=True)
class AdviceRequest(metaclass=Checked):
    """A team's facts (N, T, epsilon, delta and its task) and how hard the advisor may search.

    DP-FTS-DE: the task is a built-in data set (``dataset``), or ``dataset="proxy"`` with the four numbers that
    describe the team's objective (``dimension``, ``lengthscale``, ``noise``, ``heterogeneity``), or the team's
    own function (``dpbo.advise(request, f, box=...)``). DP-HYPE: ``agents`` clients vote over ``candidates``
    candidates of which ``good`` are good, their local losses spread by ``sigma_loss``.
    """

    algorithm: str = setting("dp-fts-de", choices=ALGORITHMS, label="algorithm",
                             help="dp-fts-de (federated BO: q, z, S, P and 1 - p_t) or dp-hype (a private vote: "
                                  "k and the noise)")
    dataset: str = setting("synthetic", choices=TASKS, when=_fbo, label="task",
                           help="a built-in task, or proxy: a GP proxy of your objective (its dimension, "
                                "lengthscale, noise and heterogeneity)")
    agents: int | None = setting(None, kind=int, optional=True, low=2, high=MAX_AGENTS, label="agents N",
                                 noun="number of agents N",
                                 help="the federation's size N (DP-HYPE: its clients; default: the task's own, "
                                      "50 for a proxy)")
    iterations: int = setting(40, low=1, high=10_000, when=_fbo, noun="number of iterations T",
                              label="iterations T", help="T, the iterations (server releases) the team can afford")
    epsilon: float = setting(4.0, low=MIN_EPSILON, high=MAX_EPSILON, label="ε", noun="privacy budget epsilon",
                             help="the privacy budget epsilon the whole run must meet")
    delta: float | None = setting(None, kind=float, low=0, high=1, low_open=True, high_open=True,
                                  link=(1e-300, 1 - 1e-9), label="δ",
                                  help="delta of the guarantee (default: the product's, 1e-5 or 1 % of 1/N when "
                                       "smaller)")
    dimension: int | None = setting(None, kind=int, optional=True, low=1, high=MAX_DIMENSION, when=_proxy,
                                    label="dimension D", help="proxy: the dimension of the team's search space "
                                                              "(default 1)")
    lengthscale: float | None = setting(None, kind=float, optional=True, low=MIN_LENGTHSCALE, high=MAX_LENGTHSCALE,
                                        when=_proxy, label="lengthscale",
                                        help="proxy: how far (on the unit box) the objective changes a lot; "
                                             "smaller is rougher (default 0.03)")
    noise: float | None = setting(None, kind=float, optional=True, low=0, high=MAX_NOISE, when=_proxy,
                                  label="noise", help="proxy: the observations' noise, a standard deviation in "
                                                      "units of the objective's range (default 0.1)")
    heterogeneity: float | None = setting(None, kind=float, optional=True, low=0, high=1, when=_proxy,
                                          label="heterogeneity",
                                          help="proxy: how different the agents' objectives are, 0 (the same) to "
                                               "1 (independent) (default 0)")
    candidates: int = setting(100, low=2, high=MAX_CANDIDATES, when=_hype, noun="number of candidates p",
                              label="candidates p", help="DP-HYPE: the candidates the clients vote over")
    good: int = setting(5, low=1, high=MAX_CANDIDATES, when=_hype, noun="number of good candidates",
                        label="good candidates", help="DP-HYPE: how many candidates count as good")
    sigma_loss: float = setting(0.2, low=0, low_open=True, high=1e6, when=_hype, label="σ_loss",
                                help="DP-HYPE: how much the clients' local losses differ (the paper's sigma_loss)")
    effort: int = setting(1, low=1, high=MAX_EFFORT, label="search effort",
                          help="the search's size: 1 runs every setting once, the 9 best-fitting 4 times and the "
                               "3 best 12 times; 2 doubles every count")
    sensitivity: bool = setting(True, label="sensitivity table",
                                help="also run the finalists on a smoother, a rougher and a more heterogeneous "
                                     "proxy (synthetic and proxy tasks)")
    seed: int = setting(0, low=0, high=SEED_MAX, link=(0, SEED_MAX), label="seed",
                        help="fixes the search's seeds: the same seed gives the same advice")

    def __post_init__(self):
        validate(self)
        if _fbo(self) and self.dataset != PROXY:
            given = [name for name in PROXY_FIELDS if getattr(self, name) is not None]
            if given:
                raise ConfigError(f"{given[0]} describes a proxy of your objective: choose the task proxy to use it "
                                  f"(the {self.dataset} task has its own).", given[0])
        if _hype(self):
            if self.good > self.candidates:
                raise ConfigError(f"The number of good candidates must be at most the number of candidates "
                                  f"({self.candidates}), got {self.good}.", "good")
            if self.n_agents > MAX_CLIENTS:
                raise ConfigError(f"DP-HYPE simulates at most {MAX_CLIENTS:,} clients, got {self.n_agents:,}.",
                                  "agents")
        if self.dataset == "landmine" and _fbo(self) and self.agents is not None and self.agents > 29:
            raise ConfigError(f"The landmine task has 29 fields, so N must be at most 29, got {self.agents}.",
                              "agents")
        check_delta(self.resolved_delta, self.n_agents)      # the export refuses it too: refuse it here

    # ---------------------------------------------------------------- what the request resolves to
    @property
    def n_agents(self) -> int:
        """N: the request's, else the task's own (a proxy's: 50; DP-HYPE's: 250 clients as in the paper)."""
        if self.agents is not None:
            return int(self.agents)
        if _hype(self):
            return 250
        return PROXY_AGENTS if self.dataset == PROXY else default_agents(self.dataset)

    @property
    def resolved_delta(self) -> float:
        """delta: the request's, else the product's rule for N (:func:`engine.privacy.default_delta`)."""
        return float(self.delta) if self.delta is not None else default_delta(self.n_agents)

    @property
    def proxy(self) -> Proxy | None:
        """The proxy the request describes (defaults filled in); None for a built-in task."""
        if not _proxy(self):
            return None
        given = {name: getattr(self, name) for name in PROXY_FIELDS if getattr(self, name) is not None}
        return Proxy(**given)

    def replace(self, **changes) -> "AdviceRequest":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "AdviceRequest":
        return from_dict(cls, data)

