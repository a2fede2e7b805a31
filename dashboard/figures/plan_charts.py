"""The Plan page's charts for one scenario, by name: the page and the report draw them from here (the report draws
`CHARTS`; the page's Programme tab draws `PROGRAMME_CHARTS` too)."""

from __future__ import annotations

from collections.abc import Callable

import plotly.graph_objects as go

from dashboard.core import storage, sweeps
from dashboard.core.engine import PlanResult
from dashboard.core.scenario import Scenario
from dashboard.figures import plan, programme

STORAGE_POINTS_PER_TIER = 500  # four tiers: about 2,000 points in the chart
HOT_START_TEETH = 8  # the hot-tier panel shows the ramp to K and this many writes after it (K capped at 8 too)


def _budget(scenario: Scenario, result: PlanResult) -> go.Figure:
    return plan.budget_figure(result["cost_breakdown"], scenario.budget_usd, scenario.budget_warning_fraction)


def _storage(scenario: Scenario, result: PlanResult) -> go.Figure:
    run_hours = result["gpu_hours_main_run"] / scenario.gpu_count
    interval_hours = scenario.checkpoint_interval_min / 60.0
    policy = (result["checkpoint_size_gb"], scenario.keep_last_checkpoints, scenario.archive_every_nth,
              result["dataset_gb"], scenario.logs_gb_per_day)
    archive_gb = scenario.total_params * scenario.weight_archive_bytes_per_param / 1e9
    archives = {"weights_gb": archive_gb, "archive_count": scenario.weight_archives}
    timeline = storage.storage_timeline(run_hours, interval_hours, *policy, max_points=STORAGE_POINTS_PER_TIER,
                                        **archives)
    start_writes = min(scenario.keep_last_checkpoints, HOT_START_TEETH) + HOT_START_TEETH
    start_hours = min(run_hours, start_writes * interval_hours)
    hot_start = storage.storage_timeline(start_hours, interval_hours, *policy, max_points=STORAGE_POINTS_PER_TIER)
    return plan.storage_figure(timeline, result["storage_cost_by_tier"], result["storage_retention_usd"],
                               result["cost_total_usd"], scenario.storage_retention_months, hot_start=hot_start,
                               archive_count=scenario.weight_archives, archive_gb=archive_gb)


def _scaling(scenario: Scenario, result: PlanResult) -> go.Figure:
    return plan.scaling_figure(*sweeps.scaling_curve(scenario))


def _tst(scenario: Scenario, result: PlanResult) -> go.Figure:
    return plan.tst_figure(result["tst"], plan.TST_REFERENCE_RUN)


def _checkpoint(scenario: Scenario, result: PlanResult) -> go.Figure:
    return plan.checkpoint_figure(
        sweeps.checkpoint_tradeoff(scenario), result["checkpoint_interval_young_min"],
        result["checkpoint_interval_daly_min"], scenario.checkpoint_interval_min,
    )


def _spot(scenario: Scenario, result: PlanResult) -> go.Figure:
    capacity = plan.spot_capacity_text(scenario.gpu_count, result["node_count"],
                                       scenario.spot_interruptions_per_1000_node_days)
    return plan.spot_figure(sweeps.spot_share_curve(scenario), scenario.spot_share, sweeps.spot_share_p90(scenario),
                            capacity)


CHARTS: dict[str, Callable[[Scenario, PlanResult], go.Figure]] = {
    "Budget": _budget,
    "Storage growth": _storage,
    "Scaling law": _scaling,
    "TST vs baseline": _tst,
    "Checkpoint interval": _checkpoint,
    "Spot share": _spot,
}

PROGRAMME_CHARTS: dict[str, Callable[[Scenario, PlanResult], go.Figure]] = {
    programme.COST_TITLE: lambda scenario, result: programme.cost_figure(result["programme"]),
    programme.TIMELINE_TITLE: lambda scenario, result: programme.timeline_figure(result["programme"]),
}


def plan_chart(name: str, scenario: Scenario, result: PlanResult) -> go.Figure:
    """One named chart (of `CHARTS` or `PROGRAMME_CHARTS`) for a scenario and its `engine.scenario_outputs` result."""
    return (CHARTS | PROGRAMME_CHARTS)[name](scenario, result)
