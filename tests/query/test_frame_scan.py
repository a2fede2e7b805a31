"""A pandas frame's table on DuckDB: a temporary table of its own with all its rows, sorted by team and start and
dropped with the last expression over it; the filtered view's tests reach DuckDB's scan, which skips the row groups
whose teams and days are not chosen."""

import gc
from pathlib import Path

import pandas as pd
import pytest

from dashboard import ingest
from dashboard.ingest.schema import ReadOptions
from dashboard.query import engine, tables
from dashboard.query.columns import gpu, rows_where
from dashboard.query.compiled import execute, query
from dashboard.retro import filters

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
FRAME = pd.DataFrame({"gpu_hours": [8.0, None, 0.0, 2.5], "cost": [16.0, 3.0, 1.0, 5.0]})
TYPED = pd.DataFrame({
    "period_start": pd.to_datetime(["2026-01-01 00:00", "2026-01-01 01:00", "2026-01-02 00:00", "2026-01-03 00:00"],
                                   utc=True),
    "team": pd.array(["a", None, "b", "a"], dtype="string"), "gpu_hours": FRAME["gpu_hours"], "cost": FRAME["cost"]})
LARGE = pd.concat([FRAME] * 60_000, ignore_index=True)  # 240,000 rows: two of DuckDB's row groups


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


def test_a_frame_is_a_table_of_its_own_dropped_with_its_last_expression():
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, FRAME)
    name = table.get_name()
    assert _kinds(backend).get(name) == "LOCAL TEMPORARY"
    assert name in tables.FRAME_VIEWS  # its rows never change, so small results over it are kept
    del table
    gc.collect()
    assert name not in _kinds(backend) and name not in tables.FRAME_VIEWS


def test_the_rows_are_sorted_by_team_then_start():
    frame = pd.DataFrame({
        "period_start": pd.to_datetime(["2026-01-03", "2026-01-01", "2026-01-02", "2026-01-01"], utc=True),
        "team": pd.array(["b", None, "a", "b"], dtype="string"), "source_row": [1, 2, 3, 4]})
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, frame)
    stored = backend.con.sql(f'SELECT source_row FROM "{table.get_name()}"').fetchall()
    assert [row for (row,) in stored] == [3, 4, 1, 2]  # a; b on the 1st, b on the 3rd; the untagged row last


@pytest.mark.parametrize("teams", [["a"], ["a", "b"], ["a", "(untagged)"]])
def test_the_filtered_views_team_test_is_in_duckdbs_scan(teams):
    """Tested on the column itself, where the row groups' smallest and largest team answer it: a test on the label
    (``COALESCE(team, '(untagged)') IN (…)``, which DuckDB rewrites bare only when "(untagged)" is not chosen)
    reaches the scan too, but no statistics answer it."""
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, TYPED)
    plan = backend.con.sql(f"EXPLAIN {backend.compile(filters.filtered(table, teams=teams))}").fetchall()[0][1]
    tested = plan[plan.index("SEQ_SCAN"):]
    tested = tested[tested.index("Filters:"):]
    assert "team" in tested and "COALESCE" not in plan


@pytest.mark.parametrize(("teams", "sources"), [
    (["a"], [1, 4]), (["(untagged)"], [2]), (["a", "(untagged)"], [1, 2, 4]), (["b", "c"], [3]), ([], [])])
def test_the_filtered_view_keeps_the_chosen_labels_rows(teams, sources):
    table = tables.usage_table(engine.connect("duckdb"), TYPED.assign(source_row=[1, 2, 3, 4]))
    rows = engine.execute(filters.filtered(table, teams=teams).order_by("source_row").source_row)
    assert rows.tolist() == sources


def _sample(name):
    """The sample as the page binds it: the imported rows (commitments are amortised later, as a query)."""
    return ingest.import_path(SAMPLES / name, options=ReadOptions(timezone="UTC"))[0]


@pytest.mark.parametrize("name", [*sorted(path.name for path in SAMPLES.glob("*_sample.*")), "typed"])
def test_a_small_frames_table_has_the_schema_duckdb_reports(name):
    """Its schema is taken from the Arrow copy, with no DESCRIBE query: it must be the one DuckDB gives."""
    backend = engine.connect("duckdb")
    table = tables.usage_table(backend, TYPED if name == "typed" else _sample(name))
    assert table.schema() == backend.get_schema(table.get_name())
