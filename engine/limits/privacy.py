"""The price of privacy accounting: epsilon curves, single epsilons and calibrations (``accountant_cost``)."""

from __future__ import annotations

from typing import Sequence

from engine.limits.core import Cost, priced, with_margin
from engine.privacy.accountants import PLD_FINE_STEPS, PLD_STEPWISE, RDP_POINTS, curve_counts, pld_point_seconds

# Measured (CPU seconds, 2-core machine): an RDP curve converts each release count in ~0.2 ms (the moments
# accountant's own conversion in ~0.01 ms), at most RDP_POINTS of them; a PLD curve composes one release at a
# time up to PLD_STEPWISE releases (40 releases: 0.7 s, 64: 1.3 s), beyond that a bounded number of
# self-compositions (engine.privacy.accountants.CURVE_SECONDS); one PLD epsilon on the fine grid takes
# 0.15 s at 40 releases and 1.3 s at 100,000 (peak 316 MB). A calibration evaluates about 40 epsilons.
RDP_POINT_S = 4e-4
MA_POINT_S = 4e-5
# A curve's fixed part: in a fresh process the first RDP curve (T = 5) took 0.215 s of the reference machine's
# seconds, the moments accountant's 0.099 (benchmarks/bench_price_spread.py's machine; 0.05 before for both).
RDP_BASE_S = 0.19
MA_BASE_S = 0.07
PLD_STEP_S = 0.02            # per release composed one at a time, plus PLD_STEP_T_S per release so far
PLD_STEP_T_S = 6e-4
PLD_EPS_S = 0.3              # one epsilon on the fine grid, plus PLD_EPS_T_S per release
PLD_EPS_T_S = 2.5e-5
CALIBRATION_EVALS = 45
ACCOUNTANT_BASE_MB = 100.0
PLD_MB_PER_STEP = 0.004


def _curve_seconds(steps: int, accountant: str) -> float:
    if accountant == "pld":
        if steps <= PLD_STEPWISE:
            return steps * PLD_STEP_S + PLD_STEP_T_S * steps * (steps + 1) / 2
        return 2.0 * len(curve_counts(steps, "pld")) * pld_point_seconds(steps)
    if accountant == "ma":
        return min(steps, RDP_POINTS) * MA_POINT_S + MA_BASE_S
    return min(steps, RDP_POINTS) * RDP_POINT_S + RDP_BASE_S


def _epsilon_seconds(steps: int, accountant: str) -> float:
    if accountant == "pld":
        # beyond PLD_FINE_STEPS releases PLD composes on the coarse grid (engine.privacy.make_accountant)
        return 2.0 * pld_point_seconds(steps) if steps > PLD_FINE_STEPS else PLD_EPS_S + PLD_EPS_T_S * steps
    return 0.05


def pld_noise_factor(z: float | None, power: float = 2.0) -> float:
    """How much longer PLD takes with noise multiplier ``z`` than at z = 1: its privacy loss distribution
    widens as z shrinks. Measured for one epsilon on the fine grid: z = 0.5 3 times, 0.3 7 times, 0.2 13 times
    (power 2); for a curve on the coarse grid: z = 0.5 2.2 times, 0.3 3.4 times (power 1.2)."""
    return max(1.0, 1.0 / max(float(z), 1e-3) ** power) if z is not None else 1.0


CALIBRATION_Z = 0.5      # a calibration's z is not known before it runs; PLD's is priced as if it were this


def accountant_cost(steps: int, accountants: Sequence[str] = ("rdp",), *, curve: bool = True, points: int = 1,
                    calibrations: int = 0, calibrate_steps: int | None = None, z: float | None = 1.0) -> Cost:
    """Cost of accounting ``steps`` releases with each of ``accountants`` at noise multiplier ``z``.

    ``curve``: the epsilon curve over 1..steps; ``points``: single epsilons
    at ``steps``; ``calibrations``: inverse questions (z, q or T for a target),
    each about CALIBRATION_EVALS epsilons, at up to ``calibrate_steps``
    releases (default ``steps``).
    """
    steps = max(1, int(steps))
    seconds, memory = 0.0, ACCOUNTANT_BASE_MB
    for name in accountants:
        factor = pld_noise_factor(z) if name == "pld" else 1.0
        if curve:
            seconds += (pld_noise_factor(z, 1.2) if name == "pld" else 1.0) * _curve_seconds(steps, name)
        seconds += factor * points * _epsilon_seconds(steps, name)
        if calibrations:
            largest = max(steps, int(calibrate_steps or steps))
            calibration_factor = max(factor, pld_noise_factor(CALIBRATION_Z)) if name == "pld" else 1.0
            seconds += calibration_factor * calibrations * CALIBRATION_EVALS * _epsilon_seconds(largest, name)
            steps_for_memory = largest
        else:
            steps_for_memory = steps
        if name == "pld":
            memory = max(memory, ACCOUNTANT_BASE_MB + factor * PLD_MB_PER_STEP * steps_for_memory)
    knobs = [("steps", steps, 40, 1)] + ([("accountant", 1, 1, 1)] if "pld" in accountants else [])
    return priced(with_margin("accountant", seconds), memory, knobs)
