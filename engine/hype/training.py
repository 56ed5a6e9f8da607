"""Softmax regression trained by SGD for every client and every candidate at once.

The model is multinomial logistic regression (a linear layer and softmax, the
smallest model the paper's CPU-free setting allows: the paper trains small
CNNs and an MLP in PyTorch). A candidate is (learning rate, decay, momentum)
from the paper's Table III. Training follows PyTorch's conventions:

- weights start from ``nn.Linear``'s default draw U(-1/sqrt(d), 1/sqrt(d)),
  the same draw for every client and candidate (a federation's common start),
  so a tiny learning rate leaves a near-random classifier, as in the paper;
- heavy-ball momentum ``buf <- mu buf + grad; w <- w - lr_e buf``;
- the learning rate decays per epoch as ``lr_e = lr * decay^e`` (PyTorch's
  ExponentialLR; decay 1 keeps it constant, decay 0 trains one epoch only);
- minibatches of ``BATCH`` examples in a fresh random order every epoch, the
  gradient averaged over the batch.

All clients x candidates train together as one tensor of weights with shape
(clients, features + 1, classes * candidates), class-major (one class's
candidates side by side, so that the softmax reduces over a middle axis): one
matrix product per step serves every candidate. Candidates with decay 0 (whose
learning rate is zero after the first epoch) form a group of their own that
stops after it. A few clients at a time (largest first) go through all their
epochs while their weights stay in the processor's cache. Within a step, the
clients whose batches are equally long step together, so no padded row is
computed; a client whose data has run out takes no step.
"""

from __future__ import annotations

import itertools

import numpy as np

from engine.cancel import CHUNK_ELEMENTS, work_slices

LEARNING_RATES = (0.5, 0.1, 0.05, 1e-3, 5e-3, 1e-5, 1e-6, 5e-6, 5e-7, 1e-7)
DECAYS = (0.0, 0.1, 0.25, 0.99, 1.0)
MOMENTA = (0.0, 0.9)
EPOCHS = 5   # local epochs (paper Sec. VI-B)
ROUNDS = 5   # federated averaging rounds (paper Sec. VI-B)
BATCH = 64   # paper Sec. VI-B
# Numbers one chunk of clients may hold while it trains through all its epochs (weights, momentum, logits): a few
# clients, so that they stay in the processor's cache (4-5 at the stand-ins' 100 candidates x 10 classes, the
# fastest measured), with a cancel checkpoint between chunks.
TRAIN_CHUNK = CHUNK_ELEMENTS // 4


def candidate_grid() -> np.ndarray:
    """The paper's Table III: (learning rate, decay, momentum) rows, 10 x 5 x 2 = 100."""
    return np.array(list(itertools.product(LEARNING_RATES, DECAYS, MOMENTA)), dtype=float)


def candidate_labels(grid: np.ndarray | None = None) -> list[str]:
    grid = candidate_grid() if grid is None else grid
    return [f"lr={lr:g}, decay={decay:g}, momentum={mom:g}" for lr, decay, mom in grid]


def initial_weights(features: int, classes: int, rng: np.random.Generator) -> np.ndarray:
    """PyTorch's default ``nn.Linear`` initialisation; shape (features + 1, classes), bias last."""
    bound = 1.0 / np.sqrt(features)
    return rng.uniform(-bound, bound, size=(features + 1, classes)).astype(np.float32)


def common_start(start: np.ndarray, candidates: int) -> np.ndarray:
    """One model (D, C) copied for every candidate, in the layout training uses: (D, C * P), class-major (the
    P candidates' weights of one class side by side), so that a softmax over classes reduces over a middle axis
    with the candidates contiguous (numpy reduces a short last axis ten times slower)."""
    return np.repeat(start, candidates, axis=1)


def candidate_weights(weights: np.ndarray, classes: int, candidate: int) -> np.ndarray:
    """Candidate ``candidate``'s (..., D, C) weights out of the layout of :func:`common_start`."""
    return weights.reshape(weights.shape[:-1] + (classes, -1))[..., candidate]


def live_epochs(grid: np.ndarray, epochs: int) -> np.ndarray:
    """Epochs in which each candidate's learning rate is not zero: a decay of 0 sets it to zero after the first
    (``lr * 0 ** e``), so its weights cannot move again and those epochs are skipped, exactly."""
    return np.where(grid[:, 1] == 0.0, min(1, epochs), epochs)


def epoch_groups(grid: np.ndarray, epochs: int) -> list[tuple[np.ndarray, int]]:
    """(candidate indices, epochs) of the candidates that train equally long, the longest first."""
    live = live_epochs(grid, epochs)
    return [(np.flatnonzero(live == e), e) for e in sorted(set(live.tolist()), reverse=True)]


def epoch_orders(rng: np.random.Generator, mask: np.ndarray, epochs: int) -> list[np.ndarray]:
    """A random order of every client's examples per epoch, its real examples first (shared by every candidate)."""
    orders = []
    for _ in range(epochs):
        keys = rng.random(mask.shape)
        keys[~mask] = np.inf
        orders.append(np.argsort(keys, axis=1))
    return orders


class _Group:
    """The candidates that train for the same number of epochs. A chunk of clients holds their weights ``w``
    (n, D, C * G) and momentum ``u``, kept multiplied by the epoch's learning rate (``u = lr_e * buf``, so a step
    is ``u <- mu u + lr_e g; w <- w - u``, one pass fewer than PyTorch's ``buf <- mu buf + g; w <- w - lr_e buf``,
    and the same numbers up to rounding)."""

    def __init__(self, index, grid, classes, epochs):
        self.index, self.epochs, self.classes = index, int(epochs), classes
        lr, decay = grid[index, 0].astype(np.float32), grid[index, 1].astype(np.float32)
        self.mom = grid[index, 2].astype(np.float32)
        self.rates = [lr * decay ** epoch for epoch in range(self.epochs)]

    def start(self, source: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A chunk's (w, u) from its starting weights ``source`` (n, D, C, P): this group's columns, no momentum."""
        w = np.ascontiguousarray(source[..., self.index]).reshape(source.shape[0], source.shape[1], -1)
        return w, np.zeros_like(w)

    def start_epoch(self, u: np.ndarray, epoch: int) -> None:
        """Rescale a chunk's momentum to the learning rate of ``epoch``."""
        if epoch:
            u.reshape(u.shape[:2] + (self.classes, -1))[...] *= self.rates[epoch] / self.rates[epoch - 1]

    def step(self, w, u, epoch, xb, xbt, label) -> None:
        """One minibatch step of the clients whose ``w`` and ``u`` (views) are given, in place; every client's
        batch holds the ``b`` examples of ``xb`` (n, b, D), so each is 1/b of its mean gradient."""
        n, b = xb.shape[:2]
        classes, size = self.classes, len(self.index)
        share = np.float32(1.0 / b) * self.rates[epoch]                                  # (G,): lr / b
        z = (xb @ w).reshape(n, b, classes, size)                                        # (n, b, C, G)
        z -= z.max(axis=2, keepdims=True)
        np.exp(z, out=z)
        # (softmax - onehot) * lr / b, the learning rate folded in: scale the exponentials once, then take the
        # scaled one off at each example's label.
        z *= (share / z.sum(axis=2))[:, :, None, :]
        rows = np.arange(n)[:, None], np.arange(b)[None, :]
        z[rows[0], rows[1], label] -= share
        u.reshape(n, -1, classes, size)[...] *= self.mom
        u += xbt @ z.reshape(n, b, -1)
        w -= u


def train_local(weights: np.ndarray, x: np.ndarray, y: np.ndarray, mask: np.ndarray, grid: np.ndarray,
                classes: int, rng: np.random.Generator, epochs: int = EPOCHS, batch: int = BATCH) -> np.ndarray:
    """Train every client's copy of every candidate's model on its own data.

    Parameters
    ----------
    weights : (clients, D, C * P) float32
        Starting weights (D = features + 1, P candidates, C classes) in the layout of :func:`common_start`;
        not modified.
    x, y, mask : (clients, M, D), (clients, M), (clients, M)
        Padded local training data (see :class:`engine.hype.datasets.ClientData`).
    grid : (P, 3)
        Candidates as (learning rate, decay, momentum).
    rng : numpy.random.Generator
        Draws the minibatch order of every epoch (shared by all candidates).

    Returns
    -------
    (clients, D, C * P) float32: the trained weights, in the same layout.
    """
    clients, width, dim = x.shape
    groups = [_Group(index, grid, classes, e) for index, e in epoch_groups(grid, epochs)]
    sizes = mask.sum(axis=1)
    orders = epoch_orders(rng, mask, epochs)
    source = weights.reshape(clients, dim, classes, -1)
    out = np.empty((clients, dim, classes, len(grid)), dtype=np.float32)
    # Clients train independently: a few at a time go through all their epochs while their weights, momentum and
    # logits stay in the processor's cache (a step through every client at once streamed them all from memory),
    # with a cancel checkpoint between chunks. Chunks take the clients largest first, so that under label skew a
    # chunk's clients run out of data together instead of leaving one large client to step alone.
    by_size = np.argsort(-sizes, kind="stable")
    per_client = 2 * dim * classes * len(grid) + batch * classes * len(grid)
    for part in work_slices(clients, per_client, budget=TRAIN_CHUNK):
        chunk = by_size[part]
        state = [group.start(source[chunk]) for group in groups]
        train_chunk(groups, state, [order[chunk] for order in orders], x[chunk], y[chunk], sizes[chunk], batch)
        trained = np.empty((len(chunk), dim, classes, len(grid)), dtype=np.float32)
        for group, (w, _) in zip(groups, state):
            trained[..., group.index] = w.reshape(len(chunk), dim, classes, -1)
        out[chunk] = trained
    return out.reshape(clients, dim, classes * len(grid))


def train_chunk(groups, state, orders, x, y, sizes, batch) -> None:
    """All the local epochs of one chunk of clients (their data ``x``, ``y``, ``sizes`` and per-epoch ``orders``),
    in place in ``state``: each group's (w, u)."""
    for epoch, order in enumerate(orders):
        training = [(group, w, u) for group, (w, u) in zip(groups, state) if epoch < group.epochs]
        for group, _, u in training:
            group.start_epoch(u, epoch)
        for step in range(int(np.ceil(max(1, sizes.max()) / batch))):
            count = np.clip(sizes - step * batch, 0, batch)
            # Clients step together when their batches are equally long: full ones, and each length of a short
            # last batch, so no row is padding. A client whose data has run out takes no step.
            for b in np.unique(count[count > 0])[::-1].tolist():
                take = order[:, step * batch:step * batch + b]
                for run in _active_runs(count == b):
                    rows = take[run]
                    xb = np.take_along_axis(x[run], rows[..., None], axis=1)                 # (n, b, D)
                    xbt = np.ascontiguousarray(np.swapaxes(xb, 1, 2))
                    label = np.take_along_axis(y[run], rows, axis=1)
                    for group, w, u in training:
                        group.step(w[run], u[run], epoch, xb, xbt, label)


def _active_runs(active: np.ndarray):
    """Slices over the runs of consecutive active clients."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], active.astype(np.int8), [0]))))
    for start, stop in zip(edges[::2], edges[1::2]):
        yield slice(int(start), int(stop))


def predict_scores(weights: np.ndarray, x: np.ndarray, y: np.ndarray, mask: np.ndarray,
                   classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and mean cross-entropy of every client's models on its padded examples.

    ``weights`` (clients, D, C * P) as :func:`common_start` lays them out, ``x`` (clients, M, D); returns two
    (clients, P) arrays.
    """
    clients = x.shape[0]
    logits = (x @ weights).reshape(clients, x.shape[1], classes, -1)                # (n, M, C, P)
    correct = logits.argmax(axis=2) == y[:, :, None]
    top = logits.max(axis=2, keepdims=True)
    true_logit = np.take_along_axis(logits, np.broadcast_to(y[:, :, None, None], top.shape), axis=2)[:, :, 0]
    logits -= top
    np.exp(logits, out=logits)
    loss = np.log(logits.sum(axis=2)) - (true_logit - top[:, :, 0])
    weight = (mask / np.maximum(mask.sum(axis=1, keepdims=True), 1))[:, :, None]
    return (correct * weight).sum(axis=1), (loss * weight).sum(axis=1)


def test_accuracy(weights: np.ndarray, x: np.ndarray, y: np.ndarray, classes: int) -> np.ndarray:
    """Accuracy of every candidate's global model (D, C * P) on the test split; shape (P,)."""
    logits = (x @ weights).reshape(x.shape[0], classes, -1)
    return (logits.argmax(axis=1) == y[:, None]).mean(axis=0)

