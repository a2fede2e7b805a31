"""Browser: a link to a plan that cannot run shows the "Can it run?" panel's memory bar and its reason."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

CHART = '[data-testid="stPlotlyChart"]'
EXCEPTION = '[data-testid="stException"]'
ALERT = '[data-testid="stAlert"]'


def test_a_plan_that_does_not_fit_says_why(page, app_url, wait_for_app):
    # 70B on 8 GPUs with no sharding: 16 B · 70e9 = 1,120 GB of model states on one GPU.
    page.goto(f"{app_url}/?total_params=70000000000&gpu_count=8&tensor_parallel=1&pipeline_parallel=1&zero_stage=0")
    wait_for_app(page)
    expect(page.get_by_text("Can it run?", exact=True)).to_be_visible()
    expect(page.locator(ALERT).filter(has_text="does not fit:").first).to_be_visible()
    expect(page.locator(CHART).filter(has_text="Memory per GPU").first).to_be_attached()
    expect(page.locator(EXCEPTION)).to_have_count(0)
