"""A first run on a real task's table in Chromium (issue 13, item 1).

With an empty cache, pressing Run builds the objective table in the background: the main area shows the build's
progress with the time left, the page stays usable, a second visitor asking for the same table sees the same
build (not a new one), and the run starts by itself when the table is ready.

The flow is the same for every task with a table (ui/kit/table_build.py); it is driven here on the breast cancer
task with 3 agents, a build of a few seconds, on a dashboard whose builds wait after their second row until the
test opens a gate (tests/browser/gated_build.py). So the second visitor arrives while the build is under way on
any machine, however fast or busy, and no test waits through the landmine's 29 fields. The landmine table itself
is tested against scikit-learn in tests/test_landmine.py, its price in tests/test_limits_conservative.py.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.browser.conftest import _serve, main_text, screenshot, wait_for_app

pytestmark = pytest.mark.browser
BUILD = "Federated_BO?dataset=breast-cancer-lr&agents=3&iterations=10&runs=2"
TABLE = "table-breast-cancer-lr-*"
BUILD_TIMEOUT_MS = 600_000   # a guard against a hang: the build is a few seconds of computing once the gate opens


@pytest.fixture
def gated_app(tmp_path_factory):
    """The dashboard with an empty cache and table builds held by a gate (a file the test creates); yields
    (url, cache folder, gate)."""
    folder = tmp_path_factory.mktemp("gated")
    gate, cache = folder / "gate", folder / "cache"
    env = dict(os.environ, DPBO_CACHE_DIR=str(cache), DPBO_TEST_BUILD_GATE=str(gate))
    command = ["tests.browser.gated_build", "run", "app.py", "--server.headless=true",
               "--server.fileWatcherType=none"]
    for _, url in _serve(tmp_path_factory, command, env, "gated-build"):
        yield url, cache, gate


def test_a_first_run_shows_the_table_build_and_a_second_visitor_joins_it(gated_app, browser):
    url, cache, gate = gated_app
    assert not list(cache.glob(TABLE + ".npz")), "the server's cache must start empty"
    first = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    first.goto(f"{url}/{BUILD}")
    first.get_by_role("heading", name="Federated Bayesian optimisation").wait_for()
    wait_for_app(first)
    assert "agents=3" in first.url            # the link's agents, not the task's default
    first.get_by_role("button", name="Run", exact=True).click()

    progress = first.locator("[data-testid='stMain'] [data-testid='stProgress']", has_text="Building the")
    progress.wait_for(timeout=BUILD_TIMEOUT_MS)
    first.get_by_text(re.compile(r"2 of 3 agents scored, about .* left")).first.wait_for(timeout=BUILD_TIMEOUT_MS)
    assert "The run starts by itself" in progress.inner_text()

    # A second visitor asks for the same table: it sees the build under way without pressing Run.
    second = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    second.goto(f"{url}/{BUILD}")
    joined = second.locator("[data-testid='stMain'] [data-testid='stProgress']", has_text="Building the")
    joined.wait_for(timeout=BUILD_TIMEOUT_MS)
    assert "Press Run once it is ready" in joined.inner_text()
    assert len(list(cache.glob(TABLE + ".parts"))) == 1     # one build, not two

    # The page stays usable: a control answers while the build goes on.
    first.get_by_text("log scale").click()
    progress.wait_for(timeout=BUILD_TIMEOUT_MS)
    screenshot(first, "table_building")
    assert first.get_by_text("Finished").count() == 0 and not list(cache.glob(TABLE + ".npz"))

    # The gate opens: the build goes on, the run starts by itself once the table is there, and finishes.
    gate.touch()
    first.get_by_text("Finished").first.wait_for(timeout=BUILD_TIMEOUT_MS)
    wait_for_app(first, BUILD_TIMEOUT_MS)
    assert "Building the" not in main_text(first)
    assert len(list(cache.glob(TABLE + ".npz"))) == 1
    screenshot(first, "table_after_build")
    # The second visitor's page follows: the table is ready, Run is on.
    second.get_by_role("button", name="Run", exact=True).wait_for()
    second.wait_for_function("() => !document.body.innerText.includes('Building the')", timeout=BUILD_TIMEOUT_MS)
    assert second.get_by_role("button", name="Run", exact=True).is_enabled()
    first.context.close()
    second.context.close()
