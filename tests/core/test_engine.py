"""The whole plan model on scenarios whose results are worked out by hand or published."""

import numpy as np
import pytest
from bare_plan import COMPUTE_ONLY

from dashboard.core.engine import LINE_ITEMS, output_arrays, scenario_arrays, scenario_outputs
from dashboard.core.scenario import Scenario

# No failures, no stalls, no extras, all reserved: the plan is compute only.
BARE = {key: value for key, value in COMPUTE_ONLY.items() if key != "mfu"} | {"reserved_share": 1.0, "spot_share": 0.0}

# TST reference run (arXiv 2605.06546): 10B-A1B MoE on B200, baseline 1.05T tokens in 12,311 GPU-hours.
TST_MFU = 6 * 1e9 * 1.05e12 / (2250e12 * 3600 * 12311)


def test_bare_plan_is_gpu_hours_times_price():
    # Llama 3.1 405B at 40 % MFU on H100 with reserved capacity at $2: 26.6M GPU-h -> $53.2M.
    result = scenario_outputs(Scenario(**BARE, total_params=405e9, tokens=15.6e12, mfu=0.4, gpu_count=16384,
                               price_reserved_per_gpu_hour=2.0, budget_usd=1e9))
    assert result["gpu_hours_total"] == pytest.approx(26.6e6, rel=2e-3)
    assert result["cost_total_usd"] == pytest.approx(53.2e6, rel=2e-3)
    assert result["wall_clock_days"] == pytest.approx(26.6e6 / 16384 / 24, rel=2e-3)
    assert result["overhead_fraction"] == 0.0


def test_tst_reproduces_the_published_run():
    # Baseline 12,311 B200-hours; with the default speedup 12,311/4,768 TST needs exactly 4,768, reading 2T tokens.
    scenario = Scenario(**BARE, total_params=10e9, active_params=1e9, tokens=1.05e12, gpu_type="B200",
                        gpu_count=64, mfu=TST_MFU, price_reserved_per_gpu_hour=4.0, tst_pilot_fraction=0.1,
                        tst_switching_cost_usd=1000.0)
    tst = scenario_outputs(scenario)["tst"]
    assert TST_MFU == pytest.approx(0.063, abs=1e-3)  # published-facts §6: "only ≈6 % MFU"
    assert tst["baseline_gpu_hours"] == pytest.approx(12311)
    assert tst["tst_gpu_hours"] == pytest.approx(4768)
    assert tst["tst_tokens"] == pytest.approx(2e12)
    # $: baseline 12,311·4 = 49,244; TST 4,768·4 = 19,072; pilot 10 % of 49,244; switching 1,000. The bare plan
    # has nothing else, so its totals are: baseline 49,244, TST 19,072 + 4,924.4 + 1,000 = 24,996.4.
    assert tst["baseline_cost_usd"] == pytest.approx(49_244)
    assert tst["tst_cost_usd"] == pytest.approx(24_996.4)
    assert tst["pilot_cost_usd"] == pytest.approx(4_924.4)
    assert tst["net_savings_usd"] == pytest.approx(49_244 - 19_072 - 4_924.4 - 1_000)
    assert tst["saving_main_run_usd"] == pytest.approx(49_244 - 19_072)


def test_tst_method_prices_the_tst_run_and_its_extra_line_items():
    scenario = Scenario(**BARE, total_params=10e9, active_params=1e9, tokens=1.05e12, gpu_type="B200",
                        gpu_count=64, mfu=TST_MFU, price_reserved_per_gpu_hour=4.0, method="tst",
                        tst_pilot_fraction=0.1, tst_switching_cost_usd=1000.0)
    result = scenario_outputs(scenario)
    assert result["gpu_hours_total"] == pytest.approx(4768)
    assert result["cost_breakdown"]["tst_pilot"] == pytest.approx(4_924.4)
    assert result["cost_breakdown"]["tst_switching"] == 1000.0
    assert result["cost_total_usd"] == pytest.approx(19_072 + 4_924.4 + 1000.0)
    assert result["raw_tokens"] == pytest.approx(2e12)


def test_overheads_add_gpu_hours_by_hand():
    # 8 GPUs = 1 node at 24 failures per 1,000 node-days -> M = 1000/24 days = 1,000 h.
    # τ = 60 min, δ = 36 s = 0.01 h, restart 30 min: stall 0.01/1 = 1 %, rework (0.5 + 0.5)/1000 = 0.1 %.
    scenario = Scenario(**{**BARE, "checkpoint_async": False, "node_failures_per_1000_node_days": 24.0,
                           "experiment_overhead": 0.5, "eval_overhead": 0.1, "debug_overhead": 0.1},
                        gpu_count=8, checkpoint_interval_min=60, checkpoint_write_s=36, restart_min=30)
    result = scenario_outputs(scenario)
    ideal = result["gpu_hours_ideal"]
    assert result["job_mtbf_hours"] == pytest.approx(1000.0)
    assert result["gpu_hours_stall"] == pytest.approx(0.01 * ideal)
    assert result["gpu_hours_rework"] == pytest.approx(0.001 * ideal)
    assert result["gpu_hours_total"] == pytest.approx(ideal * 1.011 * 1.7)


def test_spot_share_adds_interruptions_and_blends_price():
    # 50 % reserved at $3, 30 % spot at $1, 20 % on demand at $8: 1.5 + 0.3 + 1.6 = $3.40.
    # Spot reclaims 10 per 1,000 node-days on the spot share: 2 + 0.3·10 = 5 per 1,000 node-days.
    scenario = Scenario(reserved_share=0.5, spot_share=0.3, price_reserved_per_gpu_hour=3.0,
                        price_spot_per_gpu_hour=1.0, price_on_demand_per_gpu_hour=8.0,
                        node_failures_per_1000_node_days=2.0, spot_interruptions_per_1000_node_days=10.0,
                        gpu_count=80, gpus_per_node=8)
    result = scenario_outputs(scenario)
    assert result["blended_price_per_gpu_hour"] == pytest.approx(3.40)
    assert result["job_mtbf_hours"] == pytest.approx(24 * 1000 / (5 * 10))


@pytest.mark.parametrize(
    ("budget_usd", "status"),
    # The bare Llama plan costs $53.2M; the warning threshold is 90 % of the budget.
    [(100e6, "within"), (58e6, "warning"), (50e6, "over")],
)
def test_budget_status(budget_usd, status):
    result = scenario_outputs(Scenario(**BARE, total_params=405e9, tokens=15.6e12, mfu=0.4, gpu_count=16384,
                               price_reserved_per_gpu_hour=2.0, budget_usd=budget_usd))
    assert result["budget_status"] == status


def test_breakdown_sums_to_total_and_has_every_line_item():
    result = scenario_outputs(Scenario())
    assert set(result["cost_breakdown"]) == set(LINE_ITEMS)
    assert sum(result["cost_breakdown"].values()) == pytest.approx(result["cost_total_usd"])
    assert result["cost_per_million_tokens"] == pytest.approx(result["cost_total_usd"] / 2e6)


def test_vectorised_batch_equals_one_at_a_time():
    scenarios = [Scenario(), Scenario(method="tst", gpu_type="B200"), Scenario(spot_share=0.2, mfu=0.3),
                 Scenario(total_params=671e9, active_params=37e9, tokens=14.8e12, gpu_type="H800",
                          scaling_fit="hoffmann2022", attention_flops=True, activation_recompute=True)]
    batch = output_arrays(scenario_arrays(scenarios))
    for i, scenario in enumerate(scenarios):
        single = scenario_outputs(scenario)
        assert batch["cost_total_usd"][i] == single["cost_total_usd"]
        assert batch["gpu_hours_total"][i] == single["gpu_hours_total"]
        assert batch["predicted_loss"][i] == single["predicted_loss"]
        assert batch["tst"]["net_savings_usd"][i] == single["tst"]["net_savings_usd"]


def test_predicted_loss_uses_the_chosen_fit():
    # Chinchilla 70B / 1.4T: 1.937 (Hoffmann) and 1.974 (Epoch).
    for fit, expected in (("hoffmann2022", 1.937), ("epoch2024", 1.974)):
        result = scenario_outputs(Scenario(total_params=70e9, tokens=1.4e12, scaling_fit=fit))
        assert result["predicted_loss"] == pytest.approx(expected, abs=1e-3)


def test_storage_peak_counts_every_tier():
    # 7B · 14 B = 98 GB checkpoints. Keep 2, archive every 5th. Run: 8 GPUs, bare compute.
    scenario = Scenario(**{**BARE, "keep_last_checkpoints": 2, "archive_every_nth": 5, "dataset_bytes_per_token": 2.0,
                           "logs_gb_per_day": 24.0}, tokens=1e11, gpu_count=8, dataset_versions=1,
                        checkpoint_interval_min=60)
    result = scenario_outputs(scenario)
    run_hours = result["gpu_hours_main_run"] / 8
    checkpoints = np.floor(run_hours)
    expected = 98 * min(checkpoints, 3) + 98 * np.floor(checkpoints / 5) + 1e11 * 2 / 1e9 + run_hours
    assert result["storage_peak_gb"] == pytest.approx(expected)
