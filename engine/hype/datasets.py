"""The data behind DP-HYPE's data mode: scikit-learn's bundled sets split among clients.

A data set is split once into a training pool (80 %, stratified, as the
paper's default train-test split) and a held-out test split. Inputs are
standardised with the training pool's mean and standard deviation (the paper
standardises every data set). The pool is divided among the clients either
iid (equal random shares) or by a per-class Dirichlet(alpha) partition (paper
Sec. VI-D, App. B): every client is first dealt ``MIN_PER_CLIENT`` random
examples so it can train and validate, then each class is divided among the
clients in Dirichlet(alpha, ..., alpha) proportions. Each client keeps a
quarter of its share (at least one example) as its local validation split.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.hype import fashion
from engine.hype.standins import STANDIN_SIZES, STANDINS, is_standin, load_standin
from engine.objectives.datasets import array_digest
from engine.validation import ConfigError

# name -> (scikit-learn loader, human label)
HYPE_DATASETS = {
    "digits": ("load_digits", "Digits (8 x 8 images, 10 classes)"),
    "breast-cancer": ("load_breast_cancer", "Breast cancer (30 features, 2 classes)"),
    "wine": ("load_wine", "Wine (13 features, 3 classes)"),
    **{name: ("generated", label) for name, label in STANDINS.items()},
}
# Number of examples of each set, so a configuration can be checked without loading it
# (tests compare these with scikit-learn).
DATASET_SIZES = {"digits": 1797, "breast-cancer": 569, "wine": 178, **STANDIN_SIZES}
# Real data sets read from a system package (engine.hype.fashion): the paper reproduction's, not offered on the
# DP-HYPE page (a score table on them costs minutes, not seconds).
PACKAGED_DATASETS = {fashion.NAME: fashion.LABEL}
PACKAGED_SIZES = {fashion.NAME: fashion.SIZE}
TEST_FRACTION = 0.2
VALIDATION_FRACTION = 0.25
MIN_PER_CLIENT = 2  # one example to train on, one to validate on


def train_size(name: str) -> int:
    """Examples in the training pool of data set ``name`` (the rest is the test split)."""
    total = {**DATASET_SIZES, **PACKAGED_SIZES}[name]
    return total - int(round(TEST_FRACTION * total))


def max_clients(name: str) -> int:
    """The most clients the training pool of ``name`` can serve (``MIN_PER_CLIENT`` examples each)."""
    return train_size(name) // MIN_PER_CLIENT


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (float64) and integer labels 0..C-1 of a bundled scikit-learn data set."""
    import sklearn.datasets

    if name not in HYPE_DATASETS and name not in PACKAGED_DATASETS:
        raise ConfigError(f"data set must be one of {', '.join(HYPE_DATASETS)}, got {name!r}.", "dataset")
    if name == fashion.NAME:
        return fashion.load_fashion_mnist()
    if is_standin(name):
        return load_standin(name)
    data = getattr(sklearn.datasets, HYPE_DATASETS[name][0])()
    return np.asarray(data.data, dtype=float), np.asarray(data.target, dtype=int)


@lru_cache(maxsize=8)
def dataset_digest(name: str) -> str:
    """sha256 of data set ``name``'s features and labels (the score tables' cache key), hashed once per process:
    a bundled or generated set cannot change while the process runs."""
    return array_digest(*load_dataset(name))


def stratified_test_split(labels: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (train, test) indices with ``TEST_FRACTION`` of every class in the test split.

    The per-class test counts are rounded so that their total is ``round(TEST_FRACTION * n)``.
    """
    labels = np.asarray(labels)
    classes, counts = np.unique(labels, return_counts=True)
    wanted = int(round(TEST_FRACTION * len(labels)))
    exact = counts * TEST_FRACTION
    take = np.floor(exact).astype(int)
    # Largest remainders first, so the total is exactly ``wanted``.
    for index in np.argsort(-(exact - take), kind="stable")[: wanted - int(take.sum())]:
        take[index] += 1
    train, test = [], []
    for label, count in zip(classes, take):
        members = rng.permutation(np.flatnonzero(labels == label))
        test.append(members[:count])
        train.append(members[count:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def partition_clients(labels: np.ndarray, n_clients: int, alpha: float | None,
                      rng: np.random.Generator) -> list[np.ndarray]:
    """Indices of each client's share: iid (``alpha=None``) or per-class Dirichlet(alpha).

    Every client holds at least ``MIN_PER_CLIENT`` examples; together the
    shares cover every example once.
    """
    labels = np.asarray(labels)
    total = len(labels)
    if n_clients * MIN_PER_CLIENT > total:
        raise ConfigError(f"The number of clients must be at most {total // MIN_PER_CLIENT} for this data set "
                          f"(each needs {MIN_PER_CLIENT} examples), got {n_clients}.", "clients")
    order = rng.permutation(total)
    if alpha is None:
        return [np.sort(part) for part in np.array_split(order, n_clients)]
    floor = order[: n_clients * MIN_PER_CLIENT].reshape(n_clients, MIN_PER_CLIENT)
    rest = order[n_clients * MIN_PER_CLIENT:]
    shares: list[list[np.ndarray]] = [[floor[client]] for client in range(n_clients)]
    for label in np.unique(labels):
        members = rest[labels[rest] == label]
        proportions = rng.dirichlet(np.full(n_clients, float(alpha)))
        cuts = np.round(np.cumsum(proportions)[:-1] * len(members)).astype(int)
        for client, part in enumerate(np.split(members, cuts)):
            shares[client].append(part)
    return [np.sort(np.concatenate(parts)) for parts in shares]


@dataclass(frozen=True)
class ClientData:
    """Every client's local train and validation examples as padded tensors.

    ``x_*`` have shape (clients, max examples, features + 1) with a constant 1
    column for the bias; ``y_*`` hold labels (padding: 0) and ``m_*`` mark the
    real examples. ``x_test``/``y_test`` is the held-out test split.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    m_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    m_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: int
    digest: str

    @property
    def clients(self) -> int:
        return self.x_train.shape[0]

    @property
    def train_sizes(self) -> np.ndarray:
        return self.m_train.sum(axis=1)


def _pad(features: np.ndarray, labels: np.ndarray, groups: list[np.ndarray]):
    width = max(1, max(len(group) for group in groups))
    x = np.zeros((len(groups), width, features.shape[1]), dtype=np.float32)
    y = np.zeros((len(groups), width), dtype=np.int64)
    mask = np.zeros((len(groups), width), dtype=bool)
    for client, group in enumerate(groups):
        x[client, : len(group)] = features[group]
        y[client, : len(group)] = labels[group]
        mask[client, : len(group)] = True
    return x, y, mask


def _split(labels: np.ndarray, n_clients: int, alpha: float | None, seed: int):
    """(train, test, shares): the test split and every client's share of the training pool (indices into
    ``labels``), as :func:`client_data` draws them for ``seed``."""
    train, test = stratified_test_split(labels, np.random.default_rng((seed, 0)))
    shares = partition_clients(labels[train], n_clients, alpha, np.random.default_rng((seed, 1)))
    return train, test, [train[share] for share in shares]


def client_label_counts(name: str, n_clients: int, alpha: float | None, seed: int) -> np.ndarray:
    """(clients, classes): how many examples of each label every client holds (training and validation
    together, the paper's App. B, Figs. 7-8), exactly as :func:`client_data` splits ``name`` for ``seed``."""
    _, labels = load_dataset(name)
    _, _, shares = _split(labels, n_clients, alpha, seed)
    classes = int(labels.max()) + 1
    return np.stack([np.bincount(labels[share], minlength=classes) for share in shares])


def client_data(name: str, n_clients: int, alpha: float | None, seed: int) -> ClientData:
    """Split data set ``name`` among ``n_clients`` (see the module docstring); seeded by ``seed``."""
    features, labels = load_dataset(name)
    digest = dataset_digest(name)
    train, test, shares = _split(labels, n_clients, alpha, seed)
    mean = features[train].mean(axis=0)
    scale = features[train].std(axis=0)
    scale[scale == 0] = 1.0  # constant pixels stay 0 instead of dividing by zero
    standard = (features - mean) / scale
    inputs = np.hstack([standard, np.ones((len(labels), 1))])
    local_rng = np.random.default_rng((seed, 2))
    fit, check = [], []
    for share in shares:
        share = local_rng.permutation(share)
        held = max(1, int(round(VALIDATION_FRACTION * len(share))))
        check.append(share[:held])
        fit.append(share[held:])
    x_train, y_train, m_train = _pad(inputs, labels, fit)
    x_val, y_val, m_val = _pad(inputs, labels, check)
    return ClientData(x_train, y_train, m_train, x_val, y_val, m_val,
                      inputs[test].astype(np.float32), labels[test], int(labels.max()) + 1, digest)
