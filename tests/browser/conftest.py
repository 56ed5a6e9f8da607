"""A running dashboard on a free localhost port and Debian's Chromium driven by Playwright.

Skipped with a reason when /usr/bin/chromium or Playwright is missing; CI
installs both. Screenshots go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import types
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


def image_config(dockerfile: Path = ROOT / "Dockerfile") -> tuple[dict[str, str], list[str]]:
    """The Docker image's environment (its ENV lines) and command (its CMD), read from the Dockerfile.

    Hosted-mode tests run exactly this command with exactly this environment (only the address, the port and
    the two folders of this machine differ), so the image's recipe is what they test.
    """
    text = dockerfile.read_text().replace("\\\n", " ")
    env, command = {}, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("ENV "):
            for item in shlex.split(line[4:]):
                name, _, value = item.partition("=")
                env[name] = value
        elif line.startswith("CMD "):
            command = json.loads(line[4:])
    if command is None:
        raise ValueError("the Dockerfile has no CMD")
    return env, command


def start_server(tmp_path_factory, command: list[str], env: dict[str, str], name: str):
    """Run ``command`` (a ``streamlit run`` line) on a free loopback port; returns (process, url, log)."""
    port = _free_port()
    options = {"--server.address": "127.0.0.1", "--server.port": str(port)}
    argv = [sys.executable, "-m"] + [part for part in command
                                     if part.split("=", 1)[0] not in options] + [f"{k}={v}" for k, v in options.items()]
    log = open(tmp_path_factory.mktemp(name) / "streamlit.log", "w")
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return proc, url, log
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            stop_server(proc, log)
            pytest.fail(f"The dashboard ({name}) did not start; see the streamlit log in the pytest tmp folder.")
        time.sleep(0.5)


def stop_server(proc, log) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def hosted(tmp_path_factory):
    """The Docker image's command with the image's environment (hosting mode), on loopback.

    Yields a namespace with ``url``, ``pid`` and the ``cache`` folder.
    """
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    image_env, command = image_config()
    assert image_env.get("DPBO_HOSTED") == "1" and command[:3] == ["streamlit", "run", "app.py"]
    cache = tmp_path_factory.mktemp("hosted-cache")
    # Only this machine's folders replace the image's (/home/app/... does not exist here).
    env = dict(os.environ, **dict(image_env, DPBO_CACHE_DIR=str(cache),
                                  DPBO_DATA_DIR=os.environ.get("DPBO_DATA_DIR", image_env["DPBO_DATA_DIR"])))
    proc, url, log = start_server(tmp_path_factory, command, env, "hosted")
    try:
        yield types.SimpleNamespace(url=url, pid=proc.pid, cache=cache, env=env)
    finally:
        stop_server(proc, log)


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


# Streamlit's status widget says "Running..." (with the developer toolbar) or shows a running icon (the
# viewer toolbar of the hosted image) while the script runs; placeholders show skeletons until it draws them.
BUSY = ("() => { const w = document.querySelector('[data-testid=\"stStatusWidget\"]');"
        " const running = !!w && (w.innerText.includes('Running')"
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
