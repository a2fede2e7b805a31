"""Browser: the Compare page fills from the presets, compares two plans, presents them and downloads the report."""

import re
from html.parser import HTMLParser

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

CHART = '[data-testid="stPlotlyChart"]'
EXCEPTION = '[data-testid="stException"]'
METRIC_VALUE = '[data-testid="stMetricValue"]'


class _Links(HTMLParser):
    """Every src and href attribute of a document."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.targets += [value or "" for name, value in attrs if name in ("src", "href")]


def test_compare_two_presets_present_them_and_download_the_report(page, app_url, wait_for_app, tmp_path):
    page.goto(f"{app_url}/compare")
    wait_for_app(page)
    page.get_by_role("button", name="Add the bundled presets").click()
    wait_for_app(page)
    expect(page.get_by_text("Added 5 presets.")).to_be_visible()
    expect(page.get_by_text("Inputs that differ and headline outputs")).to_be_visible()
    charts = page.locator(CHART)
    expect(charts).to_have_count(3)
    for chart in charts.all():
        expect(chart.locator("svg.main-svg").first).to_be_attached()

    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Download the report (HTML, opens offline)").click()
    path = tmp_path / "report.html"
    download.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert "Default: 7B dense, 2T tokens on 512 H100" in text
    assert "DeepSeek-V3" in text
    links = _Links()
    links.feed(text)
    assert not [t for t in links.targets if re.match(r"(https?:)?//", t)], "the report loads something from the web"

    page.get_by_text("Presentation layout").click()
    wait_for_app(page)
    expect(page.get_by_role("button", name="Save")).to_have_count(0)
    values = page.locator(METRIC_VALUE)
    expect(values).to_have_count(12)  # six numbers for each of the two options
    font_px = float(values.first.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px"))
    assert font_px >= 40, f"presentation numbers are {font_px}px"
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_plan_uncertainty_tabs_draw_the_distribution_and_the_tornado(page, app_url, wait_for_app):
    page.goto(f"{app_url}/?method=tst&spot_share=0.2")
    wait_for_app(page)
    page.get_by_role("tab", name="Cost range").click()
    wait_for_app(page)
    page.get_by_role("tab", name="Tornado").click()
    wait_for_app(page)
    expect(page.get_by_text("Total cost: P10")).to_be_visible()
    expect(page.get_by_text("Which assumption moves total cost most")).to_be_visible()
    expect(page.get_by_text("10,000 draws, seed 0").first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
