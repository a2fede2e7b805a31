"""Browser: the Compare page fills from the presets, compares two plans, presents them and downloads the report."""

import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

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


LONG_PRESETS = [
    "DeepSeek-V3: 671B MoE (37B active), 14.8T tokens on 2,048 H800",
    "Llama 3.1 405B: 15.6T tokens on 16,384 H100 (final run only)",
    "Sample organisation: 13B dense, 1T tokens on 64 H100 (plan for the bundled quarter)",
    "TST 10B-A1B MoE: 1.05T baseline tokens on 64 B200",
]
TWO_PRESETS = ["Default: 7B dense, 2T tokens on 512 H100", LONG_PRESETS[0]]
BLACKISH = 24  # an rgb fill whose every channel is below this reads as black (streamlit's placeholders are #0000xx)


def _link(app_url: str, names: list[str], **extra: str) -> str:
    return f"{app_url}/compare?" + urlencode([("compare.selected", name) for name in names] + list(extra.items()))


def _with_presets(page, app_url, wait_for_app):
    page.goto(f"{app_url}/compare")
    wait_for_app(page)
    button = page.get_by_role("button", name="Add the bundled presets")
    button.click()
    wait_for_app(page)
    expect(page.get_by_text("presets.", exact=False).or_(page.get_by_text("Every preset is already saved."))
           ).to_be_visible()


def test_compare_two_presets_present_them_and_download_the_report(page, app_url, wait_for_app, tmp_path):
    _with_presets(page, app_url, wait_for_app)
    page.goto(_link(app_url, TWO_PRESETS))
    wait_for_app(page)
    expect(page.get_by_text("Headline outputs")).to_be_visible()
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
    stamp = re.search(r"Generated (\d{4}-\d\d-\d\d \d\d:\d\d) UTC", text).group(1)
    generated = datetime.strptime(stamp, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - generated) < timedelta(minutes=10), f"stamped {stamp}: not the download time"
    links = _Links()
    links.feed(text)
    assert not [t for t in links.targets if re.match(r"(https?:)?//", t)], "the report loads something from the web"

    page.get_by_text("Presentation layout", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_role("button", name="Save")).to_have_count(0)
    values = page.locator(METRIC_VALUE)
    expect(values).to_have_count(12)  # six numbers for each of the two options
    font_px = float(values.first.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px"))
    assert font_px >= 40, f"presentation numbers are {font_px}px"
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_the_address_carries_the_selection_its_order_and_the_layout(page, app_url, wait_for_app):
    _with_presets(page, app_url, wait_for_app)
    page.goto(_link(app_url, [LONG_PRESETS[1], LONG_PRESETS[0]]))
    wait_for_app(page)
    page.get_by_text("Presentation layout", exact=True).click()
    wait_for_app(page)
    query = parse_qs(urlsplit(page.url).query)
    assert query["compare.selected"] == [LONG_PRESETS[1], LONG_PRESETS[0]]
    assert query["compare.presentation"] == ["true"]
    page.reload()
    wait_for_app(page)
    headers = page.locator(".cmp-head")
    expect(headers).to_have_count(2)
    assert [h.get_attribute("title") for h in headers.all()] == [LONG_PRESETS[1], LONG_PRESETS[0]]


def test_the_total_cost_row_lines_up_for_four_long_names(page, app_url, wait_for_app):
    _with_presets(page, app_url, wait_for_app)
    page.goto(_link(app_url, LONG_PRESETS, **{"compare.presentation": "true"}))
    wait_for_app(page)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    headers = page.locator(".cmp-head")
    expect(headers).to_have_count(4)
    assert [h.get_attribute("title") for h in headers.all()] == LONG_PRESETS  # the full name on hover
    for header in headers.all():
        name = header.locator(".cmp-name")
        assert name.evaluate("e => e.scrollWidth > e.clientWidth"), "a long name is cut with an ellipsis"
    totals = page.locator('[data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=re.compile(r"^Total cost$")))
    expect(totals).to_have_count(4)
    boxes = [box.bounding_box() for box in totals.all()]
    tops = [box["y"] for box in boxes]
    assert max(tops) - min(tops) <= 2, f"Total cost rows at {tops}"
    header_boxes = [h.bounding_box() for h in headers.all()]
    assert max(b["height"] for b in header_boxes) - min(b["height"] for b in header_boxes) <= 2
    expect(page.get_by_text("cheapest", exact=True)).to_have_count(1)


def _open_offline(browser, path):
    """The report in a fresh context where every request that is not the file itself fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, offline=True)
    blocked = []
    context.route(re.compile(r"^(?!file:).*"), lambda route: (blocked.append(route.request.url), route.abort()))
    offline = context.new_page()
    offline.goto(path.as_uri())
    offline.wait_for_function("document.querySelectorAll('.plotly-graph-div .main-svg').length >= "
                              "document.querySelectorAll('.plotly-graph-div').length")
    return context, offline, blocked


def _fills(page) -> list[str]:
    return page.evaluate("""() => [...document.querySelectorAll(
        '.plotly-graph-div .bars path, .plotly-graph-div .points path, .plotly-graph-div path.js-fill, '
        + '.plotly-graph-div .legendpoints path, .plotly-graph-div .js-line')]
        .map(e => getComputedStyle(e).fill !== 'none' ? getComputedStyle(e).fill : getComputedStyle(e).stroke)
        .filter(c => c && c !== 'none')""")


def _rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(float(part)) for part in re.findall(r"[\d.]+", colour)[:3])


def test_the_downloaded_report_opens_offline_in_colour_and_prints_whole_charts(page, app_url, wait_for_app,
                                                                                tmp_path, browser):
    _with_presets(page, app_url, wait_for_app)
    page.goto(_link(app_url, LONG_PRESETS))
    wait_for_app(page)
    with page.expect_download(timeout=180_000) as download:
        page.get_by_role("button", name="Download the report (HTML, opens offline)").click()
    path = tmp_path / "report.html"
    download.value.save_as(path)
    assert path.stat().st_size < 6_000_000

    context, offline, blocked = _open_offline(browser, path)
    try:
        assert not blocked, f"the report asked the network for {blocked[:3]}"
        fills = _fills(offline)
        assert len(fills) > 100
        black = [f for f in fills if all(channel < BLACKISH for channel in _rgb(f))]
        assert not black, f"{len(black)} of {len(fills)} chart fills are black: {black[:5]}"
        assert len({_rgb(f) for f in fills}) >= 8  # the charts really are in colour

        # Print: every chart stays on one page. Markers at each chart's top and bottom must land on the same page.
        count = offline.evaluate("""() => { const charts = [...document.querySelectorAll('figure.chart')];
            charts.forEach((chart, i) => {
                const top = document.createElement('div'); top.textContent = `CHARTTOP${i}X`;
                const end = document.createElement('div'); end.textContent = `CHARTEND${i}X`;
                chart.prepend(top); chart.append(end); });
            return charts.length; }""")
        shown_bars = "() => [...document.querySelectorAll('.modebar-container')].filter(bar => " \
                     "getComputedStyle(bar).display !== 'none').length"
        assert offline.evaluate(shown_bars) == count  # on screen each chart has its toolbar
        offline.emulate_media(media="print")
        assert offline.evaluate(shown_bars) == 0  # in print none: it printed over the titles
        pdf = tmp_path / "report.pdf"
        offline.pdf(path=str(pdf), format="A4", print_background=True)
    finally:
        context.close()
    pages = [p.extract_text() or "" for p in PdfReader(pdf).pages]
    # The first page is the one-page summary: the verdicts, then the whole headline table down to its last rows,
    # and nothing else; the comparison starts the second page.
    first = " ".join(pages[0].split())
    assert "Summary" in first and "Cheapest:" in first and "Headline numbers" in first
    assert "Chance of exceeding" in first and "Budget covering 90" in first
    assert "Comparison" not in first and "CHARTTOP" not in first and "http" not in first
    assert pages[1].lstrip().startswith("Comparison")
    assert count == 3 + 8 * len(LONG_PRESETS)
    for number in range(count):
        top = [i for i, text in enumerate(pages) if f"CHARTTOP{number}X" in text]
        end = [i for i, text in enumerate(pages) if f"CHARTEND{number}X" in text]
        assert top and top == end, f"chart {number + 1} starts on page {top} and ends on page {end}"


def test_plan_uncertainty_tabs_draw_the_distribution_and_the_tornado(page, app_url, wait_for_app):
    page.goto(f"{app_url}/?method=tst&spot_share=0.2")
    wait_for_app(page)
    page.get_by_role("radio", name="Cost range").click()
    wait_for_app(page)
    page.get_by_role("radio", name="Tornado").click()
    wait_for_app(page)
    expect(page.get_by_text("Total cost: P10")).to_be_visible()
    expect(page.get_by_text("Which assumption moves total cost most")).to_be_visible()
    expect(page.get_by_text("10,000 draws, seed 0").first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
