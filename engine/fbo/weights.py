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

import numpy as np

from engine.fbo.config import WEIGHTS as WEIGHT_MODES
from engine.fbo.schedules import weight_level
from engine.validation import check_choice, check_int, check_positive


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
    P = check_int("P", P, 1, name="number of sub-regions P")
    check_positive("weight_a", a, name="weight parameter a")
    check_choice("weights", mode, WEIGHT_MODES)
    assignment = np.asarray(assignment)
    indicator = (assignment[None, :] == np.arange(P)[:, None]).astype(float)  # (P, N)
    n_agents = assignment.shape[0]
    if mode == "equal":
        return np.full((P, n_agents), 1.0 / n_agents)
    if mode in ("proportional", "proportional-squared"):
        return _proportional(indicator, proportional_level(t, a, schedule), 2 if mode.endswith("squared") else 1)
    # (a I + 1) / T_t with 1 / T_t = (a_t - 1) / a, finite even when T_t is infinite.
    inverse_temperature = 1.0 if mode == "fixed" else (weight_level(t, a, schedule) - 1.0) / a
    logits = (a * indicator + 1.0) * inverse_temperature
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


def proportional_level(t: int, a: float, schedule: str = "synthetic") -> float:
    """a_t of "weights 2" and "weights 3": a while t <= hold, linear down to 1 over ``decay`` iterations, then 1.

    The softmax level :func:`engine.fbo.schedules.weight_level` starts at a + 1; this one starts at a
    (the paper's "decay the value of a = 1,000 to b = 1").
    """
    check_positive("weight_a", a, name="weight parameter a")
    return float(weight_level(t, a - 1.0, schedule))


def _proportional(indicator: np.ndarray, level: float, power: int) -> np.ndarray:
    """Rows of ``level**power`` for the sub-region's own explorers and 1 for the others, normalised."""
    raw = np.where(indicator > 0, float(level) ** power, 1.0)
    return raw / raw.sum(axis=1, keepdims=True)
