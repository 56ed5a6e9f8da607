"""One visitor cannot flood the server with reruns: reruns are capped per session and per client address.

Streamlit starts a rerun for every ``rerun_script`` message of a session's
websocket (a widget change, or a client that sends hundreds); each interrupts
the running script and starts it again. Hundreds a second from one client kept
the server busy enough that its health check went unanswered for tens of
seconds. :func:`install` wraps the session's handler, and a rerun waits until

- its session's last rerun is :func:`min_interval` old
  (:attr:`engine.limits.VisitorCaps.reruns_per_session`);
- in hosting mode, its visitor's page scripts have not used more than their
  share of the server's time: the CPU time each script run took is charged to
  the visitor (:func:`charge`, called by ``app.py`` around every page), who
  earns back :attr:`~engine.limits.VisitorCaps.script_share` of a second per
  second, up to :data:`CPU_BURST` seconds;
- the sessions of its client address (where a proxy passes it, see
  :mod:`ui.kit.visitor`) have started fewer than
  :attr:`~engine.limits.VisitorCaps.reruns_per_address` reruns in the last
  second (``DPBO_MAX_RERUNS_PER_ADDRESS``).

A visitor is the client address when known, else the session: twenty tabs of one
visitor get the turns and the time of one, and a visitor at another address is
not slowed. While a rerun waits, only the latest request of that session runs
(its widget states are the browser's current ones, so nothing a person did is
lost but the intermediate states). A request identical to the one the session's
last run started with, within :data:`SAME_RERUN_SECONDS` of it, is dropped: that
run answers it, unless it carries a press (a button pressed twice in a second
runs twice). Fragment reruns pass through unchanged.

Why runs, and their time, are what is capped: Streamlit starts a thread for every
run, and the server's event loop waits until it has started; with many scripts
holding Python's interpreter lock, each start took a large part of a second, and
under a flood those starts kept the loop from answering the health check.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time

# app.py installs this on every run before the product's menu is sent, so the engine (engine.limits imports the
# accountants: 0.6 s) is imported only when a rerun request first arrives, not here.


def _caps():
    from engine.limits import VisitorCaps

    return VisitorCaps.from_env()


def min_interval() -> float:
    """Seconds between two reruns of one session (``VisitorCaps.reruns_per_session``)."""
    from engine.limits import VisitorCaps

    return 1.0 / VisitorCaps().reruns_per_session
# A request that asks for exactly what the session's last run was started with (page, query and every widget's
# value, a button's press included), this soon after it, is answered by that run: nothing a person does sends the
# same request twice within a second, a client that floods the server does.
SAME_RERUN_SECONDS = 1.0
CPU_BURST = 2.0            # seconds of script time a visitor may spend at once before its share applies
LOOPBACK = ("127.0.0.1", "::1")
_ADDRESSES: dict[str, float] = {}              # client address -> when its sessions may start their next rerun
_CPU: dict[str, tuple[float, float]] = {}      # visitor key -> (seconds of script time in hand, when counted)
_LOCK = threading.Lock()


def client_address(session) -> str | None:
    """The client address of an AppSession (None: unknown or loopback, as ``st.context.ip_address`` says)."""
    try:
        from streamlit import runtime

        client = runtime.get_instance().get_client(session.id)
        address = client.client_context.remote_ip if client is not None else None
    except Exception:  # noqa: BLE001 - no runtime or no client context: the session alone counts
        return None
    return None if not address or address in LOOPBACK else str(address)


def visitor_key(session_id: str, address: str | None) -> str:
    return f"address {address}" if address else f"session {session_id}"


def _forget(table: dict, now: float, old: float) -> None:
    if len(table) > 10_000:
        for key in [k for k, v in table.items() if (v if isinstance(v, float) else v[1]) < now - old]:
            del table[key]


def address_turn(address: str | None, now: float, per_second: float | None) -> float:
    """Seconds until ``address``'s sessions may start a rerun (0: now, and the turn is taken)."""
    if address is None or not per_second:
        return 0.0
    with _LOCK:
        free = _ADDRESSES.get(address, -math.inf)
        if now < free:
            return free - now
        step = 1.0 / per_second
        _ADDRESSES[address] = max(free, now - 1.0 + step) + step      # a second's burst at most, then the rate
        _forget(_ADDRESSES, now, 60.0)
        return 0.0


def _balance(key: str, now: float, share: float) -> float:
    held, counted = _CPU.get(key, (CPU_BURST, now))
    return min(CPU_BURST, held + max(0.0, now - counted) * share)


def cpu_wait(key: str, now: float, share: float | None) -> float:
    """Seconds until the visitor ``key`` has earned back the script time it spent beyond its share (0: now)."""
    if not share:
        return 0.0
    with _LOCK:
        held = _balance(key, now, share)
        _CPU[key] = (held, now)
        return 0.0 if held >= 0 else -held / share


def charge(key: str, seconds: float, now: float | None = None, share: float | None = None) -> None:
    """The visitor ``key``'s page script used ``seconds`` of CPU time (hosting mode: its next reruns wait for it)."""
    share = _caps().script_share if share is None else share
    if not share:
        return
    now = time.monotonic() if now is None else now
    with _LOCK:
        _CPU[key] = (_balance(key, now, share) - max(0.0, float(seconds)), now)
        _forget(_CPU, now, 600.0)


def charge_this_run(seconds: float) -> None:
    """Called by ``app.py`` in the script thread after every page run: charge its visitor."""
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return
    try:
        address = st.context.ip_address
    except Exception:  # noqa: BLE001 - no client: the session alone
        address = None
    charge(visitor_key(ctx.session_id, address), seconds)


def _fingerprint(client_state) -> bytes | None:
    """What a rerun request asks for (page, query, every widget's value), to tell a repeated request."""
    if client_state is None:
        return None
    try:
        return client_state.SerializeToString(deterministic=True)
    except Exception:  # noqa: BLE001 - an unreadable request is never the same as another
        return None


TRIGGERS = ("trigger_value", "string_trigger_value", "json_trigger_value", "chat_input_value")


def _presses(client_state) -> bool:
    """Whether a rerun request carries a press (a button, a chat message): two presses of "Next" in a second send
    the same request, and each must run."""
    try:
        return any(widget.WhichOneof("value") in TRIGGERS and bool(getattr(widget, widget.WhichOneof("value")))
                   for widget in client_state.widget_states.widgets)
    except Exception:  # noqa: BLE001 - an unreadable request: treat it as a press, never drop it
        return True


def _wait(state: dict, interval: float, now: float) -> float:
    """Seconds until this session may rerun (0: now, and its address's turn is taken)."""
    caps = _caps()
    wait = max(state["last"] + interval - now, cpu_wait(state["key"], now, caps.script_share))
    return wait if wait > 0 else address_turn(state["address"], now, caps.reruns_per_address)


def install(interval: float | None = None) -> None:
    """Cap every session's reruns, and every visitor's (idempotent; app.py calls it on each run)."""
    from streamlit.runtime.app_session import AppSession

    if getattr(AppSession, "_dpbo_coalesced", None) is not None:
        return
    # Streamlit 1.x has no public hook for a session's rerun requests: this handler is where they arrive.
    original = AppSession._handle_rerun_script_request  # noqa: SLF001

    def coalesced(self, client_state=None) -> None:
        if client_state is not None and client_state.fragment_id:
            original(self, client_state)
            return
        state = self.__dict__.get("_dpbo_reruns")
        if state is None:
            address = client_address(self)
            state = self.__dict__["_dpbo_reruns"] = {"last": -math.inf, "pending": None, "timer": None, "ran": None,
                                                     "address": address, "key": visitor_key(self.id, address)}
        now = time.monotonic()
        asked = _fingerprint(client_state)
        if state["timer"] is None and asked == state["ran"] and now - state["last"] < SAME_RERUN_SECONDS \
                and not _presses(client_state):
            return                                  # the run just started already answers this request
        if state["timer"] is None:
            wait = _wait(state, min_interval() if interval is None else interval, now)
            if wait <= 0:
                state["last"], state["ran"] = now, asked
                original(self, client_state)
                return
        state["pending"] = client_state             # the latest request wins
        if state["timer"] is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:                    # not on the server's event loop: no deferral possible
                state["last"], state["ran"] = time.monotonic(), asked
                original(self, client_state)
                return

            def fire() -> None:
                now = time.monotonic()
                turn = _wait(state, 0.0, now)
                if turn > 0:                        # its visitor's other tabs took the turn, or the time: wait on
                    state["timer"] = loop.call_later(turn, fire)
                    return
                state["timer"] = None
                pending, state["pending"] = state["pending"], None
                state["last"], state["ran"] = now, _fingerprint(pending)
                original(self, pending)

            state["timer"] = loop.call_later(max(wait, 0.0), fire)

    AppSession._handle_rerun_script_request = coalesced  # noqa: SLF001
    AppSession._dpbo_coalesced = True  # noqa: SLF001
