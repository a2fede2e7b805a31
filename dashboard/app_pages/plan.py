"""Plan page: what-if controls that redraw cost, risk, storage and TST savings; the URL carries the scenario."""

import json

import streamlit as st

from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario
from dashboard.ui import feasibility_view, plan_controls, plan_state, plan_view
from dashboard.ui.cache import cached_estimate

plan_state.start()
with st.sidebar:
    st.selectbox("Preset", list(presets()), key="plan.preset",
                 help="Published runs; loading one sets every control at once (sources: data/scenarios/presets).")
    buttons = st.container(horizontal=True)
    buttons.button("Load preset", on_click=plan_state.load_preset, icon=":material/download_for_offline:")
    buttons.button("Pin as baseline", on_click=plan_state.pin_baseline, icon=":material/push_pin:",
                   help="Tile deltas compare against the pinned scenario; the page address carries it too.")
    st.text_input("Scenario name", key="w.name", max_chars=120, persist_state="session")
    for position, title in enumerate(plan_controls.GROUPS):
        plan_controls.render_group(title, expanded=position < 2)
    st.divider()
    st.file_uploader("Load a scenario (JSON)", type=["json"], key="plan.upload", on_change=plan_state.load_upload,
                     help="Same rules as `python -m dashboard estimate FILE`; a bad file changes nothing.")

scenario, problem = plan_state.current()
scenario_json = st.session_state[plan_state.SCENARIO]
baseline_json = st.session_state[plan_state.BASELINE]
baseline = Scenario.model_validate_json(baseline_json)
plan_state.sync_link(scenario, baseline)
result = cached_estimate(scenario_json)

st.title("Plan")
st.caption(f"**{scenario.name}** — deltas against the pinned baseline **{baseline.name}**. "
           "The page address carries every setting: copy it to share this exact view.")
if problem:
    st.error(f"These settings cannot be priced: {problem}. The numbers below are for the last valid settings.")
if st.session_state.get(plan_state.UPLOAD_ERROR):
    st.error(st.session_state[plan_state.UPLOAD_ERROR])
if st.session_state.get(plan_state.NOTICES):
    notice = st.container(horizontal=True, vertical_alignment="center")
    notice.warning("  \n".join(st.session_state[plan_state.NOTICES]), icon=":material/info:")
    notice.button("Dismiss", on_click=plan_state.dismiss_notices, key="plan.dismiss")

plan_view.tiles(scenario, result, baseline, cached_estimate(baseline_json))
feasibility_view.panel(scenario, result, scenario_json)
plan_view.charts(scenario_json)
with st.expander("What it risks", icon=":material/warning:"):
    plan_view.risks(scenario, result)
with st.sidebar:
    st.download_button("Download scenario JSON", data=json.dumps(scenario.to_json_dict(), indent=2),
                       file_name="scenario.json", mime="application/json", icon=":material/save:")
