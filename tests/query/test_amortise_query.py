"""Commitment amortisation as a query (``dashboard.retro.amortise``): hand-worked bills (comments give the
arithmetic), then the pandas method it replaced (``tests/oracle/amortise_pandas.py``) on the bundled samples and on
random small bills, on DuckDB (naive and time-zone-aware stored times) and once on Spark."""

import tempfile
from datetime import timedelta
from pathlib import Path

import amortise_pandas_reference as oracle
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from usage_rows import usage

from dashboard.ingest import import_path
from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import tables
from dashboard.retro.amortise import LABELS, STATUSES, Amortisation, amortise_commitments, commitment_status

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
FIGURES = ("commitment_usd", "spread_usd", "unused_usd", "after_export_usd", "covered_gpu_hours")
CLOSE = {"rel": 1e-9, "abs": 1e-9}


def fee(day, cost, **extra):
    """A commitment line (a day's line unless ``period_end`` says otherwise)."""
    return {"period_start": day, "cost": cost, "pricing": "reserved", "charge_kind": "commitment"} | extra


def reserved(day, hours, **extra):
    """A day of reserved GPU usage at $0, as an actual-cost export bills it."""
    return {"period_start": day, "gpu_hours": hours, "cost": 0.0, "pricing": "reserved", "team": "t",
            "charge_kind": "usage"} | extra


def _utc(frame: pd.DataFrame) -> pd.DataFrame:
    for column in tables.TIME_COLUMNS:
        stamps = pd.to_datetime(frame[column])
        frame[column] = (stamps.dt.tz_localize("UTC") if stamps.dt.tz is None else stamps.dt.tz_convert("UTC")
                         ).dt.as_unit("ns")
    return frame


def _rows(table) -> pd.DataFrame:
    """The rows of ``table`` in source order (source_row is unique in every bill here), times as UTC."""
    frame = _utc(table.execute())
    assert frame["source_row"].is_unique
    return frame.sort_values("source_row", ignore_index=True)


def _amortised(backend, frame: pd.DataFrame) -> tuple[pd.DataFrame, Amortisation]:
    table = tables.usage_table(backend, frame)
    result, info = amortise_commitments(table)
    assert result.schema() == table.schema() and list(result.columns) == list(table.columns)
    if info.status != "amortised":
        assert result is table
    return _rows(result), info


# (rows, cost of each row after, figures): a fee is one day's line unless it says otherwise.
CASES = {
    # A $300 purchase billed on 1 May, alone: from its start to the export's end (4 May, after the last day of
    # usage), 3 days at $100. Each day has 10 reserved GPU-hours: $10 a GPU-hour, $100 a row; nothing is left.
    "a single purchase over the rest of the export": (
        [fee("2025-05-01", 300.0), *(reserved(f"2025-05-0{day}", 10.0) for day in (1, 2, 3))],
        [0.0, 100.0, 100.0, 100.0],
        {"commitment_usd": 300.0, "spread_usd": 300.0, "unused_usd": 0.0, "after_export_usd": 0.0,
         "covered_gpu_hours": 30.0}),
    # $40 for 1-5 May (its own period, longer than a day): $10 a day. 2 and 3 May go to their usage (4 and
    # 2 GPU-hours: $2.50 and $5 a GPU-hour); nobody used 1 and 4 May: $20 stays on the line, unused.
    "an idle day's part stays on the line": (
        [fee("2025-05-01", 40.0, period_end="2025-05-05"), reserved("2025-05-02", 4.0), reserved("2025-05-03", 2.0)],
        [20.0, 10.0, 10.0],
        {"commitment_usd": 40.0, "spread_usd": 20.0, "unused_usd": 20.0, "after_export_usd": 0.0,
         "covered_gpu_hours": 6.0}),
    # cud-1 bills $60 on 1 and 3 May: the first covers 1-2 May (until the next), the last the median interval
    # (2 days) from 3 May: 3-4 May, $30 a day. cud-2 bills once, $10 on 4 May: until the export's end (5 May).
    # So 1-3 May carry $30 each and 4 May $40, on 6 GPU-hours a day.
    "recurring fees of a resource each cover until the next": (
        [fee("2025-05-01", 60.0, resource_id="cud-1"), fee("2025-05-03", 60.0, resource_id="cud-1"),
         fee("2025-05-04", 10.0, resource_id="cud-2"), *(reserved(f"2025-05-0{day}", 6.0) for day in (1, 2, 3, 4))],
        [0.0, 0.0, 0.0, 30.0, 30.0, 30.0, 40.0],
        {"commitment_usd": 130.0, "spread_usd": 130.0, "unused_usd": 0.0, "after_export_usd": 0.0,
         "covered_gpu_hours": 24.0}),
    # Unnamed fees recur together: $20 on 1 May covers 1 May (until the next), $20 on 2 May the median interval (a
    # day): 2 May. 3 May has usage and no charge: $0 on it (each alone would cover until 4 May, $6.67 a day).
    "unnamed fees are one group": (
        [fee("2025-05-01", 20.0), fee("2025-05-02", 20.0), *(reserved(f"2025-05-0{day}", 5.0) for day in (1, 2, 3))],
        [0.0, 0.0, 20.0, 20.0, 0.0],
        {"commitment_usd": 40.0, "spread_usd": 40.0, "unused_usd": 0.0, "after_export_usd": 0.0,
         "covered_gpu_hours": 15.0}),
    # $30 on 1 and 4 May: 1-3 May and 4-6 May, $10 a day. The export ends with 5 May (usage to 6 May 00:00):
    # 6 May's $10 belongs to the next period and leaves the figures; 1-5 May carry $10 each (3 GPU-hours a day).
    "the part after the export's end leaves the figures": (
        [fee("2025-05-01", 30.0, resource_id="sub"), fee("2025-05-04", 30.0, resource_id="sub"),
         *(reserved(f"2025-05-0{day}", 3.0) for day in (1, 2, 3, 4, 5)),
         {"period_start": "2025-05-02", "gpu_hours": 8.0, "cost": 24.0, "pricing": "on_demand"}],
        [0.0, 0.0, 10.0, 10.0, 10.0, 10.0, 10.0, 24.0],
        {"commitment_usd": 60.0, "spread_usd": 50.0, "unused_usd": 0.0, "after_export_usd": 10.0,
         "covered_gpu_hours": 15.0}),
    # $400 once on 1 May, to the export's end (5 May): $100 a day. A runs 1 May 12:00 to 4 May 12:00 (72 GPU-hours:
    # 12, 24, 24, 12 a day), B all of 4 May (12 GPU-hours). 1-3 May are A's alone: $300; 4 May is shared 12:12:
    # $50 each. A: $350, B: $50 (a row's share is the sum over its days).
    "a row across days takes each day's share": (
        [fee("2025-05-01 00:00", 400.0),
         reserved("2025-05-01 12:00", 72.0, period_end="2025-05-04 12:00"), reserved("2025-05-04 00:00", 12.0)],
        [0.0, 350.0, 50.0],
        {"commitment_usd": 400.0, "spread_usd": 400.0, "unused_usd": 0.0, "after_export_usd": 0.0,
         "covered_gpu_hours": 84.0}),
    # The last usage is an instant at midnight on 2 May (no duration): the export ends at that midnight. A $20 refund
    # billed at that instant covers that day alone (its end is before its start), a day after the export: it leaves
    # the figures (-$20 after the export), and the usage at midnight takes nothing of it (spread $0).
    "a charge on the day the export ends leaves it": (
        [fee("2025-05-02 00:00", -20.0, period_end="2025-05-01 23:00", resource_id="cud-1"),
         reserved("2025-05-01 00:00", 8.0, period_end="2025-05-02 00:00"),
         reserved("2025-05-02 00:00", 8.0, period_end="2025-05-02 00:00")],
        [0.0, 0.0, 0.0],
        {"commitment_usd": -20.0, "spread_usd": 0.0, "unused_usd": 0.0, "after_export_usd": -20.0,
         "covered_gpu_hours": 16.0}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hand_worked_bills(duckdb_backend, name):
    rows, costs, figures = CASES[name]
    bill = usage(*rows)
    result, info = _amortised(duckdb_backend, bill)
    assert (info.status, info.label) == ("amortised", "commitments amortised")
    assert result["cost"].tolist() == pytest.approx(costs, **CLOSE)
    paid = bill["charge_kind"].eq("commitment").fillna(False)
    assert result["charge_kind"].fillna("(na)").tolist() == bill["charge_kind"].mask(paid, "unused_commitment").fillna(
        "(na)").tolist()
    assert result["billed_cost"].tolist() == bill["billed_cost"].tolist()  # what was invoiced is kept
    assert {name: getattr(info, name) for name in FIGURES} == pytest.approx(figures, **CLOSE)
    # the covered rows' cost plus what is left on the lines equals the charges less the part after the export
    assert result["cost"].sum() == pytest.approx(bill["cost"].sum() - info.after_export_usd, **CLOSE)


STATUS_CASES = {
    "none": ([reserved("2025-05-01", 10.0, cost=72.0)], 0.0, 0.0),
    "no_gpu": ([fee("2025-05-01", 100.0), {"gpu_hours": 0.0, "cost": 5.0}], 100.0, 0.0),
    # the export states the unused $30 itself; the reserved usage has its cost already
    "provider": ([fee("2025-05-02", 30.0, charge_kind="unused_commitment"), reserved("2025-05-01", 10.0, cost=72.0)],
                 30.0, 30.0),
    # a paid line but only on-demand GPU usage: nothing to put it on
    "excluded": ([fee("2025-05-01", 100.0), {"gpu_hours": 10.0, "cost": 20.0, "pricing": "on_demand"}], 100.0, 0.0),
}


@pytest.mark.parametrize("status", list(STATUS_CASES))
def test_what_is_not_amortised_is_said_and_the_table_is_kept(duckdb_backend, status):
    rows, commitment_usd, unused_usd = STATUS_CASES[status]
    table = tables.usage_table(duckdb_backend, usage(*rows))
    result, info = amortise_commitments(table)
    assert result is table
    assert (info.status, info.label) == (status, LABELS[status])
    assert (info.commitment_usd, info.unused_usd) == pytest.approx((commitment_usd, unused_usd))
    assert (info.spread_usd, info.after_export_usd, info.covered_gpu_hours) == (0.0, 0.0, 0.0)
    assert commitment_status(table) == info
    assert status in STATUSES


def test_a_bill_to_amortise_reads_to_spread_from_the_status_query(duckdb_backend):
    table = tables.usage_table(duckdb_backend, usage(*CASES["an idle day's part stays on the line"][0]))
    assert commitment_status(table).status == "to_spread"


def _same_as_oracle(frame: pd.DataFrame, result: pd.DataFrame, info: Amortisation) -> None:
    want, expected = oracle.amortise_commitments(frame)
    assert (info.status, info.label) == (expected["status"], expected["label"])
    assert {name: getattr(info, name) for name in FIGURES} == pytest.approx({name: expected[name] for name in FIGURES},
                                                                   **CLOSE)
    want = want.sort_values("source_row", ignore_index=True)
    assert result["cost"].to_numpy() == pytest.approx(want["cost"].to_numpy(), nan_ok=True, **CLOSE)
    unchanged = [column for column in CANONICAL_COLUMNS if column != "cost"]
    pd.testing.assert_frame_equal(result[unchanged], want[unchanged], check_dtype=False)


BILLS = ("gcp_sample.csv", "azure_sample.csv", "focus_sample.csv", "aws_cur_sample.csv")


@pytest.mark.parametrize("name", BILLS)
def test_the_samples_match_the_pandas_method(duckdb_backend, name):
    frame = import_path(SAMPLES / name)[0]
    result, info = _amortised(duckdb_backend, frame)
    assert info.status == ("amortised" if name in BILLS[:2] else "provider")
    _same_as_oracle(frame, result, info)


@pytest.mark.parametrize("name", BILLS[:2])
def test_stored_time_zone_aware_times_match_the_pandas_method(duckdb_backend, name):
    """A workspace dataset's Parquet (times read by DuckDB as TIMESTAMP WITH TIME ZONE) keeps its types."""
    frame = import_path(SAMPLES / name)[0]
    with tempfile.TemporaryDirectory() as folder:
        frame.to_parquet(f"{folder}/usage.parquet")
        table = duckdb_backend.read_parquet(f"{folder}/usage.parquet")
        assert table.schema()["period_start"].timezone == "UTC"
        result, info = amortise_commitments(table)
        assert result.schema() == table.schema()
        _same_as_oracle(frame, _rows(result), info)


def test_spark_matches_the_pandas_method(spark_backend):
    frame = import_path(SAMPLES / "azure_sample.csv")[0]
    result, info = _amortised(spark_backend, frame)
    assert info.status == "amortised"
    _same_as_oracle(frame, result, info)


ORIGIN = pd.Timestamp("2025-03-30", tz="UTC")
DURATIONS_MIN = (0, -60, 15, 60, 90, 24 * 60, 26 * 60, 3 * 24 * 60 + 45)


def _start(draw) -> pd.Timestamp:
    return ORIGIN + timedelta(minutes=15 * draw(st.integers(0, 4 * 24 * 20)))


@st.composite
def charges(draw):
    """A commitment line: mostly a day's fee (which recurs with others of its resource id, or of none), sometimes
    longer, shorter or of no duration; a few with GPU-hours or a refund."""
    start = _start(draw)
    minutes = draw(st.sampled_from([*[24 * 60] * 5, 0, -60, 60, 26 * 60, 31 * 24 * 60]))
    return {"period_start": start, "period_end": start + timedelta(minutes=minutes),
            "gpu_hours": draw(st.sampled_from([0.0, 0.0, 0.0, 8.0])),
            "cost": draw(st.sampled_from([24.0, 300.0, 0.0, -20.0])),
            "pricing": draw(st.sampled_from(["reserved", None])),
            "charge_kind": "commitment", "resource_id": draw(st.sampled_from([None, "", "cud-1", "cud-1", "cud-2"])),
            "currency": "USD"}


@st.composite
def usage_rows(draw):
    """A usage row: mostly reserved usage at $0 or NA (what an actual-cost export bills), sometimes priced,
    on-demand, not GPU or an unused-commitment line."""
    start = _start(draw)
    duration = draw(st.sampled_from([None, *DURATIONS_MIN]))
    pricing = draw(st.sampled_from(["reserved", "reserved", "reserved", "on_demand", None]))
    costs = [0.0, 0.0, np.nan, 0.0, 0.0, np.nan, 0.0, 10.0] if pricing == "reserved" else [0.0, 10.0, np.nan]
    return {"period_start": start, "period_end": pd.NaT if duration is None else start + timedelta(minutes=duration),
            "gpu_hours": draw(st.sampled_from([8.0, 8.0, 24.0, 2.5, 0.0, -4.0, np.nan])),
            "cost": draw(st.sampled_from(costs)), "pricing": pricing,
            "charge_kind": draw(st.sampled_from(["usage", "usage", "usage", "unused_commitment", None])),
            "resource_id": draw(st.sampled_from([None, "cud-1", "vm-1"])), "team": draw(st.sampled_from(["a", None])),
            "currency": "USD"}


def _bill(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[column for column in CANONICAL_COLUMNS if column != "source_row"])
    frame["billed_cost"] = frame["cost"]
    frame["source_row"] = range(2, len(frame) + 2)
    for column in tables.TIME_COLUMNS:
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS)


bills = st.builds(lambda lines, rows: _bill(lines + rows), st.lists(charges(), min_size=1, max_size=5),
                  st.lists(usage_rows(), min_size=1, max_size=12)).flatmap(
    lambda frame: st.permutations(range(len(frame))).map(lambda order: frame.iloc[list(order)].reset_index(drop=True)))


@settings(max_examples=60, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.too_slow])
@given(frame=bills)
def test_random_bills_match_the_pandas_method(duckdb_backend, frame):
    result, info = _amortised(duckdb_backend, frame)
    _same_as_oracle(frame.sort_values("source_row", ignore_index=True), result, info)
