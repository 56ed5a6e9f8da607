"""What a public server adds around the pages (``serve.py``, the Docker image's command): Streamlit's ``st.App``.

- :class:`ClosedPaths`: in hosting mode, Streamlit's ``/_stcore/metrics`` answers 404. Its counters (sessions,
  cache entries and sizes per cached function) tell a visitor what other visitors compute; Streamlit has no
  option to turn it off, and an ``st.App`` middleware runs before Streamlit's own routes.
- :func:`on_script_error`: an exception no page caught (including one Streamlit raises while reading a control's
  value a client sent, before the page's code runs, e.g. NaN for a whole number) is logged with its traceback and,
  in hosting mode, shown as one sentence instead of Streamlit's error box (which names server options and offers
  buttons that send the message to other sites).

Nothing here names a path: the server's log has the details.
"""

from __future__ import annotations

import logging

from engine.hosting import is_hosted

LOG = logging.getLogger("dpbo.serving")
CLOSED = ("/_stcore/metrics",)
FAILED = ("This page stopped on something it could not handle (the server's log has the details). Reload the page "
          "or change the last setting you changed.")


class ClosedPaths:
    """ASGI middleware: in hosting mode, the paths ending in one of ``closed`` answer 404 (any base URL)."""

    def __init__(self, app, closed: tuple[str, ...] = CLOSED):
        self.app, self.closed = app, tuple(closed)

    async def __call__(self, scope, receive, send) -> None:
        path = str(scope.get("path", "")).rstrip("/")
        if scope.get("type") == "http" and is_hosted() and path.endswith(self.closed):
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": b"Not found"})
            return
        await self.app(scope, receive, send)


def middleware() -> list:
    from starlette.middleware import Middleware

    return [Middleware(ClosedPaths)]


def on_script_error(exc: BaseException) -> bool | None:
    """Log ``exc``; in hosting mode show one sentence in its place and suppress Streamlit's box (True)."""
    LOG.error("A page stopped on an uncaught exception", exc_info=exc)
    if not is_hosted():
        return None
    import streamlit as st

    st.error(FAILED, icon=":material/error:")
    return True
