"""The Retrospective's figures, declared once each: the page draws its tabs from this list, the report its sections,
and the warm-up and the bench run each entry's queries (``dashboard.retro.tabs``).

An entry names its tab, the queries its view runs over a `RetroView` (``query``, returning the typed result of
`dashboard.retro.results` that the page's section and the report draw from, run by `dashboard.retro.tabs.run`; the
widgets' choices come from ``RetroView.choices``), its figure builders by name in ``dashboard.figures``
("retro_usage.spend_figure": the figures import this layer, so it names them), the function of
``dashboard.ui.retro_view`` that draws the tab (``page_section``, taking the view) and the heading of its section in
the report (``report_section``; None: not in the report; ``dashboard.ui.retro_report_view.SECTIONS`` builds it by
the entry's name). Adding a figure is one entry here and one module; tests/retro/test_registry.py checks that every
name resolves.

An entry's ``grain`` (issue 52) is what its queries read: the columns they group and filter by and their time unit,
so over a workspace dataset they read the smallest rollup that has them (``dashboard.retro.tabs.run``); None where
they read the rows: a count of rows, or a test of each row's GPU-hours or cost (a rollup holds their sums only, or
its sign where it groups by ``gpu_sign`` and ``cost_sign``), or per-job facts (but a run segment's marks, which
the jobs rollup keeps); ``Grain.chosen`` adds the column
the view's "Stack by" choice names (``Choices.by``). Pure: never imports streamlit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import pandas as pd

from dashboard.core.engine import scenario_outputs
from dashboard.query.distinct import distinct_values
from dashboard.retro import attribution, gap, load, mix, spend, units, waste
from dashboard.retro.results import (
    AttributionResult,
    GapResult,
    LoadResult,
    MixResult,
    SpendResult,
    UnitsResult,
    WasteResult,
)
from dashboard.retro.view import RetroView

R = TypeVar("R")


@dataclass(frozen=True)
class Grain:
    """What a figure's queries group and filter by: canonical ``columns`` and a time ``unit`` ("day", "hour"; None:
    no time) over which they spread or sum GPU-hours and cost (docs/engines.md, *Figures*)."""

    columns: tuple[str, ...]
    unit: str | None = None
    chosen: bool = False  # plus the column of the view's grouping choice (``Choices.by``: team, project, pricing)
    rows_behind: bool = False  # its sums read the rollup, the rows behind them the view's rows (``RetroView``)
    # parts it reads from a rollup of their own under no filter (``RetroView.whole_rollup``): what, and its columns
    whole: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class RetroFigure(Generic[R]):
    """One Retrospective figure (see the module's docstring); ``query`` gives its typed result
    (`dashboard.retro.results`), which `dashboard.retro.tabs.run` runs."""

    name: str
    tab: str
    query: Callable[[RetroView], R]
    figures: tuple[str, ...]
    page_section: str
    report_section: str | None = None
    grain: Grain | None = None  # None: the rows


def _spend(view: RetroView) -> SpendResult:
    """The spend chart of the view's choices (period, grouping, measure, quarter); the quarters and the last day
    of data come from the whole export, so a filtered view of a closed quarter forecasts nothing."""
    choices = view.choices
    days = view.whole_rows()  # the whole export's days, from its smallest daily rollup where it has one
    quarters, data_end = spend.data_quarters(days), spend.data_end(days)
    quarter = spend.chosen_quarter(quarters, choices.quarter)
    period, last = spend.running_period(quarter, data_end, view.chosen_dates)
    frame = spend.spend_over_time(view.shown, freq=choices.freq, by=choices.by)
    daily = (spend.daily_from_days(frame, choices.metric) if choices.freq == "D"
             else spend.daily_total(view.shown, metric=choices.metric))
    if period is not None:
        inside = ((daily.index >= pd.Timestamp(period[0], tz="UTC"))
                  & (daily.index <= pd.Timestamp(period[1], tz="UTC")))
        daily = daily[inside]
    period_end = period[1] if period is not None else (daily.index[-1].date() if len(daily) else None)
    days = spend.data_days(daily, last)
    cumulative = spend.cumulative_with_forecast(daily, spend.forecast_end(period_end, last, days), data_end=last)
    return SpendResult(frame, cumulative, tuple(quarters), quarter, period, last, days)


def _gap(view: RetroView) -> GapResult:
    """Plan vs actual of the view's plan over the chosen main runs (None: the suggestion, which follows the join
    key) and failed states, in GPU-hours for a bill not in US dollars or no bill (`RetroView.in_gpu_hours`)."""
    choices, usage, plan = view.choices, view.shown, view.plan
    run_ids = tuple(distinct_values(usage, "run_id"))
    suggestion = tuple(run for run in gap.suggest_main_runs(usage, by=view.join_on) if run in run_ids)
    main_runs = suggestion if choices.main_runs is None else choices.main_runs
    unit = "gpu_hours" if view.in_gpu_hours else choices.gap_unit
    if plan is None:
        return GapResult(run_ids, suggestion, main_runs, choices.failed_states, unit)
    parts, summary = gap.decompose(scenario_outputs(plan), plan, usage, list(main_runs), choices.failed_states)
    if view.foreign:
        parts = parts.assign(note=gap.part_notes(summary, view.currency)).drop(columns="usd")
    return GapResult(run_ids, suggestion, main_runs, choices.failed_states, unit, parts, summary)


def _waste(view: RetroView) -> WasteResult:
    """The waste checks, an interruption's loss from the plan's checkpoint interval and restart (the scenario
    defaults without a plan); the storage lines from the storage rollup of a whole dataset (``Grain.whole``); the
    rows behind each check are read when the page asks for them (``WasteCheck.behind``)."""
    rows, sums = (view.shown, None) if view.rows_behind is None else (view.rows_behind, view.shown)
    storage = view.whole_rollup(waste.STORAGE_GRAIN)[0]
    checklist = waste.waste_checklist(rows, scenario=view.plan, sums=sums, storage=storage, read_rows=False)
    total_cost = spend.totals(view.shown).cost
    return WasteResult(tuple(checklist), waste.waste_summary(checklist, total_cost), total_cost)


def _load(view: RetroView) -> LoadResult:
    """Concurrency from the (joined) view; the reserved capacity from the bill's rows, whose pricing tiers the join
    blurs across a run."""
    series = load.hourly_concurrency(view.shown)
    billing = view.narrowed_side(view.billing)
    found = load.reserved_capacity(view.shown if billing is None else billing)
    capacity, reserved = found if found is not None and found[0] else (None, None)
    summary = replace(load.load_summary(series), reserved_capacity_gpus=capacity,
                      idle_reserved_gpu_hours=(None if capacity is None or reserved is None
                                               else float((capacity - reserved).clip(lower=0).sum())))
    return LoadResult(series, summary, reserved, load.hour_of_week(series))


def _mix(view: RetroView) -> MixResult:
    """The pricing tiers of the bill (the join blurs them across a run); none without a bill."""
    billing = view.narrowed_side(view.billing)
    return MixResult(None if billing is None else mix.mix_shares(billing))


def _units(view: RetroView) -> UnitsResult:
    """Unit costs, MFU at the plan's active parameters (unknown without a plan)."""
    active = float(view.plan.active) if view.plan is not None else float("nan")
    return UnitsResult(units.unit_costs(view.shown, active_params=active))


SPEND = RetroFigure("spend", "Spend", _spend, ("retro_usage.spend_figure",), "spend_section", "Spend",
                    grain=Grain(("team",), "day", chosen=True))
ATTRIBUTION = RetroFigure("attribution", "Attribution",
                          lambda view: AttributionResult(attribution.attribution_table(view.shown)),
                          ("retro_usage.attribution_figure",), "attribution_section",
                          grain=Grain(("team", "project", "run_id")))
# Plan vs actual and Waste test each row's GPU-hours, cost and tokens (by their signs) and a run's segments (by their
# marks, ``dashboard.query.segments``): the jobs rollup answers them for any failed states, interval and restart
JOB_COLUMNS = ("run_id", "run_state", "pricing", "charge_kind", "gpu_sign", "cost_sign", "tokens_sign", "segment",
               "job_hours")
GAP = RetroFigure("gap", "Plan vs actual", _gap, ("retro_gap.gap_figure",), "plan_vs_actual_section", "Plan vs actual",
                  grain=Grain(JOB_COLUMNS))
# the rows behind each waste check and the duplicate-run rule's jobs are rows; the storage lines (by resource) are
# the storage rollup's under no filter, else rows
WASTE = RetroFigure("waste", "Waste", _waste, ("retro_gap.waste_figure",), "waste_section", "Waste",
                    grain=Grain(JOB_COLUMNS, rows_behind=True, whole=(("storage lines", waste.STORAGE_GRAIN),)))
LOAD = RetroFigure("load", "Load profile", _load, ("retro_usage.load_figure", "retro_usage.hour_of_week_figure"),
                   "load_section", grain=Grain(("pricing", "charge_kind", "gpu_sign", "cost_sign"), "hour"))
# the GPU rows (non-zero GPU-hours) by tier, with or without a cost, and the others' cost: by the signs (the what-if
# at another mix reads the same table: ``tabs.bill_read``)
MIX = RetroFigure("mix", "Purchase mix", _mix, ("retro_usage.mix_figure",), "mix_section",
                  grain=Grain(("pricing", *units.SUMS_GRAIN)))
# the GPU rows, those with tokens and their GPU types (each type's peak for MFU): ``units.rollup_unit_sums``
UNITS = RetroFigure("units", "Unit costs", _units, (), "unit_costs_section", grain=Grain(units.TOKENS_GRAIN))
FIGURES: tuple[RetroFigure[Any], ...] = (SPEND, ATTRIBUTION, GAP, WASTE, LOAD, MIX, UNITS)
REPORT_ORDER = ("spend", "waste", "gap")  # the report's sections, in the order the review reads them


def report_figures() -> list[RetroFigure]:
    """The entries with a report section, in ``REPORT_ORDER``."""
    by_name = {entry.name: entry for entry in FIGURES if entry.report_section}
    return [by_name[name] for name in REPORT_ORDER]
