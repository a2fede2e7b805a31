"""Browser: the Llama 3.1 405B preset runs; an Apply button in "Can it run?" changes the layout and the tiles; a 405B
set with the size box shows the shape it assumes."""


from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario
from dashboard.core.scenario_query import scenario_to_query

pytestmark = pytest.mark.browser

METRIC = '[data-testid="stMetricValue"]'
ALERT = '[data-testid="stAlert"]'
EXCEPTION = '[data-testid="stException"]'
MARKDOWN = '[data-testid="stMarkdownContainer"]'
PANEL = ".st-key-plan-feasibility"
SIDEBAR = '[data-testid="stSidebar"]'
LLAMA = next(name for name in presets() if name.startswith("Llama 3.1 405B"))
# 70B on 64 H100 with nothing sharded (TP 1 · PP 1 · ZeRO-0): 1,120 GB of model states per GPU, so it needs a fix.
STUCK = Scenario(total_params=70e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=1, zero_stage=0)


def _layout(page) -> str:
    return page.locator(PANEL).locator(MARKDOWN).filter(has_text="Layout:").first.inner_text()


def test_the_llama_405b_preset_runs_and_eager_attention_is_fixed_by_apply(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_role("combobox", name="Preset").click()
    page.get_by_role("option", name=LLAMA).click()
    wait_for_app(page)
    runs = page.locator(ALERT).filter(has_text="Runs on 16,384 GPUs")
    expect(runs).to_be_visible()
    expect(page.locator(PANEL).locator(MARKDOWN).filter(has_text="Layout: TP 8 · PP 16")).to_be_visible()
    expect(page.locator(ALERT).filter(has_text="Cannot run")).to_have_count(0)
    # Attention kept as in Korthikanti et al. (eager): the published layout no longer fits, and fused attention,
    # the cheapest fix, applied from the panel, makes it run again and sets the sidebar's control back.
    page.locator(SIDEBAR).get_by_text("Layout and memory").click()
    wait_for_app(page)
    attention = page.get_by_role("combobox", name="Attention kernel")
    attention.scroll_into_view_if_needed()  # clicked as it scrolls into view, a box takes the focus, not its list
    attention.click()
    page.get_by_role("option", name="Eager (scores kept)").click()
    wait_for_app(page)
    expect(page.locator(ALERT).filter(has_text="Cannot run")).to_be_visible()
    tiles = page.locator(METRIC).all_inner_texts()
    page.locator(PANEL).get_by_role("button", name="Apply").first.click()
    wait_for_app(page)
    expect(runs).to_be_visible()
    expect(page.locator(METRIC)).not_to_have_text(tiles)
    expect(page.get_by_role("combobox", name="Attention kernel")).to_have_value("Fused (FlashAttention)")
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_apply_changes_the_layout_and_the_tiles(page, app_url, wait_for_app):
    page.goto(f"{app_url}/?{urlencode(scenario_to_query(STUCK))}")  # "7e+10" with its "+" encoded
    wait_for_app(page)
    expect(page.locator(ALERT).filter(has_text="Cannot run")).to_be_visible()
    layout, tiles = _layout(page), page.locator(METRIC).all_inner_texts()
    page.locator(PANEL).get_by_role("button", name="Apply").first.click()
    wait_for_app(page)
    expect(page.locator(ALERT).filter(has_text="Applied:")).to_be_visible()
    expect(page.locator(PANEL).locator(MARKDOWN).filter(has_text="Layout:").first).not_to_have_text(layout)
    expect(page.locator(METRIC)).not_to_have_text(tiles)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_a_405b_set_with_the_size_box_shows_its_assumed_shape(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    size = page.get_by_label("Exact total parameters (billions)")
    size.fill("405")
    size.press("Enter")
    wait_for_app(page)
    expect(page.locator(PANEL).locator(MARKDOWN).filter(
        has_text="Assumed shape: 126 layers × 16,384, 128 heads (8 KV) — from the size")).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
