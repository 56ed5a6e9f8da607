"""One release of the Gaussian mechanism with a given L2 sensitivity, over dp_accounting.

A release ``f(D) + N(0, sigma^2 I)`` whose sensitivity under replace-one
neighbouring is ``Delta`` is dp_accounting's ``GaussianDpEvent`` with noise
multiplier ``sigma / Delta``. The ``rdp`` accountant (dp_accounting's RDP
accountant) converts Renyi DP to (epsilon, delta)-DP with
``eps = RDP(a) + log((a - 1) / a) - (log delta + log a) / (a - 1)``, the
conversion of Balle et al. (2020) that the DP-HYPE paper states as its
Theorem II.1; ``ma`` is the classic ``RDP(a) + log(1 / delta) / (a - 1)`` at
integer orders 2..63 (looser, and unable to reach very small epsilon); ``pld``
is dp_accounting's privacy loss distribution accountant, the tight epsilon of
the Gaussian mechanism (up to a pessimistic grid of 1e-3).
"""

from __future__ import annotations

import functools
import math

import dp_accounting as dpa
from dp_accounting.mechanism_calibration import NoBracketIntervalFoundError
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from engine.privacy.accountants import PLD_DISCRETISATION, MomentsAccountant
from engine.validation import ConfigError, check_choice, check_positive, check_probability_open, check_range

GAUSSIAN_ACCOUNTANTS = ("rdp", "ma", "pld")
CALIBRATION_ACCOUNTANTS = ("rdp", "ma")


def _accountant(name: str) -> dpa.PrivacyAccountant:
    if name == "pld":
        # dp_accounting's PLD reads a GaussianDpEvent's multiplier per record norm and
        # doubles the sensitivity under REPLACE_ONE; ours is already the full
        # sensitivity Delta, so the add-or-remove PLD is the one of this release.
        return PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
                             value_discretization_interval=PLD_DISCRETISATION)
    relation = dpa.NeighboringRelation.REPLACE_ONE
    if name == "ma":
        return MomentsAccountant(neighboring_relation=relation)
    return RdpAccountant(neighboring_relation=relation)


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0, accountant: str = "rdp") -> float:
    """epsilon of one Gaussian release with noise std ``sigma`` and L2 ``sensitivity``.

    ``sigma = 0`` (no noise) gives ``inf``.
    """
    sigma = check_range("sigma", sigma, 0)
    delta = check_probability_open("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    check_choice("accountant", accountant, GAUSSIAN_ACCOUNTANTS)
    if sigma == 0:
        return math.inf
    acc = _accountant(accountant)
    acc.compose(dpa.GaussianDpEvent(sigma / sensitivity))
    return float(acc.get_epsilon(delta))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, accountant: str = "rdp") -> float:
    """The smallest noise std whose single Gaussian release is (epsilon, delta)-DP.

    The noise multiplier depends only on (epsilon, delta), so it is calibrated
    once (``dp_accounting.calibrate_dp_mechanism``) and scaled by the sensitivity.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability_open("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    # The calibration bracket starts at tiny multipliers, where a PLD grows too large to build.
    check_choice("accountant", accountant, CALIBRATION_ACCOUNTANTS)
    return sensitivity * _noise_multiplier(epsilon, delta, accountant)


@functools.lru_cache(maxsize=1024)
def _noise_multiplier(epsilon: float, delta: float, accountant: str) -> float:
    try:
        z = dpa.calibrate_dp_mechanism(
            lambda: _accountant(accountant), dpa.GaussianDpEvent, epsilon, delta,
            bracket_interval=dpa.LowerEndpointAndGuess(1e-3, 1.0), tol=1e-7)
    except (ValueError, RuntimeError, NoBracketIntervalFoundError) as err:
        raise ConfigError(f"No Gaussian noise reaches epsilon = {epsilon:g} at delta = {delta:g} with the "
                          f"{accountant} accountant ({err}).", "epsilon") from err
    return float(z)
