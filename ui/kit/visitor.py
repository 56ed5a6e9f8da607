"""Who is asking: the session (one browser tab) and, where the reverse proxy passes it, the client's address.

The address is Streamlit's ``st.context.ip_address``: the websocket's peer, which uvicorn replaces by the first
address of ``X-Forwarded-For`` when the connection comes from an address it trusts (``FORWARDED_ALLOW_IPS``,
default 127.0.0.1: a proxy on the same machine). A visitor on loopback without a proxy has no address (None), and
then only the session counts. The session's key is kept in its state, so it is the same on every rerun.
"""

from __future__ import annotations

import uuid

import streamlit as st

from ui.kit.run_pool import Visitor

SESSION_KEY = "_dpbo_visitor"


def current() -> Visitor:
    """The visitor of the script run in this thread (call it from the script thread)."""
    session = st.session_state.get(SESSION_KEY)
    if not isinstance(session, str):
        session = st.session_state[SESSION_KEY] = uuid.uuid4().hex
    try:
        address = st.context.ip_address
    except Exception:  # noqa: BLE001 - no client (a test harness): the session alone
        address = None
    return Visitor(session, address or None)
