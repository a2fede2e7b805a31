"""Calibration reads a workspace dataset where it lies: the measured inputs from the bundled bill and W&B runs as
month-partitioned Parquet datasets equal those of the same files imported in memory."""

import os
from pathlib import Path

import pytest

from dashboard import settings
from dashboard.ingest import import_path
from dashboard.ingest.schema import ReadOptions
from dashboard.query.engine import connect
from dashboard.query.tables import usage_table
from dashboard.retro.calibrate import calibrate
from dashboard.workspace import datasets
from dashboard.workspace.imports import import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
FILES = {"bill": "focus_sample.csv", "runs": "wandb_sample.csv"}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workspace")
    previous = os.environ.get(settings.WORKSPACE_DIR)
    os.environ[settings.WORKSPACE_DIR] = str(folder)
    backend = connect("duckdb")
    opened, frames = {}, {}
    for side, name in FILES.items():
        import_to_workspace(SAMPLES / name, side, batch_rows=100, stream_min_bytes=0)
        opened[side] = usage_table(backend, datasets.open_table(backend, side))
        frames[side] = import_path(SAMPLES / name, options=ReadOptions(timezone="UTC"))[0]
    yield opened, frames
    if previous is None:
        os.environ.pop(settings.WORKSPACE_DIR, None)
    else:
        os.environ[settings.WORKSPACE_DIR] = previous


def test_a_dataset_calibrates_as_its_file_does(both):
    opened, frames = both
    from_datasets = calibrate(opened["bill"], opened["runs"], model_params=13e9, gpu_type="H100")
    from_files = calibrate(frames["bill"], frames["runs"], model_params=13e9, gpu_type="H100")
    assert from_datasets.keys() == from_files.keys()
    for key, measured in from_files.items():
        other = from_datasets[key]
        for field in ("value", "low", "high", "exposure"):
            mine, theirs = getattr(other, field), getattr(measured, field)
            assert (mine is None) == (theirs is None), (key, field)
            if mine is not None:
                assert mine == pytest.approx(theirs, rel=1e-9), (key, field)
        assert (other.count, other.thin, other.caveat) == (measured.count, measured.thin, measured.caveat), key
    assert from_files["mfu"].value is not None and from_files["price_on_demand_per_gpu_hour"].value is not None
