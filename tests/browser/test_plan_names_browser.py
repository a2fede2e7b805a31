"""Browser: the Plan page's words are the plan it prices (issue 51). Fast key presses on the purchase mix then a
GPU change leave a name that matches the tiles; Save as then TST reads "(edited: method TST)"; a fix that returns a
preset to its inputs drops "(edited)" and every fix listed makes the plan run; the full-programme switch says what
it replaces."""

from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect
from programme_switch import full_programme_switch

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario_query import scenario_from_query

pytestmark = pytest.mark.browser

METRIC = '[data-testid="stMetricValue"]'
EXCEPTION = '[data-testid="stException"]'
MIX_SLIDER = '[data-testid="stSlider"]:has-text("Purchase mix")'
PANEL = ".st-key-plan-feasibility"
NAME = "Scenario name"
LLAMA = "Llama 3.1 405B: 15.6T tokens on 16,384 H100 (final run only)"
FAST_PRESSES = 15


def _choose(page, label: str, option: str) -> None:
    """Pick `option` in the select box labelled `label` (scrolled to first: a box below the sidebar's fold, clicked
    as it scrolls into view, took the focus without opening its list)."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option", name=option, exact=True).click()


def _open_group(page, title: str, wait_for_app) -> None:
    page.get_by_test_id("stSidebarUserContent").get_by_text(title, exact=True).click()
    wait_for_app(page)


def test_fast_presses_on_the_mix_then_a_gpu_change_give_the_name_of_the_plan_priced(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    _open_group(page, "Purchase mix and prices", wait_for_app)
    end = page.locator(MIX_SLIDER).get_by_role("slider").all()[1]
    end.focus()
    for _ in range(FAST_PRESSES):  # no waiting: each press lands while the page is still rerunning
        page.keyboard.press("ArrowRight")
    gpus = page.get_by_label("Exact GPU count")
    gpus.fill("2048")
    gpus.press("Enter")
    wait_for_app(page)

    priced = scenario_from_query({key: [value] for key, value in parse_qsl(urlsplit(page.url).query)}).scenario
    assert priced.gpu_count == 2048 and priced.spot_share > 0, "the presses or the GPU count did not land"
    spot_pct = f"{100 * priced.spot_share:.3g} %"
    name = page.get_by_label(NAME, exact=True).input_value()
    assert name == priced.name
    assert name.startswith("7B dense, 2T tokens on 2,048 H100") and f"{spot_pct} spot" in name
    total = catalogue.text("cost_total_usd", scenario_outputs(priced)["cost_total_usd"])
    expect(page.locator(METRIC).first).to_have_text(total)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_save_as_then_tst_reads_edited_method_tst(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    save = page.get_by_role("button", name="Save for comparison")
    save.click()
    wait_for_app(page)
    save.click()  # the same name again: overwrite, or save as the next number
    wait_for_app(page)
    save_as = page.get_by_role("button", name="Save as “")
    label = save_as.inner_text()
    saved = label[label.index("“") + 1:label.rindex("”")]
    save_as.click()
    wait_for_app(page)
    expect(page.get_by_label(NAME, exact=True)).to_have_value(saved)
    _open_group(page, "Training method", wait_for_app)
    _choose(page, "Method", "Token Superposition Training")
    wait_for_app(page)
    expect(page.get_by_label(NAME, exact=True)).to_have_value(f"{saved} (edited: method TST)")
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_only_fixes_that_run_are_listed_and_one_that_restores_the_preset_drops_edited(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    _choose(page, "Preset", LLAMA)
    wait_for_app(page)
    _open_group(page, "Layout and memory", wait_for_app)
    _choose(page, "Attention kernel", "Eager (scores kept)")
    wait_for_app(page)
    expect(page.get_by_label(NAME, exact=True)).to_have_value(f"{LLAMA} (edited: attention eager)")

    listed = page.locator(PANEL).locator('[data-testid="stMarkdownContainer"]').filter(has_text="wall-clock")
    expect(listed).to_have_count(2)
    rows = listed.all_inner_texts()
    # Flash attention and full recompute make it run; 262,144 GPUs (16 × the plan's) is only considered.
    assert [row.split(":")[0] for row in rows] == ["Use fused (flash) attention", "Use full activation recompute"]
    assert not any("still does not fit" in row or "GPUs:" in row for row in rows)
    page.locator(PANEL).get_by_text("Also considered").click()
    expect(page.locator(PANEL).get_by_text("262,144 GPUs is more than 8 × the plan's 16,384")).to_be_visible()

    page.locator(PANEL).get_by_role("button", name="Apply").first.click()  # flash: the preset's own kernel
    wait_for_app(page)
    expect(page.get_by_label(NAME, exact=True)).to_have_value(LLAMA)
    expect(page.locator(PANEL).get_by_text("Runs on 16,384 GPUs")).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_the_full_programme_switch_says_what_it_replaces(page, app_url, wait_for_app):
    page.goto(app_url)
    wait_for_app(page)
    _open_group(page, "Programme", wait_for_app)
    _choose(page, "Programme preset", "full programme")
    wait_for_app(page)
    # The stages in place of 1.05 × the main run (the issue's $443k → $323k at the earlier model's MFU).
    expected, total = full_programme_switch()
    expect(page.locator(METRIC).first).to_have_text(total)
    sentence = page.locator(".st-key-plan-switches").inner_text().replace("\u2060", "")  # markdown_text's joiners
    assert expected in sentence
    expect(page.locator(EXCEPTION)).to_have_count(0)
