"""Privacy accounting over dp_accounting: events, accountants, calibration."""

from engine.privacy.accountants import (
    ACCOUNTANT_LABELS,
    ACCOUNTANTS,
    DEFAULT_ACCOUNTANT,
    SAMPLING,
    MomentsAccountant,
    epsilon,
    epsilon_curve,
    epsilon_of_event,
    fixed_sample_size,
    make_accountant,
    releases_within_budget,
    subsampled_gaussian_event,
    supports,
)
from engine.privacy.calibration import calibrate_q, calibrate_steps, calibrate_z
from engine.privacy.delta import (DELTA_RULE_LABELS, DELTA_RULES, default_delta, delta_weakness, paper_delta,
                                  product_delta)
from engine.privacy.gaussian import GAUSSIAN_ACCOUNTANTS, gaussian_epsilon, gaussian_sigma

__all__ = [
    "ACCOUNTANTS", "ACCOUNTANT_LABELS", "DEFAULT_ACCOUNTANT", "DELTA_RULES", "DELTA_RULE_LABELS", "SAMPLING",
    "MomentsAccountant", "calibrate_q", "calibrate_steps", "calibrate_z", "default_delta", "delta_weakness",
    "paper_delta", "product_delta", "GAUSSIAN_ACCOUNTANTS", "gaussian_epsilon", "gaussian_sigma", "epsilon",
    "epsilon_curve", "epsilon_of_event", "fixed_sample_size",
    "make_accountant", "releases_within_budget", "subsampled_gaussian_event", "supports",
]
