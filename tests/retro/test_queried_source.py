"""A usage table queried where it lies (an Ibis table, as a large workspace dataset is opened): the commitment
status, the join's stats and the waste checks agree with the same rows in memory, and what needs rows says so."""

import ibis
import pandas as pd
import pytest
from usage_rows import usage

from dashboard.query import tables
from dashboard.retro.amortise import amortise_commitments, commitment_status
from dashboard.retro.join import join_usage
from dashboard.retro.waste import NEEDS_ROWS, waste_checklist

RESERVED_RUN = {"gpu_hours": 100.0, "cost": 700.0, "run_id": "main", "pricing": "reserved"}
ON_DEMAND = {"gpu_hours": 10.0, "cost": 50.0, "run_id": "x", "pricing": "on_demand"}
FEE = {"pricing": "reserved", "cost": 1000.0, "charge_kind": "commitment"}  # a purchase billed on its own line

STATUS_CASES = [
    # id, rows, status, commitment_usd
    ("no commitment lines", [ON_DEMAND], "none", 0.0),
    ("a fee and no reserved usage to put it on", [ON_DEMAND, FEE], "excluded", 1000.0),
    ("amortised by the provider: reserved rows carry cost",
     [RESERVED_RUN, {**FEE, "cost": 300.0, "charge_kind": "unused_commitment"}], "provider", 300.0),
    ("no GPU rows", [FEE, {"cost": 5.0}], "no_gpu", 1000.0),
    ("actual cost: reserved rows at $0, the fee on its own line", [{**RESERVED_RUN, "cost": 0.0}, FEE], "needs_rows",
     1000.0),
]


def _table(frame: pd.DataFrame):
    return tables.usage_table(ibis.duckdb.connect(), frame)


@pytest.mark.parametrize(("rows", "status", "commitment_usd"), [case[1:] for case in STATUS_CASES],
                         ids=[case[0] for case in STATUS_CASES])
def test_the_commitment_status_is_one_query_for_rows_and_tables(rows, status, commitment_usd):
    frame = usage(*rows)
    for source in (frame, _table(frame)):
        info = commitment_status(source)
        assert info["status"] == status
        assert info["commitment_usd"] == pytest.approx(commitment_usd)
    amortised = amortise_commitments(frame)[1]["status"]
    assert amortised == ("amortised" if status == "needs_rows" else status)  # rows in memory are spread


def test_a_queried_billing_table_is_returned_with_its_stats_and_refuses_a_join():
    frame = usage({"gpu_hours": 10.0, "cost": 20.0}, {"gpu_hours": -2.0, "cost": -4.0}, {"gpu_hours": 5.0})
    table = _table(frame)
    joined, stats = join_usage(table, None)
    assert joined is table
    assert stats["billing_gpu_hours"] == pytest.approx(15.0)  # 10 + 0 (a correction counts as none) + 5
    assert stats["billing_gpu_hours"] == join_usage(frame, None)[1]["billing_gpu_hours"]
    with pytest.raises(ValueError, match="needs the billing rows in memory"):
        join_usage(table, frame)


def _job(start: str, job_id: str, state: str = "COMPLETED") -> dict:
    begin = pd.Timestamp(start, tz="UTC")
    return {"period_start": begin, "period_end": begin + pd.Timedelta(hours=5), "gpu_hours": 40.0, "cost": 80.0,
            "run_id": "sweep", "run_state": state, "resource_id": job_id, "team": "t", "project": "p",
            "gpu_type": "H100"}


def test_waste_without_rows_keeps_every_figure_but_the_row_level_one():
    frame = usage(_job("2025-05-01T10:00", "1"), _job("2025-05-01T10:10", "2"),  # "2" repeats "1"
                  _job("2025-05-02T10:00", "3", state="FAILED"), {"cost": 30.0, "resource_id": "bucket"})
    with_rows = {check["id"]: check for check in waste_checklist(frame)}
    queried = {check["id"]: check for check in waste_checklist(_table(frame), with_rows=False)}
    assert with_rows["duplicate_runs"]["figure"] == pytest.approx(40.0)
    assert queried["duplicate_runs"]["figure"] is None
    assert queried["duplicate_runs"]["detail"] == NEEDS_ROWS
    assert with_rows["failed_runs"]["figure"] == pytest.approx(100 * 40 / 120)  # one failed job of three
    for check_id, check in queried.items():
        assert check["rows"] is None
        if check_id != "duplicate_runs":
            assert check["figure"] == with_rows[check_id]["figure"]
            assert check["usd"] == with_rows[check_id]["usd"]
