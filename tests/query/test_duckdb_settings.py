"""The DuckDB connection the query layer opens: its memory limit (``PLANNER_DUCKDB_MEMORY_LIMIT``), a spill folder
of its own, no insertion order, the allocator's background thread, epoch seconds of time-zone-aware times taken
without a cast, and results kept inside ``compiled.one_view`` only."""

from datetime import UTC, datetime

import ibis
import pandas as pd
import pytest

from dashboard import settings
from dashboard.query import compiled, engine
from dashboard.retro import waste


def _setting(backend, name: str):
    return backend.con.sql(f"SELECT current_setting('{name}')").fetchone()[0]


@pytest.mark.parametrize(("value", "bytes_shown"), [
    ("", "1.8 GiB"),  # the default, 2GB = 2,000,000,000 bytes = 1.86 GiB, which DuckDB shows rounded down
    ("512MB", "488.2 MiB"),  # 512,000,000 / 2**20
    ("1GiB", "1.0 GiB"),
    (" 3 GB ", "2.7 GiB"),  # 3e9 / 2**30 = 2.79
])
def test_memory_limit_from_the_setting(monkeypatch, value, bytes_shown):
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT, value)
    assert _setting(engine.connect("duckdb"), "memory_limit") == bytes_shown


@pytest.mark.parametrize("value", ["2", "lots", "2 GB; DROP TABLE x", "-1GB", "0GB", "50%", "2PB"])
def test_bad_memory_limit_is_refused_with_its_name(monkeypatch, value):
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT, value)
    with pytest.raises(settings.SettingError, match=settings.DUCKDB_MEMORY_LIMIT):
        engine.connect("duckdb")


def test_each_connection_spills_to_its_own_folder_and_keeps_no_order():
    first, second = engine.connect("duckdb"), engine.connect("duckdb")
    folders = {_setting(backend, "temp_directory") for backend in (first, second)}
    assert len(folders) == 2 and all("planner-duckdb-" in folder for folder in folders)
    assert _setting(first, "preserve_insertion_order") is False
    assert _setting(first, "allocator_background_threads") is True


def test_epoch_of_stored_utc_times(tmp_path):
    # 2025-04-01 00:00 UTC is 1,743,465,600 s after 1970-01-01 (20,179 days × 86,400 s); 01:30 adds 5,400 s.
    path = tmp_path / "times.parquet"
    stamps = [datetime(2025, 4, 1, tzinfo=UTC), datetime(2025, 4, 1, 1, 30, tzinfo=UTC)]
    pd.DataFrame({"period_start": pd.to_datetime(stamps, utc=True)}).to_parquet(path)
    backend = engine.connect("duckdb")
    table = backend.read_parquet(str(path))
    epoch = table.period_start.epoch_seconds()
    assert 'EPOCH("t0"."period_start")' in str(backend.compile(table.select(epoch.name("s"))))  # no cast per row
    assert sorted(backend.execute(table.select(s=epoch))["s"]) == [1_743_465_600, 1_743_465_600 + 5_400]


def _stored(tmp_path, backend) -> ibis.Table:
    frame = pd.DataFrame({"period_start": pd.to_datetime(["2025-05-01"], utc=True),
                          "period_end": pd.to_datetime(["2025-05-02"], utc=True), "gpu_hours": [8.0],
                          "cost": [20.0], "currency": ["USD"], "pricing": ["on_demand"], "charge_kind": ["usage"],
                          "gpu_type": ["H100"], "resource_id": ["1"], "team": [None], "project": [None],
                          "run_id": ["r1"], "run_state": ["FAILED"], "tokens": [None], "source_row": [2],
                          "billed_cost": [20.0]}).astype({"team": "string", "project": "string",
                                                          "tokens": "float64"})
    frame.to_parquet(tmp_path / "usage.parquet")
    return backend.read_parquet(str(tmp_path / "usage.parquet"))


def test_results_on_a_dataset_are_kept_within_one_view_only(tmp_path, monkeypatch):
    backend = engine.connect("duckdb")
    table = _stored(tmp_path, backend)
    queries = []
    fetch = engine.fetch_sql
    monkeypatch.setattr(engine, "fetch_sql", lambda *args: queries.append(args[1]) or fetch(*args))
    with compiled.one_view():
        failed = waste.failed_runs(table)
        untagged = waste.untagged_spend(table)
    assert len(queries) == 2  # the checks' aggregates are one query, their flags another
    assert failed.failed_gpu_hours == 8.0 and failed.failed_cost == 20.0 and untagged.total_cost == 20.0
    assert failed.known and failed.cost_known and untagged.cost_known
    waste.failed_runs(table)
    waste.untagged_spend(table)
    assert len(queries) == 6  # outside a view, a dataset's rows may change: each asks again
