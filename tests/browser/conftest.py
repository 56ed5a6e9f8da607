"""A running dashboard on a free localhost port and Debian's Chromium driven by Playwright.

Skipped with a reason when /usr/bin/chromium or Playwright is missing; CI
installs both. Screenshots go to test-artifacts/screenshots/; with
``DPBO_DOCS_IMAGES=1`` the page tests also write the README's small
screenshots to docs/images/ (:func:`docs_image`).

One server per configuration, shared by the tests that need it:
:func:`app_server` (the environment as it is, a fresh cache) here, and in
their modules the quick-start server (``streamlit run app.py`` as the README
says it) and a server without the landmine data.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
import types
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.loopback import free_port, image_config, image_environment, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("DPBO_CHROMIUM", "/usr/bin/chromium")
# --process-per-site: the tests' pages of 127.0.0.1 share one renderer process (see :class:`Tabs`).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--process-per-site"]
VIEWPORT = {"width": 1400, "height": 1000}


def _serve(tmp_path_factory, command: list[str], env: dict[str, str], name: str):
    """Start ``command`` on loopback for a test session; yields (process, url)."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    log = open(tmp_path_factory.mktemp(name) / "streamlit.log", "w")
    try:
        proc, url = start_server(command, env, log)
    except RuntimeError:
        log.close()
        pytest.fail(f"The dashboard ({name}) did not start; see the streamlit log in the pytest tmp folder.")
    try:
        yield proc, url
    finally:
        stop_server(proc)
        log.close()


@dataclass(frozen=True)
class Server:
    url: str
    cache_dir: Path
    env: dict


def need_chromium() -> None:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")


@contextlib.contextmanager
def running_app(folder: Path, *, env: dict, args=("--server.headless", "true", "--server.address", "127.0.0.1",
                                                  "--server.fileWatcherType", "none"), host: str = "127.0.0.1"):
    """``streamlit run app.py`` with ``args`` on a free port and environment ``env``; yields its :class:`Server`.

    The cache (``DPBO_CACHE_DIR``) is a fresh folder under ``folder``.
    """
    need_chromium()
    port = free_port()
    env = dict(env, DPBO_CACHE_DIR=str(folder / "cache"))
    log = open(folder / "streamlit.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), *args],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://{host}:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"The dashboard did not start; see {folder / 'streamlit.log'}.")
            time.sleep(0.5)
        yield Server(url, Path(env["DPBO_CACHE_DIR"]), env)
    finally:
        stop_server(proc)
        log.close()


@pytest.fixture(scope="session")
def hosted(tmp_path_factory):
    """The Docker image's command with the image's environment (hosting mode), on loopback.

    Only the address, the port and this machine's two folders differ from the image, so the image's recipe is
    what the hosted tests test. Yields a namespace with ``url``, ``pid`` and the ``cache`` folder.
    """
    image_env, command = image_config()
    assert image_env.get("DPBO_HOSTED") == "1" and command[:3] == ["streamlit", "run", "serve.py"]
    cache = tmp_path_factory.mktemp("hosted-cache")
    env = image_environment(cache)
    for proc, url in _serve(tmp_path_factory, command, env, "hosted"):
        yield types.SimpleNamespace(url=url, pid=proc.pid, cache=cache, env=env)


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """The dashboard with this environment (``DPBO_DATA_DIR`` as the tests have it) and a fresh cache."""
    with running_app(tmp_path_factory.mktemp("streamlit"), env=os.environ) as server:
        yield server


@pytest.fixture(scope="session")
def app_url(app_server):
    return app_server.url


# Playwright's own default wait (30 s for a page to load, a click, a locator) is a bound on this machine's load:
# a dashboard busy on a loaded machine took longer to answer. Every context of the tests' browser waits up to
# this instead, a guard against a hang; the waits a test sets itself stay as it sets them.
GUARD_MS = 180_000


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        new_context = chromium.new_context

        def guarded_context(*args, **kwargs):
            context = new_context(*args, **kwargs)
            context.set_default_timeout(GUARD_MS)
            context.set_default_navigation_timeout(GUARD_MS)
            return context

        chromium.new_context = guarded_context
        yield chromium
        chromium.close()


# What a test's page leaves in the shared context and must not reach the next test's: what the sites stored.
STORED = "cookies,local_storage,indexeddb,cache_storage,service_workers,file_systems,websql"


class Tabs:
    """The tests' pages: each test a new tab of one browser context, as a visitor's new tab, not a new browser.

    A new context is a new renderer process that parses and compiles Streamlit's and Plotly's scripts afresh
    (about 4 CPU seconds a page on the 2-core machine); tabs of one context on one site share a renderer
    (``--process-per-site``) and its compiled code (about 1.5). What a test could see of an earlier one is
    removed between tests: every other tab is closed, so each app session ends, and every site's cookies and
    storage (the sidebar's state, the theme) are cleared. The last tab is kept on its server's health address
    (a plain text page, no app session) so the renderer stays. Tests of separate visitors (two sessions, a
    closed tab) open contexts of their own.
    """

    def __init__(self, browser):
        self.context = browser.new_context(viewport=VIEWPORT)
        self.origins: set[str] = set()
        self.context.on("request", self._seen)
        self.keeper = None

    def _seen(self, request) -> None:
        url = urllib.parse.urlsplit(request.url)
        if url.scheme in ("http", "https") and url.netloc:
            self.origins.add(f"{url.scheme}://{url.netloc}")

    def open(self, viewport: dict | None = None):
        page = self.context.new_page()
        if viewport is not None:
            page.set_viewport_size(viewport)
        return page

    def release(self, page) -> None:
        url = urllib.parse.urlsplit(page.url) if not page.is_closed() else None
        keeper = None
        if url is not None and url.scheme in ("http", "https"):
            with contextlib.suppress(Exception):          # a server the test stopped: the tab just closes
                page.goto(f"{url.scheme}://{url.netloc}/_stcore/health", timeout=30_000)
                keeper = page
        for other in self.context.pages:
            if other is not keeper:
                with contextlib.suppress(Exception):
                    other.close()
        self.keeper = keeper
        self.context.clear_cookies()
        if self.origins and keeper is not None:
            session = self.context.new_cdp_session(keeper)
            try:
                for origin in sorted(self.origins):
                    session.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": STORED})
            finally:
                session.detach()
        elif self.origins:              # no tab to clear them through: a fresh context instead
            browser = self.context.browser
            self.context.close()
            self.__init__(browser)


@pytest.fixture(scope="session")
def tabs(browser):
    shared = Tabs(browser)
    yield shared
    shared.context.close()


@pytest.fixture
def page(tabs):
    page = tabs.open()
    yield page
    tabs.release(page)


def screenshot(page, name: str) -> Path:
    """Save a screenshot of the whole page under test-artifacts/screenshots/ and return its path.

    Streamlit scrolls inside its main block, so a full-page shot alone shows only
    the viewport: grow the viewport to the content first, then restore it.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    height = page.evaluate(
        "() => Math.max(...['stMain', 'stAppViewContainer', 'stSidebarContent', 'stSidebarUserContent']"
        ".map(id => document.querySelector(`[data-testid='${id}']`)?.scrollHeight || 0))")
    size = page.viewport_size
    page.mouse.move(0, 0)  # no tooltip from the last click in the picture
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height) + 40, 8000))})
    page.wait_for_timeout(500)  # let Plotly resize its charts
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path


# Streamlit's status widget says "Running..." (with the developer toolbar) or shows a running icon (the
# viewer toolbar of the hosted image) while the script runs; placeholders show skeletons until it draws them.
BUSY = ("() => { const w = document.querySelector('[data-testid=\"stStatusWidget\"]');"
        " const running = !!w && (/Running|Stop/.test(w.innerText)"
        " || !!w.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]'));"
        " return running || document.querySelector('[data-testid=\"stSkeleton\"]') !== null; }")


# True once the page has not been busy for IDLE_MS in a row (a script starts a moment after a click or a load).
IDLE_MS = 700
SETTLED = ("() => { const busy = (" + BUSY + ")(); const now = performance.now();"
           " if (busy) { window.__dpboIdleSince = undefined; return false; }"
           " if (window.__dpboIdleSince === undefined) { window.__dpboIdleSince = now; return false; }"
           f" return now - window.__dpboIdleSince > {IDLE_MS}; }}")


def wait_for_app(page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has finished running the script (no running indicator, no skeletons, for a moment)."""
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout_ms)
    page.evaluate("() => { window.__dpboIdleSince = undefined; }")
    page.wait_for_function(SETTLED, timeout=timeout_ms, polling=100)


DOCS_IMAGES = ROOT / "docs" / "images"
DOCS_IMAGE_WIDTH = 1000     # px; with a 256-colour palette a page stays well under 200 KB


def docs_image(page, route) -> Path | None:
    """With ``DPBO_DOCS_IMAGES=1``, the visible part of ``page`` as docs/images/<address>.png (small)."""
    if os.environ.get("DPBO_DOCS_IMAGES") != "1":
        return None
    from PIL import Image

    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    path = DOCS_IMAGES / f"{route.url_path}.png"
    page.mouse.move(0, 0)
    page.wait_for_timeout(500)
    raw = ARTIFACTS / f"docs-{route.url_path}.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(raw))
    image = Image.open(raw).convert("RGB")
    image = image.resize((DOCS_IMAGE_WIDTH, round(image.height * DOCS_IMAGE_WIDTH / image.width)), Image.LANCZOS)
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path


def main_text(page) -> str:
    """The text of the main area (not the sidebar)."""
    return page.locator("[data-testid='stMain']").inner_text()
