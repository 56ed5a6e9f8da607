"""The Paper reproduction page in Chromium (stored results, a small live run) and the paper presets' notes on the
Federated BO page and the Trade-off explorer; screenshots of each."""

from __future__ import annotations

import pytest

from tests.browser.conftest import docs_image, screenshot, wait_for_app
from ui.kit.routes import REPRODUCTION

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 600_000     # a guard against a hang, wide enough for a busy machine
CHART_TITLE = "() => [...document.querySelectorAll('.gtitle')].some(t => t.textContent.includes({text!r}))"


def test_the_reproduction_page_shows_the_stored_results_and_runs_a_small_one(page, app_url):
    page.goto(f"{app_url}/Paper_reproduction")
    wait_for_app(page)
    page.get_by_role("heading", name="DP-FTS-DE (Dai et al. 2021)").wait_for()
    page.wait_for_function(CHART_TITLE.format(text="100 runs"))
    page.locator("[data-testid='stTable']").get_by_text("reversed").first.wait_for()
    wait_for_app(page)
    assert page.locator("[data-testid='stTable']").count() == 2            # the papers' summary, the verdicts
    # Every figure of every paper, the checkpoints (both under collapsed sections) and the landmine investigation's
    # ablation table (the authors' metric switched on).
    assert page.locator("[data-testid='stDataFrame']").count() == 3
    page.get_by_text("Ablation: each deviation of ours switched to what the authors did").wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "paper_reproduction")

    page.get_by_text("Synthetic (Fig. 2a, 2c, 2d)").click()
    wait_for_app(page)
    page.wait_for_function(CHART_TITLE.format(text="Fig. 2d's lines"))
    assert "part=synthetic" in page.url
    screenshot(page, "paper_reproduction_synthetic")

    # A small run of the heterogeneous part (the cheapest: 6 settings x 2 runs of 50 agents), drawn live, then
    # judged.
    page.get_by_text("Heterogeneous agents (Fig. 7a, 7b)").click()
    wait_for_app(page)
    assert "part=heterogeneous" in page.url
    page.get_by_role("spinbutton", name="runs per setting").fill("2")
    page.keyboard.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("your run: 2 runs per setting").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)
    page.wait_for_function(CHART_TITLE.format(text="2 runs"))
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "paper_reproduction_small_run")


def test_the_paper_presets_say_what_the_reproduction_found(page, app_url):
    page.goto(f"{app_url}/Federated_BO?preset=fig2c")
    wait_for_app(page)
    page.get_by_text("Against the paper: Fig. 2c, 100 paired runs").wait_for()
    page.get_by_text("See the curves and every verdict on the Paper reproduction page").wait_for()
    wait_for_app(page)
    screenshot(page, "federated_bo_fig2c_note")

    page.goto(f"{app_url}/Tradeoff_explorer?preset=fig3a")
    wait_for_app(page)
    page.get_by_text("Against the paper: Fig. 3a, 100 paired runs").wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "tradeoff_fig3a_note")


def test_the_title_the_selector_and_the_summary_name_every_stored_paper(page, app_url):
    from engine.reproduce.stored_papers import stored_payloads
    from ui.reproduction.papers import PAPER_LABELS, PAPER_TITLES

    papers = [p for p in PAPER_TITLES if p in stored_payloads()]
    assert len(papers) == 4
    page.goto(f"{app_url}/Paper_reproduction")
    wait_for_app(page)
    title = page.locator("h1").first.inner_text()
    assert all(PAPER_TITLES[p] in title for p in papers), title
    sidebar = page.locator("[data-testid='stSidebar']")
    for paper in papers:
        sidebar.get_by_text(PAPER_LABELS[paper], exact=True).wait_for()
    summary = page.locator("[data-testid='stTable']").first.inner_text()
    assert all(PAPER_TITLES[p] in summary for p in papers), summary
    screenshot(page, "paper_reproduction_front")
    docs_image(page, REPRODUCTION)
    # One paper at a time: DP-HYPE's figures in the paper's order, DP-FTS-DE's parts gone.
    sidebar.get_by_text(PAPER_LABELS["dp-hype"], exact=True).click()
    # The DP-FTS-DE view's part selector leaves with the rerun's end (Streamlit keeps the last run's elements until
    # the new run has drawn its own): bounded waits for it to go and for DP-HYPE's fifth figure to come, then for
    # the page to settle, before anything is counted. Counted as soon as the click's rerun looked idle, a busy
    # machine's page had drawn only four of DP-HYPE's figures.
    page.get_by_text("part of the paper").wait_for(state="detached", timeout=60_000)
    page.get_by_role("heading", name="DP-HYPE, Fig. 5", exact=True).wait_for()
    wait_for_app(page)
    assert page.get_by_text("part of the paper").count() == 0
    headings = [h for h in page.locator("h3").all_inner_texts() if h.startswith("DP-HYPE, ")]
    assert headings[:5] == ["DP-HYPE, Fig. 2a", "DP-HYPE, Fig. 2b", "DP-HYPE, Fig. 3", "DP-HYPE, Fig. 4",
                            "DP-HYPE, Fig. 5"], headings
    screenshot(page, "paper_reproduction_dp_hype")
