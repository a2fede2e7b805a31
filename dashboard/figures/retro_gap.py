"""Retrospective figures: the plan-vs-actual waterfall (dollars or GPU-hours) and the waste checklist in the bill's
currency ("$1.2k" for US dollars, "1.2k NOK" for another code, as ``dashboard.format.money`` writes them).

The plan is priced in US dollars, so the waterfall in money needs a bill in US dollars: with another currency
``gap_figure`` refuses the "usd" unit (a USD − NOK difference is no number) and the page shows the GPU-hours.

Pure builders: data in (``dashboard.retro.gap.plan_vs_actual`` parts, ``dashboard.retro.waste`` checks), a plotly
Figure built from plain dicts out; no plotly.express, never streamlit.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.axes import COUNT_AXIS, USD_AXIS
from dashboard.figures.retro_usage import money_axis
from dashboard.format import USD, count_sig, money, number, usd_sig
from dashboard.retro.waste import WasteCheck, WasteSummary, waste_summary
from dashboard.safe_text import plotly_text

OVER_PLAN_COLOUR = "#d62728"
UNDER_PLAN_COLOUR = "#2ca02c"
TOTAL_COLOUR = "#1f77b4"
WASTE_COLOUR = "#ff7f0e"
NO_WASTE = "No waste found in this view."  # said instead of an empty chart (``has_waste``)
UNKNOWN_COLOUR = "#7f7f7f"
UNKNOWN_WRAP = 16  # characters per line of the text inside an unknown column


def _gpu_hours(value: float) -> str:
    return f"{count_sig(value)} GPU-h"


# unit -> (parts column, axis title, label formatter)
UNITS: dict[str, tuple[str, str, Callable[[float], str]]] = {
    "usd": ("usd", "US dollars", usd_sig),
    "gpu_hours": ("gpu_hours", "GPU-hours", _gpu_hours),
}


def _signed(value: float, fmt: Callable[[float], str]) -> str:
    return ("+" if value > 0 else "") + fmt(value)


def _unknown_bars(parts: pd.DataFrame, plan_total: float, values: list[float], known) -> list[dict[str, Any]]:
    """A hatched, labelled column over each part the table cannot tell (``known`` False): from zero to the running
    level at that part, so it reads as "not known", never as a zero difference."""
    running = plan_total + np.cumsum([0.0, *values[:-1]])
    unknown = [i for i, ok in enumerate(known) if not ok]
    if not unknown:
        return []
    needs = parts["needs"].astype(str).tolist() if "needs" in parts else [""] * len(values)
    return [{
        "type": "bar",
        "name": "unknown",
        "x": [str(parts["part"].iloc[i]) for i in unknown],
        "y": [float(running[i]) for i in unknown],
        "marker": {"color": "rgba(0, 0, 0, 0)", "line": {"color": UNKNOWN_COLOUR, "width": 1},
                   "pattern": {"shape": "/", "fgcolor": UNKNOWN_COLOUR, "size": 8}},
        "text": ["<br>".join(textwrap.wrap(f"unknown: import {needs[i]}", UNKNOWN_WRAP)) for i in unknown],
        "textposition": "inside",
        "textangle": 0,
        "insidetextanchor": "middle",
        "hovertemplate": "%{x}: %{text}<extra></extra>",
    }]


def currency_title(currency: str | None = USD) -> str:
    """An axis title for amounts in ``currency``: "US dollars", the code of another currency ("NOK"), "cost" when
    the bill names none."""
    return "US dollars" if currency == USD else (currency or "cost")


def gap_figure(parts: pd.DataFrame, plan_total: float, actual_total: float, unit: str = "usd",
               currency: str | None = USD) -> go.Figure:
    """Waterfall from the plan total through each part to the actual total, in ``unit`` ("usd" or "gpu_hours").

    ``parts`` is ``plan_vs_actual``'s frame (``part``, ``gpu_hours``, ``usd``, ``note``); the totals are the
    summary's ``plan_usd`` / ``actual_usd`` (or ``plan_gpu_hours`` / ``actual_gpu_hours``). Both end bars are
    drawn at the totals given; parts above plan are red, below plan green. Hover shows each part's note. A part
    the table cannot tell (``known`` False) is labelled "unknown" and covered by a hatched column saying what
    to import to know it. ``currency`` is the bill's: the plan is in US dollars, so the "usd" unit is refused for
    a bill in another currency (the GPU-hours have none).
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {unit!r}")
    if unit == "usd" and currency != USD:
        raise ValueError(f"the plan is in US dollars and the bill in {currency or 'no stated currency'}: their "
                         "difference is not a number; compare GPU-hours (unit='gpu_hours')")
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
    known = parts["known"].to_numpy(dtype=bool) if "known" in parts else [True] * len(values)
    if not all(known):
        waterfall["text"] = [fmt(plan_total), *[_signed(v, fmt) if ok else "unknown" for v, ok in
                                                zip(values, known, strict=True)], fmt(actual_total)]
    gap = actual_total - plan_total
    data = [waterfall, *_unknown_bars(parts, plan_total, values, known)]
    layout = {
        "title": {"text": f"Plan vs actual ({axis_title}): {fmt(plan_total)} planned, {fmt(actual_total)} actual, "
                          f"gap {_signed(gap, fmt)}"},
        "xaxis": {"title": {"text": "part of the gap"}},
        "yaxis": {"title": {"text": axis_title}, **(USD_AXIS if unit == "usd" else COUNT_AXIS)},
        "showlegend": False,
        "margin": {"l": 70, "r": 20, "t": 60, "b": 50},
    }
    return go.Figure(data=data, layout=layout)


def has_waste(summary: WasteSummary) -> bool:
    """Whether ``waste.waste_summary`` found waste to draw (an item with an amount other than 0); without any the
    page says ``NO_WASTE`` instead of drawing empty axes."""
    return any(item.usd for item in summary.items)


def waste_figure(checklist: list[WasteCheck], summary: WasteSummary | None = None,
                 currency: str | None = USD) -> go.Figure:
    """Horizontal bars of the waste found, in the bill's ``currency`` and largest first, each labelled with its
    share of spend (``waste.waste_summary``); the title carries the total. Monthly storage growth is not one-off
    waste: the subtitle gives it apart, with the checks that have no amount."""
    summary = summary or waste_summary(checklist, 0.0)
    items = summary.items
    monthly = [check for check in checklist if check.kind == "monthly" and check.usd]
    unpriced = [check.check for check in checklist if check.kind == "waste" and check.usd is None]
    notes = [f"{check.check}: {money(check.usd, currency)} a month, growing (not counted above)"
             for check in monthly]
    if unpriced:
        notes.append(f"Not in {'dollars' if currency == USD else currency_title(currency)}: " + ", ".join(unpriced))
    bars = {
        "type": "bar",
        "orientation": "h",
        "name": "waste",
        "x": [item.usd for item in items],
        "y": [item.check for item in items],
        "text": [money(item.usd, currency)
                 + ("" if item.share is None else f" · {number(item.share, 'fraction')} of spend")
                 for item in items],
        "textposition": "auto",
        "marker": {"color": WASTE_COLOUR},
        "hovertemplate": "%{y}: %{text}<extra></extra>",
    }
    share = "" if summary.share is None else f", {number(summary.share, 'fraction')} of spend"
    layout = {
        "title": {"text": f"Waste found: {money(summary.total_usd, currency)}{share}",
                  "subtitle": {"text": plotly_text(" · ".join(notes))}},
        "xaxis": {"title": {"text": currency_title(currency)}, **money_axis(currency)},
        "yaxis": {"autorange": "reversed", "automargin": True},  # the bars name their checks
        "showlegend": False,
        "margin": {"l": 140, "r": 20, "t": 80, "b": 50},
    }
    return go.Figure(data=[bars], layout=layout)
