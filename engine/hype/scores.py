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
from engine.hype import mlp
from engine.cancel import checkpoint
from engine.hype.standins import STANDIN_EPOCHS, STANDIN_ROUNDS, is_standin
from engine.hype.datasets import (MIN_PER_CLIENT, PACKAGED_DATASETS, TEST_FRACTION, VALIDATION_FRACTION, client_data,
                                  dataset_digest)
from engine.blas import blas_kernel, single_threaded_blas
from engine.validation import check_choice
from engine.hype.training import (
    BATCH,
    EPOCHS,
    ROUNDS,
    candidate_grid,
    common_start,
    initial_weights,
    predict_scores,
    test_accuracy,
    train_local,
)

# The models a score table can train (what its cache key calls them): the softmax regression everywhere, the MLP
# of engine.hype.mlp for the Fashion-MNIST part of the paper reproduction.
MODELS = {"softmax": "softmax-regression", "mlp": f"mlp-{mlp.HIDDEN}-relu"}
SCORES_VERSION = 3   # 2: class-major weights, scaled momentum; 3: equally long batches step together (rounding)


# How the stand-ins' score tables train: the paper's federated averaging (5 rounds of 5 local epochs, batch 64)
# or the reduced schedule, about 5 times cheaper (CPU seconds per table on the 2-core development machine, BLAS kernel
# as the environment pins it: Cifar-10-like n = 100 iid 4.9 at 5 x 5, 0.9 at 2 x 1; Adult-like n = 100,
# alpha = 0.5: 1.5 and 0.3). The bundled scikit-learn sets always train 5 x 5 (under half a second a table).
# "two-epochs" (2 rounds of 2 local epochs) trains the Fashion-MNIST part of the paper reproduction: more than one
# local epoch, so that a client's model can drift from the federation's, at a fifth of the paper's cost.
TRAININGS = {"paper": (ROUNDS, EPOCHS), "short": (STANDIN_ROUNDS, STANDIN_EPOCHS), "two-epochs": (2, 2)}
TRAINING_LABELS = {"paper": f"the paper's federated averaging: {ROUNDS} rounds of {EPOCHS} local epochs, batch {BATCH}",
                   "short": f"reduced training: {STANDIN_ROUNDS} rounds of {STANDIN_EPOCHS} local epoch, batch "
                            f"{BATCH} (the paper: {ROUNDS} x {EPOCHS})",
                   "two-epochs": f"reduced training: 2 rounds of 2 local epochs, batch {BATCH} (the paper: "
                                 f"{ROUNDS} x {EPOCHS})"}
# The pages and sweeps build one stand-in table per run while a visitor waits: the reduced schedule (see
# engine.hype.standins); the paper reproduction asks for its schedule (engine.reproduce.dp_hype).
DEFAULT_STANDIN_TRAINING = "short"


def schedule(dataset: str, training: str | None = None) -> tuple[int, int]:
    """(federated rounds, local epochs) of ``dataset``'s score tables: ``training`` (one of :data:`TRAININGS`) on
    the stand-ins and the packaged sets (default ``DEFAULT_STANDIN_TRAINING``), the paper's 5 x 5 on the bundled
    scikit-learn sets."""
    if training is not None:
        check_choice("training", training, TRAININGS)
    if not is_standin(dataset) and dataset not in PACKAGED_DATASETS:
        return (ROUNDS, EPOCHS)
    return TRAININGS[training or DEFAULT_STANDIN_TRAINING]


def training_label(dataset: str, training: str | None = None) -> str:
    """How ``dataset``'s score tables train, in words (a reduced schedule says it is not the paper's)."""
    rounds, epochs = schedule(dataset, training)
    return TRAINING_LABELS[next(name for name, value in TRAININGS.items() if value == (rounds, epochs))]


def _model(model: str):
    """(initial weights, common start, train_local, predict_scores, test_accuracy) of ``model``."""
    check_choice("model", model, MODELS)
    if model == "softmax":
        return initial_weights, common_start, train_local, predict_scores, test_accuracy
    return mlp.initial_weights, mlp.common_start, mlp.train_local, mlp.predict_scores, mlp.test_accuracy


def compute_scores(dataset: str, clients: int, alpha: float | None, seed: int,
                   training: str | None = None, model: str = "softmax") -> dict[str, np.ndarray]:
    """The score table (see module docstring), computed now without the cache; ``model``: one of
    :data:`MODELS` (the softmax regression unless asked)."""
    init, start_all, train, predict, score_test = _model(model)
    data = client_data(dataset, clients, alpha, seed)
    grid = candidate_grid()
    n_cand, classes = grid.shape[0], data.classes
    dim = data.x_train.shape[2]
    start = init(dim - 1, classes, np.random.default_rng((seed, 3)))
    global_w = start_all(start, n_cand)                                       # softmax: (D, C * P)
    sizes = data.train_sizes.astype(np.float32)
    share = sizes / sizes.sum()
    with single_threaded_blas():
        global_w, local_accuracy, local_loss = _federated_average(data, grid, global_w, share, seed,
                                                                  *schedule(dataset, training), train, predict)
    return {
        "local_accuracy": local_accuracy.astype(float),
        "local_loss": local_loss.astype(float),
        "test_accuracy": score_test(global_w, data.x_test, data.y_test, classes).astype(float),
        "grid": grid,
        "train_sizes": data.train_sizes.astype(int),
    }


def _federated_average(data, grid, global_w, share, seed, rounds=ROUNDS, epochs=EPOCHS, train=train_local,
                       predict=predict_scores):
    classes = data.classes
    local_accuracy = local_loss = None
    for round_index in range(rounds):
        checkpoint()
        rng = np.random.default_rng((seed, 4, round_index))
        local_w = train(np.broadcast_to(global_w, (data.clients,) + global_w.shape), data.x_train,
                        data.y_train, data.m_train, grid, classes, rng, epochs=epochs)
        if round_index == 0:
            local_accuracy, local_loss = predict(local_w, data.x_val, data.y_val, data.m_val, classes)
        global_w = np.tensordot(share, local_w, axes=(0, 0))
    return global_w, local_accuracy, local_loss


def score_description(dataset: str, clients: int, alpha: float | None, seed: int,
                      training: str | None = None, model: str = "softmax") -> dict:
    """What a score table depends on: the cache key."""
    rounds, epochs = schedule(dataset, training)
    check_choice("model", model, MODELS)
    return {"task": "dp-hype-scores", "version": SCORES_VERSION, "dataset": dataset,
            "data_sha256": dataset_digest(dataset), "clients": int(clients),
            "alpha": None if alpha is None else float(alpha), "seed": int(seed), "grid": candidate_grid().tolist(),
            "epochs": epochs, "rounds": rounds, "batch": BATCH,
            "test_fraction": TEST_FRACTION,
            "validation_fraction": VALIDATION_FRACTION, "min_per_client": MIN_PER_CLIENT,
            "model": MODELS[model], "init": "torch-linear", "decay": "exponential-per-epoch",
            # SGD amplifies the last bits of the BLAS kernel (which the environment may pin, OPENBLAS_CORETYPE):
            # a table is reused only under the kernel that made it, so a seed gives one table per machine setup.
            "blas_kernel": blas_kernel()}


def score_table(dataset: str, clients: int, alpha: float | None, seed: int,
                cache_dir: str | None = None, training: str | None = None,
                model: str = "softmax") -> dict[str, np.ndarray]:
    """The score table for these settings, from the disk cache when present (``training``: see
    :func:`schedule`; ``model``: one of :data:`MODELS`)."""
    return cached_arrays("hype-scores", score_description(dataset, clients, alpha, seed, training, model),
                         lambda: compute_scores(dataset, clients, alpha, seed, training, model), directory=cache_dir)
