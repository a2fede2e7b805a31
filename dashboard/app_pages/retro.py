"""Retrospective page: where last quarter's GPU-hours and dollars went, what was waste, why the plan was missed.

The run reads its data once into a `RetroView` (`retro_sources.make_view`); the tabs are the registry's figures
(`dashboard.retro.registry`), each drawn from the view by its section of `retro_view`, and the report reads the
same view.
"""

import dataclasses

import streamlit as st

from dashboard.ui import calibrate_view, link_check, retro_plan, workspace_view
from dashboard.ui import retro_cache as cache
from dashboard.ui import retro_sources as sources
from dashboard.ui import retro_view as view
from dashboard.ui.retro_report_view import render_download as report_download

calibrate_view.switch_if_asked()
sources.apply_pending()
link_values = link_check.given("retro.")  # the link's values, before the widgets below read them
st.title("Retrospective")
link_note = st.empty()
errors = st.container()  # a refused upload is said here, above everything it did not change
st.caption("Last quarter from its billing export and, optionally, its job or run export: where the GPU-hours "
           "and dollars went, what was waste, and why actual differed from plan. Starts on the bundled sample "
           "quarter; every chart follows the filters in the sidebar.")
lines = sources.Lines(errors=errors, summary=st.empty(), dataset=st.empty(), overlap=st.empty())
chosen = sources.choose(lines)
sources.follow_the_bill(chosen)
if chosen.imported["billing"] is None and chosen.imported["runs"] is None:
    lines.summary.info("Choose or upload a billing export or a run export to begin (open “Change data”).")
    link_check.say_ignored(link_note, link_values, "retro.")
    st.stop()
cache.require_engine()
retro = sources.make_view(chosen, lines)
mixed = view.mixed_currency_error(retro.currencies)
if mixed:
    st.error(mixed, icon=":material/currency_exchange:")
with cache.busy("Adding up the view…", retro.input_rows):
    view.tiles(retro)
    shown_rows = cache.tiles(retro).rows
if not shown_rows:
    link_check.say_ignored(link_note, link_values, "retro.")
    st.warning("No rows match these filters. Widen the date range or clear a filter in the sidebar." if retro.narrowed
               else view.no_rows_message(chosen.imported["billing"], chosen.imported["runs"], sources.NONE))
    st.stop()

view.tabs(retro)

workspace_view.download_button(retro.shown, shown_rows)
report_download(dataclasses.replace(retro, plan=retro_plan.chosen_plan()))  # a plan uploaded in this run
link_check.say_ignored(link_note, link_values, "retro.")
