"""The registry of Retrospective figures (dashboard/retro/registry.py): every name an entry gives resolves (its
page section in dashboard.ui.retro_view, its figure builders in dashboard.figures, its report section in
dashboard.ui.retro_report_view), the page's tabs and the bench's queries follow it, and each entry's queries run on
the bundled FOCUS sample."""

import importlib
import inspect
from pathlib import Path

import pytest

from dashboard.ingest import import_path
from dashboard.query import tables
from dashboard.retro import registry, tabs
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
def sample_view():
    return whole(tables.table_of(import_path(SAMPLE)[0]))


@pytest.mark.parametrize("entry", registry.FIGURES, ids=lambda entry: entry.name)
def test_each_entry_s_queries_run_on_the_bundled_bill(entry, sample_view):
    assert entry.query(sample_view) is not None
