"""Browser: moving the Plan page's sliders with the keyboard reruns the page and redraws its charts; a held arrow key
on the purchase mix leaves the shown and the priced mix the same; Copy link copies without a hover."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario, with_overrides
from dashboard.ui.plan_tabs import CHART_TABS

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


TAB = '[data-testid="stButtonGroup"] [role="radio"]'  # a chart tab: an option of its column's switcher
METRIC_BOX = '[data-testid="stMetric"]'
TABS = '.st-key-plan-charts [data-testid="stColumn"]'  # the two chart columns, each a switcher and its chart
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
    assert names == [name for column in CHART_TABS for name in column]
    column_of = {name: number for number, column in enumerate(CHART_TABS) for name in column}
    for index, name in enumerate(names):
        page.locator(TAB).nth(index).click()
        wait_for_app(page)
        panel = page.locator(TABS).nth(column_of[name])
        expect(panel.locator(CHART).locator("svg.main-svg").first, f"{name} at {width} px").to_be_attached()
        expect(page.locator(EXCEPTION)).to_have_count(0)
        assert page.evaluate(TRUNCATED) == [], f"tile values cut off at {width} px after opening {name}"


def test_an_open_tab_rides_in_the_address_and_copy_link_shows_it(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_role("radio", name="Storage growth").click()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"charts=storage(,|%2C)tst"))
    page.get_by_role("button", name="Show link").click()
    code = page.locator('[data-testid="stCode"]')
    expect(code).to_contain_text(re.compile(r"^http://127\.0\.0\.1:\d+/\?charts=storage%2Ctst$"))
    reopened = page.context.new_page()
    reopened.goto(code.inner_text().strip())
    wait_for_app(reopened)
    expect(reopened.get_by_role("radio", name="Storage growth")).to_have_attribute("aria-checked", "true")
    expect(reopened.locator(CHART).filter(has_text="Storage:").first).to_be_visible()
    expect(reopened.locator(EXCEPTION)).to_have_count(0)


MIX_SLIDER = '[data-testid="stSlider"]:has-text("Purchase mix")'
HELD_REPEATS = 25  # key-repeat events while an arrow key is held (about 30 a second, as a keyboard repeats)
REPEAT_MS = 30


def _hold(page, thumb, key: str) -> None:
    """Hold `key` on a slider thumb: repeated keydown events (Playwright marks the repeats) and one keyup."""
    thumb.focus()
    for _ in range(HELD_REPEATS):
        page.keyboard.down(key)
        page.wait_for_timeout(REPEAT_MS)
    page.keyboard.up(key)


def test_a_held_arrow_key_on_the_purchase_mix_shows_the_mix_that_is_priced(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Purchase mix and prices").click()
    wait_for_app(page)
    start, end = page.locator(MIX_SLIDER).get_by_role("slider").all()
    _hold(page, end, "ArrowRight")  # spot grows from 0 % into what on-demand had
    _hold(page, start, "ArrowLeft")  # and reserved gives way to spot, while the page is still rerunning
    wait_for_app(page)

    reserved_pct, right_pct = float(start.input_value()), float(end.input_value())
    spot_pct = right_pct - reserved_pct
    assert right_pct > 80 and reserved_pct < 80, "the held keys did not move the handles"
    shown = page.locator('[data-testid="stSlider"]:has-text("Purchase mix") [data-testid="stSliderThumbValue"]')
    expect(shown).to_have_text([f"{reserved_pct:g} %", f"{right_pct:g} %"])
    # Priced: the mix in the caption, in the link and in the total.
    expect(page.get_by_text(f"Priced: Reserved {reserved_pct:g} % · spot {spot_pct:g} % · "
                            f"on-demand {100 - right_pct:g} %")).to_be_visible()
    query = parse_qs(urlsplit(page.url).query)
    assert float(query["reserved_share"][0]) == pytest.approx(reserved_pct / 100)
    assert float(query["spot_share"][0]) == pytest.approx(spot_pct / 100)
    priced = with_overrides(default_scenario(), [f"reserved_share={reserved_pct / 100}",
                                                 f"spot_share={spot_pct / 100}"])
    total = catalogue.text("cost_total_usd", scenario_outputs(priced)["cost_total_usd"])
    expect(page.locator(METRIC).first).to_have_text(total)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_copy_link_is_a_visible_button_that_copies_the_address(browser, app_url, wait_for_app):
    context = browser.new_context(viewport={"width": 1600, "height": 1200},
                                  permissions=["clipboard-read", "clipboard-write"])
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        page.goto(f"{app_url}/?mfu=0.35&charts=storage,tst")
        wait_for_app(page)
        page.mouse.move(0, 0)  # nothing hovered
        button = page.get_by_role("button", name="Copy link", exact=True)
        expect(button).to_be_visible()
        # Drawn as it is, not faded in on hover (Playwright counts a transparent element as visible).
        assert button.evaluate("e => getComputedStyle(e).opacity") == "1"
        expect(button).to_have_text("Copy link")
        button.click()
        expect(page.get_by_text("Copied: the address of this exact view")).to_be_visible()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == page.url
        query = parse_qs(urlsplit(copied).query)
        assert query["mfu"] == ["0.35"] and query["charts"] == ["storage,tst"]
    finally:
        context.close()
