"""Plausibility at the boundary (ingest.plausible): every implausible row is rejected with its reason, in memory and
streamed alike, while credits, refunds and plausible amounts in any currency are kept."""

import json

import pandas as pd
import pytest

from dashboard.core.scenario import Scenario
from dashboard.ingest import import_bytes
from dashboard.ingest.plausible import MAX_PRICE_PER_GPU_HOUR_USD
from dashboard.ingest.schema import ReadOptions
from dashboard.ingest.stream import stream_import

FOCUS = ("ChargePeriodStart", "ChargePeriodEnd", "EffectiveCost", "BilledCost", "ChargeCategory", "PricingCategory",
         "BillingCurrency", "ConsumedQuantity", "ConsumedUnit", "SkuPriceDetails")
EIGHT_GPUS = json.dumps({"GpuCount": 8})
HOUR = ("2025-06-01T00:00:00Z", "2025-06-01T01:00:00Z")


def focus_row(cost="80", billed=None, category="Usage", quantity="1", currency="USD", gpus=EIGHT_GPUS,
              period=HOUR) -> dict[str, str]:
    """One FOCUS row: by default an hour of an 8-GPU instance at $80 ($10 per GPU-hour)."""
    return dict(zip(FOCUS, (*period, cost, cost if billed is None else billed, category, "Standard", currency,
                            quantity, "Hours", gpus), strict=True))


def csv_bytes(rows: list[dict[str, str]], delimiter: str = ",") -> bytes:
    return pd.DataFrame(rows).to_csv(index=False, sep=delimiter).encode()


# (row, the reason's words): each kind of implausible row the issue names, one plausible row after it.
REJECTED = [
    pytest.param(focus_row(cost="1e300"), "a cost of $1×10³⁰⁰ on one row is beyond the plausible $1T",
                 id="cost-10^300"),
    pytest.param(focus_row(cost="-1e12", category="Usage"), "a negative cost (-$1T) on a usage row", id="cost--10^12"),
    pytest.param(focus_row(cost="-2e12", category="Credit"), "a cost of -$2T on one row is beyond the plausible $1T",
                 id="credit-beyond-the-bound"),
    pytest.param(focus_row(cost="NaN"), "EffectiveCost is empty", id="cost-nan"),
    pytest.param(focus_row(cost="inf"), "EffectiveCost: cannot read 'inf' as a cost", id="cost-inf"),
    pytest.param(focus_row(billed="-5"), "a negative cost (-$5) on a usage row", id="negative-billed-cost"),
    pytest.param(focus_row(quantity="1e308"), "GPU-hours are not a finite number", id="gpu-hours-inf"),
    pytest.param(focus_row(cost="0", quantity="-1"), "negative GPU-hours (-8)", id="negative-gpu-hours"),
    # $16,000 for 8 GPU-hours: $2,000 per GPU-hour
    pytest.param(focus_row(cost="16000"), "$2k per GPU-hour is above the plausible $1k", id="2000-per-gpu-hour"),
    # ¥2,560,000 for 8 GPU-hours: ¥320,000 ($2,000) per GPU-hour, above ¥160,000 (160 yen to the dollar)
    pytest.param(focus_row(cost="2560000", currency="JPY"), "320k JPY per GPU-hour is above the plausible 160k JPY",
                 id="yen-above-the-bound"),
    # 10^300 hours of an 8-GPU instance in one hour
    pytest.param(focus_row(cost="10", quantity="1e300"), "8×10³⁰⁰ GPU-hours in 1 h: more than 1M GPUs",
                 id="gpu-hours-10^300"),
    pytest.param(focus_row(period=("1900-01-01T00:00:00Z", "1900-01-01T01:00:00Z")),
                 "period start 1900-01-01 is outside 1970–2200", id="a-date-before-1970"),
]


@pytest.mark.parametrize(("row", "reason"), REJECTED)
def test_implausible_focus_row_is_rejected_with_its_reason(row, reason):
    usage, report = import_bytes(csv_bytes([row, focus_row(currency=row["BillingCurrency"])]), filename="bill.csv")
    assert report.rejected["line"].tolist() == [2]
    assert reason in report.rejected["reason"].iloc[0]
    assert usage["source_row"].tolist() == [3] and usage["cost"].tolist() == [80.0]


@pytest.mark.parametrize(("row", "reason"), REJECTED)
def test_streamed_import_rejects_the_same_rows(tmp_path, row, reason):
    path = tmp_path / "bill.csv"
    path.write_bytes(csv_bytes([row, focus_row(currency=row["BillingCurrency"])]))
    parts: list[pd.DataFrame] = []
    report = stream_import(path, parts.append)
    assert report.rejected["line"].tolist() == [2]
    assert reason in report.rejected["reason"].iloc[0]
    assert pd.concat(parts)["source_row"].tolist() == [3]


KEPT = [
    pytest.param(focus_row(cost="-50", category="Credit", quantity="", gpus=""), -50.0, id="focus-credit"),
    pytest.param(focus_row(cost="-3", category="Adjustment", quantity="", gpus=""), -3.0, id="focus-adjustment"),
    # ¥800,000 for 8 GPU-hours: ¥100,000 ($625) per GPU-hour, below the yen bound though above $1,000
    pytest.param(focus_row(cost="800000", currency="JPY"), 800_000.0, id="yen-price-in-yen"),
    # $999.99 per GPU-hour is within the bound
    pytest.param(focus_row(cost="7999.92"), 7999.92, id="just-under-the-price-bound"),
    # float noise of a cost less credits that equal it
    pytest.param(focus_row(cost=str(0.3 - 0.1 - 0.2), quantity="", gpus=""), 0.3 - 0.1 - 0.2, id="float-noise"),
]


@pytest.mark.parametrize(("row", "cost"), KEPT)
def test_credits_refunds_and_plausible_amounts_are_kept(row, cost):
    usage, report = import_bytes(csv_bytes([row]), filename="bill.csv")
    assert report.rows_rejected == 0
    assert usage["cost"].tolist() == [cost]


CUR = ("lineItem/LineItemType", "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/UnblendedCost",
       "lineItem/UsageType", "lineItem/UsageAmount", "product/instanceType", "lineItem/CurrencyCode")


@pytest.mark.parametrize(("line_type", "cost", "rejected"), [
    ("Credit", "-120.5", 0),
    ("Refund", "-98.32", 0),
    ("EdpDiscount", "-9.83", 0),
    ("Usage", "-98.32", 1),  # a usage line is never negative
])
def test_aws_credits_refunds_and_discounts_may_be_negative(line_type, cost, rejected):
    row = dict(zip(CUR, (line_type, *HOUR, cost, "USE1-BoxUsage:p5.48xlarge", "1", "p5.48xlarge", "USD"),
                   strict=True))
    usage, report = import_bytes(csv_bytes([row]), filename="cur.csv")
    assert report.rows_rejected == rejected
    assert len(usage) == 1 - rejected


SACCT = ("JobID", "JobName", "Account", "Partition", "State", "Start", "End", "Elapsed", "ElapsedRaw", "AllocTRES")


@pytest.mark.parametrize(("elapsed_raw", "end", "tres", "reason"), [
    # 2 h on 8 GPUs between a start and an end one hour apart: 16 GPU-hours where 8 fit
    ("7200", "2025-06-01T11:00:00", "gres/gpu=8", "16 GPU-hours on 8 GPUs in 1 h: more than the GPUs can run"),
    ("1e300", "2025-06-01T11:00:00", "gres/gpu=8", "ElapsedRaw/Elapsed/End: a duration of more than a century"),
    ("3600", "2025-06-01T11:00:00", "gres/gpu=100000000", "100M GPUs on one row is more than the 1M of any cluster"),
])
def test_slurm_job_beyond_its_gpus_and_period_is_rejected(elapsed_raw, end, tres, reason):
    row = dict(zip(SACCT, ("42", "train", "llm", "gpu", "COMPLETED", "2025-06-01T10:00:00", end, "01:00:00",
                           elapsed_raw, tres), strict=True))
    usage, report = import_bytes(csv_bytes([row], "|"), filename="sacct.txt", options=ReadOptions(timezone="UTC"))
    assert len(usage) == 0
    assert reason in report.rejected["reason"].iloc[0]


def test_wandb_runtime_beyond_a_century_is_rejected_not_a_crash():
    table = "ID,Name,State,Created,Runtime,gpu_count\na,a,finished,2025-06-01T10:00:00Z,1e15,8\n"
    usage, report = import_bytes(table.encode(), filename="runs.csv")
    assert len(usage) == 0
    assert report.rejected["reason"].tolist() == ["Runtime: a duration of more than a century"]


def test_generic_negative_cost_is_rejected():
    table = "start,gh,cost\n2025-06-01T10:00:00Z,8,-5\n2025-06-01T10:00:00Z,8,5\n"
    mapping = {"period_start": "start", "gpu_hours": "gh", "cost": "cost"}
    usage, report = import_bytes(table.encode(), filename="g.csv", format="generic",
                                 options=ReadOptions(mapping=mapping))
    assert usage["cost"].tolist() == [5.0]
    assert "a negative cost (-5)" in report.rejected["reason"].iloc[0]


def test_price_bound_is_the_scenarios():
    """One bound for a price per GPU-hour: the import's is the scenario's upper bound on every price input."""
    for key in ("price_reserved_per_gpu_hour", "price_on_demand_per_gpu_hour", "price_spot_per_gpu_hour"):
        bounds = {type(m).__name__: m for m in Scenario.model_fields[key].metadata}
        assert bounds["Le"].le == MAX_PRICE_PER_GPU_HOUR_USD
