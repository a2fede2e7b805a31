"""Programme figures: where the money and GPU-hours go by stage, and the timeline, on a hand-built programme; every
preset's figures pass plotly's check unchanged."""

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.programme import BESIDE, PRESETS
from dashboard.core.scenario import default_scenario, scenario_from_dict
from dashboard.figures import programme

DAY_MS = 86_400_000


def _row(kind, label, cost, hours, days, start):
    return {"kind": kind, "label": label, "cost_usd": cost, "gpu_hours": hours, "calendar_days": days,
            "start_day": start, "end_day": start + days, "note": ""}


# A ladder of 2 days, then the main run of 5 days; evaluations of half a day beside the main run; people take no
# calendar time. Total $100 + $300 + $20 + $80 = $500; GPU-hours 40 + 120 + 8 = 168; the final run $300 is 60 %.
STAGES = [
    _row("scaling_ladder", "Scaling ladder", 100.0, 40.0, 2.0, 0.0),
    _row("main", "Main pre-training", 300.0, 120.0, 5.0, 2.0),
    _row("evaluation", "Evaluations", 20.0, 8.0, 0.5, 2.0),
    _row("people", "People", 80.0, 0.0, 0.0, 2.0),
]


def _summary(start_date=None, end_date=None, stages=STAGES):
    return {"stages": stages, "total_usd": 500.0, "gpu_hours": 168.0, "final_run_usd": 300.0, "final_run_share": 0.6,
            "calendar_days": 7.0, "start_date": start_date, "end_date": end_date}


def test_cost_figure_puts_each_stage_s_dollars_and_gpu_hours_side_by_side():
    fig = programme.cost_figure(_summary())
    dollars, hours = fig.data
    labels = ["Scaling ladder", "Main pre-training", "Evaluations", "People"]
    assert list(dollars.y) == list(hours.y) == labels
    assert list(dollars.x) == [100.0, 300.0, 20.0, 80.0] and dollars.xaxis == "x"
    assert list(hours.x) == [40.0, 120.0, 8.0, 0.0] and hours.xaxis == "x2"
    # Each bar's value and share of the programme: $100 of $500 is 20 %; 120 of 168 GPU-hours is 71.4 %.
    assert dollars.text[0] == "$100 · 20 %" and dollars.text[1] == "$300 · 60 %"
    assert hours.text[1] == "120 · 71.4 %"
    assert "final run 60 % of the programme" in fig.layout.title.subtitle.text
    assert "$500" in fig.layout.title.subtitle.text
    assert fig.layout.yaxis.autorange == "reversed"  # calendar order from the top
    assert fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0]  # two panels that do not overlap
    assert fig.layout.template.layout.paper_bgcolor == pio.templates["plotly_white"].layout.paper_bgcolor


def test_timeline_bars_follow_one_another_and_evaluations_run_beside_the_main_run():
    fig = programme.timeline_figure(_summary())
    (bar,) = fig.data
    assert list(bar.y) == ["Scaling ladder", "Main pre-training", "Evaluations"]  # people take no calendar time
    assert list(bar.base) == [0.0, 2.0, 2.0]
    assert list(bar.x) == [2.0, 5.0, 0.5]
    # The main run starts where the ladder ends: 0 + 2 days.
    assert bar.base[1] == bar.base[0] + bar.x[0]
    assert fig.layout.xaxis.title.text == "days from the start"
    assert fig.layout.title.subtitle.text.startswith("7 days from the start")


def test_timeline_is_drawn_in_dates_from_the_start_date():
    fig = programme.timeline_figure(_summary("2027-01-04", "2027-01-11"))
    (bar,) = fig.data
    assert list(bar.base) == ["2027-01-04 00:00:00", "2027-01-06 00:00:00", "2027-01-06 00:00:00"]
    assert list(bar.x) == [2 * DAY_MS, 5 * DAY_MS, DAY_MS / 2]
    assert fig.layout.xaxis.type == "date"
    assert "2027-01-04 to 2027-01-11" in fig.layout.title.subtitle.text


def test_stages_sharing_a_label_get_their_own_bars():
    twice = [_row("ablations", "Ablations", 10.0, 1.0, 1.0, 0.0), _row("ablations", "Ablations", 20.0, 2.0, 1.0, 1.0),
             _row("main", "<b>Main</b>", 300.0, 120.0, 5.0, 2.0)]
    fig = programme.cost_figure(_summary(stages=twice))
    assert list(fig.data[0].y) == ["Ablations", "Ablations (2)", "&lt;b&gt;Main&lt;/b&gt;"]


def _outputs(preset, start_date=None):
    data = {**default_scenario().to_json_dict(), **PRESETS[preset], "start_date": start_date}
    return scenario_outputs(scenario_from_dict(data))["programme"]


def test_the_engine_s_full_programme_is_drawn_one_stage_after_another():
    summary = _outputs("full programme")
    fig = programme.timeline_figure(summary)
    (bar,) = fig.data
    rows = [stage for stage in summary["stages"] if stage["calendar_days"] > 0]
    in_turn = [index for index, stage in enumerate(rows) if stage["kind"] not in BESIDE]
    for previous, index in zip(in_turn, in_turn[1:], strict=False):
        assert bar.base[index] == pytest.approx(bar.base[previous] + bar.x[previous])
    main = next(index for index, stage in enumerate(rows) if stage["kind"] == "main")
    beside = [index for index, stage in enumerate(rows) if stage["kind"] in BESIDE]
    assert beside and all(bar.base[index] == bar.base[main] for index in beside)
    assert max(base + length for base, length in zip(bar.base, bar.x, strict=True)) == pytest.approx(
        summary["calendar_days"])


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("start_date", [None, "2027-01-04"])
def test_every_preset_s_figures_pass_plotly_s_check_unchanged(preset, start_date):
    summary = _outputs(preset, start_date)
    for fig in (programme.cost_figure(summary), programme.timeline_figure(summary)):
        checked = go.Figure(fig.to_dict())
        assert json.loads(pio.to_json(checked)) == json.loads(pio.to_json(fig, validate=False))
        assert "Main pre-training" in fig.data[0].y
