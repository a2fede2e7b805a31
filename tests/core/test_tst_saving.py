"""One definition of TST's saving: total(baseline) − total(TST) of the same plan, split into its parts, and the same
number in the TST chart's title, the Total cost tile's delta, Compare's Δ and the report."""

import pytest
from bare_plan import COMPUTE_ONLY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.core import compare
from dashboard.core.engine import saving_parts, scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.figures import plan
from dashboard.format import number
from dashboard.report import cells
from dashboard.report.html import tst_saving_text
from dashboard.ui.plan_view import _change as tile_change

# The published TST run (tests/core/test_engine.py): 12,311 B200-hours at $4, TST 4,768.
PUBLISHED = dict(COMPUTE_ONLY, reserved_share=1.0, spot_share=0.0, total_params=10e9, active_params=1e9,
                 tokens=1.05e12, gpu_type="B200", gpu_count=64, mfu=6 * 1e9 * 1.05e12 / (2250e12 * 3600 * 12311),
                 price_reserved_per_gpu_hour=4.0, tst_pilot_fraction=0.1, tst_switching_cost_usd=1000.0)


def test_the_saving_by_hand_with_side_work_and_data():
    # Experiments as large as the main run and $2 per billion tokens; no storage cost (free tiers).
    # Baseline: main 12,311 × 4 = 49,244, side 49,244, data 1.05T × 2 / 1e9 = 2,100 -> 100,588.
    # TST: main 4,768 × 4 = 19,072, side 19,072, data 2T × 2 / 1e9 = 4,000, pilot 4,924.4, switching 1,000 -> 48,068.4.
    scenario = Scenario(**{**PUBLISHED, "experiment_overhead": 1.0, "data_cost_per_billion_tokens": 2.0})
    tst = scenario_outputs(scenario)["tst"]
    assert tst["baseline_cost_usd"] == pytest.approx(100_588.0)
    assert tst["tst_cost_usd"] == pytest.approx(48_068.4)
    assert tst["net_savings_usd"] == pytest.approx(52_519.6)
    assert dict(saving_parts(tst)) == pytest.approx({
        "main run": 30_172.0, "experiments, evaluation, debugging": 30_172.0, "data processing": -1_900.0,
        "storage": 0.0, "pilot": -4_924.4, "switching": -1_000.0,
    })
    # Plan GPU-hours count the side work: 12,311 × 2 = 24,622 against 4,768 × 2 = 9,536.
    assert (tst["baseline_plan_gpu_hours"], tst["tst_plan_gpu_hours"]) == pytest.approx((24_622.0, 9_536.0))
    assert (tst["baseline_gpu_hours"], tst["tst_gpu_hours"]) == pytest.approx((12_311.0, 4_768.0))
    # The chart, the report and the Total cost tile say $52.5k.
    assert plan.tst_figure(tst, None).layout.title.text.startswith("Switching to TST saves $52.5k (52 %")
    assert "saves $52.5k ($101k with the baseline, $48.1k with TST)" in tst_saving_text(tst)


PLANS = st.fixed_dictionaries({
    "tokens": st.floats(1e11, 2e13),
    "total_params": st.floats(1e9, 1e11),
    "mfu": st.floats(0.2, 0.6),
    "gpu_count": st.sampled_from([64, 256, 512, 2048]),
    "tst_speedup": st.floats(1.0, 5.0),
    "tst_token_multiplier": st.floats(1.0, 3.0),
    "tst_pilot_fraction": st.floats(0.0, 0.5),
    "tst_switching_cost_usd": st.floats(0.0, 2e6),
    "experiment_overhead": st.floats(0.0, 2.0),
    "eval_overhead": st.floats(0.0, 0.2),
    "data_cost_per_billion_tokens": st.floats(0.0, 20.0),
    "checkpoint_interval_min": st.floats(10.0, 240.0),
    "storage_retention_months": st.floats(0.0, 24.0),
    "spot_share": st.floats(0.0, 0.5),
})


def _shown_saving(text: str) -> str:
    """The money figure in a delta ("-$230k" -> "$230k")."""
    return text.lstrip("+-")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PLANS)
def test_the_saving_is_the_difference_of_the_two_plans_totals_everywhere(keys):
    baseline_plan = Scenario(**keys, reserved_share=0.0)
    tst_plan = baseline_plan.model_copy(update={"method": "tst"})
    baseline, with_tst = scenario_outputs(baseline_plan), scenario_outputs(tst_plan)
    difference = baseline["cost_total_usd"] - with_tst["cost_total_usd"]
    tst = baseline["tst"]
    # The engine's comparison is the same from either plan, and its saving is the difference of the totals.
    for key, value in tst.items():
        assert with_tst["tst"][key] == pytest.approx(value, rel=1e-9, abs=1e-6), key
    assert tst["baseline_cost_usd"] == pytest.approx(baseline["cost_total_usd"], rel=1e-9)
    assert tst["tst_cost_usd"] == pytest.approx(with_tst["cost_total_usd"], rel=1e-9)
    assert tst["net_savings_usd"] == pytest.approx(difference, rel=1e-9, abs=1e-6)
    assert sum(value for _, value in saving_parts(tst)) == pytest.approx(difference, rel=1e-9, abs=1e-6)
    assert tst["baseline_plan_gpu_hours"] == pytest.approx(baseline["gpu_hours_total"], rel=1e-9)
    assert tst["tst_plan_gpu_hours"] == pytest.approx(with_tst["gpu_hours_total"], rel=1e-9)

    # The same figure at the displayed precision: chart title, report, the tile's delta and Compare's Δ.
    shown = number(abs(tst["net_savings_usd"]), "$")
    verb = "saves" if tst["net_savings_usd"] >= 0 else "costs"
    assert f"{verb} {shown} (" in plan.tst_figure(tst, None).layout.title.text
    assert f" {shown} (" in tst_saving_text(tst)
    tile = tile_change("cost_total_usd", with_tst["cost_total_usd"], baseline["cost_total_usd"])
    compared = cells.format_delta(compare.OUTPUT_SECTION, "cost_total_usd", with_tst["cost_total_usd"],
                                  baseline["cost_total_usd"])
    assert tile == compared
    if compared != "≈ same":  # a change of at least half a percent: TST's total minus the baseline's
        assert compared == ("-" if difference > 0 else "+") + shown


def test_the_default_plan_says_one_saving_everywhere():
    baseline_plan = Scenario()
    baseline = scenario_outputs(baseline_plan)
    with_tst = scenario_outputs(baseline_plan.model_copy(update={"method": "tst"}))
    shown = number(baseline["cost_total_usd"] - with_tst["cost_total_usd"], "$")
    title = plan.tst_figure(baseline["tst"], None).layout.title.text
    assert f"saves {shown} (" in title
    assert tile_change("cost_total_usd", with_tst["cost_total_usd"], baseline["cost_total_usd"]) == f"-{shown}"
    # The experiments, evaluation and debugging overheads (1.1× the main run) shrink with it: more than half of it.
    parts = dict(saving_parts(baseline["tst"]))
    assert parts["experiments, evaluation, debugging"] > parts["main run"] > 0
