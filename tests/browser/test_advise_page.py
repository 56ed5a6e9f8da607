"""The "Plan a deployment" page in Chromium: a small search from a link, its recommendation, tied settings and
sensitivity table drawn, the Flower app downloaded with the recommended q and z, a screenshot for the docs.

About 40 s at a light load: 8 agents, 5 iterations, in the page's own process."""

from __future__ import annotations

import tomllib
import zipfile

import pytest

from tests.browser.conftest import docs_image, main_text, screenshot, wait_for_app
from ui.kit.routes import PLAN

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 300_000
LINK = "agents=8&iterations=5&epsilon=4&executor=local"


def test_plan_a_deployment_recommends_a_setting_and_exports_it(page, app_url):
    page.goto(f"{app_url}/{PLAN.url_path}?{LINK}")
    wait_for_app(page)
    page.get_by_role("heading", name="Plan a deployment").wait_for()
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("If your task differs from what you described").wait_for(timeout=RUN_TIMEOUT_MS)
    page.get_by_role("heading", name="Recommended setting").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)
    assert page.locator("[data-testid='stException']").count() == 0
    text = main_text(page)
    assert "Settings the search cannot tell apart from the pick" in text and "Deploy it" in text
    path = screenshot(page, "plan_a_deployment")
    assert path.stat().st_size > 50_000
    docs_image(page, PLAN)

    download = page.get_by_role("button", name="Flower app (zip)")
    download.scroll_into_view_if_needed()
    with page.expect_download() as got:
        download.click()
    with zipfile.ZipFile(got.value.path()) as archive:
        run_config = tomllib.loads(archive.read("dpftsde_app/pyproject.toml").decode())["tool"]["flwr"]["app"]["config"]
    command = page.locator("[data-testid='stCode']").last.inner_text()
    assert f"--q {run_config['q']:g}" in command and f"--z {run_config['z']!r}" in command
    assert (run_config["agents"], run_config["iterations"], run_config["budget"]) == (8, 5, 4.0)
