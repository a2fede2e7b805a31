"""Bounded cache wrappers around the pure engine and figure builders (pages call them only through these)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st

from dashboard.core.engine import estimate
from dashboard.core.scenario import scenario_from_json
from dashboard.core.uncertainty import MonteCarlo, monte_carlo
from dashboard.figures import uncertainty
from dashboard.figures.plan_charts import plan_chart


@st.cache_data(max_entries=256, show_spinner=False)
def cached_estimate(scenario_json: str) -> dict[str, Any]:
    """Engine outputs for a scenario given as its JSON text (hashable, and validated again here)."""
    return estimate(scenario_from_json(scenario_json))


@st.cache_resource(max_entries=64, show_spinner=False)
def plan_figure(scenario_json: str, name: str) -> go.Figure:
    """One of the Plan page's charts (see `figures.plan_charts.CHARTS`) for a scenario's JSON text.

    A resource cache rather than a data cache: a figure is never changed after it is built (`st.plotly_chart`
    only reads it), so sessions can share it, and every slider move saves pickling a fresh figure.
    """
    return plan_chart(name, scenario_from_json(scenario_json), cached_estimate(scenario_json))


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_monte_carlo(scenario_json: str, draws: int, seed: int) -> MonteCarlo:
    """Monte Carlo draws for a scenario's JSON text; a resource (read only), so 100,000 draws are never copied."""
    return monte_carlo(scenario_from_json(scenario_json), draws, seed)


@st.cache_resource(max_entries=32, show_spinner=False)
def uncertainty_figure(scenario_json: str, name: str, draws: int, seed: int) -> go.Figure:
    """The cost distribution or the tornado (see `figures.uncertainty.CHARTS`) for a scenario's JSON text."""
    return uncertainty.CHARTS[name](cached_monte_carlo(scenario_json, draws, seed))
