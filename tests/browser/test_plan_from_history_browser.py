"""Browser: the Retrospective's "Plan the next run from this quarter" opens the Plan page with the measured values
and their provenance in the sidebar, and the page's link reproduces them in a fresh session."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

EXCEPTION = '[data-testid="stException"]'
MEASURED = ".st-key-plan-measured"
TIMEOUT_MS = 60_000


def test_the_button_opens_the_plan_with_provenance_and_the_link_reproduces_it(browser, page, app_url, wait_for_app):
    # The bundled quarter: the FOCUS bill, the W&B runs (they count tokens; sacct does not) joined on project, and
    # the sample organisation's 13B plan.
    page.goto(f"{app_url}/retrospective?retro.runs=wandb_sample.csv&retro.join=project&retro.view=Plan+vs+actual")
    wait_for_app(page)
    button = page.get_by_role("button", name="Plan the next run from this quarter")
    expect(button).to_be_visible(timeout=TIMEOUT_MS)
    # the node-failure rate is thin (7 over about 511 node-days): applied only when ticked
    page.get_by_text("Apply Node failures per 1,000 node-days").click()
    wait_for_app(page)
    page.get_by_text("Carry last quarter's overrun into the next plan").click()  # the measured inputs alone
    wait_for_app(page)
    button.click()
    page.wait_for_url(re.compile(r"^[^?]*/\?.*measured\.mfu="), timeout=TIMEOUT_MS)  # the Plan page is /
    wait_for_app(page)
    block = page.locator(MEASURED)
    expect(block).to_contain_text("Measured from the imports of 2025-04-01 to 2025-06-30", timeout=TIMEOUT_MS)
    expect(block).to_contain_text(re.compile(r"MFU \d+(\.\d)? % — measured over \d+ jobs"))
    expect(block).to_contain_text("the throughput model predicts")
    expect(block).to_contain_text(re.compile(r"Node failures per 1,000 node-days .* interruptions over"))
    # the plan compared is pinned as the baseline
    expect(page.get_by_text("Sample organisation", exact=False).first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
    shown = block.inner_text()

    fresh = browser.new_page()
    try:
        fresh.goto(page.url)
        wait_for_app(fresh)
        again = fresh.locator(MEASURED)
        expect(again).to_contain_text("Measured from the imports of 2025-04-01 to 2025-06-30", timeout=TIMEOUT_MS)
        assert again.inner_text() == shown
        expect(fresh.locator(EXCEPTION)).to_have_count(0)
    finally:
        fresh.close()
