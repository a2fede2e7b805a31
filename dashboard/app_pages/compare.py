"""Compare page: saved scenarios side by side, a presentation layout and the review-meeting report."""

from datetime import UTC, datetime
from functools import partial

import streamlit as st

from dashboard.core.compare import MAX_SCENARIOS, MIN_SCENARIOS
from dashboard.core.scenario_bundle import export_bundle
from dashboard.safe_text import markdown_text
from dashboard.store.errors import StoreError
from dashboard.store.urls import described
from dashboard.ui import compare_cache, compare_state, compare_view, identity, plan_outcomes_view
from dashboard.ui.compare_state import MANAGED, NEW_NAME, PRESENTATION, SELECTED
from dashboard.ui.store_access import scenario_store

state = st.session_state
st.title("Compare scenarios")
try:
    store = scenario_store()
    entries = store.entries()
except StoreError as error:
    st.error(f"The scenario store cannot be used: {markdown_text(error)}. Point `PLANNER_STORE_URL` at a reachable "
             "database "
             "(sqlite:///PATH or postgresql://USER@HOST:PORT/DB) and restart the app.")
    st.stop()
if store.notice:
    st.warning(markdown_text(store.notice), icon=":material/healing:")
if state.get(compare_state.GO_TO_PLAN):
    state.pop(compare_state.GO_TO_PLAN)
    st.switch_page("app_pages/plan.py")

# The toggle is drawn further down: before it, its state (or, on a link's first run, the address) says the layout.
if not (state[PRESENTATION] if PRESENTATION in state else st.query_params.get(PRESENTATION) == "true"):
    with st.sidebar:
        compare_view.store_controls(described(store.url))

if state.get(compare_state.MESSAGE):
    kind, text = state.pop(compare_state.MESSAGE)
    (st.success if kind == "success" else st.error)(markdown_text(text))

usable = {entry.name: entry.scenario for entry in entries if entry.scenario is not None}
owners = {entry.name: entry for entry in entries}
for entry in entries:
    if entry.scenario is None:
        st.warning(f"“{markdown_text(entry.name)}” can no longer be read: {markdown_text(entry.error)}. Delete it or "
                   "fix it in the database.")
plan_options = compare_state.plan_options()
if not usable:
    start = ("No saved scenarios yet. Save the Plan page's scenario or import JSON files from the sidebar, or add "
             "the bundled presets.")
    st.info(f"{start} Until then the Plan page's scenario is compared with its pinned baseline."
            if compare_state.BASELINE_OPTION in plan_options else
            f"{start} No baseline is pinned on the Plan page either: *Pin as baseline* there, then edit the plan, "
            "and the two are compared here.")
options = {**plan_options, **usable}

compare_state.start_selection(list(options))
top = st.container(horizontal=True, vertical_alignment="bottom")
top.multiselect(f"Scenarios to compare ({MIN_SCENARIOS}–{MAX_SCENARIOS}; deltas are against the first)",
                list(options), key=SELECTED, max_selections=MAX_SCENARIOS, width=700, bind="query-params",
                help="The selection, its order and the layout ride in the page address: share the link.")
presentation = top.toggle("Presentation layout", key=PRESENTATION, bind="query-params",
                          help="Large numbers, one row per metric across the options, no editing controls and no "
                               "sidebar: for a projector.")

if not presentation and usable:
    with st.expander(f"Saved scenarios ({len(usable)})", icon=":material/folder_open:"):
        compare_view.saved_table(usable, {name: entry.owner for name, entry in owners.items()})
        if state.get(MANAGED) not in usable:
            state[MANAGED] = next(iter(usable))
        st.selectbox("Scenario", list(usable), key=MANAGED)
        managed = owners[state[MANAGED]]
        me = identity.current()
        if me is not None and not me.may_change(managed.owner_issuer, managed.owner_subject):
            st.caption(f"Saved by {markdown_text(managed.owner)}: you can open, duplicate and compare it; only its "
                       "owner or an administrator can rename, overwrite or delete it.")
        st.text_input("New name (for rename or duplicate)", key=NEW_NAME, max_chars=120)
        actions = st.container(horizontal=True)
        actions.button("Open in Plan", on_click=compare_state.open_in_plan, icon=":material/tune:")
        actions.button("Rename", on_click=compare_state.rename, icon=":material/edit:")
        actions.button("Duplicate", on_click=compare_state.duplicate, icon=":material/content_copy:")
        actions.button("Delete", on_click=compare_state.delete, icon=":material/delete:")
        if me is not None and me.admin and managed.owner_issuer is None:  # no owner, or one recorded without issuer
            actions.button("Adopt", on_click=compare_state.adopt, icon=":material/person_add:",
                           help="Make yourself this scenario's owner (for scenarios saved before sign-in, or before "
                                "owners were recorded with their sign-in provider).")
        chosen = [options[name] for name in state[SELECTED]] or [usable[state[MANAGED]]]
        actions.download_button(f"Export {len(chosen)} as JSON", data=export_bundle(chosen), mime="application/json",
                                file_name="scenarios.json", icon=":material/download:", on_click="ignore")
        st.markdown(f"**History of “{markdown_text(managed.name)}”**")
        try:
            compare_view.history(store.history(managed.name))
        except StoreError as error:
            st.error(f"The history cannot be read: {markdown_text(error)}.")

if not presentation:
    plan_outcomes_view.summary("compare")  # How good were our plans? (kept on the Retrospective's Plan vs actual)

selected = list(state[SELECTED])
missing = compare_state.missing_note(list(options))
if missing:
    st.warning(markdown_text(missing), icon=":material/link_off:")
if len(selected) < MIN_SCENARIOS:
    st.info(f"Pick at least {MIN_SCENARIOS} scenarios to compare.")
    st.stop()
saved = tuple(options[name] for name in selected)
if not compare_view.input_rows_differ(list(saved)):
    st.info("These options have the same inputs. Pin another baseline on the Plan page, or pick saved scenarios.")
compared = compare_view.match_controls(saved)
compare_view.warnings(compared)

if presentation:
    compare_view.presentation(compared, compare_view.short_labels(selected))
else:
    compare_view.table(compared)
    compare_view.short_label_inputs(selected)
    report = st.container(horizontal=True, vertical_alignment="bottom")
    author = report.text_input("Author (optional)", key="compare.author", max_chars=120, width=300,
                               help="Printed beside the report's date.")
    today = datetime.now(UTC).date().isoformat()
    report.download_button("Download the report (HTML, opens offline)",
                           data=partial(compare_cache.report_html, compared, author, compare_state.app_url()),
                           file_name=f"budget-options-{today}.html", mime="text/html", on_click="ignore",
                           icon=":material/description:", type="primary",
                           help="A summary, headline numbers with P10–P90, every chart (interactive), the method, "
                                "its sources and the caveats, in one file. The same as `python -m dashboard report`.")
    compare_view.charts(compared)
