"""The Retrospective's plan to compare with: its picker (none, the Plan page's scenario, the presets, the scenarios
saved in the store, or an uploaded scenario file) and the choice kept while the tabs that read it are closed."""

from __future__ import annotations

import streamlit as st

from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_json
from dashboard.safe_text import markdown_text
from dashboard.store.errors import StoreError
from dashboard.ui import plan_state
from dashboard.ui.store_access import scenario_store

PLAN_NONE = "(none)"
PLAN_PAGE = "Scenario on the Plan page"
PLAN_UPLOAD = "Upload a scenario JSON"
SAVED = "Saved: "  # in front of the names of the scenarios saved in the store (the Compare page's list)
SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))
PLAN_UPLOADED = "retro.plan_uploaded"  # the uploaded scenario file, read once: {"id", "name", "scenario", "error"}
PLAN_CHOICE = "retro.plan_choice"  # the plan picked, kept while the Plan vs actual tab is closed
REPLACED = "retro.replaced"  # {"key": the own bill's key, part: the sample's value it replaced}


def plan_dropped() -> bool:
    """Whether the sample's plan went with a bill of the user's own (`retro_sources`)."""
    return "plan" in st.session_state.get(REPLACED, {})


def saved_name(choice: str) -> str | None:
    """The store's name of a saved scenario chosen as ``choice`` ("Saved: …"); None for any other choice."""
    return choice.removeprefix(SAVED) if choice.startswith(SAVED) else None


def _plan_page_scenario() -> Scenario:
    """The Plan page's scenario (`plan_state.current`)."""
    return plan_state.current()


def _remember_plan() -> None:
    st.session_state[PLAN_CHOICE] = st.session_state["retro.plan"]


def _saved_scenarios() -> tuple[dict[str, Scenario], str | None]:
    """The scenarios saved in the store, as the Compare page lists them (what the store lets this user read),
    by their label here; and a line saying why there are none when the store cannot be used."""
    try:
        entries = scenario_store().entries()
    except StoreError as error:
        return {}, (f"The scenario store cannot be used ({markdown_text(error)}), so its saved scenarios are not "
                    "listed here.")
    return {f"{SAVED}{entry.name}": entry.scenario for entry in entries if entry.scenario is not None}, None


def _uploaded_plan() -> Scenario | None:
    """The scenario file uploaded for the plan (kept in the session, so Unit costs reads it too); None after
    saying why it was not loaded, or before one is uploaded."""
    state = st.session_state
    uploaded = st.file_uploader("Scenario JSON", type=["json"], key="retro.plan_upload")
    held = state.get(PLAN_UPLOADED)
    if uploaded is not None and (held is None or held["id"] != uploaded.file_id):
        try:
            held = {"id": uploaded.file_id, "name": uploaded.name, "scenario": scenario_from_json(uploaded.getvalue()),
                    "error": None}
        except ScenarioError as error:
            held = {"id": uploaded.file_id, "name": uploaded.name, "scenario": None, "error": str(error)}
        state[PLAN_UPLOADED] = held
    if held is None:
        st.info("Upload a scenario JSON (the Plan page's download) to compare with.")
        return None
    if held["error"]:
        st.error(f"{markdown_text(held['name'])} was not loaded: {markdown_text(held['error'])}.")
        return None
    if uploaded is None:
        st.caption(f"Using **{markdown_text(held['name'])}**, uploaded earlier; upload another file to replace it.")
    return held["scenario"]


def plan_picker() -> tuple[Scenario | None, str]:
    """The one plan Plan vs actual and Unit costs read, with its picker: none, the Plan page's scenario, the
    presets, the scenarios saved in the store, or an uploaded scenario file. The choice is kept in PLAN_CHOICE
    while neither tab is open."""
    state = st.session_state
    saved, problem = _saved_scenarios()
    choices = [PLAN_NONE, PLAN_PAGE, *presets(), *saved, PLAN_UPLOAD]
    chosen = state.get(PLAN_CHOICE, SAMPLE_PLAN)
    gone = chosen not in choices
    state["retro.plan"] = PLAN_NONE if gone else chosen
    choice = st.selectbox("Plan to compare with", choices, key="retro.plan", on_change=_remember_plan,
                          help="One plan for Plan vs actual and Unit costs: the Plan page's current scenario, a "
                          "preset, a scenario saved on the Compare page, or a scenario file. Opens on the bundled "
                          "quarter's own plan; an uploaded bill starts with none.")
    if gone:
        st.caption(f"**{markdown_text(chosen)}** is no longer in the store; choose another plan.")
    if problem:
        st.caption(problem)
    if choice == PLAN_NONE:
        return None, choice
    if choice == PLAN_UPLOAD:
        return _uploaded_plan(), choice
    if choice == PLAN_PAGE:
        return _plan_page_scenario(), choice
    return (presets() | saved)[choice], choice


def chosen_plan() -> Scenario | None:
    """The plan Plan vs actual and Unit costs read, without drawing the picker (for a reader outside those tabs,
    such as the report): None when none is chosen, or the chosen one cannot be had."""
    state = st.session_state
    choice = state.get(PLAN_CHOICE, SAMPLE_PLAN)
    if choice == PLAN_PAGE:
        return _plan_page_scenario()
    if choice == PLAN_UPLOAD:
        held = state.get(PLAN_UPLOADED)
        return held["scenario"] if held else None
    if choice in presets():
        return presets()[choice]
    return _saved_scenarios()[0].get(choice) if choice.startswith(SAVED) else None


def no_plan_note(dropped: bool) -> str:
    """What the page says while no plan is chosen (``dropped``: the sample's plan went with a bill of the user's
    own)."""
    return ("No plan chosen" + (" (the sample's plan went with your bill; tick *Keep the sample's plan* under "
                                "*Change data* to use it)" if dropped else "")
            + ": pick the Plan page's scenario, a scenario saved on the Compare page, a preset, or upload a "
            "scenario JSON above.")


def plan_words() -> str:
    """The plan as the data line names it."""
    choice = st.session_state.get(PLAN_CHOICE, SAMPLE_PLAN)
    if choice == PLAN_NONE:
        return "no plan"
    if choice == SAMPLE_PLAN:
        return "the sample's plan"
    if choice == PLAN_UPLOAD:
        held = st.session_state.get(PLAN_UPLOADED)
        return f"plan uploaded: **{markdown_text(held['name'])}**" if held else "no plan"
    return f"plan: **{markdown_text(choice.removeprefix(SAVED))}**"
