"""The landmine data in Chromium when it is missing (issue 13, item 2).

Without the file, Run is off for that data set before anyone presses it, and the main area says in one or two
lines where the file goes and where to download it; the privacy preview stays. A first run's table build (item 1)
is tests/browser/test_table_build.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.browser.conftest import running_app, screenshot, wait_for_app

pytestmark = pytest.mark.browser
LANDMINE = "Federated_BO?dataset=landmine&iterations=15&runs=2"


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
