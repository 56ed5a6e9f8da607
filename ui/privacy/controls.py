"""The privacy accountant's controls: the mechanism's settings, the paper's Fig. 2 setting, presenter mode."""

from __future__ import annotations

from engine.privacy import DELTA_RULES, SAMPLING
from engine.privacy.accountants import Q_MIN, Z_MAX, Z_MIN
from ui.kit.presenter import PRESENT
from ui.kit.state import Ignored, Param, current_values, seed_controls, set_state
from ui.privacy.questions import MAX_STEPS

PREFIX = "acc_"
DELTA_MODES = (*DELTA_RULES, "manual")     # the delta rules of engine.privacy, or a delta typed in
PARAMS = {
    "q": Param(0.25, float, low=Q_MIN, high=1.0),
    "z": Param(1.0, float, low=Z_MIN, high=Z_MAX),
    "steps": Param(40, int, low=1, high=MAX_STEPS),
    "agents": Param(200, int, low=1, high=10**9),
    "delta_mode": Param("product", str, DELTA_MODES),
    "delta": Param(1e-5, float, low=1e-300, high=1 - 1e-9),
    "sampling": Param("poisson", str, SAMPLING),
    "present": PRESENT,
}
FIG2_SETTINGS = dict(q=0.25, z=1.0, steps=40, agents=200, delta_mode="paper", sampling="poisson")


def init() -> list[Ignored]:
    """Seed the controls (a ``?preset=fig2`` link first, then the URL's values); returns ignored link values."""
    return seed_controls(PARAMS, PREFIX, presets=("fig2",), preset_values=lambda name: FIG2_SETTINGS)


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)


def load_fig2():
    set_state(FIG2_SETTINGS, PREFIX)
