"""Browser: uploading the bundled FOCUS sample on the Retrospective page draws its charts without an error."""

from pathlib import Path

import pytest
from cut_off import CUT_OFF_TILES
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


GCP = SAMPLE.with_name("gcp_sample.csv")
METRIC = '[data-testid="stMetric"]'


def _expected_gcp_tile() -> str:
    """The GCP sample's $/GPU-hour with its commitment fees spread over the reserved GPU-hours they cover."""
    from dashboard.format import usd_sig
    from dashboard.ingest import import_path
    from dashboard.query import tables
    from dashboard.retro.amortise import amortise_commitments
    from dashboard.retro.units import unit_costs

    return usd_sig(unit_costs(amortise_commitments(tables.table_of(import_path(GCP)[0]))[0]).usd_per_gpu_hour)


def test_the_gcp_sample_reads_its_amortised_price_per_gpu_hour(page, app_url, wait_for_app):
    page.goto(f"{app_url}/retrospective")
    wait_for_app(page)
    page.get_by_text("Change data: samples, uploads, time zone, notes").click()
    uploader = page.locator(UPLOADER).first
    uploader.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(GCP)
    expect(uploader.get_by_test_id("stFileChipName")).to_have_text(GCP.name)
    wait_for_app(page)
    tile = page.locator(METRIC).filter(has_text="$ per GPU-hour")
    expect(tile.get_by_test_id("stMetricLabel")).to_have_text("$ per GPU-hour")
    expect(tile.get_by_test_id("stMetricDelta")).to_have_text("commitments amortised", timeout=CHARTS_TIMEOUT_MS)
    expected = _expected_gcp_tile()
    assert expected != "$1.18"  # the fees no longer sit outside the GPU-hours
    expect(tile.get_by_test_id("stMetricValue")).to_have_text(expected)
    expect(page.get_by_text("Commitments amortised here", exact=False)).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_no_tile_label_or_value_is_cut_off(sized_page, app_url, wait_for_app):
    width, page = sized_page
    page.goto(f"{app_url}/retrospective")
    wait_for_app(page)
    expect(page.locator(METRIC).first).to_be_attached()
    assert page.locator(METRIC).count() >= 6
    assert page.evaluate(CUT_OFF_TILES) == [], f"Retrospective tiles cut off at {width} px"
    expect(page.locator(EXCEPTION)).to_have_count(0)


TABS = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
# Buttons, labels, tiles and pills of the main area whose text is wider than their box, or reaches past the column
# or the main area they sit in (the tab bar scrolls by design, and a select box shows a long choice with "…").
CUT_CONTROLS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const edge = main.getBoundingClientRect().right;
  const cut = [];
  for (const el of main.querySelectorAll('button, label, [data-testid="stWidgetLabel"] p, [data-testid="stMetric"] p,'
                                         + ' [data-testid="stMetricValue"] div')) {
    const text = (el.innerText || '').trim();
    if (!text || el.closest('[data-testid="stTabs"] [role="tablist"]')) continue;
    const box = el.getBoundingClientRect();
    const column = el.closest('[data-testid="stColumn"]');
    const right = column ? Math.min(edge, column.getBoundingClientRect().right) : edge;
    if (el.scrollWidth > el.clientWidth + 1 || box.right > right + 1) cut.push(text);
  }
  return cut;
}"""


def test_no_control_or_tile_of_any_tab_is_cut_at_800_px(sized_page, app_url, wait_for_app):
    width, page = sized_page
    for tab in TABS:
        page.goto(f"{app_url}/retrospective?retro.view={tab.replace(' ', '+')}")
        wait_for_app(page)
        expect(page.locator(METRIC).first).to_be_attached()
        assert page.evaluate(CUT_CONTROLS) == [], f"controls of {tab} cut at {width} px"
        expect(page.locator(EXCEPTION)).to_have_count(0)
