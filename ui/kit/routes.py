"""Every page of the dashboard in one place: file, title, icon, address, and how to link to it.

``app.py`` builds the menu from :data:`ROUTES`, each page configures itself
with :meth:`Route.configure`, and links between pages go through
:func:`page_link`, so a page's file name, title or icon is written once.
Streamlit derives a page's URL from its file name (``pages/1_Federated_BO.py``
is ``/Federated_BO``); :attr:`Route.url_path` says which. The README's tour
of the pages follows :data:`ROUTES` too (``tests/test_docs.py`` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

ROOT = Path(__file__).resolve().parents[2]
APP_TITLE = "DP-BO Explorer"
HOME_ICON = ":material/home:"
# The browser tab's icon is a file served by this app: a ``:material/...:`` icon there makes the browser
# fetch the picture from a font host (icons inside the page are bundled), and the app never calls out.
FAVICON = str(ROOT / "ui" / "assets" / "favicon.png")


def use_the_products_menu() -> None:
    """Make sure ``app.py``'s navigation runs, even when a fresh server's first request is a sub-page.

    Streamlit (1.67, ``runtime/pages_manager.py``) treats a project with a
    ``pages/`` folder as an old-style multipage app until some script run calls
    ``st.navigation``: the first session then runs the page file directly under
    Streamlit's own menu ("app", "DP HYPE", no icons). A page that finds itself
    run that way switches the flag off and reruns, and the rerun goes through
    ``app.py`` (the same page, address and query) with the product's menu.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


@dataclass(frozen=True)
class Route:
    """One page: ``path`` relative to the project, its menu title, icon and landing-page blurb."""

    path: str
    title: str
    icon: str
    blurb: str

    @property
    def url_path(self) -> str:
        """The address Streamlit gives the page: the file name without its number and ``.py``."""
        return Path(self.path).stem.split("_", 1)[-1]

    def exists(self) -> bool:
        return (ROOT / self.path).is_file()

    def configure(self, *, sidebar: str = "auto") -> None:
        """The product's menu, and ``st.set_page_config`` with the page's title (call first on the page).

        ``sidebar="collapsed"`` folds the sidebar away (presenter mode).
        """
        use_the_products_menu()
        st.set_page_config(page_title=f"{self.title} · {APP_TITLE}", page_icon=FAVICON, layout="wide",
                           initial_sidebar_state=sidebar)


FBO = Route("pages/1_Federated_BO.py", "Federated BO", ":material/hub:",
            "Run TS, FTS, FTS-DE, DP-FTS and DP-FTS-DE side by side and watch convergence and privacy loss grow live.")
TEACHING = Route("pages/2_Teaching_view.py", "Teaching view", ":material/school:",
                 "Walk through one server iteration of DP-FTS-DE step by step: subsample, clip, average, add noise.")
ACCOUNTANT = Route("pages/3_Privacy_accountant.py", "Privacy accountant", ":material/shield_lock:",
                   "ε of the subsampled Gaussian mechanism under three accountants, and the z, q or T for a target ε.")
HYPE = Route("pages/4_DP_HYPE.py", "DP-HYPE", ":material/how_to_vote:",
             "Private distributed hyperparameter voting, with live vote histograms.")
POGPUCB = Route("pages/5_PO_GP_UCB.py", "PO-GP-UCB", ":material/visibility_off:",
                "Private outsourced BO: a curator releases a randomly projected copy of its data.")
TRADEOFF = Route("pages/6_Tradeoff_explorer.py", "Trade-off explorer", ":material/scatter_plot:",
                 "Sweep q, z or ε and see the whole privacy-utility frontier, locally or on a Dask cluster.")
AUDIT = Route("pages/7_Privacy_audit.py", "Privacy audit", ":material/policy:",
              "Attack the engine's own mechanism code and check a claimed ε against the lower bound the attack "
              "proves.")

REPRODUCTION = Route("pages/8_Paper_reproduction.py", "Paper reproduction", ":material/fact_check:",
                     "The DP-FTS-DE paper's experiments over 100 runs: our curves with standard errors beside "
                     "the paper's claims, and which claims hold.")

ROUTES = (FBO, TEACHING, ACCOUNTANT, HYPE, POGPUCB, TRADEOFF, AUDIT, REPRODUCTION)
# The page that shows one configuration of each sweep tool.
TOOL_ROUTES = {"fbo": FBO, "hype": HYPE, "pogpucb": POGPUCB}


def route_of(path: str) -> Route | None:
    return next((route for route in ROUTES if route.path == path), None)


def page_link(route: Route, label: str | None = None, *, icon: str | None = None, help: str | None = None,
              query_params: Mapping[str, str] | None = None) -> bool:
    """A link to ``route`` (with ``query_params``); returns whether it linked.

    A missing page file gives a grey note; a page run on its own (not under
    ``app.py``'s navigation, e.g. in a test) gives a plain markdown link to the
    same address.
    """
    label = label or route.title
    if not route.exists():
        st.caption(f"{label} (not available in this installation)")
        return False
    query = dict(query_params or {})
    try:
        st.page_link(route.path, label=label, icon=icon, help=help, query_params=query)
    except StreamlitAPIException:
        st.markdown(f"[{label}]({route.url_path}?{urlencode(query)})")
    return True
