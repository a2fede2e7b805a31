"""Scenario comparison figures: cost by line item, main-run wall-clock split, and total cost ranges against budget.

Each builder takes scenario names and `engine.scenario_outputs` results (and Monte Carlo summaries for the ranges), one
per scenario in the same order, and returns a plotly Figure. Names are user text: they are made unique, wrapped
and HTML-escaped before plotly renders them as labels.
"""

from __future__ import annotations

import html
import textwrap
from functools import partial
from typing import Any, Literal

import plotly.graph_objects as go

from dashboard.core.compare import unique_names
from dashboard.core.engine import LINE_ITEMS, PlanResult
from dashboard.core.scenario import Scenario
from dashboard.figures import palette
from dashboard.figures.axes import USD_AXIS
from dashboard.figures.plan import BUDGET_COLOUR, LABELS, layout_of
from dashboard.format import exact, number

_money = partial(number, unit="$")  # labels on the chart: three significant figures
_exact_money = partial(exact, unit="$")  # hover: the full value
NAME_WRAP_CHARS = 28
HOURS_PER_DAY = 24.0
TimelineKey = Literal["gpu_hours_compute", "gpu_hours_stall", "gpu_hours_rework"]
TIMELINE_PARTS: tuple[tuple[str, TimelineKey], ...] = (
    ("compute", "gpu_hours_compute"),
    ("checkpoint stalls", "gpu_hours_stall"),
    ("failure rework", "gpu_hours_rework"),
)
TIMELINE_HEADROOM = 1.2  # room right of the longest bar for its "N days" label
POINT_COLOUR = palette.POINT
RANGE_COLOUR = palette.RANGE


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


SCALES = {"usd": "$", "share": "% of total", "log": "log"}


def _scaled_axis(scale: str, title: str, top: float) -> dict[str, Any]:
    """The value axis for a scale: dollars (or days) from zero, percent of each bar's total, or a log axis."""
    if scale == "share":
        return {"title": {"text": "share of the option's total (%)"}, "range": [0.0, 100.0 * TIMELINE_HEADROOM],
                "ticksuffix": " %", "tickvals": list(range(0, 101, 20))}
    if scale == "log":
        return {"title": {"text": f"{title}, log scale"}, "type": "log"}
    return {"title": {"text": title}, "range": [0.0, top * TIMELINE_HEADROOM]}


def _check_scale(scale: str) -> None:
    if scale not in SCALES:
        raise ValueError(f"scale {scale!r}: use one of {', '.join(SCALES)}")


LEGEND_BELOW = {"orientation": "h", "x": 0.0, "xanchor": "left", "y": -0.18, "yanchor": "top", "traceorder": "normal"}


def _height(labels: list[str]) -> int:
    """Enough height for one bar per option plus title and a legend below that never scrolls."""
    return 260 + 70 * len(labels)


def cost_breakdown_figure(names: list[str], results: list[PlanResult], scale: str = "usd") -> go.Figure:
    """Horizontal stacked bars of each option's line items (those non-zero in any option), its total at the end.

    `scale` "share" draws each bar as percent of its own total; "log" puts the cost axis on a log scale, so a
    small option stays visible beside a large one.
    """
    _check_scale(scale)
    labels = scenario_labels(names)
    totals = [result["cost_total_usd"] for result in results]
    traces: list[dict[str, Any]] = []
    for key in LINE_ITEMS:
        values = [result["cost_breakdown"][key] for result in results]
        if any(value != 0 for value in values):
            shown = ([100.0 * value / total if total else 0.0 for value, total in zip(values, totals, strict=True)]
                     if scale == "share" else values)
            traces.append({
                "type": "bar", "orientation": "h", "name": _item_label(key), "x": shown, "y": labels,
                "marker": {"color": palette.series(key, len(traces))},
                "customdata": [_exact_money(value) for value in values],
                "hovertemplate": f"{_item_label(key)}: %{{customdata}}<extra></extra>",
            })
    ends = [100.0] * len(totals) if scale == "share" else totals
    layout = layout_of(
        "Cost by line item", "", "",
        subtitle={"usd": "Stacked per option; the figure at the end of each bar is its total.",
                  "share": "Each option's line items as a share of its own total (its total at the end).",
                  "log": "Log scale: small options stay visible; segment lengths are not to scale."}[scale],
        barmode="stack", xaxis=_scaled_axis(scale, "cost (USD)", max(totals)),
        yaxis={"autorange": "reversed", "automargin": True},
        legend=LEGEND_BELOW, height=_height(labels), margin={"b": 120},
        annotations=_totals(labels, ends, [_money(total) for total in totals], horizontal=True),
    )
    if scale == "usd":
        layout["xaxis"].update(USD_AXIS)
    return go.Figure(data=traces, layout=layout)


def timeline_figure(names: list[str], scenarios: list[Scenario], results: list[PlanResult],
                    scale: str = "usd") -> go.Figure:
    """One horizontal bar per option: the main run's wall-clock days as compute, checkpoint stalls and rework."""
    _check_scale(scale)
    labels = scenario_labels(names)
    totals = [result["wall_clock_days"] for result in results]
    traces: list[dict[str, Any]] = []
    for part, key in TIMELINE_PARTS:
        days = [result[key] / scenario.gpu_count / HOURS_PER_DAY for scenario, result in zip(scenarios, results,
                                                                                           strict=True)]
        shown = ([100.0 * value / total if total else 0.0 for value, total in zip(days, totals, strict=True)]
                 if scale == "share" else days)
        traces.append({
            "type": "bar", "orientation": "h", "name": part, "x": shown, "y": labels, "customdata": days,
            "marker": {"color": palette.series(part.replace(" ", "_"), len(traces))},
            "hovertemplate": f"{part}: %{{customdata:,.2f}} days<extra></extra>",
        })
    ends = [100.0] * len(totals) if scale == "share" else totals
    layout = layout_of(
        "Main run wall-clock", "", "",
        subtitle="Compute, checkpoint stalls and failure rework on each option's GPUs; experiments not included.",
        barmode="stack", yaxis={"autorange": "reversed", "automargin": True},
        xaxis=_scaled_axis(scale, "wall-clock days of the main run", max(totals)),
        legend=LEGEND_BELOW, height=_height(labels), margin={"b": 120},
        annotations=_totals(labels, ends, [f"{days:,.1f} days" for days in totals], horizontal=True),
    )
    return go.Figure(data=traces, layout=layout)


def _draws_note(summaries: list[dict[str, Any]]) -> str:
    runs = {(s["monte_carlo"]["draws"], s["monte_carlo"]["shape"], s["monte_carlo"]["seed"]) for s in summaries}
    return "; ".join(f"{draws:,} {shape} draws, seed {seed}" for draws, shape, seed in sorted(runs))


def range_figure(names: list[str], results: list[PlanResult], summaries: list[dict[str, Any]],
                 scale: str = "usd") -> go.Figure:
    """Each scenario's total cost: P10–P90 as a floating bar, the point estimate and the budget as markers.

    A floating bar rather than error bars: a skewed range can leave the point estimate below P10. "share" has no
    meaning for a range and draws dollars; "log" puts the cost axis on a log scale.
    """
    _check_scale(scale)
    labels = scenario_labels(names)
    p10 = [summary["p10"]["cost_total_usd"] for summary in summaries]
    p90 = [summary["p90"]["cost_total_usd"] for summary in summaries]
    point = [result["cost_total_usd"] for result in results]
    budget = [result["budget_usd"] for result in results]
    traces = [
        {
            "type": "bar", "orientation": "h", "name": "P10–P90", "y": labels, "base": p10,
            "x": [high - low for low, high in zip(p10, p90, strict=True)],
            "customdata": [f"{_exact_money(low)}–{_exact_money(high)}" for low, high in zip(p10, p90, strict=True)],
            "marker": {"color": RANGE_COLOUR}, "width": 0.4,
            "hovertemplate": "P10–P90: %{customdata}<extra></extra>",
        },
        {
            "type": "scatter", "mode": "markers", "name": "point estimate", "y": labels, "x": point,
            "customdata": [_exact_money(value) for value in point], "marker": {"symbol": "diamond", "size": 13,
                                                                      "color": POINT_COLOUR},
            "hovertemplate": "point estimate: %{customdata}<extra></extra>",
        },
        {
            "type": "scatter", "mode": "markers", "name": "budget", "y": labels, "x": budget,
            "customdata": [_exact_money(value) for value in budget],
            "marker": {"symbol": "line-ns-open", "size": 30, "color": BUDGET_COLOUR, "line": {"width": 3}},
            "hovertemplate": "budget: %{customdata}<extra></extra>",
        },
    ]
    layout = layout_of(
        "Total cost: point estimate, P10–P90 and budget", "total cost (USD)", "",
        subtitle=f"Monte Carlo over each option's input ranges: {_draws_note(summaries)}. A point estimate left "
                 "of its bar is below P10: the ranges lean towards higher cost.",
        xaxis={**USD_AXIS, **({"type": "log"} if scale == "log" else {"rangemode": "tozero"})},
        yaxis={"autorange": "reversed", "automargin": True},
        legend=LEGEND_BELOW, height=_height(labels), margin={"b": 120},
    )
    return go.Figure(data=traces, layout=layout)
