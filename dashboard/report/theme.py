"""The report's own plotly template and an explicit colour on every trace (the app's, `dashboard.figures.palette`).

Importing streamlit makes its placeholder template (`#000001`…) plotly's default, and only a running Streamlit
page swaps those placeholders for real colours; a figure exported from the app would draw in near-black. Every
figure the report embeds therefore carries this template and a colour on each trace, so the app's report and the
CLI's report are the same file.
"""

from __future__ import annotations

import plotly.graph_objects as go

from dashboard.figures import palette

# plotly's own default look ("plotly" template), spelled out so that nothing depends on pio.templates.default,
# with the app's colours (`dashboard.figures.palette`): a series is the same colour in the app and the report.
COLORWAY = palette.COLORWAY
_AXIS = {"gridcolor": "white", "linecolor": "white", "zerolinecolor": "white", "zerolinewidth": 2, "ticks": "",
         "automargin": True, "title": {"standoff": 15}}
TEMPLATE = go.layout.Template(layout={
    "colorway": list(COLORWAY),
    "font": {"color": "#2a3f5f"},
    "paper_bgcolor": "white",
    "plot_bgcolor": "#E5ECF6",
    "hovermode": "closest",
    "hoverlabel": {"align": "left"},
    "title": {"x": 0.05},
    "xaxis": _AXIS,
    "yaxis": _AXIS,
})
WATERFALL_COLOURS = palette.WATERFALL
FILL_OPACITY = 0.5
MARKER_TRACES = {"bar", "histogram", "funnel", "box", "violin", "scatterpolar", "pie"}
LINE_TRACES = {"scatter", "scattergl"}


def _with_opacity(colour: str, opacity: float) -> str:
    """`#rrggbb` as `rgba(r, g, b, opacity)`; any other colour unchanged."""
    if colour.startswith("#") and len(colour) == 7:
        red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
        return f"rgba({red}, {green}, {blue}, {opacity})"
    return colour


def _colour_trace(trace: go.BaseTraceType, colour: str) -> None:
    """Fill in the colour attributes a trace left to the template, as plotly.js would pick them."""
    if trace.type == "waterfall":
        for part, default in WATERFALL_COLOURS.items():
            marker = trace[part].marker
            if marker.color is None:
                marker.color = default
    elif trace.type in LINE_TRACES:
        chosen = trace.line.color or (trace.marker.color if isinstance(trace.marker.color, str) else None) or colour
        if trace.line.color is None:
            trace.line.color = chosen
        if trace.marker.color is None:
            trace.marker.color = chosen
        if (trace.fill not in (None, "none") or trace.stackgroup) and trace.fillcolor is None:
            trace.fillcolor = _with_opacity(chosen, FILL_OPACITY)
    elif trace.type in MARKER_TRACES and trace.marker.color is None:
        trace.marker.color = colour


def themed(figure: go.Figure) -> go.Figure:
    """A copy of the figure with the report's template and an explicit colour on every trace."""
    copy = go.Figure(figure)
    copy.layout.template = TEMPLATE
    for index, trace in enumerate(copy.data):
        _colour_trace(trace, COLORWAY[index % len(COLORWAY)])  # as the app draws it from the layout colorway
    return copy
