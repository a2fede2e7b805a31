"""Issue 52: the rollups are queries of the one engine layer. The grouping-sets query an import runs
(``rollups.sets_sql``) gives the same rollups on DuckDB and on Spark (``local[1]``; skipped, saying so, without Java
or PySpark), each rollup's sums per sign of GPU-hours and cost worked out by hand."""

from decimal import Decimal

import pandas as pd
import pytest

from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import tables
from dashboard.workspace import rollups
from dashboard.workspace.rollups import ROLLUPS, SET

ROWS = [  # start, end, gpu_hours, cost, pricing, charge_kind, team
    ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 20.1, "reserved", "usage", "a"),
    ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 20.2, "reserved", "usage", "a"),
    ("2025-04-01 10:00", "2025-04-01 11:00", -4.0, -10.0, "reserved", "usage", "a"),  # a credit
    ("2025-04-01 12:30", "2025-04-01 14:30", 4.0, None, "on_demand", "usage", "b"),  # across hours, no cost
    ("2025-04-03 00:00", "2025-04-04 00:00", None, 50.0, "reserved", "commitment", None),
    ("2025-04-03 00:00", "2025-04-04 00:00", None, -50.0, "reserved", "commitment", None),
]
HOUR_10 = 1_743_501_600 // 3_600  # 2025-04-01 10:00 UTC, in hours since 1970


def _usage(backend):
    frame = pd.DataFrame(ROWS, columns=["period_start", "period_end", "gpu_hours", "cost", "pricing", "charge_kind",
                                       "team"])
    for column in ("period_start", "period_end"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    frame = frame.assign(billed_cost=frame["cost"], currency="USD", project=None, run_id=None, gpu_type="H100",
                         resource_id=None, run_state=None, tokens=float("nan"), source_row=range(2, len(frame) + 2))
    return tables.usage_table(backend, frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS))


def _key(column: str, value):
    """A grain value as Python: NULL as None, times and signs as int (each engine has its own integer types)."""
    if pd.isna(value):
        return None
    return int(value) if column.endswith(("_s", "_sign")) or column in ("day", "hour") else value


def _rollups(backend) -> dict[str, list[tuple]]:
    """Each rollup's rows from the one grouping-sets query on ``backend``: its grain and sums, sorted."""
    _, ids = rollups.set_ids(ROLLUPS, month=False)
    usage = _usage(backend)  # held while the query runs: the bound table lives as long as it
    sets = backend.sql(rollups.sets_sql(backend, usage, ROLLUPS)).to_pandas()
    found = {}
    for rollup in ROLLUPS:
        rows = sets[sets[SET] == ids[rollup.name]]
        keys = rollups._grouped_by(rollup, month=False)
        found[rollup.name] = sorted([
            (tuple(_key(k, row[k]) for k in keys), int(row["rows"]),
             *(None if pd.isna(row[m]) else Decimal(row[m]) for m in ("gpu_hours", "cost")))
            for _, row in rows.iterrows()], key=repr)
    return found


@pytest.fixture(scope="module")
def on_duckdb():
    from dashboard.query import engine

    return _rollups(engine.connect("duckdb"))


def test_the_hourly_rollup_keeps_each_sign_apart(on_duckdb):
    hourly = {key: sums for key, *sums in on_duckdb["hourly"]}
    # 10:00, reserved usage: the two charges (8 + 8 GPU-hours, 20.1 + 20.2) apart from the credit (-4, -10)
    assert hourly[HOUR_10, None, None, "reserved", "usage", 1, 1, "USD"] == [2, Decimal("16"), Decimal("40.3")]
    assert hourly[HOUR_10, None, None, "reserved", "usage", -1, -1, "USD"] == [1, Decimal("-4"), Decimal("-10")]
    # the commitment lines of 3 April run past their hour: their own span, and +50 and -50 stay two rows
    span = (1_743_638_400, 1_743_724_800)
    hour = span[0] // 3_600
    assert hourly[hour, *span, "reserved", "commitment", None, 1, "USD"] == [1, None, Decimal("50")]
    assert hourly[hour, *span, "reserved", "commitment", None, -1, "USD"] == [1, None, Decimal("-50")]
    assert sum(n for _, n, *_ in on_duckdb["hourly"]) == len(ROWS)


def test_spark_builds_the_same_rollups(on_duckdb, spark_backend):
    assert _rollups(spark_backend) == on_duckdb
