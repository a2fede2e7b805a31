"""Risk in words: budget status with the overrun probability, the headline range, plausibility and risk notes."""

import numpy as np
import pytest

from dashboard.core import risk
from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.core.uncertainty import INPUTS, MonteCarlo, TornadoBar


@pytest.mark.parametrize(("status", "probability", "shown"), [
    ("within", 0.19, "within"),
    ("within", 0.20, "within"),  # at the threshold, not above it
    ("within", 0.21, "at risk"),
    ("warning", 0.48, "at risk"),
    ("warning", 0.05, "warning"),
    ("over", 0.95, "over"),
    ("over", 0.0, "over"),
])
def test_budget_status(status, probability, shown):
    assert risk.budget_status(status, probability) == shown


@pytest.mark.parametrize(("status", "probability", "feasible", "shown"), [
    ("within", None, True, "within"),  # no Monte Carlo: the point estimate's status
    ("warning", None, True, "warning"),
    ("within", 0.0, False, "infeasible"),  # a plan that cannot run buys nothing, however cheap
    ("over", 0.95, False, "infeasible"),
    ("within", None, False, "infeasible"),
])
def test_budget_status_of_a_plan_that_cannot_run(status, probability, feasible, shown):
    assert risk.budget_status(status, probability, feasible=feasible) == shown


def _mc(costs_usd, point_usd, budget_usd, tornado=()):
    samples = {"cost_total_usd": np.asarray(costs_usd, dtype=float)}
    return MonteCarlo(draws=len(costs_usd), seed=0, shape="triangular", budget_usd=budget_usd,
                      point={"cost_total_usd": point_usd}, samples=samples, tornado=tuple(tornado))


def test_headline_of_hundred_draws():
    # Draws $1k … $100k; the budget $90k is exceeded by 10 of them; the $5k point estimate is at P5.
    mc = _mc(np.arange(1, 101) * 1000.0, 5000.0, 90_000.0)
    head = risk.headline({"budget_status": "within", "feasible": True}, mc)
    assert head.range_text == "P10–P90 $10.9k–$90.1k"  # numpy's linear percentiles: 1 + 0.1·99 = 10.9
    assert head.overrun_text == "10 % chance of overrun"
    assert head.status == "within"
    assert head.optimism == "The estimate is optimistic: it is at P5 of the range."


def test_a_point_estimate_in_the_middle_is_not_called_optimistic():
    mc = _mc(np.arange(1, 101) * 1000.0, 50_000.0, 40_000.0)
    head = risk.headline({"budget_status": "within", "feasible": True}, mc)
    assert head.optimism is None
    assert head.status == "at risk"  # 60 of 100 draws above $40k
    assert risk.headline({"budget_status": "within", "feasible": False}, mc).status == "infeasible"


def test_plausibility_flags_dense_mfu_above_published_runs_only():
    dense = Scenario(mfu=0.65)
    notes = risk.plausibility(dense, scenario_outputs(dense))
    assert [n.topic for n in notes] == ["MFU"]
    assert "65 %" in notes[0].sentence
    moe = Scenario(mfu=0.65, active_params=1e9)
    assert risk.plausibility(moe, scenario_outputs(moe)) == []
    assert risk.plausibility(default_scenario(), scenario_outputs(default_scenario())) == []


def test_rework_heavy_overhead_names_the_interval_lever():
    llama = next(s for n, s in presets().items() if n.startswith("Llama"))
    notes = risk.plausibility(llama, scenario_outputs(llama))
    assert [n.topic for n in notes] == ["Overhead"]
    assert "Daly optimum" in notes[0].sentence and "30 min" in notes[0].sentence


def test_stall_heavy_overhead_names_bandwidth_and_async():
    # 70B × 14 bytes = 980 GB written at 1 GB/s: 980 s every 30 min is a 54 % stall.
    slow = Scenario(total_params=70e9, checkpoint_write_gb_per_s=1.0)
    notes = risk.plausibility(slow, scenario_outputs(slow))
    assert [n.topic for n in notes] == ["Overhead"]
    assert "980 s" in notes[0].sentence and "1 GB/s" in notes[0].sentence and "asynchronous" in notes[0].sentence


@pytest.mark.parametrize(("overrides", "topics"), [
    ({}, ["Failures", "Storage"]),  # no spot sentence at 0 % spot, no TST sentence for the baseline
    ({"spot_share": 0.2}, ["Failures", "Spot", "Storage"]),
    ({"method": "tst"}, ["Failures", "TST", "Storage"]),
])
def test_risk_notes_apply_only_when_they_apply(overrides, topics):
    scenario = Scenario(**overrides)
    assert [n.topic for n in risk.risks(scenario, scenario_outputs(scenario))] == topics


def test_risk_notes_use_storage_units():
    notes = {n.topic: n for n in risk.risks(default_scenario(), scenario_outputs(default_scenario()))}
    assert "98 GB" in notes["Failures"].sentence  # 7B × 14 bytes
    assert notes["Storage"].badge.endswith(" TB")  # the 2T-token corpus alone is 2 copies × 8 TB


@pytest.mark.parametrize(("months", "period"), [
    (0, "over the run;"),
    # Kept after training: the 2T-token corpus (2 copies × 8,000 GB), 10 weight archives of 7B × 2 bytes (140 GB),
    # the last 3 checkpoints of 98 GB (294 GB) and 4.847 days of logs at 5 GB/day (24.2 GB): 16,458 GB.
    # × $0.023/GB-month (the default cold tier, S3 Standard) × 12 months = $4,542
    (12, "over the run and the 12 months kept after it ($4.54k of it after training);"),
    (1, "over the run and the 1 month kept after it ($379 of it after training);"),  # 16,458 GB × $0.023 × 1
])
def test_the_storage_sentence_says_what_its_cost_covers(months, period):
    scenario = Scenario(storage_retention_months=months)
    notes = {n.topic: n for n in risk.risks(scenario, scenario_outputs(scenario))}
    assert period in notes["Storage"].sentence


def test_top_lever_sentence():
    mfu = next(item for item in INPUTS if item.key == "mfu")
    tokens = next(item for item in INPUTS if item.key == "tokens")
    bars = [TornadoBar(mfu, 0.26, 0.44, 677_000.0, 402_000.0), TornadoBar(tokens, 1.8e12, 2.4e12, 397e3, 530e3)]
    text = risk.top_lever(_mc([1.0], 1.0, 1.0, bars))
    assert text == "The biggest lever is MFU: over 26 %–44 % the total moves by $275k ($402k to $677k)."
    flat = [TornadoBar(mfu, 0.4, 0.4, 1.0, 1.0)]
    assert risk.top_lever(_mc([1.0], 1.0, 1.0, flat)) is None
