"""Running a small test page (a function) the way a visitor does: its session state set, one run, one click."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def click_run(page, button: str = "go", **state) -> AppTest:
    """``page`` run once with ``state`` in its session, then again after a click on the button ``button``."""
    at = AppTest.from_function(page, default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.button(key=button).click().run()
    assert not at.exception, at.exception
    return at
