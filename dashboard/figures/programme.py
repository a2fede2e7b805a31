"""The programme's figures: where its money and GPU-hours go by stage, and its timeline.

Both take `engine.scenario_outputs(...)["programme"]` (`dashboard.core.programme.summary`): one row per stage in
calendar order, the main run's own rows included, so a plan without stages still shows its main run.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import plotly.graph_objects as go

from dashboard.core import catalogue
from dashboard.figures import palette
from dashboard.figures.axes import COUNT_AXIS, USD_AXIS
from dashboard.figures.plan import figure, layout_of
from dashboard.format import exact, number
from dashboard.safe_text import plotly_text

TEMPLATE = "plotly_white"
COST_TITLE = "Where the programme goes"
TIMELINE_TITLE = "Programme timeline"
MS_PER_DAY = 86_400_000  # a date axis measures a bar's length in milliseconds
PANEL_GAP = 0.12  # between the cost and the GPU-hours panels, a share of the width
PANEL_TICKS = 3  # each panel is half a chart column wide: few ticks, and the bars carry their values
ROW_PX = 34  # height per stage, so long programmes stay readable
BASE_PX = 180
# One colour per kind of stage: the main run is the compute blue of every other chart.
KIND_COLOURS = {
    "data_preparation": palette.COLORWAY[9],
    "scaling_ladder": palette.COLORWAY[1],
    "ablations": palette.COLORWAY[2],
    "other_experiments": palette.SERIES["experiments"],
    "main": palette.COMPUTE,
    "mid_training": palette.COLORWAY[4],
    "long_context": palette.COLORWAY[6],
    "evaluation": palette.COLORWAY[5],
    "eval_debug": palette.SERIES["evaluation"],
    "people": palette.SERIES["people"],
}


def stage_labels(stages: list[dict[str, Any]]) -> list[str]:
    """Each row's label as plotly text, numbered when two rows share one ("Ablations", "Ablations (2)"), so no
    two bars fall on the same category."""
    seen: dict[str, int] = {}
    labels = []
    for stage in stages:
        text = plotly_text(stage["label"])
        seen[text] = seen.get(text, 0) + 1
        labels.append(text if seen[text] == 1 else f"{text} ({seen[text]})")
    return labels


def _height(rows: int) -> int:
    return BASE_PX + ROW_PX * max(rows, 1)


def cost_figure(summary: dict[str, Any]) -> go.Figure:
    """Two panels of horizontal bars, one row per stage in calendar order: its dollars (left) and its GPU-hours
    (right), each labelled with its value and share of the programme's."""
    stages = summary["stages"]
    labels = stage_labels(stages)
    colours = [KIND_COLOURS.get(stage["kind"], palette.NEUTRAL_LIGHT) for stage in stages]
    total_usd, total_hours = summary["total_usd"], summary["gpu_hours"]
    traces = []
    for axis, key, total, unit, name in (("x", "cost_usd", total_usd, "$", "cost"),
                                         ("x2", "gpu_hours", total_hours, "count", "GPU-hours")):
        values = [stage[key] for stage in stages]
        shares = [value / total if total > 0 else 0.0 for value in values]
        traces.append({
            "type": "bar", "orientation": "h", "name": name, "xaxis": axis, "yaxis": "y",
            "y": labels, "x": values, "marker": {"color": colours},
            "text": [f"{number(value, unit)} · {number(share, 'fraction')}"
                     for value, share in zip(values, shares, strict=True)],
            "textposition": "auto", "cliponaxis": False,
            "customdata": [exact(value, unit) for value in values],
            "hovertemplate": f"%{{y}}: %{{customdata}} {'' if unit == '$' else name}<extra></extra>",
        })
    half = (1.0 - PANEL_GAP) / 2
    subtitle = (f"{catalogue.label('programme.total_usd')} {catalogue.text('programme.total_usd', total_usd)}, "
                f"{catalogue.text('programme.gpu_hours', total_hours)} GPU-hours; final run "
                f"{catalogue.text('programme.final_run_share', summary['final_run_share'])} of the programme")
    layout = layout_of(
        COST_TITLE, "cost (USD)", "", subtitle=subtitle, template=TEMPLATE, showlegend=False,
        height=_height(len(stages)),
        xaxis={**USD_AXIS, "domain": [0.0, half], "rangemode": "tozero", "nticks": PANEL_TICKS},
        xaxis2={**COUNT_AXIS, "domain": [1.0 - half, 1.0], "rangemode": "tozero", "nticks": PANEL_TICKS,
                "title": {"text": "GPU-hours"}, "anchor": "y"},
        yaxis={"autorange": "reversed", "automargin": True},
        margin={"l": 20, "r": 30, "t": 80, "b": 50},
    )
    return figure(traces, layout)


def _date(start_date: str, day: float) -> str:
    """The moment `day` days after the start date's midnight, as plotly reads a date ("2027-01-05 12:00:00")."""
    moment = dt.datetime.fromisoformat(start_date) + dt.timedelta(days=day)
    return moment.isoformat(sep=" ")


def timeline_figure(summary: dict[str, Any]) -> go.Figure:
    """Gantt-like bars from each stage's start day to its end day: the stages one after another, evaluations
    and the main run's shares beside it. On a date axis when the programme has a start date, else in days from
    its start. Rows of no calendar time (people) are left out."""
    stages = [stage for stage in summary["stages"] if stage["calendar_days"] > 0]
    labels = stage_labels(stages)
    start = summary["start_date"]
    days = [stage["calendar_days"] for stage in stages]
    starts = [stage["start_day"] for stage in stages]
    hover = [f"day {number(stage['start_day'], '')} to {number(stage['end_day'], '')}: "
             f"{catalogue.text('programme.calendar_days', stage['calendar_days'])}, "
             f"{number(stage['cost_usd'], '$')}" for stage in stages]
    bar = {
        "type": "bar", "orientation": "h", "name": "stages", "y": labels,
        "x": days if start is None else [day * MS_PER_DAY for day in days],
        "base": starts if start is None else [_date(start, day) for day in starts],
        "marker": {"color": [KIND_COLOURS.get(stage["kind"], palette.NEUTRAL_LIGHT) for stage in stages]},
        "customdata": hover, "hovertemplate": "%{y}<br>%{customdata}<extra></extra>",
    }
    calendar = catalogue.text("programme.calendar_days", summary["calendar_days"])
    if start is None:
        subtitle = f"{calendar} from the start; evaluations run beside the main run, on other GPUs"
        xaxis: dict[str, Any] = {"rangemode": "tozero"}
        x_title = "days from the start"
    else:
        subtitle = (f"{calendar}: {plotly_text(start)} to {plotly_text(summary['end_date'])}; evaluations run beside "
                    "the main run, on other GPUs")
        xaxis = {"type": "date"}
        x_title = "date"
    layout = layout_of(TIMELINE_TITLE, x_title, "", subtitle=subtitle, template=TEMPLATE, showlegend=False,
                       height=_height(len(stages)), xaxis=xaxis,
                       yaxis={"autorange": "reversed", "automargin": True},
                       margin={"l": 20, "r": 30, "t": 80, "b": 50})
    return figure([bar], layout)
