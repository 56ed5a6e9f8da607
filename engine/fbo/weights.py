"""Sub-region weights phi_n^(i) of the central server (DP-FTS-DE paper, Sec. 3.2, App. B).

phi_n^(i) = softmax_n((a I_n^(i) + 1) / T_t), where I_n^(i) = 1 when agent n was
assigned to explore sub-region i. The temperature T_t = a / (a_t - 1) rises
from 1 to infinity with the schedule of :func:`engine.fbo.schedules.weight_level`,
so the weights move from favouring the sub-region's own explorers to uniform.

App. B.2.3 (Fig. 9) tests two other designs, "weights 2" and "weights 3": the
sub-region's own explorers weigh a_t (``proportional``) or a_t^2
(``proportional-squared``) and every other agent weighs b = 1, normalised over
the agents, with a_t decaying linearly from a (1000 and 40 in the paper) to
b = 1 on the same hold-then-decay schedule as the softmax. The paper says only
"similarly gradually decay"; the schedule is the one of the authors' weight
table (create_partitions.py:31-39 of their public code: a held for T_const
iterations, then ``np.linspace(a, b, T_max_decay)``), with a in place of a + 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.fbo.config import WEIGHTS as WEIGHT_MODES
from engine.fbo.schedules import weight_level
from engine.validation import check_choice, check_int, check_positive


@dataclass(frozen=True, eq=False)
class RegionWeights:
    """The (P, N) weights phi_n^(i) of one server round, kept as the two values each row takes.

    Row i gives ``own[i]`` to the agents that explored sub-region i first and
    ``other[i]`` to every other agent, so a round costs O(P + N) numbers rather
    than P x N; :meth:`dense` (or ``np.asarray``) builds the full matrix.
    """

    own: np.ndarray          # (P,)
    other: np.ndarray        # (P,)
    assignment: np.ndarray   # (N,) sub-region of each agent

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.own.shape[0]), int(self.assignment.shape[0]))

    ndim = 2

    @property
    def counts(self) -> np.ndarray:
        """Agents per sub-region, (P,)."""
        return np.bincount(self.assignment, minlength=self.shape[0])

    def dense(self, dtype=float) -> np.ndarray:
        """The (P, N) matrix (one array of P x N numbers and its boolean mask)."""
        P, _ = self.shape
        own = self.assignment[None, :] == np.arange(P)[:, None]
        return np.where(own, self.own[:, None], self.other[:, None]).astype(dtype, copy=False)

    def __array__(self, dtype=None, copy=None):
        return self.dense(float if dtype is None else dtype)

    def sum(self, axis=None):
        return self.dense().sum(axis=axis)

    def max(self) -> float:
        """The largest weight of any agent in any sub-region (phi_max)."""
        counts = self.counts
        values = [self.own[counts > 0], self.other[counts < self.shape[1]]]
        return float(max(v.max() for v in values if v.size))

    def own_share(self) -> np.ndarray:
        """Share of each sub-region's weight given to its own explorers, (P,)."""
        return self.own * self.counts

    def column(self, n: int) -> np.ndarray:
        """The weights of agent ``n`` in every sub-region, (P,)."""
        column = self.other.copy()
        column[self.assignment[n]] = self.own[self.assignment[n]]
        return column

    def agent_norms(self) -> np.ndarray:
        """L2 norm over the sub-regions of every agent's weights, (N,)."""
        mine = self.assignment
        return np.sqrt(np.maximum(np.sum(self.other ** 2) - self.other[mine] ** 2 + self.own[mine] ** 2, 0.0))

    def combine(self, vectors: np.ndarray) -> np.ndarray:
        """sum_n phi_n^(i) vectors[r, n] for every run and sub-region: (R, N, M) -> (R, P, M), in O(R N M)."""
        vectors = np.asarray(vectors, dtype=float)
        R, N, M = vectors.shape
        P = self.shape[0]
        counts = self.counts
        order = np.argsort(self.assignment, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        present = counts > 0
        region_sums = np.zeros((R, P, M))
        region_sums[:, present] = np.add.reduceat(vectors[:, order, :], starts[present], axis=1)
        total = vectors.sum(axis=1)                                            # (R, M)
        return (self.other[None, :, None] * total[:, None, :]
                + (self.own - self.other)[None, :, None] * region_sums)


def region_weights(assignment: np.ndarray, P: int, t: int, *, a: float = 15.0, schedule: str = "synthetic",
                   mode: str = "adaptive") -> RegionWeights:
    """:func:`subregion_weights` as a :class:`RegionWeights` (O(P + N) memory)."""
    P = check_int("P", P, 1, name="number of sub-regions P")
    check_positive("weight_a", a, name="weight parameter a")
    check_choice("weights", mode, WEIGHT_MODES)
    assignment = np.asarray(assignment).astype(int, copy=False)
    n_agents = assignment.shape[0]
    if mode == "equal":
        value = np.full(P, 1.0 / n_agents)
        return RegionWeights(value, value.copy(), assignment)
    counts = np.bincount(assignment, minlength=P).astype(float)
    if mode in ("proportional", "proportional-squared"):
        # Fig. 9's "weights 2" and "weights 3": a_t (or a_t^2) for the sub-region's own explorers, 1 for the others.
        own = float(proportional_level(t, a, schedule)) ** (2 if mode.endswith("squared") else 1)
        total = counts * own + (n_agents - counts) * 1.0
        return RegionWeights(own / total, 1.0 / total, assignment)
    # (a I + 1) / T_t with 1 / T_t = (a_t - 1) / a, finite even when T_t is infinite; a row's largest logit is
    # subtracted before the softmax (the own explorers' when the row has any).
    inverse_temperature = 1.0 if mode == "fixed" else (weight_level(t, a, schedule) - 1.0) / a
    own_logit, other_logit = (a + 1.0) * inverse_temperature, inverse_temperature
    top = np.where(counts > 0, max(own_logit, other_logit), other_logit)
    own, other = np.exp(own_logit - top), np.exp(other_logit - top)
    total = counts * own + (n_agents - counts) * other
    return RegionWeights(own / total, other / total, assignment)


def subregion_weights(assignment: np.ndarray, P: int, t: int, *, a: float = 15.0, schedule: str = "synthetic",
                      mode: str = "adaptive") -> np.ndarray:
    """Weights of every agent for every sub-region in the server round used in iteration t.

    Parameters
    ----------
    assignment : (N,) int array
        Sub-region each agent explored at initialisation, in 0..P-1.
    P : int
        Number of sub-regions.
    t : int
        Iteration (>= 1) whose broadcast the weights build.
    a : float
        The constant a (15 in the paper).
    schedule : {"synthetic", "real"}
        Temperature schedule of App. B.
    mode : {"adaptive", "equal", "fixed", "proportional", "proportional-squared"}
        ``adaptive``: the paper's schedule; ``fixed``: non-adaptive, T_t = 1 for
        every t (App. B.2.5, Fig. 12); ``equal``: uniform weights 1/N (Fig. 5);
        ``proportional`` / ``proportional-squared``: own explorers a_t or a_t^2,
        the others 1, a_t from a down to 1 (App. B.2.3, Fig. 9 "weights 2" and "weights 3").

    Returns
    -------
    (P, N) array whose rows sum to 1.
    """
    return region_weights(assignment, P, t, a=a, schedule=schedule, mode=mode).dense()


def proportional_level(t: int, a: float, schedule: str = "synthetic") -> float:
    """a_t of "weights 2" and "weights 3": a while t <= hold, linear down to 1 over ``decay`` iterations, then 1.

    The softmax level :func:`engine.fbo.schedules.weight_level` starts at a + 1; this one starts at a
    (the paper's "decay the value of a = 1,000 to b = 1").
    """
    check_positive("weight_a", a, name="weight parameter a")
    return float(weight_level(t, a - 1.0, schedule))
