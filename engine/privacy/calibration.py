"""Calibration through dp_accounting's ``calibrate_dp_mechanism``: the z, q or number of releases T that reaches
a target epsilon for the subsampled Gaussian mechanism (the accountants themselves: :mod:`engine.privacy.accountants`).
"""

from __future__ import annotations

import functools

import dp_accounting as dpa

from engine.cancel import checkpoint
from engine.privacy.accountants import (
    PLD_MIN_Z,
    Z_MAX,
    check_noise,
    epsilon,
    epsilon_of_event,
    make_accountant,
    numerically_safe,
    subsampled_gaussian_event,
)
from engine.validation import ConfigError, check_int, check_positive, check_probability_open, check_range


def _checked(make_event):
    """``make_event`` with a cancel checkpoint before every evaluation the calibration asks for."""
    def event(value):
        checkpoint()
        return make_event(value)
    return event


def _calibrate(make_event, target_epsilon, delta, accountant, sampling, *, discrete=False, bracket=None, tol=None,
               steps=0):
    target_epsilon = check_positive("target_epsilon", target_epsilon, name="target epsilon")
    delta = check_probability_open("delta", delta)
    make_accountant(accountant, sampling)  # validates the combination up front
    try:
        with numerically_safe():
            return dpa.calibrate_dp_mechanism(
                lambda: make_accountant(accountant, sampling, steps=steps), _checked(make_event), target_epsilon, delta,
                bracket_interval=bracket, discrete=discrete, tol=tol)
    except (ValueError, RuntimeError) as err:
        detail = str(err).strip().rstrip(".")     # one sentence: the reason joins it after a colon
        detail = detail[:1].lower() + detail[1:] if detail[:2] != detail[:2].upper() else detail
        raise ConfigError(f"No setting reaches epsilon = {target_epsilon:g} at delta = {delta:g} with these "
                          f"parameters: {detail}.", "target_epsilon") from err


# z's search starts from this lower end and first guess (dp_accounting's LowerEndpointAndGuess).
Z_BRACKET = (1e-2, 1.0)


def reachable_z() -> float:
    """The largest noise multiplier :func:`calibrate_z` can return: dp_accounting widens the bracket from
    ``Z_BRACKET`` by gaps that double (upper += gap, gap *= 2; mechanism_calibration's
    ``_search_for_explicit_bracket_interval``) and a z above ``Z_MAX`` is refused on the way (8109.1)."""
    low, upper = Z_BRACKET
    gap = upper - low
    while upper + 2 * gap <= Z_MAX:
        gap *= 2
        upper += gap
    return upper


# Pure and slow for rdp/pld (seconds): pages and repeated runs ask the same question.
@functools.lru_cache(maxsize=256)
def calibrate_z(target_epsilon: float, q: float, steps: int, delta: float, accountant: str = "rdp", *,
                sampling: str = "poisson", n_agents: int | None = None) -> float:
    """The smallest noise multiplier z whose epsilon after ``steps`` releases is <= target."""
    check_range("q", q, 0, 1, low_open=True)
    check_int("steps", steps, 1, name="number of iterations")

    def make_event(z):
        return subsampled_gaussian_event(q, z, steps, sampling=sampling, n_agents=n_agents)

    bracket = dpa.LowerEndpointAndGuess(*Z_BRACKET)
    if accountant == "pld":
        # PLD is slow at tiny z; the RDP answer is an upper end (PLD is tighter),
        # so search below it only.
        z_rdp = calibrate_z(target_epsilon, q, steps, delta, "rdp", sampling=sampling, n_agents=n_agents)
        check_noise(z_rdp, "pld")
        low = max(0.5 * z_rdp, PLD_MIN_Z)
        if epsilon_of_event(make_event(low), delta, "pld", steps=steps) > target_epsilon:
            bracket = dpa.ExplicitBracketInterval(low, z_rdp)
    return float(_calibrate(make_event, target_epsilon, delta, accountant, sampling, bracket=bracket, tol=1e-4,
                            steps=steps))


def calibrate_q(target_epsilon: float, z: float, steps: int, delta: float, accountant: str = "rdp", *,
                sampling: str = "poisson", n_agents: int | None = None) -> float:
    """The largest sampling probability q whose epsilon after ``steps`` releases is <= target."""
    check_positive("z", z)
    check_int("steps", steps, 1, name="number of iterations")
    if epsilon(1.0, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents) <= target_epsilon:
        return 1.0
    # Epsilon grows with q, so calibrate on 1 - q (dp_accounting searches for a
    # parameter that makes the mechanism more private as it grows).
    one_minus_q = _calibrate(
        lambda u: subsampled_gaussian_event(min(1.0, max(1e-9, 1.0 - u)), z, steps, sampling=sampling,
                                            n_agents=n_agents),
        target_epsilon, delta, accountant, sampling, bracket=dpa.ExplicitBracketInterval(0.0, 1.0 - 1e-9), tol=1e-5,
        steps=steps)
    return float(1.0 - one_minus_q)


def calibrate_steps(target_epsilon: float, q: float, z: float, delta: float, accountant: str = "rdp", *,
                    sampling: str = "poisson", n_agents: int | None = None, max_steps: int = 100_000) -> int:
    """The largest number of releases whose epsilon is <= target (0 if even one exceeds it)."""
    check_range("q", q, 0, 1, low_open=True)
    check_positive("z", z)
    check_positive("target_epsilon", target_epsilon, name="target epsilon")
    if epsilon(q, z, 1, delta, accountant, sampling=sampling, n_agents=n_agents) > target_epsilon:
        return 0
    if epsilon(q, z, max_steps, delta, accountant, sampling=sampling, n_agents=n_agents) <= target_epsilon:
        return max_steps
    # More steps means less privacy; search on max_steps - steps, which grows toward privacy.
    slack = _calibrate(
        lambda s: subsampled_gaussian_event(q, z, max_steps - int(s), sampling=sampling, n_agents=n_agents),
        target_epsilon, delta, accountant, sampling, discrete=True,
        bracket=dpa.ExplicitBracketInterval(0, max_steps - 1), steps=max_steps)
    return int(max_steps - slack)
