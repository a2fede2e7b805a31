"""Bounded cache wrappers for the Compare page: the comparison table, its charts and the HTML report.

Scenarios travel as a tuple of `Scenario` objects; the caches key each by its canonical JSON (`SCENARIO_HASH`), so
nothing is parsed again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.core import compare
from dashboard.core.engine import PlanResult
from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import DEFAULT_DRAWS, DEFAULT_SEED
from dashboard.figures import compare as compare_figures
from dashboard.report.cells import count, format_delta, format_input, format_output, loss, money
from dashboard.report.html import DEFAULT_APP_URL, build_report
from dashboard.ui.cache import SCENARIO_HASH, DrawnChart, plan_monte_carlo, plan_result

DRAWS_AND_SEED = (DEFAULT_DRAWS, DEFAULT_SEED)


Scenarios = tuple[Scenario, ...]


def _results(scenarios: Scenarios) -> list[PlanResult]:
    return [plan_result(scenario) for scenario in scenarios]


def ranges(scenarios: Scenarios) -> list[dict[str, Any]]:
    """Each scenario's Monte Carlo summary at the report's draws and seed."""
    return [plan_monte_carlo(scenario, DEFAULT_DRAWS, DEFAULT_SEED).summary() for scenario in scenarios]


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=SCENARIO_HASH)
def comparison(scenarios: Scenarios) -> pd.DataFrame:
    """The comparison table with P10/P90 rows (see `core.compare.comparison_table`)."""
    return compare.comparison_table(list(scenarios), _results(scenarios), ranges(scenarios))


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=SCENARIO_HASH)
def display(scenarios: Scenarios, section: str) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """One section of the comparison table as text (formatted like the report), with short column headers.

    Returns the rows of `section` (outputs or inputs), which cells differ from the first option, and each short
    header's full scenario name (for the header's hover help). When the options' predicted losses are not
    comparable, each option's header carries its loss.
    """
    table = comparison(scenarios)
    columns = compare.scenario_columns(table)
    deltas = [column for column in table.columns if column not in (*compare.FIXED_COLUMNS, *columns)]
    rows = table[table["section"] == section]
    fmt = format_input if section == compare.INPUT_SECTION else format_output
    headers = short_headers([*columns, *deltas])
    losses = table.set_index("key").loc["predicted_loss", columns].astype(float).to_list()
    if not compare.comparable(losses):
        headers.update({column: f"{headers[column]} · loss {loss(value)}"
                        for column, value in zip(columns, losses, strict=True)})
    shown = pd.DataFrame({"item": rows["item"].to_list()})
    for column in columns:
        shown[headers[column]] = [fmt(key, value) for key, value in zip(rows["key"], rows[column], strict=True)]
    for delta, column in zip(deltas, columns[1:], strict=True):  # each Δ is its scenario against the first
        shown[headers[delta]] = [format_delta(section, key, value, first) for key, value, first
                                 in zip(rows["key"], rows[column], rows[columns[0]], strict=True)]
    mask = compare.highlight_mask(table).loc[rows.index, ["item", *columns, *deltas]]
    mask.columns = shown.columns
    return shown, mask.reset_index(drop=True), {headers[column]: column for column in [*columns, *deltas]}


SHORT_HEADER_CHARS = 22


def short_headers(columns: list[str]) -> dict[str, str]:
    """Each column name cut to SHORT_HEADER_CHARS with an ellipsis, kept unique ("Δ " stays in front)."""
    def cut(name: str) -> str:
        return name if len(name) <= SHORT_HEADER_CHARS else name[:SHORT_HEADER_CHARS - 1].rstrip() + "…"

    headers: dict[str, str] = {}
    for column in columns:
        prefix = compare.DELTA_PREFIX if column.startswith(compare.DELTA_PREFIX) else ""
        candidate, number = prefix + cut(column.removeprefix(prefix)), 1
        while candidate in headers.values() or candidate == "item":
            number += 1
            candidate = f"{prefix}{cut(column.removeprefix(prefix))} ({number})"
        headers[column] = candidate
    return headers


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=SCENARIO_HASH)
def csv_bytes(scenarios: Scenarios) -> bytes:
    """The comparison table's raw values as formula-safe CSV."""
    return compare.to_csv_bytes(comparison(scenarios))


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=SCENARIO_HASH)
def figure(scenarios: Scenarios, name: str, scale: str = "usd") -> DrawnChart:
    """One of the grouped charts: "cost", "timeline" or "range", on a scale of `compare_figures.SCALES`."""
    results = _results(scenarios)
    names = compare.unique_names([s.name for s in scenarios])
    if name == "cost":
        return DrawnChart(compare_figures.cost_breakdown_figure(names, results, scale))
    if name == "timeline":
        return DrawnChart(compare_figures.timeline_figure(names, list(scenarios), results, scale))
    return DrawnChart(compare_figures.range_figure(names, results, ranges(scenarios), scale))


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=SCENARIO_HASH)
def matched(scenarios: Scenarios, lever: str) -> tuple[Scenarios, list[str], list[str]]:
    """The options moved to the first one's predicted loss by `lever`, what moved and its cost, and the options
    that could not be moved (kept as they are) with the reason."""
    moved, problems = compare.match_options(list(scenarios), lever)
    names = compare.unique_names([scenario.name for scenario in scenarios])
    notes = [compare.match_note(name, before, after, plan_result(before)["cost_total_usd"],
                                plan_result(after)["cost_total_usd"], money, count)
             for name, before, after in zip(names, scenarios, moved, strict=True)]
    return tuple(moved), [note for note in notes if note], problems


@st.cache_data(max_entries=8, show_spinner=False, hash_funcs=SCENARIO_HASH)
def _report(scenarios: Scenarios, minute: str, author: str, app_url: str) -> str:
    generated_at = datetime.fromisoformat(minute)
    return build_report(list(scenarios), generated_at=generated_at, draws=DEFAULT_DRAWS, seed=DEFAULT_SEED,
                        author=author or None, app_url=app_url)


def report_html(scenarios: Scenarios, author: str = "", app_url: str = DEFAULT_APP_URL) -> str:
    """The self-contained HTML report stamped with the time it is downloaded (the same function as
    `python -m dashboard report`)."""
    minute = datetime.now(UTC).replace(second=0, microsecond=0).isoformat()
    return _report(scenarios, minute, author.strip(), app_url)
