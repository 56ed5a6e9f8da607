"""The landmine data in Chromium: missing (issue 13, item 2) and its first table build (item 1).

- Without the file, Run is off for that data set before anyone presses it,
  and the main area says in one or two lines where the file goes and where to
  download it; the privacy preview stays.
- With the file and an empty cache, pressing Run builds the objective table
  in the background: the main area shows the build's progress with the time
  left, the page stays usable, a second visitor asking for the same table sees
  the same build (not a new one), and the run starts by itself when the table
  is ready. One build of the first 12 fields' table: about 22 s of computing (priced 6 s + 1.8 s an agent).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.browser.conftest import main_text, running_app, screenshot, wait_for_app

pytestmark = pytest.mark.browser
LANDMINE = "Federated_BO?dataset=landmine&iterations=15&runs=2"
# The build's flow on the first 12 fields: a table of its own (about 22 s of computing, priced 6 s + 1.8 s an
# agent), long enough for a second visitor to arrive while it is under way.
BUILD = LANDMINE + "&agents=12"
BUILD_TIMEOUT_MS = 600_000   # a guard against a hang: the build is about 22 s of computing, longer on a busy machine


@pytest.fixture(scope="module")
def no_data(tmp_path_factory):
    """The dashboard with an empty data folder, at a short path of the same length under any test runner (the
    notice quotes it: pytest's tmp folders are longer on an xdist worker, /tmp/pytest-of-root/pytest-N/popen-gw0/)."""
    folder = tmp_path_factory.mktemp("no-data")
    data = Path(tempfile.mkdtemp(prefix="dpbo-nodata-")) / "data"
    data.mkdir()
    try:
        with running_app(folder, env=dict(os.environ, DPBO_DATA_DIR=str(data))) as server:
            yield server
    finally:
        shutil.rmtree(data.parent, ignore_errors=True)


def test_without_the_file_run_is_off_and_the_main_area_says_where_it_goes(no_data, page):
    page.goto(f"{no_data.url}/{LANDMINE}")
    page.get_by_role("heading", name="Federated Bayesian optimisation").wait_for()
    wait_for_app(page)
    notice = page.locator("[data-testid='stMain'] [data-testid='stAlert']", has_text="needs its data file")
    notice.wait_for()
    wait_for_app(page)
    text = notice.inner_text()
    assert str(no_data.env["DPBO_DATA_DIR"]) + "/landmine/LandmineData.mat" in text
    assert "http://www.ee.duke.edu/~lcarin/LandmineData.zip" in text
    lines = notice.locator("p").first.evaluate(
        "e => Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight))")
    assert lines <= 2, f"the notice takes {lines} lines"    # one or two lines, not fifteen
    assert page.get_by_role("button", name="Run", exact=True).is_disabled()
    assert page.get_by_text("Privacy before you run").count() == 1
    assert page.locator("[data-testid='stSidebar'] [data-testid='stAlert']").count() == 0
    screenshot(page, "landmine_missing")
    # The trade-off explorer's landmine preset says the same before its Run.
    page.goto(f"{no_data.url}/Tradeoff_explorer?preset=fig3a")
    wait_for_app(page)
    page.get_by_text("needs its data file").first.wait_for()
    assert page.get_by_role("button", name="Run sweep").is_disabled()
    screenshot(page, "landmine_missing_tradeoff")


def test_the_first_landmine_run_shows_the_table_build_and_a_second_visitor_joins_it(app_server, browser, data_dir):
    assert not list(app_server.cache_dir.glob("table-landmine-*.npz")), "the server's cache must start empty"
    first = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    first.goto(f"{app_server.url}/{BUILD}")
    first.get_by_role("heading", name="Federated Bayesian optimisation").wait_for()
    wait_for_app(first)
    first.get_by_role("button", name="Run", exact=True).click()

    progress = first.locator("[data-testid='stMain'] [data-testid='stProgress']", has_text="Building the landmine")
    progress.wait_for(timeout=BUILD_TIMEOUT_MS)
    first.get_by_text(re.compile(r"agents scored, about .* left")).first.wait_for(timeout=BUILD_TIMEOUT_MS)
    assert "The run starts by itself" in progress.inner_text()

    # A second visitor asks for the same table: it sees the build under way without pressing Run.
    second = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    second.goto(f"{app_server.url}/{BUILD}")
    joined = second.locator("[data-testid='stMain'] [data-testid='stProgress']", has_text="Building the landmine")
    joined.wait_for(timeout=BUILD_TIMEOUT_MS)
    assert "Press Run once it is ready" in joined.inner_text()
    assert len(list(app_server.cache_dir.glob("table-landmine-*.parts"))) == 1     # one build, not two

    # The page stays usable: a control answers while the build goes on.
    first.get_by_text("log scale").click()
    progress.wait_for(timeout=BUILD_TIMEOUT_MS)
    screenshot(first, "landmine_building")

    # The run starts by itself once the table is there, and finishes.
    first.get_by_text("Finished").first.wait_for(timeout=BUILD_TIMEOUT_MS)
    wait_for_app(first, BUILD_TIMEOUT_MS)
    assert "Building the landmine" not in main_text(first)
    assert len(list(app_server.cache_dir.glob("table-landmine-*.npz"))) == 1
    screenshot(first, "landmine_after_build")
    # The second visitor's page follows: the table is ready, Run is on.
    second.get_by_role("button", name="Run", exact=True).wait_for()
    second.wait_for_function("() => !document.body.innerText.includes('Building the landmine')",
                             timeout=BUILD_TIMEOUT_MS)
    assert second.get_by_role("button", name="Run", exact=True).is_enabled()
    first.context.close()
    second.context.close()
