"""Browser: uploading the bundled FOCUS sample on the Retrospective page draws its charts without an error."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "focus_sample.csv"
UPLOADER = '[data-testid="stMain"] [data-testid="stFileUploader"]'
CHART = '[data-testid="stPlotlyChart"]'
EXCEPTION = '[data-testid="stException"]'
CHARTS_TIMEOUT_MS = 60_000


def test_uploading_the_focus_sample_draws_the_retrospective(page, app_url, wait_for_app):
    page.goto(f"{app_url}/retrospective")
    wait_for_app(page)
    expect(page.locator(EXCEPTION)).to_have_count(0)

    uploader = page.locator(UPLOADER).first
    expect(uploader, "the page at /retrospective has no file uploader in its main area").to_be_attached()
    uploader.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(SAMPLE)
    expect(uploader.get_by_test_id("stFileChipName")).to_have_text(SAMPLE.name)
    wait_for_app(page)

    # The upload finishes asynchronously, so wait for the rerun's charts rather than for one idle moment.
    expect(page.locator(CHART).first, "the Retrospective page shows no plotly chart after the upload").to_be_attached(
        timeout=CHARTS_TIMEOUT_MS)
    wait_for_app(page)
    for chart in page.locator(CHART).all():
        expect(chart.locator("svg.main-svg").first).to_be_attached()
    expect(page.locator(EXCEPTION)).to_have_count(0)
