"""Privacy accounting for the subsampled Gaussian mechanism, over dp_accounting.

Three accountants a user can pick:

``ma``
    The moments accountant as the DP-FTS-DE paper computed it: Renyi DP of the
    Poisson-subsampled Gaussian at the integer orders 2..63, converted with the
    classic bound ``eps = min_a RDP(a) + log(1/delta) / (a - 1)``.
``rdp``
    dp_accounting's RDP accountant with its default orders and its tighter
    RDP-to-DP conversion.
``pld``
    dp_accounting's privacy loss distribution accountant (numerically tight;
    pessimistic discretisation, so it never under-reports epsilon).

Every algorithm describes its mechanism as a ``DpEvent``; this module turns
events into epsilon and answers the inverse questions through
``dp_accounting.calibrate_dp_mechanism``.
"""

from __future__ import annotations

import contextlib
import logging
import math

import dp_accounting as dpa
import numpy as np
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant, compute_epsilon

from engine.cancel import checkpoint
from engine.validation import ConfigError, check_choice, check_int, check_positive, check_probability_open, check_range

ACCOUNTANTS = ("ma", "rdp", "pld")
# The product's accountant everywhere a run is planned or a question answered (API, command line, pages, the
# Flower export): dp_accounting's RDP accountant with its tight conversion. The moments accountant ("ma") is
# the DP-FTS-DE paper's; the paper presets and reproductions name it.
DEFAULT_ACCOUNTANT = "rdp"

SAMPLING = ("poisson", "fixed")
# Under replace-one neighbours one agent changes the sum by c - c', up to twice its norm bound.
REPLACE_ONE_SENSITIVITY = 2.0
ACCOUNTANT_LABELS = {
    "ma": "Moments accountant (paper)",
    "rdp": "RDP (tight conversion)",
    "pld": "PLD",
}
MA_ORDERS = tuple(range(2, 64))
# A PLD grid of 1e-3 stays within 1e-5 of dp_accounting's default 1e-4 (and,
# being pessimistic, never below it) at a tenth of the cost; curves compose step
# by step and use a coarser grid, within 1e-3 of the fine one.
PLD_DISCRETISATION = 1e-3
PLD_CURVE_DISCRETISATION = 1e-2
# Bounded work for long curves. Composing a PLD one release at a time costs time
# growing with the releases so far (quadratic overall: 1,000 releases took 27 s),
# so beyond PLD_STEPWISE releases the curve is exact at a bounded set of release
# counts, each one self-composition (25 ms at 1,000 releases, 0.23 s at 100,000),
# as many as fit in CURVE_SECONDS; RDP converts at most RDP_POINTS counts (0.15 ms
# each). Between two exact counts the curve reads the next one up: epsilon never
# decreases with releases, so the curve stays an upper bound of the truth.
PLD_STEPWISE = 64
PLD_FINE_STEPS = 10_000
# The settings the accountants compute reliably (dp_accounting divides by zero at z = 1e-200 and overflows at
# q = 1e-300, z = 1e300); PLD also needs z >= PLD_MIN_Z (z = 0.2: 2 s for one epsilon, 0.1: 8 s).
Q_MIN, Z_MIN, Z_MAX = 1e-9, 1e-3, 1e4
PLD_MIN_Z = 0.2
CURVE_SECONDS = 1.5
MIN_CURVE_POINTS = 8
RDP_POINTS = 4000


class _OncePerSetting(logging.Filter):
    """Let each of dp_accounting's warnings through once per template and first argument.

    The RDP series warns "failed to converge ... excluding this order" for every
    fractional order and every noise level a calibration tries (hundreds of
    lines for one question). A user of a privacy tool must see that it
    happened, so nothing else is silenced: the first warning of a kind (per
    sampling rate q) is shown, with a note, and its exact repeats are dropped.
    The one exception is that series' "excluding this order": the epsilon is
    then the minimum over the remaining orders, still a valid upper bound, so
    it says nothing the user must act on and is dropped (it was the first
    line a newcomer's ``privacy --accountant rdp`` printed on stderr).
    """

    def __init__(self):
        super().__init__()
        self._seen: set = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        if "failed to converge" in str(record.msg) and "Excluding this order" in str(record.msg):
            return False
        args = record.args if isinstance(record.args, tuple) else ()
        key = (str(record.msg), repr(args[:1]))
        if key in self._seen:
            return False
        self._seen.add(key)
        record.msg = f"{record.msg} (dp_accounting; further warnings of this kind are not repeated)"
        return True


logging.getLogger("absl").addFilter(_OncePerSetting())


def moments_epsilon(orders, rdp, delta: float) -> tuple[float, float]:
    """The classic RDP-to-DP conversion ``min_a RDP(a) + log(1/delta) / (a - 1)``: (epsilon, order)."""
    orders = np.asarray(orders, dtype=float)
    eps = np.asarray(rdp, dtype=float) + math.log(1.0 / delta) / (orders - 1.0)
    eps = np.where(np.isnan(eps), np.inf, eps)
    best = int(np.argmin(eps))
    return max(0.0, float(eps[best])), float(orders[best])


class MomentsAccountant(RdpAccountant):
    """RDP at integer orders 2..63 with the classic RDP-to-DP conversion.

    This reproduces the moments accountant numbers of Abadi et al. as the
    DP-FTS-DE paper reports them (Fig. 2, :data:`engine.privacy.paper.FIG2_EPSILON`).
    """

    def __init__(self, neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE):
        super().__init__(orders=list(MA_ORDERS), neighboring_relation=neighboring_relation)

    def get_epsilon_and_optimal_order(self, target_delta: float):
        return moments_epsilon(self.orders, self.rdp, target_delta)

    def get_epsilon(self, target_delta: float) -> float:
        return self.get_epsilon_and_optimal_order(target_delta)[0]


def rdp_to_epsilon(accountant: RdpAccountant, rdp, delta: float) -> float:
    """epsilon of the RDP vector ``rdp`` (at ``accountant.orders``) with the accountant's own conversion.

    Both conversions are dp_accounting's public functions (or the classic one
    above for the moments accountant), so a curve of many step counts needs
    one RDP computation, not one per step.
    """
    convert = moments_epsilon if isinstance(accountant, MomentsAccountant) else compute_epsilon
    return float(convert(accountant.orders, rdp, delta)[0])


def supports(accountant: str, sampling: str) -> bool:
    """Whether dp_accounting's ``accountant`` can account for ``sampling`` (PLD has no fixed-size sampling)."""
    return not (accountant == "pld" and sampling == "fixed")


def make_accountant(name: str, sampling: str = "poisson", *, curve: bool = False,
                    steps: int = 0) -> dpa.PrivacyAccountant:
    """A fresh accountant of the given kind for the given sampling scheme.

    PLD uses the fine grid unless it builds a curve or composes more than
    PLD_FINE_STEPS releases (one fine composition of 100,000 releases is 1.3 s
    that nothing can interrupt; the coarse grid, also pessimistic, takes 0.23 s).
    """
    check_choice("accountant", name, ACCOUNTANTS)
    check_choice("sampling", sampling, SAMPLING)
    # Fixed-size sampling without replacement is analysed under replace-one
    # neighbouring, which only the RDP family of dp_accounting supports.
    relation = (dpa.NeighboringRelation.REPLACE_ONE if sampling == "fixed"
                else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    if name == "ma":
        return MomentsAccountant(neighboring_relation=relation)
    if name == "rdp":
        return RdpAccountant(neighboring_relation=relation)
    if not supports(name, sampling):
        raise ConfigError("The PLD accountant does not support fixed-size sampling; choose the rdp or ma accountant.",
                          "accountant")
    grid = PLD_CURVE_DISCRETISATION if curve or int(steps) > PLD_FINE_STEPS else PLD_DISCRETISATION
    return PLDAccountant(value_discretization_interval=grid)


def subsampled_gaussian_event(q: float, z: float, steps: int = 1, *, sampling: str = "poisson",
                              n_agents: int | None = None) -> dpa.DpEvent:
    """The DpEvent of ``steps`` releases of a subsampled Gaussian mechanism.

    ``poisson``: every agent joins a round with probability q (DP-FTS-DE Algo. 1).
    ``fixed``: round(N q) agents are drawn without replacement (paper footnote 14),
    accounted with replace-one neighbours (Wang, Balle and Kasiviswanathan 2019,
    the analysis dp_accounting implements). Replacing one agent's vector c by
    c' moves the clipped, weighted sum by up to twice one agent's bound, so the
    Gaussian's multiplier against that sensitivity is z / 2; reading it as z
    claimed less than the mechanism has (the privacy audit proved 6.09 against a
    claim of 4.73 at q = 1, T = 1).
    """
    q = check_range("q", q, 0, 1, low_open=True, name="q (sampling probability)")   # as every tool says it
    if q < Q_MIN:
        raise ConfigError(f"q (sampling probability) must be at least {Q_MIN:g} for the accountants, got {q:g}.", "q")
    z = check_range("z", z, Z_MIN, Z_MAX, name="z (noise multiplier)")
    steps = check_int("steps", steps, 0, name="number of iterations")
    check_choice("sampling", sampling, SAMPLING)
    if sampling == "poisson":
        one = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z))
    else:
        if n_agents is None:
            raise ConfigError("Fixed-size sampling needs the number of agents.", "agents")
        n_agents = check_int("agents", n_agents, 1, name="number of agents")
        one = dpa.SampledWithoutReplacementDpEvent(n_agents, fixed_sample_size(q, n_agents),
                                                   dpa.GaussianDpEvent(z / REPLACE_ONE_SENSITIVITY))
    return dpa.SelfComposedDpEvent(one, steps)


def fixed_sample_size(q: float, n_agents: int) -> int:
    """round(N q), at least one agent."""
    return max(1, int(round(q * n_agents)))


def check_noise(z: float, accountant: str) -> None:
    """PLD needs noise of at least PLD_MIN_Z: below it the privacy loss distribution gets too wide to compute."""
    if accountant == "pld" and float(z) < PLD_MIN_Z:
        raise ConfigError(f"The PLD accountant needs z of at least {PLD_MIN_Z:g} (got {float(z):.3g}): with less "
                          "noise its privacy loss distribution is too wide to compute here, and epsilon is in the "
                          "hundreds anyway. Choose the RDP accountant or a larger z.", "z")


@contextlib.contextmanager
def numerically_safe(what: str = "These settings"):
    """Turn dp_accounting's arithmetic failures at extreme settings into one sentence."""
    try:
        yield
    except (ZeroDivisionError, OverflowError, FloatingPointError) as err:
        raise ConfigError(f"{what} are outside what the accountant can compute ({type(err).__name__}); move q, z "
                          "or delta towards usual values.", "z") from None


def epsilon_of_event(event: dpa.DpEvent, delta: float, accountant: str = "rdp", sampling: str = "poisson",
                     steps: int = 0) -> float:
    delta = check_probability_open("delta", delta)
    acc = make_accountant(accountant, sampling, steps=steps)
    with numerically_safe():
        acc.compose(event)
        return float(acc.get_epsilon(delta))


def epsilon(q: float, z: float, steps: int, delta: float, accountant: str = "rdp", *,
            sampling: str = "poisson", n_agents: int | None = None) -> float:
    """epsilon after ``steps`` releases of the subsampled Gaussian mechanism."""
    if int(steps) == 0:
        return 0.0
    event = subsampled_gaussian_event(q, z, steps, sampling=sampling, n_agents=n_agents)
    check_noise(z, accountant)
    return epsilon_of_event(event, delta, accountant, sampling, steps=int(steps))


def epsilon_curve(q: float, z: float, steps: int, delta: float, accountant: str = "rdp", *,
                  sampling: str = "poisson", n_agents: int | None = None) -> np.ndarray:
    """epsilon after 1, 2, ..., ``steps`` releases (array of length ``steps``).

    Exact at every release count for short curves; for long ones exact at the
    counts :func:`curve_counts` picks and, in between, the value of the next
    exact count (an upper bound, since epsilon grows with releases). The last
    entry is always exact.
    """
    delta = check_probability_open("delta", delta)
    steps = check_int("steps", steps, 0, name="number of iterations")
    if steps == 0:
        return np.zeros(0)
    one = subsampled_gaussian_event(q, z, 1, sampling=sampling, n_agents=n_agents).event
    check_noise(z, accountant)
    acc = make_accountant(accountant, sampling, curve=True)
    counts = curve_counts(steps, accountant)
    with numerically_safe():
        return _curve(acc, one, q, z, steps, delta, accountant, counts, sampling, n_agents)


def _curve(acc, one, q, z, steps, delta, accountant, counts, sampling, n_agents) -> np.ndarray:
    if isinstance(acc, RdpAccountant):
        # RDP composes additively: one step's RDP vector scaled by t is the RDP of t steps.
        acc.compose(one)
        rdp_one = np.asarray(acc.rdp, dtype=float)
        exact = []
        for t in counts:
            if t % 256 == 0:
                checkpoint()
            exact.append(rdp_to_epsilon(acc, rdp_one * t, delta))
        return fill_upward(counts, np.array(exact), steps)
    if len(counts) == steps:
        out = np.empty(steps)
        for t in range(steps):
            checkpoint()
            acc.compose(one)
            out[t] = acc.get_epsilon(delta)
        return out
    exact = [curve_point(q, z, int(t), delta, accountant, sampling=sampling, n_agents=n_agents) for t in counts]
    return fill_upward(counts, np.array(exact), steps)


def curve_point(q: float, z: float, steps: int, delta: float, accountant: str = "rdp", *,
                sampling: str = "poisson", n_agents: int | None = None) -> float:
    """epsilon after ``steps`` releases computed exactly as :func:`epsilon_curve` computes its exact points."""
    checkpoint()
    one = subsampled_gaussian_event(q, z, 1, sampling=sampling, n_agents=n_agents).event
    check_noise(z, accountant)
    acc = make_accountant(accountant, sampling, curve=True)
    with numerically_safe():
        if isinstance(acc, RdpAccountant):
            acc.compose(one)
            return rdp_to_epsilon(acc, np.asarray(acc.rdp, dtype=float) * int(steps), delta)
        acc.compose(one, int(steps))
        return float(acc.get_epsilon(delta))


def budget_releases(curve: np.ndarray, budget: float, q: float, z: float, delta: float, accountant: str = "rdp",
                    *, sampling: str = "poisson", n_agents: int | None = None) -> tuple[int, np.ndarray]:
    """How many releases keep epsilon at or below ``budget``, exact even where ``curve`` reads upward.

    Between two exact counts of a long curve the count is found by bisection
    on exact points; the curve is returned with those releases set to the
    exact epsilon of the last one (still an upper bound for each).
    """
    releases = releases_within_budget(curve, budget)
    steps = len(curve)
    counts = curve_counts(steps, accountant)
    if len(counts) == steps or releases >= steps:
        return releases, curve
    low, high = releases, int(counts[np.searchsorted(counts, releases + 1)])
    low_value = None
    while high - low > 1:
        middle = (low + high) // 2
        value = curve_point(q, z, middle, delta, accountant, sampling=sampling, n_agents=n_agents)
        if value <= budget:
            low, low_value = middle, value
        else:
            high = middle
    if low > releases:
        curve = np.array(curve, dtype=float)
        curve[releases:low] = low_value
    return low, curve


def pld_point_seconds(steps: int) -> float:
    """Measured cost of one PLD self-composition to ``steps`` releases on the curve grid (rounded up)."""
    return 0.03 + 2.5e-6 * int(steps)


def curve_counts(steps: int, accountant: str) -> np.ndarray:
    """The release counts at which :func:`epsilon_curve` computes epsilon exactly (always ending at ``steps``)."""
    steps = int(steps)
    if accountant == "pld":
        if steps <= PLD_STEPWISE:
            return np.arange(1, steps + 1)
        points = int(max(MIN_CURVE_POINTS, min(PLD_STEPWISE, CURVE_SECONDS / pld_point_seconds(steps))))
    else:
        if steps <= RDP_POINTS:
            return np.arange(1, steps + 1)
        points = RDP_POINTS
    # Half on a geometric scale (the start of the curve bends most), half evenly spread.
    half = max(2, points // 2)
    counts = np.concatenate([np.geomspace(1, steps, half), np.linspace(1, steps, points - half + 1)])
    return np.unique(np.clip(np.ceil(counts).astype(int), 1, steps))


def fill_upward(counts: np.ndarray, exact: np.ndarray, steps: int) -> np.ndarray:
    """A curve over 1..steps from exact values at ``counts``: each count reads the next exact count at or above it."""
    index = np.searchsorted(np.asarray(counts), np.arange(1, steps + 1), side="left")
    return np.maximum.accumulate(np.asarray(exact, dtype=float))[index]


def releases_within_budget(curve: np.ndarray, budget: float) -> int:
    """How many releases keep epsilon at or below ``budget`` (curve from epsilon_curve)."""
    budget = check_positive("budget", budget, name="privacy budget epsilon*")
    return int(np.searchsorted(np.asarray(curve), budget, side="right"))
