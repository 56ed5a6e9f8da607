"""The teaching view's controls: the server round to look at (a short real DP-FTS-DE run) and presenter mode."""

from __future__ import annotations

import streamlit as st

from engine.fbo.teaching import MAX_ROUND
from engine.privacy.accountants import Q_MIN, Z_MAX, Z_MIN
from ui.kit.presenter import PRESENT
from ui.kit.state import SEED_MAX, Ignored, Param, current_values, init_state, set_state

PREFIX = "teach_"
# A short real DP-FTS-DE run on the paper's synthetic task: enough agents for
# the noise to be moderate, few enough for one bar per agent to stay readable.
PARAMS = {
    "agents": Param(100, int, low=2, high=100_000),
    "P": Param(2, int, low=1, high=1000),
    "t": Param(3, int, low=1, high=MAX_ROUND),
    "q": Param(0.5, float, low=Q_MIN, high=1.0),
    "z": Param(1.0, float, low=Z_MIN, high=Z_MAX),
    "S": Param(11.0, float, low=1e-9, high=1e9),
    "seed": Param(0, int, low=0, high=SEED_MAX),
    "present": PRESENT,
}


def init() -> list[Ignored]:
    """Seed the controls from the URL; returns the link values that were ignored."""
    return init_state(PARAMS, PREFIX)


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)


def restart():
    """The lesson's start: the first step and the default round (presenter mode stays as it is)."""
    set_state({name: param.default for name, param in PARAMS.items() if name != "present"}, PREFIX)


def redraw():
    st.session_state[PREFIX + "seed"] = int(st.session_state[PREFIX + "seed"]) + 1
