"""A pandas frame's table on DuckDB: its rows are all there, and a query's filter is not pushed into the Arrow
scan (where pyarrow would evaluate it, three times slower than DuckDB's own filter on a 1M-row upload)."""

import pandas as pd

from dashboard.query import engine, tables
from dashboard.query.columns import gpu, rows_where
from dashboard.query.compiled import execute, query

FRAME = pd.DataFrame({"gpu_hours": [8.0, None, 0.0, 2.5], "cost": [16.0, 3.0, 1.0, 5.0]})


@query
def _gpu_cost(usage):
    return execute(rows_where(usage, gpu(usage)).aggregate(cost=lambda t: t.cost.sum(), rows=lambda t: t.count()))


def test_every_row_is_read():
    table = tables.usage_table(engine.connect("duckdb"), FRAME)
    assert engine.execute(table.count()) == 4
    assert _gpu_cost(table).iloc[0].tolist() == [21.0, 2]  # 16 + 5 over the two rows with GPU-hours > 0


def test_the_filter_is_duckdbs_not_the_arrow_scans():
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, FRAME)
    plan = backend.con.sql(f"EXPLAIN {backend.compile(rows_where(table, gpu(table)))}").fetchall()[0][1]
    scan = plan[plan.index("ARROW_SCAN"):]
    assert "FILTER" in plan and "gpu_hours" in plan
    assert "Filters" not in scan  # DuckDB lists a filter it pushed into a scan under the scan
