"""Schedules over the iterations t = 1, 2, ...: the probability 1 - p_t of using
information from other agents, and the temperature level a_t of the sub-region
weights (DP-FTS-DE paper, App. B)."""

from __future__ import annotations

import numpy as np

from engine.validation import check_choice, check_range

PT_SCHEDULES = ("sqrt", "linear", "square", "constant")     # 1/sqrt(t), 1/t, 1/t^2, a constant

# App. B: a_t = a + 1 for `hold` iterations, then linear down to 1 over `decay`
# iterations (the last of which reaches 1), then 1 (uniform weights).
WEIGHT_SCHEDULE_STEPS = {"synthetic": (5, 5), "real": (10, 30)}


def one_minus_pt(schedule: str, t, constant: float = 0.5):
    """1 - p_t, the probability that an agent uses other agents' information in iteration t.

    Parameters
    ----------
    schedule : {"sqrt", "linear", "square", "constant"}
        1/sqrt(t), 1/t, 1/t^2 (both papers), or a constant.
    t : int or array of int
        Iteration, t >= 1 (values below 1 are treated as 1).
    constant : float
        The value for ``schedule="constant"``, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
    """
    check_choice("pt_schedule", schedule, PT_SCHEDULES, name="p_t schedule")
    t_arr = np.maximum(np.asarray(t, dtype=float), 1.0)
    if schedule == "sqrt":
        out = 1.0 / np.sqrt(t_arr)
    elif schedule == "linear":
        out = 1.0 / t_arr
    elif schedule == "square":
        out = 1.0 / t_arr ** 2
    else:
        out = np.full_like(t_arr, check_range("pt_constant", constant, 0, 1, name="constant 1 - p_t"))
    return float(out) if np.ndim(out) == 0 else out


def weight_level(t, a: float = 15.0, schedule: str = "synthetic"):
    """a_t of App. B: a + 1 while t <= hold, linear to 1 over the next ``decay`` iterations, then 1.

    Synthetic: a_t = 16 for t <= 5, then 16, 12.25, 8.5, 4.75, 1 for t = 6..10.
    Real-world: 16 for the first 10 iterations, then down to 1 over the next 30.
    The temperature is T_t = a / (a_t - 1), infinite (uniform weights) at a_t = 1.
    """
    check_choice("weight_schedule", schedule, tuple(WEIGHT_SCHEDULE_STEPS), name="weight schedule")
    hold, decay = WEIGHT_SCHEDULE_STEPS[schedule]
    t_arr = np.asarray(t, dtype=float)
    start = a + 1.0
    # Position along the decay: 0 at t = hold + 1 (still a + 1), 1 at t = hold + decay (1).
    frac = np.clip((t_arr - hold - 1.0) / max(decay - 1, 1), 0.0, 1.0)
    out = start + (1.0 - start) * frac
    return float(out) if np.ndim(out) == 0 else out
