"""The DP-HYPE page in Chromium: run the defaults, see the vote histograms drawn, screenshot."""

from __future__ import annotations

import tomllib
import zipfile

import pytest

from tests.browser.conftest import docs_image, screenshot, wait_for_app
from ui.kit.routes import HYPE

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 180_000
# The noisy-vote histogram is drawn when its winner marker (a star with its label) is on the chart.
WINNER_DRAWN = ("() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
                ".some(el => el.innerText.includes('winner #') && el.querySelectorAll('.bars path').length > 10)")
CURVE_DRAWN = ("() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
               ".some(el => el.innerText.includes('Theorem V.1 lower bound'))")


def test_hype_page_runs_defaults_and_draws_vote_histograms(page, app_url):
    page.goto(f"{app_url}/DP_HYPE")
    wait_for_app(page)
    page.get_by_role("heading", name="DP-HYPE: private hyperparameter voting").wait_for()
    assert not page.evaluate(WINNER_DRAWN)

    screenshot(page, "dp_hype_before")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function(WINNER_DRAWN, timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(CURVE_DRAWN, timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("good candidate chosen").count() >= 1
    path = screenshot(page, "dp_hype")
    assert path.stat().st_size > 50_000
    docs_image(page, HYPE)

    # The run's settings as a Flower app: a zip whose run config holds them.
    export = page.get_by_role("button", name="Export as a Flower app")
    export.scroll_into_view_if_needed()
    screenshot(page, "dp_hype_flower_export")
    with page.expect_download() as download:
        export.click()
    with zipfile.ZipFile(download.value.path()) as archive:
        pyproject = tomllib.loads(archive.read("dphype_app/pyproject.toml").decode())
    run_config = pyproject["tool"]["flwr"]["app"]["config"]
    assert (run_config["clients"], run_config["k"]) == (250, 5) and run_config["sigma"] > 0
