"""Commitment amortisation (``dashboard.retro.amortise``, a query over the bill's table): fees spread over the
reserved GPU-hours they cover give hand-computed $/GPU-hours."""

import pandas as pd
import pytest
from usage_rows import usage

from dashboard.query import tables
from dashboard.retro.amortise import amortise_commitments
from dashboard.retro.units import unit_costs


def fee(day, cost, **extra):
    return {"period_start": day, "cost": cost, "pricing": "reserved", "charge_kind": "commitment"} | extra


def reserved(day, hours, cost=0.0):
    return {"period_start": day, "gpu_hours": hours, "cost": cost, "pricing": "reserved", "team": "t",
            "charge_kind": "usage"}


def days(first, last):
    return [f"2025-05-{day:02d}" for day in range(first, last + 1)]


def _amortise(frame: pd.DataFrame):
    """``frame`` bound as a table and amortised: the amortised table, its rows in the frame's order (the query's
    rows come in no order; source_row is unique here) and the info."""
    amortised, info = amortise_commitments(tables.table_of(frame))
    rows = amortised.to_pandas().sort_values("source_row", ignore_index=True)
    return amortised, rows, info


def test_a_daily_fee_goes_to_that_days_reserved_hours_and_an_idle_day_stays_unused():
    table = usage(fee("2025-05-01", 100.0), fee("2025-05-02", 100.0), reserved("2025-05-01", 10.0),
                  {"period_start": "2025-05-01", "gpu_hours": 5.0, "cost": 20.0, "pricing": "on_demand"})
    amortised, rows, info = _amortise(table)
    assert info.status == "amortised" and info.label == "commitments amortised"
    assert rows["cost"].tolist() == pytest.approx([0.0, 100.0, 100.0, 20.0])  # 2 May: nobody used it
    assert (info.spread_usd, info.unused_usd, info.after_export_usd) == pytest.approx((100.0, 100.0, 0.0))
    assert unit_costs(amortised).usd_per_gpu_hour == pytest.approx((100.0 + 20.0) / 15.0)  # $8 a GPU-hour
    assert rows["billed_cost"].tolist() == table["billed_cost"].tolist()  # what was invoiced is kept


def test_monthly_payments_cover_until_the_next_one_and_the_part_after_the_export_leaves_the_figures():
    # $100 on 1 May and on 11 May: 1-10 May and 11-20 May at $10 a day. The export ends with 15 May, so 16-20 May
    # ($50) belong to the next period; each day's $10 goes to that day's 8 reserved GPU-hours: $1.25 a GPU-hour.
    table = usage(fee("2025-05-01", 100.0), fee("2025-05-11", 100.0), *(reserved(day, 8.0) for day in days(1, 15)))
    amortised, rows, info = _amortise(table)
    gpu = rows["gpu_hours"] > 0
    assert rows.loc[gpu, "cost"].tolist() == pytest.approx([10.0] * 15)
    assert unit_costs(amortised).usd_per_gpu_hour == pytest.approx(1.25)
    assert (info.spread_usd, info.unused_usd, info.after_export_usd) == pytest.approx((150.0, 0.0, 50.0))
    assert rows["cost"].sum() == pytest.approx(table["cost"].sum() - 50.0)


def test_a_single_purchase_is_spread_over_the_rest_of_the_export():
    table = usage(fee("2025-05-01", 300.0), *(reserved(day, 10.0) for day in days(1, 3)))
    _, rows, info = _amortise(table)
    assert rows.loc[rows["gpu_hours"] > 0, "cost"].tolist() == pytest.approx([100.0] * 3)  # $10/GPU-h
    assert info.after_export_usd == pytest.approx(0.0)


def test_a_fee_for_a_longer_period_is_spread_over_that_period():
    table = usage(fee("2025-05-01", 40.0, period_end="2025-05-05"), reserved("2025-05-02", 4.0),
                  reserved("2025-05-03", 2.0))
    _, rows, info = _amortise(table)
    # $10 a day: 2 and 3 May go to their usage, 1 and 4 May stay as unused commitment
    assert rows["cost"].tolist() == pytest.approx([20.0, 10.0, 10.0])
    assert info.unused_usd == pytest.approx(20.0)


def test_an_amortised_export_is_left_as_it_is():
    table = tables.table_of(usage(fee("2025-05-02", 30.0, charge_kind="unused_commitment"),
                                  reserved("2025-05-01", 10.0, cost=72.0)))
    amortised, info = amortise_commitments(table)
    assert amortised is table
    assert (info.status, info.unused_usd) == ("provider", 30.0)


def test_what_is_left_on_a_purchase_becomes_an_unused_commitment_line():
    table = usage(fee("2025-05-01", 100.0), fee("2025-05-02", 100.0), reserved("2025-05-01", 10.0))
    _, rows, _ = _amortise(table)
    assert rows["charge_kind"].tolist() == ["unused_commitment", "unused_commitment", "usage"]
    assert rows["cost"].tolist() == pytest.approx([0.0, 100.0, 100.0])  # 1 May spread, 2 May unused


@pytest.mark.parametrize(("rows", "status", "label"), [
    pytest.param([reserved("2025-05-01", 10.0, cost=72.0)], "none", "", id="no commitment charges"),
    pytest.param([fee("2025-05-01", 100.0), {"gpu_hours": 10.0, "cost": 0.0}], "excluded", "excluding commitments",
                 id="no reserved usage to put them on"),
    pytest.param([fee("2025-05-01", 100.0), {"gpu_hours": 0.0, "cost": 5.0}], "no_gpu", "no GPU usage in this bill",
                 id="a bill without GPU rows"),
    pytest.param([reserved("2025-05-01", 10.0, cost=72.0), {"cost": 9.0, "pricing": "reserved", "charge_kind": "usage",
                  "resource_id": "reservation-vm-1"}], "none", "", id="covered non-GPU usage is usage"),
])
def test_what_cannot_be_amortised_is_said(rows, status, label):
    table = tables.table_of(usage(*rows))
    amortised, info = amortise_commitments(table)
    assert amortised is table
    assert (info.status, info.label) == (status, label)


def test_an_hourly_job_in_a_day_takes_the_whole_days_share():
    job = reserved("2025-05-01T10:00", 6.0) | {"period_end": "2025-05-01T13:00"}
    amortised, rows, _ = _amortise(usage(fee("2025-05-01T00:00", 60.0), job))
    assert rows.loc[rows["gpu_hours"] > 0, "cost"].iloc[0] == pytest.approx(60.0)
    assert amortised.schema()["cost"].is_floating() and pd.api.types.is_float_dtype(rows["cost"])
