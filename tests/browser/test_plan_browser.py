"""Browser: moving the Plan page's first slider with the keyboard reruns the page and redraws its charts."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

METRIC = '[data-testid="stMetricValue"]'
SLIDER = '[data-testid="stSlider"]'
CHART = '[data-testid="stPlotlyChart"]'
EXCEPTION = '[data-testid="stException"]'
PRESSES = 3


def test_moving_the_first_slider_changes_the_numbers_and_keeps_the_charts(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
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
