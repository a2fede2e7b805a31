"""Streamed import: batches read through the same descriptions give the in-memory import's rows and accounting,
and its memory stays bounded where the in-memory import's does not (checked under RLIMIT_AS in a child)."""

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from bench.ingest_bench import focus_table, write_focus_csv
from dashboard.ingest import import_path
from dashboard.ingest.schema import ReadOptions
from dashboard.ingest.stream import NotStreamable, Totals, stream_import

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"


def _streamed(path: Path, batch_rows: int, **kwargs):
    parts: list[pd.DataFrame] = []
    report = stream_import(path, parts.append, batch_rows=batch_rows, **kwargs)
    return (pd.concat(parts, ignore_index=True) if parts else None), report, len(parts)


def _assert_same(path: Path, batch_rows: int, min_batches: int) -> None:
    usage, report = import_path(path)
    streamed, streamed_report, batches = _streamed(path, batch_rows)
    assert batches >= min_batches
    pd.testing.assert_frame_equal(streamed, usage)
    for attr in ("format", "rows_read", "rows_used", "rows_excluded", "rows_rejected"):
        assert getattr(streamed_report, attr) == getattr(report, attr), attr
    pd.testing.assert_frame_equal(streamed_report.rejected, report.rejected)
    pd.testing.assert_frame_equal(streamed_report.excluded, report.excluded)


# name, rows per batch, batches at least: every sample is read in several batches
@pytest.mark.parametrize(("name", "batch_rows", "min_batches"), [
    ("aws_cur_sample.csv", 50, 3),  # SavingsPlanNegation rows excluded by rule
    ("aws_cur2_sample.csv", 50, 3),
    ("azure_sample.csv", 40, 3),
    ("focus_sample.csv", 40, 3),
    ("gcp_sample.csv", 60, 3),
])
def test_samples_stream_to_the_in_memory_import(name, batch_rows, min_batches):
    _assert_same(SAMPLES / name, batch_rows, min_batches)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """30,000 FOCUS rows, every 997th with an unreadable start time (31 rows rejected: 0, 997, …, 29910)."""
    path = tmp_path_factory.mktemp("stream") / "focus_30k.csv"
    write_focus_csv(path, rows=30_000, unreadable_every=997)
    return path


def test_a_file_larger_than_the_batch_keeps_rejected_rows_and_totals(generated):
    usage, report = import_path(generated)
    assert report.rows_rejected == 31  # ceil(30000 / 997)
    assert report.rejected["line"].tolist()[:3] == [2, 999, 1996]  # row i is line i + 2
    _assert_same(generated, 4_000, 7)


def test_gzip_and_parquet_stream_too(generated, tmp_path):
    packed = tmp_path / "focus_30k.csv.gz"
    packed.write_bytes(gzip.compress(generated.read_bytes(), compresslevel=1))
    _assert_same(packed, 5_000, 4)
    parquet = tmp_path / "focus_30k.parquet"
    pq.write_table(pa_csv.read_csv(generated), parquet, row_group_size=3_000)
    _assert_same(parquet, 3_000, 10)
    folder = tmp_path / "parts"
    folder.mkdir()
    table = pq.read_table(parquet)
    for i, start in enumerate(range(0, 30_000, 12_000)):
        pq.write_table(table.slice(start, 12_000), folder / f"part-{i}.parquet")
    _assert_same(folder, 5_000, 5)


def test_a_folder_of_parts_holds_one_batch_not_every_part_read(tmp_path):
    """A pre-buffered Parquet reader keeps each column chunk it read until its file is closed; with a folder's
    parts open together, Arrow's memory grew by the parts' size (a 10⁸-row quarter was refused as "decodes to
    more than its pages say"). Between the first and the last batch it must grow by far less than the parts."""
    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(4):
        pq.write_table(focus_table(150_000, seed=i), folder / f"part-{i}.parquet", row_group_size=25_000)
    parts_bytes = sum(p.stat().st_size for p in folder.iterdir())
    grown: list[int] = []
    report = stream_import(folder, lambda usage: grown.append(pa.total_allocated_bytes()), batch_rows=25_000)
    assert report.rows_read == 600_000 and len(grown) == 24
    assert grown[-1] - grown[0] < parts_bytes / 2


def test_notes_that_differ_between_batches_are_kept_per_batch_and_add_up():
    """The FOCUS sample's unused-commitment note, whole and in two batches: the amounts add up to the whole."""
    _, report = import_path(SAMPLES / "focus_sample.csv")
    _, streamed, _ = _streamed(SAMPLES / "focus_sample.csv", 135)
    amount = re.compile(r"is \$([\d.]+)(k?) of cost")  # three significant figures: $73.2k

    def dollars(text):
        found = amount.search(text)
        return float(found.group(1)) * (1e3 if found.group(2) else 1.0)

    whole = [dollars(w) for w in report.warnings if amount.search(w)]
    parts = [w for w in streamed.warnings if amount.search(w)]
    assert [p.split(":")[0] for p in parts] == ["Lines 2–136", "Lines 137–243"]
    # Each of the three figures is rounded to three significant figures (half a unit in the third: 0.5 %).
    assert sum(dollars(p) for p in parts) == pytest.approx(whole[0], rel=0.01)


def test_a_note_every_batch_gives_alike_is_kept_once(tmp_path):
    """A semicolon file with decimal commas: the file's notes once each, as the in-memory import gives them."""
    source = (SAMPLES / "focus_sample.csv").read_text(encoding="utf-8")
    frame = pd.read_csv(SAMPLES / "focus_sample.csv", dtype=str, keep_default_na=False)
    for column in ("EffectiveCost", "BilledCost", "ListCost", "ConsumedQuantity"):
        frame[column] = [f"{float(cell):.4f}".replace(".", ",") if cell else "" for cell in frame[column]]
    path = tmp_path / "focus_semicolon.csv"
    frame.to_csv(path, sep=";", index=False)
    assert source.count("\n") == path.read_text(encoding="utf-8").count("\n")
    _, report = import_path(path)
    _, streamed, batches = _streamed(path, 100)
    assert batches == 3
    for note in ("Numbers use decimal commas (semicolon-delimited file with values like '1,5'); they were read as 1.5.",
                 "Columns are separated by semicolons."):
        assert note in report.warnings
        assert streamed.warnings.count(note) == 1
    _assert_same(path, 100, 3)


@pytest.mark.parametrize(("name", "content", "reason"), [
    ("blank.csv", "a,b\n1,2\n\n3,4\n", "blank lines"),
    ("multiline.csv", 'a,b\n"x\ny",2\n3,4\n', "blank lines or cells with line breaks"),
    ("cp1252.csv", "a,b\ncaf\xe9,2\n", "not UTF-8"),
])
def test_files_that_need_the_careful_reader_are_not_streamed(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content.encode("cp1252"))
    with pytest.raises(NotStreamable, match=reason):
        stream_import(path, lambda usage: None, format="generic", batch_rows=1_000,
                      options=ReadOptions(mapping={"period_start": "a", "gpu_hours": "b"}))


def test_run_exports_are_read_whole():
    with pytest.raises(NotStreamable, match="read as a whole"):
        stream_import(SAMPLES / "wandb_sample.csv", lambda usage: None, batch_rows=1_000)


# The child imports everything, then allows itself BUDGET_MB of address space beyond what it has mapped, and imports.
_CHILD = """
import json, re, resource, sys
from pathlib import Path
from dashboard.ingest import import_path
from dashboard.ingest.stream import stream_import
mode, path, budget_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
if budget_mb:
    mapped = int(re.search(r"VmSize:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mapped + budget_mb * 1_000_000, resource.RLIM_INFINITY))
totals = {"gpu_hours": 0.0, "cost": 0.0, "rows": 0}
def add(usage):
    totals["gpu_hours"] += float(usage["gpu_hours"].sum())
    totals["cost"] += float(usage["cost"].sum())
    totals["rows"] += len(usage)
if mode == "stream":
    report = stream_import(path, add, batch_rows=20_000)
else:
    usage, report = import_path(path)
    add(usage)
print(json.dumps({**totals, "read": report.rows_read, "used": report.rows_used, "rejected": report.rows_rejected,
                  "rejected_lines": report.rejected["line"].tolist()}))
"""
MEMORY_ROWS = 400_000  # a 150 MB CSV; the in-memory import needs about 500 MB beyond the child's start
BUDGET_MB = 250  # the streamed import (20,000-row batches) needs about 160 MB


def _child(mode: str, path: Path, budget_mb: int) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "MALLOC_ARENA_MAX": "2", "ARROW_DEFAULT_MEMORY_POOL": "system",
           "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", _CHILD, mode, str(path), str(budget_mb)], capture_output=True,
                          text=True, env=env, timeout=600, check=False)


def test_streamed_import_fits_a_memory_limit_the_in_memory_import_exceeds(tmp_path):
    path = tmp_path / "focus_400k.csv"
    write_focus_csv(path, rows=MEMORY_ROWS, unreadable_every=10_007)
    assert path.stat().st_size > 140_000_000
    unlimited = _child("memory", path, 0)
    assert unlimited.returncode == 0, unlimited.stderr[-500:]
    expected = json.loads(unlimited.stdout)
    assert expected["rejected"] == 40  # ceil(400000 / 10007)
    limited_memory = _child("memory", path, BUDGET_MB)
    assert limited_memory.returncode != 0, "the limit must be one the in-memory import exceeds"
    assert re.search(r"(?i)memory|bad_alloc|resource temporarily unavailable", limited_memory.stderr)
    limited_stream = _child("stream", path, BUDGET_MB)
    assert limited_stream.returncode == 0, limited_stream.stderr[-500:]
    streamed = json.loads(limited_stream.stdout)
    assert streamed["read"] == expected["read"] == MEMORY_ROWS
    assert streamed["used"] == expected["used"] == streamed["rows"] == MEMORY_ROWS - 40
    assert streamed["rejected_lines"] == expected["rejected_lines"]
    assert streamed["gpu_hours"] == pytest.approx(expected["gpu_hours"], rel=1e-12)
    assert streamed["cost"] == pytest.approx(expected["cost"], rel=1e-12)


def _canonical(rows: list[tuple]) -> pd.DataFrame:
    """Canonical rows of (team, pricing, start hour, end hour, GPU-hours, cost) in USD, hours of 2025-06-01 UTC."""
    day = pd.Timestamp("2025-06-01", tz="UTC")
    team, pricing, start, end, hours, cost = zip(*rows, strict=True)
    return pd.DataFrame({
        "period_start": pd.Series([day + pd.Timedelta(hours=h) for h in start], dtype="datetime64[ns, UTC]"),
        "period_end": pd.Series([day + pd.Timedelta(hours=h) for h in end], dtype="datetime64[ns, UTC]"),
        "gpu_hours": pd.Series(hours, dtype="float64"), "cost": pd.Series(cost, dtype="float64"),
        "currency": pd.Series(["USD"] * len(rows), dtype="string"), "pricing": pd.Series(pricing, dtype="string"),
        "team": pd.Series(team, dtype="string"),
    })


def test_totals_keep_the_sums_and_bounds_of_each_team_pricing_and_currency():
    totals = Totals()
    totals.add(_canonical([("a", "on_demand", 0, 1, 8.0, 10.0), (None, "spot", 2, 3, 4.0, 2.0)]))
    totals.add(_canonical([("a", "on_demand", -1, 0, 8.0, 10.5), (None, "spot", 5, 6, 1.0, 0.25),
                           ("a", "spot", 3, 4, 2.0, 1.0)]))
    kept = totals.table.sort_values(["team", "pricing"], ignore_index=True)
    day = pd.Timestamp("2025-06-01", tz="UTC")
    assert kept["team"].tolist() == ["a", "a", pd.NA]
    assert kept["pricing"].tolist() == ["on_demand", "spot", "spot"]
    assert kept["gpu_hours"].tolist() == [16.0, 2.0, 5.0]  # 8 + 8; 2; 4 + 1
    assert kept["cost"].tolist() == [20.5, 1.0, 2.25]  # 10 + 10.5; 1; 2 + 0.25
    assert kept["period_start"].tolist() == [day - pd.Timedelta(hours=1), day + pd.Timedelta(hours=3),
                                             day + pd.Timedelta(hours=2)]
    assert kept["period_end"].tolist() == [day + pd.Timedelta(hours=1), day + pd.Timedelta(hours=4),
                                           day + pd.Timedelta(hours=6)]
    assert kept["currency"].tolist() == ["USD"] * 3
