"""Uncertainty figures: the distribution of total cost against the budget, and the one-at-a-time tornado.

Both take a `dashboard.core.uncertainty.MonteCarlo`. The distribution is binned with numpy before plotting,
so a figure carries a few dozen bars rather than every draw.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import plotly.graph_objects as go

from dashboard.core import catalogue
from dashboard.core.uncertainty import MonteCarlo, TornadoBar
from dashboard.figures.axes import USD_AXIS
from dashboard.format import number, short

BINS = 60
BUDGET_COLOUR = "#d62728"
PERCENTILE_COLOUR = "#444444"
LOW_COLOUR = "#2ca02c"
HIGH_COLOUR = "#9467bd"
_usd = partial(number, unit="$")
# Vertical-line labels: estimated width per character as a share of the x range, padding, and row height.
CHAR_WIDTH = 0.017
LABEL_PAD = 0.01
ROW_STEP = 0.08
LABEL_BACKGROUND = "rgba(255, 255, 255, 0.8)"
LEGEND_MARGIN = 140  # px under the tornado's plot: tick labels, the axis title, then up to three legend rows
CANNOT_RUN = "Cannot run as planned (see Can it run?): these draws price a run that does not fit.<br>"


def _percent(value: float) -> str:
    return f"{100 * value:.0f}"


def _dollars(value: float) -> str:
    return f"${value:,.2f}"


def _plain(value: float) -> str:
    return f"{value:.2f}"


# Each input's number format and the unit written once after its range: "MFU 26–44 %".
INPUT_FORMATS: dict[str, tuple[Callable[[float], str], str]] = {
    "mfu": (_percent, " %"),
    "price_reserved_per_gpu_hour": (_dollars, ""),
    "price_on_demand_per_gpu_hour": (_dollars, ""),
    "price_spot_per_gpu_hour": (_dollars, ""),
    "node_failures_per_1000_node_days": (_plain, " per 1,000 node-days"),
    "spot_interruptions_per_1000_node_days": (_plain, " per 1,000 node-days"),
    "tokens": (short, ""),
    "experiment_overhead": (_plain, "×"),
    "tst_speedup": (_plain, "×"),
}


def input_span(bar: TornadoBar) -> str:
    """An input's low–high range in its own unit: 'MFU 26–44 %'."""
    fmt, unit = INPUT_FORMATS[bar.input.key]
    return f"{bar.input.label} {fmt(bar.input_low)}–{fmt(bar.input_high)}{unit}"


def label_rows(xs: list[float], chars: list[int], x_range: tuple[float, float]) -> list[tuple[int, str]]:
    """A row (0 = top) and an anchor for each vertical line's label, so that no two labels overlap.

    Labels read left to right from their line (right to left when they would leave the plot); going from the
    leftmost line, each takes the first row where it starts after the previous label in that row has ended.
    Widths are estimated as `CHAR_WIDTH` of the x range per character (a 12-pixel font on a plot as narrow as 450
    pixels, the chart column of an 800-pixel window).
    """
    low, high = x_range
    span = (high - low) or 1.0
    row_ends: list[float] = []
    placed: dict[int, tuple[int, str]] = {}
    for index in sorted(range(len(xs)), key=lambda i: xs[i]):
        start = (xs[index] - low) / span
        width = chars[index] * CHAR_WIDTH + LABEL_PAD
        anchor = "left" if start + width <= 1.0 else "right"
        left, right = (start, start + width) if anchor == "left" else (start - width, start)
        row = next((r for r, end in enumerate(row_ends) if end <= left), len(row_ends))
        if row == len(row_ends):
            row_ends.append(right)
        row_ends[row] = right
        placed[index] = (row, anchor)
    return [placed[i] for i in range(len(xs))]


def distribution_figure(mc: MonteCarlo) -> go.Figure:
    """Histogram of total cost, with P10 / P50 / P90, the point estimate and the budget marked."""
    cost = mc.samples["cost_total_usd"]
    counts, edges = np.histogram(cost, bins=BINS)
    centres = 0.5 * (edges[:-1] + edges[1:])
    figure = go.Figure(go.Bar(
        x=centres, y=100.0 * counts / len(cost), width=np.diff(edges), name="draws",
        marker={"color": "#9ecae1"}, hovertemplate="%{x:$,.0f}: %{y:.2f} % of draws<extra></extra>",
    ))
    lines = [(f"P{q}", mc.percentile("cost_total_usd", q), PERCENTILE_COLOUR, "dash") for q in (10, 50, 90)]
    lines += [("plan", mc.point["cost_total_usd"], "#1f77b4", "dot"), ("budget", mc.budget_usd, BUDGET_COLOUR, "solid")]
    texts = [f"{label} {_usd(value)}" for label, value, _, _ in lines]
    values = [value for _, value, _, _ in lines]
    x_range = (min(edges[0], *values), max(edges[-1], *values))
    for (_, value, colour, dash), text, (row, anchor) in zip(
        lines, texts, label_rows(values, [len(t) for t in texts], x_range), strict=True
    ):
        figure.add_vline(x=value, line={"color": colour, "dash": dash, "width": 2})
        figure.add_annotation(x=value, y=1.0 - row * ROW_STEP, xref="x", yref="paper", text=text, showarrow=False,
                              xanchor=anchor, yanchor="top", font={"color": colour}, bgcolor=LABEL_BACKGROUND)
    figure.update_layout(
        title={
            "text": f"Total cost: P10 {_usd(lines[0][1])} · P50 {_usd(lines[1][1])} · P90 {_usd(lines[2][1])}",
            "subtitle": {"text": (
                ("" if mc.feasible else CANNOT_RUN)
                + f"{catalogue.text('prob_over_budget', mc.prob_over_budget)} chance of exceeding the "
                f"{_usd(mc.budget_usd)} budget; "
                f"{_usd(mc.budget_for_confidence(0.8))} covers 80 %, {_usd(mc.budget_for_confidence(0.9))} covers "
                f"90 %.<br>The plan's point estimate is at P{mc.point_rank('cost_total_usd'):.0f} of "
                f"{mc.draws:,} {mc.shape} draws (seed {mc.seed})."
            )},
        },
        xaxis={"title": {"text": "Total cost ($)"}, **USD_AXIS},
        yaxis={"title": {"text": "Share of draws (%)"}},
        bargap=0.02, showlegend=False, margin={"l": 60, "r": 20, "t": 80 if mc.feasible else 100, "b": 50},
    )
    return figure


def tornado_figure(mc: MonteCarlo) -> go.Figure:
    """Total cost with each input at its low and high end, the widest swing on top; no-effect inputs listed."""
    moving = [bar for bar in mc.tornado if bar.swing_usd > 0]
    still = [bar.input.label for bar in mc.tornado if bar.swing_usd == 0]
    point = mc.point["cost_total_usd"]
    labels = [input_span(bar) for bar in reversed(moving)]
    figure = go.Figure()
    for end, colour in (("low", LOW_COLOUR), ("high", HIGH_COLOUR)):
        costs = [getattr(bar, f"cost_{end}_usd") for bar in reversed(moving)]
        figure.add_trace(go.Bar(
            y=labels, x=[c - point for c in costs], base=point, orientation="h", name=f"input at its {end} end",
            marker={"color": colour}, customdata=costs,
            hovertemplate="%{y}<br>total %{customdata:$,.0f}<extra>" + end + "</extra>",
        ))
    # The plan's line is named in the legend: a label over the plot would collide with the subtitle or a bar.
    plan_line = {"color": "#1f77b4", "dash": "dot"}
    figure.add_vline(x=point, line=plan_line)
    figure.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=plan_line, name=f"plan {_usd(point)}",
                                hoverinfo="skip"))
    subtitle = ("" if mc.feasible else CANNOT_RUN) + (
        "One input at a time at its low and high end; the others stay at their likely values.")
    if still:
        subtitle += f"<br>No effect here: {', '.join(still)}."
    figure.update_layout(
        title={"text": "Which assumption moves total cost most", "subtitle": {"text": subtitle}},
        xaxis={"title": {"text": "Total cost ($)"}, **USD_AXIS},
        yaxis={"title": {"text": ""}, "automargin": True},
        # The legend sits at the foot of the figure, under the axis title: in a half-width column its three
        # entries wrap onto three rows, which a legend placed just below the plot drew over the title.
        barmode="overlay", legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0.0},
        margin={"l": 60, "r": 20, "t": 80 + 20 * subtitle.count("<br>"), "b": LEGEND_MARGIN},
        height=max(320, 60 + 42 * len(moving)) + LEGEND_MARGIN - 50,
    )
    return figure


CHARTS = {"Cost range": distribution_figure, "Tornado": tornado_figure}
