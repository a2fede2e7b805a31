"""A workspace dataset as a source of the query layer: the Retrospective's figures from the dataset opened as an
Ibis table (DuckDB reading its month-partitioned Parquet) equal those of the same file imported in memory."""

import dataclasses
import os
from pathlib import Path

import pandas as pd
import pytest

from dashboard import settings
from dashboard.ingest import import_path
from dashboard.query.engine import connect
from dashboard.query.tables import usage_table
from dashboard.retro import attribution, filters, mix, spend, units
from dashboard.workspace import datasets
from dashboard.workspace.imports import import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
FIGURES = {
    "filter options": lambda usage: filters.filter_options(usage),
    "spend by day and team": lambda usage: spend.spend_over_time(usage, freq="D", by="team"),
    "spend by week and pricing": lambda usage: spend.spend_over_time(usage, freq="W", by="pricing"),
    "daily cost": lambda usage: spend.daily_total(usage, metric="cost"),
    "attribution": lambda usage: attribution.attribution_table(usage),
    "purchase mix": lambda usage: mix.mix_shares(usage),
    "unit costs": lambda usage: dataclasses.asdict(units.unit_costs(usage, active_params=7e10)),
}


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workspace")
    previous = os.environ.get(settings.WORKSPACE_DIR)
    os.environ[settings.WORKSPACE_DIR] = str(folder)
    backend = connect("duckdb")
    tables = {}
    for name in ("focus_sample.csv", "gcp_sample.csv"):
        dataset = name.split("_")[0]
        import_to_workspace(SAMPLES / name, dataset, batch_rows=100, stream_min_bytes=0)  # streamed, 3+ batches
        tables[name] = usage_table(backend, datasets.open_table(backend, dataset))
    yield tables
    if previous is None:
        os.environ.pop(settings.WORKSPACE_DIR, None)
    else:
        os.environ[settings.WORKSPACE_DIR] = previous


def _same(left, right) -> None:
    if isinstance(left, pd.DataFrame):
        pd.testing.assert_frame_equal(left.reset_index(drop=True), right.reset_index(drop=True), check_dtype=False)
    elif isinstance(left, pd.Series):
        pd.testing.assert_series_equal(left, right, check_dtype=False)
    elif isinstance(left, dict):
        assert left.keys() == right.keys()
        for key in left:
            _same(left[key], right[key])
    elif isinstance(left, float):
        assert left == pytest.approx(right, rel=1e-9, nan_ok=True)
    else:
        assert left == right


@pytest.mark.parametrize("sample", ["focus_sample.csv", "gcp_sample.csv"])
@pytest.mark.parametrize("figure", list(FIGURES))
def test_a_dataset_gives_the_figures_of_the_in_memory_import(opened, sample, figure):
    usage, _ = import_path(SAMPLES / sample)
    _same(FIGURES[figure](opened[sample]), FIGURES[figure](usage))
