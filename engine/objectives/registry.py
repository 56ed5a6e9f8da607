"""Names of the data sets the engine knows, and how to build each.

A builder lives in its own module as ``build(n_agents, alpha, seed, data_dir,
domain) -> Objective``. Modules are imported lazily so that a task whose data
is missing never breaks the others.
"""

from __future__ import annotations

import importlib
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
}


# Tasks with a discrete candidate table (their module defines ``make_task``).
TABLE_TASKS = ("landmine", "digits-svm", "breast-cancer-lr")


def check_split(dataset: str, split: str | None) -> None:
    """Refuse a data split for any data set but landmine (the only one whose split can be chosen)."""
    if split is not None and dataset != "landmine":
        raise ConfigError("The data split option applies to the landmine task only.", "split")


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
