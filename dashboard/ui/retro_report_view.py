"""The Retrospective report's download: the page's tiles, its spend, waste and plan-vs-actual figures and their notes
in one self-contained HTML file (`dashboard.report.retro_html`), for the review meeting.

The report reads the run's `RetroView` only: its tables, filters, currency, plan and the widgets' choices that shape
a figure (`RetroView.choices`: the spend chart's period, grouping and budget, the main runs and failed states of
Plan vs actual, which the page reads once when it makes the view). The button's data is deferred: nothing is built
until the user presses it, and then every number comes from the same cached results the tabs draw
(`retro_cache.run` of each registry entry), so a figure already shown is not computed again. The tables are held
weakly, as the CSV download holds them (`upload_store.csv_download`): the store's bound decides how long they live.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import fields
from datetime import UTC, date, datetime
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from dashboard.figures import retro_gap
from dashboard.format import count_sig, money
from dashboard.report import theme
from dashboard.report.retro_html import ReportFigure, Tiles, retrospective_report
from dashboard.retro.budgets import WHOLE_EXPORT, budget_for_view
from dashboard.retro.gap import plan_mismatch
from dashboard.retro.join import match_warning
from dashboard.retro.registry import GAP, SPEND, WASTE, report_figures
from dashboard.retro.spend import quarter_label
from dashboard.retro.units import labels
from dashboard.retro.view import RetroView
from dashboard.safe_text import markdown_text
from dashboard.ui import retro_cache as cache
from dashboard.ui import retro_view as page
from dashboard.ui.cache import DrawnChart

BUTTON = "Download the Retrospective report (HTML)"
REPORT_ENTRIES = 4  # each report holds plotly.js (about 4.5 MB)
RELEASED = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Retrospective report</title>"
            "</head><body><p>This view was released by the server; open the Retrospective again to download its "
            "report.</p></body></html>\n")
FREQUENCIES = {"D": "day", "W": "week"}
TABLES = ("usage", "shown", "billing", "runs")  # the view's tables, held weakly by the deferred download
GROUPINGS = {"team": "team", "project": "project", "pricing": "pricing"}


def figure_of(drawn: DrawnChart) -> go.Figure:
    """A cached chart (`DrawnChart`, plotly's dict) as a figure with the report's template, not plotly's default
    (which importing streamlit sets to its placeholder colours)."""
    figure = go.Figure(drawn.to_dict())
    figure.layout.template = theme.TEMPLATE
    return figure


def data_line(billing: Any, runs: Any, join_on: str) -> list[str]:
    """Each file behind the view with its role and the rows used ("focus_sample.csv (billing export, 242 rows)")."""
    files = []
    for part, role in ((billing, "billing export"), (runs, "run export")):
        if part:
            used = f", {part.summary.rows_used:,} rows used"
            joined = f", joined on {join_on}" if role == "run export" and billing else ""
            files.append(f"{part.filename} ({role}{used}{joined})")
    return files


def filter_lines(view: RetroView) -> list[tuple[str, str]]:
    """The filters in force as (label, value): the dates (UTC), teams, projects and pricing, "all" when unset."""
    chosen = view.filters
    start, end = chosen.start, chosen.end
    dates = "no dates" if start is None or end is None else (
        f"{start:%Y-%m-%d} to {end:%Y-%m-%d} (UTC)" + ("" if view.dates_narrowed else ", the whole export"))
    return [("Dates", dates), ("Teams", ", ".join(chosen.teams) if chosen.teams else "all"),
            ("Projects", ", ".join(chosen.projects) if chosen.projects else "all"),
            ("Pricing", ", ".join(chosen.pricing) if chosen.pricing else "all")]


def tile_notes(view: RetroView) -> list[str]:
    """What the page says under its tiles: a low join match, how commitments were treated, the import notes that
    change the figures."""
    amortisation = view.amortisation
    found = [text for text in (match_warning(view.stats), page.commitment_sentence(amortisation, view.currency))
             if text]
    if amortisation.status == "excluded":
        found.append(f"{labels(view.currency)['usd_per_gpu_hour']} excludes commitments: "
                     f"{view.money(amortisation.commitment_usd)} of commitment charges are not spread "
                     "over GPU-hours (the Retrospective page says why and what to import).")
    return [*found, *view.notes]


def _tiles(view: RetroView) -> Tiles:
    numbers = cache.tiles(view)
    stats = view.stats
    with_runs = not stats.billing_missing and not stats.runs_missing
    return Tiles(cost=numbers.cost, gpu_hours=numbers.gpu_hours,
                 per_gpu_hour=numbers.usd_per_gpu_hour, non_gpu_cost=numbers.non_gpu_cost,
                 rows=numbers.rows,
                 per_gpu_hour_note=view.amortisation.label,
                 runs_without_bill_gpu_hours=stats.runs_without_bill_gpu_hours if with_runs else None)


def _spend(view: RetroView, heading: str) -> ReportFigure:
    choices, budget_view = view.choices, view.budget_view
    result = cache.run(SPEND, view)
    quarters, quarter = result.quarters, result.quarter
    if budget_view != WHOLE_EXPORT:
        export_budget = None
    elif quarter is None or quarter == quarters[-1]:
        export_budget = choices.export_budget
    else:  # an earlier quarter's own budget
        export_budget = dict(choices.quarter_budgets).get(quarter_label(quarter))
    budget = budget_for_view(budget_view, export_budget, dict(choices.view_budgets))
    measure = "cost" if choices.metric == "cost" else "GPU-hours"
    running = (f"below it the running total of {quarter_label(quarter)} (the export spans "
               f"{quarter_label(quarters[0])} to {quarter_label(quarters[-1])}; each quarter has its own budget and "
               "forecast)" if quarter and len(quarters) > 1 else "below it the running total")
    notes = [f"{measure.capitalize()} per {FREQUENCIES.get(choices.freq, choices.freq)}, stacked by "
             f"{GROUPINGS.get(choices.by, choices.by)}; {running}.",
             f"Budget drawn ({markdown_text(budget_view)}): {view.money(budget)}." if budget else
             f"No budget drawn for this view ({markdown_text(budget_view)}).",
             page.spread_and_forecast(result.period and result.period[1], result.data_end, result.days)]
    return ReportFigure(heading, figure_of(cache.chart(SPEND, view, page.spend_chart, budget, choices.metric,
                                                       view.currency)), notes=notes)


def _waste(view: RetroView, heading: str) -> ReportFigure:
    result = cache.run(WASTE, view)
    checklist, summary = list(result.checklist), result.summary
    notes = [f"**{markdown_text(check.check)}** ({markdown_text(check.kind)}) — "
             f"{markdown_text(page.check_figure(check, view.currency))}{of_spend}: {markdown_text(check.detail)}"
             for check, of_spend in page.ranked_checks(result)]
    has_waste = retro_gap.has_waste(summary)
    drawn = cache.chart(WASTE, view, page.waste_chart, view.currency) if has_waste else None
    return ReportFigure(heading, None if drawn is None else figure_of(drawn), notes=notes,
                        lead=page.waste_headline(checklist, summary, view.currency),
                        empty=(page.no_amount_waste(checklist, view.currency) if page.unpriced_waste(checklist)
                               else retro_gap.NO_WASTE))


def _gap(view: RetroView, heading: str) -> ReportFigure:
    if view.plan is None:
        return ReportFigure(heading, None, empty="No plan chosen to compare with: pick one on the page's "
                            "Plan vs actual tab.")
    hours_only = view.in_gpu_hours
    result = cache.run(GAP, view)
    parts, summary = result.parts, result.summary
    assert parts is not None and summary is not None  # the view has a plan
    notes = []
    if hours_only:
        notes.append(page.plan_currency_warning(view))
    mismatch = plan_mismatch(summary)
    if mismatch:
        notes.append(mismatch)
    notes.append(page.plan_caption(view, summary))
    runs_text = ", ".join(markdown_text(run) for run in result.main_runs) or "none"
    notes.append(f"Main run: {runs_text}; states counted as failed: "
                 f"{', '.join(markdown_text(state) for state in result.failed_states) or 'none'}.")
    for row in parts.to_dict("records"):
        amount = "" if hours_only or "usd" not in row else f", {money(row['usd'], 'USD')}"
        known = "" if row.get("known", True) else f" (unknown: to know it, import {row.get('needs') or 'more'})"
        note = f" — {row['note']}" if row.get("note") else ""
        notes.append(f"**{markdown_text(row['part'])}**: {count_sig(row['gpu_hours'])} GPU-h{amount}{known}"
                     f"{markdown_text(note)}")
    notes.append(page.attribution_order(hours_only))
    return ReportFigure(heading, figure_of(cache.chart(GAP, view, page.gap_chart, view.currency)), notes=notes)


SECTIONS: dict[str, Callable[[RetroView, str], ReportFigure]] = {"spend": _spend, "waste": _waste, "gap": _gap}
# the report's section of each registry entry that has one (`dashboard.retro.registry.report_figures`), by name


def _report_key(view: RetroView) -> Hashable:
    """What names a report's contents: the view's data and filters, and everything else the report writes."""
    plan = None if view.plan is None else view.plan.model_dump_json()
    return (view.key, view.currencies, view.notes, view.files, view.runs_file, view.join_on, plan, view.choices,
            view.budget_default)


@st.cache_data(max_entries=REPORT_ENTRIES, show_spinner=False, hash_funcs={RetroView: _report_key})
def _report(view: RetroView, minute: str) -> str:
    """The report of ``view``, stamped at `minute` (UTC)."""
    figures = [SECTIONS[entry.name](view, entry.report_section or entry.tab) for entry in report_figures()]
    return retrospective_report(_tiles(view), figures, currency=view.currency,
                                generated_at=datetime.fromisoformat(minute), files=view.files,
                                filters=filter_lines(view), notes=tile_notes(view))


def _weak(value: Any) -> Callable[[], Any]:
    try:
        return weakref.ref(value)
    except TypeError:  # None, or a table type that takes no weak reference, is held as it is
        return lambda: value


def report_data(view: RetroView) -> Callable[[], str]:
    """The download's deferred data: the report of the page's current ``view``, built when the button is pressed
    and stamped with that minute (UTC). The view's tables are held weakly: a view the server released gives a page
    saying so."""
    held = {name: _weak(getattr(view, name)) for name in TABLES}
    rest = {item.name: getattr(view, item.name) for item in fields(view) if item.name not in TABLES}

    def data() -> str:
        tables = {name: ref() for name, ref in held.items()}
        if tables["shown"] is None or tables["usage"] is None:
            return RELEASED
        minute = datetime.now(UTC).replace(second=0, microsecond=0).isoformat()
        return _report(RetroView(**tables, **rest), minute)

    return data


def render_download(view: RetroView) -> None:
    """The "Download the Retrospective report (HTML)" button for the page's current ``view``."""
    st.download_button(BUTTON, data=report_data(view),
                       file_name=f"retrospective-{date.today():%Y-%m-%d}.html", mime="text/html", on_click="ignore",
                       icon=":material/description:",
                       help="The tiles, the spend, waste and plan-vs-actual figures and their notes in one file that "
                       "opens offline and prints on A4, in the bill's currency, for the review meeting.")
