"""Browser: the Retrospective's report downloads from the page on the bundled sample and opens offline, its title
shown and its charts drawn by the plotly.js it carries; printed on A4, no chart is cut across two pages."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

pytestmark = pytest.mark.browser

BUTTON = "Download the Retrospective report (HTML)"
EXCEPTION = '[data-testid="stException"]'
DOWNLOAD_TIMEOUT_MS = 180_000


def test_the_retrospective_report_downloads_and_opens_offline(page, app_url, wait_for_app, browser, tmp_path):
    page.goto(f"{app_url}/retrospective")
    wait_for_app(page)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    button = page.get_by_role("button", name=BUTTON)
    expect(button).to_be_visible()
    with page.expect_download(timeout=DOWNLOAD_TIMEOUT_MS) as download:
        button.click()
    path = tmp_path / "retrospective.html"
    download.value.save_as(path)
    assert download.value.suggested_filename.endswith(".html")
    text = path.read_text(encoding="utf-8")
    stamp = re.search(r"Generated (\d{4}-\d\d-\d\d \d\d:\d\d) UTC", text).group(1)
    generated = datetime.strptime(stamp, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - generated) < timedelta(minutes=10), f"stamped {stamp}: not the download time"
    assert "focus_sample.csv" in text

    context = browser.new_context(viewport={"width": 1280, "height": 1000}, offline=True)
    blocked: list[str] = []
    context.route(re.compile(r"^(?!file:).*"), lambda route: (blocked.append(route.request.url), route.abort()))
    try:
        offline = context.new_page()
        offline.goto(path.as_uri())
        expect(offline.locator("h1")).to_have_text("Retrospective report")
        expect(offline).to_have_title("Retrospective report")
        charts = offline.locator(".plotly-graph-div")
        assert charts.count() >= 2  # spend and waste; Plan vs actual too when a plan is chosen
        offline.wait_for_function("document.querySelectorAll('.plotly-graph-div .main-svg').length >= "
                                  "document.querySelectorAll('.plotly-graph-div').length")
        expect(charts.first.locator(".bars path, .js-line").first).to_be_attached()
        tiles = offline.locator(".tile")
        expect(tiles.filter(has_text="Cost").first).to_contain_text("$")
        assert not blocked, f"the report asked the network for {blocked[:3]}"

        # Print: markers at each chart's top and bottom must land on the same A4 page.
        count = offline.evaluate("""() => { const charts = [...document.querySelectorAll('figure.chart')];
            charts.forEach((chart, i) => {
                const top = document.createElement('div'); top.textContent = `CHARTTOP${i}X`;
                const end = document.createElement('div'); end.textContent = `CHARTEND${i}X`;
                chart.prepend(top); chart.append(end); });
            return charts.length; }""")
        offline.emulate_media(media="print")
        pdf = tmp_path / "retrospective.pdf"
        offline.pdf(path=str(pdf), prefer_css_page_size=True, print_background=True)
    finally:
        context.close()
    reader = PdfReader(pdf)
    width_mm, height_mm = (float(side) / 72 * 25.4 for side in reader.pages[0].mediabox[2:])
    assert abs(width_mm - 210) < 2 and abs(height_mm - 297) < 2, f"printed on {width_mm:.0f} × {height_mm:.0f} mm"
    pages = [p.extract_text() or "" for p in reader.pages]
    assert count >= 2
    for number in range(count):
        top = [i for i, text in enumerate(pages) if f"CHARTTOP{number}X" in text]
        end = [i for i, text in enumerate(pages) if f"CHARTEND{number}X" in text]
        assert top and top == end, f"chart {number + 1} starts on page {top} and ends on page {end}"
