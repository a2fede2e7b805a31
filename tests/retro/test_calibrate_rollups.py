"""Issue 52: Plan vs actual's measured inputs over a workspace dataset's own rows read their sums from its rollups
(the whole-period rollups by run and by job segment, grouped by the signs of GPU-hours, cost and tokens) and equal
the rows' answer and the figures worked out by hand; without such a rollup, with a run export, or for a dataset
whose plausibility record is missing or stale, they read the rows. A dataset imported now records the bounds its
rows were checked with, and its implausible-row scan is skipped."""

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from dashboard import settings
from dashboard.ingest import plausible
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions
from dashboard.query import engine
from dashboard.retro import calibrate as cal
from dashboard.retro.units import catalogue_peak_tflops
from dashboard.retro.view import rollup_of
from dashboard.workspace import datasets, job_rollup, rollup_rows, rollups
from dashboard.workspace.datasets import Metadata
from dashboard.workspace.imports import import_to_workspace
from dashboard.workspace.writer import MonthWriter

CENT = 1e-6  # relative: a rollup adds exact decimals, the rows doubles
SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
COLUMNS = ["period_start", "period_end", "gpu_hours", "cost", "pricing", "gpu_type", "team", "project", "run_id",
           "run_state", "tokens"]
N = float("nan")


def _written(folder: Path, table: list[tuple], record: dict | None = None) -> tuple[Metadata, object]:
    """``table``'s rows (``COLUMNS``, in US dollars) written and rolled up (the jobs rollup too, all proven) as an
    import does, its metadata by hand with the plausibility ``record``, and its rows as the engine reads them."""
    frame = pd.DataFrame(table, columns=COLUMNS)
    for column in ("period_start", "period_end"):
        frame[column] = frame[column].map(lambda text: pd.Timestamp(text, tz="UTC")).astype("datetime64[ns, UTC]")
    frame = frame.assign(billed_cost=frame["cost"], currency="USD", charge_kind="usage", resource_id=None,
                         source_row=range(2, len(frame) + 2))
    writer = MonthWriter(folder / datasets.USAGE)
    writer.write(frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS))
    writer.close()
    backend = engine.default()
    built = "2026-12-06T12:03:00+00:00"
    entries = rollups.build(backend, folder, writer.months, built)
    entries += job_rollup.build(backend, folder, built, None, entries)
    job_rollup.prove(backend, folder, entries, writer.months)
    info = Metadata(name="bill", source="by hand", source_bytes=0, imported_at=built, rows=len(frame), bytes=0,
                    start=None, end=None, months=writer.months, streamed=False, rollups=entries,
                    plausible=plausible.bounds() if record is None else record)
    (folder / datasets.METADATA).write_text(info.to_json(), encoding="utf-8")
    usage = backend.read_parquet(str(folder / datasets.USAGE / "**" / "*.parquet"), hive_partitioning=True)
    return info, usage.drop("month")


D1, D2 = "2025-04-01", "2025-04-02"
# The main run (most GPU-hours) on 8 reserved H100s at $2/GPU-h: a node failure resumed 90 min later, a failure
# resumed 60 min later; an ablation and an eval on demand at $4; a sweep on 8 spot A100s for 6 h at $1, preempted,
# then on 4 (not resumed: fewer GPUs), preempted again (one group of the jobs rollup: its counts are the rows');
# storage with no GPU-hours. Tokens on the main run's four segments.
RUNS = [
    (f"{D1} 00:00", f"{D1} 04:00", 32.0, 64.0, "reserved", "H100", "core", "llm", "pretrain", "NODE_FAIL", 1e9),
    (f"{D1} 05:30", f"{D1} 09:30", 32.0, 64.0, "reserved", "H100", "core", "llm", "pretrain", "COMPLETED", 1e9),
    (f"{D1} 10:00", f"{D1} 12:00", 16.0, 32.0, "reserved", "H100", "core", "llm", "pretrain", "FAILED", 5e8),
    (f"{D1} 13:00", f"{D1} 15:00", 16.0, 32.0, "reserved", "H100", "core", "llm", "pretrain", "COMPLETED", 5e8),
    (f"{D1} 01:00", f"{D1} 02:00", 10.0, 40.0, "on_demand", "H100", "core", "llm", "ablation-1", "COMPLETED", N),
    (f"{D1} 03:00", f"{D1} 04:00", 5.0, 20.0, "on_demand", "H100", "core", "llm", "eval-mmlu", "COMPLETED", N),
    (f"{D2} 00:00", f"{D2} 06:00", 48.0, 48.0, "spot", "A100", "core", "llm", "sweep-2", "PREEMPTED", N),
    (f"{D2} 08:00", f"{D2} 14:00", 24.0, 24.0, "spot", "A100", "core", "llm", "sweep-2", "PREEMPTED", N),
    (f"{D1} 00:00", f"{D2} 00:00", None, 3.0, None, None, "core", None, None, None, N),
]
# W&B-like: a run id per job, so a job's run is its project; the project with most GPU-hours is the main one.
PER_JOB = [
    (f"{D1} 00:00", f"{D1} 02:00", 16.0, 32.0, "reserved", "H100", "core", "llm", "a1", "FAILED", N),
    (f"{D1} 02:00", f"{D1} 04:00", 16.0, 32.0, "reserved", "H100", "core", "llm", "a2", "FAILED", N),
    (f"{D1} 04:00", f"{D1} 06:00", 16.0, 32.0, "reserved", "H100", "core", "llm", "a3", "COMPLETED", N),
    (f"{D1} 00:00", f"{D1} 01:00", 8.0, 32.0, "on_demand", "H100", "core", "evals", "b1", "COMPLETED", N),
]
ALL_H = 96 + 15 + 72  # RUNS' GPU-hours with a known pricing: every GPU row
PEAK = catalogue_peak_tflops("H100")
PARAMS = 7e9
MFU = 6 * PARAMS * 1e9 / (32 * PEAK * 1e12 * 3600)  # r2's; r4's is the same (half the tokens on half the hours)

# table, the key, its hand-worked value (None: not measured), its count of observations
CASES = [
    (RUNS, "price_reserved_per_gpu_hour", (64 + 64 + 32 + 32) / 96, 4),
    (RUNS, "price_on_demand_per_gpu_hour", (40 + 20) / 15, 2),
    (RUNS, "price_spot_per_gpu_hour", (48 + 24) / 72, 2),
    (RUNS, "reserved_share", 96 / ALL_H, 4),
    (RUNS, "spot_share", 72 / ALL_H, 2),
    (RUNS, "experiment_overhead", (10 + 72) / 96, 3),  # GPU rows of the ablation and the sweep
    (RUNS, "eval_overhead", 5 / 96, 1),
    (RUNS, "debug_overhead", None, 0),
    # the node failure, and the failure its run resumed after, over 183 GPU-hours / 8 GPUs / 24 h
    (RUNS, "node_failures_per_1000_node_days", 2 / (ALL_H / 8 / 24) * 1000, 2),
    (RUNS, "spot_interruptions_per_1000_node_days", 2 / (72 / 8 / 24) * 1000, 2),  # 0.375 node-days of spot
    (RUNS, "restart_min", (90 + 60) / 2, 2),
    (RUNS, "mfu", MFU, 2),  # the two completed segments; the failed ones left out
    (PER_JOB, "eval_overhead", 8 / 48, 1),  # project evals' run over project llm's 48 GPU-hours
    (PER_JOB, "experiment_overhead", None, 0),
    (PER_JOB, "price_reserved_per_gpu_hour", 2.0, 3),
    # a job's run is its project: a2 started at a1's end on 8 GPUs, a3 at a2's; over 56 GPU-hours / 8 / 24 h
    (PER_JOB, "node_failures_per_1000_node_days", 2 / (56 / 8 / 24) * 1000, 2),
]


def _same(mine: cal.Measured, rows: cal.Measured) -> None:
    """Two measured inputs equal: the numbers to float noise, the rest exactly."""
    for field in dataclasses.fields(cal.Measured):
        a, b = getattr(mine, field.name), getattr(rows, field.name)
        if isinstance(b, float):
            assert a == pytest.approx(b, rel=CENT, nan_ok=True), (mine.key, field.name)
        else:
            assert a == b, (mine.key, field.name)


def _calibrated(table: list[tuple], folder: Path, **given) -> tuple[dict, dict, object]:
    info, usage = _written(folder, table)
    chooser = rollup_rows.chooser(engine.default(), info, folder)
    kwargs = {"model_params": PARAMS, "gpu_type": "H100"} | given
    return cal.calibrate(usage, rollups=chooser, **kwargs), cal.calibrate(usage, **kwargs), chooser


@pytest.mark.parametrize(("table", "key", "value", "count"), CASES)
def test_a_measured_input_from_the_rollups_is_the_hand_worked_one_and_the_rows(tmp_path, table, key, value, count):
    from_rollups, from_rows, _ = _calibrated(table, tmp_path)
    mine = from_rollups[key]
    assert (mine.value, mine.count) == (pytest.approx(value, rel=CENT) if value is not None else None, count)
    assert mine.refused is None
    _same(mine, from_rows[key])


@pytest.mark.parametrize("table", [RUNS, PER_JOB])
def test_every_measured_input_from_the_rollups_is_the_rows(tmp_path, table):
    from_rollups, from_rows, chooser = _calibrated(table, tmp_path)
    assert chooser.checked
    for key in from_rows:
        _same(from_rollups[key], from_rows[key])


def test_the_sums_are_read_from_the_whole_period_rollups(tmp_path):
    info, _ = _written(tmp_path, RUNS)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    named = {grain: chooser(grain, None)[1] for grain in (cal.RUN_GRAIN, cal.PRICE_GRAIN, cal.JOB_GRAIN)}
    assert named[cal.PRICE_GRAIN].startswith("the whole-period rollup by team, project, run_id, run_state, pricing")
    assert "segment" in named[cal.JOB_GRAIN] and "segment" not in named[cal.PRICE_GRAIN]
    assert named[cal.RUN_GRAIN].startswith("the whole-period rollup")  # the smaller of the two by run


@pytest.mark.parametrize("kept", [
    ("runs",),  # no jobs rollup: the interruptions and restarts read the rows
    ("jobs",),  # no rollup by GPU type: the prices read the rows
    ("daily_team", "daily_run", "daily_gpu", "hourly"),  # none by the signs: every sum reads the rows
    (),  # a dataset imported before rollups
])
def test_without_a_rollup_holding_the_grain_the_rows_answer_the_same(tmp_path, kept):
    info, usage = _written(tmp_path, RUNS)
    info = dataclasses.replace(info, rollups=[entry for entry in info.rollups if entry["name"] in kept])
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    assert (rollup_of(chooser, cal.PRICE_GRAIN) is not None) == ("runs" in kept)
    assert (rollup_of(chooser, cal.JOB_GRAIN) is not None) == ("jobs" in kept)
    from_rollups = cal.calibrate(usage, model_params=PARAMS, gpu_type="H100", rollups=chooser)
    from_rows = cal.calibrate(usage, model_params=PARAMS, gpu_type="H100")
    for key in from_rows:
        _same(from_rollups[key], from_rows[key])


def test_with_a_run_export_the_rollups_are_not_read(tmp_path):
    """The run export's rows are not the dataset's: its sums are its own (a chooser given is left alone)."""
    info, usage = _written(tmp_path, RUNS)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    asked = []

    def recording(columns, unit):
        asked.append(columns)
        return chooser(columns, unit)

    assert cal.calibrate(usage, model_params=PARAMS, rollups=recording)["reserved_share"].count == 4
    assert asked  # a lone bill asks
    asked.clear()
    from_both = cal.calibrate(usage, usage, model_params=PARAMS, rollups=recording)
    assert not asked
    assert from_both["node_failures_per_1000_node_days"].count == 2


IMPLAUSIBLE = [*RUNS, (f"{D1} 00:00", f"{D1} 01:00", 1.0, 5_000.0, "on_demand", "H100", "core", "llm", "x", None, N)]


@pytest.mark.parametrize(("record", "checked"), [
    ({}, False),  # imported before the record: tested as the rows
    (plausible.bounds() | {"max_price_per_gpu_hour_usd": 10_000.0}, False),  # checked with looser bounds than today's
    (plausible.bounds(), True),  # checked with today's: no scan (this bill was not, so nothing refuses it)
])
def test_the_implausible_rows_scan_is_skipped_only_for_rows_checked_with_todays_bounds(tmp_path, record, checked):
    """A row at $5,000 per GPU-hour, written by hand past the import's checks."""
    info, usage = _written(tmp_path, IMPLAUSIBLE, record)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    assert chooser.checked == checked == cal.checked_at_import(chooser)
    measured = cal.calibrate(usage, model_params=PARAMS, gpu_type="H100", rollups=chooser)
    refused = measured["price_on_demand_per_gpu_hour"].refused
    assert (refused is None) == checked
    if not checked:
        assert "line 11" in refused  # the 10th row, after the header
        from_rows = cal.calibrate(usage, model_params=PARAMS, gpu_type="H100")
        assert refused == from_rows["price_on_demand_per_gpu_hour"].refused


def test_a_plausible_dataset_checked_at_import_is_not_scanned(tmp_path, monkeypatch):
    info, usage = _written(tmp_path, RUNS)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)

    def scanned(_usage):
        raise AssertionError("the rows were scanned for implausible values")

    monkeypatch.setattr(cal, "implausible_rows", scanned)
    measured = cal.calibrate(usage, model_params=PARAMS, rollups=chooser)
    assert measured["reserved_share"].value == pytest.approx(96 / ALL_H)
    with pytest.raises(AssertionError, match="scanned"):
        cal.calibrate(usage, model_params=PARAMS)  # the rows, without the chooser


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv(settings.WORKSPACE_DIR, str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("sample", ["focus_sample.csv", "wandb_sample.csv", "slurm_sample.txt"])
def test_an_imported_dataset_records_its_bounds_and_calibrates_from_its_rollups_as_from_its_rows(workspace, sample):
    """The import checks every row (``engine.read_table``): the record says so, and the measured inputs of the
    dataset as a lone bill read from its rollups equal its rows'."""
    info = import_to_workspace(SAMPLES / sample, "bill", batch_rows=100, stream_min_bytes=0,
                               options=ReadOptions(timezone="UTC"))
    assert info.plausible == plausible.bounds()
    backend = engine.default()
    chooser = rollup_rows.chooser(backend, info, datasets.version_of(info))
    assert chooser.checked
    usage = datasets.open_table(backend, "bill")
    from_rollups = cal.calibrate(usage, model_params=13e9, gpu_type="H100", rollups=chooser)
    from_rows = cal.calibrate(usage, model_params=13e9, gpu_type="H100")
    for key in from_rows:
        _same(from_rollups[key], from_rows[key])


def test_an_append_to_a_dataset_without_the_record_has_none(workspace):
    source = SAMPLES / "focus_sample.csv"
    first = import_to_workspace(source, "bill", stream_min_bytes=0)
    folder = datasets.version_of(first)
    (folder / datasets.METADATA).write_text(dataclasses.replace(first, plausible={}).to_json(), encoding="utf-8")
    after = import_to_workspace(source, "bill", append=True, stream_min_bytes=0)
    assert after.plausible == {}  # its old rows were not checked with today's bounds
    again = import_to_workspace(source, "bill", replace=True, stream_min_bytes=0)
    assert again.plausible == plausible.bounds()
