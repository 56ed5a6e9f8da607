"""A small non-convex model for DP-HYPE's data mode: an MLP with one hidden layer of ``HIDDEN`` ReLU units.

The paper's clients train small CNNs and an MLP, whose local optima differ from client to client (client
drift under label skew); the softmax regression of :mod:`engine.hype.training` is convex. This MLP trains by
the same vectorised code path: every client x candidate at once, the same minibatch orders
(:func:`engine.hype.training.epoch_orders`), the same epoch loop (:func:`engine.hype.training.train_chunk`: a
few clients at a time, equally long batches stepping together), the same momentum and per-epoch decay
(PyTorch's conventions), the same candidate groups (decay 0 stops after one epoch). Only the step differs:
a forward and backward pass through two layers instead of one.

Weights start from PyTorch's ``nn.Linear`` draw for both layers (U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bias
included), the same for every client and candidate. A client's weights are one flat float32 vector per
client: the first layer (D, P, H) (D inputs with the bias column, P candidates, H hidden units) and then the
second (P, H + 1, C) (its bias last). A learning rate that makes a candidate diverge leaves non-finite
weights in that candidate's columns only; such a model scores as it predicts (its loss counts as infinite).
"""

from __future__ import annotations

import numpy as np

from engine.cancel import work_slices
from engine.hype.training import BATCH, EPOCHS, TRAIN_CHUNK, epoch_groups, epoch_orders, train_chunk

HIDDEN = 32
NAME = f"mlp-{HIDDEN}"
LABEL = f"MLP, one hidden layer of {HIDDEN} ReLU units"


def sizes(dim: int, classes: int, candidates: int, hidden: int = HIDDEN) -> tuple[int, int]:
    """Numbers in the first and second layer of ``candidates`` models (``dim`` inputs with the bias column)."""
    return dim * candidates * hidden, candidates * (hidden + 1) * classes


def initial_weights(features: int, classes: int, rng: np.random.Generator, hidden: int = HIDDEN):
    """One model's (first layer (features + 1, H), second layer (H + 1, C)), PyTorch's default draw, bias last."""
    first = rng.uniform(-1 / np.sqrt(features), 1 / np.sqrt(features), size=(features + 1, hidden))
    second = rng.uniform(-1 / np.sqrt(hidden), 1 / np.sqrt(hidden), size=(hidden + 1, classes))
    return first.astype(np.float32), second.astype(np.float32)


def common_start(start, candidates: int) -> np.ndarray:
    """One model copied for every candidate, flat in the layout of the module docstring."""
    first, second = start
    w1 = np.repeat(first[:, None, :], candidates, axis=1)
    w2 = np.repeat(second[None], candidates, axis=0)
    return np.concatenate([w1.ravel(), w2.ravel()])


def unpack(weights: np.ndarray, dim: int, classes: int, hidden: int = HIDDEN):
    """Views of flat weights (..., S) as (first (..., D, P, H), second (..., P, H + 1, C))."""
    lead = weights.shape[:-1]
    candidates = weights.shape[-1] // (dim * hidden + (hidden + 1) * classes)
    a = dim * candidates * hidden
    return (weights[..., :a].reshape(lead + (dim, candidates, hidden)),
            weights[..., a:].reshape(lead + (candidates, hidden + 1, classes)))


class _Group:
    """The candidates that train equally long (see :class:`engine.hype.training._Group`): a chunk's weights
    ``w`` and momentum ``u`` (n, S_G) flat, the momentum kept multiplied by the epoch's learning rate."""

    def __init__(self, index, grid, classes, epochs, dim, hidden=HIDDEN):
        self.index, self.epochs, self.classes, self.dim, self.hidden = index, int(epochs), classes, dim, hidden
        lr, decay = grid[index, 0].astype(np.float32), grid[index, 1].astype(np.float32)
        self.mom = grid[index, 2].astype(np.float32)
        self.rates = [lr * decay ** epoch for epoch in range(self.epochs)]

    def _views(self, w):
        n, size, hidden = w.shape[0], len(self.index), self.hidden
        a = self.dim * size * hidden
        return w[:, :a].reshape(n, self.dim, size, hidden), w[:, a:].reshape(n, size, hidden + 1, self.classes)

    def start(self, source: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        first, second = unpack(source, self.dim, self.classes, self.hidden)
        n = source.shape[0]
        w = np.concatenate([first[:, :, self.index].reshape(n, -1), second[:, self.index].reshape(n, -1)], axis=1)
        return w, np.zeros_like(w)

    def place(self, w: np.ndarray, out: np.ndarray) -> None:
        """Write this group's trained weights ``w`` into the full flat weights ``out`` (n, S)."""
        first, second = unpack(out, self.dim, self.classes, self.hidden)
        w1, w2 = self._views(w)
        first[:, :, self.index] = w1
        second[:, self.index] = w2

    def start_epoch(self, u: np.ndarray, epoch: int) -> None:
        if epoch:
            ratio = self.rates[epoch] / self.rates[epoch - 1]
            u1, u2 = self._views(u)
            u1 *= ratio[:, None]
            u2 *= ratio[:, None, None]

    def step(self, w, u, epoch, xb, xbt, label) -> None:
        """One minibatch step (forward, backward, momentum) of the clients whose ``w``, ``u`` are given."""
        n, b = xb.shape[:2]
        size, hidden = len(self.index), self.hidden
        share = np.float32(1.0 / b) * self.rates[epoch]                                   # (G,): lr / b
        w1, w2 = self._views(w)
        hidden_in = xb @ w1.reshape(n, self.dim, -1)                                       # (n, b, G H)
        active = hidden_in > 0
        act = np.where(active, hidden_in, np.float32(0)).reshape(n, b, size, hidden).transpose(0, 2, 1, 3)
        z = act @ w2[:, :, :hidden]                                                        # (n, G, b, C)
        z += w2[:, :, hidden][:, :, None, :]
        z -= z.max(axis=3, keepdims=True)
        np.exp(z, out=z)
        z *= (share[None, :, None] / z.sum(axis=3))[..., None]                             # softmax * lr / b
        z[np.arange(n)[:, None, None], np.arange(size)[None, :, None], np.arange(b)[None, None, :],
          label[:, None, :]] -= share[None, :, None]
        back = z @ np.swapaxes(w2[:, :, :hidden], 2, 3)                                    # (n, G, b, H)
        back = np.ascontiguousarray(back.transpose(0, 2, 1, 3)).reshape(n, b, -1)
        back *= active
        u1, u2 = self._views(u)
        u1 *= self.mom[:, None]
        u2 *= self.mom[:, None, None]
        u1 += (xbt @ back).reshape(u1.shape)
        u2[:, :, :hidden] += np.swapaxes(act, 2, 3) @ z
        u2[:, :, hidden] += z.sum(axis=2)
        w -= u


def train_local(weights: np.ndarray, x: np.ndarray, y: np.ndarray, mask: np.ndarray, grid: np.ndarray,
                classes: int, rng: np.random.Generator, epochs: int = EPOCHS, batch: int = BATCH,
                hidden: int = HIDDEN) -> np.ndarray:
    """Train every client's copy of every candidate's MLP on its own data, as
    :func:`engine.hype.training.train_local` trains the softmax regression; ``weights`` (clients, S) flat,
    not modified; returns the trained (clients, S) float32."""
    clients, _, dim = x.shape
    groups = [_Group(index, grid, classes, e, dim, hidden) for index, e in epoch_groups(grid, epochs)]
    sizes_ = mask.sum(axis=1)
    orders = epoch_orders(rng, mask, epochs)
    out = np.empty(weights.shape, dtype=np.float32)
    by_size = np.argsort(-sizes_, kind="stable")
    per_client = 2 * weights.shape[1] + batch * len(grid) * (2 * hidden + classes)
    with np.errstate(over="ignore", invalid="ignore"):
        for part in work_slices(clients, per_client, budget=TRAIN_CHUNK):
            chunk = by_size[part]
            state = [group.start(weights[chunk]) for group in groups]
            train_chunk(groups, state, [order[chunk] for order in orders], x[chunk], y[chunk], sizes_[chunk], batch)
            trained = np.empty((len(chunk), weights.shape[1]), dtype=np.float32)
            for group, (w, _) in zip(groups, state):
                group.place(w, trained)
            out[chunk] = trained
    return out


def logits(weights: np.ndarray, x: np.ndarray, classes: int, hidden: int = HIDDEN) -> np.ndarray:
    """(P, m, C) logits of every candidate's model (flat ``weights`` (S,)) on examples ``x`` (m, D)."""
    first, second = unpack(weights, x.shape[1], classes, hidden)
    with np.errstate(over="ignore", invalid="ignore"):
        act = np.maximum(x @ first.reshape(x.shape[1], -1), 0).reshape(len(x), -1, hidden).transpose(1, 0, 2)
        return act @ second[:, :hidden] + second[:, hidden][:, None, :]


def predict_scores(weights: np.ndarray, x: np.ndarray, y: np.ndarray, mask: np.ndarray,
                   classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and mean cross-entropy (infinite where not finite) of every client's MLPs on its real examples;
    two (clients, P) arrays, as :func:`engine.hype.training.predict_scores`."""
    accuracy = np.zeros((x.shape[0], unpack(weights[0], x.shape[2], classes)[1].shape[0]))
    loss = np.zeros_like(accuracy)
    with np.errstate(over="ignore", invalid="ignore"):
        for client in range(x.shape[0]):
            rows = mask[client]
            z = logits(weights[client], x[client, rows], classes)                          # (P, m, C)
            labels = y[client, rows]
            accuracy[client] = (z.argmax(axis=2) == labels[None, :]).mean(axis=1)
            top = z.max(axis=2, keepdims=True)
            true = np.take_along_axis(z, np.broadcast_to(labels[None, :, None], top.shape), axis=2)[..., 0]
            value = (np.log(np.exp(z - top).sum(axis=2)) - (true - top[..., 0])).mean(axis=1)
            loss[client] = np.where(np.isfinite(value), value, np.inf)
    return accuracy, loss


def test_accuracy(weights: np.ndarray, x: np.ndarray, y: np.ndarray, classes: int) -> np.ndarray:
    """Accuracy of every candidate's global MLP (flat (S,)) on the test split; shape (P,)."""
    correct = None
    for part in work_slices(len(x), weights.size // x.shape[1] + 1, budget=TRAIN_CHUNK):
        hits = (logits(weights, x[part], classes).argmax(axis=2) == y[part][None, :]).sum(axis=1)
        correct = hits if correct is None else correct + hits
    return correct / len(x)
