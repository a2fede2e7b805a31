"""Browser: the Retrospective's "Plan the next run from this quarter" opens the Plan page with the measured values
and their provenance in the sidebar, and the page's link reproduces them in a fresh session."""

import re
from pathlib import Path

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


UPLOADER = '[data-testid="stMain"] [data-testid="stFileUploader"]'
SMALL_BILL = Path(__file__).resolve().parents[1] / "data" / "ingest" / "gcp_small.csv"  # $14.46, 9 GPU-hours
SAMPLE_PLAN = "Sample organisation: 13B dense, 1T tokens on 64 H100 (plan for the bundled quarter)"


def test_a_plan_far_from_the_bill_is_flagged_before_it_is_kept_and_can_be_removed(page, app_url, wait_for_app):
    """The sample 13B plan ($597k), saved in the store, against a $14.46 bill ($11.4 of GPU compute): keeping it
    asks first; kept anyway, the sentence says how far off it was, and the comparison can be removed."""
    page.goto(f"{app_url}/compare")
    wait_for_app(page)
    page.get_by_role("button", name="Add the bundled presets").click()
    wait_for_app(page)
    expect(page.get_by_text("presets.", exact=False).or_(page.get_by_text("Every preset is already saved."))
           ).to_be_visible(timeout=TIMEOUT_MS)

    page.goto(f"{app_url}/retrospective?retro.runs=(none)&retro.view=Plan+vs+actual")
    wait_for_app(page)
    page.get_by_text("Change data: samples, uploads, time zone, notes").click()
    uploader = page.locator(UPLOADER).first
    uploader.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(SMALL_BILL)
    expect(uploader.get_by_test_id("stFileChipName")).to_have_text(SMALL_BILL.name)
    wait_for_app(page)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Plan to compare with").click()
    page.get_by_role("option", name=f"Saved: {SAMPLE_PLAN}").click()
    wait_for_app(page)

    page.get_by_role("button", name="Keep this comparison").click()
    wait_for_app(page)
    confirm = page.locator(".st-key-retro-keep-confirm")
    expect(confirm).to_contain_text("Look before keeping this comparison", timeout=TIMEOUT_MS)
    expect(confirm).to_contain_text("The plan's cost ($597k) is 52,300× more than the actuals' ($11.4)")
    expect(page.get_by_text("Kept:", exact=False)).to_have_count(0)
    confirm.get_by_role("button", name="Keep it anyway").click()
    wait_for_app(page)
    expect(page.get_by_text("Kept:", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("Our last plan was off by", exact=False)).to_be_visible()
    expect(page.get_by_text("within", exact=False).filter(has_text="Our last")).to_have_count(0)

    page.get_by_text("The 1 comparison kept").click()
    wait_for_app(page)  # a click during the rerun the expander may start is lost
    page.get_by_role("button", name="Remove this comparison").click()
    wait_for_app(page)
    expect(page.get_by_text("No plan has been compared with its actuals yet", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS)
    expect(page.locator(EXCEPTION)).to_have_count(0)
