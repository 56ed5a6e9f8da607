"""The stand-ins for the DP-FTS-DE paper's activity recognition and EMNIST tasks: their shape, ranges and split."""

from __future__ import annotations

import numpy as np
import pytest

from engine.objectives import emnist_standin, har_standin
from engine.objectives.registry import TABLE_TASKS, dataset_label, default_agents, make_task


def test_both_are_table_tasks_labelled_as_stand_ins():
    for name in ("har-standin", "emnist-standin"):
        assert name in TABLE_TASKS
        assert "STAND-IN" in dataset_label(name)
        assert "stand-in" in make_task(name, n_agents=2).definition()["stand_in"]
        assert "STAND-IN" in make_task(name, n_agents=2).summary


def test_activity_recognition_shape():
    assert default_agents("har-standin") == 30
    task = har_standin.make_task()
    assert task.n_agents == 30 and task.dim == 3
    corners = task.hyperparameters(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), agent=0)
    train = len(task.agents[0].y_train)
    assert corners["batch_size"].tolist() == [128, min(512, train)]
    assert corners["l2"] == pytest.approx([1e-6, 10.0])
    assert corners["learning_rate"] == pytest.approx([1e-6, 1.0])
    for agent in task.agents:
        n_train, n_valid = len(agent.y_train), len(agent.y_valid)
        assert 281 <= n_train + n_valid <= 409
        assert abs(n_train - n_valid) <= 6                       # half/half within each of six classes
        assert set(agent.y_train) == set(range(6))
        assert np.allclose(agent.x_train.mean(axis=0), 0.0, atol=1e-9)    # standardised by its own training half
        assert np.allclose(agent.x_train.std(axis=0), 1.0)
        assert not np.allclose(agent.x_valid.mean(axis=0), 0.0, atol=1e-3)


def test_emnist_shape():
    assert default_agents("emnist-standin") == 50
    task = emnist_standin.make_task()
    assert task.n_agents == 50 and task.dim == 3
    corners = task.hyperparameters(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
    for axis in ("learning_rate", "decay", "l2"):
        assert corners[axis] == pytest.approx([1e-7, 0.02])
    for agent in task.agents:
        assert agent.x_train.shape[1] == 64
        assert 0.0 <= agent.x_train.min() and agent.x_train.max() <= 1.0
        for digit in range(10):      # stratified halves: every digit on both sides
            assert abs(np.sum(agent.y_train == digit) - np.sum(agent.y_valid == digit)) <= 1


@pytest.mark.parametrize("module", [har_standin, emnist_standin])
def test_scores_are_deterministic_and_independent_of_the_batch(module):
    task = module.make_task(n_agents=2)
    points = np.array([[0.2, 0.5, 0.9], [0.9, 0.1, 1.0], [0.5, 0.5, 0.0]])
    together = task.score(1, points)
    alone = np.array([task.score(1, p[None])[0] for p in points])
    assert np.array_equal(together, alone)
    assert np.all((0.0 <= together) & (together <= 1.0))
    assert together[1] > together[2]     # a large learning rate trains, the smallest barely moves the model
