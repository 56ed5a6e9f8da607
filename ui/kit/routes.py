"""Every page of the dashboard in one place: file, title, icon, address, and how to link to it.

``app.py`` builds the menu from :data:`ROUTES` (``st.Page`` objects with an
explicit ``url_path``), each page configures itself with
:meth:`Route.configure`, and links between pages go through
:func:`page_link`, so a page's file name, title or icon is written once. A
page's address is its file name without the number (``pages/1_Federated_BO.py``
is ``/Federated_BO``, as Streamlit's own pages/ convention would give):
:attr:`Route.url_path`. The README's tour
of the pages follows :data:`ROUTES` too (``tests/test_docs.py`` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

from engine.hosting import is_hosted

ROOT = Path(__file__).resolve().parents[2]
APP_TITLE = "DP-BO Explorer"
HOME_ICON = ":material/home:"
# The browser tab's icon is a file served by this app: a ``:material/...:`` icon there makes the browser
# fetch the picture from a font host (icons inside the page are bundled), and the app never calls out.
FAVICON = str(ROOT / "ui" / "assets" / "favicon.png")


def use_the_products_menu() -> None:
    """Make sure ``app.py``'s menu runs, even when a fresh server's first request is a sub-page.

    Every page calls this first, before it imports the engine. Streamlit 1.67
    decides once per server, when the first session starts, that a project with
    a folder named ``pages/`` is an old-style multipage app
    (``PagesManager.uses_pages_directory``, ``runtime/pages_manager.py``), and
    until some script calls ``st.navigation`` it runs a requested sub-page's
    file directly under its own menu ("app", "DP HYPE", no icons)
    (``_mpa_v1`` in ``runtime/scriptrunner/script_runner.py``): ``app.py``,
    with its ``st.Page`` objects and their explicit ``url_path``, does not run
    on that request, so nothing it declares can prevent it. No option turns
    this off: ``client.showSidebarNavigation = false`` would hide the product's
    menu as well (``commands/navigation.py``, and the browser keeps the
    session's first setting), and the folder's name is fixed. Sending the
    product's ``st.navigation`` from the page itself, in that same run, loses
    the session's next widget events (its Run button did nothing), so a page
    that finds itself run that way switches the flag off and reruns: the rerun
    goes through ``app.py`` (the same page, address and query), which sends the
    product's menu before anything heavy is imported. Called before the page's
    own imports, this replaces Streamlit's menu within a few tenths of a second
    instead of after the engine's 2 s of imports.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def app_settings() -> None:
    """What ``app.py`` sets before its menu: the tab's icon, and hosting mode's error details.

    The tab's icon first: once a page has set one, the menu's material icons
    are not fetched from a font host to serve as the tab's icon (the app never
    calls out). Hosting mode (``DPBO_HOSTED=1``): an unexpected error shows no
    traceback, paths or code to visitors.
    """
    st.set_page_config(page_title=APP_TITLE, page_icon=FAVICON, layout="wide")
    if is_hosted():
        st.set_option("client.showErrorDetails", "none")


def page_files() -> list[Path]:
    """Every file in ``pages/``, in the menu's order (the file name's number first)."""
    return sorted((ROOT / "pages").glob("*.py"))


def menu_pages(home) -> list:
    """The product's menu: ``home`` (the landing page), then every file in ``pages/``.

    A known page (:data:`ROUTES`) has its title, icon and explicit address;
    any other file appears under its file-derived title and address.
    """
    pages = [st.Page(home, title="Home", icon=HOME_ICON, default=True)]
    for path in page_files():
        route = route_of(f"pages/{path.name}")
        pages.append(st.Page(f"pages/{path.name}") if route is None else
                     st.Page(route.path, title=route.title, icon=route.icon, url_path=route.url_path))
    return pages


@dataclass(frozen=True)
class Route:
    """One page: ``path`` relative to the project, its menu title, icon and landing-page blurb."""

    path: str
    title: str
    icon: str
    blurb: str

    @property
    def url_path(self) -> str:
        """The page's address: the file name without its number and ``.py`` (``app.py`` passes it to ``st.Page``)."""
        return Path(self.path).stem.split("_", 1)[-1]

    def exists(self) -> bool:
        return (ROOT / self.path).is_file()

    def configure(self, *, sidebar: str = "auto") -> None:
        """``st.set_page_config`` with the page's title (:func:`ui.kit.opening.open_page` calls it).

        ``sidebar="collapsed"`` folds the sidebar away (presenter mode).
        """
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

PLAN = Route("pages/9_Plan_a_deployment.py", "Plan a deployment", ":material/rocket_launch:",
             "From your N, T and privacy budget to the q, z, S and P to deploy: a search over every setting that "
             "meets the budget, its utility, and the Flower app in one click.")

ROUTES = (FBO, TEACHING, ACCOUNTANT, HYPE, POGPUCB, TRADEOFF, AUDIT, REPRODUCTION, PLAN)
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
