"""The Plan page's outputs: metric tiles with deltas against the baseline, the chart tabs and the risk notes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dashboard.core.scenario import Scenario
from dashboard.format import count, usd
from dashboard.ui import plan_charts_view


def _delta(value: float, base: float, fmt: Callable[[float], str]) -> str | None:
    difference = value - base
    if abs(difference) <= 1e-9 * max(abs(value), abs(base), 1.0):
        return None
    return ("+" if difference > 0 else "-") + fmt(abs(difference))


def _days(value: float) -> str:
    return f"{value:,.1f} d"


def _dollars_3(value: float) -> str:
    return f"${value:,.3f}"


def _loss(value: float) -> str:
    return f"{value:.3f}"


def _points(value: float) -> str:
    return f"{value:,.0f} pp"


def tiles(scenario: Scenario, result: dict[str, Any], baseline: Scenario, base: dict[str, Any]) -> None:
    """Six headline numbers; each delta is against the pinned baseline (red when it costs more)."""
    share = result["cost_total_usd"] / scenario.budget_usd
    base_share = base["cost_total_usd"] / baseline.budget_usd
    rows = (
        ("Total cost", usd(result["cost_total_usd"]), _delta(result["cost_total_usd"], base["cost_total_usd"], usd),
         "Sum of every line item: GPU-hours × blended $/GPU-hour, plus storage, data processing, egress, "
         "TST pilot and switching, people."),
        ("GPU-hours", count(result["gpu_hours_total"]),
         _delta(result["gpu_hours_total"], base["gpu_hours_total"], count),
         "6·N_active·D / (peak · MFU · 3600) ÷ TST speedup, × (1 + stall + rework), "
         "× (1 + experiments + evaluation + debugging)."),
        ("Wall-clock", f"{result['wall_clock_days']:,.1f} days",
         _delta(result["wall_clock_days"], base["wall_clock_days"], _days), "Main-run GPU-hours / GPU count / 24."),
        ("$ per million tokens", _dollars_3(result["cost_per_million_tokens"]),
         _delta(result["cost_per_million_tokens"], base["cost_per_million_tokens"], _dollars_3),
         "Total cost / (training tokens / 10⁶)."),
        ("Predicted loss", _loss(result["predicted_loss"]),
         _delta(result["predicted_loss"], base["predicted_loss"], _loss),
         f"L = E + A/N^α + B/D^β ({scenario.scaling_fit} fit), N = active parameters, D = tokens."),
        (f"Budget: {share:.0%} used", result["budget_status"], _delta(100 * share, 100 * base_share, _points),
         f"Total / budget ({usd(scenario.budget_usd)}): 'warning' above {scenario.budget_warning_fraction:.0%}, "
         "'over' above 100 %."),
    )
    for column, (label, value, delta, formula) in zip(st.columns(len(rows)), rows, strict=True):
        column.metric(label, value, delta, delta_color="inverse", help=formula)


def charts(scenario_json: str) -> None:
    """Two columns of chart tabs (see `dashboard.ui.plan_charts_view`)."""
    plan_charts_view.charts(scenario_json)


def risks(scenario: Scenario, result: dict[str, Any]) -> None:
    """What each saving risks: failures, spot, TST's unproven speedup at scale, storage."""
    tst = result["tst"]
    st.markdown(
        f"- **Failures:** job MTBF {result['job_mtbf_hours']:,.1f} h on {result['node_count']:,.0f} nodes; "
        f"checkpoint {result['checkpoint_size_gb']:,.0f} GB written in {result['checkpoint_write_s']:,.0f} s. "
        f"Stall + rework overhead {result['overhead_fraction']:.1%} at a {scenario.checkpoint_interval_min:g}-min "
        f"interval (Daly optimum {result['checkpoint_interval_daly_min']:,.0f} min).\n"
        f"- **Spot:** {scenario.spot_share:.0%} of GPU-hours on spot adds interruptions to the failure rate, so "
        "cheaper hours buy more rework and a less predictable wall-clock.\n"
        f"- **TST:** {tst['speedup']:.2f}× fewer GPU-hours at matched loss is one published 10B-A1B MoE result; "
        f"a pilot ({usd(tst['pilot_cost_usd'])}) should confirm it at your scale before the plan relies on it. "
        f"It reads {tst['tst_tokens'] / tst['baseline_tokens']:.2f}× the raw tokens.\n"
        f"- **Storage:** peak {result['storage_peak_gb']:,.0f} GB, {usd(result['storage_cost_usd'])} over the run; "
        f"keeping the last {scenario.keep_last_checkpoints} checkpoints bounds the hot tier."
    )
