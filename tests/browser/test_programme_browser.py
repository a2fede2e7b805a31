"""Browser: a scaling ladder added on the Plan page shows in the Programme chart and the final run's share; the
shareable link opens the same programme in a new page."""

import re

import pytest
from playwright.sync_api import expect

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario, scenario_from_dict

pytestmark = pytest.mark.browser

SIDEBAR = '[data-testid="stSidebar"]'
CHART = '[data-testid="stPlotlyChart"]'
EXCEPTION = '[data-testid="stException"]'
LADDER = {**default_scenario().to_json_dict(), "programme": [{"kind": "scaling_ladder"}]}


def _share_text() -> str:
    share = scenario_outputs(scenario_from_dict(LADDER))["programme"]["final_run_share"]
    assert share < 1
    return f"final run {catalogue.text('programme.final_run_share', share)} of the programme"


def _sees_the_ladder(page) -> None:
    expect(page.get_by_role("tab", name="Programme")).to_have_attribute("aria-selected", "true")
    chart = page.locator(CHART).filter(has_text="Where the programme goes")
    expect(chart.first.locator("svg.main-svg").first).to_be_attached()
    expect(chart.first).to_contain_text("Scaling ladder")
    expect(page.get_by_text(_share_text(), exact=True)).to_be_visible()  # under the total tile
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_a_ladder_added_on_the_plan_page_reopens_from_its_link(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    page.locator(SIDEBAR).get_by_text("Programme", exact=True).click()
    wait_for_app(page)
    page.get_by_role("combobox", name="Add a stage").click()
    page.get_by_role("option", name="Scaling ladder").click()
    wait_for_app(page)
    expect(page.locator(SIDEBAR).get_by_role("spinbutton", name="Model sizes (runs)")).to_have_value("5")
    page.get_by_role("tab", name="Programme").click()
    wait_for_app(page)
    _sees_the_ladder(page)
    expect(page).to_have_url(re.compile(r"programme="))

    page.get_by_role("button", name="Show link").click()
    code = page.locator('[data-testid="stCode"]')
    expect(code).to_contain_text(re.compile(r"programme=.*scaling_ladder"))
    reopened = page.context.new_page()
    reopened.goto(code.inner_text().strip())
    wait_for_app(reopened)
    _sees_the_ladder(reopened)
    reopened.locator(SIDEBAR).get_by_text("Programme", exact=True).click()
    wait_for_app(reopened)
    expect(reopened.locator(SIDEBAR).get_by_role("spinbutton", name="Model sizes (runs)")).to_have_value("5")
