"""A usage table queried where it lies (an Ibis table over Parquet, as a workspace dataset is opened): the commitment
status, the amortisation, the join and the waste checks give the same figures as the same rows uploaded (a pandas
frame bound to the engine), and nothing needs the rows in memory any more."""

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
from usage_rows import usage

from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import engine, tables
from dashboard.retro.amortise import amortise_commitments, commitment_status
from dashboard.retro.join import join_usage
from dashboard.retro.waste import waste_checklist

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
    ("actual cost: reserved rows at $0, the fee on its own line", [{**RESERVED_RUN, "cost": 0.0}, FEE], "to_spread",
     1000.0),
]


def _queried(frame: pd.DataFrame, folder: Path, name: str = "usage"):
    """``frame`` stored as Parquet and read back as a table of the default engine, queried where it lies."""
    path = folder / f"{name}.parquet"
    frame.to_parquet(path)
    return engine.default().read_parquet(str(path))


def _uploaded(frame: pd.DataFrame):
    """``frame`` as an upload is held: bound to the default engine."""
    return tables.table_of(frame)


def _rows(table, order: list[str]) -> pd.DataFrame:
    """The rows of ``table`` with canonical dtypes and UTC times (Parquet stores them time-zone-aware, a bound frame
    naive), sorted by ``order`` (a query's rows come in no order)."""
    frame = table.to_pandas()
    for column in tables.TIME_COLUMNS:
        stamps = pd.to_datetime(frame[column])
        frame[column] = stamps.dt.tz_localize("UTC") if stamps.dt.tz is None else stamps.dt.tz_convert("UTC")
    extra = {column: "string" for column in frame.columns if column not in CANONICAL_COLUMNS}
    return frame.astype(CANONICAL_COLUMNS | extra).sort_values(order, ignore_index=True)


@pytest.mark.parametrize(("rows", "status", "commitment_usd"), [case[1:] for case in STATUS_CASES],
                         ids=[case[0] for case in STATUS_CASES])
def test_the_commitment_status_and_the_amortisation_are_the_same_for_an_upload_and_a_queried_table(
        rows, status, commitment_usd, tmp_path):
    frame = usage(*rows)
    uploaded, queried = _uploaded(frame), _queried(frame, tmp_path)
    for source in (uploaded, queried):
        info = commitment_status(source)
        assert info.status == status
        assert info.commitment_usd == pytest.approx(commitment_usd)
    (upload_table, upload_info), (queried_table, queried_info) = (amortise_commitments(uploaded),
                                                                  amortise_commitments(queried))
    for info in (upload_info, queried_info):  # a queried table is spread as an upload is: "to_spread" is gone
        assert info.status == ("amortised" if status == "to_spread" else status)
    assert dataclasses.asdict(queried_info) == {key: pytest.approx(value) if isinstance(value, float) else value
                                                for key, value in dataclasses.asdict(upload_info).items()}
    pd.testing.assert_frame_equal(_rows(queried_table, ["source_row"]), _rows(upload_table, ["source_row"]))


def test_a_spread_commitment_puts_the_same_cost_on_a_queried_tables_rows(tmp_path):
    # The fee's $1,000 (a single purchase on 1 May, over the rest of the export: that day) goes to the 100 reserved
    # GPU-hours of that day: $10 a GPU-hour; nothing is left on the line.
    frame = usage({**RESERVED_RUN, "cost": 0.0}, FEE)
    amortised, info = amortise_commitments(_queried(frame, tmp_path))
    assert (info.spread_usd, info.unused_usd, info.covered_gpu_hours) == pytest.approx((1000.0, 0.0, 100.0))
    rows = _rows(amortised, ["source_row"])
    assert rows["cost"].tolist() == pytest.approx([1000.0, 0.0])
    assert rows["charge_kind"].iloc[1] == "unused_commitment"  # the purchase, all of it spread


def test_a_queried_billing_table_is_returned_with_its_stats_and_joins_as_an_upload_does(tmp_path):
    frame = usage({"gpu_hours": 10.0, "cost": 20.0, "run_id": "main"}, {"gpu_hours": -2.0, "cost": -4.0},
                  {"gpu_hours": 5.0})
    table = _queried(frame, tmp_path)
    joined, stats = join_usage(table, None)
    assert joined is table
    assert stats.billing_gpu_hours == pytest.approx(15.0)  # 10 + 0 (a correction counts as none) + 5
    assert stats.billing_gpu_hours == join_usage(_uploaded(frame), None)[1].billing_gpu_hours

    # The run export: 4 of main's 10 billed GPU-hours (at $2 a GPU-hour), and 3 h of a run with no bill.
    runs = usage({"gpu_hours": 4.0, "run_id": "main", "run_state": "COMPLETED", "currency": None},
                 {"gpu_hours": 3.0, "run_id": "other", "run_state": "FAILED", "currency": None})
    queried, queried_stats = join_usage(table, _queried(runs, tmp_path, "runs"))
    uploaded, upload_stats = join_usage(_uploaded(frame), _uploaded(runs))
    assert dataclasses.asdict(queried_stats) == {key: pytest.approx(value) if isinstance(value, float) else value
                                                 for key, value in dataclasses.asdict(upload_stats).items()}
    assert queried_stats.billing_gpu_hours_matched_share == pytest.approx(10 / 15)
    assert (queried_stats.runs_without_bill_gpu_hours, queried_stats.runs_without_bill_rows) == (3.0, 1)
    order = ["join_side", "source_row", "period_start"]
    rows = _rows(queried, order)
    pd.testing.assert_frame_equal(rows, _rows(uploaded, order))
    both = rows[rows["join_side"] == "both"]
    assert (both["gpu_hours"].tolist(), both["cost"].tolist()) == ([pytest.approx(4.0)], [pytest.approx(8.0)])
    assert rows["gpu_hours"].sum() == pytest.approx(13.0) and rows["cost"].sum() == pytest.approx(16.0)  # the bill


def _job(start: str, job_id: str, state: str = "COMPLETED") -> dict:
    begin = pd.Timestamp(start, tz="UTC")
    return {"period_start": begin, "period_end": begin + pd.Timedelta(hours=5), "gpu_hours": 40.0, "cost": 80.0,
            "run_id": "sweep", "run_state": state, "resource_id": job_id, "team": "t", "project": "p",
            "gpu_type": "H100"}


def test_a_queried_tables_waste_keeps_every_figure_and_the_rows_behind_them(tmp_path):
    frame = usage(_job("2025-05-01T10:00", "1"), _job("2025-05-01T10:10", "2"),  # "2" repeats "1"
                  _job("2025-05-02T10:00", "3", state="FAILED"), {"cost": 30.0, "resource_id": "bucket"})
    uploaded = {check.id: check for check in waste_checklist(_uploaded(frame))}
    queried = {check.id: check for check in waste_checklist(_queried(frame, tmp_path))}
    assert uploaded["duplicate_runs"].figure == pytest.approx(40.0)
    assert queried["duplicate_runs"].figure == pytest.approx(40.0)  # the row-level check runs on a query too
    assert uploaded["failed_runs"].figure == pytest.approx(100 * 40 / 120)  # one failed job of three
    assert queried.keys() == uploaded.keys()
    for check_id, check in queried.items():
        assert check.figure == uploaded[check_id].figure, check_id
        assert check.usd == uploaded[check_id].usd, check_id
        assert check.detail == uploaded[check_id].detail, check_id
        want = uploaded[check_id].rows
        assert (check.rows is None) == (want is None), check_id
        if want is not None:
            assert check.rows["source_row"].tolist() == want["source_row"].tolist(), check_id
