"""Browser: a real bill uploaded after the bundled sample comes without the sample's run export, plan and budget
(issue 34, item 3)."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
# Five rows of a real Azure EA actual-cost export (tests/data/uploads/README.md): September 2023, $5.89.
BILL = ROOT / "tests" / "data" / "uploads" / "EA_ActualCost_first5.csv"
UPLOADER = '[data-testid="stMain"] [data-testid="stFileUploader"]'
METRIC = '[data-testid="stMetric"]'
EXCEPTION = '[data-testid="stException"]'
MARKDOWN = '[data-testid="stMain"] [data-testid="stMarkdownContainer"]'
TIMEOUT_MS = 60_000


def test_a_real_bill_uploaded_after_the_sample_shows_no_sample_runs_plan_or_budget(page, app_url, wait_for_app):
    page.goto(f"{app_url}/retrospective")
    wait_for_app(page)
    data_line = page.locator(MARKDOWN).filter(has_text="· change below").first
    expect(data_line).to_contain_text("Bundled sample: focus_sample.csv + slurm_sample.txt")
    expect(data_line).to_contain_text("the sample's plan")
    expect(page.locator(METRIC).filter(has_text="Runs without a bill")).to_have_count(1)

    page.get_by_text("Change data: samples, uploads, time zone, notes").click()
    uploader = page.locator(UPLOADER).first
    uploader.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(BILL)
    expect(uploader.get_by_test_id("stFileChipName")).to_have_attribute("title", BILL.name)  # shown shortened
    wait_for_app(page)

    data_line = page.locator(MARKDOWN).filter(has_text="· change below").first
    expect(data_line).to_contain_text(f"Uploaded: {BILL.name} · no run export", timeout=TIMEOUT_MS)
    expect(data_line).to_contain_text("no plan")
    expect(data_line).to_contain_text("no budget")
    expect(data_line).not_to_contain_text("slurm_sample.txt")
    expect(page.locator(METRIC).filter(has_text="Cost").first.get_by_test_id("stMetricValue")).to_have_text("$5.89")
    expect(page.locator(METRIC).filter(has_text="Runs without a bill")).to_have_count(0)
    expect(page.get_by_text("No budget drawn for this view.")).to_be_visible()
    expect(page.get_by_text("Only 0 % of billed GPU-hours matched", exact=False)).to_have_count(0)

    page.get_by_role("tab", name="Plan vs actual").click()
    wait_for_app(page)
    expect(page.get_by_text("No plan chosen (the sample's plan went with your bill", exact=False)).to_be_visible()
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(0)  # no gap against the sample's plan
    expect(page.locator(EXCEPTION)).to_have_count(0)
