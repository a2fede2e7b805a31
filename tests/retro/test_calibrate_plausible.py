"""calibrate refuses to measure from implausible values and says which rows: the issue's probe (a bill with costs of
10³⁰⁰, −10¹² and negative GPU-hours) prices no plan from them."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from usage_rows import usage as frame

from dashboard.cli import main
from dashboard.core.scenario import default_scenario
from dashboard.ingest import import_bytes
from dashboard.retro.calibrate import BILL_KEYS, calibrate, scenario_from

HOUR = {"period_start": "2025-06-01T00:00:00Z", "period_end": "2025-06-01T01:00:00Z", "currency": "USD",
        "gpu_type": "H100", "charge_kind": "usage"}
# the plausible bill: 8 on-demand GPU-hours at $80 ($10 each), 8 spot at $24 ($3), 16 reserved at $64 ($4)
PLAUSIBLE = [
    {**HOUR, "pricing": "on_demand", "gpu_hours": 8.0, "cost": 80.0, "billed_cost": 80.0},
    {**HOUR, "pricing": "spot", "gpu_hours": 8.0, "cost": 24.0, "billed_cost": 24.0},
    {**HOUR, "pricing": "reserved", "gpu_hours": 16.0, "cost": 64.0, "billed_cost": 64.0},
]
EXPECTED = {"price_on_demand_per_gpu_hour": 10.0, "price_spot_per_gpu_hour": 3.0,
            "price_reserved_per_gpu_hour": 4.0, "spot_share": 8 / 32, "reserved_share": 16 / 32}


def test_a_plausible_bill_is_measured():
    measured = calibrate(frame(*PLAUSIBLE))
    assert {key: measured[key].value for key in EXPECTED} == pytest.approx(EXPECTED)
    assert all(measured[key].refused is None for key in EXPECTED)


# One implausible row added to the plausible bill, as a table written before the import's bounds (or built by hand)
# may hold it; it is line 5.
IMPLAUSIBLE = [
    pytest.param({**HOUR, "pricing": "spot", "gpu_hours": 1e300, "cost": 1.0, "billed_cost": 1.0},
                 id="spot-gpu-hours-10^300"),
    pytest.param({**HOUR, "pricing": "spot", "gpu_hours": 8.0, "cost": 1e300, "billed_cost": 1e300}, id="cost-10^300"),
    pytest.param({**HOUR, "pricing": "spot", "gpu_hours": 8.0, "cost": -1e12, "billed_cost": -1e12},
                 id="cost--10^12"),
    pytest.param({**HOUR, "pricing": "spot", "gpu_hours": -8.0, "cost": 24.0, "billed_cost": 24.0},
                 id="negative-gpu-hours"),
    pytest.param({**HOUR, "pricing": "on_demand", "gpu_hours": 8.0, "cost": 16_000.0, "billed_cost": 16_000.0},
                 id="2000-per-gpu-hour"),
    pytest.param({**HOUR, "pricing": "spot", "gpu_hours": 8.0, "cost": float("inf"), "billed_cost": 1.0},
                 id="cost-inf"),
]


@pytest.mark.parametrize("row", IMPLAUSIBLE)
def test_a_bill_with_an_implausible_row_is_refused_naming_it(row):
    measured = calibrate(frame(*PLAUSIBLE, row))
    for key in EXPECTED:
        assert measured[key].value is None
        assert "line 5 " in measured[key].refused and measured[key].source_rows == (5,)
        assert measured[key].caveat.startswith("refused: the bill holds implausible values on line 5 ")


@pytest.mark.parametrize("row", IMPLAUSIBLE)
def test_no_plan_is_priced_from_implausible_rows(row):
    base = default_scenario()
    scenario, applied = scenario_from(calibrate(frame(*PLAUSIBLE, row)), base)
    assert not set(applied) & set(BILL_KEYS)
    assert {key: getattr(scenario, key) for key in EXPECTED} == {key: getattr(base, key) for key in EXPECTED}


def test_a_credit_may_be_negative():
    credit = {**HOUR, "charge_kind": "adjustment", "gpu_hours": 0.0, "cost": -50.0, "billed_cost": -50.0}
    measured = calibrate(frame(*PLAUSIBLE, credit))
    assert {key: measured[key].value for key in EXPECTED} == pytest.approx(EXPECTED)


def test_the_issues_probe_through_the_import():
    """A FOCUS bill with the issue's rows: the import rejects them, and the plan's inputs come from the rest."""
    header = ("ChargePeriodStart,ChargePeriodEnd,EffectiveCost,BilledCost,ChargeCategory,PricingCategory,"
              "BillingCurrency,ConsumedQuantity,ConsumedUnit,SkuPriceDetails\n")
    sku = '"{""GpuCount"": 8}"'
    hour = "2025-06-01T00:00:00Z,2025-06-01T01:00:00Z"
    lines = [f"{hour},80,80,Usage,Standard,USD,1,Hours,{sku}",  # $10 per GPU-hour on demand
             f"{hour},24,24,Usage,Dynamic,USD,1,Hours,{sku}",  # $3 spot
             f"{hour},1e300,1e300,Usage,Dynamic,USD,1,Hours,{sku}",
             f"{hour},-1e12,-1e12,Usage,Dynamic,USD,1,Hours,{sku}",
             f"{hour},24,24,Usage,Dynamic,USD,1e300,Hours,{sku}",  # 10³⁰⁰ spot hours: a 100 % spot share
             f"{hour},0,0,Usage,Dynamic,USD,-1,Hours,{sku}"]
    usage, report = import_bytes((header + "\n".join(lines) + "\n").encode(), filename="probe.csv")
    assert report.rejected["line"].tolist() == [4, 5, 6, 7]
    measured = calibrate(usage)
    assert measured["price_on_demand_per_gpu_hour"].value == pytest.approx(10.0)
    assert measured["price_spot_per_gpu_hour"].value == pytest.approx(3.0)
    assert measured["spot_share"].value == pytest.approx(0.5)


def test_a_value_outside_its_range_is_refused_in_the_cli_json(tmp_path, capsys):
    """A W&B export whose main run claims 10²⁰ times its tokens: an MFU far above 1 is refused, naming its lines."""
    sample = pd.read_csv("data/samples/wandb_sample.csv", dtype=str, keep_default_na=False)
    tokens = pd.to_numeric(sample["tokens_seen"], errors="coerce")
    sample["tokens_seen"] = [f"{value * 1e20:.6g}" if value == value else "" for value in tokens]
    runs = tmp_path / "runs.csv"
    sample.to_csv(runs, index=False)
    assert main(["calibrate", "data/samples/focus_sample.csv", str(runs), "--params", "13e9", "--json"]) == 0
    mfu = json.loads(capsys.readouterr().out)["inputs"]["mfu"]
    assert mfu["value"] is None and mfu["source_lines"]
    assert mfu["refused"].startswith(f"the value measured from lines {mfu['source_lines'][0]:,}")
    assert "outside the plausible 0.01 to 1 of mfu" in mfu["refused"]


def test_a_run_export_with_an_implausible_row_refuses_what_is_measured_from_it():
    jobs = [{**HOUR, "currency": None, "charge_kind": None, "run_id": run, "project": run, "run_state": "COMPLETED",
             "gpu_hours": hours} for run, hours in (("pretrain", 800.0), ("ablation-1", 80.0), ("eval-1", 8.0))]
    clean = calibrate(frame(*PLAUSIBLE), frame(*jobs))
    assert clean["experiment_overhead"].value == pytest.approx(0.1)  # 80 / 800
    assert clean["eval_overhead"].value == pytest.approx(0.01)  # 8 / 800
    broken = calibrate(frame(*PLAUSIBLE), frame(*jobs, {**jobs[1], "gpu_hours": -8.0}))  # line 5
    for key in ("experiment_overhead", "eval_overhead"):
        assert broken[key].value is None and broken[key].source_rows == (5,)
        assert broken[key].refused.startswith("the run export holds implausible values on line 5 ")
    assert {key: broken[key].value for key in EXPECTED} == pytest.approx(EXPECTED)  # the bill is fine
