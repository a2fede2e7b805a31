"""Issue 52: a dataset whose rollups were built before they kept the rows' latest start and end is read from its rows
by the figures, and appending a month to it rebuilds every month's rollups, proven again, so the figures read them."""

import json
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bench.ingest_bench import focus_table
from dashboard.query import engine
from dashboard.workspace import datasets, rollup_rows, rollups
from dashboard.workspace.imports import import_to_workspace

NEW = ("last_start", "last_end")  # the measures a rollup read as rows needs, added after the first rollups


def _focus_part(path: Path, month: str, seed: int) -> None:
    table = focus_table(2000, seed)
    pq.write_table(table.filter(pc.starts_with(table["ChargePeriodStart"].cast("string"), f"2025-{month}")), path)


def _as_before(at: Path) -> None:
    """The version folder ``at`` as an import before ``NEW`` wrote it: its rollups' files and entries without them."""
    for path in (at / rollups.ROLLUPS_FOLDER).rglob("*.parquet"):
        table = pq.read_table(path)
        path.unlink()  # a file linked from another version is unlinked, never written to
        pq.write_table(table.drop_columns(list(NEW)), path)
    info = json.loads((at / datasets.METADATA).read_text(encoding="utf-8"))
    for entry in info["rollups"]:
        entry["measures"] = [name for name in entry["measures"] if name not in NEW]
    (at / datasets.METADATA).write_text(json.dumps(info), encoding="utf-8")


def test_rollups_without_the_rows_times_are_rebuilt_by_an_append(workspace, tmp_path):
    _focus_part(tmp_path / "april.parquet", "04", seed=3)
    _focus_part(tmp_path / "may.parquet", "05", seed=4)
    import_to_workspace(tmp_path / "april.parquet", "bill", stream_min_bytes=0)
    _as_before(datasets.current("bill"))
    old = datasets.metadata("bill")
    backend = engine.connect("duckdb")
    answer = rollup_rows.rows_answer(backend, old, datasets.current("bill"), ("team",), "day")
    assert answer.rollup is None and answer.label == f"the rows ({old.rows:,})"  # read from the rows meanwhile

    after = import_to_workspace(tmp_path / "may.parquet", "bill", append=True)
    at = datasets.current("bill")
    for entry in after.rollups:
        assert set(NEW) <= set(entry["measures"])
        for month in ("2025-04", "2025-05"):  # April rebuilt too: every file has the rows' times
            (part,) = (rollups.folder(at, rollups.BY_NAME[entry["name"]]) / f"month={month}").glob("*.parquet")
            assert set(NEW) <= set(pq.read_schema(part).names)
    rollups.prove(backend, at, after.rollups, after.months)
    answer = rollup_rows.rows_answer(backend, after, at, ("team",), "day")
    assert answer.rollup is not None and answer.rollup.name == "daily_team"


@pytest.mark.parametrize(("kept", "written", "rebuilt"), [
    (None, ["2025-05"], ["2025-05"]),  # a new dataset: the months written
    ("current", ["2025-05"], ["2025-05"]),  # an append to rollups of today's measures: the new month only
    ("before", ["2025-05"], ["2025-04", "2025-05"]),  # to rollups without the rows' times: every month
    ("unsigned", ["2025-05"], ["2025-04", "2025-05"]),  # to an hourly rollup of before its signs: every month
])
def test_the_months_an_import_rolls_up(tmp_path, kept, written, rebuilt):
    for month in ("2025-04", "2025-05"):
        (tmp_path / datasets.USAGE / f"month={month}").mkdir(parents=True)
    measures = [m.name for m in rollups.MEASURES]
    grain = list(rollups.BY_NAME["daily_team"].grain)
    entries = {None: None, "current": [{"name": "daily_team", "grain": grain, "measures": measures}],
               "before": [{"name": "daily_team", "grain": grain, "measures": [m for m in measures if m not in NEW]}],
               "unsigned": [{"name": "hourly", "grain": ["hour", "start_s", "end_s", "pricing", "charge_kind",
                                                          "currency"], "measures": measures}]}[kept]
    assert rollups.stale(tmp_path, written, entries) == rebuilt
