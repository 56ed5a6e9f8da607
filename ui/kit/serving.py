"""What a public server adds around the pages (``serve.py``, the Docker image's command): Streamlit's ``st.App``.

- :class:`ClosedPaths`: in hosting mode, Streamlit's ``/_stcore/metrics`` answers 404. Its counters (sessions,
  cache entries and sizes per cached function) tell a visitor what other visitors compute; Streamlit has no
  option to turn it off, and an ``st.App`` middleware runs before Streamlit's own routes.
- :func:`on_script_error`: an exception no page caught (including one Streamlit raises while reading a control's
  value a client sent, before the page's code runs, e.g. NaN for a whole number) is logged with its traceback and,
  in hosting mode, shown as one sentence instead of Streamlit's error box (which names server options and offers
  buttons that send the message to other sites).

- :func:`settle_heap`: at the server's start, before it serves, everything the pages import is imported and one
  figure of each kind they draw is made (Plotly imports a trace type's validators then), then all of it is moved
  out of the garbage collector's walks (``gc.freeze``). Otherwise the first visits import it (1.5 s holding the
  interpreter: under a flood of reruns on a fresh server, a health check waited 1.5 s for it), and every full
  collection walks its 170,000 objects (0.1 s each, every thread stopped); frozen, a collection walks only what
  the sessions made since.

Nothing here names a path: the server's log has the details.
"""

from __future__ import annotations

import ast
import gc
import importlib
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


def _trees(paths) -> list[ast.AST]:
    return [ast.parse(path.read_text(), str(path)) for path in paths]


def page_imports() -> list[str]:
    """Every module ``app.py`` and the pages import, anywhere in their code (a page imports most of what it uses
    inside its functions, after the menu is sent)."""
    from ui.kit.routes import ROOT, page_files

    names: dict[str, None] = {}
    for tree in _trees([ROOT / "app.py", *page_files()]):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update((alias.name, None) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names[node.module] = None
    return list(names)


def drawn_kinds() -> list[str]:
    """The Plotly trace types the dashboard's code makes (``go.Scatter(...)`` and the like, read from ``ui/``):
    Plotly imports a type's validators the first time one is made."""
    import plotly.graph_objects as go
    from plotly.basedatatypes import BaseTraceType

    from ui.kit.routes import ROOT

    names = {node.attr for tree in _trees(sorted((ROOT / "ui").rglob("*.py"))) for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "go"}
    return sorted(name for name in names
                  if isinstance(getattr(go, name, None), type) and issubclass(getattr(go, name), BaseTraceType))


def settle_heap() -> int:
    """Import what the pages import, make one figure of each kind the dashboard draws, collect, and freeze what
    is alive (``gc.freeze``): later collections walk only what the sessions make. Returns the objects frozen."""
    for name in page_imports():
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optional package (Flower) absent: its page says so when it runs
            LOG.debug("not imported at start: %s", name)
    import plotly.graph_objects as go

    go.Figure([getattr(go, kind)() for kind in drawn_kinds()]).to_plotly_json()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
