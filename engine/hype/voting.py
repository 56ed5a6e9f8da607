"""DP-HYPE's vote (Algorithm 1): top-k votes, per-client noise, secure summation, noisy argmax.

Every client sets a 1 for its k best candidates and adds Gaussian noise; the
server learns only the sum of the noisy vectors (secure summation) and returns
its argmax. Noise scaling (Sec. II and App. A): for a total standard deviation
``sigma`` on the sum, each client adds N(0, sigma^2 / ((1 - xi) n)), so the
sum keeps variance >= sigma^2 while at most ``xi * n`` clients drop out
(``xi = 0`` is the plain N(0, sigma^2 / n) of Algorithm 1).

Two ways to obtain the noisy sum, equal in distribution:

- :func:`secure_sum_votes` runs the protocol: each client's noisy vector is
  made inside :func:`client_step` and immediately added into the running sum
  (:class:`SecureSum`), never stored; only the total leaves.
- :func:`noisy_vote_sum` adds the total noise (:func:`summed_noise`) at once,
  drawn from its exact law N(0, survivors * per-client variance), which is
  what makes thousands of repetitions cheap; tests check the two against
  each other.
"""

from __future__ import annotations

import math

import numpy as np


def sensitivity(k: int) -> float:
    """L2 sensitivity of the summed vote vector under replace-one neighbouring (Lemma IV.1): sqrt(2k)."""
    return math.sqrt(2 * int(k))


def per_client_std(sigma: float, clients: int, xi: float = 0.0) -> float:
    """Standard deviation of the noise each client adds: sigma / sqrt((1 - xi) n)."""
    return float(sigma) / math.sqrt((1.0 - float(xi)) * int(clients))


def top_k_mask(losses: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of the k smallest entries along the last axis (a client's votes)."""
    losses = np.asarray(losses)
    p = losses.shape[-1]
    if k >= p:
        return np.ones(losses.shape, dtype=bool)
    chosen = np.argpartition(losses, k - 1, axis=-1)[..., :k]
    mask = np.zeros(losses.shape, dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=-1)
    return mask


def rank_by_score(accuracy: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Each candidate's place (0 = best) per client: higher accuracy first, lower loss breaks ties.

    ``accuracy``, ``loss``: (clients, P). Remaining exact ties go to the lower index,
    as Algorithm 1's argmin does.
    """
    order = np.lexsort((loss, -accuracy), axis=-1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(order.shape[-1])[None, :].repeat(order.shape[0], 0), axis=-1)
    return ranks


def client_step(votes: np.ndarray, std: float, rng: np.random.Generator) -> np.ndarray:
    """One client's message: its 0/1 vote vector(s) plus N(0, std^2) noise per entry.

    ``votes`` may carry leading repetition axes, (..., P).
    """
    return votes + std * rng.standard_normal(np.shape(votes))


class SecureSum:
    """Simulated secure summation: accepts client messages, reveals only their sum."""

    def __init__(self):
        self._total = None
        self.count = 0

    def add(self, message: np.ndarray) -> None:
        self._total = np.array(message, dtype=float) if self._total is None else self._total + message
        self.count += 1

    def result(self) -> np.ndarray:
        if self._total is None:
            raise ValueError("No client reported.")
        return self._total


def secure_sum_votes(client_votes: np.ndarray, survivors: np.ndarray, std: float,
                     rng: np.random.Generator) -> np.ndarray:
    """The noisy vote sum as the protocol computes it, client by client.

    ``client_votes`` (R, n, P) 0/1 votes of n clients in R repetitions,
    ``survivors`` (R, n) bool (False: the client dropped out and sends
    nothing), ``std`` per-client noise. Returns (R, P).
    """
    reps, clients, p = client_votes.shape
    channel = SecureSum()
    for client in range(clients):
        message = client_step(client_votes[:, client, :].astype(float), std, rng)
        channel.add(message * survivors[:, client, None])
    return channel.result()


def summed_noise(shape, std, rng: np.random.Generator, dtype=np.float64) -> np.ndarray:
    """Noise on the sum drawn from its exact law N(0, std^2); ``std`` broadcasts over leading axes."""
    z = rng.standard_normal(shape, dtype=dtype)
    return z * np.asarray(std, dtype=dtype)


def noisy_vote_sum(votes: np.ndarray, std, rng: np.random.Generator) -> np.ndarray:
    """The noisy vote sum the server learns, with the summed noise drawn from its exact law.

    ``votes`` (..., P) are the clean summed votes, ``std`` the standard deviation
    of the noise on the sum. Equal in law to :func:`secure_sum_votes`; the
    repeated votes and the privacy audit (:mod:`engine.audit`) both call it.
    """
    return votes + summed_noise(np.shape(votes), std, rng)


def noisy_argmax(noisy: np.ndarray, std=None, tie_keys: np.ndarray | None = None) -> np.ndarray:
    """The winner along the last axis.

    Without noise (``std == 0``, per row) the votes are integers and ties are
    likely; ``tie_keys`` in [0, 1) then pick uniformly among the tied
    maxima. Noisy rows are left untouched (their ties have probability 0).
    """
    noisy = np.asarray(noisy, dtype=float)
    if tie_keys is None or std is None:
        return noisy.argmax(axis=-1)
    exact = np.asarray(std) == 0
    if not np.any(exact):
        return noisy.argmax(axis=-1)
    exact = np.broadcast_to(np.reshape(exact, np.shape(exact) + (1,)) if np.ndim(exact) else exact, noisy.shape)
    return np.where(exact, noisy + 0.5 * tie_keys, noisy).argmax(axis=-1)
