"""Retrospective figures: the plan-vs-actual waterfall (dollars or GPU-hours) and the waste checklist in dollars.

Pure builders: data in (``dashboard.retro.gap.plan_vs_actual`` parts, ``dashboard.retro.waste`` checks), a plotly
Figure built from plain dicts out; no plotly.express, never streamlit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard.format import count, usd

OVER_PLAN_COLOUR = "#d62728"
UNDER_PLAN_COLOUR = "#2ca02c"
TOTAL_COLOUR = "#1f77b4"
WASTE_COLOUR = "#ff7f0e"


def _gpu_hours(value: float) -> str:
    return f"{count(value)} GPU-h"


# unit -> (parts column, axis title, label formatter)
UNITS: dict[str, tuple[str, str, Callable[[float], str]]] = {
    "usd": ("usd", "US dollars", usd),
    "gpu_hours": ("gpu_hours", "GPU-hours", _gpu_hours),
}


def _signed(value: float, fmt: Callable[[float], str]) -> str:
    return ("+" if value > 0 else "") + fmt(value)


def gap_figure(parts: pd.DataFrame, plan_total: float, actual_total: float, unit: str = "usd") -> go.Figure:
    """Waterfall from the plan total through each part to the actual total, in ``unit`` ("usd" or "gpu_hours").

    ``parts`` is ``plan_vs_actual``'s frame (``part``, ``gpu_hours``, ``usd``, ``note``); the totals are the
    summary's ``plan_usd`` / ``actual_usd`` (or ``plan_gpu_hours`` / ``actual_gpu_hours``). Both end bars are
    drawn at the totals given; parts above plan are red, below plan green. Hover shows each part's note.
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {unit!r}")
    column, axis_title, fmt = UNITS[unit]
    values = parts[column].to_numpy(dtype=float).tolist()
    notes = parts["note"].astype(str).tolist()
    waterfall = {
        "type": "waterfall",
        "name": axis_title,
        "x": ["plan", *parts["part"].astype(str).tolist(), "actual"],
        "y": [plan_total, *values, actual_total],
        "measure": ["absolute", *["relative"] * len(values), "absolute"],
        "text": [fmt(plan_total), *[_signed(value, fmt) for value in values], fmt(actual_total)],
        "textposition": "outside",
        "customdata": ["the plan's GPU compute", *notes, "GPU compute in the usage table"],
        "hovertemplate": "%{x}: %{text}<br>%{customdata}<extra></extra>",
        "increasing": {"marker": {"color": OVER_PLAN_COLOUR}},
        "decreasing": {"marker": {"color": UNDER_PLAN_COLOUR}},
        "totals": {"marker": {"color": TOTAL_COLOUR}},
        "connector": {"line": {"color": "#888888", "width": 1}},
    }
    gap = actual_total - plan_total
    layout = {
        "title": {"text": f"Plan vs actual ({axis_title}): {fmt(plan_total)} planned, {fmt(actual_total)} actual, "
                          f"gap {_signed(gap, fmt)}"},
        "xaxis": {"title": {"text": "part of the gap"}},
        "yaxis": {"title": {"text": axis_title}, **({"tickprefix": "$"} if unit == "usd" else {})},
        "showlegend": False,
        "margin": {"l": 70, "r": 20, "t": 60, "b": 50},
    }
    return go.Figure(data=[waterfall], layout=layout)


def waste_figure(checklist: list[dict[str, Any]]) -> go.Figure:
    """Horizontal bars of the dollars behind each check that has them (``usd`` not None); the subtitle lists
    the others as not in dollars."""
    priced = [check for check in checklist if check["usd"] is not None]
    unpriced = [check["check"] for check in checklist if check["usd"] is None]
    bars = {
        "type": "bar",
        "orientation": "h",
        "name": "waste",
        "x": [float(check["usd"]) for check in priced],
        "y": [f"{check['check']} ({check['unit']})" if check["unit"] == "USD/month" else check["check"]
              for check in priced],
        "text": [usd(float(check["usd"])) for check in priced],
        "textposition": "auto",
        "marker": {"color": WASTE_COLOUR},
        "hovertemplate": "%{y}: %{text}<extra></extra>",
    }
    layout = {
        "title": {"text": "Waste found, in dollars",
                  "subtitle": {"text": "Not in dollars: " + ", ".join(unpriced) if unpriced else ""}},
        "xaxis": {"title": {"text": "US dollars"}, "tickprefix": "$"},
        "yaxis": {"title": {"text": "check"}, "autorange": "reversed"},
        "showlegend": False,
        "margin": {"l": 140, "r": 20, "t": 80, "b": 50},
    }
    return go.Figure(data=[bars], layout=layout)
