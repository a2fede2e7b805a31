"""Bounded cache wrappers around the pure engine and figure builders (pages call them only through these).

The Plan page passes its `Scenario` object; the caches key it by its JSON (`hash_funcs`), so one plan is priced
once however many tiles and charts read it. Compare and the Retrospective pass `Scenario` objects too: scenarios are
never handed over as JSON text to be parsed again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from plotly.basedatatypes import BaseFigure

from dashboard.core.engine import PlanResult, scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import MonteCarlo, monte_carlo
from dashboard.figures import throughput, uncertainty
from dashboard.figures.plan_charts import plan_chart


def _scenario_key(scenario: Scenario) -> str:
    return scenario.model_dump_json()


SCENARIO_HASH: dict[str | type[Any], Callable[[Any], Any]] = {Scenario: _scenario_key}  # st.cache's hash_funcs


class DrawnChart(BaseFigure):
    """A built chart as plotly's dict, made once, for `st.plotly_chart` only.

    `st.plotly_chart` takes any plotly figure and reads nothing but its `to_dict()`, which for a `go.Figure` is a
    deep copy of the whole figure, template included (about 1 ms a chart, on every rerun, cached or not). This
    figure hands over the dict it was made with, so a cached chart is copied once. A data cache pickles it as that
    dict: a `go.Figure` comes out of the pickle by being built and checked again, property by property, on every
    cache hit. It has no other figure method: read the chart's figure from `dashboard.figures`, not from here.
    """

    def __init__(self, figure: go.Figure | dict[str, Any]) -> None:  # not BaseFigure.__init__: nothing to check
        self._spec = figure if isinstance(figure, dict) else figure.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return self._spec

    def __reduce__(self) -> tuple[type[DrawnChart], tuple[dict[str, Any]]]:
        return DrawnChart, (self._spec,)


@st.cache_resource(max_entries=256, show_spinner=False, hash_funcs=SCENARIO_HASH)
def plan_result(scenario: Scenario) -> PlanResult:
    """Engine outputs for a scenario: a shared resource that callers only read (no pickled copy per call)."""
    return scenario_outputs(scenario)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=SCENARIO_HASH)
def chart(scenario: Scenario, name: str) -> DrawnChart:
    """One of the Plan page's charts (see `figures.plan_charts.CHARTS`) for a scenario, ready to draw.

    A resource cache rather than a data cache: a chart is never changed after it is built (`st.plotly_chart`
    only reads it), so sessions can share it, and every slider move saves pickling a fresh figure.
    """
    return DrawnChart(plan_chart(name, scenario, plan_result(scenario)))


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=SCENARIO_HASH)
def plan_monte_carlo(scenario: Scenario, draws: int, seed: int) -> MonteCarlo:
    """Monte Carlo draws for a scenario; a resource (read only), so 100,000 draws are never copied."""
    return monte_carlo(scenario, draws, seed)


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=SCENARIO_HASH)
def range_chart(scenario: Scenario, name: str, draws: int, seed: int) -> DrawnChart:
    """The cost distribution or the tornado (see `figures.uncertainty.CHARTS`) for a scenario, ready to draw."""
    return DrawnChart(uncertainty.CHARTS[name](plan_monte_carlo(scenario, draws, seed)))


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=SCENARIO_HASH)
def step_chart(scenario: Scenario) -> DrawnChart:
    """"Where the step goes" (`figures.throughput`): the plan's step by part and the plan priced again at other GPU
    counts (a dozen engine runs, so it is kept like the other charts)."""
    result = plan_result(scenario)
    curve = throughput.scaling_curve(scenario, result.copy())
    return DrawnChart(throughput.step_figure(result.copy(), curve, scenario.gpu_count))
