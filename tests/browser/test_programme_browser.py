"""Browser: a scaling ladder added on the Plan page shows in the Programme chart and the final run's share; the
shareable link opens the same programme in a new page."""

import json
import re
from urllib.parse import urlencode

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
    expect(page.get_by_role("radio", name="Programme")).to_have_attribute("aria-checked", "true")
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
    add = page.get_by_role("combobox", name="Add a stage")
    add.scroll_into_view_if_needed()  # clicked as it scrolls into view, a box takes the focus, not its list
    add.click()
    page.get_by_role("option", name="Scaling ladder").click()
    wait_for_app(page)
    expect(page.locator(SIDEBAR).get_by_role("spinbutton", name="Model sizes (runs)")).to_have_value("5")
    page.get_by_role("radio", name="Programme").click()
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


def test_issue_53s_ladder_link_is_refused_and_a_costly_chart_says_why(page, app_url, wait_for_app):
    # 20 ladders of 100 runs (2,000 priced runs) with the two costliest tabs open: refused at the boundary.
    probe = json.dumps([{"runs": 100, "kind": "scaling_ladder", "span_decades": 7}] * 20, separators=(",", ":"))
    page.goto(f"{app_url}/?{urlencode({'programme': probe, 'mfu': '0.35', 'charts': 'step,checkpoint'})}")
    wait_for_app(page)
    expect(page.get_by_text("20 × 'Scaling ladder' of 100 runs = 2,000 priced runs; at most 200 a programme",
                            exact=False)).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
    # The largest programme the default allows: priced, its Checkpoint interval chart past the rerun budget.
    bounded = json.dumps([{"runs": 100, "kind": "scaling_ladder"}] * 2, separators=(",", ":"))
    page.goto(f"{app_url}/?{urlencode({'programme': bounded, 'charts': 'step,checkpoint'})}")
    wait_for_app(page)
    expect(page.get_by_text("this chart prices the plan 121 times", exact=False)).to_be_visible()
    expect(page.locator(CHART).filter(has_text="Where the step goes").first).to_be_attached()
    expect(page.locator(EXCEPTION)).to_have_count(0)
