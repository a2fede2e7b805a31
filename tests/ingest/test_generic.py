"""Generic mapped-CSV reader: the mapping rules, derived GPU-hours and periods, rejections, accounting."""

from __future__ import annotations

from pathlib import Path

import hypothesis.strategies as st
import pandas as pd
import pytest
from hypothesis import given, settings

from dashboard.ingest.engine import read_table
from dashboard.ingest.formats import generic
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions, UnreadableFile

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "ingest" / "generic_usage.csv"
FULL = {"period_start": "day", "gpu_hours": "gpu_h", "cost": "cost_usd", "currency": "ccy",
        "gpu_type": "model", "team": "team", "pricing": "purchase", "run_id": "job", "run_state": "status",
        "tokens": "tokens"}
BY_COUNT_AND_END = {"period_start": "start", "period_end": "end", "gpu_count": "gpus"}
BY_COUNT_AND_HOURS = {"period_start": "day", "gpu_count": "gpus", "duration_h": "hours"}


def table_from_file(path: Path) -> pd.DataFrame:
    """The file as decode hands it over: strings, NA for empty cells, index = source line number."""
    table = pd.read_csv(path, dtype="string", keep_default_na=False).replace("", pd.NA)
    table.index = range(2, len(table) + 2)
    return table


def read(mapping, **options):
    return read_table(generic.FORMAT, table_from_file(SAMPLE), ReadOptions(mapping=mapping, **options))


def test_full_mapping_uses_gpu_hours_and_costs():
    result = read(FULL)
    # Lines 2-5 used; 6 has day 'not-a-date', 7 has gpu_h 'x', 8 has an empty cost.
    assert result.usage["source_row"].tolist() == [2, 3, 4, 5]
    assert result.usage["gpu_hours"].sum() == 203.0  # 96 + 96 + 8 + 3
    assert result.usage["cost"].sum() == 1468.0  # 240.00 + "1,200.50" + 20.00 + 7.50
    assert result.usage["billed_cost"].tolist() == result.usage["cost"].tolist()
    assert result.usage["pricing"].tolist()[:3] == ["on_demand", "spot", "reserved"]
    assert pd.isna(result.usage.loc[3, "pricing"])  # 'bartered'
    assert result.usage["run_state"].tolist() == ["COMPLETED", "FAILED", "CANCELLED", "COMPLETED"]
    assert result.usage.loc[0, "tokens"] == 1_000_000 and result.usage["tokens"].isna().sum() == 3
    assert dict(zip(result.rejected["line"], result.rejected["reason"], strict=True)) == {
        6: "day: cannot read 'not-a-date' as a date-time",
        7: "gpu_h: cannot read 'x' as GPU-hours",
        8: "cost_usd: empty cost",
    }
    assert any("bartered" in warning for warning in result.warnings)
    assert any("read as UTC" in warning for warning in result.warnings)


def test_gpu_hours_only_gives_a_point_in_time():
    usage = read(FULL).usage
    assert (usage["period_end"] == usage["period_start"]).all()


def test_count_and_end_give_gpu_hours():
    result = read(BY_COUNT_AND_END)
    # 8×12 + 16×6 + 4×2 + 2×1.5 + 2×1 + 2×1 (line 7's 'two' GPUs is rejected) = 207
    assert result.usage["gpu_hours"].sum() == 207.0
    assert result.rejected["reason"].tolist() == ["gpus: cannot read 'two' as a GPU count"]
    assert (result.usage["cost"] == 0.0).all()
    assert any("No cost column" in warning for warning in result.warnings)
    assert not any("read as UTC" in warning for warning in result.warnings)  # the times carry Z


def test_count_and_duration_give_gpu_hours_and_end():
    result = read(BY_COUNT_AND_HOURS)
    # As above without line 6 (bad day): 207 - 2 = 205.
    assert result.usage["gpu_hours"].sum() == 205.0
    first = result.usage.iloc[0]
    assert first["period_end"] - first["period_start"] == pd.Timedelta(hours=12)


def test_gpu_hours_with_count_derive_the_end():
    result = read({"period_start": "start", "gpu_hours": "gpu_h", "gpu_count": "gpus"})
    first = result.usage.iloc[0]
    assert first["period_end"] - first["period_start"] == pd.Timedelta(hours=12)  # 96 GPU-h / 8 GPUs


def test_timezone_localises_naive_times():
    table = pd.DataFrame({"s": ["2025-06-01T10:00:00"], "h": ["1"]}, dtype="string", index=[2])
    options = ReadOptions(mapping={"period_start": "s", "gpu_hours": "h"}, timezone="Europe/Berlin")
    result = read_table(generic.FORMAT, table, options)
    assert result.usage.loc[0, "period_start"] == pd.Timestamp("2025-06-01T08:00:00Z")  # CEST = UTC+2
    assert not any("read as UTC" in warning for warning in result.warnings)


def test_timezone_localises_naive_dates():
    result = read(BY_COUNT_AND_HOURS, timezone="Europe/Berlin")
    assert result.usage.loc[0, "period_start"] == pd.Timestamp("2025-05-31T22:00:00Z")


def test_decimal_comma_numbers():
    table = pd.DataFrame({"d": ["2025-06-01"], "h": ["1,5"], "c": ["1.234,50"]}, dtype="string", index=[2])
    options = ReadOptions(mapping={"period_start": "d", "gpu_hours": "h", "cost": "c"}, decimal_comma=True)
    usage = read_table(generic.FORMAT, table, options).usage
    assert usage.loc[0, ["gpu_hours", "cost"]].tolist() == [1.5, 1234.5]


def test_mapping_is_matched_case_insensitively():
    assert len(read({"period_start": "DAY", "gpu_hours": "GPU_H"}).usage) == 5  # all but 'not-a-date', 'x'


@pytest.mark.parametrize(("mapping", "message"), [
    (None, "Not mapped: period_start, gpu_count, duration_h or period_end"),
    ({}, "The file's columns are: day, start, end"),
    ({"period_start": "day"}, "Not mapped: gpu_count, duration_h or period_end"),
    ({"period_start": "day", "gpu_count": "gpus"}, "Not mapped: duration_h or period_end"),
    ({"gpu_hours": "gpu_h"}, "Not mapped: period_start"),
    ({"period_start": "when", "gpu_hours": "gpu_h"}, "period_start → 'when'"),
    ({"period_start": "day", "gpu_hours": "gpu_h", "colour": "team"}, "does not know: colour"),
])
def test_unusable_mapping_is_unreadable(mapping, message):
    with pytest.raises(UnreadableFile, match=message):
        read(mapping)


@pytest.mark.parametrize(("value", "pricing"), [
    ("on-demand", "on_demand"), ("OnDemand", "on_demand"), ("Spot", "spot"), ("preemptible", "spot"),
    ("Reserved", "reserved"), ("savings plan", "reserved"), ("bartered", None),
])
def test_pricing_aliases(value, pricing):
    table = pd.DataFrame({"d": ["2025-06-01"], "h": ["1"], "p": [value]}, dtype="string", index=[2])
    mapping = {"period_start": "d", "gpu_hours": "h", "pricing": "p"}
    usage = read_table(generic.FORMAT, table, ReadOptions(mapping=mapping)).usage
    assert usage["pricing"].fillna("unknown").tolist() == [pricing or "unknown"]


@pytest.mark.parametrize(("cells", "reason"), [
    ({"h": "-1"}, "h: negative GPU-hours"),
    ({"h": None}, "h: empty GPU-hours"),
    ({"d": None}, "d: empty start time"),
    ({"t": "many"}, "t: cannot read 'many' as a token count"),
])
def test_row_rejections(cells, reason):
    row = {"d": "2025-06-01", "h": "1", "t": "5"} | cells
    table = pd.DataFrame([row], dtype="string", index=[2])
    mapping = {"period_start": "d", "gpu_hours": "h", "tokens": "t"}
    assert read_table(generic.FORMAT, table, ReadOptions(mapping=mapping)).rejected["reason"].tolist() == [reason]


def test_end_before_start_is_rejected():
    table = pd.DataFrame({"s": ["2025-06-02"], "e": ["2025-06-01"], "n": ["1"]}, dtype="string", index=[2])
    mapping = {"period_start": "s", "period_end": "e", "gpu_count": "n"}
    result = read_table(generic.FORMAT, table, ReadOptions(mapping=mapping))
    assert result.rejected["reason"].tolist() == ["e: ends before s"]


def test_mappable_fields_cover_every_canonical_column():
    # charge_kind classifies billing rows; a generic file leaves it <NA> (test_charge_kind)
    assert set(CANONICAL_COLUMNS) - {"source_row", "charge_kind"} <= set(generic.MAPPABLE_FIELDS)
    assert all(description.strip() for description in generic.MAPPABLE_FIELDS.values())


def test_usage_has_the_canonical_columns_and_dtypes():
    usage = read(FULL).usage
    assert {name: str(dtype) for name, dtype in usage.dtypes.items()} == CANONICAL_COLUMNS
    assert list(usage.columns) == list(CANONICAL_COLUMNS)


cells = {
    "start": st.sampled_from(["2025-06-01T00:00:00Z", "2025-06-01", "junk", ""]),
    "end": st.sampled_from(["2025-06-01T02:00:00Z", "2025-05-01", "", "?"]),
    "gpus": st.sampled_from(["8", "0", "-1", "", "x"]),
    "cost": st.sampled_from(["10", "(5.00)", "", "$1,000.00", "abc"]),
}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.fixed_dictionaries(cells), max_size=12))
def test_every_row_is_used_excluded_or_rejected_once(rows):
    table = pd.DataFrame(rows, columns=list(cells), dtype="string").replace("", pd.NA)
    table.index = range(2, len(rows) + 2)
    options = ReadOptions(mapping={"period_start": "start", "period_end": "end", "gpu_count": "gpus",
                                   "cost": "cost"})
    result = read_table(generic.FORMAT, table, options)
    lines = [*result.usage["source_row"], *result.excluded["line"], *result.rejected["line"]]
    assert sorted(lines) == list(table.index)
    assert (result.usage["gpu_hours"] >= 0).all()
    assert {name: str(dtype) for name, dtype in result.usage.dtypes.items()} == CANONICAL_COLUMNS
