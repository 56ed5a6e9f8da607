"""DP-HYPE's data mode: client splits, batched SGD training, cached score tables, accuracy baselines."""

from __future__ import annotations

import numpy as np
import pytest

import engine.hype.scores as scores
from engine.hype import HypeConfig, run_hype
from engine.hype.datasets import (
    DATASET_SIZES,
    MIN_PER_CLIENT,
    TEST_FRACTION,
    client_data,
    load_dataset,
    partition_clients,
    stratified_test_split,
)
from engine.hype.training import candidate_grid, candidate_weights, common_start, initial_weights, train_local


def test_dataset_sizes_match_scikit_learn():
    for name, size in DATASET_SIZES.items():
        features, labels = load_dataset(name)
        assert len(labels) == size == len(features)


def test_test_split_is_stratified_and_20_percent():
    _, labels = load_dataset("wine")
    train, test = stratified_test_split(labels, np.random.default_rng(0))
    assert len(test) == round(TEST_FRACTION * len(labels))
    assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == len(labels)
    for label in np.unique(labels):
        share = np.mean(labels[test] == label)
        assert share == pytest.approx(np.mean(labels == label), abs=0.03)


def label_skew(labels: np.ndarray, shares: list[np.ndarray]) -> float:
    """Mean total-variation distance between each client's label mix and the overall one."""
    classes = np.unique(labels)
    overall = np.array([np.mean(labels == c) for c in classes])
    return float(np.mean([0.5 * np.abs(np.array([np.mean(labels[s] == c) for c in classes]) - overall).sum()
                          for s in shares]))


def test_partitions_cover_every_example_once_and_dirichlet_skews_labels():
    _, labels = load_dataset("digits")
    for alpha in (None, 30.0, 0.5):
        shares = partition_clients(labels, 100, alpha, np.random.default_rng(1))
        joined = np.concatenate(shares)
        assert len(joined) == len(labels) and len(np.unique(joined)) == len(labels)
        assert min(len(s) for s in shares) >= MIN_PER_CLIENT
    iid = partition_clients(labels, 100, None, np.random.default_rng(1))
    assert max(map(len, iid)) - min(map(len, iid)) <= 1
    skew = {alpha: label_skew(labels, partition_clients(labels, 100, alpha, np.random.default_rng(2)))
            for alpha in (30.0, 5.0, 0.5)}
    assert skew[30.0] < skew[5.0] < skew[0.5]


def reference_training(w0, x, y, m, lr, decay, mom, keys_per_epoch, classes, batch, epochs):
    """Plain per-example-loop SGD with momentum and per-epoch decay for one client and one candidate."""
    w = w0.astype(float).copy()
    buf = np.zeros_like(w)
    for epoch in range(epochs):
        order = np.argsort(np.where(np.arange(x.shape[0]) < m, keys_per_epoch[epoch], np.inf))[:m]
        for start in range(0, m, batch):
            idx = order[start:start + batch]
            grad = np.zeros_like(w)
            for i in idx:
                logits = x[i] @ w
                prob = np.exp(logits - logits.max())
                prob /= prob.sum()
                prob[y[i]] -= 1.0
                grad += np.outer(x[i], prob)
            buf = mom * buf + grad / len(idx)
            w -= lr * decay ** epoch * buf
    return w


def test_batched_training_equals_a_plain_loop_per_client_and_candidate():
    rng = np.random.default_rng(3)
    classes, dim, batch, epochs = 3, 5, 8, 3
    sizes = [19, 6]  # three batches for the first client, one for the second (it skips two steps)
    width = max(sizes)
    x = np.zeros((2, width, dim + 1), dtype=np.float32)
    y = np.zeros((2, width), dtype=np.int64)
    mask = np.zeros((2, width), dtype=bool)
    for c, m in enumerate(sizes):
        x[c, :m, :dim] = rng.standard_normal((m, dim))
        x[c, :m, dim] = 1.0
        y[c, :m] = rng.integers(0, classes, m)
        mask[c, :m] = True
    grid = np.array([[0.5, 1.0, 0.0], [0.1, 0.25, 0.9], [0.05, 0.0, 0.9]])
    w0 = initial_weights(dim, classes, np.random.default_rng(4))
    start = np.broadcast_to(common_start(w0, len(grid)), (2, dim + 1, len(grid) * classes))
    trained = train_local(start, x, y, mask, grid, classes, np.random.default_rng(5), epochs=epochs, batch=batch)
    keys_rng = np.random.default_rng(5)
    keys = [keys_rng.random((2, width)) for _ in range(epochs)]
    for c, m in enumerate(sizes):
        for j, (lr, decay, mom) in enumerate(grid):
            expected = reference_training(w0, x[c], y[c], m, lr, decay, mom, [k[c] for k in keys], classes, batch,
                                          epochs)
            got = candidate_weights(trained[c], classes, j)
            np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-5)  # float32 against float64


def test_a_clients_weights_do_not_depend_on_the_clients_trained_beside_it(monkeypatch):
    """Clients train in chunks (largest first), and within a step those whose batches are equally long go
    together: training one client at a time gives the same weights bit for bit, under label skew too."""
    import engine.hype.training as training

    data = client_data("digits", 30, 0.3, 2)
    sizes = data.train_sizes
    assert sizes.max() > 2 * np.median(sizes) and len(np.unique(sizes % 64)) > 5   # skewed: many batch lengths
    grid = candidate_grid()[::7]
    start = np.broadcast_to(common_start(initial_weights(64, 10, np.random.default_rng(1)), len(grid)),
                            (30, 65, len(grid) * 10))
    together = train_local(start, data.x_train, data.y_train, data.m_train, grid, 10, np.random.default_rng(6),
                           epochs=2)
    monkeypatch.setattr(training, "TRAIN_CHUNK", 1)                       # one client per chunk
    alone = train_local(start, data.x_train, data.y_train, data.m_train, grid, 10, np.random.default_rng(6),
                        epochs=2)
    np.testing.assert_array_equal(together, alone)


def test_client_data_is_padded_with_masks_and_a_bias_column():
    data = client_data("wine", 10, 0.5, seed=0)
    assert data.x_train.shape[0] == data.x_val.shape[0] == 10
    assert (data.m_val.sum(axis=1) >= 1).all() and (data.m_train.sum(axis=1) >= 1).all()
    assert np.all(data.x_train[data.m_train][:, -1] == 1.0)
    assert np.all(data.x_train[~data.m_train] == 0.0)
    total = data.m_train.sum() + data.m_val.sum() + len(data.y_test)
    assert total == DATASET_SIZES["wine"]


def test_score_table_is_computed_once_then_read_from_the_cache(cache_dir, monkeypatch):
    first = scores.score_table("wine", 12, None, 0, cache_dir)
    assert first["local_accuracy"].shape == (12, 100) and first["test_accuracy"].shape == (100,)
    np.testing.assert_array_equal(first["grid"], candidate_grid())

    def refuse(*args, **kwargs):
        raise AssertionError("the cached table should have been used")

    monkeypatch.setattr(scores, "compute_scores", refuse)
    again = scores.score_table("wine", 12, None, 0, cache_dir)
    np.testing.assert_array_equal(again["local_accuracy"], first["local_accuracy"])
    with pytest.raises(AssertionError):
        scores.score_table("wine", 12, None, 1, cache_dir)  # another seed is another table


def test_data_mode_reports_dp_hype_between_randguess_and_opt(cache_dir, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(cache_dir))
    config = HypeConfig(mode="data", dataset="breast-cancer", clients=40, alpha=None, k=5, epsilon=1.0,
                        repetitions=300, runs=2)
    out = run_hype(config).to_json()
    assert out["accuracy_randguess"] < out["accuracy_dp_hype"] <= out["accuracy_opt"]
    for name in ("accuracy_dp_hype", "accuracy_opt", "accuracy_randguess"):
        low, high = out[name + "_ci"]
        assert low <= out[name] <= high
    assert out["accuracy_opt_ci"][1] > out["accuracy_opt_ci"][0]  # two runs: an interval over runs
    assert len(out["candidate_labels"]) == 100
    assert out["accuracy_opt"] == pytest.approx(max(out["candidate_accuracy"]), abs=0.02)


def test_large_epsilon_picks_the_clean_vote_winner_on_data(cache_dir, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(cache_dir))
    config = HypeConfig(mode="data", dataset="wine", clients=30, k=3, epsilon=5_000.0, repetitions=40)
    result = run_hype(config)
    table = scores.score_table("wine", 30, None, 0, cache_dir)
    best = np.flatnonzero(result.clean_votes == result.clean_votes.max())
    assert set(np.flatnonzero(result.winner_counts)) <= set(best)
    expected = table["test_accuracy"][np.flatnonzero(result.winner_counts)]
    assert result.accuracy_summary()["accuracy_dp_hype"] == pytest.approx(
        np.average(expected, weights=result.winner_counts[result.winner_counts > 0]))


def test_digits_looks_like_the_papers_mnist_setting(cache_dir, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(cache_dir))
    """Table III on digits: a few strong candidates and many useless ones; DP-HYPE close to OPT at epsilon = 1."""
    out = run_hype(HypeConfig(mode="data", dataset="digits", clients=50, epsilon=1.0, repetitions=400)).to_json()
    accuracy = np.array(out["candidate_accuracy"])
    assert out["accuracy_opt"] > 0.85
    assert out["accuracy_randguess"] < 0.5
    assert np.mean(accuracy < 0.3) > 0.4       # tiny learning rates leave a near-random classifier
    assert out["accuracy_dp_hype"] > out["accuracy_opt"] - 0.06
