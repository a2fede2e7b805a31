"""AppTest: the Retrospective opens a workspace dataset by name, shows its size and date range, and draws the tiles
of the same data uploaded; a large local file is imported into the workspace from the page; downloads are capped."""

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from app_fixtures import APP, TIMEOUT_S
from streamlit.testing.v1 import AppTest

from bench.ingest_bench import write_focus_csv
from dashboard import settings
from dashboard.ui import workspace_view
from dashboard.workspace import datasets
from dashboard.workspace.imports import import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
NONE = "(none)"
TIME_COLUMNS = {"focus_sample.csv": ("ChargePeriodStart", "ChargePeriodEnd"),
                "gcp_sample.csv": ("usage_start_time", "usage_end_time")}


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "workspace"
    monkeypatch.setenv(settings.WORKSPACE_DIR, str(folder))
    return folder


def _open(app, url):
    at = app.run()
    at.switch_page("app_pages/retro.py")
    for name, value in url.items():
        at.query_params[name] = value
    return at.run()


def _tiles(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def _unescaped(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.parametrize("name", ["focus_sample.csv", "gcp_sample.csv"])
def test_a_dataset_shows_its_size_and_range_and_the_tiles_of_the_same_upload(app, workspace, name):
    import_to_workspace(SAMPLES / name, "q2")
    at = _open(app, {"retro.dataset": "q2", "retro.runs": NONE})
    assert not at.exception and not at.error, [e.value for e in at.error]
    raw = pd.read_csv(SAMPLES / name, dtype=str)
    start_column, end_column = TIME_COLUMNS[name]
    first = pd.to_datetime(raw[start_column], utc=True).min().date().isoformat()
    last = pd.to_datetime(raw[end_column], utc=True).max().date().isoformat()
    line = next(_unescaped(c.value) for c in at.caption if c.value.startswith("Workspace dataset"))
    gigabytes = sum(p.stat().st_size for p in (workspace / "q2").rglob("*.parquet") if "usage" in p.parts) / 1e9
    assert f"{len(raw):,} rows" in line  # every sample row is used
    assert f"{gigabytes:.2f} GB" in line
    assert f"{first} to {last}" in line
    assert f"from {name}" in line
    from_dataset = _tiles(at)

    fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    uploaded = _open(fresh, {"retro.billing": NONE, "retro.runs": NONE})
    uploaded.file_uploader(key="retro.billing_upload").set_value((name, (SAMPLES / name).read_bytes(), "text/csv"))
    uploaded.run()
    assert not uploaded.exception
    assert not any(c.value.startswith("Workspace dataset") for c in uploaded.caption)
    assert from_dataset == _tiles(uploaded)
    assert from_dataset["Rows"] == f"{len(raw):,}"


def test_import_to_workspace_from_the_page(app, workspace, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLES / "focus_sample.csv", data / "quarter.csv")
    monkeypatch.setenv(settings.DATA_DIR, str(data))
    at = _open(app, {"retro.runs": NONE})
    at.text_input(key="retro.billing_path").set_value("quarter.csv").run()
    at.text_input(key="retro.workspace.name").set_value("from-page").run()
    at.button(key="retro.workspace.import").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert datasets.names() == ["from-page"]
    assert datasets.metadata("from-page").rows == 242
    assert at.selectbox(key="retro.dataset").value == "from-page"
    assert any(c.value.startswith("Workspace dataset") for c in at.caption)
    assert _tiles(at)["Rows"] == "242"


@pytest.mark.parametrize("bad", ["../outside", "a/b", ".hidden"])
def test_a_bad_dataset_name_is_a_message(app, workspace, tmp_path, monkeypatch, bad):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLES / "focus_sample.csv", data / "quarter.csv")
    monkeypatch.setenv(settings.DATA_DIR, str(data))
    at = _open(app, {"retro.runs": NONE})
    at.text_input(key="retro.billing_path").set_value("quarter.csv").run()
    at.text_input(key="retro.workspace.name").set_value(bad).run()
    at.button(key="retro.workspace.import").click().run()
    assert not at.exception
    assert any("is not a dataset name" in _unescaped(e.value) for e in at.error)
    assert not workspace.exists() or not any(workspace.iterdir())


def test_a_view_above_the_download_cap_says_so(app, workspace, tmp_path, monkeypatch):
    path = tmp_path / "focus_1500.csv"
    write_focus_csv(path, rows=1_500)
    import_to_workspace(path, "big")
    monkeypatch.setenv(settings.DOWNLOAD_MAX_ROWS, "1000")
    at = _open(app, {"retro.dataset": "big", "retro.runs": NONE})
    assert not at.exception
    note = next(_unescaped(c.value) for c in at.caption if "download holds" in c.value)
    assert "This view has 1,500 rows; the download holds the first 1,000 (PLANNER_DOWNLOAD_MAX_ROWS)" in note
    assert "python -m dashboard workspace export" in note


def test_the_download_is_written_in_chunks_and_capped(monkeypatch):
    frame = pd.DataFrame({"team": ["=cmd", "b", "c", "d", "e"], "cost": [1.5, -2.0, 3.0, 4.0, 5.0]})
    monkeypatch.setattr(workspace_view, "CSV_CHUNK_ROWS", 2)
    text = workspace_view._csv_file(frame, 4)().read().decode("utf-8")
    assert text.splitlines() == ["team,cost", "'=cmd,1.5", "b,-2.0", "c,3.0", "d,4.0"]
