"""Presenter mode on a 1280x720 projector: every step of both lessons is one screen.

Each step must fit without scrolling (the page's height at most the viewport's), start at the top (the
previous step's scroll position is not kept), draw its chart with classroom-sized text, and the arrow keys
must work right after the switch is turned on. A screenshot of every step is saved under
test-artifacts/screenshots/presenter-*.png.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, wait_for_app
from ui.kit.charts import PRESENTER_FONT

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
# The tallest scrolling area of the page (Streamlit scrolls inside its main view, not the document).
PAGE_HEIGHT = ("() => Math.max(document.documentElement.scrollHeight, ...['stMain', 'stAppViewContainer']"
               ".map(id => document.querySelector(`[data-testid='${id}']`)?.scrollHeight || 0))")
SCROLLED = ("() => Math.max(window.scrollY, ...['stMain', 'stAppViewContainer']"
            ".map(id => document.querySelector(`[data-testid='${id}']`)?.scrollTop || 0))")
SCROLL_DOWN = ("() => { window.scrollTo(0, 400); ['stMain', 'stAppViewContainer'].forEach(id => {"
               " const el = document.querySelector(`[data-testid='${id}']`); if (el) el.scrollTop = 400; }); }")
# Font sizes (px) of the chart's tick labels and legend entries.
CHART_FONTS = ("() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart'] .xtick text, "
               "[data-testid='stPlotlyChart'] .ytick text, [data-testid='stPlotlyChart'] .legendtext\")]"
               ".map(t => parseFloat(getComputedStyle(t).fontSize || t.style.fontSize))")
# Captions whose next element starts above the caption's last line (the element covers part of the text).
COVERED_CAPTIONS = ("() => [...document.querySelectorAll("
                    "\"[data-testid='stMain'] [data-testid='stCaptionContainer']\")]"
                    ".filter(c => { const box = c.closest(\"[data-testid='stElementContainer']\");"
                    " let next = box && box.nextElementSibling;"
                    " while (next && next.getBoundingClientRect().height === 0) next = next.nextElementSibling;"
                    " return !!next && next.getBoundingClientRect().top < c.getBoundingClientRect().bottom - 2; })"
                    ".map(c => c.innerText.slice(0, 60))")


# Font sizes (px) of every text inside the metrics' values and inside their delta chips.
METRIC_FONTS = ("() => Object.fromEntries(['stMetricValue', 'stMetricDelta'].map(id => [id, "
                "[...document.querySelectorAll(`[data-testid='stMain'] [data-testid='${id}']`)]"
                ".flatMap(el => [el, ...el.querySelectorAll('p, span, div')])"
                ".filter(el => el.innerText && el.innerText.trim())"
                ".map(el => parseFloat(getComputedStyle(el).fontSize))]))")


def metrics_outsize_their_deltas(page, name: str, step: int) -> None:
    """The metrics' values are the largest text of the step: 2.4rem, and above every delta chip beside them."""
    fonts = page.evaluate(METRIC_FONTS)
    values, deltas = fonts["stMetricValue"], fonts["stMetricDelta"]
    assert values and deltas, (name, step, fonts)
    assert min(values) >= 2.4 * 16 - 0.5 and min(values) > max(deltas), (name, step, fonts)


@pytest.fixture
def projector(tabs):
    page = tabs.open(viewport=PROJECTOR)
    yield page
    tabs.release(page)


def check_screen(page, name: str, step: int, *, chart: bool, also=None) -> None:
    """The step on screen fits 1280x720 from the top, with readable chart text; saves its screenshot."""
    page.get_by_text(f"Step {step} of", exact=False).first.wait_for()
    wait_for_app(page)
    if chart:
        page.locator("[data-testid='stPlotlyChart'] .main-svg").first.wait_for()
        page.wait_for_timeout(300)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.mouse.move(0, 0)
    page.screenshot(path=str(ARTIFACTS / f"presenter-{name}-step{step}.png"))
    assert page.locator("[data-testid='stException']").count() == 0
    height = page.evaluate(PAGE_HEIGHT)
    assert height <= PROJECTOR["height"], f"{name} step {step} is {height} px tall: it scrolls at 1280x720"
    assert page.evaluate(SCROLLED) == 0, f"{name} step {step} does not start at the top"
    assert page.evaluate(COVERED_CAPTIONS) == [], f"{name} step {step}: the next element covers a caption"
    if chart:
        fonts = page.evaluate(CHART_FONTS)
        assert fonts and min(fonts) >= PRESENTER_FONT - 2, (name, step, fonts)
    if also is not None:
        also(page, name, step)


def walk(page, name: str, steps: int, charts: set[int], also=None) -> None:
    """From step 1 (already on screen), → through every step, scrolled down before each key press; ``also``
    maps a step to one more check of its screen."""
    also = also or {}
    check_screen(page, name, 1, chart=1 in charts, also=also.get(1))
    for step in range(2, steps + 1):
        page.evaluate(SCROLL_DOWN)
        page.keyboard.press("ArrowRight")
        check_screen(page, name, step, chart=step in charts, also=also.get(step))


def switch_on(page) -> None:
    """Turn presenter mode on with a click, as a teacher would, and press → at once (no click elsewhere)."""
    page.get_by_text("Presenter mode").first.wait_for()
    wait_for_app(page)
    page.get_by_text("Presenter mode").first.click()
    page.get_by_text("Step 1 of", exact=False).first.wait_for()
    wait_for_app(page)


def test_the_teaching_view_fits_a_projector_step_by_step(projector, app_url):
    page = projector
    page.goto(f"{app_url}/Teaching_view")
    switch_on(page)
    walk(page, "teaching", 7, charts=set(range(1, 8)))
    page.keyboard.press("ArrowLeft")
    page.get_by_text("Step 6 of 7").first.wait_for()


def test_the_accountant_fits_a_projector_step_by_step(projector, app_url):
    page = projector
    page.goto(f"{app_url}/Privacy_accountant")
    switch_on(page)
    # The knobs wait in the collapsed sidebar; the caption says how to reach them.
    caption = page.get_by_text("T = 40 releases", exact=False).first.inner_text()
    assert "on the left" not in caption and "sidebar" in caption, caption
    # Step 2's ε values rendered at 22.4 px, below the delta chips beside them (a paragraph rule won).
    walk(page, "accountant", 6, charts={3}, also={2: metrics_outsize_their_deltas})
    # The inverse question's answer (a table under the form) still fits its screen.
    page.keyboard.press("ArrowLeft")
    page.get_by_text("Step 5 of 6").first.wait_for()
    wait_for_app(page)
    page.get_by_role("button", name="Solve", exact=True).click()
    page.get_by_text("noise multiplier z for ε = 5", exact=False).first.wait_for(timeout=90_000)
    check_screen(page, "accountant-solved", 5, chart=False)


def test_a_new_step_starts_at_the_top_even_when_the_page_is_longer_than_the_screen(projector, app_url):
    page = projector
    page.goto(f"{app_url}/Teaching_view")           # not in presenter mode: metrics and text above the chart
    page.get_by_text("Step 1 of 7").first.wait_for()
    wait_for_app(page)
    assert page.evaluate(PAGE_HEIGHT) > PROJECTOR["height"]
    page.evaluate(SCROLL_DOWN)
    assert page.evaluate(SCROLLED) > 0
    page.keyboard.press("ArrowRight")
    page.get_by_text("Step 2 of 7").first.wait_for()
    wait_for_app(page)
    assert page.evaluate(SCROLLED) == 0
