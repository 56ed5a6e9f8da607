"""Client x candidate score tables of DP-HYPE's data mode, computed once and cached on disk.

For one (data set, clients, alpha, seed):

- ``local_accuracy`` and ``local_loss`` (clients, P): each client trains every
  candidate on its own training split from the common start and scores it on
  its own validation split (accuracy; mean cross-entropy breaks ties, since
  small validation splits make many accuracies equal);
- ``test_accuracy`` (P,): each candidate trained by federated averaging over
  all clients (``ROUNDS`` rounds of ``EPOCHS`` local epochs, averaged weighted
  by the clients' training sizes) and scored on the held-out test split.
  OPT is its maximum, RANDGUESS its mean, DP-HYPE's accuracy its value at the
  chosen candidate.

The first round of federated averaging starts from the same weights and uses
the same minibatch order as the local scoring, so the local models are that
round's client models and are computed only once. Nothing here depends on
epsilon or k, so the page re-votes instantly on a cached table.
"""

from __future__ import annotations

import numpy as np

from engine.cache import cached_arrays
from engine.cancel import checkpoint
from engine.hype.standins import STANDIN_EPOCHS, STANDIN_ROUNDS, is_standin
from engine.hype.datasets import MIN_PER_CLIENT, TEST_FRACTION, VALIDATION_FRACTION, client_data, load_dataset
from engine.objectives.datasets import array_digest
from engine.blas import single_threaded_blas
from engine.hype.training import (
    BATCH,
    EPOCHS,
    ROUNDS,
    candidate_grid,
    initial_weights,
    predict_scores,
    test_accuracy,
    train_local,
)

SCORES_VERSION = 1


def schedule(dataset: str) -> tuple[int, int]:
    """(federated rounds, local epochs): the paper's 5 x 5, shorter on the large stand-ins (see
    :mod:`engine.hype.standins`)."""
    return (STANDIN_ROUNDS, STANDIN_EPOCHS) if is_standin(dataset) else (ROUNDS, EPOCHS)


def compute_scores(dataset: str, clients: int, alpha: float | None, seed: int) -> dict[str, np.ndarray]:
    """The score table (see module docstring), computed now without the cache."""
    data = client_data(dataset, clients, alpha, seed)
    grid = candidate_grid()
    n_cand, classes = grid.shape[0], data.classes
    dim = data.x_train.shape[2]
    start = initial_weights(dim - 1, classes, np.random.default_rng((seed, 3)))
    global_w = np.tile(start, (1, n_cand))                                    # (D, P * C)
    sizes = data.train_sizes.astype(np.float32)
    share = sizes / sizes.sum()
    with single_threaded_blas():
        global_w, local_accuracy, local_loss = _federated_average(data, grid, global_w, share, seed,
                                                                  *schedule(dataset))
    return {
        "local_accuracy": local_accuracy.astype(float),
        "local_loss": local_loss.astype(float),
        "test_accuracy": test_accuracy(global_w, data.x_test, data.y_test, classes).astype(float),
        "grid": grid,
        "train_sizes": data.train_sizes.astype(int),
    }


def _federated_average(data, grid, global_w, share, seed, rounds=ROUNDS, epochs=EPOCHS):
    classes = data.classes
    local_accuracy = local_loss = None
    for round_index in range(rounds):
        checkpoint()
        rng = np.random.default_rng((seed, 4, round_index))
        local_w = train_local(np.broadcast_to(global_w, (data.clients,) + global_w.shape), data.x_train,
                              data.y_train, data.m_train, grid, classes, rng, epochs=epochs)
        if round_index == 0:
            local_accuracy, local_loss = predict_scores(local_w, data.x_val, data.y_val, data.m_val, classes)
        global_w = np.tensordot(share, local_w, axes=(0, 0))
    return global_w, local_accuracy, local_loss


def score_description(dataset: str, clients: int, alpha: float | None, seed: int) -> dict:
    """What a score table depends on: the cache key."""
    features, labels = load_dataset(dataset)
    return {"task": "dp-hype-scores", "version": SCORES_VERSION, "dataset": dataset,
            "data_sha256": array_digest(features, labels), "clients": int(clients),
            "alpha": None if alpha is None else float(alpha), "seed": int(seed), "grid": candidate_grid().tolist(),
            "epochs": schedule(dataset)[1], "rounds": schedule(dataset)[0], "batch": BATCH,
            "test_fraction": TEST_FRACTION,
            "validation_fraction": VALIDATION_FRACTION, "min_per_client": MIN_PER_CLIENT,
            "model": "softmax-regression", "init": "torch-linear", "decay": "exponential-per-epoch"}


def score_table(dataset: str, clients: int, alpha: float | None, seed: int,
                cache_dir: str | None = None) -> dict[str, np.ndarray]:
    """The score table for these settings, from the disk cache when present."""
    return cached_arrays("hype-scores", score_description(dataset, clients, alpha, seed),
                         lambda: compute_scores(dataset, clients, alpha, seed), directory=cache_dir)
