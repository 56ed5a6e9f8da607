"""Landmine detection (DP-FTS-DE paper Sec. 5.2, App. B.2.1; FTS paper Sec. 5.2).

29 agents, one per landmine field of ``LandmineData.mat``. Every field is
split in half, stratified by label; the 9 features are used as they are (the
papers exclude or transform nothing). Each agent tunes an RBF SVM, with the
authors' linear map of [0, 1]^2 onto the ranges of App. B.2.1
(landmine_dp_fts_de.py:31-35):

- ``x[0]`` -> penalty C = 1e-4 + x[0] (10 - 1e-4),
- ``x[1]`` -> RBF kernel parameter gamma = 1e-2 + x[1] (10 - 1e-2),

and scores it by validation AUC of the decision function (the data are
imbalanced: about 6 % landmines). The metric is ``1 - best AUC so far``.

Splits: ``"authors"`` (default) is the authors' one fixed split, scikit-learn's
``train_test_split(test_size=0.5, stratify=labels, random_state=0)`` per field
(preprocess.py:17), used by every run; ``"seeded"`` draws a stratified half
split per field from ``(objective seed, field)``.

Shared random features follow App. B.2.1: SE lengthscale 0.01, noise variance
1e-6. Each agent's own GP starts from GPy's values in the authors' code and is
re-fitted every 5 observations (see :class:`engine.objectives.base.Objective`).
"""

from __future__ import annotations

import numpy as np

from engine.objectives.base import DataStatus, DatasetUnavailable
from engine.objectives.datasets import (LANDMINE_FIELDS, LANDMINE_SHA256, LANDMINE_URL, SplitData,
                                        check_landmine_file, landmine_path, load_landmine, stratified_half_split)
from engine.objectives.rbf_svm import RbfSvmTask
from engine.objectives.task_objective import objective_for
from engine.validation import ConfigError, check_choice, check_int

C_RANGE = (1e-4, 10.0)
GAMMA_RANGE = (1e-2, 10.0)
DEFAULT_GRID = 50  # 50 x 50 = 2,500 candidates
DEFAULT_AGENTS = LANDMINE_FIELDS
SPLITS = ("authors", "seeded")
AUTHORS_RANDOM_STATE = 0


def authors_split(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) indices of the authors' split, in the order scikit-learn returns them."""
    from sklearn.model_selection import train_test_split

    labels = np.asarray(labels)
    train, valid = train_test_split(np.arange(labels.size), test_size=0.5, stratify=labels,
                                    random_state=AUTHORS_RANDOM_STATE)
    return train, valid


def split_fields(fields, seed: int, split: str = "authors") -> tuple[SplitData, ...]:
    """Half split of every field: the authors' fixed one, or field i from ``default_rng((seed, i))``."""
    check_choice("data split", split, SPLITS)
    splits = []
    for index, (features, labels) in enumerate(fields):
        if split == "authors":
            train, valid = authors_split(labels)
        else:
            train, valid = stratified_half_split(labels, np.random.default_rng((seed, index)))
        splits.append(SplitData(features[train], labels[train], features[valid], labels[valid]))
    return tuple(splits)


def make_task(n_agents: int | None = None, alpha: float | None = None, seed: int = 0,
              data_dir: str | None = None, split: str = "authors", metric: str = "auc") -> RbfSvmTask:
    """The landmine task for the first ``n_agents`` fields (default all 29); ``alpha`` is ignored.

    ``metric``: ``"auc"`` (ours, the decision function's AUC, deterministic) or ``"auc-proba"`` (the authors':
    the AUC of ``SVC(probability=True).predict_proba``, an ablation; its table is cached apart).

    ``seed`` only matters for ``split="seeded"``. Raises
    :class:`engine.objectives.DatasetUnavailable` when the data file is missing or
    corrupt, :class:`ConfigError` for more than 29 agents.
    """
    if n_agents is not None:
        check_int("agents", n_agents, 1, name="number of agents N")
        if n_agents > LANDMINE_FIELDS:
            raise ConfigError(f"The landmine task has {LANDMINE_FIELDS} fields, so N must be at most "
                              f"{LANDMINE_FIELDS}, got {n_agents}.", "agents")
    seed = check_int("objective_seed", seed, 0, name="objective seed")
    split = check_choice("split", split, SPLITS, name="data split")
    metric = check_choice("metric", metric, ("auc", "auc-proba"), name="landmine metric")
    fields = load_landmine(data_dir)
    count = LANDMINE_FIELDS if n_agents is None else int(n_agents)
    if split == "authors":
        split_definition = {"split": "sklearn-train_test_split-stratified-half",
                            "split_random_state": AUTHORS_RANDOM_STATE}
    else:
        split_definition = {"split": "stratified-half", "split_seed": seed}
    return RbfSvmTask(
        name="landmine", agents=split_fields(fields[:count], seed, split), c_range=C_RANGE,
        gamma_range=GAMMA_RANGE, metric=metric, metric_label="1 - AUC", lengthscale=0.01, noise_var=1e-6,
        default_grid=DEFAULT_GRID, scale="linear",
        data_definition={"data_sha256": LANDMINE_SHA256, "features": "raw", **split_definition},
        summary=f"Landmine detection: RBF SVM on {count} fields, validation AUC")


def data_status(data_dir: str | None = None) -> DataStatus:
    """Whether LandmineData.mat is in the data directory and matches its published sha256."""
    try:
        check_landmine_file(data_dir)
    except DatasetUnavailable:
        path = landmine_path(data_dir)
        problem = ("missing" if not path.is_file()
                   else "corrupt or a different file (its sha256 is not the published one)")
        return DataStatus(False, str(path), LANDMINE_URL, problem)
    return DataStatus(True)


def build(n_agents=None, alpha=None, seed=0, data_dir=None, domain="table", split=None):
    """The landmine objective (see module docstring) on the table or continuous domain."""
    return objective_for(make_task(n_agents, alpha, seed, data_dir, split or "authors"), domain)
