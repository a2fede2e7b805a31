"""The registry of Retrospective figures (dashboard/retro/registry.py): every name an entry gives resolves (its
page section in dashboard.ui.retro_view, its figure builders in dashboard.figures, its report section in
dashboard.ui.retro_report_view), the page's tabs and the bench's queries follow it, and each entry's queries run on
the bundled FOCUS sample."""

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

from dashboard.ingest import import_path
from dashboard.query import tables
from dashboard.retro import registry, results, tabs
from dashboard.retro.gap import PARTS
from dashboard.retro.view import whole

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "focus_sample.csv"
TABS = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]


def test_the_tabs_are_the_registry_s_entries_in_order():
    assert [entry.tab for entry in registry.FIGURES] == TABS
    assert len({entry.name for entry in registry.FIGURES}) == len(TABS)


def test_the_bench_times_every_entry_s_queries_after_the_tiles():
    assert list(tabs.TAB_QUERIES) == ["Filters and tiles", *TABS]


@pytest.mark.parametrize("entry", registry.FIGURES, ids=lambda entry: entry.name)
def test_every_name_an_entry_gives_resolves(entry):
    from dashboard.ui import retro_report_view, retro_view
    section = getattr(retro_view, entry.page_section)
    assert list(inspect.signature(section).parameters) == ["view"]  # a section takes the run's view only
    for name in entry.figures:
        module, builder = name.split(".")
        assert callable(getattr(importlib.import_module(f"dashboard.figures.{module}"), builder))
    assert (entry.report_section is not None) is (entry.name in retro_report_view.SECTIONS)


def test_the_report_has_spend_waste_and_plan_vs_actual_in_that_order():
    assert [entry.report_section for entry in registry.report_figures()] == ["Spend", "Waste", "Plan vs actual"]


@pytest.fixture(scope="module")
def sample_frame():
    return import_path(SAMPLE)[0]


@pytest.fixture(scope="module")
def sample_view(sample_frame):
    return whole(tables.table_of(sample_frame))


@pytest.mark.parametrize("entry", registry.FIGURES, ids=lambda entry: entry.name)
def test_each_entry_s_queries_run_on_the_bundled_bill(entry, sample_view):
    assert entry.query(sample_view) is not None


@pytest.mark.parametrize(("entry", "result_type"), [
    (registry.SPEND, results.SpendResult), (registry.ATTRIBUTION, results.AttributionResult),
    (registry.GAP, results.GapResult), (registry.WASTE, results.WasteResult), (registry.LOAD, results.LoadResult),
    (registry.MIX, results.MixResult), (registry.UNITS, results.UnitsResult),
], ids=lambda value: getattr(value, "name", ""))
def test_the_runner_gives_each_entry_s_one_frozen_typed_result(entry, result_type, sample_view):
    result = tabs.run(entry, sample_view)
    assert type(result) is result_type
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.__setattr__(dataclasses.fields(result)[0].name, None)


def test_the_waste_result_s_spend_is_the_bill_s_cost(sample_frame, sample_view):
    assert tabs.run(registry.WASTE, sample_view).total_cost == pytest.approx(float(sample_frame["cost"].sum()))


def test_plan_vs_actual_compares_the_run_with_the_most_gpu_hours_unless_told(sample_frame, sample_view):
    hours = sample_frame.dropna(subset=["run_id"]).groupby("run_id")["gpu_hours"].sum()
    result = tabs.run(registry.GAP, sample_view)
    assert result.main_runs == result.suggestion == (hours.idxmax(),)
    assert result.run_ids == tuple(sorted(hours.index))
    chosen = dataclasses.replace(sample_view, choices=dataclasses.replace(sample_view.choices,
                                                                          main_runs=(hours.index[0],)))
    assert tabs.run(registry.GAP, chosen).main_runs == (hours.index[0],)
    assert result.parts is not None and list(result.parts["part"]) == list(PARTS)
