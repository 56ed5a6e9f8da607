"""The central server of DP-FTS-DE (paper Algorithm 1, lines 5-12).

One round: subsample the agents (Poisson with probability q, or round(N q)
without replacement), clip every selected vector to L2 norm S / sqrt(P), sum
them per sub-region with weights phi_n^(i) / q, and add Gaussian noise of
standard deviation z * phi_max * S / q to every coordinate. Without DP (FTS-DE,
and "modified FTS" at P = 1) every agent is used, nothing is clipped and no
noise is added.

:func:`aggregate_batch` runs one round for R independent runs at once and is what
the simulation uses; :func:`aggregate` is the same arithmetic for one run,
returning a :class:`ServerStep` for the teaching view and tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.fbo.records import ServerStep
from engine.fbo.weights import RegionWeights
from engine.privacy import SAMPLING, fixed_sample_size
from engine.validation import ConfigError, check_choice, check_positive, check_range


@dataclass
class BatchServerStep:
    """One server round for R runs. Shapes: (R, N, M) vectors, (R, N) masks,
    (P, N) weights, (R, P, M) outputs."""

    vectors: np.ndarray
    selected: np.ndarray
    clipped: np.ndarray
    clipped_vectors: np.ndarray
    weights: np.ndarray
    signal: np.ndarray
    noise: np.ndarray
    noise_std: float
    broadcast: np.ndarray

    @property
    def n_selected(self) -> np.ndarray:
        return self.selected.sum(axis=1)

    def run(self, r: int) -> ServerStep:
        """The round of run ``r`` as a :class:`ServerStep`."""
        return ServerStep(vectors=self.vectors[r], selected=self.selected[r], clipped=self.clipped[r],
                          clipped_vectors=self.clipped_vectors[r], weights=self.weights, signal=self.signal[r],
                          noise=self.noise[r], noise_std=self.noise_std, broadcast=self.broadcast[r])


def select_agents(n_runs: int, n_agents: int, q: float, rng: np.random.Generator,
                  sampling: str = "poisson") -> np.ndarray:
    """The subsample S_t of every run, a (R, N) bool mask.

    ``poisson``: each agent independently with probability q (Algorithm 1, line 6);
    ``fixed``: exactly round(N q) agents drawn without replacement.
    """
    check_choice("sampling", sampling, SAMPLING)
    u = rng.random((n_runs, n_agents))
    if sampling == "poisson":
        return u < q
    k = fixed_sample_size(q, n_agents)
    ranks = np.argsort(u, axis=1)
    selected = np.zeros((n_runs, n_agents), dtype=bool)
    np.put_along_axis(selected, ranks[:, :k], True, axis=1)
    return selected


def _combine(weights, vectors: np.ndarray) -> np.ndarray:
    """sum_n phi_n^(i) vectors[r, n]: (R, P, M); compact weights never build the (P, N) matrix."""
    if isinstance(weights, RegionWeights):
        return weights.combine(vectors)
    return np.einsum("pn,rnm->rpm", weights, vectors)


PHI_MAX = ("global", "per-region")


def aggregate_batch(vectors: np.ndarray, weights: np.ndarray, *, q: float, z: float, S: float,
                    rng: np.random.Generator, private: bool, sampling: str = "poisson", phi_max: str = "global",
                    clip_factor: float = 1.0) -> BatchServerStep:
    """One server round for R runs.

    Parameters
    ----------
    vectors : (R, N, M) array
        omega_{n,t} sent by every agent of every run.
    weights : (P, N) array or RegionWeights
        phi_n^(i); each row sums to 1 (:class:`RegionWeights` keeps it in O(P + N)).
    q, z, S : float
        Sampling probability, noise multiplier, clipping threshold.
    rng : numpy.random.Generator
    private : bool
        False: every agent is used, no clipping, no noise (q, z, S ignored).
    sampling : {"poisson", "fixed"}
    phi_max : {"global", "per-region"}
        ``global`` (the paper, and the only setting a run uses): the noise std z phi_max S / q with phi_max over
        every sub-region and agent (Algorithm 1, line 11; its privacy analysis covers it). ``per-region``: an
        ablation switch only (engine.reproduce.ablation_runs), the authors' landmine code, each sub-region's
        noise from its own largest weight (landmine_dp_fts_de.py:145, ``np.max(ws)``).
    clip_factor : float
        An ablation switch only: the clipping bound S / sqrt(P) times this factor, the noise unchanged (1: the
        paper's).

    Returns
    -------
    BatchServerStep
    """
    vectors = np.asarray(vectors, dtype=float)
    if not isinstance(weights, RegionWeights):
        weights = np.asarray(weights, dtype=float)
    if vectors.ndim != 3 or weights.ndim != 2 or weights.shape[1] != vectors.shape[1]:
        raise ConfigError(f"Server input shapes do not match: vectors {vectors.shape}, weights {weights.shape}.")
    R, N, M = vectors.shape
    P = weights.shape[0]
    if not private:
        selected = np.ones((R, N), dtype=bool)
        clipped = np.zeros((R, N), dtype=bool)
        signal = _combine(weights, vectors)
        noise = np.zeros((R, P, M))
        return BatchServerStep(vectors, selected, clipped, vectors, weights, signal, noise, 0.0, signal.copy())
    q = check_range("q", q, 0, 1, low_open=True)
    z = check_positive("z", z)
    S = check_positive("S", S)
    check_choice("phi_max", phi_max, PHI_MAX)
    clip_factor = check_positive("clip_factor", clip_factor)
    selected = select_agents(R, N, q, rng, sampling)
    threshold = clip_factor * S / np.sqrt(P)
    norms = np.linalg.norm(vectors, axis=2)
    # Line 9: omega / max(1, ||omega|| / (S / sqrt(P))), applied to the selected agents.
    scale = np.where(selected, 1.0 / np.maximum(1.0, norms / threshold), 1.0)
    clipped = selected & (norms > threshold)
    clipped_vectors = vectors * scale[:, :, None]
    # Line 10: omega^(i) = sum over selected n of phi_n^(i) / q * clipped omega_n.
    signal = _combine(weights, clipped_vectors * selected[:, :, None]) / q
    # Line 11: noise std z * phi_max * S / q, phi_max over all sub-regions and agents (the paper's text, Sec. 3.3:
    # phi_max = max over i and n). The authors' landmine code takes the max of each sub-region's own weights
    # (landmine_dp_fts_de.py:145, np.max(ws)), less noise where a sub-region has more own explorers (landmine
    # sub-region 0: 7.86 against 8.98); we keep the text (data/reproduction/authors-trace.json, docs); theirs is
    # the ablation switch ``phi_max="per-region"``, never a run's default.
    noise_std = float(z * weights.max() * S / q)
    if phi_max == "per-region":
        region_max = np.asarray(weights, float).max(axis=1)                                   # (P,)
        noise = rng.normal(0.0, 1.0, size=(R, P, M)) * (z * region_max * S / q)[None, :, None]
    else:
        noise = rng.normal(0.0, noise_std, size=(R, P, M))
    return BatchServerStep(vectors, selected, clipped, clipped_vectors, weights, signal, noise, noise_std,
                           signal + noise)


def aggregate(vectors: np.ndarray, weights: np.ndarray, *, q: float, z: float, S: float,
              rng: np.random.Generator, private: bool, sampling: str = "poisson") -> ServerStep:
    """One server round for one run: ``vectors`` (N, M), ``weights`` (P, N).

    Same arithmetic (and random draws) as :func:`aggregate_batch` with R = 1.
    """
    vectors = np.asarray(vectors, dtype=float)
    if vectors.ndim != 2:
        raise ConfigError(f"Expected one vector per agent (N, M), got shape {vectors.shape}.")
    return aggregate_batch(vectors[None], weights, q=q, z=z, S=S, rng=rng, private=private,
                           sampling=sampling).run(0)
