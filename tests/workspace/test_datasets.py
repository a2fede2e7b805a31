"""Workspace datasets: names that cannot leave the workspace folder, metadata that round-trips, imports that
write the same rows as the in-memory import, and a failed import that leaves nothing behind."""

from pathlib import Path

import ibis
import pandas as pd
import pytest
from dataset_frame import dataset_frame

from dashboard.ingest import import_path
from dashboard.ingest.schema import UnreadableFile
from dashboard.workspace import datasets
from dashboard.workspace.datasets import DatasetError, Metadata
from dashboard.workspace.imports import import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


def _visible(workspace: Path) -> list[str]:
    return sorted(p.name for p in workspace.iterdir() if not p.name.startswith("."))


def _tree(workspace: Path) -> list[str]:
    """Every path under the workspace folder (links not followed), with each file's size."""
    return sorted(f"{p.relative_to(workspace)}:{p.lstat().st_size if p.is_file() else ''}"
                  for p in workspace.rglob("*"))


@pytest.mark.parametrize("name", ["q2-2025_focus", "a", "A.b-c_1", "9" * 64, "focus.2025"])
def test_allowed_names(name):
    assert datasets.checked_name(name) == name


@pytest.mark.parametrize("name", [
    "", "..", "../etc", "a/b", "a\\b", "/tmp/x", ".hidden", "-flag", "_x", "a..b", "a b", " a", "naïve",
    "x" * 65, "a\x00b", "a\nb", "~", "*", "a:b",
])
def test_refused_names(name, workspace):
    with pytest.raises(DatasetError, match="is not a dataset name"):
        datasets.checked_name(name)
    with pytest.raises(DatasetError):
        datasets.folder(name)
    with pytest.raises(DatasetError):
        import_to_workspace(SAMPLES / "focus_sample.csv", name)
    assert not workspace.exists() or not any(workspace.iterdir())


def test_metadata_round_trip(workspace):
    info = import_to_workspace(SAMPLES / "focus_sample.csv", "focus-q2")
    assert datasets.metadata("focus-q2") == info
    assert Metadata.from_json(info.to_json()) == info
    usage, report = import_path(SAMPLES / "focus_sample.csv")
    assert info.rows == len(usage) == 242
    assert info.source == "focus_sample.csv"
    assert info.source_bytes == (SAMPLES / "focus_sample.csv").stat().st_size
    assert info.start == usage["period_start"].min().isoformat()
    assert info.end == usage["period_end"].max().isoformat()
    assert info.months == sorted(usage["period_start"].dt.strftime("%Y-%m").unique())
    assert info.bytes == sum(p.stat().st_size for p in (workspace / "focus-q2" / "usage").rglob("*.parquet"))
    assert info.streamed is False  # a small file goes through the in-memory import
    stored = datasets.report("focus-q2")
    assert (stored.format, stored.rows_read, stored.rows_used, stored.warnings) == (
        report.format, report.rows_read, report.rows_used, report.warnings)
    assert datasets.names() == ["focus-q2"]


def test_excluded_rows_are_kept_with_the_dataset(workspace):
    import_to_workspace(SAMPLES / "aws_cur_sample.csv", "cur")
    _, report = import_path(SAMPLES / "aws_cur_sample.csv")
    stored = datasets.report("cur")
    assert stored.rows_excluded == report.rows_excluded == 58
    pd.testing.assert_frame_equal(stored.excluded, report.excluded)


@pytest.mark.parametrize("stream_min_bytes", [0, 10**12])  # streamed, in memory
def test_the_dataset_holds_the_imported_rows(workspace, stream_min_bytes):
    info = import_to_workspace(SAMPLES / "gcp_sample.csv", "gcp", batch_rows=100, stream_min_bytes=stream_min_bytes)
    assert info.streamed is (stream_min_bytes == 0)
    usage, _ = import_path(SAMPLES / "gcp_sample.csv")
    frame = dataset_frame("gcp").sort_values("source_row", ignore_index=True)
    pd.testing.assert_frame_equal(frame, usage)
    table = datasets.open_table(ibis.duckdb.connect(), "gcp")
    assert "month" not in table.columns
    sums = table.aggregate(gpu_hours=table.gpu_hours.sum(), cost=table.cost.sum(), rows=table.count()).execute()
    assert sums["rows"][0] == len(usage)
    assert sums["gpu_hours"][0] == pytest.approx(usage["gpu_hours"].sum(), rel=1e-12)
    assert sums["cost"][0] == pytest.approx(usage["cost"].sum(), rel=1e-12)


def test_a_taken_name_is_refused_unless_replaced(workspace):
    import_to_workspace(SAMPLES / "focus_sample.csv", "q")
    with pytest.raises(DatasetError, match="already has a dataset q"):
        import_to_workspace(SAMPLES / "gcp_sample.csv", "q")
    info = import_to_workspace(SAMPLES / "gcp_sample.csv", "q", replace=True)
    assert info.source == "gcp_sample.csv"
    assert _visible(workspace) == ["q"]
    live = datasets.current("q")
    assert live.parent == workspace / datasets.VERSIONS and live.name == info.build
    replaced = [p for p in (workspace / datasets.VERSIONS).iterdir() if p != live]
    assert len(replaced) == 1 and (replaced[0] / datasets.SUPERSEDED).exists()  # kept for readers, then swept


def test_a_failed_import_leaves_the_workspace_as_it_was(workspace, tmp_path):
    import_to_workspace(SAMPLES / "focus_sample.csv", "kept")
    bad = tmp_path / "bad.csv"
    bad.write_text("just,some,columns\n1,2,3\n", encoding="utf-8")
    before = _tree(workspace)
    with pytest.raises(UnreadableFile):
        import_to_workspace(bad, "kept", replace=True)
    assert _visible(workspace) == ["kept"]
    assert _tree(workspace) == before
    assert datasets.metadata("kept").source == "focus_sample.csv"


def test_a_file_the_stream_cannot_read_falls_back_to_the_in_memory_import(workspace, tmp_path):
    text = (SAMPLES / "focus_sample.csv").read_text(encoding="utf-8")
    header, first, rest = text.split("\n", 2)
    path = tmp_path / "blank_line.csv"
    path.write_text(f"{header}\n{first}\n\n{rest}", encoding="utf-8")  # a blank line 3 shifts the later lines
    info = import_to_workspace(path, "blank", stream_min_bytes=0, batch_rows=100)
    assert info.streamed is False
    usage, _ = import_path(path)
    assert usage["source_row"].tolist()[:2] == [2, 4]
    pd.testing.assert_frame_equal(dataset_frame("blank").sort_values("source_row", ignore_index=True),
                                  usage)


def test_damaged_or_missing_metadata_is_a_message(workspace):
    import_to_workspace(SAMPLES / "focus_sample.csv", "d")
    (workspace / "d" / "dataset.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(DatasetError, match="cannot be read"):
        datasets.metadata("d")
    with pytest.raises(DatasetError, match="There is no dataset nope"):
        datasets.metadata("nope")
