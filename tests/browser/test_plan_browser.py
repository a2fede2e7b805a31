"""Browser: moving the Plan page's first slider with the keyboard reruns the page and redraws its charts."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

METRIC = '[data-testid="stMetricValue"]'
SLIDER = '[data-testid="stSlider"]'
CHART = '[data-testid="stPlotlyChart"]'
EXCEPTION = '[data-testid="stException"]'
PRESSES = 3


def test_moving_the_first_slider_changes_the_numbers_and_keeps_the_charts(page, app_url, wait_for_app):
    # The first session after the server starts loads the engine and plotly for seconds (bench.browser_bench
    # times that); open the page once first, so the presses below land on a page that has finished loading.
    page.goto(app_url)
    wait_for_app(page)
    page.reload()
    wait_for_app(page)
    expect(page.locator(CHART).first.locator("svg.main-svg").first).to_be_attached()
    metrics = page.locator(METRIC)
    before = metrics.all_inner_texts()
    assert before, "the Plan page shows no metric"

    # Streamlit 1.67's slider thumb is an <input type="range">: its slider role is implicit, so match by role.
    page.locator(SLIDER).first.get_by_role("slider").first.focus()
    for _ in range(PRESSES):
        page.keyboard.press("ArrowRight")
    wait_for_app(page)

    expect(metrics, f"no metric changed after {PRESSES} ArrowRight presses on the first slider").not_to_have_text(
        before)
    charts = page.locator(CHART).all()
    assert charts, "the Plan page shows no plotly chart"
    for chart in charts:
        expect(chart.locator("svg.main-svg").first).to_be_attached()
    expect(page.locator(EXCEPTION)).to_have_count(0)


TAB = '[role="tab"]'
METRIC_BOX = '[data-testid="stMetric"]'
TABS = '[data-testid="stTabs"]'
# Elements whose content is wider than their box: a value cut off with "…" or hidden overflow.
TRUNCATED = """() => [...document.querySelectorAll(
    '[data-testid="stMetricValue"], [data-testid="stMetricValue"] *')]
    .filter(el => el.scrollWidth > el.clientWidth).map(el => el.textContent)"""


def test_no_tile_value_is_cut_off(sized_page, app_url, wait_for_app):
    width, page = sized_page
    page.goto(app_url)
    wait_for_app(page)
    assert page.locator(METRIC).count() == 6
    assert page.evaluate(TRUNCATED) == [], f"tile values cut off at {width} px"
    if width == 800:
        tops = {round(box["y"]) for box in (m.bounding_box() for m in page.locator(METRIC_BOX).all())}
        assert len(tops) == 2, f"six tiles should wrap to two rows of three, got rows at {sorted(tops)}"
        left, right = (tabs.bounding_box() for tabs in page.locator(TABS).all()[:2])
        assert right["y"] >= left["y"] + left["height"] - 1, "the two chart columns should stack"
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_every_chart_tab_draws(sized_page, app_url, wait_for_app):
    width, page = sized_page
    page.goto(app_url)
    wait_for_app(page)
    names = page.locator(TAB).all_inner_texts()
    assert len(names) == 8
    for index, name in enumerate(names):
        page.locator(TAB).nth(index).click()
        wait_for_app(page)
        panel = page.locator(TABS).nth(index // 4).locator('[role="tabpanel"]:visible')
        expect(panel.locator(CHART).locator("svg.main-svg").first, f"{name} at {width} px").to_be_attached()
        expect(page.locator(EXCEPTION)).to_have_count(0)
        assert page.evaluate(TRUNCATED) == [], f"tile values cut off at {width} px after opening {name}"


def test_an_open_tab_rides_in_the_address_and_copy_link_shows_it(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_role("tab", name="Storage growth").click()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"charts=storage(,|%2C)tst"))
    page.get_by_role("button", name="Copy link").click()
    code = page.locator('[data-testid="stCode"]')
    expect(code).to_contain_text(re.compile(r"^http://127\.0\.0\.1:\d+/\?charts=storage%2Ctst$"))
    reopened = page.context.new_page()
    reopened.goto(code.inner_text().strip())
    wait_for_app(reopened)
    expect(reopened.get_by_role("tab", name="Storage growth")).to_have_attribute("aria-selected", "true")
    expect(reopened.locator(CHART).filter(has_text="Storage:").first).to_be_visible()
    expect(reopened.locator(EXCEPTION)).to_have_count(0)
