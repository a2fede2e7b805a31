"""Plan-page curves: checkpoint interval, spot share and model size, checked by hand and against published figures."""

import math

import numpy as np
import pytest
from bare_plan import COMPUTE_ONLY

from dashboard.core import sweeps
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario

# Cost is compute GPU-hours times the blended price.
BARE = {**COMPUTE_ONLY, "budget_usd": 1e9}

# One node (8 GPUs): M = 24 h · 1000 / rate. Daly 2006's examples with δ = 5 min (docs/method.md: M 24 h → 116.7 min,
# M 6 h → 56.7 min); Young √(2δM) is 120 min and 60 min.
DALY_CASES = [
    pytest.param(1000.0, 116.7, 120.0, id="M=24h"),
    pytest.param(4000.0, 56.7, 60.0, id="M=6h"),
]


@pytest.mark.parametrize(("failures_per_1000_node_days", "daly_min", "young_min"), DALY_CASES)
def test_overhead_minimum_sits_at_the_young_daly_optimum(failures_per_1000_node_days, daly_min, young_min):
    scenario = Scenario(gpu_count=8, node_failures_per_1000_node_days=failures_per_1000_node_days,
                        checkpoint_write_s=300.0, checkpoint_interval_min=30.0)
    curve = sweeps.checkpoint_tradeoff(scenario)
    best_min = curve.interval_min[curve.overhead_pct.idxmin()]
    # δ/τ + τ/2M is smallest at Young's τ; Daly's higher-order interval is within 3 % of it.
    assert best_min == pytest.approx(young_min, rel=0.03)
    assert best_min == pytest.approx(daly_min, rel=0.06)
    assert scenario_outputs(scenario)["checkpoint_interval_daly_min"] == pytest.approx(daly_min, abs=0.05)


@pytest.mark.parametrize(
    ("current_min", "failures_per_1000_node_days", "low_min", "high_min"),
    [
        pytest.param(30.0, 1000.0, 3.0, 1200.0, id="current-below-optimum"),  # optimum 116.7-120 min
        pytest.param(600.0, 1000.0, 11.67, 6000.0, id="current-above-optimum"),
        pytest.param(30.0, 0.0, 3.0, 300.0, id="no-failures"),  # infinite MTBF: no optimum, current only
    ],
)
def test_checkpoint_grid_spans_current_and_optimum(current_min, failures_per_1000_node_days, low_min, high_min):
    scenario = Scenario(gpu_count=8, node_failures_per_1000_node_days=failures_per_1000_node_days,
                        checkpoint_write_s=300.0, checkpoint_interval_min=current_min)
    curve = sweeps.checkpoint_tradeoff(scenario, points=50)
    assert len(curve) == 50
    assert curve.interval_min.iloc[0] == pytest.approx(low_min, rel=1e-3)
    assert curve.interval_min.iloc[-1] == pytest.approx(high_min, rel=1e-3)
    steps = np.diff(np.log(curve.interval_min.to_numpy()))
    assert steps == pytest.approx(np.full(49, math.log(high_min / low_min) / 49), rel=1e-3)


def test_checkpoint_overheads_by_hand():
    # 1 node at 24 failures per 1,000 node-days: M = 1,000 h = 60,000 min; δ = 36 s = 0.6 min; restart 30 min.
    scenario = Scenario(gpu_count=8, node_failures_per_1000_node_days=24.0, checkpoint_write_s=36.0,
                        restart_min=30.0, checkpoint_interval_min=60.0)
    curve = sweeps.checkpoint_tradeoff(scenario)
    tau = curve.interval_min.to_numpy()
    assert curve.stall_pct.to_numpy() == pytest.approx(100 * 0.6 / tau)
    assert curve.rework_pct.to_numpy() == pytest.approx(100 * (tau / 2 + 30) / 60_000)
    assert curve.overhead_pct.to_numpy() == pytest.approx(curve.stall_pct + curve.rework_pct)


@pytest.mark.parametrize(
    ("asynchronous", "failures_per_1000_node_days"),
    [pytest.param(True, 3.79, id="async"), pytest.param(False, 0.0, id="no-failures")],
)
def test_checkpoint_curve_without_stalls_or_without_rework(asynchronous, failures_per_1000_node_days):
    scenario = Scenario(checkpoint_async=asynchronous, node_failures_per_1000_node_days=failures_per_1000_node_days)
    curve = sweeps.checkpoint_tradeoff(scenario)
    assert np.isfinite(curve.to_numpy()).all()
    if asynchronous:
        assert (curve.stall_pct == 0).all()
        assert curve.overhead_pct.to_numpy() == pytest.approx(curve.rework_pct.to_numpy())
    else:
        assert (curve.rework_pct == 0).all()
        assert curve.overhead_pct.is_monotonic_decreasing


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({}, id="default-no-spot"),
        pytest.param({"reserved_share": 0.5, "spot_share": 0.3}, id="mixed"),
        pytest.param({"reserved_share": 0.0, "spot_share": 1.0}, id="all-spot"),
        pytest.param({"reserved_share": 0.2, "spot_share": 0.37, "method": "tst"}, id="off-grid-share-tst"),
    ],
)
def test_spot_curve_at_the_scenario_share_is_the_estimate(overrides):
    scenario = Scenario(**overrides)
    curve = sweeps.spot_share_curve(scenario)
    row = curve[curve.spot_share == scenario.spot_share]
    assert len(row) == 1
    result = scenario_outputs(scenario)
    items = result["cost_breakdown"]
    assert row.cost_total_usd.item() == pytest.approx(result["cost_total_usd"])
    assert row.compute_usd.item() == pytest.approx(
        items["main_compute"] + items["checkpoint_stalls"] + items["experiments"] + items["evaluation"]
        + items["debugging"]
    )
    assert row.rework_usd.item() == pytest.approx(items["failure_rework"])
    assert curve.spot_share.iloc[0] == 0.0
    assert curve.spot_share.iloc[-1] == 1.0
    assert len(curve) in (51, 52)


@pytest.mark.parametrize(
    ("reserved_share", "spot_share", "price_at"),
    [
        # $3 reserved, $1 spot, $8 on demand. From 50/30/20: reserved : on-demand stays 5 : 2.
        # s = 0: 5/7·3 + 2/7·8 = 31/7; s = 0.3: 1.5 + 0.3 + 1.6 = 3.40; s = 1: $1.
        pytest.param(0.5, 0.3, {0.0: 31 / 7, 0.3: 3.40, 1.0: 1.0}, id="keeps-ratio"),
        # All spot: the rest is reserved. s = 0: $3; s = 0.5: $2.
        pytest.param(0.0, 1.0, {0.0: 3.0, 0.5: 2.0, 1.0: 1.0}, id="all-spot-rest-reserved"),
        # No on-demand: reserved(s) = 1 − s. s = 0.2: 0.8·3 + 0.2·1 = 2.60.
        pytest.param(0.6, 0.4, {0.2: 2.60, 0.4: 2.20}, id="no-on-demand"),
    ],
)
def test_spot_curve_prices_the_share_rule_by_hand(reserved_share, spot_share, price_at):
    scenario = Scenario(**BARE, reserved_share=reserved_share, spot_share=spot_share, price_reserved_per_gpu_hour=3.0,
                        price_spot_per_gpu_hour=1.0, price_on_demand_per_gpu_hour=8.0)
    curve = sweeps.spot_share_curve(scenario, points=11).set_index("spot_share")
    gpu_hours = scenario_outputs(scenario)["gpu_hours_total"]
    for share, price in price_at.items():
        assert curve.cost_total_usd[share] == pytest.approx(gpu_hours * price)
        assert curve.compute_usd[share] == pytest.approx(gpu_hours * price)
        assert curve.rework_usd[share] == 0.0


def test_free_spot_interruptions_make_spot_cheaper_all_the_way():
    # Spot at $2.42 against a blended $3.496 (0.8·2.65 + 0.2·6.88) with no extra interruptions.
    scenario = Scenario(spot_interruptions_per_1000_node_days=0.0)
    curve = sweeps.spot_share_curve(scenario)
    assert (np.diff(curve.cost_total_usd) < 0).all()
    assert (np.diff(curve.rework_usd) < 0).all()  # same rework hours, cheaper hours


def test_spot_interruptions_add_rework_hours():
    # 64 nodes; rate 3.79 → 3.79 + 3.3 per 1,000 node-days at all spot: rework hours grow by 7.09/3.79.
    scenario = Scenario(reserved_share=1.0, price_spot_per_gpu_hour=2.65)  # equal prices: $ follow hours
    curve = sweeps.spot_share_curve(scenario, points=3)
    ratio = curve.rework_usd.iloc[-1] / curve.rework_usd.iloc[0]
    assert ratio == pytest.approx(7.09 / 3.79, rel=1e-3)


# Fit constants as published (docs/method.md §2), typed here independently of the code.
FIT_CONSTANTS = {
    "epoch2024": (1.8172, 482.01, 2085.43, 0.3478, 0.3658),
    "hoffmann2022": (1.69, 406.4, 410.7, 0.34, 0.28),
}


def _hand_optimum(flops, fit):
    E, A, B, alpha, beta = FIT_CONSTANTS[fit]
    g = (alpha * A / (beta * B)) ** (1 / (alpha + beta))
    params = g * (flops / 6) ** (beta / (alpha + beta))
    tokens = flops / 6 / params
    return params, tokens, E + A / params**alpha + B / tokens**beta


@pytest.mark.parametrize(
    ("fit", "active_params", "tokens", "flops"),
    [
        pytest.param("epoch2024", 7e9, 2e12, 8.4e22, id="default-7B-2T"),
        pytest.param("hoffmann2022", 70e9, 1.4e12, 5.88e23, id="chinchilla-70B-1.4T"),
        pytest.param("epoch2024", 1e8, 1e13, 6e21, id="far-from-optimal"),
    ],
)
def test_scaling_curve_minimum_is_the_compute_optimum(fit, active_params, tokens, flops):
    scenario = Scenario(total_params=active_params, tokens=tokens, scaling_fit=fit)
    curve, points = sweeps.scaling_curve(scenario)
    params_opt, tokens_opt, loss_opt = _hand_optimum(flops, fit)
    assert points["model_flops"] == pytest.approx(flops)
    assert points["optimal"]["active_params"] == pytest.approx(params_opt)
    assert points["optimal"]["tokens"] == pytest.approx(tokens_opt)
    assert points["optimal"]["predicted_loss"] == pytest.approx(loss_opt)
    best = curve.loc[curve.predicted_loss.idxmin()]
    assert best.active_params == pytest.approx(params_opt)
    assert best.predicted_loss == pytest.approx(loss_opt)
    assert (6 * curve.active_params * curve.tokens).to_numpy() == pytest.approx(flops)
    assert curve.active_params.is_monotonic_increasing
    # The plan lies on the curve (no attention term) and the grid reaches it with a margin.
    on_curve = curve[curve.active_params == active_params]
    assert on_curve.predicted_loss.item() == pytest.approx(points["plan"]["predicted_loss"])
    assert curve.active_params.iloc[0] <= min(params_opt / 30, active_params / 2) * (1 + 1e-9)
    assert curve.active_params.iloc[-1] >= max(params_opt * 30, active_params * 2) * (1 - 1e-9)
    assert 80 <= len(curve) <= 82


def test_scaling_curve_plan_reproduces_chinchilla():
    # Chinchilla 70B on 1.4T tokens predicts 1.937 with the Hoffmann et al. fit (docs/method.md cross-check).
    _, points = sweeps.scaling_curve(Scenario(total_params=70e9, tokens=1.4e12, scaling_fit="hoffmann2022"))
    assert points["plan"] == pytest.approx({"active_params": 70e9, "tokens": 1.4e12, "predicted_loss": 1.937}, abs=5e-4)


def test_epoch_fit_optimum_is_about_twenty_tokens_per_parameter():
    # Chinchilla's rule of thumb (~20 tokens per parameter), which the Epoch refit is reported to agree with.
    _, points = sweeps.scaling_curve(Scenario())
    optimum = points["optimal"]
    assert 15 < optimum["tokens"] / optimum["active_params"] < 25


def test_scaling_curve_uses_active_params_and_counts_attention_in_compute():
    # MoE 10B total / 1B active on 1T tokens: C = 6e21. With the attention term (12·24·2048·4096 / 2 FLOPs per token,
    # causal, at the shape assumed from the 1B active: GPT-3 XL's 24 layers × 2,048) C grows by 1.2e9·1e12 and the
    # plan's own D is below C / (6N): it sits above the curve.
    moe = dict(total_params=10e9, active_params=1e9, tokens=1e12)
    _, points = sweeps.scaling_curve(Scenario(**moe))
    assert points["model_flops"] == pytest.approx(6e21)
    curve, points = sweeps.scaling_curve(Scenario(**moe, attention_flops=True))
    assert points["model_flops"] == pytest.approx(6e21 + 12 * 24 * 2048 * 4096 / 2 * 1e12)
    at_plan = curve[curve.active_params == 1e9]
    assert at_plan.tokens.item() > 1e12
    assert points["plan"]["predicted_loss"] > at_plan.predicted_loss.item()
