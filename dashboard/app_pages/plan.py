"""Plan page: what-if controls that redraw cost, risk, storage and TST savings; the URL carries the scenario.

The plan is read from the widgets' state before anything is drawn (`plan_state.update`), so the point-estimate
tiles are drawn first and reach the browser before the Monte Carlo runs and the sidebar's widgets are sent
(`bench.browser_bench` times this).
"""

import json

import streamlit as st

from dashboard.core import risk
from dashboard.core.presets import presets
from dashboard.file_names import download_name
from dashboard.safe_text import markdown_text
from dashboard.ui import (
    feasibility_view,
    first_paint,
    layout_controls,
    plan_charts_view,
    plan_controls,
    plan_state,
    plan_view,
    programme_controls,
)
from dashboard.ui.cache import plan_monte_carlo, plan_result

plan_state.start()
scenario = plan_state.update()
state = st.session_state
baseline = state[plan_state.BASELINE]
invalid = state[plan_state.INVALID]
result = plan_result(scenario)
base_result = None if baseline is None else plan_result(baseline)

plan_charts_view.narrow_layout()
st.title("Plan")
plan_view.baseline_line(scenario, baseline)
if invalid:
    named = ({control.key: control.label for control in plan_controls.CONTROLS} | layout_controls.labels()
             | programme_controls.labels(state[plan_state.PLAN]))
    labels = ", ".join(markdown_text(label) for key, label in named.items() if key in invalid)
    st.error(f"Not applied (marked in the sidebar): {labels}. Every other setting is in the numbers below.")
if state.get(plan_state.UPLOAD_ERROR):
    st.error(markdown_text(state[plan_state.UPLOAD_ERROR]))
if state.get(plan_state.NOTICES):
    notice = st.container(horizontal=True, vertical_alignment="center")
    notice.warning("  \n".join(markdown_text(text) for text in state[plan_state.NOTICES]), icon=":material/info:")
    if state.get(plan_state.UNDO) is not None:
        notice.button("Undo", on_click=plan_state.undo_preset, key="plan.undo_button", icon=":material/undo:")
    if state.get(plan_state.OFFER_PIN) is not None:
        notice.button("Pin the previous plan as baseline", on_click=plan_state.pin_previous, key="plan.pin_previous",
                      icon=":material/push_pin:")
    notice.button("Dismiss", on_click=plan_state.dismiss_notices, key="plan.dismiss")
plan_view.carried_banner(state.get(plan_state.CARRIED), result)
with st.container(key="plan-tiles"):
    columns = plan_view.tiles(result, base_result)
plan_view.switch_notes(scenario, state[plan_state.ORIGIN], result)
plan_view.mfu_notes(result, plan_state.measured_now(scenario))
mc = plan_monte_carlo(scenario, state[plan_controls.DRAWS], int(state[plan_controls.SEED]))
headline = risk.headline(result, mc)
plan_view.risk_tiles(columns, result, base_result, headline)
if first_paint.tiles_only():  # a new session: the tiles reach the screen before the rest is sent
    first_paint.rest_follows()
    st.stop()
plan_state.sync_link(scenario, baseline)
plan_charts_view.share_buttons(st.query_params.to_dict(), scenario)

with st.sidebar:
    plan_view.measured_inputs(plan_state.measured_now(scenario), state.get(plan_state.MEASURED_PERIOD), result)
    st.selectbox("Preset", list(presets()), index=None, key=plan_state.PRESET, on_change=plan_state.load_preset,
                 placeholder="Choose a published run to load…",
                 help="Published runs; choosing one sets every control at once, with an undo "
                      "(sources: data/scenarios/presets).")
    buttons = st.container(horizontal=True)
    buttons.button("Pin as baseline", on_click=plan_state.pin_baseline, icon=":material/push_pin:",
                   help="Tile deltas compare against the pinned scenario; the page address carries it too.")
    if baseline is not None:
        buttons.button("Unpin", on_click=plan_state.unpin_baseline, icon=":material/close:")
    st.text_input("Scenario name", key="w.name", max_chars=120, persist_state="session",
                  on_change=plan_state.name_typed,
                  help="Until you type a name, it follows the inputs; empty the box to let it follow again.")
    shown = plan_controls.shown_groups()
    for title in plan_controls.group_titles():
        if title not in shown:
            continue
        if title == layout_controls.GROUP_TITLE:
            layout_controls.render_group(invalid)
        elif title == programme_controls.GROUP_TITLE:
            programme_controls.render_group(scenario, invalid, plan_state.apply_changes)
        else:
            plan_controls.render_group(title, invalid=invalid, scenario=scenario)
    st.divider()
    st.file_uploader("Load a scenario (JSON)", type=["json"], key="plan.upload", on_change=plan_state.load_upload,
                     help="Same rules as `python -m dashboard estimate FILE`; a bad file changes nothing.")
    st.download_button("Download scenario JSON", data=json.dumps(scenario.to_json_dict(), indent=2),
                       file_name=download_name(scenario.name, ".json"), mime="application/json",
                       icon=":material/save:")

plan_view.headline_notes(scenario, result, headline, risk.top_lever(mc))
feasibility_view.panel(scenario, result)
plan_view.charts(scenario)
st.subheader("What it risks")
plan_view.risks(scenario, result)
