"""One palette for the app and the report: a series is drawn in the same colour in both."""

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.figures import compare, palette
from dashboard.report import theme


def test_the_report_template_uses_the_app_colours():
    assert tuple(theme.COLORWAY) == palette.COLORWAY
    assert theme.WATERFALL_COLOURS == palette.WATERFALL


def test_compute_is_the_same_colour_in_the_app_and_the_report():
    scenarios = [Scenario(name="A"), Scenario(name="B", method="tst")]
    results = [scenario_outputs(s) for s in scenarios]
    cost = compare.cost_breakdown_figure(["A", "B"], results)
    timeline = compare.timeline_figure(["A", "B"], scenarios, results)
    for figure in (cost, timeline):
        app = {trace.name: trace.marker.color for trace in figure.data}
        report = {trace.name: trace.marker.color for trace in theme.themed(figure).data}
        assert app == report  # nothing left to a template that differs between the two
        assert all(app.values())
    # Compute (the main run's line item and the timeline's part) is one blue, rework one red, in both charts.
    assert {trace.name: trace.marker.color for trace in cost.data}["main compute"] == palette.COMPUTE
    assert {trace.name: trace.marker.color for trace in timeline.data}["compute"] == palette.COMPUTE
    assert {trace.name: trace.marker.color for trace in timeline.data}["failure rework"] == \
        {trace.name: trace.marker.color for trace in cost.data}["failure rework"] == palette.SERIES["failure_rework"]
