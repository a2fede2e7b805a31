"""`python -m dashboard ingest`: JSON summary keys, exit status 2 with one line on bad input."""

import json
import subprocess
import sys

import pytest

KEYS = [
    "format",
    "rows_read",
    "rows_used",
    "rows_excluded",
    "rows_rejected",
    "rejected_sample",
    "excluded_by_rule",
    "gpu_hours_total",
    "cost_total",
    "currency",
    "period_start",
    "period_end",
    "spot_share_of_gpu_hours",
    "by_team",
    "warnings",
]


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "dashboard", "ingest", *args], capture_output=True, text=True
    )


def test_json_summary(data_dir):
    done = run(str(data_dir / "focus_small.csv"), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert list(summary) == KEYS
    assert summary["cost_total"] == pytest.approx(233.87)
    assert summary["period_start"] == "2025-06-01T00:00:00Z"
    assert summary["by_team"]["eval"] == {"gpu_hours": 8.0, "cost": 11.05}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.csv"], "no such file"),
        (["{data}/aws_cur2.csv", "--format", "nope"], "invalid choice"),
    ],
)
def test_errors_exit_2_one_line(data_dir, args, message):
    done = run(*[a.format(data=data_dir) for a in args])
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


def test_unreadable_file_exit_2(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("Date,Amount\n2025-06-01,3\n")
    done = run(str(path))
    assert done.returncode == 2 and "--format generic" in done.stderr and "Traceback" not in done.stderr


def test_readable_table_labels_and_formats_every_figure(data_dir):
    done = run(str(data_dir / "focus_small.csv"))
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    # 233.87 USD in the app's format, with its label (the JSON keeps 233.87).
    assert rows["cost_total"].split()[1:] == ["$234", "Cost"]
    assert rows["rows_read"].endswith("Rows read")


FOCUS_HEADER = ("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,PricingCategory,SkuPriceDetails,ConsumedQuantity,"
                "ConsumedUnit,BilledCost,EffectiveCost,BillingCurrency,Tags")


def _write_focus(path, rows: int, blank_line_at: int | None = None) -> None:
    """``rows`` one-hour rows of 8 GPUs, then two rows with unreadable start times (lines rows + 2, rows + 3).

    Row i: team "a" costing 2.50 when i is even, else team "b" costing 1.25; spot (Dynamic) when i % 5 == 0;
    it starts at hour i % 24 of 2025-06-01.
    """
    lines = [FOCUS_HEADER]
    for i in range(rows):
        team, cost = ("a", "2.50") if i % 2 == 0 else ("b", "1.25")
        start = f"2025-06-01T{i % 24:02d}:00:00Z"
        end = f"2025-06-01T{i % 24 + 1:02d}:00:00Z" if i % 24 < 23 else "2025-06-02T00:00:00Z"
        lines.append(f'{start},{end},Usage,{"Dynamic" if i % 5 == 0 else "Standard"},"{{""GpuCount"":8}}",1,Hours,'
                     f'{cost},{cost},USD,"{{""team"":""{team}""}}"')
        if i == blank_line_at:
            lines.append("")
    lines += ['not-a-time,2025-06-02T00:00:00Z,Usage,Standard,"{""GpuCount"":8}",1,Hours,1,1,USD,'] * 2
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def streamed_batches(monkeypatch) -> list[int]:
    """Streaming from 0 bytes on, 1,000 rows at a time; the list gets the used rows of each batch summed."""
    from dashboard.ingest.stream import Totals
    from dashboard.workspace import imports

    monkeypatch.setattr(imports, "STREAM_MIN_BYTES", 0)
    monkeypatch.setenv("PLANNER_STREAM_BATCH_ROWS", "1000")
    batches: list[int] = []
    add = Totals.add

    def counted(self, usage):
        batches.append(len(usage))
        add(self, usage)

    monkeypatch.setattr(Totals, "add", counted)
    return batches


def _cli_json(capsys, *args) -> dict:
    from dashboard.cli import main

    assert main(["ingest", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_large_input_is_streamed_and_summed_as_read_whole(tmp_path, request, capsys):
    """Over the streaming threshold (lowered to 0 here) the summary is summed batch by batch, equal to the whole."""
    path = tmp_path / "focus.csv"
    _write_focus(path, 2_500)
    whole = _cli_json(capsys, str(path))
    batches = request.getfixturevalue("streamed_batches")
    streamed = _cli_json(capsys, str(path))
    assert len(batches) >= 2 and sum(batches) == 2_500  # batches of at least 1,000 rows read (in whole blocks)
    # 1,250 rows of each team, 8 GPU-hours each; a: 1,250 × 2.50, b: 1,250 × 1.25; spot: 500 of 2,500 rows.
    assert streamed["by_team"] == {"a": {"gpu_hours": 10_000.0, "cost": 3_125.0},
                                   "b": {"gpu_hours": 10_000.0, "cost": 1_562.5}}
    assert (streamed["rows_read"], streamed["rows_used"], streamed["rows_rejected"]) == (2_502, 2_500, 2)
    assert [item["line"] for item in streamed["rejected_sample"]] == [2_502, 2_503]
    assert (streamed["gpu_hours_total"], streamed["cost_total"]) == (20_000.0, 4_687.5)
    assert streamed["spot_share_of_gpu_hours"] == 0.2
    assert (streamed["period_start"], streamed["period_end"]) == ("2025-06-01T00:00:00Z", "2025-06-02T00:00:00Z")
    assert streamed == whole


def test_a_parquet_folder_is_streamed(tmp_path, streamed_batches, capsys):
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    source = tmp_path / "focus.csv"
    _write_focus(source, 2_500)
    table = pa_csv.read_csv(source)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, start in enumerate(range(0, table.num_rows, 1_200)):
        pq.write_table(table.slice(start, 1_200), folder / f"part-{i}.parquet")
    summary = _cli_json(capsys, str(folder))
    # parts of 1,200, 1,200 and 102 rows, read 1,000 at a time; the last part's two unreadable rows are rejected
    assert streamed_batches == [1_000, 200, 1_000, 200, 100]
    assert (summary["rows_read"], summary["rows_used"], summary["rows_rejected"]) == (2_502, 2_500, 2)
    assert (summary["gpu_hours_total"], summary["cost_total"]) == (20_000.0, 4_687.5)
    assert summary["by_team"] == {"a": {"gpu_hours": 10_000.0, "cost": 3_125.0},
                                  "b": {"gpu_hours": 10_000.0, "cost": 1_562.5}}


def test_large_input_the_batches_cannot_read_is_read_whole(tmp_path, streamed_batches, capsys):
    path = tmp_path / "focus.csv"
    _write_focus(path, 2_500, blank_line_at=10)  # a blank line: only the in-memory import reads it
    summary = _cli_json(capsys, str(path))
    # The streamed reader finds the blank line only at the end (lines and rows do not add up), after its batches:
    # their sums are dropped and the file is read whole, so nothing is counted twice.
    assert sum(streamed_batches) == 2_500
    assert (summary["rows_read"], summary["rows_used"], summary["rows_rejected"]) == (2_502, 2_500, 2)
    assert (summary["gpu_hours_total"], summary["cost_total"]) == (20_000.0, 4_687.5)
    assert [item["line"] for item in summary["rejected_sample"]] == [2_503, 2_504]  # after the blank line 13


@pytest.mark.parametrize("as_folder", [False, True])
def test_input_past_the_import_ceiling_is_refused_from_its_size_before_it_is_read(tmp_path, streamed_batches,
                                                                                monkeypatch, capsys, as_folder):
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    from dashboard.cli import main

    path = tmp_path / "focus.csv"
    _write_focus(path, 10_000)
    if as_folder:  # two parts of 0.5 to 1 MB: the folder's parts count together
        table = pa_csv.read_csv(path)
        path = tmp_path / "parts"
        path.mkdir()
        for i, start in enumerate(range(0, table.num_rows, 5_001)):
            pq.write_table(table.slice(start, 5_001), path / f"part-{i}.parquet", compression="none",
                           use_dictionary=False)
        sizes = [part.stat().st_size for part in path.iterdir()]
        assert all(500_000 < size < 1_000_000 for size in sizes), sizes
    else:
        assert path.stat().st_size > 1_000_000
    monkeypatch.setenv("PLANNER_MAX_IMPORT_MB", "1")
    assert main(["ingest", str(path), "--json"]) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1
    assert "more than 1 MB, the most one import reads (PLANNER_MAX_IMPORT_MB)" in message
    assert streamed_batches == []
