"""The report in colour: built in the app's process (streamlit imported, its placeholder template plotly's default)
it is the same file as the CLI's, and every trace of every chart carries an explicit, real colour."""

import json
import re
import subprocess
import sys
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit  # noqa: F401  (the trap: importing streamlit makes its placeholder template the default)
from plotly.basedatatypes import BaseTraceType

from dashboard.core.presets import presets
from dashboard.report.html import DEFAULT_APP_URL
from dashboard.report.theme import COLORWAY, LINE_TRACES, WATERFALL_COLOURS
from dashboard.ui import compare_cache

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"^#0000(0[1-9]|[1-3]\d|40)$")  # streamlit: "#000001" … "#000040"
STAMP = re.compile(r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC")
SCENARIOS = list(presets().values())[:3]


def plotly_figures(document: str) -> list[go.Figure]:
    """Every `Plotly.newPlot(id, data, layout, config)` call of a document, read back as a figure."""
    decoder = json.JSONDecoder()
    figures = []
    for match in re.finditer(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*", document):
        data, end = decoder.raw_decode(document, match.end())
        end = re.compile(r",\s*").match(document, end).end()
        layout, _ = decoder.raw_decode(document, end)
        figures.append(go.Figure(data=data, layout=layout))
    return figures


@pytest.fixture(scope="module")
def app_report() -> str:
    assert pio.templates.default == "streamlit", "the test must run where streamlit's template is the default"
    return compare_cache.report_html(tuple(SCENARIOS), "", DEFAULT_APP_URL)


def trace_colours(trace: BaseTraceType) -> list[object]:
    """The colour attributes that decide how a trace is drawn (each must be set)."""
    if trace.type == "waterfall":
        return [trace[part].marker.color for part in WATERFALL_COLOURS]
    if trace.type in LINE_TRACES:
        colours = [trace.line.color, trace.marker.color]
        if trace.fill not in (None, "none") or trace.stackgroup:
            colours.append(trace.fillcolor)
        return colours
    return [trace.marker.color]


def test_the_app_process_really_has_the_placeholder_template():
    """The condition the report must survive: a bare figure here draws in streamlit's placeholder colours."""
    assert go.Figure().layout.template.layout.colorway[0] == "#000001"


def test_every_trace_of_every_chart_has_an_explicit_real_colour(app_report):
    figures = plotly_figures(app_report)
    assert len(figures) == 3 + 8 * len(SCENARIOS)
    for number, figure in enumerate(figures, 1):
        assert list(figure.layout.template.layout.colorway) == list(COLORWAY), number
        for trace in figure.data:
            for colour in trace_colours(trace):
                assert isinstance(colour, str | list | tuple) and len(colour) > 0, (number, trace.name, colour)
                colours = [colour] if isinstance(colour, str) else colour
                assert not [c for c in colours if PLACEHOLDER.match(str(c))], (number, trace.name, colour)
    body = app_report.split("</head>", 1)[1]  # past plotly.js itself
    assert not re.search(r'"#0000(0[1-9]|[1-3]\d|40)"', body)  # nowhere in the charts, templates included


def test_the_apps_report_is_the_clis_report_apart_from_the_timestamp(app_report, tmp_path):
    bundle = tmp_path / "options.json"
    bundle.write_text(json.dumps([s.to_json_dict() for s in SCENARIOS]))
    out = tmp_path / "cli.html"
    done = subprocess.run([sys.executable, "-m", "dashboard", "report", str(bundle), "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    cli = out.read_text(encoding="utf-8")
    assert len(STAMP.findall(cli)) == 1 and len(STAMP.findall(app_report)) == 1
    assert STAMP.sub("Generated", cli) == STAMP.sub("Generated", app_report)
