"""Privacy accounting from Python: ``dpbo.epsilon``, ``dpbo.epsilon_curve``, ``dpbo.calibrate_z``,
``dpbo.default_delta``; each checks its arguments (numbers, not text) and prices the accountant's work as
``dpbo privacy`` does before it starts, so no call runs unbounded (e.g. PLD over 10^9 releases)."""

from __future__ import annotations

import numbers

import numpy as np

from engine.api.common import DEFAULT_LIMITS, priced, stop_reason, time_limit_error, token_for
from engine.cancel import Cancelled, guarded
from engine.limits import accountant_cost
from engine.limits.machine import Limits
from engine.privacy import ACCOUNTANTS, DEFAULT_ACCOUNTANT
from engine.privacy import calibrate_z as _calibrate_z
from engine.privacy import default_delta as _default_delta
from engine.privacy import epsilon as _epsilon
from engine.privacy import epsilon_curve as _epsilon_curve
from engine.validation import ConfigError, api_boundary, check_choice, check_int, shown


def _number(field: str, value, name: str | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{name or field} must be a number, got {shown(value)}.", field)


def _accounting(what: str, q, z, steps, delta, accountant, limits, **work) -> int:
    """Check the arguments' types, then price the accountant's work against ``limits``; returns ``steps``."""
    for field, value in (("q", q), ("z", z), ("delta", delta)):
        if value is not None:
            _number(field, value)
    _number("steps", steps)
    steps = check_int("steps", steps, 0, name="steps (the number of releases)")
    check_choice("accountant", accountant, ACCOUNTANTS)
    priced(accountant_cost(max(steps, 1), (accountant,), z=z, **work), limits, what=what)
    return steps


def _within(limits, what: str, compute):
    token = token_for(limits)
    try:
        with guarded(token):
            return compute()
    except Cancelled as error:
        stop_reason(error, token)
        raise time_limit_error(limits, what) from None


@api_boundary
def epsilon(q: float, z: float, steps: int, delta: float, accountant: str = DEFAULT_ACCOUNTANT, *,
            sampling: str = "poisson", n_agents: int | None = None,
            limits: Limits | None = DEFAULT_LIMITS) -> float:
    """Epsilon after ``steps`` releases of the subsampled Gaussian mechanism.

    ``q``: probability that an agent is sampled per release (poisson) or the
    fraction sampled (``sampling="fixed"``, with ``n_agents``); ``z``: noise std
    over the clipping bound; ``delta`` in (0, 1); ``accountant``: "rdp" (the
    product's default everywhere, as in :class:`FboConfig`), "ma" (the paper's moments accountant) or "pld".
    ``limits``: as in :func:`run_fbo` (the accountant's work is priced as ``dpbo privacy`` prices it).

    Example
    -------
    >>> import dpbo
    >>> round(dpbo.epsilon(q=0.25, z=1.0, steps=40, delta=200 ** -1.1, accountant="ma"), 2)
    9.91
    """
    _accounting("This accounting", q, z, steps, delta, accountant, limits, curve=False, points=1)
    return _within(limits, "This accounting",
                   lambda: _epsilon(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents))


@api_boundary
def epsilon_curve(q: float, z: float, steps: int, delta: float, accountant: str = DEFAULT_ACCOUNTANT, *,
                  sampling: str = "poisson", n_agents: int | None = None,
                  limits: Limits | None = DEFAULT_LIMITS) -> np.ndarray:
    """Epsilon after 1, 2, ..., ``steps`` releases: a NumPy array of shape (steps,), non-decreasing.

    Arguments as :func:`epsilon`.

    Example
    -------
    >>> import dpbo
    >>> curve = dpbo.epsilon_curve(q=0.25, z=1.0, steps=40, delta=1e-3)
    >>> curve.shape, bool(curve[-1] >= curve[0])
    ((40,), True)
    """
    _accounting("This curve", q, z, steps, delta, accountant, limits, curve=True, points=0)
    return _within(limits, "This curve",
                   lambda: _epsilon_curve(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents))


@api_boundary
def calibrate_z(target_epsilon: float, q: float, steps: int, delta: float, accountant: str = DEFAULT_ACCOUNTANT, *,
                sampling: str = "poisson", n_agents: int | None = None,
                limits: Limits | None = DEFAULT_LIMITS) -> float:
    """The smallest noise multiplier z whose epsilon after ``steps`` releases is at most ``target_epsilon``.

    Arguments as :func:`epsilon`; raises ConfigError when no z reaches the target.

    Example
    -------
    >>> import dpbo
    >>> z = dpbo.calibrate_z(5.0, q=0.25, steps=40, delta=1e-3)
    >>> dpbo.epsilon(0.25, z, 40, 1e-3) <= 5.0
    True
    """
    _number("target_epsilon", target_epsilon)
    _accounting("This calibration", q, None, steps, delta, accountant, limits, curve=False, points=0,
                calibrations=1)
    return _within(limits, "This calibration",
                   lambda: _calibrate_z(target_epsilon, q, steps, delta, accountant, sampling=sampling,
                                        n_agents=n_agents))


@api_boundary
def default_delta(n_agents: int, rule: str = "product") -> float:
    """The default delta of a guarantee for N participants under a delta rule.

    ``rule="product"`` (the default of the API, the command line, the pages and the Flower export): 1e-5, or
    1 % of 1/N when that is smaller, far below 1/N for every N. ``rule="paper"``: the DP-FTS-DE paper's
    1 / N^1.1 (close to 1/N: 0.17 for 5 agents), used where a page or a reproduction follows the paper.

    Example
    -------
    >>> import dpbo
    >>> dpbo.default_delta(5), dpbo.default_delta(10_000)
    (1e-05, 1e-06)
    >>> round(dpbo.default_delta(200, rule="paper"), 7)
    0.0029435
    """
    _number("agents", n_agents, "n_agents")
    return _default_delta(n_agents, rule)
