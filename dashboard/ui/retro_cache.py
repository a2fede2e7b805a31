"""Bounded cache wrappers for the Retrospective page's analytics.

Usage tables can hold a million rows, so they are never hashed: every wrapper takes a cheap `data_key`
(the imported files' keys, the join key and the filters) and the frame itself as an underscore argument,
which Streamlit's caches leave out of the cache key. The same `data_key` must always mean the same frame.
The joined and filtered tables are held for their session in the bounded `upload_store` (never copied or
pickled, never modified by the pure functions that read them, released when the session ends); everything
derived from them is small and cached as data. Every figure is a query of the query layer (``dashboard.query``)
over the table behind the frame: a filtered frame that keeps most rows is registered as the filter expression over
its unfiltered table (``query.tables.register``), one that keeps few becomes a table of its own (``OWN_TABLE_SHARE``).
A workspace dataset larger than ``PLANNER_WORKSPACE_MEMORY_ROWS`` comes as an Ibis table over its Parquet files
(``queried``): the same wrappers run the same queries on it, its filtered view is the filter expression, and what
needs rows in memory (the join with a run export, spreading commitments, the rows behind a waste figure and the
duplicate-run comparison) says so instead.
"""

from __future__ import annotations

from collections.abc import Hashable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import settings
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.figures import retro_gap, retro_usage
from dashboard.format import USD
from dashboard.query import engine, tables, view
from dashboard.query import spend as spend_query
from dashboard.query.distinct import distinct_values
from dashboard.query.opened import Table, is_table
from dashboard.retro import amortise, attribution, filters, gap, join, load, mix, spend, units, waste
from dashboard.safe_text import markdown_text
from dashboard.ui import upload_store
from dashboard.ui.cache import SCENARIO_HASH, DrawnChart

ENTRIES = 16
# A filtered view keeping at most this share of the rows is handed to the engine as its own table (an Arrow copy of
# the rows kept, cheap when they are few, and every query then scans only them); a larger one is the filter
# expression over the unfiltered table, so that nearly the whole table is not copied again.
OWN_TABLE_SHARE = 0.5


def queried(usage: pd.DataFrame | Table | None) -> bool:
    """Whether ``usage`` is a dataset queried where it lies (an Ibis table), not rows in memory."""
    return is_table(usage)


def busy(text: str, usage: pd.DataFrame | Table | None) -> AbstractContextManager:
    """A spinner with the elapsed time over work on ``usage``, shown when it takes more than half a second
    (st.spinner's delay); none for a frame of at most ``tables.SMALL_FRAME_ROWS`` rows, whose views take a few
    milliseconds (a spinner starts a timer thread, which costs more than they do)."""
    if usage is None or (not queried(usage) and len(usage) <= tables.SMALL_FRAME_ROWS):
        return nullcontext()
    return st.spinner(text, show_time=True)


def _new_table_bytes(result: pd.DataFrame | tuple, *inputs: pd.DataFrame | None) -> int:
    """Bytes of a derived table, 0 when it is one of its inputs (already counted in the upload store)."""
    frame = result[0] if isinstance(result, tuple) else result
    return 0 if any(frame is given for given in inputs) else upload_store.table_bytes(frame)


def joined(data_key: Hashable, _billing: pd.DataFrame | None, _runs: pd.DataFrame | None,
           on: str) -> tuple[pd.DataFrame, dict]:
    """The joined usage table, held for this session in the bounded upload store."""
    def build() -> tuple[pd.DataFrame, dict]:
        with busy("Joining the billing and run exports…", _billing if _billing is not None else _runs):
            return join.join_usage(_billing, _runs, on=on)

    return upload_store.held(("retro.joined",), (data_key, on), build,
                             lambda result: _new_table_bytes(result, _billing, _runs))


def engine_problem() -> str | None:
    """Why the query engine (``PLANNER_ENGINE_URL``) cannot be used, in one sentence; None when it opens."""
    try:
        engine.default()
    except settings.SettingError as error:
        return str(error)
    except Exception as error:  # a missing backend package, an unreachable or refusing server
        scheme = settings.engine_url().split("://")[0]
        return (f"The query engine {settings.ENGINE_URL} names ({scheme}) could not be opened "
                f"({type(error).__name__}). Check the server's setting, or unset it to use DuckDB.")
    return None


def require_engine() -> None:
    """Stop the page with a message when the query engine cannot be opened (before the first query)."""
    problem = engine_problem()
    if problem:
        st.error(markdown_text(problem))
        st.stop()


def options(data_key: Hashable, _usage: pd.DataFrame) -> dict:
    """What the filters offer; the page stops here with a message when the query engine cannot be opened."""
    require_engine()
    return _options(data_key, _usage)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def _options(data_key: Hashable, _usage: pd.DataFrame) -> dict:
    return filters.filter_options(_usage)


def filtered(data_key: Hashable, _usage: pd.DataFrame | Table, start, end, teams, projects,
             pricing) -> pd.DataFrame | Table:
    """The filtered usage table, held for this session (one per unfiltered table) in the upload store; of a
    queried table, the filter expression over it (nothing is read until a figure asks)."""
    if queried(_usage):
        return filters.filter_usage(_usage, start, end, teams, projects, pricing)

    def build() -> pd.DataFrame:
        with busy("Filtering…", _usage):
            rows = filters.filter_usage(_usage, start, end, teams, projects, pricing)
            if len(rows) > OWN_TABLE_SHARE * len(_usage):
                tables.register(rows, view.filtered(tables.table_of(_usage), start, end, teams, projects, pricing))
            return rows

    return upload_store.held(("retro.filtered", data_key[0]), (data_key, start, end, teams, projects, pricing),
                             build, lambda result: _new_table_bytes(result, _usage))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def spend_chart(data_key: Hashable, _usage: pd.DataFrame, freq: str, by: str, metric: str,
                budget: float | None, period_end, data_end, currency: str | None) -> DrawnChart:
    """``period_end`` and ``data_end`` come from the whole export, so a filtered view of a closed quarter
    draws no forecast; amounts (the budget too) in the bill's ``currency``."""
    frame = spend.spend_over_time(_usage, freq=freq, by=by)
    daily = spend.daily_from_days(frame, metric) if freq == "D" else spend.daily_total(_usage, metric=metric)
    cumulative = spend.cumulative_with_forecast(daily, period_end or daily.index[-1].date(), data_end=data_end)
    return DrawnChart(retro_usage.spend_figure(frame, cumulative, budget if metric == "cost" else None,
                                               metric=metric, currency=currency))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def attribution_view(data_key: Hashable, _usage: pd.DataFrame, currency: str | None) -> tuple[pd.DataFrame,
                                                                                               DrawnChart]:
    table = attribution.attribution_table(_usage)
    return table, DrawnChart(retro_usage.attribution_figure(table, currency=currency))


@st.cache_data(max_entries=ENTRIES, show_spinner=False, hash_funcs=SCENARIO_HASH)
def gap_view(data_key: Hashable, _usage: pd.DataFrame, scenario: Scenario, main_run_ids: tuple[str, ...],
             failed_states: tuple[str, ...], unit: str,
             currency: str | None) -> tuple[pd.DataFrame, dict[str, Any], DrawnChart]:
    """Plan vs actual in ``unit``; a bill in a currency other than the plan's US dollars is compared in GPU-hours
    only, its parts' notes in its own currency and no dollar column (`gap.part_notes`)."""
    plan = scenario_outputs(scenario)
    parts, summary = gap.decompose(plan, scenario, _usage, list(main_run_ids), failed_states)
    if currency is not None and currency != USD:
        unit = "gpu_hours"
        parts = parts.assign(note=gap.part_notes(summary, currency)).drop(columns="usd")
    key = "usd" if unit == "usd" else "gpu_hours"
    figure = retro_gap.gap_figure(parts, summary[f"plan_{key}"], summary[f"actual_{key}"], unit=unit,
                                  currency=currency)
    return parts, summary, DrawnChart(figure)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def main_run_suggestion(data_key: Hashable, _usage: pd.DataFrame, by: str) -> list[str]:
    return gap.suggest_main_runs(_usage, by=by)


@st.cache_data(max_entries=ENTRIES, show_spinner=False, hash_funcs=SCENARIO_HASH)
def waste_view(data_key: Hashable, _usage: pd.DataFrame, currency: str | None,
               scenario: Scenario | None) -> tuple[list[dict[str, Any]], dict, DrawnChart]:
    """The waste checks, an interruption's loss from the plan's checkpoint interval and restart (`scenario`; the
    scenario defaults without a plan)."""
    checklist = waste.waste_checklist(_usage, with_rows=not queried(_usage), scenario=scenario)
    summary = waste.waste_summary(checklist, spend_query.totals(tables.table_of(_usage))["cost"])
    return checklist, summary, DrawnChart(retro_gap.waste_figure(checklist, summary, currency=currency))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def load_view(data_key: Hashable, _usage: pd.DataFrame,
              _billing: pd.DataFrame | None) -> tuple[dict, DrawnChart, DrawnChart]:
    """Concurrency from the (joined) usage; the reserved capacity from the billing rows, whose pricing tiers
    the join blurs across a run."""
    series = load.hourly_concurrency(_usage)
    summary = load.load_summary(series)
    capacity, reserved = load.reserved_capacity(_usage if _billing is None else _billing) or (None, None)
    summary["reserved_capacity_gpus"] = capacity
    summary["idle_reserved_gpu_hours"] = float((capacity - reserved).clip(lower=0).sum()) if capacity else None
    return (summary, DrawnChart(retro_usage.load_figure(series, summary, reserved, capacity)),
            DrawnChart(retro_usage.hour_of_week_figure(load.hour_of_week(series))))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def mix_view(data_key: Hashable, _usage: pd.DataFrame, currency: str | None) -> tuple[pd.DataFrame, DrawnChart]:
    shares = mix.mix_shares(_usage)
    return shares, DrawnChart(retro_usage.mix_figure(shares, currency=currency))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def cost_at_mix(data_key: Hashable, _usage: pd.DataFrame, reserved_share: float, spot_share: float) -> dict:
    return mix.cost_at_mix(_usage, reserved_share, spot_share)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def unit_view(data_key: Hashable, _usage: pd.DataFrame, active_params: float) -> dict:
    return units.unit_costs(_usage, active_params=active_params)


def amortised(data_key: Hashable, _billing: pd.DataFrame | Table) -> tuple[pd.DataFrame | Table, dict]:
    """The billing table with commitment charges spread over the reserved usage they cover (the input itself
    when there is nothing to amortise) and what was done, held for this session in the bounded upload store. A
    queried table is returned as it is with its ``commitment_status`` ("needs_rows" where spreading is due)."""
    def build() -> tuple[pd.DataFrame | Table, dict]:
        with busy("Looking for commitments…" if queried(_billing) else "Amortising commitments…", _billing):
            if queried(_billing):
                return _billing, amortise.commitment_status(_billing)
            return amortise.amortise_commitments(_billing)

    return upload_store.held(("retro.amortised",), data_key, build, lambda result: _new_table_bytes(result, _billing))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def periods(data_key: Hashable, _usage: pd.DataFrame) -> tuple:
    """The whole export's quarter end and last covered day (the forecast rule's inputs)."""
    quarter = spend.data_quarter(_usage)
    return (quarter[1] if quarter else None), spend.data_end(_usage)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def totals(data_key: Hashable, _usage: pd.DataFrame | Table) -> dict[str, float]:
    """Rows, GPU-hours and cost of the view (one query)."""
    return spend_query.totals(tables.table_of(_usage))


def row_count(data_key: Hashable, usage: pd.DataFrame | Table) -> int:
    """Rows of the view: a frame's length (no query on a rerun), a queried table's count (`totals`)."""
    return int(totals(data_key, usage)["rows"]) if queried(usage) else len(usage)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def run_ids(data_key: Hashable, _usage: pd.DataFrame | Table) -> list[str]:
    """The view's run ids, sorted (a DISTINCT query)."""
    return distinct_values(tables.table_of(_usage), "run_id")
