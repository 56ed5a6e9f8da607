"""PO-GP-UCB: private outsourced Bayesian optimisation (Kharkovskii, Dai and Low, ICML 2020).

A curator releases a randomly projected, (epsilon, delta)-DP copy of its inputs
(:mod:`engine.pogpucb.curator`, Algorithm 1); a modeler runs GP-UCB on it,
asking for f by row index (:mod:`engine.pogpucb.modeler`, Algorithm 2).
:func:`run_pogpucb` compares it with non-private GP-UCB on the original inputs.
"""

from engine.pogpucb.config import HYPER_MODES, PoConfig, config_from_log_epsilon
from engine.pogpucb.curator import BRANCH_LIFT, BRANCH_PRESERVE, Release, max_admissible_r, omega, release, sigma_min
from engine.pogpucb.presets import FIG2A, TABLE_PRESETS
from engine.pogpucb.runner import CuratorSummary, PoResult, curator_summary, first_release, iter_pogpucb, run_pogpucb
from engine.pogpucb.tasks import TASK_DEFAULTS, TASKS, build_task

__all__ = [
    "BRANCH_LIFT", "BRANCH_PRESERVE", "CuratorSummary", "FIG2A", "HYPER_MODES", "PoConfig", "PoResult", "Release",
    "TABLE_PRESETS", "TASKS", "TASK_DEFAULTS", "build_task", "config_from_log_epsilon", "curator_summary",
    "first_release", "iter_pogpucb", "max_admissible_r", "omega", "release", "run_pogpucb", "sigma_min",
]
