"""A running dashboard on a free localhost port and Debian's Chromium driven by Playwright.

Skipped with a reason when /usr/bin/chromium or Playwright is missing; CI
installs both. Screenshots go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("DPBO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """Start ``streamlit run app.py`` on a free port and yield its base URL."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    port = _free_port()
    log = open(tmp_path_factory.mktemp("streamlit") / "streamlit.log", "w")
    env = dict(os.environ, DPBO_CACHE_DIR=str(tmp_path_factory.mktemp("app-cache")))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
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
                pytest.fail("The dashboard did not start; see the streamlit log in the pytest tmp folder.")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


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


def wait_for_app(page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has finished running the script (no running indicator)."""
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout_ms)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !document.querySelector('[data-testid=\"stStatusWidget\"]').innerText.includes('Running')",
        timeout=timeout_ms)
