"""A pandas frame's table on DuckDB: its rows are all there; a small frame is a DuckDB table of its own, dropped with
the last expression over it; a larger one is a view whose query filters are not pushed into the Arrow scan (where
pyarrow would evaluate them, three times slower than DuckDB's own filter on a 1M-row upload)."""

import gc
from pathlib import Path

import pandas as pd
import pytest

from dashboard import ingest
from dashboard.ingest.schema import ReadOptions
from dashboard.query import engine, tables
from dashboard.query.columns import gpu, rows_where
from dashboard.query.compiled import execute, query

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
FRAME = pd.DataFrame({"gpu_hours": [8.0, None, 0.0, 2.5], "cost": [16.0, 3.0, 1.0, 5.0]})
LARGE = pd.concat([FRAME] * (tables.SMALL_FRAME_ROWS // len(FRAME) + 1), ignore_index=True)  # above the bound


@query
def _gpu_cost(usage):
    return execute(rows_where(usage, gpu(usage)).aggregate(cost=lambda t: t.cost.sum(), rows=lambda t: t.count()))


@pytest.mark.parametrize(("frame", "copies"), [(FRAME, 1), (LARGE, len(LARGE) // len(FRAME))])
def test_every_row_is_read(frame, copies):
    table = tables.usage_table(engine.connect("duckdb"), frame)
    assert engine.execute(table.count()) == 4 * copies
    assert _gpu_cost(table).iloc[0].tolist() == [21.0 * copies, 2 * copies]  # 16 + 5, the rows with GPU-hours > 0


def _kinds(backend) -> dict[str, str]:
    rows = backend.con.sql("SELECT table_name, table_type FROM information_schema.tables "
                           "WHERE table_name LIKE 'usage_%'").fetchall()
    return dict(rows)


def test_a_small_frame_is_a_table_of_its_own_dropped_with_its_last_expression():
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, FRAME)
    name = table.get_name()
    assert _kinds(backend).get(name) == "LOCAL TEMPORARY"
    assert name in tables.FRAME_VIEWS  # its rows never change, so small results over it are kept
    del table
    gc.collect()
    assert name not in _kinds(backend) and name not in tables.FRAME_VIEWS


def test_a_large_frames_filter_is_duckdbs_not_the_arrow_scans():
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, LARGE)
    assert _kinds(backend).get(table.get_name()) == "VIEW"
    plan = backend.con.sql(f"EXPLAIN {backend.compile(rows_where(table, gpu(table)))}").fetchall()[0][1]
    scan = plan[plan.index("ARROW_SCAN"):]
    assert "FILTER" in plan and "gpu_hours" in plan
    assert "Filters" not in scan  # DuckDB lists a filter it pushed into a scan under the scan


TYPED = pd.DataFrame({
    "period_start": pd.to_datetime(["2026-01-01 00:00", "2026-01-01 01:00", "2026-01-02 00:00", "2026-01-03 00:00"],
                                   utc=True),
    "team": pd.array(["a", None, "b", "a"], dtype="string"), "gpu_hours": FRAME["gpu_hours"], "cost": FRAME["cost"]})


def _sample(name):
    """The sample as the page binds it: the imported rows (commitments are amortised later, as a query)."""
    return ingest.import_path(SAMPLES / name, options=ReadOptions(timezone="UTC"))[0]


@pytest.mark.parametrize("name", [*sorted(path.name for path in SAMPLES.glob("*_sample.*")), "typed"])
def test_a_small_frames_table_has_the_schema_duckdb_reports(name):
    """Its schema is taken from the Arrow copy, with no DESCRIBE query: it must be the one DuckDB gives."""
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, TYPED if name == "typed" else _sample(name))
    assert table.schema() == backend.get_schema(table.get_name())
