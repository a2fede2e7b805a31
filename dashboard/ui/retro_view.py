"""The Retrospective page's sections: one function per tab, drawing tables and charts from `retro_cache`."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import settings
from dashboard.core.scenario import Scenario
from dashboard.format import count_sig, number, table_decimals, usd_sig
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.opened import Table
from dashboard.retro.budgets import WHOLE_EXPORT, budget_for_view, view_id
from dashboard.retro.gap import PARTS, plan_mismatch
from dashboard.retro.join import match_warning
from dashboard.retro.units import LABELS, NEEDS_TOKENS
from dashboard.safe_text import markdown_text
from dashboard.ui import retro_cache as cache

ROWS_SHOWN = 500
GROUPINGS = {"team": "Team", "project": "Project", "pricing": "Pricing"}
FREQUENCIES = {"D": "Day", "W": "Week"}
METRICS = {"cost": "Cost ($)", "gpu_hours": "GPU-hours"}
EXPORT_BUDGET_USD = 1_000_000.0


def money_column(label: str, values: pd.Series) -> Any:
    """A $ column of sums: thousands separated, whole dollars once an entry reaches $1,000 (`table_decimals`)."""
    return st.column_config.NumberColumn(label, format="dollar", step=10.0 ** -table_decimals(values))


def hours_column(label: str, values: pd.Series) -> Any:
    """A GPU-hours column: thousands separated, whole hours once an entry reaches 1,000."""
    return st.column_config.NumberColumn(label, format=f"%,.{table_decimals(values)}f")


def _check_figure(check: dict[str, Any]) -> str:
    """A waste check's figure with its unit: 22 % of GPU-hours, $73.2k, $368 per month, 68.7 GPU-hours."""
    figure, unit = check["figure"], check["unit"]
    if figure is None:
        return "not answerable from this export"
    if unit.startswith("%"):
        return f"{figure:.0f} {unit}"
    if unit == "USD":
        return usd_sig(figure)
    if unit == "USD/month":
        return f"{usd_sig(figure)} per month"
    return f"{count_sig(figure)} {unit}"


def match_caption(stats: dict[str, Any]) -> str:
    """One sentence on how well the billing and run exports matched."""
    if stats["billing_missing"] and stats["runs_missing"]:
        return "No export loaded."
    if stats["runs_missing"]:
        return "Billing export only: run states, tokens and failures need a run export."
    if stats["billing_missing"]:
        return "Run export only: costs are valued at the plan's $/GPU-hour where needed."
    billing_share = stats["billing_gpu_hours_matched_share"]
    runs_share = stats["runs_gpu_hours_matched_share"]
    text = (f"Joined on **{stats['on']}**: {number(billing_share or 0, 'fraction')} of billed GPU-hours and "
            f"{number(runs_share or 0, 'fraction')} of the run export's GPU-hours found a match "
            f"({stats['keys_matched']} keys).")
    if stats.get("runs_gpu_hours_beyond_billing", 0) > 0.5:
        text += (f" {count_sig(stats['runs_gpu_hours_beyond_billing'])} run-export GPU-hours beyond the bill of "
                 "their key and day are left out (the bill says what was paid for).")
    return text


def _unused_rows(export: Any) -> str:
    """Where an export's rows went, when none is used: "of its 1 row, 1 rejected (line 2: PreTaxCost is empty)"."""
    summary = export.summary
    read, rejected, excluded = summary["rows_read"], summary["rows_rejected"], summary["rows_excluded"]
    parts = []
    if rejected:
        first = summary["rejected_sample"][0] if summary["rejected_sample"] else None
        parts.append(f"{rejected:,} rejected" + (f" (line {first['line']}: {markdown_text(first['reason'])})"
                                                 if first else ""))
    if excluded:
        rule = max(summary["excluded_by_rule"].items(), key=lambda item: item[1], default=None)
        parts.append(f"{excluded:,} excluded" + (f" ({markdown_text(rule[0])})" if rule else ""))
    rows = f"{read:,} row{'' if read == 1 else 's'}"
    return f"**{markdown_text(export.filename)}** holds no row the Retrospective can use: of its {rows}, " + (
        " and ".join(parts) or "none was kept") + "."


def _has_tokens(usage: pd.DataFrame) -> bool:
    return bool((usage["tokens"].fillna(0) > 0).any())


def unmatched_tokens(runs: Any, shown: pd.DataFrame | Table, join_on: str) -> str | None:
    """Markdown: why the view has no tokens although the run export counts them (its runs with tokens matched no
    billed row of the view on `join_on`); None when the view has tokens, or there is no such run export in memory."""
    if runs is None or isinstance(runs.usage, Table) or isinstance(shown, Table):
        return None
    if not _has_tokens(runs.usage) or _has_tokens(shown):
        return None
    other = "project" if join_on == "run_id" else "run_id"
    return (f"**{markdown_text(runs.filename)}** counts tokens, but none of its runs with tokens matched a billed row "
            f"of this view on **{join_on}**, so their tokens are not in it. Try *Join billing and runs on*: "
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
    empty = [export for export in loaded if not export.summary["rows_used"]] or loaded
    text = " ".join(_unused_rows(export) for export in empty) + (
        " The Import usage page lists every rejected and excluded row with its reason.")
    if billing and not billing.summary["rows_used"] and runs and runs.summary["rows_used"]:
        text += (f" The page follows the bill: to see **{markdown_text(runs.filename)}** alone, remove "
                 f"**{markdown_text(billing.filename)}** and choose {none_choice} as the billing export.")
    return text


def commitment_sentence(info: dict[str, Any]) -> str | None:
    """How commitments enter the figures, for the caption beside the $/GPU-hour tile (None without any)."""
    status = info["status"]
    if status == "amortised":
        text = (f"Commitments amortised here: {usd_sig(info['commitment_usd'])} of commitment charges billed on "
                f"their own lines were spread evenly over the days each covers (until the next charge; a one-off "
                f"purchase over the rest of the export) and each day's share over that day's "
                f"{count_sig(info['covered_gpu_hours'])} reserved GPU-hours, which the export showed at $0. "
                f"{usd_sig(info['spread_usd'])} went onto GPU-hours; {usd_sig(info['unused_usd'])} fell on days with "
                "no reserved usage and stays as unused commitment (Waste → Idle capacity).")
        if info["after_export_usd"] > 0.5:
            text += (f" {usd_sig(info['after_export_usd'])} covers days after the export ends and is left out of "
                     "this period's cost.")
        return text
    if status == "provider":
        return (f"Commitments amortised by the provider (effective cost): reserved GPU rows carry their share; "
                f"{usd_sig(info['unused_usd'])} of commitment nobody used is on its own lines (Waste → Idle "
                "capacity).")
    return None


def _tile_notes(stats: dict[str, Any], amortisation: dict[str, Any], notes: list[str]) -> None:
    """The warnings and notes that change a tile's figure, right under the tiles."""
    warning = match_warning(stats)
    if warning:
        st.warning(warning, icon=":material/link_off:")
    if amortisation["status"] == "excluded":
        st.warning(f"$ per GPU-hour excludes commitments: {usd_sig(amortisation['commitment_usd'])} of commitment "
                   "charges have no reserved GPU usage in this export to spread them over, so reserved capacity "
                   "looks free. Export the provider's amortised cost (FOCUS EffectiveCost, Azure amortized "
                   "cost) or include the reserved usage.", icon=":material/warning:")
    if amortisation["status"] == "needs_rows":
        st.warning(f"$ per GPU-hour excludes commitments: {usd_sig(amortisation['commitment_usd'])} of commitment "
                   "charges are billed on their own lines with the reserved usage at $0, and spreading them over "
                   f"that usage day by day needs the rows in memory: {needs_rows()}", icon=":material/warning:")
    sentence = commitment_sentence(amortisation)
    if sentence:
        st.caption(sentence)
    for note in notes:
        st.caption(note)


def needs_rows() -> str:
    """What to do for a figure that needs the rows in memory, naming the setting that bounds them."""
    return (f"import a narrower dataset (a shorter period or fewer teams) of at most "
            f"{settings.limit(settings.WORKSPACE_MEMORY_ROWS):,} rows ({settings.WORKSPACE_MEMORY_ROWS}).")


def tiles(key: Hashable, usage: pd.DataFrame | Table, stats: dict[str, Any], amortisation: dict[str, Any],
          notes: list[str]) -> None:
    """Headline numbers of the filtered view, with what changes them beside them."""
    numbers = cache.unit_view(key, usage, float("nan"))  # cached: no pass over the table on a rerun
    label = amortisation["label"]
    with_runs = not stats["billing_missing"] and not stats["runs_missing"]
    # Two rows of three, so nothing is cut off; how commitments were treated is the line under $/GPU-hour's value.
    columns = [*st.columns(3), *st.columns(3)]
    columns[0].metric("Cost", usd_sig(numbers["gpu_cost"] + numbers["non_gpu_cost"]),
                      help="Sum of the cost column, commitments amortised where the export allows, credits and "
                      "fees included; n/a when no row carries a price (a run export alone).")
    columns[1].metric("GPU-hours", count_sig(numbers["gpu_hours"]),
                      help="Billed GPU-hours when a billing export is loaded; a run export's hours without a bill "
                      "are never added to them.")
    columns[2].metric("$ per GPU-hour", usd_sig(numbers["usd_per_gpu_hour"]), label or None, delta_color="off",
                      delta_arrow="off",
                      help="Cost of rows with GPU-hours / their GPU-hours. " + numbers["reasons"].get(
                          "usd_per_gpu_hour", ""))
    columns[3].metric("Non-GPU cost", usd_sig(numbers["non_gpu_cost"]),
                      help="Storage, network, support, tax, credits and unused commitment: rows without GPU-hours.")
    columns[4].metric("Rows", f"{cache.row_count(key, usage):,}")
    if with_runs:
        columns[5].metric("Runs without a bill", f"{count_sig(stats['runs_without_bill_gpu_hours'])} GPU-h",
                          help=f"{stats['runs_without_bill_rows']:,} run-export rows whose "
                          f"{stats['on']} has no billed GPU-hours: shown apart, never added to the bill.")
    _tile_notes(stats, amortisation, notes)


def budget_view(teams, projects, pricing, dates) -> str:
    """The name of the view a budget belongs to (``budgets.view_id``); ``dates`` only when narrowed."""
    return view_id(teams, projects, pricing, dates)


def spend_section(key: Hashable, usage: pd.DataFrame | Table, view: str, periods: tuple) -> None:
    """Spend per period and, below it, the running total against the budget of this view (``budgets``)."""
    left, middle, right, budget_column = st.columns(4)
    freq = left.segmented_control("Period", list(FREQUENCIES), default="D", format_func=FREQUENCIES.get,
                                  key="retro.freq", bind="query-params") or "D"
    by = middle.segmented_control("Stack by", list(GROUPINGS), default="team", format_func=GROUPINGS.get,
                                  key="retro.by", bind="query-params") or "team"
    metric = right.segmented_control("Measure", list(METRICS), default="cost", format_func=METRICS.get,
                                     key="retro.metric", bind="query-params") or "cost"
    view_budgets = st.session_state.setdefault("retro.view_budgets", {})
    if view == WHOLE_EXPORT:
        export_budget = budget_column.number_input(
            "Quarter budget, whole export ($)", min_value=0.0, value=EXPORT_BUDGET_USD, step=50_000.0,
            format="%.0f", key="retro.budget", bind="query-params",
            help="Drawn against the running total of the whole export; a filtered view has its own budget.")
    else:
        export_budget = None
        view_budgets[view] = budget_column.number_input(
            "Budget for this view ($)", min_value=0.0, value=float(view_budgets.get(view, 0.0)), step=10_000.0,
            format="%.0f", key=f"retro.view_budget.{view}",
            help=f"A budget for {view} only (0: none). The whole export's budget is not drawn over a part of it.")
    budget = budget_for_view(view, export_budget, view_budgets)
    budget_column.caption(f"Budget drawn: {usd_sig(budget)}" if budget else "No budget drawn for this view.")
    st.plotly_chart(cache.spend_chart(key, usage, freq, by, metric, budget, *periods), width="stretch",
                    key="retro.spend")
    period_end, data_end = periods
    closed = data_end is None or period_end is None or data_end >= period_end
    forecast = ("No forecast: the export covers the period to its last day." if closed else
                f"Forecast: the export ends on {data_end:%d %b %Y}, before the quarter does; the band is the "
                "mean daily spend of the last 14 days continued to the quarter's end ± 1.28 standard deviations "
                "× √days (80 %).")
    st.caption("Rows spanning several days (monthly storage, multi-day jobs) are spread over those days in "
               f"proportion to time. {forecast}")


def attribution_section(key: Hashable, usage: pd.DataFrame | Table) -> None:
    table, figure = cache.attribution_view(key, usage)
    st.plotly_chart(figure, width="stretch", key="retro.attribution")
    st.caption("Team → project → run. Spend with no team, project or run tag is its own “(untagged)” box.")
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "gpu_hours": hours_column("GPU-hours", table["gpu_hours"]),
        "cost": money_column("Cost ($)", table["cost"]),
        "cost_share": st.column_config.ProgressColumn("Share of cost", format="percent", min_value=0, max_value=1),
        "gpu_hours_share": st.column_config.NumberColumn("Share of GPU-hours", format="percent"),
    })


def gap_section(key: Hashable, usage: pd.DataFrame | Table, plan: Scenario, plan_label: str, join_on: str,
                tokens_note: str | None = None) -> None:
    """Plan vs actual. The main-run choice starts at a suggestion that follows the join key: the run with the
    most GPU-hours, or every run of the project with the most GPU-hours when joined on project (W&B).
    `tokens_note` (`unmatched_tokens`) says why efficiency is unknown when the run export does count tokens."""
    run_ids = cache.run_ids(key, usage)
    suggestion = [run for run in cache.main_run_suggestion(key, usage, join_on) if run in run_ids]
    left, middle, right = st.columns([2, 2, 1])
    main_runs = left.multiselect("Main run (run ids)", run_ids, default=suggestion, key=f"retro.main_runs.{join_on}",
                                 help="The pretraining run the plan describes; other runs count as experiments. "
                                 "Suggested: the run with the most GPU-hours, or with a project join every run "
                                 "of the largest project.")
    failed = middle.multiselect("States counted as failed", list(FAILED_STATES), default=list(FAILED_STATES),
                                key="retro.failed_states",
                                help="A TIMEOUT segment of a run that resumes from its checkpoint may be "
                                "productive: remove TIMEOUT here if your scheduler ends jobs on a time limit.")
    unit = right.segmented_control("Unit", ["usd", "gpu_hours"], default="usd", key="retro.gap_unit",
                                   format_func={"usd": "$", "gpu_hours": "GPU-hours"}.get) or "usd"
    parts, summary, figure = cache.gap_view(key, usage, plan, tuple(main_runs), tuple(failed), unit)
    mismatch = plan_mismatch(summary)
    if mismatch:
        st.warning(mismatch, icon=":material/compare_arrows:")
    st.caption(f"Plan: **{markdown_text(plan_label)}** — {count_sig(summary['plan_gpu_hours'])} GPU-hours at "
               f"{usd_sig(summary['plan_price_per_gpu_hour'])}/GPU-hour = {usd_sig(summary['plan_usd'])} of GPU "
               f"compute (its {usd_sig(summary['plan_non_gpu_usd_excluded'])} of non-GPU line items are not "
               "compared).")
    st.plotly_chart(figure, width="stretch", key="retro.gap")
    st.dataframe(parts, hide_index=True, width="stretch", column_config={
        "gpu_hours": hours_column("GPU-hours", parts["gpu_hours"]),
        "usd": money_column("$", parts["usd"]),
        "known": st.column_config.CheckboxColumn("Known"),
        "needs": st.column_config.TextColumn("To know it, import"),
    })
    efficiency = parts.loc[parts["part"] == "efficiency"]
    if tokens_note and len(efficiency) and not bool(efficiency["known"].iloc[0]):
        st.caption(f"Efficiency needs the main run's tokens: {tokens_note}")
    st.caption(
        f"The {len(PARTS)} parts add up exactly to actual − plan. Order of attribution: scale is valued at the "
        "plan's efficiency, so the scale × efficiency interaction lands in efficiency; hour parts are priced at "
        "the plan's $/GPU-hour, so the price × volume interaction lands in price (Method & sources, §8)."
    )


def waste_section(key: Hashable, usage: pd.DataFrame | Table) -> None:
    checklist, summary, figure = cache.waste_view(key, usage)
    share = "" if summary["share"] is None else f", {number(summary['share'], 'fraction')} of spend"
    st.subheader(f"Waste found: {usd_sig(summary['total_usd'])}{share}")
    by_id = {check["id"]: check for check in checklist}
    kpi = by_id["successful_runs"]
    columns = st.columns(3)
    columns[0].metric("Successful-run share", _check_figure(kpi) if kpi["figure"] is not None else "n/a",
                      help="A KPI, not waste: " + kpi["detail"])
    growth = by_id["storage_growth"]
    columns[1].metric("Storage growing", f"{usd_sig(growth['usd'])} a month" if growth["usd"] else "none found",
                      help="A monthly cost that keeps growing, shown apart from the one-off dollars above.")
    untagged = by_id["untagged_spend"]
    columns[2].metric("Untagged spend (hygiene)", usd_sig(untagged["usd"]) if untagged["usd"] is not None else "n/a",
                      help="Not waste: spend nobody can be asked about. " + untagged["detail"])
    st.plotly_chart(figure, width="stretch", key="retro.waste")
    ranked = sorted(checklist, key=lambda check: (check["kind"] != "waste", -(check["usd"] or 0.0)))
    total_cost = cache.totals(key, usage)["cost"]
    for check in ranked:
        share = (f" · {number(check['usd'] / total_cost, 'fraction')} of spend"
                 if check["usd"] is not None and check["kind"] == "waste" and total_cost > 0 else "")
        with st.expander(f"**{check['check']}** ({check['kind']}) — {_check_figure(check)}{share}", expanded=False):
            st.markdown(markdown_text(check["detail"]))
            rows = check["rows"]
            if rows is None and check["figure"] is not None and cache.queried(usage):
                st.caption(f"The rows behind this figure are listed for a dataset read into memory: {needs_rows()}")
            if rows is not None and len(rows):
                st.caption(f"{len(rows):,} rows behind this figure (first {min(len(rows), ROWS_SHOWN):,} shown).")
                st.dataframe(rows.head(ROWS_SHOWN), hide_index=True, width="stretch")


def load_section(key: Hashable, usage: pd.DataFrame | Table, billing: pd.DataFrame | Table | None) -> None:
    summary, timeline, heatmap = cache.load_view(key, usage, billing)
    columns = st.columns(5)
    columns[0].metric("Peak GPUs", f"{summary['peak_gpus']:,.0f}")
    columns[1].metric("Mean GPUs", f"{summary['mean_gpus']:,.0f}")
    columns[2].metric("95th percentile", f"{summary['p95_gpus']:,.0f}")
    columns[3].metric("Peak / mean", f"{summary['peak_to_mean']:,.2f}×",
                      help="Reserving for the mean queues work at the peak; reserving for the peak pays for idle "
                      "capacity the rest of the time.")
    capacity = summary["reserved_capacity_gpus"]
    columns[4].metric("Reserved capacity", f"{capacity:,.0f} GPUs" if capacity else "none",
                      help="The most reserved GPUs in use in any hour (the export does not state the reservation's "
                      "size, so this is a lower bound)." + (
                          f" Idle reserved: {count_sig(summary['idle_reserved_gpu_hours'])} GPU-hours, shaded."
                          if capacity else ""))
    st.plotly_chart(timeline, width="stretch", key="retro.load")
    st.plotly_chart(heatmap, width="stretch", key="retro.heatmap")
    st.caption("Each row's GPU-hours are spread evenly over its period, so daily billing lines show as flat "
               "days; a run export gives the real shape within a day.")


def mix_section(key: Hashable, usage: pd.DataFrame | Table) -> None:
    """Shares by pricing tier and a what-if mix, from the billing export (the join blurs tiers across a run)."""
    shares, figure = cache.mix_view(key, usage)
    st.plotly_chart(figure, width="stretch", key="retro.mix")
    st.dataframe(shares, hide_index=True, width="stretch", column_config={
        "gpu_hours": hours_column("GPU-hours", shares["gpu_hours"]),
        "gpu_hours_share": st.column_config.NumberColumn("GPU-hour share", format="percent"),
        "cost_share": st.column_config.NumberColumn("Cost share", format="percent"),
        "usd_per_gpu_hour": st.column_config.NumberColumn("$ per GPU-hour", format="dollar"),
        "cost": money_column("Cost ($)", shares["cost"]),
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
    result = cache.cost_at_mix(key, usage, reserved / 100, spot / 100)
    if result.get("reason"):
        st.info(result["reason"])
        return
    columns = st.columns(3)
    columns[0].metric("GPU cost as billed", usd_sig(result["actual_gpu_cost"]))
    saving = result["saving"]
    columns[1].metric("At this mix", usd_sig(result["gpu_cost_at_mix"]),
                      usd_sig(-saving) if saving and math.isfinite(saving) else None, delta_color="inverse")
    columns[2].metric("Blended $ per GPU-hour", usd_sig(result["blended_usd_per_gpu_hour"]))
    st.caption("Each tier is priced at the $/GPU-hour the quarter actually paid for it (the engine's "
               "purchase-mix model), commitments amortised onto reserved hours as in the tiles; a tier the quarter "
               "never used has no price.")


def units_section(key: Hashable, usage: pd.DataFrame | Table, plan: Scenario, tokens_note: str | None = None) -> None:
    """Unit costs; `tokens_note` (`unmatched_tokens`) says why the token figures are missing when the run export
    counts tokens but none reached the view."""
    numbers = cache.unit_view(key, usage, plan.active)
    columns = st.columns(3)
    columns[0].metric("$ per GPU-hour", usd_sig(numbers["usd_per_gpu_hour"]))
    columns[1].metric("$ per million tokens", usd_sig(numbers["usd_per_million_tokens"]),
                      help="Cost of rows that report tokens / their tokens × 10⁶.")
    mfu = numbers["mfu"]
    columns[2].metric("Achieved MFU", "n/a" if not math.isfinite(mfu) else f"{number(mfu, 'fraction')}",
                      help=f"6 · {count_sig(plan.active)} active parameters (the plan's model) · tokens / "
                      "(GPU-hours · 3600 · dense BF16 peak of each row's GPU).")
    for metric, reason in numbers["reasons"].items():
        if reason == NEEDS_TOKENS and tokens_note:
            st.caption(f"{LABELS[metric]} needs runs with tokens in this view: {tokens_note}")
        else:
            st.caption(f"{LABELS[metric]} {reason}.")
