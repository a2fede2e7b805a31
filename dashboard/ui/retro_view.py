"""The Retrospective page's sections: one function per tab, each taking the run's `RetroView` and drawing tables and
charts from `retro_cache`.

Every amount is in the bill's currency (`RetroView.currency`, from `bill_currency`): tiles, table columns, notes and
charts write it as `format.money` does ("$1.2k" for US dollars, "1.2k NOK" for another code). The plan is in US
dollars, so Plan vs actual compares a bill in another currency, or no bill, in GPU-hours only, and says why.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Hashable
from datetime import date
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.figures import retro_gap, retro_usage
from dashboard.format import USD, count_sig, gpu_count, money, money_symbol, number, table_decimals, usd_sig
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.opened import Table
from dashboard.retro import tabs as figure_runs
from dashboard.retro.amortise import Amortisation
from dashboard.retro.budgets import WHOLE_EXPORT, budget_for_view
from dashboard.retro.gap import PARTS, GapSummary, plan_mismatch
from dashboard.retro.join import JoinStats, match_warning
from dashboard.retro.registry import ATTRIBUTION, FIGURES, GAP, LOAD, MIX, SPEND, UNITS, WASTE
from dashboard.retro.results import AttributionResult, GapResult, LoadResult, MixResult, SpendResult, WasteResult
from dashboard.retro.spend import FORECAST_WINDOW_DAYS, MIN_FORECAST_DAYS, quarter_label
from dashboard.retro.units import NEEDS_TOKENS, labels
from dashboard.retro.view import Choices, RetroView, Rollups, export_currencies
from dashboard.retro.waste import ROWS_BEHIND, WasteCheck, WasteSummary
from dashboard.safe_text import markdown_text
from dashboard.ui import calibrate_view, retro_plan
from dashboard.ui import plan_outcomes_view as outcomes_view
from dashboard.ui import retro_cache as cache

ROWS_SHOWN = 500
SLOW = "Computing the {} view…"  # shown only when a tab takes more than half a second (`cache.busy`)
CONTROL_PX = 260  # a budget or quarter control's width in a wrapping row
MULTISELECT_PX = 340  # a multiselect's width in a wrapping row
GROUPINGS = {"team": "Team", "project": "Project", "pricing": "Pricing"}
FREQUENCIES = {"D": "Day", "W": "Week"}
METRICS = {"cost": "Cost", "gpu_hours": "GPU-hours"}


@st.cache_data(max_entries=cache.ENTRIES, show_spinner=False)
def bill_currency(data_key: Hashable, _usage: Table, _rollups: Rollups | None = None) -> tuple[str, ...]:
    """The currency codes of the bill behind ``data_key`` (one DISTINCT query; a workspace dataset's own rows from
    their rollup, `export_currencies`): one code for an import (mixed currencies are refused there), none for a run
    export alone, which carries no prices."""
    return export_currencies(_usage, _rollups)


def mixed_currency_error(codes: tuple[str, ...]) -> str | None:
    """What to say when a bill holds several currencies, whose amounts cannot be added up; None for one."""
    if len(codes) < 2:
        return None
    return (f"This bill mixes currencies ({', '.join(markdown_text(code) for code in codes)}): amounts in different "
            "currencies cannot be added up, so every cost on this page adds unlike amounts (shown as "
            f"“{markdown_text('+'.join(codes))}”). Export each billing currency separately (or convert them "
            "first) and import them one by one.")


def tabs(view: RetroView) -> None:
    """One tab per figure of the registry (`dashboard.retro.registry.FIGURES`), each drawn from the view by its
    section of this module while it is open (a closed tab runs nothing)."""
    names = [entry.tab for entry in FIGURES]
    for entry, tab in zip(FIGURES, st.tabs(names, key="retro.view", bind="query-params"), strict=True):
        with tab, cache.busy(SLOW.format(entry.tab), view.input_rows):
            if tab.open:
                getattr(sys.modules[__name__], entry.page_section)(view)
                read = figure_runs.source(entry, view)[1]  # the table this figure's queries read (issue 52)
                if read:
                    st.caption(f"Answered from {markdown_text(read)}")


def wrapping_row(vertical_alignment: Literal["top", "center", "bottom"] = "top") -> Any:
    """A row of controls or tiles side by side where they fit and wrapped onto the next line where they do not (at
    800 px, beside the sidebar), so that none is cut."""
    return st.container(horizontal=True, gap="medium", vertical_alignment=vertical_alignment)


def plan_currency_warning(view: RetroView) -> str:
    """Why Plan vs actual compares GPU-hours only: a bill in another currency than the plan's US dollars, or no
    bill at all (a run export alone carries no prices)."""
    currency = view.currency
    if currency is None:
        return ("No billing export is loaded (or it carries no prices), so the gap is compared in GPU-hours: the "
                "plan's dollars have no billed amount to be compared with. Choose or upload a billing export under "
                "*Change data* to compare costs.")
    return (f"The plan is priced in US dollars and this bill in {markdown_text(currency)}: a difference of US dollars "
            f"and {markdown_text(currency)} is not a number without an exchange rate, so the gap is compared in "
            "GPU-hours, which have no currency. Amounts of the bill stay in its own currency.")


def cost_label(label: str, currency: str | None) -> str:
    """A column or control label with the bill's currency: "Cost ($)", "Cost (NOK)", "Cost" without one."""
    return f"{label} ({money_symbol(currency)})" if currency else label


def money_column(label: str, values: pd.Series, currency: str | None = USD) -> Any:
    """A column of sums in the bill's currency: thousands separated, whole units once an entry reaches 1,000
    (`table_decimals`); "$" in front for US dollars, the code after the figure for another currency."""
    decimals = table_decimals(values)
    if currency == USD:
        return st.column_config.NumberColumn(label, format="dollar", step=10.0 ** -decimals)
    suffix = f" {currency}" if currency else ""
    return st.column_config.NumberColumn(label, format=f"%,.{decimals}f{suffix}", step=10.0 ** -decimals)


def hours_column(label: str, values: pd.Series) -> Any:
    """A GPU-hours column: thousands separated, whole hours once an entry reaches 1,000."""
    return st.column_config.NumberColumn(label, format=f"%,.{table_decimals(values)}f")


def check_figure(check: WasteCheck, currency: str | None = USD) -> str:
    """A waste check's figure with its unit: 22 % of GPU-hours, $73.2k (73.2k NOK), $368 per month, 68.7
    GPU-hours. The checks call the bill's amounts "USD" whatever the bill's currency."""
    figure, unit = check.figure, check.unit
    if figure is None:
        return "not answerable from this export"
    if unit.startswith("%"):
        return f"{figure:.0f} {unit}"
    if unit == "USD":
        return money(figure, currency)
    if unit == "USD/month":
        return f"{money(figure, currency)} per month"
    return f"{count_sig(figure)} {unit}"


def match_caption(stats: JoinStats) -> str:
    """One sentence on how well the billing and run exports matched."""
    if stats.billing_missing and stats.runs_missing:
        return "No export loaded."
    if stats.runs_missing:
        return "Billing export only: run states, tokens and failures need a run export."
    if stats.billing_missing:
        return "Run export only: costs are valued at the plan's $/GPU-hour where needed."
    billing_share = stats.billing_gpu_hours_matched_share
    runs_share = stats.runs_gpu_hours_matched_share
    text = (f"Joined on **{stats.on}**: {number(billing_share or 0, 'fraction')} of billed GPU-hours and "
            f"{number(runs_share or 0, 'fraction')} of the run export's GPU-hours found a match "
            f"({stats.keys_matched} keys).")
    if stats.runs_gpu_hours_beyond_billing > 0.5:
        text += (f" {count_sig(stats.runs_gpu_hours_beyond_billing)} run-export GPU-hours beyond the bill of "
                 "their key and day are left out (the bill says what was paid for).")
    return text


def _unused_rows(export: Any) -> str:
    """Where an export's rows went, when none is used: "of its 1 row, 1 rejected (line 2: PreTaxCost is empty)"."""
    summary = export.summary
    read, rejected, excluded = summary.rows_read, summary.rows_rejected, summary.rows_excluded
    parts = []
    if rejected:
        first = summary.rejected_sample[0] if summary.rejected_sample else None
        parts.append(f"{rejected:,} rejected" + (f" (line {first.line}: {markdown_text(first.reason)})"
                                                 if first else ""))
    if excluded:
        rule = max(summary.excluded_by_rule.items(), key=lambda item: item[1], default=None)
        parts.append(f"{excluded:,} excluded" + (f" ({markdown_text(rule[0])})" if rule else ""))
    rows = f"{read:,} row{'' if read == 1 else 's'}"
    return f"**{markdown_text(export.filename)}** holds no row the Retrospective can use: of its {rows}, " + (
        " and ".join(parts) or "none was kept") + "."


def unmatched_tokens(view: RetroView) -> str | None:
    """Markdown: why the view has no tokens although its run export counts them (its runs with tokens matched no
    billed row of the view on the join key); None when the view has tokens, or there is no run export."""
    runs_filename = view.runs_file
    if runs_filename is None or view.runs is None:
        return None
    if not cache.counts_tokens((view.data_key, "runs"), view.runs) or cache.counts_tokens(view.key, view.shown):
        return None
    other = "project" if view.join_on == "run_id" else "run_id"
    return (f"**{markdown_text(runs_filename)}** counts tokens, but none of its runs with tokens matched a billed row "
            f"of this view on **{view.join_on}**, so their tokens are not in it. Try *Join billing and runs on*: "
            f"**{other}** in the sidebar.")


def import_note(filename: str, warning: str) -> str:
    """Markdown: an import note under its file's name, without the note's own "In <file>, " opening (the name is
    already in front of it)."""
    opening = f"In {filename}, "
    if warning.startswith(opening) and len(warning) > len(opening):
        rest = warning[len(opening):]
        warning = rest[0].upper() + rest[1:]
    return f"**{markdown_text(filename)}**: {markdown_text(warning)}"


def no_rows_message(billing: Any, runs: Any, none_choice: str) -> str:
    """Why an unfiltered view is empty: where the rows of each export that kept none went, where to see them all,
    and, when the bill is the empty one beside a run export that has rows, how to see the runs alone (the page
    follows the bill)."""
    loaded = [export for export in (billing, runs) if export]
    empty = [export for export in loaded if not export.summary.rows_used] or loaded
    text = " ".join(_unused_rows(export) for export in empty) + (
        " The Import usage page lists every rejected and excluded row with its reason.")
    if billing and not billing.summary.rows_used and runs and runs.summary.rows_used:
        text += (f" The page follows the bill: to see **{markdown_text(runs.filename)}** alone, remove "
                 f"**{markdown_text(billing.filename)}** and choose {none_choice} as the billing export.")
    return text


def commitment_sentence(info: Amortisation, currency: str | None = USD) -> str | None:
    """How commitments enter the figures, for the caption beside the $/GPU-hour tile (None without any)."""
    status = info.status
    if status == "amortised":
        text = (f"Commitments amortised here: {money(info.commitment_usd, currency)} of commitment charges billed "
                f"on their own lines were spread evenly over the days each covers (until the next charge; a one-off "
                f"purchase over the rest of the export) and each day's share over that day's "
                f"{count_sig(info.covered_gpu_hours)} reserved GPU-hours, which the export showed at "
                f"{money(0.0, currency)}. {money(info.spread_usd, currency)} went onto GPU-hours; "
                f"{money(info.unused_usd, currency)} fell on days with no reserved usage and stays as unused "
                "commitment (Waste → Idle capacity).")
        if info.after_export_usd > 0.5:
            text += (f" {money(info.after_export_usd, currency)} covers days after the export ends and is left "
                     "out of this period's cost.")
        return text
    if status == "provider":
        return (f"Commitments amortised by the provider (effective cost): reserved GPU rows carry their share; "
                f"{money(info.unused_usd, currency)} of commitment nobody used is on its own lines (Waste → Idle "
                "capacity).")
    return None


def _tile_notes(view: RetroView) -> None:
    """The warnings and notes that change a tile's figure, right under the tiles."""
    stats, amortisation, currency = view.stats, view.amortisation, view.currency
    warning = match_warning(stats)
    if warning:
        st.warning(warning, icon=":material/link_off:")
    per_hour = labels(currency)["usd_per_gpu_hour"]
    if amortisation.status == "excluded":
        st.warning(f"{per_hour} excludes commitments: {money(amortisation.commitment_usd, currency)} of "
                   "commitment charges have no reserved GPU usage in this export to spread them over, so reserved "
                   "capacity looks free. Export the provider's amortised cost (FOCUS EffectiveCost, Azure amortized "
                   "cost) or include the reserved usage.", icon=":material/warning:")
    sentence = commitment_sentence(amortisation, currency)
    if sentence:
        st.caption(sentence)
    for note in view.notes:
        st.caption(note)


def tiles(view: RetroView) -> None:
    """Headline numbers of the filtered view in the bill's currency, with what changes them beside them."""
    stats, amortisation, currency = view.stats, view.amortisation, view.currency
    numbers = cache.tiles(view)  # cached: no pass over the table on a rerun
    label = amortisation.label
    with_runs = not stats.billing_missing and not stats.runs_missing
    # Side by side where they fit and wrapped where they do not, each as wide as its value, so nothing is cut off;
    # how commitments were treated is the line under $/GPU-hour's value.
    tiles = wrapping_row()
    tiles.metric("Cost", money(numbers.cost, currency), width="content",
                 help="Sum of the cost column, commitments amortised where the export allows, credits and "
                 "fees included; n/a when no row carries a price (a run export alone).")
    tiles.metric("GPU-hours", count_sig(numbers.gpu_hours), width="content",
                 help="Billed GPU-hours when a billing export is loaded; a run export's hours without a bill "
                 "are never added to them.")
    tiles.metric(labels(currency)["usd_per_gpu_hour"], money(numbers.usd_per_gpu_hour, currency), label or None,
                 delta_color="off", delta_arrow="off", width="content",
                 help="Cost of rows with GPU-hours / their GPU-hours. " + numbers.reasons.get(
                     "usd_per_gpu_hour", ""))
    tiles.metric("Non-GPU cost", money(numbers.non_gpu_cost, currency), width="content",
                 help="Storage, network, support, tax, credits and unused commitment: rows without GPU-hours.")
    tiles.metric("Rows", f"{numbers.rows:,}", width="content")
    if with_runs:
        tiles.metric("Runs without a bill", f"{count_sig(stats.runs_without_bill_gpu_hours)} GPU-h", width="content",
                     help=f"{stats.runs_without_bill_rows:,} run-export rows whose "
                     f"{stats.on} has no billed GPU-hours: shown apart, never added to the bill.")
    _tile_notes(view)


def period_days(key: Hashable, usage: Table) -> tuple:
    """The first and last UTC day of an export's periods (None, None for an empty one)."""
    bounds = cache.options(key, usage)
    return bounds.start, bounds.end


def overlap_warning(billing_key: Hashable, billing: Table, runs_key: Hashable,
                    runs: Table) -> str | None:
    """Markdown: a run export whose days do not overlap the bill's, with both periods ("the run export covers
    2026-01-01 to 2026-03-31, the bill 2020-11-08 to 2020-11-11: no overlap, nothing can match"); None when they
    overlap or either has no dates."""
    bill_start, bill_end = period_days(billing_key, billing)
    runs_start, runs_end = period_days(runs_key, runs)
    if None in (bill_start, bill_end, runs_start, runs_end):
        return None
    if runs_start <= bill_end and bill_start <= runs_end:
        return None
    return (f"The run export covers {runs_start:%Y-%m-%d} to {runs_end:%Y-%m-%d}, the bill {bill_start:%Y-%m-%d} to "
            f"{bill_end:%Y-%m-%d}: no overlap, nothing can match. Choose the run export of the bill's period, or "
            "none.")


QUARTER = "retro.quarter"  # the quarter whose running total, budget and forecast are drawn
EXPORT_BUDGET = "retro.budget"  # the latest quarter's budget for the whole export (the link's `retro.budget`)
QUARTER_BUDGETS = "retro.quarter_budgets"  # earlier quarters' whole-export budgets by label ("2025 Q1")


def page_choices(join_on: str, budget_default: float | None) -> Choices:
    """The widgets' current choices for the figures, read once per run when the view is made (a widget whose tab is
    closed gives its default; the whole export's budget `budget_default`, which is none beside a bill of the
    user's own)."""
    state = st.session_state
    main_runs = state.get(f"retro.main_runs.{join_on}")
    budget = state.get(EXPORT_BUDGET, budget_default)
    return Choices(
        freq=state.get("retro.freq") or "D", by=state.get("retro.by") or "team",
        metric=state.get("retro.metric") or "cost",
        export_budget=None if budget is None else float(budget),
        view_budgets=tuple(sorted((str(k), float(v)) for k, v in state.get("retro.view_budgets", {}).items())),
        quarter=state.get(QUARTER),
        quarter_budgets=tuple(sorted((str(k), float(v)) for k, v in state.get(QUARTER_BUDGETS, {}).items())),
        main_runs=None if main_runs is None else tuple(main_runs),
        failed_states=tuple(state.get("retro.failed_states", FAILED_STATES)),
        gap_unit=state.get("retro.gap_unit") or "usd",
    )


def spend_section(view: RetroView) -> None:
    """Spend per period and, below it, the running total against the budget of this view (``budgets``) for one
    calendar quarter of the export (a picker when it spans several: each quarter has its own budget and forecast),
    in the bill's currency (the budget too). The whole export's latest quarter's budget is the view's
    ``budget_default`` until one is typed: the bundled quarter's, or 0 (none) beside a bill of the user's own."""
    currency, budget_view = view.currency, view.budget_view
    default_budget = view.budget_default or 0.0
    controls = wrapping_row()
    freq = controls.segmented_control("Period", list(FREQUENCIES), default="D", format_func=FREQUENCIES.__getitem__,
                                  key="retro.freq", bind="query-params") or "D"
    by = controls.segmented_control("Stack by", list(GROUPINGS), default="team", format_func=GROUPINGS.__getitem__,
                                  key="retro.by", bind="query-params") or "team"
    metric = controls.segmented_control("Measure", list(METRICS), default="cost",
                                     format_func=lambda name: cost_label(METRICS[name], currency)
                                     if name == "cost" else METRICS[name],
                                     key="retro.metric", bind="query-params") or "cost"
    view = chosen(view, freq=freq, by=by, metric=metric)
    quarters = list(cache.run(SPEND, view).quarters)
    budget_column = wrapping_row(vertical_alignment="bottom")
    if len(quarters) > 1:
        names = [quarter_label(quarter) for quarter in quarters]
        budget_column.selectbox("Quarter of the running total", names, index=len(names) - 1, key=QUARTER,
                                bind="query-params", help="The export spans several calendar quarters: each has its "
                                "own running total, budget and forecast (only the last can still be open).",
                                width=CONTROL_PX)
    spent = chosen(view, quarter=st.session_state.get(QUARTER))
    result = cache.run(SPEND, spent)
    quarter = result.quarter
    name = quarter_label(quarter) if quarter and len(quarters) > 1 else "Quarter"
    view_budgets = st.session_state.setdefault("retro.view_budgets", {})
    if budget_view == WHOLE_EXPORT and (quarter is None or quarter == quarters[-1]):
        start_value: dict[str, Any] = {} if EXPORT_BUDGET in st.session_state else {"value": float(default_budget)}
        export_budget = budget_column.number_input(
            cost_label(f"{name} budget, whole export", currency), min_value=0.0, step=50_000.0, format="%.0f",
            key=EXPORT_BUDGET, bind="query-params", width=CONTROL_PX, **start_value,
            help="Drawn against the running total of the whole export; a filtered view has its own budget.")
    elif budget_view == WHOLE_EXPORT:  # an earlier quarter: its budget is kept while another quarter is shown
        quarter_budgets = st.session_state.setdefault(QUARTER_BUDGETS, {})
        quarter_budgets[name] = export_budget = budget_column.number_input(
            cost_label(f"{name} budget, whole export", currency), min_value=0.0,
            value=float(quarter_budgets.get(name, 0.0)), step=50_000.0, format="%.0f", key=f"{EXPORT_BUDGET}.{name}",
            width=CONTROL_PX,
            help="Drawn against this quarter's running total of the whole export.")
    else:
        export_budget = None
        view_budgets[budget_view] = budget_column.number_input(
            cost_label("Budget for this view", currency), min_value=0.0,
            value=float(view_budgets.get(budget_view, 0.0)), step=10_000.0, format="%.0f",
            key=f"retro.view_budget.{budget_view}", width=CONTROL_PX,
            help=f"A budget for {budget_view} only (0: none). The whole export's budget is not drawn over a part of "
            "it.")
    budget = budget_for_view(budget_view, export_budget, view_budgets)
    budget_column.caption(f"Budget drawn: {money(budget, currency)}" if budget else "No budget drawn for this view.")
    st.plotly_chart(cache.chart(SPEND, spent, spend_chart, budget, metric, currency), width="stretch",
                    key="retro.spend")
    st.caption(spread_and_forecast(result.period and result.period[1], result.data_end, result.days))


def spend_chart(result: SpendResult, budget: float | None, metric: str, currency: str | None) -> go.Figure:
    """The spend figure of ``result``, with the ``budget`` drawn over a running total of cost."""
    return retro_usage.spend_figure(result.frame, result.cumulative, budget if metric == "cost" else None,
                                    metric=metric, currency=currency)


def chosen(view: RetroView, **values: Any) -> RetroView:
    """``view`` with this run's values of the widgets just drawn in its choices (a widget bound to the link gives
    its value when drawn): the same choices give the same cached result (`retro_cache.run`)."""
    return dataclasses.replace(view, choices=dataclasses.replace(view.choices, **values))


def spread_and_forecast(period_end: date | None, data_end: date | None, days: int) -> str:
    """The spend chart's note: how rows spanning days are spread, and whether (and how) the rest is forecast
    (never from fewer than `MIN_FORECAST_DAYS` ``days`` of data)."""
    closed = data_end is None or period_end is None or data_end >= period_end
    if closed:
        forecast = "No forecast: the export covers the period to its last day."
    elif days < MIN_FORECAST_DAYS:
        forecast = (f"No forecast: the data cover {days} day{'' if days == 1 else 's'}, fewer than the "
                    f"{MIN_FORECAST_DAYS} a run rate needs to be continued to the quarter's end.")
    else:
        forecast = (f"Forecast: the export ends on {data_end:%d %b %Y}, before the quarter does; the band is the "
                    f"mean daily spend of the last {FORECAST_WINDOW_DAYS} days continued to the quarter's end ± 1.28 "
                    "standard deviations × √days (80 %).")
    return ("Rows spanning several days (monthly storage, multi-day jobs) are spread over those days in "
            f"proportion to time. {forecast}")


def attribution_section(view: RetroView) -> None:
    currency = view.currency
    table = cache.run(ATTRIBUTION, view).table
    st.plotly_chart(cache.chart(ATTRIBUTION, view, attribution_chart, currency), width="stretch",
                    key="retro.attribution")
    st.caption("Team → project → run. Spend with no team, project or run tag is its own “(untagged)” box.")
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "gpu_hours": hours_column("GPU-hours", table["gpu_hours"]),
        "cost": money_column(cost_label("Cost", currency), table["cost"], currency),
        "cost_share": st.column_config.ProgressColumn("Share of cost", format="percent", min_value=0, max_value=1),
        "gpu_hours_share": st.column_config.NumberColumn("Share of GPU-hours", format="percent"),
    })


def attribution_chart(result: AttributionResult, currency: str | None) -> go.Figure:
    return retro_usage.attribution_figure(result.table, currency=currency)


def plan_caption(view: RetroView, summary: GapSummary) -> str:
    """What the plan compared with is, in GPU-hours and its dollars."""
    return (f"Plan: **{markdown_text(view.plan_label)}** — {count_sig(summary.plan_gpu_hours)} GPU-hours at "
            f"{plan_money(summary.plan_price_per_gpu_hour, view)}/GPU-hour = "
            f"{plan_money(summary.plan_usd, view)} of GPU compute (its "
            f"{plan_money(summary.plan_non_gpu_usd_excluded, view)} of non-GPU line items are not compared).")


def attribution_order(in_gpu_hours: bool) -> str:
    """How the parts add up, and in which order interactions are attributed."""
    if in_gpu_hours:
        return (f"The {len(PARTS)} parts add up exactly to actual − plan in GPU-hours. Order of attribution: scale "
                "is valued at the plan's efficiency, so the scale × efficiency interaction lands in efficiency; price "
                "is not compared across currencies (Method & sources, §8).")
    return (f"The {len(PARTS)} parts add up exactly to actual − plan. Order of attribution: scale is valued at the "
            "plan's efficiency, so the scale × efficiency interaction lands in efficiency; hour parts are priced at "
            "the plan's $/GPU-hour, so the price × volume interaction lands in price (Method & sources, §8).")


def plan_money(value: float | None, view: RetroView) -> str:
    """An amount of the plan, which is in US dollars: "$1.2k" beside a bill in dollars or no bill, "1.2k USD"
    beside a bill in another currency (whose amounts have the code after them too, so the two are not confused)."""
    return f"{count_sig(value)} USD" if view.foreign else usd_sig(value)


def plan_vs_actual_section(view: RetroView) -> None:
    """The Plan vs actual tab: the plan's picker, the comparison, the outcomes kept and the inputs measured."""
    plan, plan_choice = retro_plan.plan_picker()
    decomposed = None
    if plan is not None:
        compared = dataclasses.replace(view, plan=plan)
        result = gap_section(compared, unmatched_tokens(view))
        if not view.in_gpu_hours and result.parts is not None and result.summary is not None:
            decomposed = result.parts, result.summary
        outcomes_view.record_button(compared, result, retro_plan.saved_name(plan_choice))
    elif plan_choice == retro_plan.PLAN_NONE:
        st.info(retro_plan.no_plan_note(retro_plan.plan_dropped()))
    outcomes_view.summary("retro")
    start, end = view.filters.start, view.filters.end
    calibrate_view.section((view.key, "calibration"), view.narrowed_side(view.billing), view.narrowed_side(view.runs),
                           plan, view.join_on, (start, end) if start and end else None, decomposed,
                           view.run_params, None if view.narrowed else view.rollups)


def unit_costs_section(view: RetroView) -> None:
    """The Unit costs tab, with the plan of Plan vs actual (MFU needs its model)."""
    plan, plan_choice = retro_plan.plan_picker()
    if plan is None and plan_choice == retro_plan.PLAN_NONE:
        st.caption(retro_plan.no_plan_note(retro_plan.plan_dropped()))
    units_section(dataclasses.replace(view, plan=plan), unmatched_tokens(view))


def gap_section(view: RetroView, tokens_note: str | None = None) -> GapResult:
    """Plan vs actual of the view's plan. The main-run choice starts at a suggestion that follows the join
    key: the run with the most GPU-hours, or every run of the project with the most GPU-hours when joined on
    project (W&B). `tokens_note` (`unmatched_tokens`) says why efficiency is unknown when the run export does count
    tokens. The plan is in US dollars: a bill in another currency, or no bill, is compared in GPU-hours only, with a
    warning saying why, and no dollar gap is shown (`RetroView.in_gpu_hours`). Returns the comparison drawn (its
    parts and summary: for the next plan to carry, and to keep)."""
    join_on, currency = view.join_on, view.currency
    hours_only = view.in_gpu_hours
    result = cache.run(GAP, view)
    row = wrapping_row()
    main_runs = row.multiselect("Main run (run ids)", list(result.run_ids), default=list(result.suggestion),
                                key=f"retro.main_runs.{join_on}", width=MULTISELECT_PX,
                                help="The pretraining run the plan describes; other runs count "
                                "as experiments. Suggested: the run with the most GPU-hours, or with a project join "
                                "every run of the largest project.")
    failed = st.pills("States counted as failed", list(FAILED_STATES), selection_mode="multi",
                      default=list(FAILED_STATES), key="retro.failed_states",  # pills wrap: none is hidden
                      help="A segment in one of these states that its run resumed after (the same run id "
                      "continuing within a day on as many GPUs) is an interruption: only the work since its "
                      "last checkpoint and the restart count as lost. Any other is failed, work lost.")
    if hours_only:
        unit = "gpu_hours"
        row.caption(f"Unit: GPU-hours (the bill is in {markdown_text(currency)}, the plan in US dollars)"
                    if currency else "Unit: GPU-hours (no bill)")
    else:
        unit = row.segmented_control("Unit", ["usd", "gpu_hours"], default="usd", key="retro.gap_unit",
                                     format_func={"usd": "$", "gpu_hours": "GPU-hours"}.__getitem__) or "usd"
    drawn = (tuple(main_runs), tuple(failed), unit)
    if drawn != (result.main_runs, result.failed_states, result.unit):
        view = chosen(view, main_runs=drawn[0], failed_states=drawn[1], gap_unit=unit)
        result = cache.run(GAP, view)
    parts, summary = result.parts, result.summary
    assert parts is not None and summary is not None  # the view has a plan
    if hours_only:
        st.warning(plan_currency_warning(view), icon=":material/currency_exchange:")
    mismatch = plan_mismatch(summary)
    if mismatch:
        st.warning(mismatch, icon=":material/compare_arrows:")
    st.caption(plan_caption(view, summary))
    st.plotly_chart(cache.chart(GAP, view, gap_chart, currency), width="stretch", key="retro.gap")
    st.dataframe(parts.drop(columns="usd", errors="ignore") if hours_only else parts, hide_index=True,
                 width="stretch", column_config={
        "gpu_hours": hours_column("GPU-hours", parts["gpu_hours"]),
        **({} if hours_only else {"usd": money_column("$", parts["usd"])}),
        "known": st.column_config.CheckboxColumn("Known"),
        "needs": st.column_config.TextColumn("To know it, import"),
    })
    efficiency = parts.loc[parts["part"] == "efficiency"]
    if tokens_note and len(efficiency) and not bool(efficiency["known"].iloc[0]):
        st.caption(f"Efficiency needs the main run's tokens: {tokens_note}")
    st.caption(attribution_order(hours_only))
    return result


def gap_chart(result: GapResult, currency: str | None) -> go.Figure:
    """The waterfall of a comparison with a plan, in its unit."""
    assert result.parts is not None and result.summary is not None
    summary = result.summary
    plan_total, actual_total = ((summary.plan_usd, summary.actual_usd) if result.unit == "usd"
                                else (summary.plan_gpu_hours, summary.actual_gpu_hours))
    return retro_gap.gap_figure(result.parts, plan_total, actual_total, unit=result.unit, currency=currency)


def unpriced_waste(checklist: list[WasteCheck]) -> list[WasteCheck]:
    """The waste checks that found something the view cannot price (a run export alone carries no costs)."""
    return [check for check in checklist if check.kind == "waste" and check.usd is None and check.figure]


def waste_headline(checklist: list[WasteCheck], summary: WasteSummary, currency: str | None) -> str:
    """The Waste tab's headline: the amount found and its share of spend, or that the waste found has no amount."""
    if not retro_gap.has_waste(summary) and unpriced_waste(checklist):
        return "Waste found in GPU-hours only: this view has no costs to price it"
    share = "" if summary.share is None else f", {number(summary.share, 'fraction')} of spend"
    return f"Waste found: {money(summary.total_usd, currency)}{share}"


def no_amount_waste(checklist: list[WasteCheck], currency: str | None) -> str:
    """Said instead of the waste chart when what was found has no amount: each such check with its figure."""
    found = "; ".join(f"{check.check}: {check_figure(check, currency)}" for check in unpriced_waste(checklist))
    return (f"Nothing to chart in money, but waste was found: {found}. Add a billing export to price it (each "
            "check below has its rows).")


def waste_section(view: RetroView) -> None:
    """The waste found, in the bill's currency: the headline, three tiles, the chart (or one line saying none
    was found, rather than empty axes) and each check with the rows behind it, read when the user asks for them
    (a toggle in its expander); an interruption's loss follows the view's plan (its checkpoint interval and
    restart)."""
    currency = view.currency
    result = cache.run(WASTE, view)
    checklist, summary = list(result.checklist), result.summary
    st.subheader(waste_headline(checklist, summary, currency))
    by_id = {check.id: check for check in checklist}
    kpi = by_id["successful_runs"]
    tiles = wrapping_row()  # side by side where they fit, else wrapped: never cut
    tiles.metric("Successful-run share", check_figure(kpi, currency) if kpi.figure is not None else "n/a",
                 width="content", help="A KPI, not waste: " + kpi.detail)
    growth = by_id["storage_growth"]
    tiles.metric("Storage growing", f"{money(growth.usd, currency)} a month" if growth.usd else
                 "none found", width="content", help="A monthly cost that keeps growing, shown apart from the "
                 "one-off amounts above.")
    untagged = by_id["untagged_spend"]
    tiles.metric("Untagged spend (hygiene)",
                 money(untagged.usd, currency) if untagged.usd is not None else "n/a", width="content",
                 help="Not waste: spend nobody can be asked about. " + untagged.detail)
    if retro_gap.has_waste(summary):
        st.plotly_chart(cache.chart(WASTE, view, waste_chart, currency), width="stretch", key="retro.waste")
    elif unpriced_waste(checklist):
        st.warning(no_amount_waste(checklist, currency), icon=":material/money_off:")
    else:
        st.info(retro_gap.NO_WASTE, icon=":material/check_circle:")
    for check, share in ranked_checks(result):
        with st.expander(f"**{check.check}** ({check.kind}) — {check_figure(check, currency)}{share}",
                    expanded=False):
            st.markdown(markdown_text(check.detail))
            rows = check.rows
            if rows is None and check.behind is not None and st.toggle(
                    "Show the rows behind this figure", key=f"retro.waste.rows.{check.id}",
                    help=f"Reads at most {ROWS_BEHIND:,} of the rows behind it."):
                rows = cache.rows_behind(view, check.behind)
            if rows is not None and len(rows):
                more = "at least " if len(rows) >= ROWS_BEHIND else ""
                st.caption(f"{more}{len(rows):,} rows behind this figure (first {min(len(rows), ROWS_SHOWN):,} "
                      "shown).")
                st.dataframe(rows.head(ROWS_SHOWN), hide_index=True, width="stretch")
            elif rows is not None and check.rows is None:  # read when asked, and none found
                st.caption("No rows behind this figure.")


def ranked_checks(result: WasteResult) -> list[tuple[WasteCheck, str]]:
    """The waste checks as the tab and the report list them, waste first and largest first, each with its share of
    the view's spend (" · 4 % of spend"; "" for a check without an amount, not waste, or a view without spend)."""
    total_cost = result.total_cost
    ranked = sorted(result.checklist, key=lambda check: (check.kind != "waste", -(check.usd or 0.0)))
    return [(check, f" · {number(check.usd / total_cost, 'fraction')} of spend"
             if check.usd is not None and check.kind == "waste" and total_cost > 0 else "") for check in ranked]


def waste_chart(result: WasteResult, currency: str | None) -> go.Figure:
    return retro_gap.waste_figure(list(result.checklist), result.summary, currency=currency)


def no_gpu_rows(view: RetroView) -> str | None:
    """One line for a view with no GPU-hours (a bill without GPU rows: Azure EA storage, a Kubernetes cost
    export), said instead of charts that would be empty or NaN; None when the view has GPU-hours."""
    if cache.tiles(view).gpu_hours > 0:
        return None
    return ("No GPU-hours in this view: its rows bill no GPU time (storage, network, CPU or other services), so "
            "there is no GPU load or pricing tier to show. Spend and Attribution show its cost.")


def load_section(view: RetroView) -> None:
    none = no_gpu_rows(view)
    if none:
        st.info(none, icon=":material/info:")
        return
    result = cache.run(LOAD, view)
    summary = result.summary
    tiles = wrapping_row()  # side by side where they fit, else wrapped: never cut
    tiles.metric("Peak GPUs", gpu_count(summary.peak_gpus), width="content")
    tiles.metric("Mean GPUs", gpu_count(summary.mean_gpus), width="content")
    tiles.metric("95th percentile", gpu_count(summary.p95_gpus), width="content")
    ratio = summary.peak_to_mean
    tiles.metric("Peak / mean", f"{ratio:,.2f}×" if ratio is not None and math.isfinite(ratio) else "n/a",
                 width="content",
                 help="Reserving for the mean queues work at the peak; reserving for the peak pays for idle "
                 "capacity the rest of the time.")
    capacity = summary.reserved_capacity_gpus
    tiles.metric("Reserved capacity", f"{gpu_count(capacity)} GPUs" if capacity else "none", width="content",
                 help="The most reserved GPUs in use in any hour (the export does not state the reservation's "
                 "size, so this is a lower bound)." + (
                     f" Idle reserved: {count_sig(summary.idle_reserved_gpu_hours)} GPU-hours, shaded."
                     if capacity else ""))
    st.plotly_chart(cache.chart(LOAD, view, load_chart), width="stretch", key="retro.load")
    st.plotly_chart(cache.chart(LOAD, view, heatmap_chart), width="stretch", key="retro.heatmap")
    st.caption("Each row's GPU-hours are spread evenly over its period, so daily billing lines show as flat "
               "days; a run export gives the real shape within a day.")


def load_chart(result: LoadResult) -> go.Figure:
    return retro_usage.load_figure(result.series, result.summary, result.reserved,
                                   result.summary.reserved_capacity_gpus)


def heatmap_chart(result: LoadResult) -> go.Figure:
    return retro_usage.hour_of_week_figure(result.hour_of_week)


def mix_section(view: RetroView) -> None:
    """Shares by pricing tier and a what-if mix, from the billing export (the join blurs tiers across a run), in
    the bill's currency."""
    if view.billing is None:
        st.info("Pricing tiers come from a billing export: choose or upload one above.")
        return
    none = no_gpu_rows(view)
    if none:
        st.info(none, icon=":material/info:")
        return
    currency, shares = view.currency, cache.run(MIX, view).shares
    if shares is None:  # no bill: said above
        return
    st.plotly_chart(cache.chart(MIX, view, mix_chart, currency), width="stretch", key="retro.mix")
    per_hour = labels(currency)["usd_per_gpu_hour"]
    st.dataframe(shares, hide_index=True, width="stretch", column_config={
        "gpu_hours": hours_column("GPU-hours", shares["gpu_hours"]),
        "gpu_hours_share": st.column_config.NumberColumn("GPU-hour share", format="percent"),
        "cost_share": st.column_config.NumberColumn("Cost share", format="percent"),
        "usd_per_gpu_hour": (st.column_config.NumberColumn(per_hour, format="dollar") if currency == USD else
                             st.column_config.NumberColumn(per_hour, format=f"%,.2f {currency or ''}".rstrip())),
        "cost": money_column(cost_label("Cost", currency), shares["cost"], currency),
    })
    st.subheader("What if the quarter had used another mix?")
    left, right = st.columns(2)
    actual = shares.set_index("pricing")["gpu_hours_share"].fillna(0.0)
    reserved = left.slider("Reserved share (%)", 0, 100, int(round(100 * actual.get("reserved", 0.0))),
                           key="retro.mix_reserved", bind="query-params", help="Starts at the quarter's own share.")
    spot = right.slider("Spot share (%)", 0, 100, int(round(100 * actual.get("spot", 0.0))), key="retro.mix_spot",
                        bind="query-params", help="Starts at the quarter's own share; on-demand is the rest.")
    if reserved + spot > 100:
        st.error(f"Reserved {reserved} % + spot {spot} % exceeds 100 %: lower one of them (on-demand is the rest).")
        return
    result = cache.cost_at_mix((view.data_key, "billing", view.filters), figure_runs.bill_read(MIX, view),
                               reserved / 100, spot / 100)
    if result.reason:
        st.info(result.reason)
        return
    columns = st.columns(3)
    columns[0].metric("GPU cost as billed", money(result.actual_gpu_cost, currency))
    saving = result.saving
    columns[1].metric("At this mix", money(result.gpu_cost_at_mix, currency),
                      money(-saving, currency) if saving and math.isfinite(saving) else None, delta_color="inverse")
    columns[2].metric(f"Blended {per_hour}", money(result.blended_usd_per_gpu_hour, currency))
    st.caption(f"Each tier is priced at the {per_hour} the quarter actually paid for it (the engine's "
               "purchase-mix model), commitments amortised onto reserved hours as in the tiles; a tier the quarter "
               "never used has no price.")


def mix_chart(result: MixResult, currency: str | None) -> go.Figure:
    assert result.shares is not None  # a view with a bill
    return retro_usage.mix_figure(result.shares, currency=currency)


def units_section(view: RetroView, tokens_note: str | None = None) -> None:
    """Unit costs in the bill's currency; `tokens_note` (`unmatched_tokens`) says why the token figures are
    missing when the run export counts tokens but none reached the view. The view's plan gives only its model's
    active parameters (for MFU, which has no currency; n/a without a plan); a bill in another currency than the
    plan's US dollars is said."""
    plan, currency = view.plan, view.currency
    numbers = cache.run(UNITS, view).numbers
    names = labels(currency)
    if view.foreign:
        st.warning(f"These unit costs are in {markdown_text(currency)}, the bill's currency; the plan's prices are "
                   "in US dollars, so compare them only after converting at your exchange rate.",
                   icon=":material/currency_exchange:")
    columns = st.columns(3)
    columns[0].metric(names["usd_per_gpu_hour"], money(numbers.usd_per_gpu_hour, currency))
    columns[1].metric(names["usd_per_million_tokens"], money(numbers.usd_per_million_tokens, currency),
                      help="Cost of rows that report tokens / their tokens × 10⁶.")
    mfu = numbers.mfu
    columns[2].metric("Achieved MFU", "n/a" if not math.isfinite(mfu) else f"{number(mfu, 'fraction')}",
                      help=(f"6 · {count_sig(plan.active)} active parameters (the model of the plan "
                            f"{markdown_text(plan.name)}) · tokens / " if plan is not None else
                            "Needs a plan (its model's active parameters): 6 · active parameters · tokens / ")
                      + "(GPU-hours · 3600 · dense BF16 peak of each row's GPU).")
    for metric, reason in numbers.reasons.items():
        if reason == NEEDS_TOKENS and tokens_note:
            st.caption(f"{names[metric]} needs runs with tokens in this view: {tokens_note}")
        else:
            st.caption(f"{names[metric]} {reason}.")
