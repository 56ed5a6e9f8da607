"""The trade-off explorer in Chromium: run a small sweep and see its frontier drawn."""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from tests.browser.conftest import _serve, docs_image, main_text, screenshot, wait_for_app
from ui.kit.routes import TRADEOFF

# A sweep that runs in a few seconds: q x z on 30 agents, 15 iterations, 3 runs, TS as the reference.
TINY = "algorithm = dp-fts-de\ndataset = synthetic\nagents = 30\niterations = 15\nfeatures = 20\nn_init = 3"


@pytest.mark.browser
def test_a_small_sweep_draws_its_frontier(app_url, page):
    query = urlencode({"base": TINY, "runs": 3, "executor": "local", "v1": "0.1, 0.25, 0.5", "v2": "1, 2"})
    page.goto(f"{app_url}/Tradeoff_explorer?{query}")
    page.get_by_role("button", name="Run sweep").wait_for()
    page.get_by_text("6 settings + 1 reference").wait_for()
    wait_for_app(page)
    screenshot(page, "tradeoff_explorer_before")
    page.get_by_role("button", name="Run sweep").click()
    page.wait_for_selector("[data-testid='stPlotlyChart'] .legendtext >> text=Pareto-optimal settings",
                           timeout=120_000)
    wait_for_app(page)
    frontier = page.locator("[data-testid='stPlotlyChart']").first
    # Streamlit scrolls inside its own container, so show the results in a tall window.
    page.set_viewport_size({"width": 1400, "height": 2100})
    page.get_by_text("Privacy loss against utility").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    screenshot(page, "tradeoff_explorer")
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.get_by_text("Privacy loss against utility").scroll_into_view_if_needed()
    docs_image(page, TRADEOFF)
    page.set_viewport_size({"width": 1400, "height": 2100})
    # One marker per private setting on the series lines (6) plus the ringed Pareto points.
    points = frontier.locator(".scatterlayer .trace .points path")
    assert points.count() >= 6
    legend = frontier.locator(".legendtext").all_text_contents()
    assert any("TS" in text for text in legend) and any(text.startswith("z=") for text in legend)
    assert page.locator("[data-testid='stPlotlyChart']").count() == 2      # frontier + heatmap
    assert page.get_by_text("Download CSV").count() == 1
    assert page.locator("a[href*='Federated_BO?']").count() == 1
    # Clicking a point opens that setting: the link now names it and carries its q and z.
    index = page.evaluate("() => document.querySelector('.js-plotly-plot').data.findIndex(t => t.name === 'z=2')")
    frontier.locator(".scatterlayer .trace").nth(index).locator(".points path").nth(1).click(force=True)
    # While the rerun redraws, the old link may still stand beside the new one (both name the setting).
    link = page.locator("a[href*='Federated_BO?']", has_text="q=0.25, z=2").first
    link.wait_for(timeout=60_000)
    query = parse_qs(urlparse(link.get_attribute("href")).query)
    # The link lists only values that differ from the page's defaults (q = 0.25 is one).
    assert query.get("q", ["0.25"]) == ["0.25"] and query["z"] == ["2"] and query["agents"] == ["30"]


# The page's default sweep (7 cells x 60 runs of federated BO) on joblib's two worker processes: a minute or two
# of computing here. The waits below are guards against a hang, wide enough for a busy machine.
SWEEP_GUARD_MS = 600_000


@pytest.mark.browser
def test_the_default_sweep_draws_its_chart_on_the_first_press(app_url, page):
    """The first press draws the frontier. Whether all 7 cells finish within the page's time limit (wall-clock
    time, so a matter of the machine's load) is measured by benchmarks/bench_tradeoff_defaults.py, not here: on a
    machine too busy for that, the sweep stops at the limit and the cells that finished are drawn, with the
    sentence saying so."""
    page.goto(f"{app_url}/Tradeoff_explorer")
    page.get_by_text("6 settings + 1 reference = 7 cells x 60 runs").wait_for()
    wait_for_app(page)
    page.get_by_role("button", name="Run sweep").click()
    page.wait_for_selector("[data-testid='stPlotlyChart'] .legendtext >> text=Pareto-optimal settings",
                           timeout=SWEEP_GUARD_MS)
    wait_for_app(page)
    text = main_text(page)
    stopped = re.search(r"The sweep was stopped: (\d+) of its 7 cells finished", text)
    if stopped is None:
        assert page.get_by_text("Done: 7 cells, 420 rows", exact=False).count() == 1, text
        assert "time limit" not in text, text
        assert page.locator("[data-testid='stPlotlyChart']").count() == 2      # frontier + heatmap
    else:
        assert "time limit" in text and int(stopped.group(1)) >= 1, text
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "tradeoff_explorer_default_sweep")



# The dashboard with a time limit of LIMIT_SECONDS (a run is stopped after twice that) and sweeps whose third cell
# computes until that limit stops it (tests/browser/slow_sweep.py); the other cells are the page's own.
LIMIT_SECONDS = 10


@pytest.fixture(scope="module")
def limited_app(tmp_path_factory):
    env = dict(os.environ, DPBO_MAX_SECONDS=str(LIMIT_SECONDS), DPBO_CACHE_DIR=str(tmp_path_factory.mktemp("cache")))
    command = ["tests.browser.slow_sweep", "run", "app.py", "--server.headless=true"]
    for _, url in _serve(tmp_path_factory, command, env, "limited"):
        yield url


@pytest.mark.browser
def test_a_sweep_stopped_by_its_time_limit_draws_the_cells_that_finished(limited_app, page):
    query = urlencode({"base": TINY, "runs": 3, "executor": "local", "v1": "0.1, 0.25, 0.5", "v2": "1, 2"})
    page.goto(f"{limited_app}/Tradeoff_explorer?{query}")
    page.get_by_text("6 settings + 1 reference").wait_for()
    wait_for_app(page)
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_text("of its 7 cells finished", exact=False).first.wait_for(timeout=SWEEP_GUARD_MS)
    wait_for_app(page)
    text = main_text(page)
    assert "time limit" in text, text
    done = int(re.search(r"The sweep was stopped: (\d+) of its 7 cells finished", text).group(1))
    assert done == 2, text                  # the third cell met the limit; the two before it are drawn
    chart = page.locator("[data-testid='stPlotlyChart']").first
    chart.wait_for()
    assert chart.locator(".scatterlayer .trace .points path").count() >= 1
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "tradeoff_explorer_stopped_sweep")
