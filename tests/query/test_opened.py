"""A dataset queried where it lies: its type test, DuckDB's memory bound and spill folder, and its first rows."""

import ibis
import pandas as pd
import pytest

from dashboard.query import opened


def _setting(backend, name: str) -> str:
    return backend.con.sql(f"SELECT current_setting('{name}')").fetchone()[0]


def test_duckdb_is_bounded_and_spills_to_a_temporary_folder(monkeypatch):
    monkeypatch.delenv(opened.DUCKDB_MEMORY_SETTING, raising=False)
    backend = opened.bound_memory(ibis.duckdb.connect())
    assert _setting(backend, "memory_limit") == "2.7 GiB"  # 3 GB = 3e9 bytes = 2.79 GiB, printed rounded down
    assert "planner-duckdb-" in _setting(backend, "temp_directory")


def test_an_operators_setting_leaves_the_bound_alone(monkeypatch):
    monkeypatch.setenv(opened.DUCKDB_MEMORY_SETTING, "8GB")
    backend = ibis.duckdb.connect()
    before = _setting(backend, "memory_limit")
    assert _setting(opened.bound_memory(backend), "memory_limit") == before


def test_first_rows_come_in_batches_and_stop_at_the_cap():
    backend = ibis.duckdb.connect()
    table = backend.create_table("rows", pd.DataFrame({"n": range(10)}))
    batches = list(opened.first_rows(table.order_by("n"), 5, 2))
    assert all(len(batch) <= 2 for batch in batches)
    assert pd.concat(batches)["n"].tolist() == [0, 1, 2, 3, 4]
    assert opened.is_table(table) and not opened.is_table(pd.DataFrame())


@pytest.mark.parametrize("rows", [0, 3])
def test_first_rows_of_an_empty_view(rows):
    table = ibis.duckdb.connect().create_table("rows", pd.DataFrame({"n": [1, 2]}))
    assert sum(len(batch) for batch in opened.first_rows(table.filter(table.n > 5), rows, 2)) == 0
