"""Hostile files through the CLI and the import layer: a one-line refusal (exit 2) within bounds, never a traceback.

Items 1, 2, 5 and 14 of issue 12. The CLI runs in a child process under a 1 GiB address-space limit
(`resource.setrlimit`), so a file that would inflate or read without bound ends in MemoryError there, and the
test sees whether the CLI turned that into its one-line message; the child's timeout catches a read that blocks.
"""

import gzip
import io
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dashboard.ingest import import_bytes, import_path
from dashboard.ingest.bounded import LimitExceeded, read_regular_file
from dashboard.ingest.decode import decode
from dashboard.ingest.schema import UnreadableFile

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 1 << 30
TIMEOUT_S = 60


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def ingest(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m dashboard ingest ARGS` in a child limited to 1 GiB of address space."""
    return subprocess.run([sys.executable, "-m", "dashboard", "ingest", *args], capture_output=True, text=True,
                          cwd=ROOT, preexec_fn=_capped, timeout=TIMEOUT_S, env=env)


def assert_one_line_refusal(done: subprocess.CompletedProcess, *phrases: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    for phrase in phrases:
        assert phrase in lines[0]


def _env(**values: str) -> dict:
    import os

    return {**os.environ, **values}


# (corpus file, extra environment, phrases the one-line refusal must contain)
REFUSALS = [
    ("bomb.csv.gz", {}, ("bomb.csv.gz", "memory")),  # 4 GiB of zeros: the 1 GiB cap is hit before the ceiling
    ("nested_bomb.csv.gz.gz", {}, ("nested_bomb.csv.gz.gz", "memory")),
    ("bomb.csv.gz", {"PLANNER_MAX_IMPORT_MB": "200"}, ("inflates to more than 200 MB", "PLANNER_MAX_IMPORT_MB")),
    ("nested_bomb.csv.gz.gz", {"PLANNER_MAX_IMPORT_MB": "200"}, ("inflates to more than 200 MB",)),
    ("triple.csv.gz.gz.gz", {}, ("more than 2 archive layers", "PLANNER_MAX_ARCHIVE_DEPTH")),
    ("sparse.csv", {}, ("more than 2,000 MB", "8,000 MB")),
    ("fifo.csv", {}, ("not a regular file",)),
    ("many_columns.csv", {}, ("100,000 columns", "PLANNER_MAX_COLUMNS")),
]


@pytest.mark.parametrize(("name", "env", "phrases"), REFUSALS, ids=[f"{r[0]}-{'+'.join(r[1])}" for r in REFUSALS])
def test_cli_refuses_hostile_file_in_one_line(corpus, name, env, phrases):
    assert_one_line_refusal(ingest(str(corpus[name]), env=_env(**env)), *phrases)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_are_never_read(device):
    with pytest.raises(LimitExceeded, match="not a regular file"):
        read_regular_file(Path(device))
    assert_one_line_refusal(ingest(device, "--format", "generic", "--map", "period_start=a"), "not a regular file")


def test_fifo_is_refused_without_blocking(corpus):
    with pytest.raises(LimitExceeded, match="not a regular file"):
        read_regular_file(corpus["fifo.csv"])  # blocks for ever if the FIFO is opened for a blocking read


def test_zip_bomb_is_refused_from_its_declared_size(monkeypatch):
    monkeypatch.setenv("PLANNER_MAX_IMPORT_MB", "1")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bill.csv", b"a,b\n" + b"1,2\n" * 500_000)  # 2 MB inflated
    with pytest.raises(LimitExceeded, match="inflates to more than 1 MB"):
        decode(buffer.getvalue(), "bill.zip")


def test_archives_within_bounds_still_import(data_dir):
    raw = (data_dir / "focus_small.csv").read_bytes()
    plain, _ = import_bytes(raw)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("focus_small.csv.gz", gzip.compress(raw))
    for data in (gzip.compress(raw), gzip.compress(raw[:400]) + gzip.compress(raw[400:]), buffer.getvalue()):
        usage, _ = import_bytes(data, filename="focus_small.csv.gz")
        assert usage["cost"].sum() == pytest.approx(plain["cost"].sum())


def test_truncated_gzip_keeps_its_message(data_dir):
    data = gzip.compress((data_dir / "focus_small.csv").read_bytes())
    with pytest.raises(UnreadableFile, match="gzip archive that cannot be decompressed"):
        decode(data[:-20], "focus_small.csv.gz")


def test_wide_focus_header_imports_whole(corpus, data_dir):
    """2,600 tag columns make a 90 KB header: every column is read, the rows are those of focus_small.csv."""
    usage, report = import_path(corpus["wide_focus.csv"])
    small, _ = import_path(data_dir / "focus_small.csv")
    assert report.rows_read == len(small)
    assert usage["cost"].sum() == pytest.approx(small["cost"].sum())
    assert len(decode(corpus["wide_focus.csv"].read_bytes()).table.columns) == 16 + 2_600


def test_column_ceiling_is_a_setting(monkeypatch):
    monkeypatch.setenv("PLANNER_MAX_COLUMNS", "10")
    with pytest.raises(LimitExceeded, match="11 columns, more than the 10"):
        decode((",".join("abcdefghijk") + "\n" + "1," * 10 + "1\n").encode())


def test_decimal_comma_on_dot_decimal_file_is_refused(corpus):
    assert_one_line_refusal(ingest(str(corpus["dot_decimal_focus.csv"]), "--decimal-comma"),
                            "--decimal-comma", "decimal points")


def test_decimal_comma_on_decimal_comma_file_still_reads(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("ChargePeriodStart;ChargePeriodEnd;BilledCost;EffectiveCost;BillingCurrency;ConsumedQuantity\n"
                    "2025-06-03T10:00:00Z;2025-06-03T11:00:00Z;1.234,5;1.234,5;EUR;1,5\n"
                    "2025-06-03T11:00:00Z;2025-06-03T12:00:00Z;0,25;0,25;EUR;2\n")
    done = ingest(str(path), "--decimal-comma", "--json")
    assert done.returncode == 0, done.stderr
    assert '"cost_total": 1234.75' in done.stdout  # 1234.5 + 0.25


def test_map_without_generic_format_is_refused(corpus):
    assert_one_line_refusal(ingest(str(corpus["dot_decimal_focus.csv"]), "--map", "team=x"),
                            "--map", "--format generic")


def test_a_parquet_part_linking_out_of_its_folder_is_refused(tmp_path, data_dir):
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    table = pa_csv.read_csv(data_dir / "focus_small.csv")
    parts = tmp_path / "parts"
    parts.mkdir()
    pq.write_table(table, parts / "part-0.parquet")
    pq.write_table(table, tmp_path / "elsewhere.parquet")
    assert import_path(parts)[1].rows_read == 8
    (parts / "part-1.parquet").symlink_to(tmp_path / "elsewhere.parquet")
    with pytest.raises(LimitExceeded, match="links to a file outside"):
        import_path(parts)
