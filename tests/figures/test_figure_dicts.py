"""The Plan page's figures and the Retrospective's spend chart skip plotly's property check when built
(`figures.plan.figure`); here every chart of every preset and of the default plan, and the spend chart of every
bundled billing sample, goes through that check, and must come out of it unchanged."""

import json
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.core.uncertainty import monte_carlo
from dashboard.figures import plan, retro_usage, throughput
from dashboard.figures.feasibility import memory_figure
from dashboard.figures.plan_charts import CHARTS, plan_chart
from dashboard.figures.uncertainty import distribution_figure, tornado_figure
from dashboard.ingest.load import import_path
from dashboard.retro import spend

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
BILLING_SAMPLES = ("focus_sample.csv", "aws_cur_sample.csv", "aws_cur2_sample.csv", "gcp_sample.csv",
                   "azure_sample.csv")

SCENARIOS = {"default": default_scenario(), **presets(),
             # A custom GPU has no bandwidths for the step-time model: its MFU is entered.
             "custom GPU, TST": Scenario(gpu_type="custom", peak_tflops=500.0, method="tst", mfu=0.4)}


def _charts(scenario: Scenario) -> dict[str, go.Figure]:
    result = scenario_outputs(scenario)
    figures = {name: plan_chart(name, scenario, result) for name in CHARTS}
    figures["memory"] = memory_figure(result["memory"], result["layout"])
    figures[throughput.TITLE] = throughput.step_figure(result, throughput.scaling_curve(scenario, result),
                                                       scenario.gpu_count)
    return figures


@pytest.mark.parametrize("scenario_name", list(SCENARIOS))
def test_every_chart_passes_plotly_s_check_unchanged(scenario_name):
    for name, figure in _charts(SCENARIOS[scenario_name]).items():
        checked = go.Figure(figure.to_dict())  # raises ValueError on a property plotly does not know
        assert json.loads(pio.to_json(checked)) == json.loads(pio.to_json(figure, validate=False)), name


@pytest.mark.parametrize(("traces", "layout"), [
    ([{"type": "bar", "x": [1], "colour": "red"}], {}),  # no such property
    ([{"type": "bar", "x": [1]}], {"xaxis": {"type": "logarithmic"}}),  # not one of the axis types
])
def test_the_check_catches_what_the_build_lets_through(traces, layout):
    unchecked = plan.figure(traces, layout)
    with pytest.raises(ValueError):
        go.Figure(unchecked.to_dict())


def test_a_named_template_is_spelled_out_as_plotly_would():
    built = plan.figure([{"type": "bar", "x": [1]}], {"template": "plotly_white"})
    assert built.to_dict()["layout"]["template"] == go.Figure(layout={"template": "plotly_white"}).to_dict()[
        "layout"]["template"]


@pytest.fixture(scope="module")
def sample_usage():
    return {name: import_path(SAMPLES / name)[0] for name in BILLING_SAMPLES}


@pytest.mark.parametrize("name", BILLING_SAMPLES)
@pytest.mark.parametrize(("freq", "by", "metric", "budget_usd"), [
    ("D", "team", "cost", 1e6), ("W", "project", "gpu_hours", None), ("D", "pricing", "cost", None)])
def test_the_spend_chart_passes_plotly_s_check_unchanged(sample_usage, name, freq, by, metric, budget_usd):
    # The Retrospective's spend chart is built unchecked too (it is drawn again on every filter change).
    usage = sample_usage[name]
    frame = spend.spend_over_time(usage, freq=freq, by=by)
    daily = spend.daily_from_days(frame, metric) if freq == "D" else spend.daily_total(usage, metric=metric)
    cumulative = spend.cumulative_with_forecast(daily, daily.index[-1].date() + pd.Timedelta(days=30))
    figure = retro_usage.spend_figure(frame, cumulative, budget_usd, metric=metric)
    checked = go.Figure(figure.to_dict())
    assert json.loads(pio.to_json(checked)) == json.loads(pio.to_json(figure, validate=False))
    assert len(figure.data) > 1


def _axes(figure: go.Figure) -> dict[str, dict]:
    layout = figure.to_dict()["layout"]
    return {name: axis for name, axis in layout.items() if name.startswith(("xaxis", "yaxis"))}


@pytest.mark.parametrize("scenario_name", ["default", "custom GPU, TST"])
def test_no_chart_writes_its_ticks_in_si_prefixes(scenario_name, sample_usage):
    # d3's "~s" writes 0.05 as "50m" (milli, read as millions next to a $) and a billion as "1G"; every value
    # axis uses plotly's "B" format instead, whose suffixes are the tiles' k, M and B.
    scenario = SCENARIOS[scenario_name]
    figures = dict(_charts(scenario))
    mc = monte_carlo(scenario, draws=2_000)
    figures |= {"cost range": distribution_figure(mc), "tornado": tornado_figure(mc)}
    usage = sample_usage["focus_sample.csv"]
    for metric in ("cost", "gpu_hours"):
        frame = spend.spend_over_time(usage, freq="D", by="team")
        daily = spend.daily_from_days(frame, metric)
        cumulative = spend.cumulative_with_forecast(daily, daily.index[-1].date() + pd.Timedelta(days=30))
        figures[f"spend {metric}"] = retro_usage.spend_figure(frame, cumulative, None, metric=metric)
    for name, figure in figures.items():
        for axis_name, axis in _axes(figure).items():
            assert "s" not in str(axis.get("tickformat", "")).replace("%", ""), (name, axis_name)
            assert axis.get("exponentformat", "B") == "B", (name, axis_name)
            if axis.get("tickprefix") == "$":
                assert "tickformat" not in axis, (name, axis_name)
