"""Retrospective page: where last quarter's GPU-hours and dollars went, what was waste, why the plan was missed."""

import json
from datetime import date

import streamlit as st

from dashboard.core.presets import presets
from dashboard.core.safe_csv import to_safe_csv
from dashboard.core.scenario import Scenario, ScenarioError, default_scenario, scenario_from_json
from dashboard.ingest.schema import ReadOptions
from dashboard.ui import plan_state, upload_store
from dashboard.ui import retro_cache as cache
from dashboard.ui import retro_view as view
from dashboard.ui.sources import SAMPLES, choose_local, import_once, local_path_help, sample_names

RUN_SAMPLES = ("slurm_sample.txt", "wandb_sample.csv")
DEFAULT_BILLING = "focus_sample.csv"
NONE = "(none)"
UPLOAD_TYPES = ["csv", "txt", "tsv", "parquet", "gz", "zip"]
ZONES = ["UTC", "America/Los_Angeles", "America/New_York", "Europe/London", "Europe/Berlin", "Asia/Shanghai",
         "Asia/Singapore", "Asia/Tokyo"]
PLAN_PAGE = "Scenario on the Plan page"
PLAN_UPLOAD = "Upload a scenario JSON"
SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))


def _choose(label: str, samples: list[str], prefix: str, help_text: str):
    """A bundled sample (bound to the URL), an upload that replaces it, and for billing a local path."""
    sample = st.selectbox(label, [*samples, NONE], key=f"retro.{prefix}", bind="query-params", help=help_text)
    upload = st.file_uploader(f"…or upload a {label.lower()}", type=UPLOAD_TYPES, key=f"retro.{prefix}_upload")
    if upload is not None:
        return ("upload", upload.file_id), upload.name, upload.getvalue
    if sample == NONE:
        return None, None, None
    return ("sample", sample), sample, (SAMPLES / sample).read_bytes


st.title("Retrospective")
st.caption("Last quarter from its billing export and, optionally, its job or run export: where the GPU-hours "
           "and dollars went, what was waste, and why actual differed from plan. Starts on the bundled sample "
           "quarter; every chart follows the filters in the sidebar.")

billing_column, runs_column = st.columns(2)
with billing_column:
    billing_samples = sorted((n for n in sample_names() if n not in RUN_SAMPLES), key=lambda n: n != DEFAULT_BILLING)
    billing_choice = _choose("Billing export", billing_samples, "billing",
                             "FOCUS, AWS CUR (legacy or 2.0), Google Cloud or Azure cost export.")
    with st.expander("Large export on this machine"):
        typed_path = st.text_input("File or folder of Parquet parts (replaces the choice above)",
                                   key="retro.billing_path", help=local_path_help()).strip()
with runs_column:
    runs_choice = _choose("Run export", list(RUN_SAMPLES), "runs", "Slurm `sacct --parsable2` or a W&B runs table.")
    zone = st.selectbox("Time zone of Slurm times", ZONES, key="retro.zone",
                        help="sacct prints the cluster's local time without an offset; the samples use UTC.")

local = choose_local(typed_path) if typed_path else None
if local is not None:
    billing_choice = local.key, local.filename, local.path

options = ReadOptions(timezone=zone)
imported = {}
for side, (key, filename, read) in (("billing", billing_choice), ("runs", runs_choice)):
    import_key = (key, zone) if side == "runs" else key  # only Slurm's local times depend on the zone
    imported[side] = None if key is None else import_once(f"retro.{side}_data", import_key, filename, read,
                                                          options=options)
billing, runs = imported["billing"], imported["runs"]
if billing is None and runs is None:
    st.info("Choose or upload a billing export or a run export to begin.")
    st.stop()
notes = [f"**{part.filename}**: {warning}" for part in (billing, runs) if part for warning in part.summary["warnings"]]
if notes:
    with st.expander(f"Notes from the import ({len(notes)})", icon=":material/info:"):
        st.markdown("\n".join(f"- {note}" for note in notes))

join_on = st.sidebar.selectbox("Join billing and runs on", ["run_id", "project"], key="retro.join",
                               bind="query-params", help="Billing tags (run or project) matched against the run "
                               "export's run ids (Slurm job names) or projects.")
data_key = (billing and billing.key, runs and runs.key, join_on)
usage, stats = cache.joined(data_key, billing and billing.usage, runs and runs.usage, join_on)
st.caption(" · ".join(f"**{p.filename}**: {p.summary['rows_used']:,} rows used of {p.summary['rows_read']:,}"
                      for p in (billing, runs) if p) + ". " + view.match_caption(stats))

bounds = cache.options(data_key, usage)
with st.sidebar:
    st.header("Filters")
    start, end = bounds["start"], bounds["end"]
    chosen = st.session_state.get("retro.dates")
    if chosen and not (start <= chosen[0] <= chosen[1] <= end):
        del st.session_state["retro.dates"]
    if start and end and start < end:
        start, end = st.slider("Dates (UTC)", min_value=start, max_value=end, value=(start, end), format="YYYY-MM-DD",
                               key="retro.dates", bind="query-params")
    teams = st.multiselect("Teams", bounds["teams"], key="retro.teams", bind="query-params", placeholder="All teams")
    projects = st.multiselect("Projects", bounds["projects"], key="retro.projects", bind="query-params",
                              placeholder="All projects")
    pricing = st.multiselect("Pricing", bounds["pricing"], key="retro.pricing", bind="query-params",
                             placeholder="All pricing")

filters = (start, end, tuple(teams) or None, tuple(projects) or None, tuple(pricing) or None)
narrowed = any(filters[2:]) or (start, end) != (bounds["start"], bounds["end"])
view_key = (data_key, filters)
shown = cache.filtered(view_key, usage, *filters) if narrowed else usage
view.tiles(view_key, shown)
if not len(shown):
    st.warning("No rows match these filters. Widen the date range or clear a filter in the sidebar.")
    st.stop()

tabs = st.tabs(["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"],
               key="retro.view", bind="query-params")
plan_choices = [PLAN_PAGE, *presets(), PLAN_UPLOAD]
with tabs[0]:
    if tabs[0].open:
        view.spend_section(view_key, shown)
with tabs[1]:
    if tabs[1].open:
        view.attribution_section(view_key, shown)
with tabs[2]:
    if tabs[2].open:
        on_sample = all(key is None or key[0] == "sample" for key in (billing_choice[0], runs_choice[0]))
        plan_choice = st.selectbox("Plan to compare with", plan_choices, key="retro.plan",
                                   index=plan_choices.index(SAMPLE_PLAN) if on_sample else 0,
                                   help="The Plan page's current scenario, a preset, or a scenario file. "
                                   "The bundled quarter opens with its own plan.")
        plan_json = st.session_state.get(plan_state.SCENARIO) or json.dumps(default_scenario().to_json_dict())
        if plan_choice == PLAN_UPLOAD:
            uploaded = st.file_uploader("Scenario JSON", type=["json"], key="retro.plan_upload")
            try:
                plan_json = json.dumps(scenario_from_json(uploaded.getvalue()).to_json_dict()) if uploaded else None
            except ScenarioError as error:
                st.error(f"{uploaded.name} was not loaded: {error}.")
                plan_json = None
        elif plan_choice != PLAN_PAGE:
            plan_json = json.dumps(presets()[plan_choice].to_json_dict())
        if plan_json:
            plan = Scenario.model_validate_json(plan_json)
            view.gap_section(view_key, shown, plan, plan_json, plan.name, join_on)
        else:
            st.info("Upload a scenario JSON (the Plan page's download) to compare with.")
with tabs[3]:
    if tabs[3].open:
        view.waste_section(view_key, shown)
with tabs[4]:
    if tabs[4].open:
        view.load_section(view_key, shown)
with tabs[5]:
    if tabs[5].open and billing is not None:
        billing_key = (billing.key, filters)
        view.mix_section(billing_key, cache.filtered(billing_key, billing.usage, *filters) if narrowed
                         else billing.usage)
    elif tabs[5].open:
        st.info("Pricing tiers come from a billing export: choose or upload one above.")
with tabs[6]:
    if tabs[6].open:
        plan = Scenario.model_validate_json(st.session_state.get(plan_state.SCENARIO)
                                            or json.dumps(default_scenario().to_json_dict()))
        view.units_section(view_key, shown, plan)

st.download_button("Download this view (CSV)", data=upload_store.csv_download(shown, to_safe_csv),
                   file_name=f"retrospective_{date.today():%Y%m%d}.csv", mime="text/csv",
                   help="The filtered rows; cells starting with =, +, - or @ are escaped for spreadsheets.")
