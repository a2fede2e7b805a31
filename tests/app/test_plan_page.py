"""AppTest: the Plan page's controls, link, presets, baseline and scenario files."""

import json

import pytest
from plan_groups import show_group
from shown_text import shown

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.risk import budget_status
from dashboard.core.scenario import Scenario, default_scenario, with_overrides
from dashboard.core.uncertainty import monte_carlo
from dashboard.format import number
from dashboard.safe_text import markdown_text
from dashboard.ui.plan_controls import CONTROLS, GROUPS, MFU_PREDICTED, MIX, MIX_KEYS, log_grid, log_options


def _metric(at, prefix):
    return next(m for m in at.metric if m.label.startswith(prefix))


def _tiles(at):
    return [(m.label, m.value) for m in at.metric]


def _widget(at, key):
    for kind in ("select_slider", "slider", "number_input", "selectbox", "toggle"):  # a range is a slider
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0]
    raise LookupError(key)


def _enter_mfu(at):
    """Turn "Predict MFU from the layout" off, so the MFU slider sets the plan's MFU (it starts at the prediction)."""
    _widget(at, MFU_PREDICTED).set_value(False)
    return at.run()


def _open_group_of(at, key):
    """Open the sidebar expander holding a control (closed groups do not draw their widgets)."""
    group = next(title for title, controls in GROUPS.items() if key in {c.key for c in controls})
    show_group(at, group)
    return at.run()


def test_plan_page_shows_the_default_scenario(app):
    at = app.run()
    assert not at.exception
    expected = scenario_outputs(default_scenario())
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", expected["cost_total_usd"])
    assert _metric(at, "GPU-hours").value == catalogue.text("gpu_hours_total", expected["gpu_hours_total"])
    # The default's loss to three decimals, as Compare, the report and the scaling chart write it (not "2.06").
    assert _metric(at, "Predicted loss").value == f"{expected['predicted_loss']:.3f}" == "2.065"
    assert at.query_params == {}


# Each control with the link that makes it matter (e.g. spot prices need a spot share) and a new value to set.
CONTROL_CASES = {
    "total_params": ({}, 30.0),
    "active_params": ({"active_params": "1e9", "total_params": "1e10"}, 3.0),
    "tokens": ({}, 5000.0),
    "gpu_type": ({}, "b200"),
    # A custom GPU has no bandwidths for the step-time model to predict its MFU: the links enter one.
    "peak_tflops": ({"gpu_type": "custom", "peak_tflops": "500", "gpu_memory_gb": "80", "mfu": "0.4"}, 700.0),
    # Its memory not given, the custom GPU's plan cannot be checked (budget "infeasible"); given, it runs.
    "gpu_memory_gb": ({"gpu_type": "custom", "peak_tflops": "500", "mfu": "0.4"}, 80.0),
    "gpu_count": ({}, 2048.0),
    "mfu": ({}, 25.0),
    "checkpoint_interval_min": ({}, 120.0),
    "checkpoint_write_gb_per_s": ({}, 1.0),
    "checkpoint_async": ({}, True),
    "node_failures_per_1000_node_days": ({}, 20.0),
    "spot_interruptions_per_1000_node_days": ({"spot_share": "0.2"}, 50.0),
    "purchase_mix": ({}, (50.0, 60.0)),  # reserved 50 %, spot 10 %, on-demand 40 %
    "price_reserved_per_gpu_hour": ({}, 2.0),
    "price_on_demand_per_gpu_hour": ({}, 9.0),
    "price_spot_per_gpu_hour": ({"spot_share": "0.2"}, 1.0),
    "experiment_overhead": ({}, 3.0),
    "budget_usd": ({}, 2e6),
    "scaling_fit": ({}, "hoffmann2022"),
    "method": ({}, "tst"),
    "tst_speedup": ({"method": "tst"}, 1.5),
    "tst_token_multiplier": ({"method": "tst"}, 3.0),
    "tst_pilot_fraction": ({"method": "tst"}, 20.0),
    "tst_switching_cost_usd": ({"method": "tst"}, 90_000.0),
}


# Uncertainty controls move the Monte Carlo charts, not the tiles: each with its link and a new value.
RANGE_CASES = {
    "range_shape": ({}, "lognormal"),
    "range_mfu": ({}, (0.5, 1.2)),
    "range_price_reserved": ({}, (0.3, 2.0)),
    "range_price_on_demand": ({}, (0.3, 2.0)),
    "range_price_spot": ({"spot_share": "0.2"}, (0.3, 2.0)),
    "range_node_failures": ({}, (0.2, 3.0)),
    "range_spot_interruptions": ({"spot_share": "0.2", "spot_interruptions_per_1000_node_days": "40"}, (0.2, 3.0)),
    "range_tokens": ({}, (0.5, 2.0)),
    "range_experiments": ({}, (0.2, 3.0)),
    "range_tst_speedup": ({"method": "tst"}, (0.4, 1.5)),
}


def test_every_control_has_a_case():
    assert set(CONTROL_CASES) | set(RANGE_CASES) == {c.key for c in CONTROLS}


def _chart_title(at, name):
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith(name))
    return spec["layout"]["title"]["text"] + spec["layout"]["title"]["subtitle"]["text"]


def _open_uncertainty_tabs(at):
    at.session_state["plan.tabs.left"] = "Cost range"
    at.session_state["plan.tabs.right"] = "Tornado"
    return at.run()


@pytest.mark.parametrize(("key", "case"), RANGE_CASES.items(), ids=list(RANGE_CASES))
def test_each_range_control_changes_the_uncertainty_charts_and_the_link(app, unexpected_warnings, key, case):
    link, value = case
    for name, text in link.items():
        app.query_params[name] = text
    at = _open_uncertainty_tabs(_open_group_of(app.run(), key))
    assert not at.exception and not unexpected_warnings(at)
    before = (_chart_title(at, "Total cost"), _chart_title(at, "Which assumption"))
    _widget(at, f"w.{key}").set_value(value)
    at.run()
    assert not at.exception and not at.error
    assert (_chart_title(at, "Total cost"), _chart_title(at, "Which assumption")) != before
    assert any(name.startswith(key) for name in at.query_params)


@pytest.mark.parametrize(("key", "case"), CONTROL_CASES.items(), ids=list(CONTROL_CASES))
def test_each_control_changes_a_metric_and_the_link(app, unexpected_warnings, key, case):
    link, value = case
    for name, text in link.items():
        app.query_params[name] = text
    at = _open_group_of(app.run(), key)
    assert not at.exception and not unexpected_warnings(at)
    if key == "mfu":
        at = _enter_mfu(at)  # the slider is used only with the prediction off
    before = _tiles(at)
    log_keys = ("total_params", "active_params", "tokens", "gpu_count", "checkpoint_interval_min")
    widget = _widget(at, f"w.{key}.n") if key in log_keys else None
    (widget or _widget(at, f"w.{key}")).set_value(value)
    at.run()
    assert not at.exception and not at.error
    assert _tiles(at) != before
    assert set(MIX_KEYS if key == MIX else [key]) <= set(at.query_params)


def test_a_link_reproduces_every_number(app):
    scenario = with_overrides(default_scenario(), ["mfu=0.31", "gpu_count=1024", "total_params=13e9", "spot_share=0.1"])
    for name, text in {"mfu": "0.31", "gpu_count": "1024", "total_params": "1.3e+10", "spot_share": "0.1"}.items():
        app.query_params[name] = text
    at = app.run()
    assert not at.exception
    expected = scenario_outputs(scenario)
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", expected["cost_total_usd"])
    assert _metric(at, "Wall-clock").value == catalogue.text("wall_clock_days", expected["wall_clock_days"])
    assert _widget(at, "w.mfu").value == pytest.approx(31.0)
    assert _widget(at, "w.total_params.n").value == pytest.approx(13.0)


def test_a_tampered_link_warns_and_falls_back(app):
    app.query_params["mfu"] = "12"
    app.query_params["gpu_count"] = "<script>"
    at = app.run()
    assert not at.exception
    text = " ".join(shown(w.value) for w in at.warning)
    assert "mfu = 12 is out of range" in text and "gpu_count" in text
    default_total = scenario_outputs(default_scenario())["cost_total_usd"]
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", default_total)


def test_choosing_a_preset_loads_it_and_undo_brings_the_plan_back(app):
    at = _enter_mfu(app.run())
    _widget(at, "w.mfu").set_value(30.0)
    at.run()
    edited = _tiles(at)
    name = next(n for n in presets() if n.startswith("DeepSeek"))
    at.selectbox(key="plan.preset").set_value(name).run()  # no second button: choosing loads
    assert not at.exception
    preset_total = scenario_outputs(presets()[name])["cost_total_usd"]
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", preset_total)
    assert _widget(at, "w.moe").value is True
    assert _widget(at, "w.gpu_type").value == "h800"
    assert at.text_input(key="w.name").value == presets()[name].name
    next(b for b in at.button if b.label == "Undo").click().run()
    assert _tiles(at) == edited
    assert _widget(at, "w.mfu").value == pytest.approx(30.0)
    assert _widget(at, MFU_PREDICTED).value is False


def test_deltas_compare_against_the_pinned_baseline(app):
    at = app.run()
    assert _metric(at, "Total cost").delta == ""
    assert any("no baseline pinned" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Pin as baseline").click().run()
    _widget(_enter_mfu(at), "w.mfu").set_value(20.0)
    at.run()
    halved = scenario_outputs(with_overrides(default_scenario(), ["mfu=0.2"]))["cost_total_usd"]
    default = scenario_outputs(default_scenario())["cost_total_usd"]  # at the MFU its layout predicts
    assert halved > default
    assert _metric(at, "Total cost").delta == catalogue.text("cost_total_usd", halved - default).replace("$", "+$", 1)
    # The chip of what differs: the default's MFU is the layout's prediction.
    assert any(markdown_text("MFU predicted → 20 %") in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Pin as baseline").click().run()
    assert _metric(at, "Total cost").delta == "≈ same"  # the plan is its own baseline now
    assert at.query_params["base.mfu"] == "0.2"


GRAY, NO_ARROW = 2, 2  # st.metric's proto: MetricColor.GRAY, MetricDirection.NONE


def test_deltas_under_half_a_percent_read_same_in_grey_with_no_arrow(app):
    app.query_params["mfu"] = "0.4"  # an entered MFU of 40 %
    at = app.run()
    next(b for b in at.button if b.label == "Pin as baseline").click().run()
    _widget(at, "w.mfu").set_value(40.1)
    at.run()
    assert not at.exception
    # MFU 40 % -> 40.1 % cuts the GPU-hours, the cost and the wall-clock by 1 − 40/40.1 = 0.25 %, under half a
    # percent; the predicted loss does not move at all; the budget share moves 0.25 % of itself.
    for prefix in ("Total cost", "GPU-hours", "Wall-clock", "$ per million tokens", "Predicted loss", "Budget"):
        tile = _metric(at, prefix)
        assert tile.delta == "≈ same", prefix
        assert (tile.proto.color, tile.proto.direction) == (GRAY, NO_ARROW), prefix
    _widget(at, "w.mfu").set_value(38.0)
    at.run()
    # 40 / 38 = 1.053: a 5.3 % rise in cost is a change, red (more cost) with an arrow.
    tile = _metric(at, "Total cost")
    assert tile.delta.startswith("+$") and tile.proto.direction != NO_ARROW and tile.proto.color != GRAY


def test_uploading_a_scenario_changes_the_numbers(app):
    at = app.run()
    before = _metric(at, "Total cost").value
    llama = Scenario(name="Llama 3.1 405B", total_params=405e9, tokens=15.6e12, gpu_count=16384, budget_usd=1e9)
    at.sidebar.file_uploader[0].set_value(("llama.json", json.dumps(llama.to_json_dict()).encode(), "application/json"))
    at.run()
    assert not at.exception
    after = _metric(at, "Total cost").value
    assert after != before
    assert after == catalogue.text("cost_total_usd", scenario_outputs(llama)["cost_total_usd"])
    next(b for b in at.button if b.label == "Pin the previous plan as baseline").click().run()
    assert _metric(at, "Total cost").delta.startswith("+$")  # Llama against the default it replaced


def test_bad_scenario_upload_shows_an_error_and_keeps_the_previous_state(app):
    at = _enter_mfu(app.run())
    _widget(at, "w.mfu").set_value(33.0)
    at.run()
    before = _tiles(at)
    at.sidebar.file_uploader[0].set_value(("bad.json", b'{"schema": 1, "mfu": 7}', "application/json"))
    at.run()
    assert not at.exception
    assert any("mfu = 7 is out of range" in shown(e.value) for e in at.error)
    assert _tiles(at) == before
    assert _widget(at, "w.mfu").value == pytest.approx(33.0)


def test_the_purchase_mix_is_one_control_whose_parts_add_to_100_percent(app):
    at = _open_group_of(app.run(), MIX)
    assert _widget(at, "w.purchase_mix").value == pytest.approx((80.0, 80.0))  # the default: 80 % reserved, no spot
    assert any(c.value == "Priced: Reserved 80 % · spot 0 % · on-demand 20 %" for c in at.caption)
    _widget(at, "w.purchase_mix").set_value((50.0, 100.0))  # reserved to 50 %, spot from 50 % to 100 %
    at.run()
    assert not at.exception and not at.error
    assert any(c.value == "Priced: Reserved 50 % · spot 50 % · on-demand 0 %" for c in at.caption)
    assert (at.query_params["reserved_share"], at.query_params["spot_share"]) == ("0.5", "0.5")
    _widget(at, "w.purchase_mix").set_value((90.0, 100.0))  # reserved 90 %, spot the 10 % left
    at.run()
    assert _widget(at, "w.purchase_mix").value == pytest.approx((90.0, 100.0))
    assert any(c.value == "Priced: Reserved 90 % · spot 10 % · on-demand 0 %" for c in at.caption)
    expected = scenario_outputs(with_overrides(default_scenario(), ["reserved_share=0.9", "spot_share=0.1"]))
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", expected["cost_total_usd"])


def test_a_linked_mix_sets_both_handles(app):
    app.query_params["reserved_share"] = "0.6"
    app.query_params["spot_share"] = "0.25"
    at = _open_group_of(app.run(), MIX)
    assert _widget(at, "w.purchase_mix").value == pytest.approx((60.0, 85.0))
    assert any(c.value == "Priced: Reserved 60 % · spot 25 % · on-demand 15 %" for c in at.caption)


def test_with_one_invalid_input_the_other_edits_still_reach_the_tiles_and_the_link(app):
    app.query_params["active_params"] = "5e9"
    at = _open_group_of(app.run(), "total_params")
    _widget(at, "w.total_params.n").set_value(3.0)  # below the 5B active parameters: cannot be applied
    at.run()
    assert not at.exception
    assert any("Total parameters" in e.value for e in at.error)
    # In the Plan page's words, not the scenario keys: 5e9 active against the 3e9 total typed.
    assert any("Not applied" in c.value and markdown_text("Active parameters (MoE) 5B exceeds Total parameters 3B")
               in c.value for c in at.caption)
    assert not any("active_params" in c.value for c in at.caption)
    _widget(_enter_mfu(at), "w.mfu").set_value(25.0)
    at.run()
    expected = scenario_outputs(with_overrides(default_scenario(), ["active_params=5e9", "mfu=0.25"]))
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", expected["cost_total_usd"])
    assert at.query_params["mfu"] == "0.25" and "total_params" not in at.query_params
    _widget(at, "w.active_params.n").set_value(2.0)  # now 3B total fits: the pending edit applies
    at.run()
    assert not at.error
    assert at.query_params["total_params"] == "3e+09"


def test_disabled_controls_show_the_values_in_use(app):
    # A dense plan moved to 405B is priced with 405B active parameters; the H100's datasheet peak is 989 TFLOP/s
    # dense BF16 and its memory 80 GB: the disabled boxes say so, not the 7B or the custom GPU's 1,000 left there.
    at = _open_group_of(app.run(), "total_params")
    _widget(at, "w.total_params.n").set_value(405.0)
    at.run()
    at = _open_group_of(at, "peak_tflops")
    assert not at.exception
    active = _widget(at, "w.active_params.n")
    assert active.disabled and active.value == pytest.approx(405.0)
    peak, memory = _widget(at, "w.peak_tflops"), _widget(at, "w.gpu_memory_gb")
    assert peak.disabled and peak.value == pytest.approx(989.0)
    assert memory.disabled and memory.value == pytest.approx(80.0)


def test_an_edited_default_is_no_longer_named_default(app):
    at = _open_group_of(app.run(), "tokens")
    _widget(at, "w.tokens.n").set_value(3000.0)
    _widget(at, "w.gpu_count.n").set_value(1024)
    at.run()
    assert at.text_input(key="w.name").value == "7B dense, 3T tokens on 1,024 H100"
    assert at.query_params["name"] == "7B dense, 3T tokens on 1,024 H100"
    at.text_input(key="w.name").input("My plan").run()
    _widget(_enter_mfu(at), "w.mfu").set_value(30.0)
    at.run()
    assert at.text_input(key="w.name").value == "My plan"


def test_a_name_the_page_wrote_that_comes_back_late_does_not_freeze_it(app):
    """Fast key presses: the browser sends the name box's value from a rerun ago with the next press, which
    Streamlit reports as an edit of the box. The name still follows the inputs."""
    at = _open_group_of(app.run(), MIX)
    _widget(at, "w.purchase_mix").set_value((80.0, 81.0)).run()  # 80 % reserved, 1 % spot
    stale = at.text_input(key="w.name").value
    assert stale == "7B dense, 2T tokens on 512 H100, mix 80 % reserved, 1 % spot"
    _widget(at, "w.purchase_mix").set_value((80.0, 95.0)).run()
    at.text_input(key="w.name").input(stale)  # the late value, with the next change
    _widget(at, "w.gpu_count.n").set_value(2048)
    at.run()
    assert at.text_input(key="w.name").value == "7B dense, 2T tokens on 2,048 H100, mix 80 % reserved, 15 % spot"
    at.text_input(key="w.name").input("My plan").run()  # a name typed is the user's
    _widget(at, "w.purchase_mix").set_value((80.0, 90.0)).run()
    assert at.text_input(key="w.name").value == "My plan"


def test_a_method_switch_says_what_it_moves_beside_the_total(app):
    at = app.run()
    show_group(at, "Training method")
    at.run()
    at.selectbox(key="w.method").set_value("tst").run()
    lines = [shown(c.value) for c in at.caption if "in place of" in shown(c.value)]
    # The main run's compute, rework and stalls of the default plan as the engine prices it with the baseline method.
    breakdown = scenario_outputs(default_scenario())["cost_breakdown"]
    main_run = breakdown["main_compute"] + breakdown["failure_rework"] + breakdown["checkpoint_stalls"]
    assert len(lines) == 1 and f"TST in place of the baseline method: main run {number(main_run, '$')} → " in lines[0]
    at.selectbox(key="w.method").set_value("baseline").run()
    assert not [c for c in at.caption if "in place of" in shown(c.value)]


def test_a_fix_that_returns_the_plan_to_its_preset_drops_edited(app):
    at = app.run()
    at.selectbox(key="plan.preset").set_value(LLAMA).run()
    show_group(at, "Layout and memory")
    at.run()
    _widget(at, "w.attention").set_value("eager").run()
    assert at.text_input(key="w.name").value == f"{LLAMA} (edited: attention eager)"
    assert [shown(m.value) for m in at.markdown if m.value.startswith("Use ")][0].startswith(
        "Use fused (flash) attention: ")
    at.button(key="plan.fix.0").click().run()
    assert not at.exception
    assert at.text_input(key="w.name").value == LLAMA


def test_an_edited_preset_gains_edited(app):
    at = app.run()
    name = next(n for n in presets() if n.startswith("Llama"))
    at.selectbox(key="plan.preset").set_value(name).run()
    _widget(at, "w.mfu").set_value(30.0)
    at.run()
    assert at.text_input(key="w.name").value == f"{name} (edited: MFU 30 %)"


def test_two_plans_that_differ_in_mfu_get_different_names(app):
    at = _enter_mfu(app.run())
    _widget(at, "w.mfu").set_value(30.0)
    at.run()
    first = at.text_input(key="w.name").value
    _widget(at, "w.mfu").set_value(35.0)
    at.run()
    second = at.text_input(key="w.name").value
    assert (first, second) == ("7B dense, 2T tokens on 512 H100, MFU 30 %", "7B dense, 2T tokens on 512 H100, MFU 35 %")
    assert at.query_params["name"] == second


def test_the_automatic_name_lists_the_prices_and_the_mix(app):
    at = _open_group_of(app.run(), MIX)
    _widget(at, "w.purchase_mix").set_value((50.0, 80.0))
    _widget(at, "w.price_spot_per_gpu_hour").set_value(2.1)
    at.run()
    assert at.text_input(key="w.name").value == (
        "7B dense, 2T tokens on 512 H100, spot 2.10 USD, mix 50 % reserved, 30 % spot")


def test_the_budget_tile_shows_the_overrun_probability_the_engine_computes(app):
    at = app.run()
    mc = monte_carlo(default_scenario(), 10_000, 0)
    result = scenario_outputs(default_scenario())
    assert _metric(at, "Budget").value == budget_status(result["budget_status"], mc.prob_over_budget)
    overrun = f"{catalogue.text('prob_over_budget', mc.prob_over_budget)} chance of overrun"
    assert any(c.value == markdown_text(overrun) for c in at.caption)  # literal text: "$" would start maths
    low, high = (catalogue.text("cost_total_usd", mc.percentile("cost_total_usd", q)) for q in (10, 90))
    assert any(c.value == markdown_text(f"P10–P90 {low}–{high}") for c in at.caption)


def test_a_plan_within_budget_can_be_at_risk(app):
    # The default at an entered MFU of 40 % is within its budget at the point estimate, but a large share of the
    # Monte Carlo draws exceed it.
    app.query_params["mfu"] = "0.4"
    at = app.run()
    scenario = with_overrides(default_scenario(), ["mfu=0.4"])
    assert scenario_outputs(scenario)["budget_status"] == "within"
    assert monte_carlo(scenario, 10_000, 0).prob_over_budget > 0.25
    assert _metric(at, "Budget").value == "at risk"


def test_a_log_slider_shows_the_exact_value(app):
    name = next(n for n in presets() if n.startswith("DeepSeek"))
    at = app.run()
    at.selectbox(key="plan.preset").set_value(name).run()
    assert _widget(at, "w.total_params").value == pytest.approx(671e9)  # not the 700B step
    assert _widget(at, "w.total_params").format_func(671e9) == "671B"
    # DeepSeek-V3's 2,048 H800: the GPU count's label is the count, not "2.048k".
    assert _widget(at, "w.gpu_count").format_func(2048) == "2,048"


@pytest.mark.parametrize(("low", "high", "value", "position"), [
    # 100M–2T: 100M is step 0, each decade 11 steps, so 100B is step 33 and 400B step 39.
    (1e8, 2e12, 405e9, 40),  # Llama 3.1 405B right after the 400B step
    (1e8, 2e12, 671e9, 42),  # DeepSeek-V3 right after 600B (step 41)
    (1e9, 1e14, 15.6e12, 47),  # 1B–100T: 10T is step 44, 15T step 46
    (1e8, 2e12, 4e11, 39),  # a value on a step adds no step
])
def test_log_slider_steps(low, high, value, position):
    # Eleven steps a decade (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8).
    steps = log_grid(low, high)
    assert steps[0] == low and steps[-1] == high
    assert len(steps) == len(set(steps))
    options = log_options(steps, value)
    assert options.index(value) == position
    assert len(options) == len(steps) + (value not in steps)


def test_percent_controls_give_exact_fractions(app):
    at = _enter_mfu(app.run())
    _widget(at, "w.mfu").set_value(35.0)
    at.run()
    assert at.query_params["mfu"] == "0.35"


def test_closing_a_group_keeps_its_values(app):
    at = _open_group_of(app.run(), MIX)
    _widget(at, "w.purchase_mix").set_value((80.0, 90.0))
    at.run()
    with_spot = _tiles(at)
    show_group(at, "Purchase mix and prices", shown=False)
    at.run()
    assert not any(w.key == "w.purchase_mix" for w in at.slider)
    assert _tiles(at) == with_spot
    assert at.query_params["spot_share"] == "0.1"


def test_leaving_the_page_and_coming_back_keeps_the_plan(app):
    at = _enter_mfu(app.run())
    _widget(at, "w.mfu").set_value(30.0)
    at.run()
    planned = _tiles(at)
    at.switch_page("app_pages/method.py").run()
    at.switch_page("app_pages/plan.py").run()
    assert not at.exception
    assert _tiles(at) == planned
    assert _widget(at, "w.mfu").value == pytest.approx(30.0)
    assert _widget(at, MFU_PREDICTED).value is False


def test_uncertainty_tabs_show_the_engine_percentiles_for_the_chosen_draws_and_seed(app):
    at = _open_uncertainty_tabs(app.run())
    at.session_state["plan.mc_draws"] = 1_000
    at.session_state["plan.mc_seed"] = 42
    at.run()
    assert not at.exception
    mc = monte_carlo(default_scenario(), 1_000, 42)
    expected = " · ".join(f"P{q} {number(mc.percentile('cost_total_usd', q), '$')}" for q in (10, 50, 90))
    assert _chart_title(at, "Total cost").startswith(f"Total cost: {expected}")
    assert "of 1,000 triangular draws (seed 42)" in _chart_title(at, "Total cost")
    assert any("1,000 draws, seed 42" in c.value for c in at.caption)


@pytest.mark.parametrize(("link", "badges", "absent"), [
    ({}, ["Failures", "Storage"], ["Spot", "TST"]),  # no spot sentence at 0 % spot
    ({"spot_share": "0.2"}, ["Failures", "Spot", "Storage"], ["TST"]),
    ({"method": "tst"}, ["Failures", "TST", "Storage"], ["Spot"]),
])
def test_what_it_risks_shows_a_badge_for_each_risk_that_applies(app, link, badges, absent):
    for name, value in link.items():
        app.query_params[name] = value
    at = app.run()
    assert not at.exception
    row = next(m.value for m in at.markdown if "-badge[" in m.value and "Failures" in m.value)
    assert all(f"[{topic} · " in row for topic in badges)
    assert not any(f"[{topic} · " in row for topic in absent)


def test_implausible_inputs_warn_and_name_the_lever(app):
    app.query_params["mfu"] = "0.7"
    at = app.run()
    assert any(markdown_text("MFU 70 % is above any published dense training run") in w.value for w in at.warning)


def test_opening_a_stored_scenario_offers_to_pin_the_previous_plan(app):
    at = _enter_mfu(app.run())
    _widget(at, "w.mfu").set_value(30.0)
    at.run()
    at.session_state["plan.handed"] = Scenario(name="Option B", gpu_count=1024)
    at.run()  # as the Compare page's "Open in Plan" leaves it
    assert at.text_input(key="w.name").value == "Option B"
    next(b for b in at.button if b.label == "Pin the previous plan as baseline").click().run()
    assert at.query_params["base.mfu"] == "0.3" and at.query_params["gpu_count"] == "1024"


def test_a_link_without_a_name_is_named_after_its_inputs(app):
    app.query_params["gpu_count"] = "1024"
    at = app.run()
    assert at.text_input(key="w.name").value == "7B dense, 2T tokens on 1,024 H100"


@pytest.mark.parametrize(("origin", "edited", "name"), [
    (default_scenario(), default_scenario(), default_scenario().name),
    (default_scenario(), Scenario(tokens=3e12, gpu_count=1024), "7B dense, 3T tokens on 1,024 H100"),
    (Scenario(name="Ours"), Scenario(name="Ours", mfu=0.3), "Ours (edited: MFU 30 %)"),
    (Scenario(name="Ours (edited)"), Scenario(mfu=0.3), "Ours (edited: MFU 30 %)"),  # not "(edited) (edited…)"
    (Scenario(name="Ours (edited: MFU 30 %)"), Scenario(mfu=0.3, budget_usd=1e6),
     "Ours (edited: MFU 30 %, budget 1M USD)"),  # against the origin's own inputs (MFU predicted)
    # An entered MFU turned back to the layout's prediction (the key unset) names it so.
    (Scenario(name="Ours", mfu=0.4), Scenario(name="Ours"), "Ours (edited: MFU predicted)"),
    (default_scenario(), Scenario(mfu=0.35, reserved_share=0.5, spot_share=0.3),
     "7B dense, 2T tokens on 512 H100, MFU 35 %, mix 50 % reserved, 30 % spot"),
    (Scenario(name="Ours"), Scenario(name="Ours"), "Ours"),
    (Scenario(name="70B dense, 2T tokens on 512 H100", total_params=70e9),
     Scenario(total_params=70e9, active_params=7e9, gpu_type="B200"), "70B MoE (7B active), 2T tokens on 512 B200"),
])
def test_names_follow_the_inputs(origin, edited, name):
    from dashboard.ui.plan_state import follow_name

    assert follow_name(origin, edited) == name


def test_controls_show_what_they_hold(app):
    at = _open_group_of(app.run(), "checkpoint_interval_min")
    gpus = _widget(at, "w.gpu_count.n")
    assert gpus.value == 512 and isinstance(gpus.value, int)  # a whole number, shown without decimals
    assert gpus.proto.format == "%d"
    interval = _widget(at, "w.checkpoint_interval_min")
    assert type(interval).__name__ == "SelectSlider"  # a log slider with an exact box beside it
    assert interval.format_func(30.0) == "30"


@pytest.mark.parametrize(("message", "plain"), [
    ("active_params = 3.7e+10 exceeds total_params = 2e+10",
     "Active parameters (MoE) 37B exceeds Total parameters 20B"),
    ("tensor_parallel = 16 exceeds gpus_per_node = 8: tensor parallelism stays within a node",
     "Tensor parallel (TP) 16 exceeds GPUs per node 8: tensor parallelism stays within a node"),
])
def test_messages_use_the_plan_pages_labels(message, plain):
    from dashboard.ui.plan_state import plain_message

    assert plain_message(message) == plain


@pytest.mark.parametrize(("label", "shown"), [
    ("GPU count", "GPU count"), ("Training tokens (billions)", "training tokens (billions)"), ("MFU (%)", "MFU (%)"),
])
def test_exact_boxes_keep_acronyms(label, shown):
    from dashboard.ui.plan_controls import exact_name

    assert exact_name(label) == shown


def test_a_long_automatic_name_counts_what_does_not_fit_and_stays_storable():
    from dashboard.store.names import validate_name
    from dashboard.ui.plan_state import describe

    # Ten inputs differ from the default: the name lists what fits in 120 characters and counts the rest, with no
    # digest (two such plans may share a name; saving the second offers "name (2)").
    common = dict(mfu=0.35, reserved_share=0.5, spot_share=0.3, price_spot_per_gpu_hour=2.1,
                  price_reserved_per_gpu_hour=3.0, price_on_demand_per_gpu_hour=7.0, budget_usd=1e6,
                  experiment_overhead=2.0, checkpoint_interval_min=60.0)
    name = describe(Scenario(**common, n_layers=40))
    assert name == ("7B dense, 2T tokens on 512 H100, MFU 35 %, reserved 3 USD, on-demand 7 USD, spot 2.10 USD "
                    "and 5 more")
    assert "#" not in name and validate_name(name) == name


# Edited names: (origin, its edit, the name). Readable words, the origin's name kept, no digest, no "(edited)" when
# the inputs are the origin's again (a widget's round trip moves a float by one bit: still the origin's).
LLAMA = "Llama 3.1 405B: 15.6T tokens on 16,384 H100 (final run only)"
EDITED_NAME_CASES = [
    ("attention", {"attention": "eager"}, f"{LLAMA} (edited: attention eager)"),
    ("recompute", {"activation_recompute": "full"}, f"{LLAMA} (edited: full recompute)"),
    ("both", {"attention": "eager", "activation_recompute": "selective"},
     f"{LLAMA} (edited: selective recompute, attention eager)"),
    ("programme", {"programme": [{"kind": "scaling_ladder"}, {"kind": "ablations"}, {"kind": "evaluation"}],
                   "experiment_overhead": 0.0, "eval_overhead": 0.0},
     f"{LLAMA} (edited: + programme: ladder, ablations, evals)"),
    ("method first", {"budget_usd": 2e8, "method": "tst"}, f"{LLAMA} (edited: method TST, budget 200M USD)"),
    ("layout", {"tensor_parallel": 4, "zero_stage": 3}, f"{LLAMA} (edited: TP 4, ZeRO stage 3)"),
    ("one bit off", {"mfu": 0.4 + 1e-16}, LLAMA),  # 0.4000000000000001
    ("too many", {"gpu_count": 1024, "method": "tst", "attention": "eager", "activation_recompute": "full",
                  "budget_usd": 2e8, "mfu": 0.3, "tensor_parallel": 4, "precision": "fp8"},
     f"{LLAMA} (edited: 1,024 GPUs, method TST, MFU 30 % and 5 more)"),
]


@pytest.mark.parametrize(("case", "changes", "name"), EDITED_NAME_CASES, ids=[case[0] for case in EDITED_NAME_CASES])
def test_edited_names_read_as_words(case, changes, name):
    from dashboard.store.names import validate_name
    from dashboard.ui.plan_state import follow_name

    llama = presets()[LLAMA]
    edited = Scenario.model_validate({**llama.to_json_dict(), **changes})
    assert follow_name(llama, edited) == name
    assert len(name) <= 120 and validate_name(name) == name


def test_a_saved_plan_is_the_source_of_its_edits():
    from dashboard.ui.plan_state import describe, follow_name

    saved = Scenario(name=describe(Scenario(gpu_count=1024)), gpu_count=1024)
    tst = Scenario(gpu_count=1024, method="tst")
    assert follow_name(saved, tst) == "7B dense, 2T tokens on 1,024 H100, TST"  # a link's description follows
    assert follow_name(saved, tst, source=True) == "7B dense, 2T tokens on 1,024 H100 (edited: method TST)"
