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
(clients, features + 1, candidates * classes): one matrix product per step
serves every candidate. Clients whose share is shorter than the longest one
simply skip the missing batches (no step, as a loop over their data would).
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
# Numbers one chunk of clients may touch in a training step: large chunks keep numpy's batched products
# efficient (about 0.1 s each), and still come several times a second for a cancel checkpoint.
TRAIN_CHUNK = 2 * CHUNK_ELEMENTS


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


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=-1, keepdims=True)
    return shifted


def train_local(weights: np.ndarray, x: np.ndarray, y: np.ndarray, mask: np.ndarray, grid: np.ndarray,
                classes: int, rng: np.random.Generator, epochs: int = EPOCHS, batch: int = BATCH) -> np.ndarray:
    """Train every client's copy of every candidate's model on its own data.

    Parameters
    ----------
    weights : (clients, D, P * C) float32
        Starting weights (D = features + 1, P candidates, C classes); not modified.
    x, y, mask : (clients, M, D), (clients, M), (clients, M)
        Padded local training data (see :class:`engine.hype.datasets.ClientData`).
    grid : (P, 3)
        Candidates as (learning rate, decay, momentum).
    rng : numpy.random.Generator
        Draws the minibatch order of every epoch (shared by all candidates).

    Returns
    -------
    (clients, D, P * C) float32: the trained weights.
    """
    clients, width, dim = x.shape
    n_cand = grid.shape[0]
    w = np.empty(weights.shape, dtype=np.float32)
    buf = np.empty_like(w)
    step_buf = np.empty_like(w)
    # The three buffers are hundreds of MB for a few hundred clients; their pages are first touched here, in
    # chunks with a cancel checkpoint between, instead of all at once inside one uninterruptible step.
    for part in work_slices(clients, 3 * w[0].size):
        w[part] = weights[part]
        buf[part] = 0.0
        step_buf[part] = 0.0
    view_buf = buf.reshape(clients, dim, n_cand, classes)
    view_step = step_buf.reshape(clients, dim, n_cand, classes)
    lr = grid[:, 0].astype(np.float32)
    decay = grid[:, 1].astype(np.float32)
    mom = grid[:, 2].astype(np.float32)[None, None, :, None]
    onehot = np.eye(classes, dtype=np.float32)[y] * mask[..., None]
    sizes = mask.sum(axis=1)
    steps = int(np.ceil(max(1, sizes.max()) / batch))
    for epoch in range(epochs):
        epoch_lr = (lr * decay ** epoch)[None, None, :, None]
        # A random order per client with its real examples first.
        keys = rng.random((clients, width))
        keys[~mask] = np.inf
        order = np.argsort(keys, axis=1)
        for step in range(steps):
            take = order[:, step * batch:(step + 1) * batch]
            valid = (np.arange(step * batch, step * batch + take.shape[1])[None, :] < sizes[:, None])
            count = valid.sum(axis=1)
            if not (count > 0).any():
                break
            # Clients train independently: a step goes through them in chunks, a cancel checkpoint between
            # (each client's weights, momentum and step, D x P x C numbers, are passed over several times).
            # A client whose data has run out takes no step, so only the runs of clients with data are visited:
            # under label skew the largest client's batches no longer cost every client a step.
            for part in _active_slices(count > 0, 4 * dim * n_cand * classes + take.shape[1] * 3 * n_cand * classes):
                _sgd_step(part, take, valid, count, x, onehot, w, buf, step_buf, view_buf, view_step, mom, epoch_lr,
                          n_cand, classes)
    return w


def _active_slices(active: np.ndarray, elements_each: int):
    """Slices over the runs of consecutive active clients, each cut to the training chunk's budget."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], active.astype(np.int8), [0]))))
    for start, stop in zip(edges[::2], edges[1::2]):
        for part in work_slices(int(stop - start), elements_each, budget=TRAIN_CHUNK):
            yield slice(int(start) + part.start, int(start) + part.stop)


def _sgd_step(part, take, valid, count, x, onehot, w, buf, step_buf, view_buf, view_step, mom, epoch_lr,
              n_cand, classes) -> None:
    """One minibatch step of the clients in ``part`` (a slice), in place."""
    take, valid, count = take[part], valid[part], count[part]
    n = take.shape[0]
    active = (count > 0)[:, None, None, None]
    xb = np.take_along_axis(x[part], take[..., None], axis=1)                       # (n, b, D)
    yb = np.take_along_axis(onehot[part], take[..., None], axis=1)                  # (n, b, C)
    probs = _softmax((xb @ w[part]).reshape(n, -1, n_cand, classes))                # (n, b, P, C)
    probs -= yb[:, :, None, :]
    probs *= (valid / np.maximum(count, 1)[:, None]).astype(np.float32)[:, :, None, None]
    grad = np.ascontiguousarray(np.swapaxes(xb, 1, 2)) @ probs.reshape(n, -1, n_cand * classes)
    # A client without data in this batch takes no step and keeps its momentum.
    view_buf[part] *= np.where(active, mom, np.float32(1.0))
    buf[part] += grad
    np.multiply(view_buf[part], np.where(active, epoch_lr, np.float32(0.0)), out=view_step[part])
    w[part] -= step_buf[part]


def predict_scores(weights: np.ndarray, x: np.ndarray, y: np.ndarray, mask: np.ndarray,
                   classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and mean cross-entropy of every client's models on its padded examples.

    ``weights`` (clients, D, P * C), ``x`` (clients, M, D); returns two (clients, P) arrays.
    """
    clients = x.shape[0]
    logits = (x @ weights).reshape(clients, x.shape[1], -1, classes)                # (n, M, P, C)
    correct = logits.argmax(axis=-1) == y[:, :, None]
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=-1))
    true_logit = np.take_along_axis(shifted, np.broadcast_to(y[:, :, None, None], shifted.shape[:-1] + (1,)),
                                    axis=-1)[..., 0]
    loss = log_norm - true_logit
    weight = (mask / np.maximum(mask.sum(axis=1, keepdims=True), 1))[:, :, None]
    return (correct * weight).sum(axis=1), (loss * weight).sum(axis=1)


def test_accuracy(weights: np.ndarray, x: np.ndarray, y: np.ndarray, classes: int) -> np.ndarray:
    """Accuracy of every candidate's global model (D, P * C) on the test split; shape (P,)."""
    logits = (x @ weights).reshape(x.shape[0], -1, classes)
    return (logits.argmax(axis=-1) == y[:, None]).mean(axis=0)
