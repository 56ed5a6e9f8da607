"""DP-HYPE: private distributed hyperparameter voting (Liebenow, Peinemann, Mohammadi).

Clients vote for their k best candidates, add Gaussian noise, and a server
learns only the sum (secure summation) and returns its argmax. This package
calibrates the noise, runs repeated votes on simulated losses or on real
client x candidate score tables, and reports the success rate beside
Theorem V.1's bound and, on data, the accuracy against OPT and RANDGUESS.
"""

from engine.hype.calibration import calibrate_sigma, effective_noise, epsilon_for_sigma
from engine.hype.config import AGGREGATIONS, MODES, HypeConfig
from engine.hype.datasets import HYPE_DATASETS
from engine.hype.run import HypeResult, iter_hype, run_hype
from engine.hype.utility import success_bound, vote_gap
from engine.hype.voting import sensitivity

__all__ = ["AGGREGATIONS", "HYPE_DATASETS", "MODES", "HypeConfig", "HypeResult", "calibrate_sigma",
           "effective_noise", "epsilon_for_sigma", "iter_hype", "run_hype", "sensitivity", "success_bound",
           "vote_gap"]
