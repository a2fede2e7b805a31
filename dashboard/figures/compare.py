"""Scenario comparison figures: cost by line item, main-run wall-clock split, and total cost ranges against budget.

Each builder takes scenario names and `engine.scenario_outputs` results (and Monte Carlo summaries for the ranges), one
per scenario in the same order, and returns a plotly Figure. Names are user text: they are made unique, wrapped
and HTML-escaped before plotly renders them as labels.
"""

from __future__ import annotations

import html
import textwrap
from functools import partial
from typing import Any

import plotly.graph_objects as go

from dashboard.core.compare import unique_names
from dashboard.core.engine import LINE_ITEMS
from dashboard.core.scenario import Scenario
from dashboard.figures.plan import BUDGET_COLOUR, HEADROOM, LABELS, layout_of
from dashboard.format import usd

_usd = partial(usd, digits=1)
NAME_WRAP_CHARS = 28
HOURS_PER_DAY = 24.0
TIMELINE_PARTS = (
    ("compute", "gpu_hours_compute"),
    ("checkpoint stalls", "gpu_hours_stall"),
    ("failure rework", "gpu_hours_rework"),
)
TIMELINE_HEADROOM = 1.2  # room right of the longest bar for its "N days" label
POINT_COLOUR = "#1f77b4"
RANGE_COLOUR = "#9ecae1"


def scenario_labels(names: list[str]) -> list[str]:
    """Unique scenario names, wrapped onto short lines and escaped for plotly's HTML-like labels."""
    return [
        "<br>".join(html.escape(line) for line in textwrap.wrap(name, NAME_WRAP_CHARS) or [""])
        for name in unique_names(names)
    ]


def _item_label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


def _totals(labels: list[str], totals: list[float], text: list[str], horizontal: bool) -> list[dict[str, Any]]:
    """Labels at the end of each stacked bar."""
    return [
        {"x": total, "y": label, "xanchor": "left", "showarrow": False, "text": f" {note}"} if horizontal else
        {"x": label, "y": total, "yanchor": "bottom", "showarrow": False, "text": note}
        for label, total, note in zip(labels, totals, text, strict=True)
    ]


def cost_breakdown_figure(names: list[str], results: list[dict[str, Any]]) -> go.Figure:
    """Stacked bars of each scenario's line items (those non-zero in any scenario), its total on top."""
    labels = scenario_labels(names)
    traces = []
    for key in LINE_ITEMS:
        values = [result["cost_breakdown"][key] for result in results]
        if any(value != 0 for value in values):
            traces.append({
                "type": "bar", "name": _item_label(key), "x": labels, "y": values,
                "customdata": [_usd(value) for value in values],
                "hovertemplate": f"{_item_label(key)}: %{{customdata}}<extra></extra>",
            })
    totals = [result["cost_total_usd"] for result in results]
    layout = layout_of(
        "Cost by line item", "", "cost (USD)",
        subtitle="Stacked per scenario; the figure above each bar is its total.",
        barmode="stack", yaxis={"tickprefix": "$", "range": [0.0, max(totals) * HEADROOM]},
        legend={"orientation": "v", "x": 1.02, "y": 1.0},
        annotations=_totals(labels, totals, [_usd(total) for total in totals], horizontal=False),
    )
    return go.Figure(data=traces, layout=layout)


def timeline_figure(names: list[str], scenarios: list[Scenario], results: list[dict[str, Any]]) -> go.Figure:
    """One horizontal bar per scenario: the main run's wall-clock days as compute, checkpoint stalls and rework."""
    labels = scenario_labels(names)
    traces = []
    for part, key in TIMELINE_PARTS:
        days = [result[key] / scenario.gpu_count / HOURS_PER_DAY for scenario, result in zip(scenarios, results,
                                                                                           strict=True)]
        traces.append({
            "type": "bar", "orientation": "h", "name": part, "x": days, "y": labels,
            "hovertemplate": f"{part}: %{{x:,.2f}} days<extra></extra>",
        })
    totals = [result["wall_clock_days"] for result in results]
    layout = layout_of(
        "Main run wall-clock", "wall-clock days of the main run", "",
        subtitle="Compute, checkpoint stalls and failure rework on each scenario's GPUs; experiments not included.",
        barmode="stack", yaxis={"autorange": "reversed", "automargin": True},
        xaxis={"range": [0.0, max(totals) * TIMELINE_HEADROOM]},
        annotations=_totals(labels, totals, [f"{days:,.1f} days" for days in totals], horizontal=True),
    )
    return go.Figure(data=traces, layout=layout)


def _draws_note(summaries: list[dict[str, Any]]) -> str:
    runs = {(s["monte_carlo"]["draws"], s["monte_carlo"]["shape"], s["monte_carlo"]["seed"]) for s in summaries}
    return "; ".join(f"{draws:,} {shape} draws, seed {seed}" for draws, shape, seed in sorted(runs))


def range_figure(names: list[str], results: list[dict[str, Any]], summaries: list[dict[str, Any]]) -> go.Figure:
    """Each scenario's total cost: P10–P90 as a floating bar, the point estimate and the budget as markers.

    A floating bar rather than error bars: a skewed range can leave the point estimate below P10.
    """
    labels = scenario_labels(names)
    p10 = [summary["p10"]["cost_total_usd"] for summary in summaries]
    p90 = [summary["p90"]["cost_total_usd"] for summary in summaries]
    point = [result["cost_total_usd"] for result in results]
    budget = [result["budget_usd"] for result in results]
    traces = [
        {
            "type": "bar", "name": "P10–P90", "x": labels, "base": p10,
            "y": [high - low for low, high in zip(p10, p90, strict=True)],
            "customdata": [f"{_usd(low)}–{_usd(high)}" for low, high in zip(p10, p90, strict=True)],
            "marker": {"color": RANGE_COLOUR}, "width": 0.4,
            "hovertemplate": "P10–P90: %{customdata}<extra></extra>",
        },
        {
            "type": "scatter", "mode": "markers", "name": "point estimate", "x": labels, "y": point,
            "customdata": [_usd(value) for value in point], "marker": {"symbol": "diamond", "size": 13,
                                                                      "color": POINT_COLOUR},
            "hovertemplate": "point estimate: %{customdata}<extra></extra>",
        },
        {
            "type": "scatter", "mode": "markers", "name": "budget", "x": labels, "y": budget,
            "customdata": [_usd(value) for value in budget],
            "marker": {"symbol": "line-ew-open", "size": 44, "color": BUDGET_COLOUR, "line": {"width": 3}},
            "hovertemplate": "budget: %{customdata}<extra></extra>",
        },
    ]
    layout = layout_of(
        "Total cost: point estimate, P10–P90 and budget", "", "total cost (USD)",
        subtitle=f"Monte Carlo over each scenario's input ranges: {_draws_note(summaries)}.",
        yaxis={"tickprefix": "$", "rangemode": "tozero"},
    )
    return go.Figure(data=traces, layout=layout)
