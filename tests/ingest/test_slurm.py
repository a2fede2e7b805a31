"""Slurm sacct reader: hand-computed GPU-hours, the step/pending/no-GPU rules, states, time zones."""

from __future__ import annotations

from pathlib import Path

import hypothesis.strategies as st
import pandas as pd
import pytest
from hypothesis import given, settings

from dashboard.ingest.engine import read_table
from dashboard.ingest.formats import slurm
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions, UnreadableFile

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "ingest" / "slurm_sacct.txt"
APP_SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "slurm_sample.txt"
BERLIN = ReadOptions(timezone="Europe/Berlin")
HEADER = ["JobID", "JobName", "Account", "Partition", "State", "Start", "End", "Elapsed", "ElapsedRaw",
          "AllocTRES"]


def table_from_file(path: Path) -> pd.DataFrame:
    """The file as decode hands it over: strings, NA for empty cells, index = source line number."""
    table = pd.read_csv(path, sep="|", dtype="string", keep_default_na=False).replace("", pd.NA)
    table.index = range(2, len(table) + 2)
    return table


def table_from_rows(rows: list[dict[str, str]]) -> pd.DataFrame:
    """A sacct table from dicts of cells; unspecified cells are empty."""
    table = pd.DataFrame([[row.get(name) for name in HEADER] for row in rows], columns=HEADER, dtype="string")
    table.index = range(2, len(rows) + 2)
    return table


def job(**cells: str) -> dict[str, str]:
    """One completed 1-hour, 8-GPU job row, with ``cells`` overriding."""
    return {"JobID": "42", "JobName": "train", "Account": "llm", "Partition": "gpu", "State": "COMPLETED",
            "Start": "2025-06-01T10:00:00", "End": "2025-06-01T11:00:00", "Elapsed": "01:00:00",
            "ElapsedRaw": "3600", "AllocTRES": "cpu=64,gres/gpu=8,node=1"} | cells


@pytest.fixture(scope="module")
def sample():
    return read_table(slurm.FORMAT, table_from_file(SAMPLE), BERLIN)


def by_job(result) -> pd.DataFrame:
    return result.usage.set_index("resource_id")


def test_sample_counts_and_total_gpu_hours(sample):
    # 21 data rows: 11 allocations used; 4 steps + 1 CPU-only het component + 1 PENDING + 1 never-started
    # cancel = 7 excluded; bad Start, unknown state, unreadable gres = 3 rejected.
    assert (len(sample.usage), len(sample.excluded), len(sample.rejected)) == (11, 7, 3)
    # 12h×32 + 6h×32 + 1.5h×32 + 0.5h×8 + 183845s/3600×2 (2-03:04:05, typed gres only) + 4h×2 + 1h×2
    # + 2h×8 (het +0) + 3h×32 (running) + 3h×4 (DST night) + 2.5h×1 = 764.5 + 102.136111…
    assert sample.usage["gpu_hours"].sum() == pytest.approx(764.5 + 183845 * 2 / 3600, rel=1e-12)


def test_sample_gpu_hours_per_job(sample):
    hours = by_job(sample)["gpu_hours"].to_dict()
    assert hours == pytest.approx({
        "1001": 384.0,  # 43200 s × 32 GPUs; typed gres/gpu:h100=32 is not added on top
        "1002": 192.0, "1003": 48.0, "1004": 4.0,
        # No ElapsedRaw; Elapsed 2-03:04:05 = 2×86400 + 3×3600 + 4×60 + 5 = 183845 s.
        "1005": 183845 * 2 / 3600,
        "1006_1": 8.0, "1006_2": 2.0, "1007+0": 16.0, "1009": 96.0, "1010": 12.0, "1011": 2.5,
    }, rel=1e-12)


def test_sample_excluded_rows_carry_their_rule(sample):
    reasons = dict(zip(sample.excluded["line"], sample.excluded["reason"], strict=True))
    assert reasons == {
        3: slurm.STEP_RULE, 4: slurm.STEP_RULE, 5: slurm.STEP_RULE, 12: slurm.STEP_RULE,
        14: slurm.NO_GPU_RULE, 15: slurm.NOT_STARTED_RULE, 22: slurm.NOT_STARTED_RULE,
    }


def test_sample_rejections_name_column_and_value(sample):
    reasons = dict(zip(sample.rejected["line"], sample.rejected["reason"], strict=True))
    assert reasons[19] == "Start: cannot read '2025-13-45T99:00:00' as a date-time"
    assert reasons[20] == "State: unknown Slurm state 'BANANA'"
    assert reasons[21].startswith("AllocTRES: cannot read 'billing=64,cpu=64,gres/gpu=lots")


def test_sample_states_teams_projects_and_ids(sample):
    usage = by_job(sample)
    assert usage.loc["1004", "run_state"] == "CANCELLED"  # "CANCELLED by 10234"
    # COMPLETED: 1001, 1006_1, 1007+0, 1011.
    assert usage["run_state"].value_counts().to_dict() == {
        "COMPLETED": 4, "FAILED": 1, "NODE_FAIL": 1, "CANCELLED": 1, "TIMEOUT": 1, "OUT_OF_MEMORY": 1,
        "RUNNING": 1, "PREEMPTED": 1,
    }
    assert usage.loc["1001", ["team", "project", "run_id"]].tolist() == ["llm", "pretrain", "pretrain-7b"]
    assert usage.loc["1005", ["team", "project", "run_id"]].tolist() == ["eval", "gpu-a100", "eval-big"]
    assert usage.loc["1001", "gpu_type"] == "H100"
    assert usage.loc["1005", "gpu_type"] == "A100"
    assert pd.isna(usage.loc["1003", "gpu_type"])
    assert sample.usage["source_row"].tolist() == [2, 6, 7, 8, 9, 10, 11, 13, 16, 17, 18]


def test_sample_times_are_converted_from_cluster_local_time(sample):
    usage = by_job(sample)
    # 08:00 CEST (UTC+2) on 2 June → 06:00Z.
    assert usage.loc["1001", "period_start"] == pd.Timestamp("2025-06-02T06:00:00Z")
    # The night clocks went back: 01:30 CEST → 23:30Z, 03:30 CET → 02:30Z, i.e. the 3 h ElapsedRaw says.
    assert usage.loc["1010", "period_start"] == pd.Timestamp("2025-10-25T23:30:00Z")
    assert usage.loc["1010", "period_end"] == pd.Timestamp("2025-10-26T02:30:00Z")
    # Start 02:30 happened twice; End 04:00 CET = 03:00Z minus the 2.5 h elapsed gives 00:30Z.
    assert usage.loc["1011", "period_start"] == pd.Timestamp("2025-10-26T00:30:00Z")


def test_running_job_is_counted_up_to_the_export(sample):
    running = by_job(sample).loc["1009"]
    assert running["period_end"] - running["period_start"] == pd.Timedelta(hours=3)
    assert any("still running" in warning for warning in sample.warnings)


def test_slurm_has_no_prices(sample):
    assert (sample.usage["cost"] == 0.0).all() and (sample.usage["billed_cost"] == 0.0).all()
    assert sample.usage["currency"].isna().all() and sample.usage["pricing"].isna().all()
    assert sample.warnings[0] == slurm.PRICE_WARNING


def test_usage_has_the_canonical_columns_and_dtypes(sample):
    assert list(sample.usage.columns) == list(CANONICAL_COLUMNS)
    assert {name: str(dtype) for name, dtype in sample.usage.dtypes.items()} == CANONICAL_COLUMNS


def test_empty_export_reads_to_an_empty_canonical_table():
    result = read_table(slurm.FORMAT, table_from_rows([]), BERLIN)
    assert len(result.usage) == 0
    assert {name: str(dtype) for name, dtype in result.usage.dtypes.items()} == CANONICAL_COLUMNS


def test_missing_timezone_is_unreadable_and_says_how_to_give_one():
    with pytest.raises(UnreadableFile, match="--timezone Europe/Berlin"):
        read_table(slurm.FORMAT, table_from_file(SAMPLE), ReadOptions())


def test_unknown_timezone_is_unreadable():
    with pytest.raises(UnreadableFile, match="Mars/Olympus"):
        read_table(slurm.FORMAT, table_from_file(SAMPLE), ReadOptions(timezone="Mars/Olympus"))


def test_export_without_alloctres_is_unreadable_and_names_it():
    table = table_from_rows([job()]).drop(columns="AllocTRES")
    with pytest.raises(UnreadableFile, match="AllocTRES"):
        read_table(slurm.FORMAT, table, BERLIN)


def test_utc_cluster_times_pass_through():
    result = read_table(slurm.FORMAT, table_from_rows([job()]), ReadOptions(timezone="UTC"))
    assert result.usage.loc[0, "period_start"] == pd.Timestamp("2025-06-01T10:00:00Z")


@pytest.mark.parametrize(("tres", "gpus", "gpu_type"), [
    ("billing=64,cpu=64,gres/gpu:h100=8,gres/gpu=8,mem=1000G,node=1", 8, "h100"),
    ("gres/gpu=8,gres/gpu:h100=8", 8, "h100"),
    ("cpu=16,gres/gpu:a100=2,mem=128G", 2, "a100"),
    ("gres/gpu:a100=2,gres/gpu:h100=4", 6, "a100+h100"),
    ("gres/gpu=4,gres/gpu:a100=2,gres/gpu:h100=2", 4, "a100+h100"),
    ("cpu=16,gres/gpu=2,gres/gpumem=160G,mem=128G", 2, None),
    ("billing=32,cpu=32,mem=64G,node=1", 0, None),
    ("gres/gpu=0", 0, None),
    ("GRES/GPU=3", 3, None),
])
def test_gpus_from_tres(tres, gpus, gpu_type):
    assert slurm.gpus_from_tres(tres) == (gpus, gpu_type)


def test_gpus_from_unreadable_tres_is_nan():
    count, gpu_type = slurm.gpus_from_tres("gres/gpu=lots")
    assert pd.isna(count) and gpu_type is None


@pytest.mark.parametrize(("elapsed", "seconds"), [
    ("00:00:30", 30),
    ("01:00:00", 3600),
    ("2-03:04:05", 183845),  # 2×86400 + 3×3600 + 4×60 + 5
    ("10-00:00:00", 864000),
    ("45:30", 2730),  # MM:SS
    ("01:30.5", 90.5),  # MM:SS.fff
])
def test_elapsed_text_gives_seconds(elapsed, seconds):
    row = job(Elapsed=elapsed, ElapsedRaw=None, End=None, AllocTRES="gres/gpu=1")
    result = read_table(slurm.FORMAT, table_from_rows([row]), BERLIN)
    assert result.usage.loc[0, "gpu_hours"] * 3600 == pytest.approx(seconds, rel=1e-12)


def test_elapsed_raw_wins_over_elapsed_and_end():
    row = job(ElapsedRaw="7200", Elapsed="01:00:00", End="2025-06-01T12:30:00")  # 2 h run, 30 min suspended
    assert read_table(slurm.FORMAT, table_from_rows([row]), BERLIN).usage.loc[0, "gpu_hours"] == 16.0  # 2 h × 8


def test_unreadable_elapsed_raw_falls_back_to_elapsed():
    row = job(ElapsedRaw="soon", Elapsed="00:30:00")
    assert read_table(slurm.FORMAT, table_from_rows([row]), BERLIN).usage.loc[0, "gpu_hours"] == 4.0  # 0.5 h × 8


def test_no_elapsed_columns_uses_end_minus_start():
    row = job(ElapsedRaw=None, Elapsed=None, End="2025-06-01T12:30:00")
    assert read_table(slurm.FORMAT, table_from_rows([row]), BERLIN).usage.loc[0, "gpu_hours"] == 20.0  # 2.5 h × 8


def test_end_before_start_is_rejected():
    row = job(ElapsedRaw=None, Elapsed=None, End="2025-06-01T09:00:00")
    result = read_table(slurm.FORMAT, table_from_rows([row]), BERLIN)
    assert result.rejected["reason"].tolist() == ["End: ends before Start"]


@pytest.mark.parametrize(("state", "canonical"), [
    ("COMPLETED", "COMPLETED"),
    ("FAILED", "FAILED"),
    ("CANCELLED by 1234", "CANCELLED"),
    ("CANCELLED+", "CANCELLED"),
    ("TIMEOUT", "TIMEOUT"),
    ("NODE_FAIL", "NODE_FAIL"),
    ("PREEMPTED", "PREEMPTED"),
    ("OUT_OF_MEMORY", "OUT_OF_MEMORY"),
    ("OOM", "OUT_OF_MEMORY"),
    ("REQUEUED", "REQUEUED"),
    ("completed", "COMPLETED"),
    ("CD", "COMPLETED"),
])
def test_state_is_normalised(state, canonical):
    result = read_table(slurm.FORMAT, table_from_rows([job(State=state)]), BERLIN)
    assert result.usage["run_state"].tolist() == [canonical]


@pytest.mark.parametrize(("job_id", "outcome"), [
    ("123", "used"),
    ("123_4", "used"),  # array task: its own allocation
    ("123+0", "used"),  # heterogeneous job component: its own allocation
    ("123+1", "used"),
    ("123.batch", "excluded"),
    ("123.extern", "excluded"),
    ("123.0", "excluded"),
    ("123_4.batch", "excluded"),
    ("123+0.0", "excluded"),
    ("abc", "rejected"),
    ("123.", "rejected"),
])
def test_job_id_forms(job_id, outcome):
    result = read_table(slurm.FORMAT, table_from_rows([job(JobID=job_id)]), BERLIN)
    counts = {"used": len(result.usage), "excluded": len(result.excluded), "rejected": len(result.rejected)}
    assert counts == {name: int(name == outcome) for name in counts}


def test_pending_array_with_unexpanded_ids_is_excluded():
    row = job(JobID="200_[1-10%2]", State="PENDING", Start="None", End="Unknown", AllocTRES=None)
    result = read_table(slurm.FORMAT, table_from_rows([row]), BERLIN)
    assert result.excluded["reason"].tolist() == [slurm.NOT_STARTED_RULE]


def test_steps_without_their_allocation_row_are_reported():
    rows = [job(JobID="7.batch"), job(JobID="7.0"), job(JobID="8"), job(JobID="8.batch")]
    result = read_table(slurm.FORMAT, table_from_rows(rows), BERLIN)
    assert len(result.usage) == 1
    assert any(warning.startswith("2 job steps have no allocation row") for warning in result.warnings)


def test_project_falls_back_to_partition_without_wckey_column():
    result = read_table(slurm.FORMAT, table_from_rows([job(Partition="gpu-h100")]), BERLIN)
    assert result.usage.loc[0, "project"] == "gpu-h100"


def test_run_id_falls_back_to_job_id_without_a_name():
    result = read_table(slurm.FORMAT, table_from_rows([job(JobName=None, JobID="555")]), BERLIN)
    assert result.usage.loc[0, ["run_id", "resource_id"]].tolist() == ["555", "555"]


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin"])
def test_app_sample_reads_as_generated(zone):
    # data/samples/generator/make_run_samples.py writes 131 jobs: 2 tokenize-corpus (CPU), 3 burn-in, 22 pretrain-13b,
    # 47 April sweep jobs (15 weekdays x 3, the repeat on 9 April, one cancelled before it started), 4 data-mix-pilot,
    # 5 ablate-lr-warmup (4 array tasks + a rerun), 3 on 10 May (ablate-data-mix x2, ablate-tokenizer), 5 fine-tune
    # jobs, 31 eval-harness (every third day from 2 April = 30, + the pending array) and 9 eval-full-suite (Mondays
    # 5 May to 30 June, heterogeneous: a GPU and a CPU component). Rows: 131 + 9 second components = 140 allocations;
    # steps: 3 for each of the 131 - 9 - 2 = 120 plain jobs that started, 5 for each heterogeneous job = 405.
    # Used: the 120 - 2 CPU jobs + 9 GPU components = 127. Excluded: 405 steps + 2 CPU jobs + 9 CPU components
    # (no GPUs) + 2 never started = 418.
    result = read_table(slurm.FORMAT, table_from_file(APP_SAMPLE), ReadOptions(timezone=zone))
    assert (len(result.usage), len(result.excluded), len(result.rejected)) == (127, 418, 0)
    assert result.excluded["reason"].value_counts().to_dict() == {
        slurm.STEP_RULE: 405, slurm.NO_GPU_RULE: 11, slurm.NOT_STARTED_RULE: 2}
    assert set(result.usage["team"]) == {"llm-pretrain", "research", "data", "llm-eval"}
    # the 30 June full suite
    assert any("1 job was still running when sacct ran, so its GPU-hours" in warning for warning in result.warnings)

    main = result.usage[result.usage["run_id"] == "pretrain-13b"]
    assert main["run_state"].value_counts().to_dict() == {
        "COMPLETED": 14, "NODE_FAIL": 3, "TIMEOUT": 2, "FAILED": 2, "CANCELLED": 1}
    hours = main["period_end"].sub(main["period_start"]).dt.total_seconds() / 3600
    assert (main["gpu_hours"] / hours).tolist() == pytest.approx([64] * 22)  # 8 nodes x 8 H100, one job at a time
    # 64 GPUs x (916 h completed + 316.25 h failed: 30.75 + 6.75 + 32 + 72 + 53 + 72 + 45 1/12 + 4 2/3)
    assert main.groupby(main["run_state"] == "COMPLETED")["gpu_hours"].sum().to_dict() == pytest.approx(
        {True: 916 * 64, False: 316.25 * 64})
    assert main.loc[main["run_state"] == "TIMEOUT", "gpu_hours"].tolist() == [72 * 64] * 2  # the 3-day limit
    assert main["period_start"].min() == pd.Timestamp("2025-05-05T06:00", tz=zone).tz_convert("UTC")
    assert main["period_end"].max() == pd.Timestamp("2025-06-27T13:10", tz=zone).tz_convert("UTC")


cells = {
    "JobID": st.sampled_from(["1", "2_3", "4+0", "5.batch", "6.0", "x", "", "7_[1-3]"]),
    "State": st.sampled_from(["COMPLETED", "CANCELLED by 9", "PENDING", "RUNNING", "BOGUS", ""]),
    "Start": st.sampled_from(["2025-06-01T10:00:00", "2025-10-26T02:30:00", "None", "garbage", ""]),
    "End": st.sampled_from(["2025-06-01T11:00:00", "Unknown", "2025-10-26T02:45:00", "", "nope"]),
    "Elapsed": st.sampled_from(["01:00:00", "1-00:00:00", "", "x"]),
    "ElapsedRaw": st.sampled_from(["3600", "", "-5", "y"]),
    "AllocTRES": st.sampled_from(["gres/gpu=8", "gres/gpu:h100=4", "cpu=4", "gres/gpu=z", ""]),
}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.fixed_dictionaries(cells), max_size=12))
def test_every_row_is_used_excluded_or_rejected_once(rows):
    table = table_from_rows(rows).replace("", pd.NA)
    result = read_table(slurm.FORMAT, table, BERLIN)
    lines = [*result.usage["source_row"], *result.excluded["line"], *result.rejected["line"]]
    assert sorted(lines) == list(table.index)
    assert (result.usage["gpu_hours"] >= 0).all()
    assert {name: str(dtype) for name, dtype in result.usage.dtypes.items()} == CANONICAL_COLUMNS


def test_a_very_long_time_zone_is_refused_quoting_only_its_start():
    # 100,000 characters: ZoneInfo raises OSError (file name too long); the refusal quotes a short prefix.
    from dashboard.ingest.formats.slurm import _require_timezone

    with pytest.raises(UnreadableFile, match="is not a known time zone name") as refused:
        _require_timezone(ReadOptions(timezone="A" * 100_000))
    assert len(str(refused.value)) < 400
