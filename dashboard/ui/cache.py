"""Bounded st.cache_data wrappers around the pure engine (pages call the engine only through these)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard.core.engine import estimate
from dashboard.core.scenario import scenario_from_json


@st.cache_data(max_entries=256, show_spinner=False)
def cached_estimate(scenario_json: str) -> dict[str, Any]:
    """Engine outputs for a scenario given as its JSON text (hashable, and validated again here)."""
    return estimate(scenario_from_json(scenario_json))
