"""Bounded cache wrappers for the Compare page: the comparison table, its charts and the HTML report.

Scenarios travel as a tuple of their JSON texts (hashable); every wrapper validates them again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.core import compare
from dashboard.core.scenario import Scenario, scenario_from_json
from dashboard.core.uncertainty import DEFAULT_DRAWS, DEFAULT_SEED
from dashboard.figures import compare as compare_figures
from dashboard.report.cells import format_delta, format_input, format_output
from dashboard.report.html import build_report
from dashboard.ui.cache import cached_estimate, cached_monte_carlo

DRAWS_AND_SEED = (DEFAULT_DRAWS, DEFAULT_SEED)


def _scenarios(jsons: tuple[str, ...]) -> list[Scenario]:
    return [scenario_from_json(text) for text in jsons]


def _results(jsons: tuple[str, ...]) -> list[dict[str, Any]]:
    return [cached_estimate(text) for text in jsons]


def ranges(jsons: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each scenario's Monte Carlo summary at the report's draws and seed."""
    return [cached_monte_carlo(text, DEFAULT_DRAWS, DEFAULT_SEED).summary() for text in jsons]


@st.cache_data(max_entries=32, show_spinner=False)
def comparison(jsons: tuple[str, ...]) -> pd.DataFrame:
    """The comparison table with P10/P90 rows (see `core.compare.comparison_table`)."""
    return compare.comparison_table(_scenarios(jsons), _results(jsons), ranges(jsons))


@st.cache_data(max_entries=32, show_spinner=False)
def display(jsons: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The comparison table as text (formatted like the report) and which cells differ from the first scenario."""
    table = comparison(jsons)
    columns = compare.scenario_columns(table)
    deltas = [column for column in table.columns if column not in (*compare.FIXED_COLUMNS, *columns)]
    shown = table[["section", "item"]].copy()
    for column in columns:
        shown[column] = [
            (format_input if section == compare.INPUT_SECTION else format_output)(key, value)
            for section, key, value in zip(table["section"], table["key"], table[column], strict=True)
        ]
    for column in deltas:
        shown[column] = [format_delta(section, key, value)
                         for section, key, value in zip(table["section"], table["key"], table[column], strict=True)]
    return shown, compare.highlight_mask(table)[shown.columns]


@st.cache_data(max_entries=32, show_spinner=False)
def csv_bytes(jsons: tuple[str, ...]) -> bytes:
    """The comparison table's raw values as formula-safe CSV."""
    return compare.to_csv_bytes(comparison(jsons))


@st.cache_resource(max_entries=32, show_spinner=False)
def figure(jsons: tuple[str, ...], name: str) -> go.Figure:
    """One of the grouped charts: "cost", "timeline" or "range"."""
    scenarios, results = _scenarios(jsons), _results(jsons)
    names = compare.unique_names([s.name for s in scenarios])
    if name == "cost":
        return compare_figures.cost_breakdown_figure(names, results)
    if name == "timeline":
        return compare_figures.timeline_figure(names, scenarios, results)
    return compare_figures.range_figure(names, results, ranges(jsons))


@st.cache_data(max_entries=8, show_spinner=False)
def report_html(jsons: tuple[str, ...], date: str) -> str:
    """The self-contained HTML report (the same function as `python -m dashboard report`)."""
    generated_at = datetime.fromisoformat(date).replace(tzinfo=UTC)
    return build_report(_scenarios(jsons), generated_at=generated_at, draws=DEFAULT_DRAWS, seed=DEFAULT_SEED)
