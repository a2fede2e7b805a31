"""Retrospective figures: the plan-vs-actual waterfall and the waste bars, built from plain data."""

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.figures.retro_gap import gap_figure, waste_figure
from dashboard.retro.waste import WasteCheck, waste_summary

MODULE = Path(__file__).resolve().parents[2] / "dashboard" / "figures" / "retro_gap.py"

PARTS = pd.DataFrame({
    "part": ["scale", "efficiency", "failures and restarts", "experiments", "idle / unattributed", "price"],
    "gpu_hours": [900.0, -100.0, 50.0, 0.0, 25.0, 0.0],
    "usd": [1800.0, -200.0, 100.0, 0.0, 550.0, 1200.0],
    "note": ["more tokens", "faster", "node failures", "as planned", "dev box", "dearer hours"],
})


@pytest.mark.parametrize(("unit", "plan_total", "axis_title", "first_part_text"), [
    ("usd", 2400.0, "US dollars", "+$1.8k"),
    ("gpu_hours", 1200.0, "GPU-hours", "+900 GPU-h"),
])
def test_gap_waterfall_runs_from_plan_through_parts_to_actual(unit, plan_total, axis_title, first_part_text):
    actual_total = plan_total + PARTS[unit].sum()
    figure = gap_figure(PARTS, plan_total, actual_total, unit=unit)
    assert isinstance(figure, go.Figure)
    (trace,) = figure.data
    assert trace.type == "waterfall"
    assert list(trace.x) == ["plan", *PARTS["part"], "actual"]
    assert list(trace.measure) == ["absolute"] + ["relative"] * len(PARTS) + ["absolute"]
    assert list(trace.y) == [plan_total, *PARTS[unit], actual_total]
    assert trace.text[1] == first_part_text
    assert list(trace.customdata[1:-1]) == list(PARTS["note"])
    assert figure.layout.yaxis.title.text == axis_title
    assert figure.layout.xaxis.title.text
    assert axis_title in figure.layout.title.text
    assert plan_total + sum(trace.y[1:-1]) == pytest.approx(trace.y[-1])


def test_gap_figure_refuses_an_unknown_unit():
    with pytest.raises(ValueError, match="unit"):
        gap_figure(PARTS, 1.0, 2.0, unit="eur")


def _check(name: str, kind: str, figure: float | None, unit: str, usd: float | None) -> WasteCheck:
    """A waste check with no detail or rows behind it."""
    return WasteCheck(name.lower().replace(" ", "_"), name, kind, figure, unit, usd, "", None)


CHECKLIST = [
    _check("Failed runs", "waste", 40.0, "% of GPU-hours", 80.0),
    _check("Successful runs", "kpi", 60.0, "% of cost", None),
    _check("Idle capacity", "waste", 335.0, "USD", 335.0),
    _check("Duplicate runs", "waste", None, "GPU-hours", None),
    _check("Storage growth", "monthly", 368.0, "USD/month", 368.0),
    _check("Untagged spend", "hygiene", 50.0, "USD", 50.0),
]


def test_waste_figure_ranks_the_waste_in_dollars_and_share_of_spend():
    figure = waste_figure(CHECKLIST, waste_summary(CHECKLIST, 1660.0))
    (trace,) = figure.data
    assert list(trace.x) == [335.0, 80.0]  # largest first; storage growth, hygiene and the KPI are not waste
    assert list(trace.y) == ["Idle capacity", "Failed runs"]
    assert list(trace.text) == ["$335 · 20.2 % of spend", "$80 · 4.82 % of spend"]
    assert figure.layout.title.text == "Waste found: $415, 25 % of spend"
    subtitle = figure.layout.title.subtitle.text
    assert "Storage growth: $368 a month" in subtitle and "Not in dollars: Duplicate runs" in subtitle


def test_waste_figure_with_nothing_priced():
    figure = waste_figure([CHECKLIST[3]])
    assert list(figure.data[0].x) == []
    assert figure.layout.title.text == "Waste found: $0"
    assert "Duplicate runs" in figure.layout.title.subtitle.text


def test_unknown_parts_are_hatched_and_say_what_to_import():
    parts = PARTS.assign(known=[True, False, True, True, True, True],
                         needs=["", "a run export with tokens (the W&B runs table)", "", "", "", ""])
    figure = gap_figure(parts, 100.0, 120.0)
    waterfall, unknown = figure.data
    assert waterfall.text[2] == "unknown"  # efficiency: not "+$0.00"
    assert list(unknown.x) == ["efficiency"] and unknown.marker.pattern.shape == "/"
    assert [text.replace("<br>", " ") for text in unknown.text] == [
        "unknown: import a run export with tokens (the W&B runs table)"]
    assert list(unknown.y) == [100.0 + PARTS["usd"].iloc[0]]  # up to the running level after scale
