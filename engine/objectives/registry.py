"""Names of the data sets the engine knows, and how to build each.

A builder lives in its own module as ``build(n_agents, alpha, seed, data_dir,
domain) -> Objective``. Modules are imported lazily so that a task whose data
is missing never breaks the others.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.objectives.base import DataStatus
from engine.validation import ConfigError, check_choice

if TYPE_CHECKING:
    from engine.objectives.tasks import Task

# name -> (module, human label)
DATASETS = {
    "synthetic": ("engine.objectives.synthetic", "Synthetic GP functions (paper App. B.1)"),
    "landmine": ("engine.objectives.landmine", "Landmine detection: RBF SVM, 29 fields (needs LandmineData.mat)"),
    "digits-svm": ("engine.objectives.digits_svm", "Digits: RBF SVM per agent, Dirichlet label split"),
    "breast-cancer-lr": ("engine.objectives.breast_cancer_lr", "Breast cancer: SGD logistic regression per agent"),
    "har-standin": ("engine.objectives.har_standin",
                    "Activity recognition STAND-IN (generated data, 30 agents): softmax regression by SGD"),
    "emnist-standin": ("engine.objectives.emnist_standin",
                       "EMNIST STAND-IN (scikit-learn digits, 50 agents): small network by Adam"),
}


# Tasks with a discrete candidate table (their module defines ``make_task``).
TABLE_TASKS = ("landmine", "digits-svm", "breast-cancer-lr", "har-standin", "emnist-standin")


def check_split(dataset: str, split: str | None) -> None:
    """Refuse a data split for any data set but landmine (the only one whose split can be chosen)."""
    if split is not None and dataset != "landmine":
        raise ConfigError("The data split option applies to the landmine task only.", "split")


@dataclass(frozen=True)
class DatasetCosts:
    """What one agent of a data set costs to build and to query: the facts the host's price of a run reads
    (:mod:`engine.limits.fbo`). CPU seconds measured on the 2-core development machine, rounded up.

    ``candidates``: points of its table (the default grid); ``table_agent_seconds``: scoring one agent on
    that grid (0: nothing to build beyond a draw); ``query_seconds``: one query on the continuous domain
    (training the model once); ``own_refit_every``: observations between re-fits of each agent's own GP
    hyperparameters when the run does not choose (0: never; a task's ``own_refit_every``);
    ``table_start_seconds``: a table build's fixed part (its workers' start, the first agents' larger fields);
    ``table_data_seconds``: the part that divides one data set among the agents (scoring it whole, shared by
    the N agents: the build costs that over N, so fewer agents cost more); ``table_mb``: a build's peak memory
    when above the usual (a build of few agents runs in the calling process, on large shares of the data).
    """

    candidates: int
    table_agent_seconds: float
    query_seconds: float
    own_refit_every: int
    table_start_seconds: float = 0.0
    table_data_seconds: float = 0.0
    table_mb: float = 0.0

    def table_seconds(self, n_agents: int) -> float:
        """Seconds to build the table of ``n_agents`` agents (in the reference machine's seconds)."""
        N = max(int(n_agents), 1)
        return self.table_start_seconds + self.table_data_seconds / N + N * self.table_agent_seconds


# The SVM tables (landmine, digits) do not follow the reference workload from one CPU to another: on a machine
# that runs it in 0.057 s (0.105 s where these were measured) the landmine's first two fields took 10.6 reference
# seconds (its start is 9 s for that, 6 s before) and all 29 fields 76.6, one digits agent 64; the landmine's and
# digits' whole tables stay priced as measured here (docs/hosting.md, "Prices and their margins": a decision). One
# EMNIST agent took 54 reference seconds there on one BLAS thread (its data term 30 s, 10 before).
# Measured: a table scores one agent in 1.3 s (landmine), 1.7 s (digits), 0.5 s (breast cancer), 1.4 s (activity
# stand-in), 2.1 s (EMNIST stand-in); one query trains in 61 ms, 9 ms, 1.6 ms, 3 ms, 10 ms; the synthetic
# functions interpolate a drawn grid. Landmine, agent by agent in the reference machine's seconds
# (benchmarks/bench_limits.py's "table" cases): 1.0-1.8 s, but 2.8-3.4 s for fields 0-2, 10 and 11; 49.6 s for
# all 29 (1.7 s each) where it was priced 58 s, and 6.6 s for the first two (priced 4 s). Priced 6 s + 1.8 s an
# agent: every prefix of the fields is covered (the first two 9.6 s), the whole table 58.2 s (the Trade-off
# explorer's Fig. 3a preset, priced with its table's build, stays within the 2-minute limit).
# The stand-ins divide one data set among the agents, so a table of few agents scores large shares of it: in the
# reference machine's seconds (benchmarks/bench_limits.py's "table" cases, each in a fresh process and cache,
# 2026-11-27), digits 43.1, 26.3, 18.0, 11.5, 11.0 s for 1, 2, 4, 10, 20 agents (priced 2.5 s an agent before:
# 2.5 s for one); the EMNIST stand-in 31.0, 26.4, 23.1, 21.6, 35.3 s and 68.0 s for its default 50 (priced 110),
# and 841 MB for one agent (priced 400); breast cancer 2.6-3.5 s for 1-20 agents, and up to 3.95 s for one agent
# over repeats, load and BLAS kernels (benchmarks/bench_price_spread.py: its start now 3.5 s). Priced start + data / N
# + N x agent above each of those.
COSTS = {
    "synthetic": DatasetCosts(candidates=1000, table_agent_seconds=0.0, query_seconds=2e-7, own_refit_every=0),
    "landmine": DatasetCosts(candidates=50 ** 2, table_agent_seconds=1.75, query_seconds=0.08, own_refit_every=5,
                             table_start_seconds=9.0),
    "digits-svm": DatasetCosts(candidates=50 ** 2, table_agent_seconds=0.2, query_seconds=0.015, own_refit_every=5,
                               table_start_seconds=12.0, table_data_seconds=40.0),
    "breast-cancer-lr": DatasetCosts(candidates=16 ** 3, table_agent_seconds=1.0, query_seconds=0.003,
                                     own_refit_every=5, table_start_seconds=3.5),
    "har-standin": DatasetCosts(candidates=10 ** 3, table_agent_seconds=2.0, query_seconds=0.005, own_refit_every=5),
    "emnist-standin": DatasetCosts(candidates=10 ** 3, table_agent_seconds=1.6, query_seconds=0.02,
                                   own_refit_every=5, table_start_seconds=30.0, table_data_seconds=30.0,
                                   table_mb=900.0),
}
# A data set without an entry is priced as the largest table (16^3 in 3-D) with slow queries.
UNKNOWN_COSTS = DatasetCosts(candidates=4096, table_agent_seconds=3.0, query_seconds=0.1, own_refit_every=5)


def dataset_costs(name: str) -> DatasetCosts:
    """The :class:`DatasetCosts` of ``name`` (:data:`UNKNOWN_COSTS` for a name without an entry)."""
    return COSTS.get(name, UNKNOWN_COSTS)


def dataset_label(name: str) -> str:
    return DATASETS[name][1]


def default_agents(name: str) -> int:
    """The number of agents the task has when none is asked for (its module's ``DEFAULT_AGENTS``)."""
    check_choice("dataset", name, DATASETS)
    return int(importlib.import_module(DATASETS[name][0]).DEFAULT_AGENTS)


def data_status(name: str, data_dir: str | None = None) -> DataStatus:
    """Whether ``name``'s data is here (without building anything): its module's ``data_status``, if any.

    Data sets generated or bundled with scikit-learn are always available.
    """
    check_choice("dataset", name, DATASETS)
    module = importlib.import_module(DATASETS[name][0])
    check = getattr(module, "data_status", None)
    return check(data_dir) if check is not None else DataStatus(True)


def build_objective(name: str, *, n_agents: int | None = None, alpha: float | None = None, seed: int = 0,
                    data_dir: str | None = None, domain: str = "table", split: str | None = None):
    """Build the objective ``name``.

    ``n_agents``/``alpha`` left as None take the task's default; ``domain`` is
    ``"table"`` (discrete candidate set, cached) or ``"continuous"`` (train per
    query, exact but slow). ``seed`` fixes the objective itself (e.g. the GP
    draw), not the optimisation runs. ``split`` chooses the landmine data split
    (``"authors"``, the default, or ``"seeded"``); other tasks take none.
    """
    check_choice("dataset", name, DATASETS)
    check_choice("domain", domain, ("table", "continuous"))
    check_split(name, split)
    options = {} if split is None else {"split": split}
    module = importlib.import_module(DATASETS[name][0])
    return module.build(n_agents=n_agents, alpha=alpha, seed=seed, data_dir=data_dir, domain=domain, **options)


def make_task(name: str, *, n_agents: int | None = None, alpha: float | None = None, seed: int = 0,
              data_dir=None, split: str | None = None) -> Task:
    """The :class:`~engine.objectives.tasks.Task` behind the data set ``name`` (one of :data:`TABLE_TASKS`);
    ``split`` is the landmine data split (see :func:`build_objective`)."""
    check_choice("dataset", name, TABLE_TASKS)
    check_split(name, split)
    options = {} if split is None else {"split": split}
    module = importlib.import_module(DATASETS[name][0])
    return module.make_task(n_agents=n_agents, alpha=alpha, seed=seed, data_dir=data_dir, **options)
