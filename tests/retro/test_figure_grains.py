"""Issue 52: each Retrospective figure reads its declared grain. Over a workspace dataset's own rows, a figure with a
grain reads the smallest rollup that holds it and the filters in force, and its result is the rows' to the cent; a
filter outside every rollup that holds the grain, a dataset without rollups and a figure without a grain read the
rows; a rollup read as rows gives the sums worked out by hand (NULL costs, a row across two days)."""

import dataclasses
import math
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from dashboard import settings
from dashboard.core.scenario import Scenario
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import engine, opened
from dashboard.retro import spend, tabs, waste
from dashboard.retro.filters import FILTERED_COLUMNS, FilterOptions, filter_options
from dashboard.retro.registry import FIGURES, Grain
from dashboard.retro.view import Choices, Filters, RetroView, export_options, filtered, whole
from dashboard.ui.workspace_view import rollups_of
from dashboard.workspace import datasets, job_rollup, rollup_rows, rollups
from dashboard.workspace.datasets import Metadata
from dashboard.workspace.imports import import_to_workspace
from dashboard.workspace.writer import MonthWriter

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
BY_NAME = {entry.name: entry for entry in FIGURES}
CENT = 0.005  # amounts and GPU-hours agree to the cent (a rollup adds exact decimals, the rows doubles)


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Iterator[tuple[Metadata, object]]:
    """The bundled FOCUS quarter imported into a workspace once (its rollups built and proven), and its rows."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(settings.WORKSPACE_DIR, str(tmp_path_factory.mktemp("workspace")))
        info = import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
        yield info, opened.fixed(datasets.open_table(engine.default(), "q2", datasets.version_of(info)))


NO_FILTERS = Filters()


def _view(usage, filters: Filters = NO_FILTERS, rollups_chooser=None) -> RetroView:
    """A view of a dataset's own rows under ``filters`` (``bounds`` empty: any date is a narrowing)."""
    view = dataclasses.replace(whole(usage), filters=filters, rollups=rollups_chooser)
    return dataclasses.replace(view, shown=filtered(usage, filters, view.narrowed))


def _same(a, b) -> bool:
    """Whether two figure results agree: frames and series row for row (unordered frames sorted by their labels),
    numbers to the cent, NaN where the other is NaN, times and labels exactly."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name))
                                           for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, pd.DataFrame):
        if list(a.columns) != list(b.columns) or len(a) != len(b):
            return False
        labels = [c for c in a.columns if not pd.api.types.is_float_dtype(a[c])]
        a, b = (f.sort_values(labels, ignore_index=True) for f in (a, b))
        return all(_same(a[c], b[c]) for c in a.columns)
    if isinstance(a, pd.Series):
        if len(a) != len(b) or not a.index.equals(b.index):
            return False
        if not pd.api.types.is_float_dtype(a):
            return a.astype("string").fillna("<NA>").tolist() == b.astype("string").fillna("<NA>").tolist()
        return all(_same(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= CENT
    return a == b


def _label(info: Metadata, rollup: str | None) -> str:
    if rollup is None:
        return f"the rows ({info.rows:,})"
    return f"the {rollups.BY_NAME[rollup].title}, built {pd.Timestamp(info.imported_at):%H:%M}"


APRIL = dict(start=date(2025, 4, 10), end=date(2025, 5, 20))
FIGURE_GRAINS = [  # figure, the filters in force, the rollup it reads (None: the rows)
    ("spend", Filters(), "daily_team"),
    ("spend", Filters(teams=("llm-pretrain", "(untagged)")), "daily_team"),
    ("spend", Filters(pricing=("reserved",)), "daily_team"),
    ("spend", Filters(**APRIL), "daily_team"),
    ("spend", Filters(projects=("pretrain-13b",)), "daily_run"),  # a project filter: the rollup by project
    ("attribution", Filters(), "jobs"),  # whole-period sums by run: the smallest (the runs rollup splits by GPU type)
    ("attribution", Filters(teams=("research",), pricing=("spot", "on_demand")), "jobs"),
    ("attribution", Filters(**APRIL), "daily_run"),  # dates: a daily rollup
    ("gap", Filters(), "jobs"),  # the signs of GPU-hours, cost and tokens; the segments' marks
    ("gap", Filters(teams=("research",), pricing=("spot", "on_demand")), "jobs"),
    ("gap", Filters(**APRIL), None),  # dates: no rollup keeps a day and the marks
    ("waste", Filters(projects=("pretrain-13b",)), "jobs"),  # its sums (the rows behind each check: below)
    ("load", Filters(), "hourly"),  # GPU rows and lines with a cost told apart by the rollup's signs
    ("load", Filters(pricing=("reserved",)), "hourly"),
    ("load", Filters(**APRIL), "hourly"),  # dates: the hours hold them
    ("load", Filters(teams=("research",)), None),  # no hourly rollup keeps the team
    ("mix", Filters(), "jobs"),  # the GPU rows by tier, with a cost or not: the signs tell them (the smallest)
    ("mix", Filters(teams=("research",)), "jobs"),
    ("mix", Filters(**APRIL), None),  # dates: no daily rollup keeps the signs
    ("units", Filters(), "runs"),  # the rows with tokens and their GPU types: only the runs rollup keeps both
    ("units", Filters(projects=("pretrain-13b",), pricing=("reserved",)), "runs"),
    ("units", Filters(**APRIL), None),
]


@pytest.mark.parametrize(("figure", "filters", "rollup"), FIGURE_GRAINS)
def test_each_figure_reads_its_grain_and_equals_the_rows(sample, figure, filters, rollup):
    info, usage = sample
    entry = BY_NAME[figure]
    view = _view(usage, filters, rollups_of(info))
    table, label = tabs.source(entry, view)
    assert label.split("; ")[0] == _label(info, rollup)  # Waste names the rows behind its checks too (below)
    assert _same(tabs.run(entry, view), entry.query(_view(usage, filters)))  # the rows' result, to the cent
    assert (table is None) == (rollup is None)


@pytest.mark.parametrize(("by", "rollup"), [("team", "daily_team"), ("pricing", "daily_team"),
                                           ("project", "daily_run")])  # the daily rollup by team keeps no project
def test_spend_stacked_by_a_choice_reads_a_rollup_that_keeps_it(sample, by, rollup):
    info, usage = sample
    view = dataclasses.replace(_view(usage, rollups_chooser=rollups_of(info)), choices=Choices(by=by))
    assert tabs.source(BY_NAME["spend"], view)[1] == _label(info, rollup)
    rows = dataclasses.replace(_view(usage), choices=Choices(by=by))
    assert _same(tabs.run(BY_NAME["spend"], view), BY_NAME["spend"].query(rows))


def test_every_figure_of_the_table_above_is_declared_with_that_grain():
    assert {figure for figure, _, _ in FIGURE_GRAINS} - {figure for figure, _, rollup in FIGURE_GRAINS if rollup} == {
        entry.name for entry in FIGURES if entry.grain is None}
    assert {figure for figure, _, rollup in FIGURE_GRAINS if rollup} == {
        entry.name for entry in FIGURES if entry.grain is not None}


@pytest.mark.parametrize(("filters", "rollup"), [
    (Filters(), "daily_team"),
    (Filters(teams=("data",)), "daily_team"),
    (Filters(projects=("dataprep",)), None),  # no rollup kept holds the day, the team and the project: the rows
])
def test_a_filter_outside_the_rollups_kept_falls_back_to_the_rows(sample, filters, rollup):
    info, usage = sample
    info = dataclasses.replace(info, rollups=[e for e in info.rollups if e["name"] == "daily_team"])
    view = _view(usage, filters, rollups_of(info))
    assert tabs.source(BY_NAME["spend"], view)[1] == _label(info, rollup)
    assert _same(tabs.run(BY_NAME["spend"], view), BY_NAME["spend"].query(_view(usage, filters)))


def test_rollups_built_before_their_times_were_kept_are_not_read_as_rows(sample):
    info, usage = sample
    old = [{**e, "measures": [m for m in e["measures"] if m not in ("last_start", "last_end")]}
           for e in info.rollups]
    view = _view(usage, rollups_chooser=rollups_of(dataclasses.replace(info, rollups=old)))
    assert tabs.source(BY_NAME["spend"], view)[1] == _label(info, None)


def test_an_hourly_rollup_built_before_its_signs_is_not_read(sample):
    info, usage = sample
    unsigned = ["hour", "start_s", "end_s", "pricing", "charge_kind", "currency"]  # its grain before the signs
    old = [{**e, "grain": unsigned} if e["name"] == "hourly" else e for e in info.rollups]
    view = _view(usage, rollups_chooser=rollups_of(dataclasses.replace(info, rollups=old)))
    assert tabs.source(BY_NAME["load"], view)[1] == _label(info, None)
    assert tabs.source(BY_NAME["spend"], view)[1] == _label(info, "daily_team")  # the others are read as before


def test_a_view_that_is_not_a_dataset_names_no_table(sample):
    _, usage = sample
    assert tabs.source(BY_NAME["spend"], _view(usage)) == (None, "")


@pytest.mark.parametrize(("grain", "filters", "needed"), [
    (Grain(("team",), "day"), Filters(), (("team",), "day")),
    (Grain(("team",), "day"), Filters(projects=("p",), pricing=("spot",)), (("team", "project", "pricing"), "day")),
    (Grain(("team", "project")), Filters(teams=("a",)), (("team", "project"), None)),
    (Grain(("team", "project")), Filters(**APRIL), (("team", "project"), "day")),
    (Grain(("pricing",), "hour"), Filters(**APRIL), (("pricing",), "hour")),
    (None, Filters(teams=("a",)), None),
])
def test_the_grain_in_force_adds_the_filters_columns_and_a_day_for_dates(sample, grain, filters, needed):
    _, usage = sample
    entry = dataclasses.replace(BY_NAME["spend"], grain=grain)
    assert tabs.grain_in_force(entry, _view(usage, filters)) == needed


def _written(folder: Path, frame: pd.DataFrame, name: str) -> tuple[Metadata, object]:
    """``frame``'s canonical columns written and rolled up (and proven) as an import does, its metadata by hand,
    and its rows as the engine reads them."""
    writer = MonthWriter(folder / datasets.USAGE)
    writer.write(frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS))
    writer.close()
    backend = engine.default()
    entries = rollups.build(backend, folder, writer.months, "2026-12-06T12:03:00+00:00")
    entries += job_rollup.build(backend, folder, "2026-12-06T12:03:00+00:00", None, entries)
    job_rollup.prove(backend, folder, entries, writer.months)
    info = Metadata(name=name, source="by hand", source_bytes=0, imported_at="2026-12-06T12:03:00+00:00",
                    rows=len(frame), bytes=0, start=None, end=None, months=writer.months, streamed=False,
                    rollups=entries)
    usage = backend.read_parquet(str(folder / datasets.USAGE / "**" / "*.parquet"), hive_partitioning=True)
    return info, usage.drop("month")


def _hostile(folder: Path) -> tuple[Metadata, object]:
    """Missing costs, a row across two days (20:30 to 04:30), untagged rows: a dataset written and rolled up as an
    import does, its metadata by hand."""
    def at(text):
        return pd.Timestamp(text, tz="UTC")

    table = [  # start, end, gpu_hours, cost, team, project, run
        ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 0.1, "a", "p1", "r1"),
        ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 0.2, "a", "p1", "r1"),
        ("2025-04-01 20:30", "2025-04-02 04:30", 16.0, 8.8, "b", "p3", "r3"),
        ("2025-04-02 00:00", "2025-04-03 00:00", None, 2.20, None, None, None),
        ("2025-04-02 05:00", "2025-04-02 06:00", 1.0, None, None, "p1", None),
        ("2025-05-31 23:00", "2025-06-01 00:00", 2.0, 0.3, "a", "p1", "r1"),
    ]
    frame = pd.DataFrame(table, columns=["period_start", "period_end", "gpu_hours", "cost", "team", "project",
                                         "run_id"])
    for column in ("period_start", "period_end"):
        frame[column] = frame[column].map(at).astype("datetime64[ns, UTC]")
    frame = frame.assign(billed_cost=frame["cost"], currency="USD", pricing="on_demand", charge_kind="usage",
                         gpu_type="H100", resource_id=None, run_state=None, tokens=float("nan"),
                         source_row=range(2, len(frame) + 2))
    return _written(folder, frame, "hostile")


def test_a_rollup_read_as_rows_gives_the_sums_by_hand(tmp_path):
    info, usage = _hostile(tmp_path)
    view = _view(usage, rollups_chooser=rollup_rows.chooser(engine.default(), info, tmp_path))
    table, label = tabs.source(BY_NAME["spend"], view)
    assert label.startswith("the daily rollup by team") and table is not None
    days = tabs.run(BY_NAME["spend"], view).frame
    daily, latest = spend.daily_total(table, "cost"), spend.latest_instant(table)  # the rollup read as rows
    cells = {(row.period.date().isoformat(), row.group): (row.gpu_hours, row.cost) for row in days.itertuples()}
    # team a on 1 April: 8 + 8 GPU-hours, $0.10 + $0.20; team b's 8-hour row puts 3.5 hours on 1 April, 4.5 on the 2nd
    assert cells["2025-04-01", "a"] == pytest.approx((16.0, 0.3), abs=CENT)
    assert cells["2025-04-01", "b"] == pytest.approx((16 * 3.5 / 8, 8.8 * 3.5 / 8), abs=CENT)
    assert cells["2025-04-02", "b"] == pytest.approx((16 * 4.5 / 8, 8.8 * 4.5 / 8), abs=CENT)
    # the untagged rows of 2 April: a row without GPU-hours and one without a cost, so both sums are unknown (NaN)
    assert all(math.isnan(value) for value in cells["2025-04-02", "(untagged)"])
    assert math.isnan(daily[pd.Timestamp("2025-04-02", tz="UTC")])
    assert daily[pd.Timestamp("2025-04-01", tz="UTC")] == pytest.approx(0.3 + 8.8 * 3.5 / 8, abs=CENT)
    assert latest == pd.Timestamp("2025-06-01", tz="UTC") - pd.Timedelta(1, "ns")  # the last row's end

    assert "rollup" in tabs.source(BY_NAME["attribution"], view)[1]  # the whole-period or daily one by run: 5 rows
    by_cell = {(row.team, row.project, row.run_id): (row.gpu_hours, row.cost)
               for row in tabs.run(BY_NAME["attribution"], view).table.itertuples()}
    assert by_cell["a", "p1", "r1"] == pytest.approx((18.0, 0.6), abs=CENT)  # 8 + 8 + 2; 0.1 + 0.2 + 0.3
    assert by_cell["(untagged)", "p1", "(untagged)"][0] == 1.0 and math.isnan(by_cell["(untagged)", "p1",
                                                                                      "(untagged)"][1])
    assert math.isnan(by_cell["(untagged)", "(untagged)", "(untagged)"][0])  # its row has no GPU-hours
    assert by_cell["(untagged)", "(untagged)", "(untagged)"][1] == pytest.approx(2.20, abs=CENT)


def _load_rows(folder: Path) -> tuple[Metadata, object]:
    """A reserved credit beside two reserved GPU rows in one hour, a row across three hours, and commitment lines of
    which two cancel out: written and rolled up as an import does, its metadata by hand."""
    table = [  # start, end, gpu_hours, cost, pricing, charge_kind
        ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 20.0, "reserved", "usage"),
        ("2025-04-01 10:00", "2025-04-01 11:00", 8.0, 20.0, "reserved", "usage"),
        ("2025-04-01 10:00", "2025-04-01 11:00", -4.0, -10.0, "reserved", "usage"),  # a credit: no GPU row
        ("2025-04-01 12:30", "2025-04-01 14:30", 4.0, 10.0, "on_demand", "usage"),  # 2 GPUs for two hours
        ("2025-04-01 00:00", "2025-04-02 00:00", None, 100.0, "reserved", "commitment"),
        ("2025-04-03 00:00", "2025-04-04 00:00", None, 50.0, "reserved", "commitment"),  # these two sum to 0,
        ("2025-04-03 00:00", "2025-04-04 00:00", None, -50.0, "reserved", "commitment"),  # yet each has a cost
    ]
    frame = pd.DataFrame(table, columns=["period_start", "period_end", "gpu_hours", "cost", "pricing",
                                         "charge_kind"])
    for column in ("period_start", "period_end"):
        frame[column] = frame[column].map(lambda text: pd.Timestamp(text, tz="UTC")).astype("datetime64[ns, UTC]")
    frame = frame.assign(billed_cost=frame["cost"], currency="USD", team="a", project="p", run_id=None,
                         gpu_type="H100", resource_id=None, run_state=None, tokens=float("nan"),
                         source_row=range(2, len(frame) + 2))
    return _written(folder, frame, "load")


def test_the_load_profile_from_the_hourly_rollup_gives_the_figures_by_hand(tmp_path):
    info, usage = _load_rows(tmp_path)
    view = _view(usage, rollups_chooser=rollup_rows.chooser(engine.default(), info, tmp_path))
    view = dataclasses.replace(view, billing=usage)  # the bill is the dataset's own rows, as on the page
    assert tabs.source(BY_NAME["load"], view)[1] == _label(info, "hourly")
    result = tabs.run(BY_NAME["load"], view)
    hours = pd.date_range("2025-04-01", "2025-04-03 23:00", freq="h", tz="UTC")  # the first row's to the last's
    gpus = pd.Series(0.0, index=hours)
    gpus[pd.Timestamp("2025-04-01 10:00", tz="UTC")] = 8 + 8 - 4  # the credit counts in the concurrency
    gpus[pd.Timestamp("2025-04-01 12:00", tz="UTC")] = 1.0  # 2 GPUs for half of the hour
    gpus[pd.Timestamp("2025-04-01 13:00", tz="UTC")] = 2.0
    gpus[pd.Timestamp("2025-04-01 14:00", tz="UTC")] = 1.0
    assert result.series.index.equals(hours)
    assert result.series.tolist() == pytest.approx(gpus.tolist(), abs=CENT)
    assert result.summary.peak_gpus == pytest.approx(12.0) and result.summary.hours == 72
    # the reserved GPU rows only (not the credit): 16 GPUs at 10:00; the commitment runs to the end of 3 April, where
    # its two lines cancel out, so 72 hours of a 16-GPU reservation, one of them used: 16 × 71 idle GPU-hours
    assert result.summary.reserved_capacity_gpus == 16.0
    assert result.summary.idle_reserved_gpu_hours == pytest.approx(16 * 71, abs=CENT)
    rows = dataclasses.replace(_view(usage), billing=usage)
    assert _same(result, BY_NAME["load"].query(rows))


def test_the_exports_days_and_labels_come_from_its_rollups_by_hand(tmp_path):
    """What the filters offer and Spend's quarters and last day are the whole export's: over a dataset's own rows
    they come from its rollups (a quarter's rows are not read for them), and they are the rows' own."""
    info, usage = _hostile(tmp_path)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    offered = export_options(usage, chooser)
    assert offered == FilterOptions(teams=("a", "b", "(untagged)"), projects=("p1", "p3", "(untagged)"),
                                    pricing=("on_demand",), start=date(2025, 4, 1), end=date(2025, 5, 31))
    assert offered == filter_options(usage)  # the rows say the same
    assert chooser(FILTERED_COLUMNS, None)[0] is not None and chooser((), "day")[0] is not None  # rollups answered
    # With the view's whole rows emptied, Spend still finds the export's quarter and last day: it read the rollup.
    view = _view(usage, rollups_chooser=chooser)
    result = tabs.run(BY_NAME["spend"], dataclasses.replace(view, usage=usage.filter(usage.cost > 1e9)))
    assert result.quarters == ((date(2025, 4, 1), date(2025, 6, 30)),)
    assert result.data_end == date(2025, 5, 31)  # the last row ends at midnight on 1 June


def test_the_samples_filter_options_from_its_rollups_are_the_rows(sample):
    info, usage = sample
    chooser = rollups_of(info)
    assert chooser(FILTERED_COLUMNS, None)[0] is not None and chooser((), "day")[0] is not None  # read from rollups
    assert export_options(usage, chooser) == filter_options(usage)


def _jobs_rows(folder: Path) -> tuple[Metadata, object]:
    """Run segments by hand: r1's NODE_FAIL segment ends on 30 April and its run resumes on 1 May (across a month);
    r2's REQUEUED segment runs across midnight; r3 fails and never resumes; r4 resumes on 4 GPUs after a segment on 8
    (not the same job shape: failed); a reserved GPU row with no run; an unused-commitment line: written and rolled
    up as an import does, its metadata by hand."""
    table = [  # start, end, gpu_hours, cost, run, state, tokens, pricing, charge_kind
        ("2025-04-30 21:00", "2025-04-30 23:00", 16.0, 32.0, "r1", "NODE_FAIL", 1e9, "on_demand", "usage"),
        ("2025-05-01 01:00", "2025-05-01 05:00", 32.0, 64.0, "r1", "COMPLETED", 3e9, "on_demand", "usage"),
        ("2025-04-09 23:00", "2025-04-10 01:00", 4.0, 8.0, "r2", "REQUEUED", None, "spot", "usage"),
        ("2025-04-10 03:00", "2025-04-10 05:00", 4.0, 8.0, "r2", "COMPLETED", None, "spot", "usage"),
        ("2025-04-12 00:00", "2025-04-12 01:00", 4.0, 8.0, "r3", "FAILED", None, "on_demand", "usage"),
        ("2025-04-14 00:00", "2025-04-14 02:00", 16.0, 32.0, "r4", "TIMEOUT", None, "on_demand", "usage"),
        ("2025-04-14 03:00", "2025-04-14 05:00", 8.0, 16.0, "r4", "COMPLETED", None, "on_demand", "usage"),
        ("2025-04-15 00:00", "2025-04-15 01:00", 2.0, 5.0, None, None, None, "reserved", "usage"),
        ("2025-04-16 00:00", "2025-04-17 00:00", None, 10.0, None, None, None, "reserved", "unused_commitment"),
    ]
    frame = pd.DataFrame(table, columns=["period_start", "period_end", "gpu_hours", "cost", "run_id", "run_state",
                                         "tokens", "pricing", "charge_kind"])
    for column in ("period_start", "period_end"):
        frame[column] = frame[column].map(lambda text: pd.Timestamp(text, tz="UTC")).astype("datetime64[ns, UTC]")
    frame = frame.assign(billed_cost=frame["cost"], currency="USD", team="a", project="p", gpu_type="H100",
                         resource_id=None, source_row=range(2, len(frame) + 2))
    return _written(folder, frame, "jobs")


# interval and restart (minutes); failed states; the GPU-hours the interruptions lost, how many, failed work lost:
# τ/2 + restart = 1 h: r1's 2-hour segment on 8 GPUs loses 8 of its 16 GPU-hours, r2's REQUEUED one 2 of 4
GAP_CASES = [
    (60.0, 30.0, FAILED_STATES, 8.0 + 2.0, 2, 4.0 + 16.0),  # r3 and r4's TIMEOUT failed: never resumed
    (240.0, 0.0, FAILED_STATES, 16.0 + 4.0, 2, 20.0),  # 2 h: all of both segments
    (6.0, 0.0, FAILED_STATES, 16 * 0.05 / 2 + 4 * 0.05 / 2, 2, 20.0),  # 0.05 h of each 2-hour segment
    (60.0, 30.0, ("FAILED",), 2.0, 1, 4.0),  # NODE_FAIL not failed: r1 was not interrupted; TIMEOUT not failed
]


@pytest.mark.parametrize(("interval", "restart", "states", "lost_h", "count", "failed_h"), GAP_CASES)
def test_plan_vs_actual_from_the_jobs_rollup_gives_the_interruptions_by_hand(tmp_path, interval, restart, states,
                                                                            lost_h, count, failed_h):
    info, usage = _jobs_rows(tmp_path)
    plan = Scenario(checkpoint_interval_min=interval, restart_min=restart)
    choices = Choices(main_runs=("r1",), failed_states=tuple(states))
    view = dataclasses.replace(_view(usage, rollups_chooser=rollup_rows.chooser(engine.default(), info, tmp_path)),
                               plan=plan, choices=choices)
    assert tabs.source(BY_NAME["gap"], view)[1] == _label(info, "jobs")
    summary = tabs.run(BY_NAME["gap"], view).summary
    assert summary.actual_interruption_gpu_hours == pytest.approx(lost_h, abs=CENT)
    assert summary.actual_interruptions == count
    assert summary.actual_failed_gpu_hours == pytest.approx(failed_h, abs=CENT)
    assert summary.actual_gpu_hours == pytest.approx(16 + 32 + 4 + 4 + 4 + 16 + 8 + 2, abs=CENT)
    assert summary.unused_commitment_usd == pytest.approx(10.0, abs=CENT)
    rows = dataclasses.replace(_view(usage), plan=plan, choices=choices)
    assert _same(tabs.run(BY_NAME["gap"], view), BY_NAME["gap"].query(rows))  # the rows' answer, to the cent


def test_the_jobs_rollup_keeps_a_segment_resumed_in_the_next_month(tmp_path):
    info, _ = _jobs_rows(tmp_path)
    table = rollups.read(engine.default(), tmp_path, rollups.JOBS).execute()
    marks = {(row.run_id, row.run_state): (row.segment, None if pd.isna(row.job_hours) else row.job_hours)
             for row in table.itertuples() if row.run_id is not None and not pd.isna(row.run_id)}
    assert marks == {
        ("r1", "NODE_FAIL"): (1, 2.0),  # April's segment, resumed on 1 May: seen across the month, its duration kept
        ("r1", "COMPLETED"): (0, None),  # the run's last segment
        ("r2", "REQUEUED"): (1, 2.0),  # restarted (and resumed): its duration kept
        ("r2", "COMPLETED"): (0, None),
        ("r3", "FAILED"): (0, None),  # never resumed: no duration needed, whatever the setting
        ("r4", "TIMEOUT"): (0, None),  # resumed on half the GPUs: another job shape
        ("r4", "COMPLETED"): (0, None),
    }
    assert table.loc[table.run_id.isna(), "segment"].isna().all()  # not job rows
    assert info.rollups[-1]["name"] == "jobs" and sorted(info.rollups[-1]["months"]) == ["2025-04", "2025-05"]


@pytest.mark.parametrize("kept", [True, False])
def test_a_dataset_without_the_jobs_rollup_answers_plan_vs_actual_from_its_rows(sample, kept):
    info, usage = sample
    if not kept:  # imported before the jobs rollup, or over the size budget
        info = dataclasses.replace(info, rollups=[e for e in info.rollups if e["name"] != "jobs"])
    view = dataclasses.replace(_view(usage, rollups_chooser=rollups_of(info)), plan=Scenario())
    assert tabs.source(BY_NAME["gap"], view)[1] == _label(info, "jobs" if kept else None)
    assert _same(tabs.run(BY_NAME["gap"], view), BY_NAME["gap"].query(dataclasses.replace(_view(usage),
                                                                                          plan=Scenario())))


# interval and restart (minutes); the failed GPU-hours' share, GPU-hours the interruptions lost: r1's NODE_FAIL segment
# (16 GPU-h) was interrupted, r3's FAILED (4) and r4's TIMEOUT (16) segments failed, of 84 GPU-hours with a state
WASTE_CASES = [(60.0, 30.0, 100 * 20 / 84, 8.0 + 2.0), (240.0, 0.0, 100 * 20 / 84, 16.0 + 4.0)]


@pytest.mark.parametrize(("interval", "restart", "failed_share", "lost_h"), WASTE_CASES)
def test_waste_from_the_jobs_rollup_gives_the_checks_by_hand(tmp_path, interval, restart, failed_share, lost_h):
    info, usage = _jobs_rows(tmp_path)
    plan = Scenario(checkpoint_interval_min=interval, restart_min=restart)
    view = dataclasses.replace(_view(usage, rollups_chooser=rollup_rows.chooser(engine.default(), info, tmp_path)),
                               plan=plan)
    assert tabs.source(BY_NAME["waste"], view)[1] == (
        f"{_label(info, 'jobs')}; storage lines from {_label(info, 'storage')}; the rows behind it from the rows (9)")
    checks = {check.id: check for check in tabs.run(BY_NAME["waste"], view).checklist}
    assert checks["failed_runs"].figure == pytest.approx(failed_share, abs=1e-9)
    assert checks["failed_runs"].usd == pytest.approx(8.0 + 32.0, abs=CENT)
    assert checks["interrupted_runs"].figure == pytest.approx(lost_h, abs=CENT)
    assert checks["interrupted_runs"].detail.startswith("2 interruptions")
    assert checks["successful_runs"].figure == pytest.approx(100 * 88 / 168, abs=1e-9)  # COMPLETED $ of $ with a state
    assert checks["idle_capacity"].usd == pytest.approx(10.0 + 5.0, abs=CENT)  # unused line + reserved GPU row, no run
    assert "2025-04-16 to 2025-04-16" in checks["idle_capacity"].detail  # its first and last day, from the rollup
    assert checks["interrupted_runs"].rows is None  # the rows behind it, read when asked
    behind = waste.rows_behind(usage, checks["interrupted_runs"].behind)
    assert set(behind["run_state"]) == {"NODE_FAIL", "REQUEUED"}
    rows = dataclasses.replace(_view(usage), plan=plan)
    assert _same(tabs.run(BY_NAME["waste"], view), BY_NAME["waste"].query(rows))  # the rows' answer, to the cent


def test_waste_names_the_rollup_of_its_sums_and_the_rows_behind_them(sample):
    info, usage = sample
    assert tabs.source(BY_NAME["waste"], _view(usage, rollups_chooser=rollups_of(info)))[1] == (
        f"{_label(info, 'jobs')}; storage lines from {_label(info, 'storage')}; the rows behind it from "
        f"{_label(info, None)}")
    dated = _view(usage, Filters(**APRIL), rollups_of(info))  # dates: no rollup keeps a day and the segments' marks
    assert tabs.source(BY_NAME["waste"], dated)[1] == _label(info, None)
