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

# Larger text everywhere in the main area, and a layout that keeps one step on one 1280x720 screen: the title on
# one line, less padding above and below, tighter gaps, and the chart sized by ui.kit.charts.enlarge. Streamlit
# pulls the element after a caption up by the caption paragraph's margin (-1rem); with that margin at 0 here, the
# pull is cut to less than the gap between elements, or the next element (a chart title) covers half the caption.
# A metric's value and delta are paragraphs too: their own rules outrank the paragraphs' (a value smaller than the
# delta chip beside it otherwise).
_STYLE = """<style>
[data-testid="stMain"] [data-testid="stMainBlockContainer"] { padding-top: 3.5rem; padding-bottom: 0.5rem; }
[data-testid="stMain"] [data-testid="stVerticalBlock"] { gap: 0.55rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.4rem; line-height: 1.4; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p { margin-bottom: 0.3rem; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.05rem; margin-bottom: 0; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] { margin-bottom: -0.5rem; }
[data-testid="stMain"] h1 { font-size: 2.1rem; padding: 0; }
[data-testid="stMain"] h2, [data-testid="stMain"] h3 { font-size: 1.8rem; padding: 0.2rem 0; }
[data-testid="stMain"] [data-testid="stMetricValue"],
[data-testid="stMain"] [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p { font-size: 2.4rem; }
[data-testid="stMain"] [data-testid="stMetricDelta"] [data-testid="stMarkdownContainer"] p { font-size: 1.2rem; }
[data-testid="stMain"] [data-testid="stMetricLabel"] p { font-size: 1.3rem; }
[data-testid="stMain"] button p { font-size: 1.25rem; }
[data-testid="stMain"] [data-testid="stProgress"] p { font-size: 1.25rem; }
</style>"""

# Installed once per browser tab (a script in st.html runs when it is first drawn, not on every rerun):
# - switching presenter mode on leaves the focus on the switch, and Streamlit ignores the ← → shortcuts while a
#   control has the focus (the switch would take them), so ← → on the switch give up its focus and press
#   Previous / Next;
# - when a lesson's step changes (its progress text "Step n of m"), the page scrolls back to the top, so the
#   new step's title is on screen even after scrolling down on the previous one.
_SCRIPT = """<script>
(() => {
  if (window.__dpboLesson) return;
  window.__dpboLesson = true;
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const name = {ArrowRight: "Next", ArrowLeft: "Previous"}[event.key];
    if (!name || !target || !target.getAttribute || target.getAttribute("aria-label") !== "Presenter mode") return;
    const button = [...document.querySelectorAll('[data-testid="stMain"] button')]
      .find((b) => b.innerText.split("\\n").some((line) => line.trim() === name));
    event.preventDefault();
    target.blur();
    if (button && !button.disabled) button.click();
  }, true);
  const top = () => {
    window.scrollTo(0, 0);
    for (const id of ["stMain", "stAppViewContainer"]) {
      const el = document.querySelector(`[data-testid="${id}"]`);
      if (el) el.scrollTop = 0;
    }
  };
  let shown = null;
  new MutationObserver(() => {
    const bar = [...document.querySelectorAll('[data-testid="stProgress"]')]
      .map((el) => el.innerText.match(/Step \\d+ of \\d+/)).find(Boolean);
    const now = bar ? bar[0] + location.pathname : null;
    if (now !== null && now !== shown) {
      shown = now;
      top();
      setTimeout(top, 150);
    }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
})();
</script>"""


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
        st.html(_SCRIPT, width="content", unsafe_allow_javascript=True)
    container.progress((step + 1) / len(titles), text=f"Step {step + 1} of {len(titles)}: **{titles[step]}**")
    return step
