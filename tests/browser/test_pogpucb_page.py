"""The PO-GP-UCB page in Chromium: a short comparison over r, live curves, screenshot."""

from __future__ import annotations

import pytest

from tests.browser.conftest import docs_image, screenshot, wait_for_app
from ui.kit.routes import POGPUCB

pytestmark = pytest.mark.browser

# Three values of r, 4 runs of 30 iterations each (+ the baseline): a few seconds of engine time.
SHORT = "runs=4&iterations=30&compare=r&values=3,10,20"
RUN_TIMEOUT_MS = 120_000
# The regret chart is drawn when its legend names the non-private baseline.
CURVES_DRAWN = ("() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
                ".some(el => el.innerText.includes('non-private') && el.querySelectorAll('.scatterlayer .trace')"
                ".length >= 4)")


def test_pogpucb_page_runs_and_draws_regret_curves(page, app_url):
    page.goto(f"{app_url}/PO_GP_UCB?{SHORT}")
    wait_for_app(page)
    page.get_by_role("heading", name="PO-GP-UCB: private outsourced Bayesian optimisation").wait_for()
    page.get_by_text("largest admissible r").first.wait_for(timeout=RUN_TIMEOUT_MS)
    # The branch indicator names both outcomes for r = 3, 10 (preserved) and r = 20 (lifted) at exp(1.1).
    page.get_by_text("σ_min ≥ ω").first.wait_for()
    page.get_by_text("σ_min < ω").first.wait_for()
    assert not page.evaluate(CURVES_DRAWN)

    screenshot(page, "po_gp_ucb_before")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function(CURVES_DRAWN, timeout=RUN_TIMEOUT_MS)
    page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)
    assert page.locator("[data-testid='stException']").count() == 0
    path = screenshot(page, "po_gp_ucb")
    assert path.stat().st_size > 50_000
    docs_image(page, POGPUCB)
