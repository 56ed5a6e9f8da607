"""The Privacy audit page in Chromium (audit the server, then catch a negative control, many trials and one run;
audit a built-in Flower strategy, then catch the broken one) and the audited-ε panel of the Federated BO page;
screenshots of each."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, docs_image, main_text, screenshot, wait_for_app
from ui.kit.routes import AUDIT

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 120_000
# The ROC chart is drawn when its attack curve (a line of many points) is on it.
ROC_DRAWN = ("() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
             ".some(el => el.innerText.includes('ROC of the attack') && el.querySelectorAll('.scatterlayer .trace')"
             ".length >= 3)")


def run_audit(page) -> None:
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function(ROC_DRAWN, timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)


def test_audit_page_shows_the_attack_and_catches_the_negative_control(page, app_url):
    # One release, 100,000 trials: about half a second of attack.
    page.goto(f"{app_url}/Privacy_audit?trials=100000")
    wait_for_app(page)
    page.get_by_role("heading", name="Privacy audit: does the claimed ε hold?").wait_for()
    run_audit(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("Consistent: audited lower bound").count() == 1
    for title in ("The attack's score in both worlds", "Claimed ε against what the attack proves"):
        assert page.locator("[data-testid='stPlotlyChart']").filter(has_text=title).count() == 1
    # The controls still show the audited settings after the run (the claim is PLD's, the page's default).
    assert "PLD" in page.locator("[data-testid='stSelectbox']").filter(has_text="accountant of the claim").inner_html()
    path = screenshot(page, "privacy_audit")
    assert path.stat().st_size > 50_000
    docs_image(page, AUDIT)

    page.goto(f"{app_url}/Privacy_audit?trials=100000&control=half-noise")
    wait_for_app(page)
    control = page.locator("[data-testid='stSelectbox']").filter(has_text="Negative control")
    assert "half the noise" in control.inner_html()
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("VIOLATION: audited lower bound").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)
    screenshot(page, "privacy_audit_negative_control")

    # One run of two releases with 1,000 canaries, its noise reused across releases: caught by the one-run audit.
    page.goto(f"{app_url}/Privacy_audit?mode=one-run&canaries=1000&steps=2&z=2&control=reused-noise")
    wait_for_app(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("VIOLATION: one-run lower bound").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)
    for title in ("The canaries' scores", "The one-run bound against the number of canaries"):
        assert page.locator("[data-testid='stPlotlyChart']").filter(has_text=title).count() == 1
    screenshot(page, "privacy_audit_one_run_reused_noise")


def test_audit_page_audits_the_built_in_flower_strategies(page, app_url):
    pytest.importorskip("flwr")
    # Flower's DP wrapper, one release, 2,000 trials: a few seconds inside Flower's aggregate_train.
    page.goto(f"{app_url}/Privacy_audit?mechanism=flower&strategy=flower-dp-fixed&trials=2000&q=0.5")
    wait_for_app(page)
    page.get_by_text("Claim: Flower's own RDP accountant").wait_for()
    assert page.get_by_text("Negative control: break the mechanism").count() == 0
    run_audit(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("Consistent: audited lower bound").count() == 1
    assert page.get_by_text("Flower: Flower's DP wrapper (server-side fixed clipping) around FedAvg").count() >= 1
    page.mouse.move(0, 0)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "privacy_audit_flower_1400x1000.png"))    # the viewport as a visitor sees it
    assert screenshot(page, "privacy_audit_flower").stat().st_size > 50_000

    page.goto(f"{app_url}/Privacy_audit?mechanism=flower&strategy=broken-clip-after-mean&trials=2000&q=0.5")
    wait_for_app(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("VIOLATION: audited lower bound").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page, RUN_TIMEOUT_MS)
    screenshot(page, "privacy_audit_flower_broken")


def _verdict(page, sentence: str) -> None:
    """Wait for the attack's verdict; if it does not come, fail with what the page shows instead."""
    try:
        page.get_by_text(sentence).wait_for(timeout=RUN_TIMEOUT_MS)
    except Exception as err:  # noqa: BLE001 - Playwright's time-out: say what was there
        screenshot(page, "privacy_audit_participant_no_verdict")
        raise AssertionError(f"no {sentence!r} within {RUN_TIMEOUT_MS} ms; the page shows: {main_text(page)}") from err


def test_audit_page_runs_a_participants_attack_on_a_flower_app(page, app_url):
    pytest.importorskip("flwr")
    # The app as it was (noise from the public seed) with 3 releases: the attack explains every release; the
    # product's app: it explains none. Each attack plays a 5-agent app in a second or two.
    page.goto(f"{app_url}/Privacy_audit?mechanism=flower&participant=dp-fts-de-public-seed&steps=3&q=0.5")
    wait_for_app(page)
    page.get_by_text("A participant's attack").click()
    page.get_by_role("button", name="Attack", exact=True).click()
    _verdict(page, "The participant regenerated the noise")
    wait_for_app(page, RUN_TIMEOUT_MS)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("3 of 3").count() == 1
    page.mouse.move(0, 0)
    screenshot(page, "privacy_audit_participant_broken")
    page.goto(f"{app_url}/Privacy_audit?mechanism=flower&participant=dp-fts-de&steps=3&q=0.5")
    wait_for_app(page)
    page.get_by_text("A participant's attack").click()
    page.get_by_role("button", name="Attack", exact=True).click()
    _verdict(page, "The participant could not regenerate the noise")
    wait_for_app(page, RUN_TIMEOUT_MS)
    assert page.get_by_text("0 of 3").count() == 1
    screenshot(page, "privacy_audit_participant_fixed")


def test_federated_bo_run_offers_its_audited_epsilon(page, app_url):
    page.goto(f"{app_url}/Federated_BO")
    wait_for_app(page)
    page.get_by_role("heading", name="Federated Bayesian optimisation").wait_for()
    page.get_by_role("button", name="Run", exact=True).click()
    audit = page.get_by_role("button", name="Audit this ε")
    audit.wait_for(timeout=RUN_TIMEOUT_MS)   # offered after the run, never run with it
    wait_for_app(page, RUN_TIMEOUT_MS)
    assert page.get_by_text("Audited: DP-FTS-DE").count() == 0
    audit.click()
    page.get_by_text("See the attack on the Privacy audit page").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stPlotlyChart']").filter(has_text="Audited: DP-FTS-DE's server").count() == 1
    screenshot(page, "federated_bo_audited")
