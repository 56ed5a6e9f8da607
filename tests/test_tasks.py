"""The scikit-learn tasks (digits-svm, breast-cancer-lr): partitions, splits, and table == direct training."""

from __future__ import annotations

import numpy as np
import pytest

from engine.objectives import build_objective
from engine.objectives import breast_cancer_lr, digits_svm, rbf_svm
from engine.objectives.builds import build_table
from engine.objectives.datasets import dirichlet_label_partition, stratified_half_split
from engine.objectives.tasks import grid_candidates
from engine.validation import ConfigError


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))


def _label_skew(shares, labels) -> float:
    """Mean total-variation distance between each agent's label mix and the global one."""
    classes = np.unique(labels)
    overall = np.array([np.mean(labels == c) for c in classes])
    mixes = [np.array([np.mean(labels[s] == c) for c in classes]) for s in shares]
    return float(np.mean([0.5 * np.abs(m - overall).sum() for m in mixes]))


def test_dirichlet_partition_covers_every_example_once_with_a_floor_per_class():
    labels = np.repeat(np.arange(4), [50, 80, 30, 40])
    shares = dirichlet_label_partition(labels, 6, 0.3, np.random.default_rng(1), min_per_class=2)
    joined = np.concatenate(shares)
    assert np.array_equal(np.sort(joined), np.arange(len(labels)))
    for share in shares:
        assert np.all(np.bincount(labels[share], minlength=4) >= 2)
    again = dirichlet_label_partition(labels, 6, 0.3, np.random.default_rng(1), min_per_class=2)
    assert all(np.array_equal(a, b) for a, b in zip(shares, again))
    with pytest.raises(ConfigError, match="at most 15"):
        dirichlet_label_partition(labels, 16, 0.3, np.random.default_rng(1), min_per_class=2)


def test_small_alpha_gives_more_heterogeneous_agents_than_large_alpha():
    labels = np.repeat(np.arange(10), 180)
    skew = {alpha: np.mean([_label_skew(dirichlet_label_partition(labels, 10, alpha, np.random.default_rng(s)),
                                        labels) for s in range(5)])
            for alpha in (0.1, 100.0)}
    # Dir(0.1) mixes are far from uniform (TV ~0.6), Dir(100) ones within a few % of it.
    assert skew[0.1] > 0.4 and skew[100.0] < 0.1


def test_stratified_half_split_halves_every_class():
    labels = np.repeat([0, 1, 2], [11, 4, 7])
    train, valid = stratified_half_split(labels, np.random.default_rng(3))
    assert np.array_equal(np.sort(np.concatenate([train, valid])), np.arange(len(labels)))
    assert np.bincount(labels[train]).tolist() == [6, 2, 4]
    assert np.bincount(labels[valid]).tolist() == [5, 2, 3]


@pytest.mark.parametrize("module", [digits_svm, breast_cancer_lr])
def test_defaults_and_bad_settings(module):
    task = module.make_task()
    assert task.n_agents == 10 and task.definition()["alpha"] == 0.5
    assert task.default_grid ** task.dim in (2500, 4096)
    assert module.make_task(n_agents=3, alpha=2.0, seed=4).n_agents == 3
    for bad in (dict(alpha=0.0), dict(alpha=-1.0), dict(n_agents=0), dict(n_agents=500)):
        with pytest.raises(ConfigError):
            module.make_task(**bad)


def test_breast_cancer_agents_are_standardised_on_their_training_half():
    task = breast_cancer_lr.make_task(n_agents=4)
    for split in task.agents:
        assert np.allclose(split.x_train.mean(axis=0), 0.0, atol=1e-9)
        stds = split.x_train.std(axis=0)
        assert np.all(np.isclose(stds, 1.0) | np.isclose(stds, 0.0))


def test_digits_table_equals_direct_training_with_scikit_learn():
    from sklearn.svm import SVC

    task = digits_svm.make_task(n_agents=8, seed=5)
    built = build_table(task, grid=4, n_jobs=1)
    exact = build_objective("digits-svm", n_agents=8, seed=5, domain="continuous")
    hp = task.hyperparameters(built.candidates)
    for agent in (0, 1):
        split = task.agents[agent]
        for point in (0, 5, 10, 15):
            model = SVC(kernel="rbf", C=hp["C"][point], gamma=hp["gamma"][point]).fit(split.x_train, split.y_train)
            direct = np.mean(model.predict(split.x_valid) == split.y_valid)
            assert built.values[agent, point] == direct
            assert exact.value(np.array([agent]), built.candidates[point][None])[0] == built.values[agent, point]


def test_fast_libsvm_path_matches_the_public_estimator(monkeypatch):
    task = digits_svm.make_task(n_agents=8, seed=2)
    points = grid_candidates(2, 3)
    fast = task.score(0, points)
    monkeypatch.setattr(rbf_svm, "_LIBSVM", None)
    assert np.array_equal(task.score(0, points), fast)


def _reference_sgd(split, batch, l2, lr, seed, epochs):
    """Plain one-model minibatch SGD written independently of the vectorised trainer."""
    w = np.zeros(split.x_train.shape[1])
    b = 0.0
    for epoch in range(epochs):
        order = np.random.default_rng((*seed, epoch)).permutation(len(split.y_train))
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            p = 1.0 / (1.0 + np.exp(-(split.x_train[rows] @ w + b)))
            err = p - split.y_train[rows]
            w = (w - lr * split.x_train[rows].T @ err / len(rows)) / (1.0 + lr * l2)
            b -= lr * err.mean()
    return np.mean(((split.x_valid @ w + b) > 0) == (split.y_valid == 1))


def test_breast_cancer_table_equals_direct_training():
    task = breast_cancer_lr.make_task(n_agents=4, seed=1)
    built = build_table(task, grid=3, n_jobs=1)
    exact = build_objective("breast-cancer-lr", n_agents=4, seed=1, domain="continuous")
    for agent in (0, 1):
        hp = task.hyperparameters(built.candidates, agent)
        for point in range(0, 27, 4):
            direct = _reference_sgd(task.agents[agent], int(hp["batch_size"][point]), hp["l2"][point],
                                    hp["learning_rate"][point], (1, 2, agent), breast_cancer_lr.EPOCHS)
            # A different summation order can move a logit by ~1e-16; a flip needs a logit that close to 0.
            assert built.values[agent, point] == pytest.approx(direct, abs=1e-12)
            assert exact.value(np.array([agent]), built.candidates[point][None])[0] == built.values[agent, point]


def test_scores_do_not_depend_on_the_other_points_scored_with_them():
    task = breast_cancer_lr.make_task(n_agents=4)
    points = grid_candidates(3, 2)
    together = task.score(0, points)
    alone = np.array([task.score(0, p[None])[0] for p in points])
    assert np.array_equal(together, alone)


@pytest.mark.parametrize("name, module, shape", [("digits-svm", digits_svm, (3, 9)),
                                                 ("breast-cancer-lr", breast_cancer_lr, (3, 8))])
def test_registry_builds_table_objectives(name, module, shape, monkeypatch):
    monkeypatch.setattr(module, "DEFAULT_GRID", 3 if module is digits_svm else 2)
    objective = build_objective(name, n_agents=3, alpha=1.0)
    assert objective.is_discrete and objective.values.shape == shape
    assert np.all(objective.reference == 1.0) and objective.metric_label == "validation error"
    assert np.all((objective.values >= 0) & (objective.values <= 1))
    assert objective.lengthscale == module.LENGTHSCALE and objective.noise_var == module.NOISE_VAR
    # Different agents face different problems: their score vectors differ.
    assert not np.allclose(objective.values[0], objective.values[1])
