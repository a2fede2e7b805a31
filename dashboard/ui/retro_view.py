"""The Retrospective page's sections: one function per tab, drawing tables and charts from `retro_cache`."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.core.scenario import Scenario
from dashboard.format import count, usd
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.retro.gap import PARTS
from dashboard.ui import retro_cache as cache

ROWS_SHOWN = 500
GROUPINGS = {"team": "Team", "project": "Project", "pricing": "Pricing"}
FREQUENCIES = {"D": "Day", "W": "Week"}
METRICS = {"cost": "Cost ($)", "gpu_hours": "GPU-hours"}


def _money(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else usd(value)


def _check_figure(check: dict[str, Any]) -> str:
    """A waste check's figure with its unit: 12.5 % of GPU-hours, $73.25k, $368.00 per month, 640.0 GPU-hours."""
    figure, unit = check["figure"], check["unit"]
    if figure is None:
        return "not answerable from this export"
    if unit.startswith("%"):
        return f"{figure:.1f} {unit}"
    if unit == "USD":
        return usd(figure)
    if unit == "USD/month":
        return f"{usd(figure)} per month"
    return f"{figure:,.1f} {unit}"


def match_caption(stats: dict[str, Any]) -> str:
    """One sentence on how well the billing and run exports matched."""
    if stats["billing_missing"] and stats["runs_missing"]:
        return "No export loaded."
    if stats["runs_missing"]:
        return "Billing export only: run states, tokens and failures need a Slurm or W&B export."
    if stats["billing_missing"]:
        return "Run export only: costs are valued at the plan's $/GPU-hour where needed."
    billing_share = stats["billing_gpu_hours_matched_share"]
    runs_share = stats["runs_gpu_hours_matched_share"]
    return (f"Joined on **{stats['on']}**: {billing_share or 0:.0%} of billed GPU-hours and "
            f"{runs_share or 0:.0%} of the run export's GPU-hours found a match ({stats['keys_matched']} keys).")


def tiles(key: Hashable, usage: pd.DataFrame) -> None:
    """Headline numbers of the filtered view."""
    numbers = cache.unit_view(key, usage, float("nan"))  # cached: no pass over the table on a rerun
    columns = st.columns(5)
    columns[0].metric("Cost", _money(numbers["gpu_cost"] + numbers["non_gpu_cost"]),
                      help="Sum of the cost column (amortised where the export provides it), credits and fees "
                      "included; n/a when no row carries a price (a Slurm or W&B export alone).")
    columns[1].metric("GPU-hours", count(numbers["gpu_hours"]))
    columns[2].metric("$ per GPU-hour", _money(numbers["usd_per_gpu_hour"]),
                      help="Cost of rows with GPU-hours / their GPU-hours. " + numbers["reasons"].get(
                          "usd_per_gpu_hour", ""))
    columns[3].metric("Non-GPU cost", _money(numbers["non_gpu_cost"]),
                      help="Storage, network, support, tax, credits and commitment fees: rows without GPU-hours.")
    columns[4].metric("Rows", f"{len(usage):,}")


def spend_section(key: Hashable, usage: pd.DataFrame) -> None:
    left, middle, right, budget_column = st.columns(4)
    freq = left.segmented_control("Period", list(FREQUENCIES), default="D", format_func=FREQUENCIES.get,
                                  key="retro.freq", bind="query-params") or "D"
    by = middle.segmented_control("Stack by", list(GROUPINGS), default="team", format_func=GROUPINGS.get,
                                  key="retro.by", bind="query-params") or "team"
    metric = right.segmented_control("Measure", list(METRICS), default="cost", format_func=METRICS.get,
                                     key="retro.metric", bind="query-params") or "cost"
    budget = budget_column.number_input("Quarter budget ($)", min_value=0.0, value=1_000_000.0, step=50_000.0,
                                        format="%.0f", key="retro.budget", bind="query-params",
                                        help="Drawn as a line against cumulative spend.")
    st.plotly_chart(cache.spend_chart(key, usage, freq, by, metric, budget), width="stretch", key="retro.spend")
    st.caption("Rows spanning several days (monthly storage, multi-day jobs) are spread over those days in "
               "proportion to time. Forecast: the mean daily spend of the last 14 days, continued in a straight "
               "line to the end of the quarter.")


def attribution_section(key: Hashable, usage: pd.DataFrame) -> None:
    table, figure = cache.attribution_view(key, usage)
    st.plotly_chart(figure, width="stretch", key="retro.attribution")
    st.caption("Team → project → run. Spend with no team, project or run tag is its own “(untagged)” box.")
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
        "cost": st.column_config.NumberColumn("Cost ($)", format="dollar"),
        "cost_share": st.column_config.ProgressColumn("Share of cost", format="percent", min_value=0, max_value=1),
        "gpu_hours_share": st.column_config.NumberColumn("Share of GPU-hours", format="percent"),
    })


def gap_section(key: Hashable, usage: pd.DataFrame, plan: Scenario, plan_json: str, plan_label: str,
                join_on: str) -> None:
    """Plan vs actual. The main-run choice starts at a suggestion that follows the join key: the run with the
    most GPU-hours, or every run of the project with the most GPU-hours when joined on project (W&B)."""
    run_ids = sorted(usage["run_id"].dropna().unique().tolist())
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
    parts, summary, figure = cache.gap_view(key, usage, plan_json, tuple(main_runs), tuple(failed), unit)
    st.caption(f"Plan: **{plan_label}** — {count(summary['plan_gpu_hours'])} GPU-hours at "
               f"{usd(summary['plan_price_per_gpu_hour'])}/GPU-hour = {usd(summary['plan_usd'])} of GPU compute "
               f"(its {usd(summary['plan_non_gpu_usd_excluded'])} of non-GPU line items are not compared).")
    st.plotly_chart(figure, width="stretch", key="retro.gap")
    st.dataframe(parts, hide_index=True, width="stretch", column_config={
        "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
        "usd": st.column_config.NumberColumn("$", format="dollar"),
    })
    st.caption(
        f"The {len(PARTS)} parts add up exactly to actual − plan. Order of attribution: scale is valued at the "
        "plan's efficiency, so the scale × efficiency interaction lands in efficiency; hour parts are priced at "
        "the plan's $/GPU-hour, so the price × volume interaction lands in price (Method & sources, §8)."
    )


def waste_section(key: Hashable, usage: pd.DataFrame) -> None:
    checklist, figure = cache.waste_view(key, usage)
    for check in checklist:
        with st.expander(f"**{check['check']}** — {_check_figure(check)}", expanded=False):
            st.write(check["detail"])
            rows = check["rows"]
            if rows is not None and len(rows):
                st.caption(f"{len(rows):,} rows behind this figure (first {min(len(rows), ROWS_SHOWN):,} shown).")
                st.dataframe(rows.head(ROWS_SHOWN), hide_index=True, width="stretch")
    if figure.data:
        st.plotly_chart(figure, width="stretch", key="retro.waste")


def load_section(key: Hashable, usage: pd.DataFrame) -> None:
    summary, timeline, heatmap = cache.load_view(key, usage)
    columns = st.columns(4)
    columns[0].metric("Peak GPUs", f"{summary['peak_gpus']:,.0f}")
    columns[1].metric("Mean GPUs", f"{summary['mean_gpus']:,.1f}")
    columns[2].metric("95th percentile", f"{summary['p95_gpus']:,.0f}")
    columns[3].metric("Peak / mean", f"{summary['peak_to_mean']:,.2f}×",
                      help="Reserving for the mean queues work at the peak; reserving for the peak pays for idle "
                      "capacity the rest of the time.")
    st.plotly_chart(timeline, width="stretch", key="retro.load")
    st.plotly_chart(heatmap, width="stretch", key="retro.heatmap")
    st.caption("Each row's GPU-hours are spread evenly over its period, so daily billing lines show as flat "
               "days; a Slurm or W&B export gives the real shape within a day.")


def mix_section(key: Hashable, usage: pd.DataFrame) -> None:
    """Shares by pricing tier and a what-if mix, from the billing export (the join blurs tiers across a run)."""
    shares, figure = cache.mix_view(key, usage)
    st.plotly_chart(figure, width="stretch", key="retro.mix")
    st.dataframe(shares, hide_index=True, width="stretch", column_config={
        "gpu_hours": st.column_config.NumberColumn("GPU-hours", format="%.1f"),
        "gpu_hours_share": st.column_config.NumberColumn("GPU-hour share", format="percent"),
        "cost_share": st.column_config.NumberColumn("Cost share", format="percent"),
        "usd_per_gpu_hour": st.column_config.NumberColumn("$ per GPU-hour", format="dollar"),
        "cost": st.column_config.NumberColumn("Cost ($)", format="dollar"),
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
    columns[0].metric("GPU cost as billed", _money(result["actual_gpu_cost"]))
    saving = result["saving"]
    columns[1].metric("At this mix", _money(result["gpu_cost_at_mix"]),
                      _money(-saving) if saving and math.isfinite(saving) else None, delta_color="inverse")
    columns[2].metric("Blended $ per GPU-hour", _money(result["blended_usd_per_gpu_hour"]))
    st.caption("Each tier is priced at the $/GPU-hour the quarter actually paid for it (the engine's "
               "purchase-mix model); a tier the quarter never used has no price. Exports that bill commitments "
               "on separate fee rows (GCP, Azure actual cost) show reserved hours at $0, so compare with care.")


def units_section(key: Hashable, usage: pd.DataFrame, plan: Scenario) -> None:
    numbers = cache.unit_view(key, usage, plan.active)
    columns = st.columns(3)
    columns[0].metric("$ per GPU-hour", _money(numbers["usd_per_gpu_hour"]))
    columns[1].metric("$ per million tokens", _money(numbers["usd_per_million_tokens"]),
                      help="Cost of rows that report tokens / their tokens × 10⁶.")
    mfu = numbers["mfu"]
    columns[2].metric("Achieved MFU", "n/a" if not math.isfinite(mfu) else f"{mfu:.1%}",
                      help=f"6 · {count(plan.active)} active parameters (the plan's model) · tokens / "
                      "(GPU-hours · 3600 · dense BF16 peak of each row's GPU).")
    for metric, reason in numbers["reasons"].items():
        st.caption(f"{metric.replace('_', ' ')}: {reason}")
