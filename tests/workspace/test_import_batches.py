"""Issue 52: the import sorts and rolls up each batch as it writes it, and reads nothing back. Each batch's rows are
row groups sorted by team, project and start, so a one-team filter skips the others by their statistics; the rollups
summed from the batches equal those of the rows read back, and the rows' own totals; a month an append adds rows to is
read back whole."""

import math
import shutil
import threading
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bench.ingest_bench import focus_table
from dashboard import settings
from dashboard.query import engine
from dashboard.workspace import datasets, rollups, sorting, writer
from dashboard.workspace.imports import import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
GROUP_ROWS = 500


def _part(path: Path, rows: int, seed: int, month: str | None = None) -> Path:
    table = focus_table(rows, seed)
    if month is not None:
        table = table.filter(pc.starts_with(table["ChargePeriodStart"].cast("string"), f"2025-{month}"))
    pq.write_table(table, path)
    return path


def _touched(part: Path, team: str) -> int:
    """The row groups of ``part`` a filter ``team = …`` reads: those whose minimum and maximum do not exclude it (a
    group of NULL teams only is skipped too)."""
    meta = pq.ParquetFile(part).metadata
    column = meta.schema.names.index("team")
    touched = 0
    for group in range(meta.num_row_groups):
        stats = meta.row_group(group).column(column).statistics
        if stats is not None and stats.null_count == meta.row_group(group).num_rows:
            continue
        if stats is None or not stats.has_min_max or stats.min <= team <= stats.max:
            touched += 1
    return touched


@pytest.mark.parametrize("sort", [True, False], ids=["sorted", "unsorted"])
def test_a_one_team_filter_skips_the_other_teams_row_groups(workspace, tmp_path, monkeypatch, sort):
    monkeypatch.setattr(writer, "ROW_GROUP_ROWS", GROUP_ROWS)
    if not sort:  # the same import writing its batches as they come: every row group holds most teams
        monkeypatch.setattr("dashboard.workspace.sorting.sorted_rows", lambda rows: rows)
    source = _part(tmp_path / "bill.parquet", 24_000, seed=5)
    import_to_workspace(source, "bill", stream_min_bytes=0, batch_rows=100_000)  # one batch: a file per month
    shares = []
    for part in sorted(datasets.usage_folder("bill").rglob("*.parquet")):
        teams = pq.read_table(part, columns=["team"])["team"]
        groups = pq.ParquetFile(part).metadata.num_row_groups
        assert groups == math.ceil(len(teams) / GROUP_ROWS)
        for team in ("team-0", "team-5", "team-11"):
            rows = pc.sum(pc.equal(teams, team)).as_py()
            touched = _touched(part, team)
            if sort:  # a team's rows are contiguous: its own groups and at most one more across a boundary
                assert touched <= math.ceil(rows / GROUP_ROWS) + 1, (part, team)
            shares.append(touched / groups)
    # 12 teams: a team is a twelfth of a month's ~16 groups, about 2 or 3 of them; unsorted, every group has it
    assert (max(shares) <= 0.25) if sort else (min(shares) == 1.0)


def _rollup_rows(backend, at: Path, rollup) -> list[tuple]:
    frame = rollups.read(backend, at, rollup).to_pandas()
    return sorted(map(tuple, frame.astype(object).where(frame.notna(), None).itertuples(index=False)), key=repr)


@pytest.mark.parametrize("compact_rows", [None, 2_000], ids=["summed-at-the-end", "summed-as-they-grow"])
def test_rollups_summed_from_the_batches_equal_those_of_the_rows_read_back(workspace, tmp_path, monkeypatch,
                                                                          compact_rows):
    monkeypatch.setenv(settings.ROLLUP_FREE_ROWS, "1000000")  # every rollup kept: all five compared
    compacted = []
    if compact_rows is not None:  # the batches' sums summed together every few batches, not only at the end
        monkeypatch.setattr(rollups, "COMPACT_ROWS", compact_rows)
        compact = rollups.Partials.compact
        monkeypatch.setattr(rollups.Partials, "compact", lambda partials: compacted.append(compact(partials)))
    source = _part(tmp_path / "bill.parquet", 12_000, seed=5)
    info = import_to_workspace(source, "bill", stream_min_bytes=0, batch_rows=1_000)  # 12 batches summed
    assert (len(compacted) >= 2) if compact_rows else not compacted
    grouping_sets = [entry for entry in info.rollups if entry["name"] != rollups.JOBS.name]  # jobs: its own window
    assert [entry["name"] for entry in grouping_sets] == [rollup.name for rollup in rollups.ROLLUPS]
    at = datasets.current("bill")
    again = tmp_path / "read_back"
    shutil.copytree(at / datasets.USAGE, again / datasets.USAGE)
    backend = engine.connect("duckdb")
    entries = rollups.build(backend, again, info.months, info.imported_at)  # no partials: every month read back
    rollups.prove(backend, again, entries, info.months)
    for rollup in rollups.ROLLUPS:
        assert _rollup_rows(backend, at, rollup) == _rollup_rows(backend, again, rollup), rollup.name
    assert [entry["rows"] for entry in grouping_sets] == [entry["rows"] for entry in entries]


def test_an_append_to_a_month_the_dataset_has_reads_that_month_back(workspace, tmp_path, monkeypatch):
    first_april = _part(tmp_path / "april.parquet", 4_000, seed=5, month="04")
    more_april = _part(tmp_path / "more_april.parquet", 4_000, seed=6, month="04")
    first = import_to_workspace(first_april, "bill", stream_min_bytes=0)
    read_back = []
    partials_read_back = rollups.Partials.read_back

    def watched(partials, usage, months):
        read_back.append(list(months))
        return partials_read_back(partials, usage, months)

    monkeypatch.setattr(rollups.Partials, "read_back", watched)
    after = import_to_workspace(more_april, "bill", append=True, stream_min_bytes=0)
    assert first.months == after.months == ["2025-04"] and read_back == [["2025-04"]]
    backend = engine.connect("duckdb")
    at = datasets.current("bill")
    rollups.prove(backend, at, after.rollups, after.months)
    both = [pq.read_table(path) for path in (first_april, more_april)]
    team = rollups.read(backend, at, rollups.BY_NAME["daily_team"])
    assert team["rows"].sum().execute() == after.rows == sum(table.num_rows for table in both)
    cost = sum(pc.sum(table["EffectiveCost"]).as_py() for table in both)
    assert float(team.cost.sum().execute()) == pytest.approx(cost, rel=1e-12)


def test_a_new_month_is_not_read_back(workspace, tmp_path, monkeypatch):
    april = _part(tmp_path / "april.parquet", 4_000, seed=5, month="04")
    may = _part(tmp_path / "may.parquet", 4_000, seed=6, month="05")
    import_to_workspace(april, "bill", stream_min_bytes=0)
    monkeypatch.setattr(rollups.Partials, "read_back", lambda *args: pytest.fail("a month was read back"))
    after = import_to_workspace(may, "bill", append=True, stream_min_bytes=0)
    assert after.months == ["2025-04", "2025-05"] and after.sorted_within == "batch"


def test_a_file_read_whole_after_batches_were_summed_counts_each_row_once(workspace, tmp_path):
    lines = (SAMPLES / "focus_sample.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "blank_near_the_end.csv"
    path.write_text("".join([*lines[:-2], "\n", *lines[-2:]]), encoding="utf-8")  # found after four batches
    info = import_to_workspace(path, "q2", stream_min_bytes=0, batch_rows=50)
    assert not info.streamed and info.rows == 242  # the sample's rows, read whole
    backend = engine.connect("duckdb")
    at = datasets.current("q2")
    rollups.prove(backend, at, info.rollups, info.months)  # the batches' sums of the streamed try are gone
    team = rollups.read(backend, at, rollups.BY_NAME["daily_team"])
    assert team["rows"].sum().execute() == 242


def test_the_batches_are_summed_in_groups_on_the_worker_thread_while_the_next_are_read(workspace, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.setattr(rollups, "SUM_ROWS", 3_000)  # three batches of 1,000 rows a group
    groups, add = [], rollups.Partials._add
    monkeypatch.setattr(rollups.Partials, "_add", lambda partials, rows: (
        groups.append((threading.current_thread().name, rows.num_rows)), add(partials, rows))[-1])
    source = _part(tmp_path / "bill.parquet", 12_000, seed=5, month="04")  # one month: 1,000 rows a batch
    info = import_to_workspace(source, "bill", stream_min_bytes=0, batch_rows=1_000)
    whole, rest = divmod(info.rows, 3_000)  # the rows of April in 12,000 rows of a quarter: ~4,000
    assert [rows for _, rows in groups] == [3_000] * whole + [rest] * bool(rest)
    assert all(name.startswith("rollup-sums") for name, _ in groups)
    rollups.prove(engine.connect("duckdb"), datasets.current("bill"), info.rollups, info.months)


def test_each_batch_is_put_in_order_on_the_writer_worker_while_the_one_before_is_written(workspace, tmp_path,
                                                                                        monkeypatch):
    ordered, order = [], sorting.sorted_rows
    monkeypatch.setattr(sorting, "sorted_rows", lambda rows: (
        ordered.append(threading.current_thread().name), order(rows))[-1])
    source = _part(tmp_path / "bill.parquet", 12_000, seed=5, month="04")
    info = import_to_workspace(source, "bill", stream_min_bytes=0, batch_rows=1_000)
    assert len(ordered) == math.ceil(info.rows / 1_000) > 1
    assert all(name.startswith("month-order") for name in ordered)
    teams = pq.read_table(datasets.usage_folder("bill"), columns=["team"])["team"].to_pylist()
    for start in range(0, info.rows, 1_000):  # each batch's rows written in team order
        batch = teams[start:start + 1_000]
        assert batch == sorted(batch, key=lambda team: (team is None, team or ""))


class _Refused(Exception):
    pass


@pytest.mark.parametrize("last", [False, True], ids=["the first batch", "the last batch"])
def test_a_batch_whose_sums_fail_stops_the_import_and_leaves_nothing(workspace, tmp_path, monkeypatch, last):
    monkeypatch.setattr(rollups, "SUM_ROWS", 1)  # each batch summed by itself
    source = _part(tmp_path / "bill.parquet", 12_000, seed=5, month="04")
    failing = math.ceil(pq.read_metadata(source).num_rows / 1_000) if last else 1
    seen, add = [], rollups.Partials._add

    def refused(partials, rows):
        seen.append(rows.num_rows)
        if len(seen) == failing:
            raise _Refused("the engine refused the batch")
        return add(partials, rows)

    monkeypatch.setattr(rollups.Partials, "_add", refused)
    with pytest.raises(_Refused, match="refused the batch"):
        import_to_workspace(source, "bill", stream_min_bytes=0, batch_rows=1_000)
    assert not datasets.names() and not list((workspace / ".versions").iterdir())
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("rollup-sums")]


@pytest.mark.parametrize("last", [False, True], ids=["the first batch", "the last batch"])
def test_a_batch_that_cannot_be_put_in_order_stops_the_import_and_leaves_nothing(workspace, tmp_path, monkeypatch,
                                                                                 last):
    source = _part(tmp_path / "bill.parquet", 12_000, seed=5, month="04")
    failing = math.ceil(pq.read_metadata(source).num_rows / 1_000) if last else 1
    seen, order = [], sorting.sorted_rows

    def refused(rows):
        seen.append(rows.num_rows)
        if len(seen) == failing:
            raise _Refused("the sort ran out of memory")
        return order(rows)

    monkeypatch.setattr(sorting, "sorted_rows", refused)
    with pytest.raises(_Refused, match="ran out of memory"):
        import_to_workspace(source, "bill", stream_min_bytes=0, batch_rows=1_000)
    assert not datasets.names() and not list((workspace / ".versions").iterdir())
    assert not [thread for thread in threading.enumerate() if thread.name.startswith(("month-order", "rollup-sums"))]


def test_an_append_reads_its_month_back_only_once_the_last_batch_is_summed(workspace, tmp_path, monkeypatch):
    import_to_workspace(_part(tmp_path / "april.parquet", 4_000, seed=5, month="04"), "bill", stream_min_bytes=0)
    summing, add, usage = threading.Event(), rollups.Partials._add, rollups._usage

    def slow(partials, rows):  # the last batches still being summed as the writer closes
        summing.set()
        try:
            time.sleep(0.3)
            return add(partials, rows)
        finally:
            summing.clear()

    def read_back(backend, at):  # a query of the connection the worker is using would wait on it for ever
        assert not summing.is_set(), "the rows were read back while a batch was being summed"
        return usage(backend, at)

    monkeypatch.setattr(rollups.Partials, "_add", slow)
    monkeypatch.setattr(rollups, "_usage", read_back)
    more = _part(tmp_path / "more_april.parquet", 4_000, seed=6, month="04")
    after = import_to_workspace(more, "bill", append=True, stream_min_bytes=0)
    rollups.prove(engine.connect("duckdb"), datasets.current("bill"), after.rollups, after.months)
