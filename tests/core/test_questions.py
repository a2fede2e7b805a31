"""The three questions: budget -> model, target loss -> fewest GPU-hours, plan -> loss."""

import pytest

from dashboard.core import scaling
from dashboard.core.engine import scenario_outputs
from dashboard.core.questions import optimal_for_budget, optimal_for_target_loss
from dashboard.core.scenario import Scenario


def test_budget_answer_spends_the_budget_compute_optimally():
    scenario = Scenario(mfu=0.4)  # an entered MFU: cost grows smoothly with compute
    answer = optimal_for_budget(scenario, 5e6)
    assert answer["cost_usd"] == pytest.approx(5e6, rel=1e-6)
    fit = scaling.FITS["epoch2024"]
    n_opt, d_opt = scaling.compute_optimal(6 * answer["active_params"] * answer["tokens"], fit.A, fit.B,
                                           fit.alpha, fit.beta)
    assert answer["active_params"] == pytest.approx(n_opt)
    # The Epoch refit keeps roughly 20 tokens per parameter (anchors §4.1: D/N 17-22).
    assert 15 < answer["tokens_per_param"] < 23


def test_with_a_predicted_mfu_the_budget_answer_never_passes_the_budget():
    # The predicted MFU changes with the model's shape and layout, so the cost can jump as the size grows: the answer
    # stays at or below the budget, and a tenth more budget never buys less compute.
    answer = optimal_for_budget(Scenario(), 5e6)
    assert answer["cost_usd"] <= 5e6
    more = optimal_for_budget(Scenario(), 5.5e6)
    assert more["cost_usd"] <= 5.5e6
    assert 6 * more["active_params"] * more["tokens"] >= 6 * answer["active_params"] * answer["tokens"]


def test_budget_answer_keeps_the_moe_ratio():
    answer = optimal_for_budget(Scenario(total_params=80e9, active_params=10e9), 2e6)
    assert answer["total_params"] == pytest.approx(8 * answer["active_params"])


def test_target_loss_answer_reaches_the_loss_at_the_compute_optimum():
    scenario = Scenario(scaling_fit="hoffmann2022")
    answer = optimal_for_target_loss(scenario, 2.0)
    assert answer["predicted_loss"] == pytest.approx(2.0, abs=1e-9)
    # Any other split of the same FLOPs gives a higher loss, so no plan reaches 2.0 with fewer FLOPs.
    f = scaling.FITS["hoffmann2022"]
    for factor in (0.7, 1.4):
        other = scaling.predicted_loss(answer["active_params"] * factor, answer["tokens"] / factor, f.E, f.A, f.B,
                                       f.alpha, f.beta)
        assert other > 2.0
    check = scenario_outputs(
        scenario.model_copy(update={"total_params": answer["total_params"], "tokens": answer["tokens"]})
    )
    assert answer["gpu_hours"] == pytest.approx(check["gpu_hours_total"])


@pytest.mark.parametrize(("fit", "floor"), [("epoch2024", 1.8172), ("hoffmann2022", 1.69)])
def test_unreachable_target_names_the_irreducible_loss(fit, floor):
    with pytest.raises(ValueError, match=f"irreducible loss E is {floor:g}"):
        optimal_for_target_loss(Scenario(scaling_fit=fit), floor)


def test_plan_loss_is_the_fit_at_the_plan():
    plan = Scenario(total_params=70e9, tokens=1.4e12, scaling_fit="hoffmann2022")
    assert scenario_outputs(plan)["predicted_loss"] == pytest.approx(1.937, abs=1e-3)
