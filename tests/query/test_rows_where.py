"""``columns.rows_where``: the rows a test holds for, the same as a filter on the test itself, written with bare
comparisons an engine can test while it scans."""

import ibis
import pandas as pd
import pytest

from dashboard.query import columns, engine

# gpu_hours: 8, NULL, 0, -2; run_id: "r1", "r2", NULL, "r4"
FRAME = pd.DataFrame({"gpu_hours": [8.0, None, 0.0, -2.0], "run_id": ["r1", "r2", None, "r4"], "n": [1, 2, 3, 4]})


@pytest.mark.parametrize(("test", "kept"), [
    (lambda t: columns.holds(t.gpu_hours > 0), [1]),
    (lambda t: columns.holds(t.gpu_hours > 0) & t.run_id.notnull(), [1]),
    (lambda t: ~columns.holds(t.gpu_hours > 0), [2, 3, 4]),  # under NOT a NULL test must stay false: kept as is
    (lambda t: columns.holds(t.gpu_hours <= 0) | t.run_id.isnull(), [3, 4]),  # an OR is kept as is
    (lambda t: columns.holds(t.gpu_hours != 0) & ~columns.holds(t.gpu_hours > 0), [4]),
])
def test_same_rows_as_the_filter(test, kept):
    backend = engine.connect("duckdb")
    table = backend.create_table("usage", ibis.memtable(FRAME))
    got = sorted(backend.execute(columns.rows_where(table, test(table)))["n"])
    assert got == kept == sorted(backend.execute(table.filter(test(table)))["n"])


def test_and_ed_terms_are_bare_comparisons():
    table = ibis.table({"gpu_hours": "float64", "tokens": "float64"}, name="usage")
    sql = ibis.to_sql(columns.rows_where(table, columns.holds(table.gpu_hours != 0) & columns.holds(table.tokens > 0)),
                      dialect="duckdb")
    assert "COALESCE" not in sql and '"gpu_hours" <> 0' in sql and '"tokens" > 0' in sql
