"""The Plan page's session state: one scenario object, where it comes from and how edits reach it.

`st.session_state["plan.scenario"]` holds the plan as a `Scenario` (always valid) and `"plan.baseline"` the pinned
baseline (or None). Each rerun, `update` reads the widgets (their state lives in `dashboard.ui.plan_controls`)
into the scenario before any widget is drawn: every control whose value fits is applied, and a control whose
value does not fit is left out and listed in `"plan.invalid"` with the reason, so one bad value never freezes
the others. Until the user types a name, the name follows the inputs. `"plan.scenario_json"` mirrors the plan
as JSON text for the other pages (Compare, Retrospective), which read it and may write it ("open in Plan").
Callbacks here run before the page script, so they may set widget values.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from dashboard.core.hardware import CUSTOM, catalogue
from dashboard.core.presets import presets
from dashboard.core.scenario import (
    Scenario,
    ScenarioError,
    default_scenario,
    scenario_from_dict,
    scenario_from_json,
)
from dashboard.core.scenario_query import BASELINE_PREFIX, scenario_from_query, scenario_to_query
from dashboard.core.uncertainty import DEFAULT_DRAWS, DEFAULT_SEED
from dashboard.format import compact
from dashboard.ui import plan_controls as controls
from dashboard.ui import plan_tabs

PLAN = "plan.scenario"
SCENARIO = "plan.scenario_json"  # the plan as JSON text, for other pages
BASELINE = "plan.baseline"
ORIGIN = "plan.origin"  # the scenario as last loaded (default, link, preset, file): names follow edits of it
NAMED = "plan.named"  # the user typed the name: it no longer follows the inputs
INVALID = "plan.invalid"  # control key → why its value was not applied
UNDO = "plan.undo"  # the plan before the last preset, for its undo button
OFFER_PIN = "plan.offer_pin"  # the plan before a file or "open in Plan", offered as the baseline
EXPORTED = "plan.exported"  # the JSON text last written to SCENARIO, to notice another page's write
NOTICES = "plan.notices"
UPLOAD_ERROR = "plan.upload_error"
PRESET = "plan.preset"
EDITED = " (edited)"
NAME_LINK_KEY = "name"


def scenario_json(scenario: Scenario) -> str:
    return json.dumps(scenario.to_json_dict())


def describe(scenario: Scenario) -> str:
    """A name that says what the plan is: "7B dense, 2T tokens on 512 H100"."""
    size = compact(scenario.total_params)
    shape = "dense" if scenario.active_params is None else f"MoE ({compact(scenario.active)} active)"
    method = ", TST" if scenario.method == "tst" else ""
    gpu = "custom GPUs" if scenario.gpu_type == CUSTOM else catalogue()[scenario.gpu_type].label.split(" (")[0]
    gpu = gpu.removesuffix(" SXM").removeprefix("AMD ")
    return f"{size} {shape}, {compact(scenario.tokens)} tokens on {scenario.gpu_count:,} {gpu}{method}"


def _same_inputs(a: Scenario, b: Scenario) -> bool:
    return a.model_dump(exclude={"name"}) == b.model_dump(exclude={"name"})


def follow_name(origin: Scenario, scenario: Scenario) -> str:
    """The name of a plan nobody has named: the origin's name while nothing changed; a description of the
    inputs when the origin's name was one (or is the default's, which fits only the default's inputs); else the
    origin's name with "(edited)"."""
    default = default_scenario()
    if origin.name == default.name:  # the default's name fits the default's inputs only
        return default.name if _same_inputs(default, scenario) else describe(scenario)
    if _same_inputs(origin, scenario):
        return origin.name
    if origin.name == describe(origin):
        return describe(scenario)
    return origin.name if origin.name.endswith(EDITED) else f"{origin.name[:120 - len(EDITED)]}{EDITED}"


def _as_scenario(value: Any) -> Scenario | None:
    """A scenario from session state: an object, or JSON text another page left there."""
    if value is None or isinstance(value, Scenario):
        return value
    return Scenario.model_validate_json(value)


def _set_plan(scenario: Scenario) -> None:
    state = st.session_state
    state[PLAN] = scenario
    state[SCENARIO] = state[EXPORTED] = scenario_json(scenario)


def _load(scenario: Scenario, notice: str, *, offer_pin: bool = False, undo: bool = False) -> None:
    """Make `scenario` the plan and set every widget from it; keep the previous plan for undo or as a baseline."""
    state = st.session_state
    previous = state.get(PLAN)
    state[UNDO] = previous if undo else None
    state[OFFER_PIN] = previous if offer_pin and previous is not None and not _same_inputs(previous, scenario) else None
    controls.load(scenario)
    _set_plan(scenario)
    state[ORIGIN] = scenario
    state[NAMED] = False
    state[INVALID] = {}
    state[NOTICES] = [notice]


def start() -> None:
    """Fill the state: from the link on a session's first run, from another page's hand-off, or after a page
    switch (Streamlit drops a page's widget state when another page is shown, so the controls are reloaded)."""
    state = st.session_state
    state.setdefault(controls.DRAWS, DEFAULT_DRAWS)
    state.setdefault(controls.SEED, DEFAULT_SEED)
    if PLAN not in state:
        params = {key: st.query_params.get_all(key) for key in st.query_params}
        tab_values = params.pop(plan_tabs.TABS_PARAM, [])
        # A repeated `charts` parameter is refused like any other repeated parameter (the empty value is invalid).
        tab_value = (tab_values[0] if len(tab_values) == 1 else "") if tab_values else None
        tab_warnings = plan_tabs.tabs_from_link(tab_value)
        link = scenario_from_query(params)
        handed = state.get(SCENARIO)
        scenario = link.scenario if handed is None else Scenario.model_validate_json(handed)
        controls.load(scenario)
        _set_plan(scenario)
        state[ORIGIN] = scenario
        state[NAMED] = False
        state[INVALID] = {}
        pinned = any(key.startswith(BASELINE_PREFIX) for key in params)
        state[BASELINE] = link.baseline if pinned else _as_scenario(state.get(BASELINE))
        state[NOTICES] = link.warnings + tab_warnings
    elif state.get(SCENARIO) != state.get(EXPORTED):
        handed = Scenario.model_validate_json(state[SCENARIO])
        _load(handed, f"Opened “{handed.name}”.", offer_pin=True)
    elif controls.MOE_TOGGLE not in state:
        controls.load(state[PLAN])
    state[BASELINE] = _as_scenario(state.get(BASELINE))


def update() -> Scenario:
    """Apply the widgets to the plan (see the module docstring) and return it; call before drawing widgets."""
    state = st.session_state
    plan: Scenario = state[PLAN]
    current = plan.to_json_dict()
    wanted = controls.read(current)
    wanted["name"] = current["name"]
    invalid: dict[str, str] = {}
    try:
        scenario = scenario_from_dict(wanted, strict=False)  # sliders give 512.0 for a count
    except ScenarioError:
        data = dict(current)
        for key, value in wanted.items():
            if data[key] == value:
                continue
            trial = {**data, key: value}
            try:
                scenario_from_dict(trial, strict=False)
            except ScenarioError as error:
                invalid[controls.control_of(key)] = str(error)
                continue
            data = trial
        scenario = scenario_from_dict(data, strict=False)
    typed = (state.get("w.name") or "").strip()
    if state.get(NAMED) and typed:
        name = typed
    else:
        name = follow_name(state[ORIGIN], scenario)
        state["w.name"] = name
    if name != scenario.name:
        scenario = scenario.model_copy(update={"name": name})
    if scenario != plan:
        _set_plan(scenario)
    state[INVALID] = invalid
    return scenario


def name_typed() -> None:
    """The user edited the name box: a name of their own stops following the inputs; an empty box resumes it."""
    st.session_state[NAMED] = bool((st.session_state.get("w.name") or "").strip())


def load_preset() -> None:
    state = st.session_state
    choice = state.get(PRESET)
    if choice is None:
        return
    scenario = presets()[choice]
    _load(scenario, f"Loaded preset: {scenario.name}.", undo=True)
    state[PRESET] = None


def undo_preset() -> None:
    previous = st.session_state.get(UNDO)
    if previous is not None:
        _load(previous, f"Back to {previous.name}.")


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
    _load(scenario, f"Loaded {uploaded.name}: {scenario.name}.", offer_pin=True)


def pin_baseline() -> None:
    st.session_state[BASELINE] = st.session_state[PLAN]


def pin_previous() -> None:
    state = st.session_state
    state[BASELINE] = state.get(OFFER_PIN)
    state[OFFER_PIN] = None


def unpin_baseline() -> None:
    st.session_state[BASELINE] = None


def dismiss_notices() -> None:
    state = st.session_state
    state[NOTICES] = []
    state[UNDO] = state[OFFER_PIN] = None


def sync_link(scenario: Scenario, baseline: Scenario | None) -> None:
    """Write the scenario, the baseline and the open chart tabs into the page address (only when they changed)."""
    link = {**scenario_to_query(scenario, baseline), **plan_tabs.tabs_to_link()}
    if baseline is not None:
        link[BASELINE_PREFIX + NAME_LINK_KEY] = baseline.name
    if link != st.query_params.to_dict():
        st.query_params.from_dict(link)
