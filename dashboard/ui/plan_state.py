"""The Plan page's session state: where the scenario and the pinned baseline come from and how they change.

The scenario lives in `st.session_state["plan.scenario_json"]` (validated JSON text) and the baseline in
`"plan.baseline_json"`; the widgets' own state is in `dashboard.ui.plan_controls`. Callbacks here run before
the page script, so they may set widget values.
"""

from __future__ import annotations

import json

import streamlit as st

from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict, scenario_from_json
from dashboard.core.scenario_query import scenario_from_query, scenario_to_query
from dashboard.core.uncertainty import DEFAULT_DRAWS, DEFAULT_SEED
from dashboard.ui import plan_controls as controls
from dashboard.ui import plan_tabs

SCENARIO = "plan.scenario_json"
BASELINE = "plan.baseline_json"
NOTICES = "plan.notices"
UPLOAD_ERROR = "plan.upload_error"


def scenario_json(scenario: Scenario) -> str:
    return json.dumps(scenario.to_json_dict())


def start() -> None:
    """Fill the widgets: from the link on a session's first run, from the last scenario after a page switch.

    Streamlit drops a page's widget state when another page is shown, so the controls are reloaded then.
    """
    state = st.session_state
    state.setdefault(controls.DRAWS, DEFAULT_DRAWS)
    state.setdefault(controls.SEED, DEFAULT_SEED)
    if SCENARIO not in state:
        params = {key: st.query_params.get_all(key) for key in st.query_params}
        tab_values = params.pop(plan_tabs.TABS_PARAM, [])
        # A repeated `charts` parameter is refused like any other repeated parameter (the empty value is invalid).
        tab_value = (tab_values[0] if len(tab_values) == 1 else "") if tab_values else None
        tab_warnings = plan_tabs.tabs_from_link(tab_value)
        link = scenario_from_query(params)
        controls.load(link.scenario)
        state[SCENARIO] = scenario_json(link.scenario)
        state[BASELINE] = scenario_json(link.baseline)
        state[NOTICES] = link.warnings + tab_warnings
    elif controls.MOE_TOGGLE not in state:
        controls.load(Scenario.model_validate_json(state[SCENARIO]))


def load_preset() -> None:
    scenario = presets()[st.session_state["plan.preset"]]
    controls.load(scenario)
    st.session_state[NOTICES] = [f"Loaded preset: {scenario.name}."]


def load_upload() -> None:
    state = st.session_state
    uploaded = state["plan.upload"]
    if uploaded is None:
        return
    try:
        scenario = scenario_from_json(uploaded.getvalue())
    except ScenarioError as error:
        state[UPLOAD_ERROR] = f"{uploaded.name} was not loaded: {error}. The previous scenario is kept."
        return
    state.pop(UPLOAD_ERROR, None)
    controls.load(scenario)
    state[NOTICES] = [f"Loaded {uploaded.name}: {scenario.name}."]


def pin_baseline() -> None:
    st.session_state[BASELINE] = st.session_state[SCENARIO]


def dismiss_notices() -> None:
    st.session_state[NOTICES] = []


def current() -> tuple[Scenario, str | None]:
    """The scenario the widgets describe, or the last valid one with the reason the widgets' one is not."""
    state = st.session_state
    previous = json.loads(state[SCENARIO])
    try:
        scenario, problem = scenario_from_dict(controls.read(previous), strict=False), None
    except ScenarioError as error:
        scenario, problem = Scenario.model_validate(previous), str(error)
    state[SCENARIO] = scenario_json(scenario)
    return scenario, problem


def sync_link(scenario: Scenario, baseline: Scenario) -> None:
    """Write the scenario, the baseline and the open chart tabs into the page address (only when they changed)."""
    link = {**scenario_to_query(scenario, baseline), **plan_tabs.tabs_to_link()}
    if link != st.query_params.to_dict():
        st.query_params.from_dict(link)
