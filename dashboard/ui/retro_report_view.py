"""The Retrospective report's download: the page's tiles, its spend, waste and plan-vs-actual figures and their notes
in one self-contained HTML file (`dashboard.report.retro_html`), for the review meeting.

The button's data is deferred: nothing is built until the user presses it, and then every number comes from the same
cached views the tabs draw (`retro_cache`), so a figure already shown is not computed again. The page's choices that
shape a figure (the spend chart's period, grouping and budget, the main runs and failed states of Plan vs actual)
are read from its widgets' state, and fall back to the widgets' defaults while their tab is closed. The tables are
held weakly, as the CSV download holds them (`upload_store.csv_download`): the store's bound decides how long they live.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from dashboard.core.scenario import Scenario
from dashboard.figures import retro_gap
from dashboard.format import count_sig, money, number
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.opened import Table
from dashboard.report import theme
from dashboard.report.retro_html import ReportFigure, Tiles, retrospective_report
from dashboard.retro.budgets import WHOLE_EXPORT, budget_for_view
from dashboard.retro.gap import plan_mismatch
from dashboard.retro.join import match_warning
from dashboard.retro.spend import quarter_label
from dashboard.retro.units import labels
from dashboard.safe_text import markdown_text
from dashboard.ui import retro_cache as cache
from dashboard.ui import retro_view as view
from dashboard.ui.cache import SCENARIO_HASH

BUTTON = "Download the Retrospective report (HTML)"
REPORT_ENTRIES = 4  # each report holds plotly.js (about 4.5 MB)
RELEASED = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Retrospective report</title>"
            "</head><body><p>This view was released by the server; open the Retrospective again to download its "
            "report.</p></body></html>\n")
FREQUENCIES = {"D": "day", "W": "week"}
GROUPINGS = {"team": "team", "project": "project", "pricing": "pricing"}


@dataclass(frozen=True)
class Choices:
    """What the page's widgets chose for the figures (hashable: part of the report's cache key)."""

    freq: str = "D"
    by: str = "team"
    metric: str = "cost"
    export_budget: float | None = view.EXPORT_BUDGET_USD
    view_budgets: tuple[tuple[str, float], ...] = ()
    quarter: str | None = None  # the quarter of the running total ("2025 Q2"; None: the latest)
    quarter_budgets: tuple[tuple[str, float], ...] = ()  # earlier quarters' whole-export budgets by label
    main_runs: tuple[str, ...] | None = None  # None: the page's suggestion
    failed_states: tuple[str, ...] = tuple(FAILED_STATES)
    gap_unit: str = "usd"


def page_choices(join_on: str, budget_default: float | None = view.EXPORT_BUDGET_USD) -> Choices:
    """The page's current choices from its widgets' state; a widget whose tab is closed gives its default (the
    whole export's budget `budget_default`, which the page sets to none for a bill of the user's own)."""
    state = st.session_state
    main_runs = state.get(f"retro.main_runs.{join_on}")
    budget = state.get("retro.budget", budget_default)
    return Choices(
        freq=state.get("retro.freq") or "D", by=state.get("retro.by") or "team",
        metric=state.get("retro.metric") or "cost",
        export_budget=None if budget is None else float(budget),
        view_budgets=tuple(sorted((str(k), float(v)) for k, v in state.get("retro.view_budgets", {}).items())),
        quarter=state.get(view.QUARTER),
        quarter_budgets=tuple(sorted((str(k), float(v)) for k, v in state.get(view.QUARTER_BUDGETS, {}).items())),
        main_runs=None if main_runs is None else tuple(main_runs),
        failed_states=tuple(state.get("retro.failed_states", FAILED_STATES)),
        gap_unit=state.get("retro.gap_unit") or "usd",
    )


def figure_of(drawn: Any) -> go.Figure:
    """A cached chart (`DrawnChart`, plotly's dict) as a figure with the report's template, not plotly's default
    (which importing streamlit sets to its placeholder colours)."""
    figure = go.Figure(drawn.to_dict() if hasattr(drawn, "to_dict") else drawn)
    figure.layout.template = theme.TEMPLATE
    return figure


def data_line(billing: Any, runs: Any, join_on: str) -> list[str]:
    """Each file behind the view with its role and the rows used ("focus_sample.csv (billing export, 242 rows)")."""
    files = []
    for part, role in ((billing, "billing export"), (runs, "run export")):
        if part:
            rows = part.summary.get("rows_used") if isinstance(getattr(part, "summary", None), dict) else None
            used = f", {rows:,} rows used" if isinstance(rows, int) else ""
            joined = f", joined on {join_on}" if role == "run export" and billing else ""
            files.append(f"{part.filename} ({role}{used}{joined})")
    return files


def filter_lines(filters: tuple, bounds: dict[str, Any]) -> list[tuple[str, str]]:
    """The filters in force as (label, value): the dates (UTC), teams, projects and pricing, "all" when unset."""
    start, end, teams, projects, pricing = filters
    whole = (start, end) == (bounds.get("start"), bounds.get("end"))
    dates = "no dates" if start is None or end is None else (
        f"{start:%Y-%m-%d} to {end:%Y-%m-%d} (UTC)" + (", the whole export" if whole else ""))
    return [("Dates", dates), ("Teams", ", ".join(teams) if teams else "all"),
            ("Projects", ", ".join(projects) if projects else "all"),
            ("Pricing", ", ".join(pricing) if pricing else "all")]


def tile_notes(stats: dict[str, Any], amortisation: dict[str, Any], notes: Sequence[str],
               currency: str | None) -> list[str]:
    """What the page says under its tiles: a low join match, how commitments were treated, the import notes that
    change the figures."""
    found = [text for text in (match_warning(stats), view.commitment_sentence(amortisation, currency)) if text]
    if amortisation.get("status") == "excluded":
        found.append(f"{labels(currency)['usd_per_gpu_hour']} excludes commitments: "
                     f"{money(amortisation.get('commitment_usd'), currency)} of commitment charges are not spread "
                     "over GPU-hours (the Retrospective page says why and what to import).")
    return [*found, *notes]


def _tiles(key: Hashable, shown: Table, stats: dict[str, Any], amortisation: dict[str, Any]) -> Tiles:
    numbers = cache.unit_view(key, shown, float("nan"))
    with_runs = not stats["billing_missing"] and not stats["runs_missing"]
    return Tiles(cost=numbers["gpu_cost"] + numbers["non_gpu_cost"], gpu_hours=numbers["gpu_hours"],
                 per_gpu_hour=numbers["usd_per_gpu_hour"], non_gpu_cost=numbers["non_gpu_cost"],
                 rows=cache.row_count(key, shown), per_gpu_hour_note=amortisation.get("label") or "",
                 runs_without_bill_gpu_hours=stats["runs_without_bill_gpu_hours"] if with_runs else None)


def _spend(key: Hashable, shown: Table, data_key: Hashable, usage: Table,
           filters: tuple, narrowed_dates: bool, budget_view: str, choices: Choices,
           currency: str | None) -> ReportFigure:
    quarters, data_end = cache.periods(data_key, usage)
    quarter = view.chosen_quarter(quarters, choices.quarter)
    period, last = view.running_period(quarter, data_end, filters[:2] if narrowed_dates else None)
    if budget_view != WHOLE_EXPORT:
        export_budget = None
    elif quarter is None or quarter == quarters[-1]:
        export_budget = choices.export_budget
    else:  # an earlier quarter's own budget
        export_budget = dict(choices.quarter_budgets).get(quarter_label(quarter))
    budget = budget_for_view(budget_view, export_budget, dict(choices.view_budgets))
    drawn = cache.spend_chart(key, shown, choices.freq, choices.by, choices.metric, budget, period, last, currency)
    measure = "cost" if choices.metric == "cost" else "GPU-hours"
    running = (f"below it the running total of {quarter_label(quarter)} (the export spans "
               f"{quarter_label(quarters[0])} to {quarter_label(quarters[-1])}; each quarter has its own budget and "
               "forecast)" if quarter and len(quarters) > 1 else "below it the running total")
    notes = [f"{measure.capitalize()} per {FREQUENCIES.get(choices.freq, choices.freq)}, stacked by "
             f"{GROUPINGS.get(choices.by, choices.by)}; {running}.",
             f"Budget drawn ({markdown_text(budget_view)}): {money(budget, currency)}." if budget else
             f"No budget drawn for this view ({markdown_text(budget_view)}).",
             view.spread_and_forecast(period and period[1], last)]
    return ReportFigure("Spend", figure_of(drawn), notes=notes)


def _waste(key: Hashable, shown: Table, currency: str | None, plan: Scenario | None) -> ReportFigure:
    checklist, summary, drawn = cache.waste_view(key, shown, currency, plan)
    share = "" if summary["share"] is None else f", {number(summary['share'], 'fraction')} of spend"
    total_cost = cache.totals(key, shown)["cost"]
    notes = []
    for check in sorted(checklist, key=lambda check: (check["kind"] != "waste", -(check["usd"] or 0.0))):
        of_spend = (f" · {number(check['usd'] / total_cost, 'fraction')} of spend"
                    if check["usd"] is not None and check["kind"] == "waste" and total_cost > 0 else "")
        notes.append(f"**{markdown_text(check['check'])}** ({markdown_text(check['kind'])}) — "
                     f"{markdown_text(view.check_figure(check, currency))}{of_spend}: "
                     f"{markdown_text(check['detail'])}")
    has_waste = retro_gap.has_waste(summary)
    return ReportFigure("Waste", figure_of(drawn) if has_waste else None, notes=notes,
                        lead=f"Waste found: {money(summary['total_usd'], currency)}{share}",
                        empty=retro_gap.NO_WASTE)


def _gap(key: Hashable, shown: Table, plan: Scenario | None, plan_label: str, join_on: str,
         choices: Choices, currency: str | None) -> ReportFigure:
    if plan is None:
        return ReportFigure("Plan vs actual", None, empty="No plan chosen to compare with: pick one on the page's "
                            "Plan vs actual tab.")
    foreign = view.foreign_plan(currency)
    if choices.main_runs is None:
        run_ids = cache.run_ids(key, shown)
        main_runs = tuple(run for run in cache.main_run_suggestion(key, shown, join_on) if run in run_ids)
    else:
        main_runs = choices.main_runs
    unit = "gpu_hours" if foreign else choices.gap_unit
    parts, summary, drawn = cache.gap_view(key, shown, plan, main_runs, choices.failed_states, unit, currency)
    notes = []
    if foreign:
        notes.append(view.plan_currency_warning(currency))
    mismatch = plan_mismatch(summary)
    if mismatch:
        notes.append(mismatch)
    notes.append(view.plan_caption(plan_label, summary, currency))
    runs_text = ", ".join(markdown_text(run) for run in main_runs) or "none"
    notes.append(f"Main run: {runs_text}; states counted as failed: "
                 f"{', '.join(markdown_text(state) for state in choices.failed_states) or 'none'}.")
    for row in parts.to_dict("records"):
        amount = "" if foreign or "usd" not in row else f", {money(row['usd'], 'USD')}"
        known = "" if row.get("known", True) else f" (unknown: to know it, import {row.get('needs') or 'more'})"
        note = f" — {row['note']}" if row.get("note") else ""
        notes.append(f"**{markdown_text(row['part'])}**: {count_sig(row['gpu_hours'])} GPU-h{amount}{known}"
                     f"{markdown_text(note)}")
    notes.append(view.attribution_order(foreign))
    return ReportFigure("Plan vs actual", figure_of(drawn), notes=notes)


@st.cache_data(max_entries=REPORT_ENTRIES, show_spinner=False, hash_funcs=SCENARIO_HASH)
def _report(key: Hashable, _shown: Table, _usage: Table, _stats: dict[str, Any],
            _amortisation: dict[str, Any], notes: tuple[str, ...], currency: str | None, files: tuple[str, ...],
            filter_text: tuple[tuple[str, str], ...], narrowed_dates: bool, budget_view: str, join_on: str,
            plan: Scenario | None, plan_label: str, choices: Choices, minute: str) -> str:
    """The report of the view `key` (the page's ``(data_key, filters)``: the same key means the same tables, stats
    and amortisation), stamped at `minute` (UTC)."""
    data_key, filters = key
    figures = [_spend(key, _shown, data_key, _usage, filters, narrowed_dates, budget_view, choices, currency),
               _waste(key, _shown, currency, plan),
               _gap(key, _shown, plan, plan_label, join_on, choices, currency)]
    return retrospective_report(_tiles(key, _shown, _stats, _amortisation), figures, currency=currency,
                                generated_at=datetime.fromisoformat(minute), files=files, filters=filter_text,
                                notes=tile_notes(_stats, _amortisation, notes, currency))


def _weak(value: Any) -> Callable[[], Any]:
    try:
        return weakref.ref(value)
    except TypeError:  # a table type that takes no weak reference is held as it is
        return lambda: value


def report_data(data_key: Hashable, usage: Table, filters: tuple, shown: Table, *,
                stats: dict[str, Any], amortisation: dict[str, Any], notes: Sequence[str], currency: str | None,
                billing: Any, runs: Any, join_on: str, plan: Scenario | None, plan_label: str | None = None,
                budget_default: float | None = view.EXPORT_BUDGET_USD) -> Callable[[], str]:
    """The download's deferred data: the report of the page's current view, built when the button is pressed and
    stamped with that minute (UTC). `filters` is the page's ``(start, end, teams, projects, pricing)``, `notes` the
    Markdown notes it shows under the tiles, `billing` and `runs` its imports (None when absent), `plan` the plan
    Plan vs actual compares with (None: none chosen) and `budget_default` the whole export's budget while the Spend
    tab's input is not drawn."""
    bounds = cache.options(data_key, usage)
    start, end, teams, projects, pricing = filters
    narrowed_dates = (start, end) != (bounds.get("start"), bounds.get("end"))
    budget_view = view.budget_view(teams or [], projects or [], pricing or [], (start, end) if narrowed_dates
                                   else None)
    arguments = dict(notes=tuple(notes), currency=currency, files=tuple(data_line(billing, runs, join_on)),
                     filter_text=tuple(filter_lines(filters, bounds)), narrowed_dates=narrowed_dates,
                     budget_view=budget_view, join_on=join_on, plan=plan,
                     plan_label=plan_label or (plan.name if plan is not None else ""),
                     choices=page_choices(join_on, budget_default))
    held_shown, held_usage = _weak(shown), _weak(usage)

    def data() -> str:
        shown_now, usage_now = held_shown(), held_usage()
        if shown_now is None or usage_now is None:
            return RELEASED
        minute = datetime.now(UTC).replace(second=0, microsecond=0).isoformat()
        return _report((data_key, filters), shown_now, usage_now, stats, amortisation, minute=minute, **arguments)

    return data


def render_download(data_key: Hashable, usage: Table, filters: tuple, shown: Table,
                    **page: Any) -> None:
    """The "Download the Retrospective report (HTML)" button for the page's current view (see `report_data` for
    what the page passes)."""
    st.download_button(BUTTON, data=report_data(data_key, usage, filters, shown, **page),
                       file_name=f"retrospective-{date.today():%Y-%m-%d}.html", mime="text/html", on_click="ignore",
                       icon=":material/description:",
                       help="The tiles, the spend, waste and plan-vs-actual figures and their notes in one file that "
                       "opens offline and prints on A4, in the bill's currency, for the review meeting.")

