"""Presenter mode for a lesson in class: larger fonts, one idea per screen, keyboard Next/Previous, restart.

A lesson page (the teaching view, the privacy accountant) adds
:data:`PRESENT` to its controls (so the mode is in the link, ``?present=true``,
and a teacher can bookmark the lesson in presenter mode), draws
:func:`presenter_toggle` near its title, moves between its screens with
:func:`slide_nav` and passes ``large=True`` to :func:`ui.kit.charts.show`.
"""

from __future__ import annotations

from typing import Callable, Sequence

import streamlit as st

from ui.kit.state import Param

PRESENT = Param(False, bool)   # the control behind the toggle: add it to a lesson page's parameters as "present"

# Larger text everywhere in the main area, and a roomier layout for a projector.
_STYLE = """<style>
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.5rem; line-height: 1.45; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.2rem; }
[data-testid="stMain"] h1 { font-size: 3rem; }
[data-testid="stMain"] h2, [data-testid="stMain"] h3 { font-size: 2.2rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 2.8rem; }
[data-testid="stMain"] [data-testid="stMetricLabel"] p { font-size: 1.3rem; }
[data-testid="stMain"] button p { font-size: 1.25rem; }
</style>"""


def presenter_wanted(key: str) -> bool:
    """Whether presenter mode is on, before its toggle is drawn (from the session, else the link)."""
    if key in st.session_state:
        return bool(st.session_state[key])
    return st.query_params.get("present", "").lower() in ("1", "true", "yes", "on")


def presenter_toggle(key: str, where=None) -> bool:
    """The "Presenter mode" switch (its state under ``key``); returns whether it is on."""
    on = (where if where is not None else st).toggle(
        "Presenter mode", key=key,
        help="For a class: large fonts, one idea per screen; ← and → (or the buttons) move between screens.")
    if on:
        st.html(_STYLE)
    return bool(on)


def slide_nav(prefix: str, titles: Sequence[str], *, restart: Callable[[], None] | None = None,
              where=None) -> int:
    """Previous / Next (keys ← and →) and "Restart the lesson" over ``titles``; returns the screen shown.

    The screen index lives in ``st.session_state[prefix + "_step"]``, the
    buttons' keys are ``prefix + "_prev"``, ``"_next"`` and ``"_restart"``;
    ``restart`` also puts the lesson's settings back to where it starts.
    """
    key = f"{prefix}_step"
    last = len(titles) - 1
    step = min(max(int(st.session_state.get(key, 0)), 0), last)
    st.session_state[key] = step

    def go_to(delta: int) -> None:
        st.session_state[key] = min(max(int(st.session_state.get(key, 0)) + delta, 0), last)

    def start_over() -> None:
        st.session_state[key] = 0
        if restart is not None:
            restart()

    container = where if where is not None else st
    with container.container(horizontal=True, vertical_alignment="center"):
        st.button("Previous", icon=":material/arrow_back:", on_click=go_to, args=(-1,), disabled=step == 0,
                  key=f"{prefix}_prev", shortcut="Left")
        st.button("Next", icon=":material/arrow_forward:", on_click=go_to, args=(1,), disabled=step == last,
                  key=f"{prefix}_next", type="primary", shortcut="Right")
        st.button("Restart the lesson", icon=":material/replay:", on_click=start_over, key=f"{prefix}_restart",
                  help="Back to the first screen and the lesson's starting settings.")
    container.progress((step + 1) / len(titles), text=f"Step {step + 1} of {len(titles)}: **{titles[step]}**")
    return step
