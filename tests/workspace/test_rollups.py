"""Issue 52: rollups built at import equal the rows for every grain, currency and cost basis, to the last decimal; a
rollup that disagrees stops the import; an appended month rebuilds that month only; a replaced dataset stays
readable until the new version is complete; the smallest rollup that answers a question is chosen."""

import dataclasses
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bench.ingest_bench import focus_table
from dashboard import settings
from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import engine
from dashboard.workspace import datasets, rollups, sorting
from dashboard.workspace.imports import import_to_workspace
from dashboard.workspace.rollups import ROLLUPS, RollupMismatch
from dashboard.workspace.writer import SCHEMA, MonthWriter

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
UTC = "UTC"


def _rows() -> pd.DataFrame:
    """Two currencies, missing tags and costs, amounts whose float sums are not exact (0.1 + 0.2), a row across two
    days and hours (20:30 to 04:30 the next day), a row without a start, a storage line (team c), in April and May."""
    def at(text):
        return pd.Timestamp(text, tz=UTC) if text else pd.NaT

    table = [  # start, end, gpu_hours, cost, billed_cost, currency, pricing, charge_kind, gpu_type, team, project, run
        ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 0.1, 0.1, "USD", "on_demand", "usage", "H100", "a", "p1", "r1"),
        ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 0.2, 0.2, "USD", "on_demand", "usage", "H100", "a", "p1", "r1"),
        ("2025-04-01 11:00", "2025-04-01 12:00", 4.0, 1.10, 0.0, "EUR", "reserved", "usage", "A100", "a", "p2", "r2"),
        ("2025-04-01 20:30", "2025-04-02 04:30", 16.0, 8.8, 8.8, "USD", "spot", "usage", "H100", "b", "p3", "r3"),
        ("2025-04-02 00:00", "2025-04-03 00:00", None, 2.20, 2.20, "EUR", None, "commitment", None, None, None, None),
        ("2025-04-02 05:00", "2025-04-02 06:00", 1.0, None, None, "USD", "on_demand", "usage", "H100", None, "p1",
         None),
        ("2025-05-31 23:00", "2025-06-01 00:00", 2.0, 0.3, 0.3, "USD", "on_demand", "usage", "H100", "a", "p1", "r1"),
        (None, None, 3.0, 0.7, 0.7, None, None, None, None, "b", None, None),
        ("2025-05-01 00:00", "2025-05-01 01:00", None, 0.4, 0.4, "USD", None, "usage", None, "c", "p4", None),
    ]
    columns = ["period_start", "period_end", "gpu_hours", "cost", "billed_cost", "currency", "pricing", "charge_kind",
               "gpu_type", "team", "project", "run_id"]
    frame = pd.DataFrame(table, columns=columns)
    frame["period_start"] = frame["period_start"].map(at).astype("datetime64[ns, UTC]")
    frame["period_end"] = frame["period_end"].map(at).astype("datetime64[ns, UTC]")
    for column in ("resource_id", "run_state"):
        frame[column] = None
    frame["tokens"] = float("nan")
    frame["source_row"] = range(2, len(frame) + 2)
    return frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS)


def _built(folder: Path, frame: pd.DataFrame) -> list[dict]:
    """``frame`` written and rolled up as an import does: in batches of three rows, each sorted and summed as it is
    written, the batches' sums summed once all are written."""
    backend = engine.connect("duckdb")
    partials = rollups.Partials(backend, ROLLUPS)
    writer = MonthWriter(folder / datasets.USAGE, order=sorting.sorted_rows, observe=partials.add)
    for start in range(0, len(frame), 3):
        writer.write(frame.iloc[start:start + 3])
    writer.close()
    entries = rollups.build(backend, folder, writer.months, "2026-12-06T12:03:00+00:00", partials=partials)
    rollups.prove(backend, folder, entries, writer.months)
    return entries


def _decimal(value) -> Decimal:
    if isinstance(value, Decimal):
        return value
    return Decimal(0) if pd.isna(value) else Decimal(repr(float(value)))


def _sums(frame: pd.DataFrame, keys: list[str]) -> dict:
    """Exact sums of each measure by ``keys``, NA keys kept (None), from pandas with Decimal."""
    out: dict = {}
    for _, row in frame.iterrows():
        key = tuple(None if pd.isna(row[k]) else row[k] for k in keys)
        sums = out.setdefault(key, {"rows": 0, "gpu_hours": Decimal(0), "cost": Decimal(0), "billed_cost": Decimal(0)})
        sums["rows"] += int(row.get("rows", 1))
        for name in ("gpu_hours", "cost", "billed_cost"):
            sums[name] += _decimal(row[name])
    return out


def _day(frame: pd.DataFrame) -> pd.Series:
    return (frame["period_start"].astype("int64") // 10**9 // 86_400).where(frame["period_start"].notna())


def _rollup_frame(backend, folder: Path, rollup) -> pd.DataFrame:
    return rollups.read(backend, folder, rollup).to_pandas()


def test_sums_to_the_cent_by_hand(tmp_path):
    entries = _built(tmp_path, _rows())
    backend = engine.connect("duckdb")
    team = _rollup_frame(backend, tmp_path, rollups.BY_NAME["daily_team"])
    usd_a = team[(team.team == "a") & (team.currency == "USD")]
    # 0.1 + 0.2 on 1 April and 0.3 on 31 May: 0.6 exactly (as floats 0.1 + 0.2 + 0.3 = 0.6000000000000001)
    assert sum(usd_a["cost"], Decimal(0)) == Decimal("0.6")
    assert sorted(usd_a[usd_a.cost.notna()]["cost"]) == [Decimal("0.3"), Decimal("0.3")]
    eur = team[team.currency == "EUR"]
    assert sum(eur["cost"], Decimal(0)) == Decimal("3.30") and sum(eur["billed_cost"], Decimal(0)) == Decimal("2.2")
    # the row across two days keeps its own times; the others do not
    across = team[team.start_s.notna()]
    assert list(across.team) == ["b"] and int(across.end_s.iloc[0]) - int(across.start_s.iloc[0]) == 8 * 3600
    assert {entry["name"]: entry["months"] for entry in entries}["runs"].keys() == {"2025-04", "2025-05", "none"}


@pytest.mark.parametrize("rollup", ROLLUPS, ids=[r.name for r in ROLLUPS])
def test_each_rollup_equals_the_rows_for_every_grain_currency_and_cost_basis(tmp_path, rollup):
    frame = _rows()
    _built(tmp_path, frame)
    table = _rollup_frame(engine.connect("duckdb"), tmp_path, rollup)
    seconds = frame["period_start"].astype("int64") // 10**9
    raw = frame.assign(day=_day(frame), hour=(seconds // 3600).where(frame["period_start"].notna()),
                       gpu_sign=np.sign(frame["gpu_hours"]), cost_sign=np.sign(frame["cost"]),
                       tokens_sign=np.sign(frame["tokens"]),  # NaN: none
                       storage_line=_storage_lines(frame))
    for column in (*rollup.columns, *((rollup.unit,) if rollup.unit else ())):
        keys = sorted({column, "currency"})
        assert _sums(table, keys) == _sums(raw, keys), (rollup.name, column)


def _storage_lines(frame: pd.DataFrame) -> pd.Series:
    """Each row's storage line by hand: "team / project" (no resource id here) for a row without GPU-hours or run,
    with a positive cost, not a commitment line, with both tags; None for the others."""
    line = ((frame["gpu_hours"].fillna(0) <= 0) & frame["run_id"].isna() & (frame["cost"].fillna(0) > 0)
            & ~frame["charge_kind"].isin(["commitment", "unused_commitment"]) & frame["team"].notna()
            & frame["project"].notna())
    return (frame["team"] + " / " + frame["project"]).where(line, None)


def _losing(write):
    """``rollups._write_by_month`` writing the daily run rollup without the days of every seventh day number."""
    def faulty(backend, table, target):
        return write(backend, table.filter(table.day % 7 != 0) if target.name == ".daily_run" else table, target)
    return faulty


def test_a_rollup_that_disagrees_is_refused_and_the_old_version_kept(workspace, monkeypatch):
    first = import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    monkeypatch.setattr(rollups, "_write_by_month", _losing(rollups._write_by_month))
    with pytest.raises(RollupMismatch, match=r"daily rollup by team, project, run_id.* where the rows total .*not "
                                             "published"):
        import_to_workspace(SAMPLES / "focus_sample.csv", "q2", replace=True)
    assert datasets.metadata("q2") == first  # the old version, rows and rollups, is still the one read
    assert sorted(p.name for p in (workspace / ".versions").iterdir()) == [first.build]  # the build is gone


def test_a_jobs_rollup_that_disagrees_is_refused(workspace, monkeypatch):
    first = import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    assert "jobs" in [entry["name"] for entry in first.rollups]
    write = rollups._write_by_month

    def losing(backend, table, target):  # the jobs rollup without its rows of a run
        return write(backend, table.filter(table.run_id.isnull() | (table.run_id != table.run_id.max()))
                     if target.name == ".jobs" else table, target)

    monkeypatch.setattr(rollups, "_write_by_month", losing)
    with pytest.raises(RollupMismatch, match=r"whole-period rollup by team, project, run_id, run_state.* where the "
                                             "rows total .*not published"):
        import_to_workspace(SAMPLES / "focus_sample.csv", "q2", replace=True)
    assert datasets.metadata("q2") == first


def _focus_part(path: Path, months: tuple[str, ...], rows: int = 3000, seed: int = 5) -> None:
    table = focus_table(rows, seed)
    starts = table["ChargePeriodStart"].cast("string")
    keep = pc.or_(*[pc.starts_with(starts, f"2025-{m}") for m in months]) if len(months) > 1 \
        else pc.starts_with(starts, f"2025-{months[0]}")
    pq.write_table(table.filter(keep), path)


def test_an_appended_month_rebuilds_that_month_only(workspace, tmp_path):
    _focus_part(tmp_path / "april_may.parquet", ("04", "05"))
    _focus_part(tmp_path / "june.parquet", ("06",), seed=6)
    first = import_to_workspace(tmp_path / "april_may.parquet", "bill", stream_min_bytes=0)
    old = datasets.version_of(first)
    after = import_to_workspace(tmp_path / "june.parquet", "bill", append=True)
    new = datasets.current("bill")
    june = pq.read_metadata(tmp_path / "june.parquet").num_rows
    assert after.rows == first.rows + june and after.months == ["2025-04", "2025-05", "2025-06"]
    for rollup in ROLLUPS:
        for month in ("2025-04", "2025-05"):  # the same files, linked: not rebuilt
            (kept,) = (rollups.folder(new, rollup) / f"month={month}").glob("*.parquet")
            (was,) = (rollups.folder(old, rollup) / f"month={month}").glob("*.parquet")
            assert kept.stat().st_ino == was.stat().st_ino
        assert list((rollups.folder(new, rollup) / "month=2025-06").glob("*.parquet"))
    # the jobs rollup is built again over every month (a run's segments cross months), in new files
    (jobs,) = [entry for entry in after.rollups if entry["name"] == "jobs"]
    assert sorted(jobs["months"]) == after.months and jobs["built_at"] == after.imported_at
    (april,) = (rollups.folder(new, rollups.JOBS) / "month=2025-04").glob("*.parquet")
    (was,) = (rollups.folder(old, rollups.JOBS) / "month=2025-04").glob("*.parquet")
    assert april.stat().st_ino != was.stat().st_ino
    # the whole dataset's totals: the rows of both files, every rollup
    backend = engine.connect("duckdb")
    rollups.prove(backend, new, after.rollups, after.months)
    raw = datasets.open_table(backend, "bill").cost.sum().execute()
    both = sum(pq.read_table(tmp_path / f)["EffectiveCost"].to_numpy().sum() for f in ("april_may.parquet",
                                                                                       "june.parquet"))
    assert raw == pytest.approx(both, rel=1e-12)
    assert datasets.metadata("bill", old) == first  # the old version is still whole until swept


def test_rows_are_sorted_by_team_project_and_start(workspace):
    import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    for part in datasets.usage_folder("q2").rglob("*.parquet"):
        frame = pq.read_table(part).to_pandas()
        ordered = frame.sort_values(["team", "project", "period_start"], na_position="last", kind="stable")
        assert frame[["team", "project", "period_start"]].equals(ordered[["team", "project", "period_start"]])


def _with_rows(info, **rows):
    return dataclasses.replace(info, rollups=[{**entry, "rows": rows.get(entry["name"], entry["rows"])}
                                              for entry in info.rollups])


@pytest.mark.parametrize(("columns", "unit", "rows", "chosen"), [
    # spend per day per team: the daily team rollup, unless the run one is smaller (a dataset of few runs)
    (("team",), "day", {"daily_team": 10, "daily_run": 20}, "daily_team"),
    (("team",), "day", {"daily_team": 30, "daily_run": 20}, "daily_run"),
    # whole-period totals per run: the runs rollup when smallest; a daily one answers too
    (("run_id",), None, {"runs": 5, "daily_run": 20}, "runs"),
    (("run_id",), None, {"runs": 50, "daily_run": 20}, "daily_run"),
    (("gpu_type", "pricing"), "day", {}, "daily_gpu"),
    (("pricing",), "hour", {}, "hourly"),
    (("resource_id",), None, {}, None),  # no rollup keeps resources: the rows
    (("team", "gpu_type"), "day", {}, None),
])
def test_the_smallest_rollup_that_answers_is_chosen(workspace, columns, unit, rows, chosen):
    info = _with_rows(import_to_workspace(SAMPLES / "focus_sample.csv", "q2"), **rows)
    backend = engine.connect("duckdb")
    answer = rollups.choose(backend, info, datasets.current("q2"), columns, unit)
    assert (answer.rollup.name if answer.rollup else None) == chosen
    if chosen is None:
        assert answer.label == "the rows (242)" and answer.rows == 242
    else:
        built = pd.Timestamp(info.imported_at).strftime("%H:%M")
        assert answer.label == f"{answer.rollup.title}, built {built}"
        assert set(columns) <= set(answer.table.columns)


def test_a_dataset_without_rollups_is_answered_by_its_rows(workspace):
    info = dataclasses.replace(import_to_workspace(SAMPLES / "focus_sample.csv", "q2"), rollups=[])
    answer = rollups.choose(engine.connect("duckdb"), info, datasets.current("q2"), ("team",), "day")
    assert answer.rollup is None and answer.table.count().execute() == 242


def test_the_sorted_file_has_the_writers_columns_only(workspace):
    import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    for part in datasets.usage_folder("q2").rglob("*.parquet"):
        assert pq.read_schema(part).remove_metadata() == SCHEMA  # no month column: the folder's name holds it


def test_each_rollup_is_one_grouping_set_named_by_its_grouping_id():
    keys, ids = rollups.set_ids([rollups.BY_NAME["daily_team"], rollups.BY_NAME["runs"]], month=True)
    # in the order the sets first name them (Spark requires it); the hour and its span are grouped by neither, so
    # they are not keys; a bit per key, the first the highest
    assert keys == ["month", "day", "day_start_s", "day_end_s", "team", "pricing", "charge_kind", "currency",
                    "project", "run_id", "run_state", "gpu_type", "gpu_sign", "cost_sign", "tokens_sign"]
    assert ids == {"daily_team": 0b000000001111111, "runs": 0b011100000000000}  # the columns each does not group by


FIRST_QUARTER = {"daily_team": 4726, "daily_run": 106416, "daily_gpu": 1365, "hourly": 13104, "runs": 13545,
                 "storage": 506}
EVERY = ["daily_team", "daily_run", "daily_gpu", "hourly", "runs", "storage"]
BUT_RUNS_DAILY = ["daily_team", "daily_gpu", "hourly", "runs", "storage"]


@pytest.mark.parametrize(("sizes", "rows", "percent", "free", "kept"), [
    # 10^6 generated rows: 139,662 rollup rows; within max(50,000, 100,000) without the daily run rollup (33,246)
    (FIRST_QUARTER, 1_000_000, None, None, BUT_RUNS_DAILY),
    (FIRST_QUARTER, 10_000_000, None, None, EVERY),  # 500,000 rows allowed: all six (the grain is saturated)
    ({name: 200 for name in EVERY}, 242, None, None, EVERY),  # a small file: within the free rows
    # 10,000 allowed: 506 + 1,365 + 4,726, not + 13,104
    (FIRST_QUARTER, 1_000_000, "1", "0", ["daily_team", "daily_gpu", "storage"]),
    (FIRST_QUARTER, 1_000_000, "0", "0", []),
    (FIRST_QUARTER, 1_000_000, "100", "0", EVERY),
])
def test_rollups_are_kept_smallest_first_within_the_budget(monkeypatch, sizes, rows, percent, free, kept):
    for name, value in ((settings.ROLLUP_MAX_PERCENT, percent), (settings.ROLLUP_FREE_ROWS, free)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert [rollup.name for rollup in rollups._within_budget(sizes, rows)] == kept


def test_a_dataset_over_the_budget_has_no_rollups_and_an_append_builds_none(workspace, tmp_path, monkeypatch):
    _focus_part(tmp_path / "april_may.parquet", ("04", "05"))
    _focus_part(tmp_path / "june.parquet", ("06",), seed=6)
    monkeypatch.setenv(settings.ROLLUP_MAX_PERCENT, "0")
    monkeypatch.setenv(settings.ROLLUP_FREE_ROWS, "0")
    first = import_to_workspace(tmp_path / "april_may.parquet", "bill")
    assert first.rollups == [] and not (datasets.current("bill") / rollups.ROLLUPS_FOLDER).exists()
    monkeypatch.delenv(settings.ROLLUP_MAX_PERCENT)
    monkeypatch.delenv(settings.ROLLUP_FREE_ROWS)
    after = import_to_workspace(tmp_path / "june.parquet", "bill", append=True)  # April and May have none: no June
    assert after.rollups == [] and not (datasets.current("bill") / rollups.ROLLUPS_FOLDER).exists()
    answer = rollups.choose(engine.connect("duckdb"), after, datasets.current("bill"), ("team",), "day")
    assert answer.rollup is None and answer.label == f"the rows ({after.rows:,})"


# DuckDB shows its limit in MiB: 512e6 / 2**20 = 488.28, 100e6 / 2**20 = 95.37
@pytest.mark.parametrize(("setting", "shown"), [(None, "488.2 MiB"), ("100", "95.3 MiB")])
def test_the_import_rolls_up_and_proves_within_its_own_memory_limit(workspace, monkeypatch, setting, shown):
    if setting is not None:
        monkeypatch.setenv(settings.IMPORT_ENGINE_MB, setting)
    seen = []
    add, prove = rollups.Partials._add, rollups.prove  # a batch's sums, on the worker thread

    def limit(backend):
        seen.append(backend.con.execute("SELECT current_setting('memory_limit')").fetchone()[0])

    def watched_add(partials, rows):
        limit(partials.backend)
        return add(partials, rows)

    def watched_prove(backend, *args):
        limit(backend)
        return prove(backend, *args)

    monkeypatch.setattr(rollups.Partials, "_add", watched_add)
    monkeypatch.setattr(rollups, "prove", watched_prove)
    import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    assert len(seen) >= 2 and set(seen) == {shown}


TEAM, RUN = rollups.BY_NAME["daily_team"], rollups.BY_NAME["daily_run"]


@pytest.mark.parametrize(("built", "sources"), [
    (ROLLUPS, {"daily_team": "daily_run"}),  # a new dataset: the daily rollup by team summed from the one by run
    ([TEAM, RUN], {"daily_team": "daily_run"}),
    ([r for r in ROLLUPS if r is not RUN], {}),  # an append to a version kept without the one by run: grouped
    ([RUN], {}),
    ([rollups.BY_NAME["daily_gpu"], TEAM], {}),  # GPU type is not within the team grain, nor team within GPU's
    ([rollups.BY_NAME["hourly"], rollups.BY_NAME["runs"]], {}),  # another time unit: never
])
def test_a_rollup_within_another_grain_is_summed_from_it_not_from_each_batch(built, sources):
    partials = rollups.Partials(engine.connect("duckdb"), built)
    assert {name: source.name for name, source in partials.sources.items()} == sources
    assert [r.name for r in partials.grouped] == [r.name for r in built if r.name not in sources]


def _one_team_one_day() -> pd.DataFrame:
    """Team a on 1 April 2025, project p1, runs r1 and r2, in USD and EUR (a row without GPU-hours, one without a
    cost), all on demand: the daily rollup by run has four groups, the one by team two."""
    table = [  # start hour, gpu_hours, cost, billed_cost, currency, run
        (10, 8.0, 0.1, 0.1, "USD", "r1"),
        (11, 4.0, 0.2, 0.2, "USD", "r2"),
        (12, 1.0, 0.3, 0.3, "USD", "r1"),
        (13, 2.0, 1.10, 1.00, "EUR", "r2"),
        (14, None, 2.20, 2.20, "EUR", "r1"),
        (15, 0.5, None, None, "USD", "r2"),
    ]
    frame = pd.DataFrame(table, columns=["hour", "gpu_hours", "cost", "billed_cost", "currency", "run_id"])
    frame["period_start"] = pd.to_datetime("2025-04-01", utc=True) + pd.to_timedelta(frame.pop("hour"), unit="h")
    frame["period_end"] = frame["period_start"] + pd.Timedelta(hours=1)
    frame = frame.assign(team="a", project="p1", pricing="on_demand", charge_kind="usage", gpu_type="H100",
                         resource_id=None, run_state=None, tokens=float("nan"), source_row=range(2, len(frame) + 2))
    return frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS)


def test_the_daily_rollup_by_team_summed_from_the_one_by_run_equals_the_rows_by_hand(tmp_path):
    entries = _built(tmp_path, _one_team_one_day())  # two batches of three rows
    assert {entry["name"]: entry["rows"] for entry in entries}["daily_run"] == 4
    team = _rollup_frame(engine.connect("duckdb"), tmp_path, TEAM)
    found = {row.currency: (row.day, row.team, row.pricing, row.charge_kind, row.rows, row.gpu_hours, row.cost,
                            row.billed_cost, row.gpu_hours_rows, row.cost_rows, str(row.last_start),
                            str(row.last_end)) for row in team.itertuples()}
    # 1 April 2025 is day 20,179 since 1970 (55 years of 365 days, 14 leap days, then 31 + 28 + 31); no row crosses
    # its day (start_s, end_s NULL); USD: 8 + 4 + 1 + 0.5 GPU-hours, 0.1 + 0.2 + 0.3 cost (0.6 exactly, where the
    # floats add to 0.6000000000000001), four rows with GPU-hours, three with a cost; EUR: 2 GPU-hours (one row has
    # none), 1.10 + 2.20 cost, 1.00 + 2.20 billed
    assert found == {
        "USD": (20_179, "a", "on_demand", "usage", 4, Decimal("13.5"), Decimal("0.6"), Decimal("0.6"), 4, 3,
                "2025-04-01 15:00:00+00:00", "2025-04-01 16:00:00+00:00"),
        "EUR": (20_179, "a", "on_demand", "usage", 2, Decimal("2"), Decimal("3.3"), Decimal("3.2"), 1, 2,
                "2025-04-01 14:00:00+00:00", "2025-04-01 15:00:00+00:00"),
    }
    assert team.start_s.isna().all() and team.end_s.isna().all() and team.tokens.isna().all()


def test_a_fault_in_summing_the_daily_rollup_by_team_from_the_one_by_run_is_refused(workspace, monkeypatch):
    first = import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    assert {"daily_team", "daily_run"} <= {entry["name"] for entry in first.rollups}
    derive = rollups._derived

    def losing(source, *args):  # the sums of one run left out
        return derive(source.filter(source.run_id.isnull() | (source.run_id != source.run_id.max())), *args)

    monkeypatch.setattr(rollups, "_derived", losing)
    with pytest.raises(RollupMismatch, match=r"daily rollup by team, pricing, charge_kind, currency totals .* where "
                                             "the rows total .*not published"):
        import_to_workspace(SAMPLES / "focus_sample.csv", "q2", replace=True)
    assert datasets.metadata("q2") == first


def _job_and_bill_rows() -> pd.DataFrame:
    """Run rows beside bill rows, team a, project p, US dollars, on demand: r1's job row (00:00-02:00) and a row of
    r1 that starts when it ends (a candidate, not a job row); r2's two GPU rows without a state on two GPU types (one
    group of the jobs rollup, two of the runs rollup); r3's row with a state but no GPU-hours; r1's credit of -1
    GPU-hour; a storage line in May."""
    table = [  # start, end, gpu_hours, cost, gpu_type, run, state, resource
        ("2025-04-01 00:00", "2025-04-01 02:00", 8.0, 16.0, "H100", "r1", "COMPLETED", None),
        ("2025-04-01 03:00", "2025-04-01 03:00", 4.0, 8.0, "H100", "r1", "COMPLETED", None),
        ("2025-04-02 00:00", "2025-04-02 01:00", 2.0, 5.0, "H100", "r2", None, None),
        ("2025-04-02 06:00", "2025-04-02 07:00", 3.0, 6.0, "A100", "r2", None, None),
        ("2025-04-03 00:00", "2025-04-03 01:00", None, 1.0, None, "r3", "FAILED", None),
        ("2025-04-04 00:00", "2025-04-04 01:00", -1.0, -2.0, "H100", "r1", "COMPLETED", None),
        ("2025-05-03 00:00", "2025-05-04 00:00", None, 3.0, None, None, None, "vol-1"),
    ]
    frame = pd.DataFrame(table, columns=["period_start", "period_end", "gpu_hours", "cost", "gpu_type", "run_id",
                                         "run_state", "resource_id"])
    for column in ("period_start", "period_end"):
        frame[column] = frame[column].map(lambda text: pd.Timestamp(text, tz=UTC)).astype("datetime64[ns, UTC]")
    return frame.assign(billed_cost=frame["cost"], currency="USD", pricing="on_demand", charge_kind="usage",
                        team="a", project="p", tokens=float("nan"), source_row=range(2, len(frame) + 2))


def test_the_jobs_rollup_from_the_runs_rollup_equals_the_one_of_the_rows(tmp_path):
    from dashboard.workspace import job_rollup
    from tests.support.written_dataset import written

    written(tmp_path, _job_and_bill_rows())
    backend = engine.connect("duckdb")
    usage = rollups._usage(backend, tmp_path)
    runs = rollups._partitioned(backend, rollups.folder(tmp_path, rollups.BY_NAME["runs"]))

    def rows(table) -> list[tuple]:
        frame = table.to_pandas()
        return sorted(map(tuple, frame.astype(object).where(frame.notna(), None).itertuples(index=False)), key=repr)

    derived, direct = rows(job_rollup.from_runs(runs, usage)), rows(job_rollup.summed(usage))
    assert derived == direct
    columns = list(job_rollup.summed(usage).columns)
    groups = [dict(zip(columns, row, strict=True)) for row in derived]
    r2 = [group for group in groups if group["run_id"] == "r2"]  # H100 and A100: one group without the GPU type
    assert [(g["rows"], g["gpu_hours"], g["cost"], str(g["first_start"]), str(g["last_start"])) for g in r2] == [
        (2, Decimal(5), Decimal(11), "2025-04-02 00:00:00+00:00", "2025-04-02 06:00:00+00:00")]
    r1 = sorted(((g["segment"], g["gpu_sign"], g["gpu_hours"]) for g in groups if g["run_id"] == "r1"), key=repr)
    assert r1 == sorted([(0, 1, Decimal(8)), (None, 1, Decimal(4)), (None, -1, Decimal(-1))], key=repr)
    assert len(groups) == 3 + 1 + 1 + 1  # r1 three times, r2, r3; the storage line in May
