"""One session cannot flood the server with reruns: a session's reruns are coalesced to one per interval.

Streamlit starts a rerun for every ``rerun_script`` message of a session's
websocket (a widget change, or a client that sends hundreds); each interrupts
the running script and starts it again. Hundreds a second from one client kept
the server busy enough that its health check went unanswered for tens of
seconds. :func:`install` wraps the session's handler: a rerun that comes within
:data:`MIN_INTERVAL` of the previous one waits until the interval has passed,
and only the latest request of that wait runs (its widget states are the
browser's current ones, so nothing a person did is lost but the intermediate
states). Fragment reruns pass through unchanged.
"""

from __future__ import annotations

import asyncio
import math
import time

MIN_INTERVAL = 0.25        # seconds between two reruns of one session


def install(interval: float = MIN_INTERVAL) -> None:
    """Coalesce every session's reruns (idempotent; app.py calls it on each run)."""
    from streamlit.runtime.app_session import AppSession

    if getattr(AppSession, "_dpbo_coalesced", None) is not None:
        return
    # Streamlit 1.x has no public hook for a session's rerun requests: this handler is where they arrive.
    original = AppSession._handle_rerun_script_request  # noqa: SLF001

    def coalesced(self, client_state=None) -> None:
        if client_state is not None and client_state.fragment_id:
            original(self, client_state)
            return
        state = self.__dict__.setdefault("_dpbo_reruns", {"last": -math.inf, "pending": None, "timer": None})
        wait = state["last"] + interval - time.monotonic()
        if wait <= 0 and state["timer"] is None:
            state["last"] = time.monotonic()
            original(self, client_state)
            return
        state["pending"] = client_state             # the latest request wins
        if state["timer"] is None:
            def fire() -> None:
                state["timer"] = None
                pending, state["pending"] = state["pending"], None
                state["last"] = time.monotonic()
                original(self, pending)

            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:                    # not on the server's event loop: no deferral possible
                state["last"] = time.monotonic()
                original(self, client_state)
                return
            state["timer"] = loop.call_later(max(wait, 0.0), fire)

    AppSession._handle_rerun_script_request = coalesced  # noqa: SLF001
    AppSession._dpbo_coalesced = interval  # noqa: SLF001
